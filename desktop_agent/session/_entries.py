"""Typed models of the v3 header and of every v3 entry type (SESSION_FORMAT.md §1).

Entries are stored as their JSON lines; these models are the typed view, made on demand
by `parse_entry`. Unknown entry types are kept as `UnknownEntry` with every field, and an
entry whose payload does not fit its type (e.g. a message with ``arguments: null``) is
also returned as `UnknownEntry` instead of failing, so a reader survives what a buggy
writer left behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias

from pydantic import Field, ValidationError, field_validator

from desktop_agent.ai import (
    AgentMessage,
    ContentBlock,
    PiModel,
    parse_message,
    remember_key_order,
)

JsonValue: TypeAlias = Any


NOT_ACTIVITY = frozenset({"session_info", "label"})
"""Entry types that do not make a session newer in the list (FIRST_HOUR.md p17): naming
a session or labelling an entry is not working in it, so a rename keeps its place."""


class SessionHeader(PiModel):
    type: Literal["session"] = "session"
    version: int = 3
    id: str
    timestamp: str
    cwd: str
    parent_session: str | None = Field(default=None, alias="parentSession")
    metadata: dict[str, JsonValue] | None = None

    _always_dump: ClassVar[frozenset[str]] = frozenset(("type", "version"))


class EntryBase(PiModel):
    type: str
    id: str
    parent_id: str | None
    timestamp: str

    _always_dump: ClassVar[frozenset[str]] = frozenset(("type",))


class MessageEntry(EntryBase):
    type: Literal["message"] = "message"
    message: AgentMessage

    @field_validator("message", mode="before")
    @classmethod
    def _parse(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return parse_message(value, keep_key_order=False)  # parse_entry records it
        return value


class ModelChangeEntry(EntryBase):
    type: Literal["model_change"] = "model_change"
    provider: str
    model_id: str


class ThinkingLevelChangeEntry(EntryBase):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str


class CompactionEntry(EntryBase):
    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str
    tokens_before: int | float
    details: JsonValue = None
    from_hook: bool | None = None


class BranchSummaryEntry(EntryBase):
    type: Literal["branch_summary"] = "branch_summary"
    from_id: str
    summary: str
    details: JsonValue = None
    from_hook: bool | None = None


class CustomEntry(EntryBase):
    type: Literal["custom"] = "custom"
    custom_type: str
    data: JsonValue = None


class CustomMessageEntry(EntryBase):
    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | list[ContentBlock]
    display: bool
    details: JsonValue = None


class LabelEntry(EntryBase):
    type: Literal["label"] = "label"
    target_id: str
    label: str | None = None


class SessionInfoEntry(EntryBase):
    type: Literal["session_info"] = "session_info"
    name: str | None = None


class LeafEntry(EntryBase):
    type: Literal["leaf"] = "leaf"
    target_id: str | None


class ActiveToolsChangeEntry(EntryBase):
    type: Literal["active_tools_change"] = "active_tools_change"
    active_tool_names: list[str]


class UnknownEntry(EntryBase):
    """An entry of a type we do not know, or whose payload does not fit its type."""


SessionEntry: TypeAlias = (
    MessageEntry
    | ModelChangeEntry
    | ThinkingLevelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | LeafEntry
    | ActiveToolsChangeEntry
    | UnknownEntry
)

ENTRY_TYPES: dict[str, type[EntryBase]] = {
    "message": MessageEntry,
    "model_change": ModelChangeEntry,
    "thinking_level_change": ThinkingLevelChangeEntry,
    "compaction": CompactionEntry,
    "branch_summary": BranchSummaryEntry,
    "custom": CustomEntry,
    "custom_message": CustomMessageEntry,
    "label": LabelEntry,
    "session_info": SessionInfoEntry,
    "leaf": LeafEntry,
    "active_tools_change": ActiveToolsChangeEntry,
}


def parse_entry(obj: Mapping[str, Any]) -> SessionEntry:
    """The typed view of one entry object (already checked by the line validator)."""
    model = ENTRY_TYPES.get(str(obj.get("type")), UnknownEntry)
    try:
        entry = model.model_validate(obj)
    except (ValidationError, ValueError):
        entry = UnknownEntry.model_validate(obj)
    remember_key_order(entry, obj)
    return entry  # type: ignore[return-value]
