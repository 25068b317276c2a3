"""The session sidebar: search, sessions grouped by workspace, trash, and session actions."""

from desktop_agent.gui.sidebar._model import (
    SessionListModel,
    SidebarRole,
    relative_time,
)
from desktop_agent.gui.sidebar._widget import EXPORT_FORMATS, SessionSidebar

__all__ = [
    "EXPORT_FORMATS",
    "SessionListModel",
    "SessionSidebar",
    "SidebarRole",
    "relative_time",
]
