"""desktop_agent.gui (see ARCHITECTURE.md §1)."""
