"""Turning a session's current branch into chat items (pure functions, no widgets)."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    CompactionSummaryMessage,
    ToolCall,
    ToolResultMessage,
)
from desktop_agent.session import CompactionEntry, Session

_VISIBLE_ROLES = ("user", "assistant", "custom", "branchSummary", "compactionSummary")


@dataclass
class BranchItem:
    """One visible message of the branch, with its place among its siblings."""

    entry_id: str
    message: AgentMessage
    sibling_index: int = 0
    sibling_count: int = 1
    tool_results: dict[str, ToolResultMessage] = field(default_factory=dict)
    label: str | None = None


def is_visible(session: Session, entry_id: str) -> bool:
    """Whether an entry is a message the chat shows (not tool results or bookkeeping)."""
    kind, role = session.entry_kind(entry_id)
    if kind == "message":
        return role in _VISIBLE_ROLES
    return kind in ("custom_message", "branch_summary", "compaction")


async def _message(session: Session, entry_id: str) -> AgentMessage | None:
    kind, _role = session.entry_kind(entry_id)
    if kind == "compaction":
        entry = await session.get_entry(entry_id)
        if isinstance(entry, CompactionEntry):
            return CompactionSummaryMessage(
                summary=entry.summary, tokens_before=entry.tokens_before, timestamp=0
            )
        return None
    message = session.get_message(entry_id)
    if message is not None and message.role == "custom" and not getattr(message, "display", True):
        return None
    return message


async def branch_items(session: Session) -> list[BranchItem]:
    """The chat view of the current branch: messages with siblings and merged tool results.

    Siblings of a message are the visible children of its parent (what "edit and resend"
    and regenerations create), oldest first. Uses no per-entry parsing beyond the
    messages shown (cached by the session), so a 10,000-entry branch stays fast.
    """
    items: list[BranchItem] = []
    by_call: dict[str, BranchItem] = {}
    siblings_of: dict[str | None, list[str]] = {}
    for entry_id in session.branch_ids(lenient=True):
        kind, role = session.entry_kind(entry_id)
        if kind == "message" and role == "toolResult":
            result = session.get_message(entry_id)
            if isinstance(result, ToolResultMessage):
                owner = by_call.get(result.tool_call_id)
                if owner is not None:
                    owner.tool_results[result.tool_call_id] = result
            continue
        if not is_visible(session, entry_id):
            continue
        message = await _message(session, entry_id)
        if message is None:
            continue
        parent = session.parent_of(entry_id)
        siblings = siblings_of.get(parent)
        if siblings is None:
            siblings = [c for c in session.child_ids(parent) if is_visible(session, c)]
            siblings_of[parent] = siblings
        item = BranchItem(
            entry_id=entry_id,
            message=message,
            sibling_index=siblings.index(entry_id) if entry_id in siblings else 0,
            sibling_count=max(1, len(siblings)),
            label=session.label_of(entry_id),
        )
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolCall):
                    by_call[block.id] = item
        items.append(item)
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
