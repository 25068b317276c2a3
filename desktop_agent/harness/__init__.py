"""desktop_agent.harness (see ARCHITECTURE.md §1)."""
