"""desktop_agent.tools (see ARCHITECTURE.md §1)."""
