"""What the widgets show, as plain data: branch items, sidebar rows, usage, save state.

Views are computed from the open session without Qt. The branch view is a list of entry
ids with cheap per-entry facts (kind, role, siblings, label, merged tool results, folded
failed attempts); a message is decoded only when `BranchItem.message` is read (the
session caches decoded messages), so a view that shows a few rows decodes a few.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    CompactionSummaryMessage,
    ToolCall,
    ToolResultMessage,
    classify_error,
)
from desktop_agent.session import CompactionEntry, Session

_VISIBLE_ROLES = ("user", "assistant", "custom", "branchSummary", "compactionSummary")

Loader = Callable[[str], AgentMessage | None]


@dataclass(eq=False)
class BranchItem:
    """One visible message of the current branch.

    ``tool_result_ids`` are the entries of the results of its tool calls (merged into
    the card); ``failed_attempts`` are earlier failed attempts of the same request
    (retries), folded into this item so a prompt shows one card, not one per attempt.
    """

    entry_id: str
    kind: str
    role: str | None
    load: Loader = field(repr=False)
    sibling_index: int = 0
    sibling_count: int = 1
    label: str | None = None
    tool_result_ids: list[str] = field(default_factory=list)
    failed_attempts: list[str] = field(default_factory=list)

    @property
    def message(self) -> AgentMessage:
        message = self.load(self.entry_id)
        assert message is not None, self.entry_id
        return message

    def tool_results(self) -> dict[str, ToolResultMessage]:
        out: dict[str, ToolResultMessage] = {}
        for entry_id in self.tool_result_ids:
            result = self.load(entry_id)
            if isinstance(result, ToolResultMessage):
                out[result.tool_call_id] = result
        return out

    def attempts(self) -> list[AssistantMessage]:
        """The failed attempts folded into this item, oldest first."""
        out: list[AssistantMessage] = []
        for entry_id in self.failed_attempts:
            message = self.load(entry_id)
            if isinstance(message, AssistantMessage):
                out.append(message)
        return out


def is_visible(session: Session, entry_id: str) -> bool:
    """Whether an entry is a message the chat shows (not tool results or bookkeeping)."""
    kind, role = session.entry_kind(entry_id)
    if kind == "message":
        return role in _VISIBLE_ROLES
    return kind in ("custom_message", "branch_summary", "compaction")


def visible_siblings(session: Session, entry_id: str) -> list[str]:
    """The visible children of ``entry_id``'s parent, oldest first."""
    parent = session.parent_of(entry_id)
    return [c for c in session.child_ids(parent) if is_visible(session, c)]


def _failed(message: AgentMessage | None) -> bool:
    return isinstance(message, AssistantMessage) and message.stop_reason == "error"


class MessageLoader:
    """Decodes branch messages on demand (compactions become their summary message)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._compactions: dict[str, CompactionSummaryMessage] = {}

    async def prepare(self, entry_id: str) -> None:
        """Read what cannot be decoded synchronously (a compaction's entry)."""
        if entry_id in self._compactions:
            return
        entry = await self._session.get_entry(entry_id)
        if isinstance(entry, CompactionEntry):
            self._compactions[entry_id] = CompactionSummaryMessage(
                summary=entry.summary, tokens_before=entry.tokens_before, timestamp=0
            )

    def __call__(self, entry_id: str) -> AgentMessage | None:
        if entry_id in self._compactions:
            return self._compactions[entry_id]
        return self._session.get_message(entry_id)


async def branch_items(session: Session, loader: MessageLoader | None = None) -> list[BranchItem]:
    """The chat view of the current branch (see `BranchItem`).

    Siblings of a message are the visible children of its parent (what "edit and
    resend" creates), oldest first. Consecutive failed answers (automatic or manual
    retries of one request) fold into the next answer, or into the last failure.
    """
    load = loader or MessageLoader(session)
    items: list[BranchItem] = []
    by_call: dict[str, BranchItem] = {}
    siblings_of: dict[str | None, list[str]] = {}
    failures: list[BranchItem] = []

    def flush_failures() -> None:
        if failures:
            last = failures[-1]
            last.failed_attempts = [f.entry_id for f in failures[:-1]]
            items.append(last)
            failures.clear()

    for entry_id in session.branch_ids(lenient=True):
        kind, role = session.entry_kind(entry_id)
        if kind == "message" and role == "toolResult":
            result = load(entry_id)
            if isinstance(result, ToolResultMessage):
                owner = by_call.get(result.tool_call_id)
                if owner is not None:
                    owner.tool_result_ids.append(entry_id)
            continue
        if not is_visible(session, entry_id):
            continue
        if kind == "compaction":
            await load.prepare(entry_id)
        message = load(entry_id)
        if message is None:
            continue
        if message.role == "custom" and not getattr(message, "display", True):
            continue
        parent = session.parent_of(entry_id)
        siblings = siblings_of.get(parent)
        if siblings is None:
            siblings = [c for c in session.child_ids(parent) if is_visible(session, c)]
            siblings_of[parent] = siblings
        item = BranchItem(
            entry_id=entry_id,
            kind=kind,
            role=role,
            load=load,
            sibling_index=siblings.index(entry_id) if entry_id in siblings else 0,
            sibling_count=max(1, len(siblings)),
            label=session.label_of(entry_id),
        )
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolCall):
                    by_call[block.id] = item
            if _failed(message):
                failures.append(item)
                continue
            if failures:
                item.failed_attempts = [f.entry_id for f in failures]
                failures.clear()
        else:
            flush_failures()
        items.append(item)
    flush_failures()
    return items


def latest_leaf_under(session: Session, entry_id: str) -> str:
    """The most recent entry below ``entry_id`` (following the newest child each step)."""
    current = entry_id
    seen = {current}
    while True:
        children = [c for c in session.child_ids(current) if session.entry_kind(c)[0] != "leaf"]
        if not children:
            return current
        newest = children[-1]
        if newest in seen:
            return current
        seen.add(newest)
        current = newest


# --------------------------------------------------------------------------- usage


@dataclass(frozen=True)
class Usage:
    """Tokens and cost of the current branch, and how full the context is."""

    tokens: int = 0
    cost: float = 0.0
    context_tokens: int = 0
    context_window: int = 0

    def add(self, message: AssistantMessage) -> Usage:
        context = self.context_tokens
        if message.stop_reason not in ("error", "aborted"):
            context = message.usage.context_tokens()
        return Usage(
            tokens=self.tokens + int(message.usage.total_tokens or 0),
            cost=self.cost + float(message.usage.cost.total or 0),
            context_tokens=context,
            context_window=self.context_window,
        )


def branch_usage(session: Session, context_window: int) -> Usage:
    usage = Usage(context_window=context_window)
    for entry_id in session.branch_ids(lenient=True):
        if session.entry_kind(entry_id) == ("message", "assistant"):
            message = session.get_message(entry_id)
            if isinstance(message, AssistantMessage):
                usage = usage.add(message)
    return usage


# --------------------------------------------------------------------------- save state

SaveStatus = Literal["none", "saving", "saved", "not_saved", "read_only"]


@dataclass(frozen=True)
class SaveState:
    """What the status bar says about saving; ``pending`` entries wait in memory."""

    status: SaveStatus = "none"
    pending: int = 0
    detail: str | None = None
    code: str | None = None
    """Why saving failed (`SessionError` code): ``changed_on_disk`` means another program
    wrote to the file, and only a reload (not a retry) can save."""

    @property
    def label(self) -> str:
        return {
            "none": "",
            "saving": "Saving",
            "saved": "Saved",
            "not_saved": "Not saved",
            "read_only": "Read-only",
        }[self.status]


def entries_phrase(count: int) -> str:
    """ "1 entry", "2 entries"."""
    return f"{count} entr{'y' if count == 1 else 'ies'}"


# --------------------------------------------------------------------------- notices


@dataclass(frozen=True)
class Notice:
    """A line above the chat. ``key`` names its cause: a notice goes when its cause does
    (a new notice with the same key replaces it). ``action`` is e.g. Undo."""

    key: str
    text: str
    action_label: str | None = None


# --------------------------------------------------------------------------- sidebar


@dataclass(frozen=True)
class SidebarRow:
    """One session in the sidebar. ``path`` is the session's reference in its store (the
    file's path for JSONL sessions); ``source`` names the list it comes from, so a second
    source (e.g. another program's sessions) can sit beside this app's own."""

    path: str
    id: str
    cwd: str
    title: str
    last_activity: str  # ISO-8601
    problem: str | None = None
    in_trash: bool = False
    source: str = "sessions"
    message_count: int = -1
    """Messages in the session (-1: unknown); 0 marks an empty "New session"."""


def newest_first(rows: list[SidebarRow]) -> list[SidebarRow]:
    """Rows of several lists as one, most recent activity first (ISO times of any zone)."""

    def key(row: SidebarRow) -> float:
        try:
            when = datetime.fromisoformat(row.last_activity.strip())
        except (ValueError, AttributeError):
            return float("-inf")
        return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()

    return sorted(rows, key=key, reverse=True)


@dataclass(frozen=True)
class ModelChoices:
    """The model picker: (key, label) pairs, the current key, thinking levels."""

    models: tuple[tuple[str, str], ...] = ()
    current: str | None = None
    levels: tuple[str, ...] = ("off",)
    level: str = "off"
    pending: str | None = None
    """A model that is still being looked for (its server has not answered yet)."""


def error_attempt_text(message: AssistantMessage) -> str:
    """One line for a failed attempt: what failed, where."""
    info = classify_error(message)
    where = info.url or message.provider
    text = message.error_message or "The request failed."
    return f"{message.provider}/{message.model} at {where}: {text}" if where else text
