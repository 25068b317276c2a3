"""App state between runs (``state.json``): where the user was, drafts, window geometry."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from desktop_agent.config._files import load_model, save_model
from desktop_agent.utils import Redactor

_REDACTOR = Redactor()


def draft_key(session_path: str, leaf_id: str | None) -> str:
    """The key of a composer draft: one per branch (``<session path>#<leaf id>``)."""
    return f"{session_path}#{leaf_id or ''}"


class BranchUsage(BaseModel):
    """The usage counted on the last session's branch up to ``leaf`` (derived data)."""

    model_config = ConfigDict(extra="ignore")

    ref: str
    leaf: str
    tokens: int = 0
    cost: float = 0.0
    context_tokens: int = 0


class AppState(BaseModel):
    """Remembered between runs; losing it costs convenience, never data."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True, populate_by_name=True)

    last_workspace: str | None = None
    last_session_path: str | None = None
    drafts: dict[str, str] = Field(default_factory=dict)
    """Unsent composer text by `draft_key`."""
    window_geometry: str | None = None
    """``QWidget.saveGeometry()`` as base64 text."""
    window_state: str | None = None
    """``QMainWindow.saveState()`` as base64 text."""
    splitter_state: str | None = None
    """``QSplitter.saveState()`` of sidebar | chat | branch map, as base64 text."""
    map_visible: bool = Field(
        default=True, validation_alias=AliasChoices("map_visible", "tree_visible")
    )
    """Whether the branch map pane is shown. Older files call it ``tree_visible`` (from
    when the map was a tree pane): read as before, written under the new name."""
    sidebar_visible: bool = True
    chat_zoom: int = 100
    """The conversation's text size in percent (View -> Zoom in / out, Ctrl+= / Ctrl+-)."""
    map_filter: str = "conversation"
    """What the branch map shows (the workbench's ``MAP_FILTERS``)."""
    mcp_projects: dict[str, str] = Field(default_factory=dict)
    """Project folders whose own MCP file (``.mcp.json``, ``.pi/mcp.json``) was offered:
    ``offered`` (not asked again) or ``allowed`` (its servers start with its sessions)."""
    branch_usage: BranchUsage | None = None
    """So that a restart reads only the answers after ``leaf`` to count the usage of a
    long branch (tens of thousands of answers: a second of reading at every launch)."""


def load_state(path: Path) -> AppState:
    """State from ``path``; defaults when missing or unreadable (never raises)."""
    return load_model(path, AppState, "state")


def save_state(path: Path, state: AppState) -> None:
    """Write ``state`` atomically; secrets in drafts are redacted (a draft is a prompt
    that is not sent yet: it reaches the disk here first)."""
    drafts = {key: _REDACTOR.redact(text) for key, text in state.drafts.items()}
    if drafts != state.drafts:
        state = state.model_copy(update={"drafts": drafts})
    save_model(path, state)
