"""desktop_agent.agent (see ARCHITECTURE.md §1)."""
