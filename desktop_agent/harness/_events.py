"""Events the harness adds to the loop's (SESSION_FORMAT.md §9.4-§9.5, §10.4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from desktop_agent.agent import AgentEvent, MessageEndEvent
from desktop_agent.ai import Model


@dataclass(kw_only=True)
class MessageSavedEvent(MessageEndEvent):
    """The harness's ``message_end``: the message was appended to the session first.

    ``entry_id`` is its entry (None only when the append failed; the message then waits
    in memory, see `PersistenceErrorEvent`). Listeners of `MessageEndEvent` get it too.
    """

    entry_id: str | None = None


@dataclass(kw_only=True)
class SavePointEvent:
    """Everything so far is written and synced (or ``saved`` is False: see persistence)."""

    had_pending_mutations: bool
    saved: bool = True
    type: Literal["save_point"] = field(default="save_point", init=False)


@dataclass(kw_only=True)
class SettledEvent:
    next_turn_count: int
    type: Literal["settled"] = field(default="settled", init=False)


@dataclass(kw_only=True)
class QueueUpdateEvent:
    steer: list[str]
    follow_up: list[str]
    next_turn: list[str]
    type: Literal["queue_update"] = field(default="queue_update", init=False)


@dataclass(kw_only=True)
class AbortEvent:
    cleared_steer: list[str]
    cleared_follow_up: list[str]
    type: Literal["abort"] = field(default="abort", init=False)


@dataclass(kw_only=True)
class SessionCompactEvent:
    compaction_entry_id: str
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    reason: Literal["manual", "threshold", "overflow"]
    from_hook: bool = False
    type: Literal["session_compact"] = field(default="session_compact", init=False)


@dataclass(kw_only=True)
class CompactionStartEvent:
    reason: Literal["manual", "threshold", "overflow"]
    type: Literal["compaction_start"] = field(default="compaction_start", init=False)


@dataclass(kw_only=True)
class CompactionEndEvent:
    reason: Literal["manual", "threshold", "overflow"]
    success: bool
    error_message: str | None = None
    type: Literal["compaction_end"] = field(default="compaction_end", init=False)


@dataclass(kw_only=True)
class SessionTreeEvent:
    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry_id: str | None = None
    type: Literal["session_tree"] = field(default="session_tree", init=False)


@dataclass(kw_only=True)
class ModelSelectEvent:
    model: Model
    previous_model: Model | None
    source: Literal["set", "restore"] = "set"
    type: Literal["model_select"] = field(default="model_select", init=False)


@dataclass(kw_only=True)
class ThinkingLevelSelectEvent:
    level: str
    previous_level: str
    type: Literal["thinking_level_select"] = field(default="thinking_level_select", init=False)


@dataclass(kw_only=True)
class ActiveToolsSelectEvent:
    names: list[str]
    type: Literal["active_tools_select"] = field(default="active_tools_select", init=False)


@dataclass(kw_only=True)
class PersistenceErrorEvent:
    """Saving failed; nothing is lost: ``pending_count`` entries wait in memory."""

    operation: str
    path: str | None
    os_error: str | None
    errno: int | None
    code: str
    pending_count: int
    message: str
    type: Literal["persistence_error"] = field(default="persistence_error", init=False)


@dataclass(kw_only=True)
class PersistenceRestoredEvent:
    """Everything that was waiting has been written."""

    written: int
    type: Literal["persistence_restored"] = field(default="persistence_restored", init=False)


@dataclass(kw_only=True)
class AutoRetryStartEvent:
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: Literal["auto_retry_start"] = field(default="auto_retry_start", init=False)


@dataclass(kw_only=True)
class AutoRetryEndEvent:
    success: bool
    attempt: int
    final_error: str | None = None
    type: Literal["auto_retry_end"] = field(default="auto_retry_end", init=False)


@dataclass(kw_only=True)
class NoticeEvent:
    """Something the user should know that is not an error of the run (e.g. restore)."""

    message: str
    type: Literal["notice"] = field(default="notice", init=False)


HarnessOwnEvent: TypeAlias = (
    SavePointEvent
    | SettledEvent
    | QueueUpdateEvent
    | AbortEvent
    | SessionCompactEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | SessionTreeEvent
    | ModelSelectEvent
    | ThinkingLevelSelectEvent
    | ActiveToolsSelectEvent
    | PersistenceErrorEvent
    | PersistenceRestoredEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | NoticeEvent
)
HarnessEvent: TypeAlias = AgentEvent | HarnessOwnEvent
