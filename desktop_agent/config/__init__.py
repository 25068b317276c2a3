"""desktop_agent.config (see ARCHITECTURE.md §1)."""
