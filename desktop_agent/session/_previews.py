"""Previews of entries: one line per entry for the branch tree, decoded from JSON lines.

`rows_from_session` describes every entry straight from its stored JSON line (msgspec,
on a worker thread) instead of building typed entries, so a 10,000-entry session's tree
costs a fraction of a full parse; `rows_for_entries` does the same for a few appended
entries. Texts follow the one rule of `desktop_agent.utils.text`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from desktop_agent.session._entries import (
    ActiveToolsChangeEntry,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)
from desktop_agent.session._session import Session
from desktop_agent.utils.text import content_text

PREVIEW_CHARS = 80

#: Entry types that are bookkeeping, not nodes of the tree a person navigates.
SKIPPED_TYPES = frozenset({"leaf", "label"})

_ROLE_PREFIX = {
    "user": "You",
    "assistant": "Assistant",
    "toolResult": "Tool",
    "branchSummary": "Branch summary",
    "compactionSummary": "Compaction",
    "bashExecution": "Shell",
}


@dataclass(frozen=True)
class TreeRow:
    """One session entry, as the branch tree needs it (build with `rows_from_session`)."""

    id: str
    parent_id: str | None
    type: str
    role: str | None
    text: str
    timestamp: str
    label: str | None = None


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """One line of at most ``limit`` characters (whitespace runs collapsed)."""
    line = " ".join(text[: limit * 4].split())
    if len(line) > limit:
        return line[: limit - 1].rstrip() + "…"
    return line


def _blocks_text(content: Any) -> tuple[str, list[str], bool]:
    """(text, names of tool calls, has images) of a message content."""
    text = content_text(content)
    if isinstance(content, str) or not isinstance(content, Iterable):
        return text, [], False
    tools: list[str] = []
    images = False
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "toolCall":
            tools.append(str(getattr(block, "name", "?")))
        elif kind == "image":
            images = True
    return text, tools, images


def _message_text(message: Any) -> tuple[str | None, str]:
    raw_role = getattr(message, "role", None)
    role = str(raw_role) if raw_role is not None else None
    prefix = _ROLE_PREFIX.get(role or "", role or "Message")
    if role in ("branchSummary", "compactionSummary"):
        return role, f"{prefix}: {getattr(message, 'summary', '')}"
    text, tools, images = _blocks_text(getattr(message, "content", None))
    if role == "toolResult":
        name = getattr(message, "tool_name", "") or "?"
        mark = " (error)" if getattr(message, "is_error", False) else ""
        return role, f"Tool {name}{mark}: {text}" if text else f"Tool {name}{mark}"
    if role == "custom":
        prefix = str(getattr(message, "custom_type", "custom"))
    if role == "assistant":
        error = getattr(message, "error_message", None)
        if not text and error:
            text = f"error: {error}"
        if tools:
            calls = "→ " + ", ".join(tools)
            text = f"{text} {calls}" if text else calls
        if not text and getattr(message, "content", None):
            text = "(thinking)"
    if images:
        text = f"{text} [image]" if text else "[image]"
    return role, f"{prefix}: {text}" if text else prefix


def describe_entry(entry: SessionEntry) -> tuple[str | None, str]:
    """(message role or None, one-line preview) of an entry."""
    role: str | None = None
    if isinstance(entry, MessageEntry):
        role, text = _message_text(entry.message)
    elif isinstance(entry, CompactionEntry):
        text = f"Compaction: {entry.summary}"
    elif isinstance(entry, BranchSummaryEntry):
        text = f"Branch summary: {entry.summary}" if entry.summary else "Branch summary"
    elif isinstance(entry, ModelChangeEntry):
        text = f"Model: {entry.provider}/{entry.model_id}"
    elif isinstance(entry, ThinkingLevelChangeEntry):
        text = f"Thinking level: {entry.thinking_level}"
    elif isinstance(entry, SessionInfoEntry):
        text = f"Session name: {entry.name}" if entry.name else "Session name cleared"
    elif isinstance(entry, ActiveToolsChangeEntry):
        text = "Tools: " + (", ".join(entry.active_tool_names) or "none")
    elif isinstance(entry, CustomMessageEntry):
        body, _tools, _images = _blocks_text(entry.content)
        text = f"{entry.custom_type}: {body}" if body else entry.custom_type
    elif isinstance(entry, CustomEntry):
        text = f"Extension data: {entry.custom_type}"
    else:
        text = entry.type
    return role, preview(text)


def _effective_parents(
    entries: Sequence[tuple[str, str | None, str]],
) -> dict[str, str | None]:
    """For each (id, parent id, type), its nearest ancestor that is a node (skipping
    leaf/label). A missing parent, a self-parent or a parent cycle of bookkeeping entries
    gives None."""
    by_id = {entry_id: (parent, kind) for entry_id, parent, kind in entries}
    through_skipped: dict[str, str | None] = {}  # skipped id -> its nearest node ancestor
    out: dict[str, str | None] = {}
    for entry_id, parent, _kind in entries:
        chain: list[str] = []
        seen = {entry_id}
        result: str | None = None
        while parent is not None and parent in by_id and parent not in seen:
            if parent in through_skipped:
                result = through_skipped[parent]
                break
            grandparent, parent_kind = by_id[parent]
            if parent_kind not in SKIPPED_TYPES:
                result = parent
                break
            seen.add(parent)
            chain.append(parent)
            parent = grandparent
        for skipped in chain:
            through_skipped[skipped] = result
        out[entry_id] = result
    return out


def order_rows(rows: Sequence[TreeRow]) -> list[TreeRow]:
    """Depth-first, parents before children, siblings by timestamp (then input order).

    Rows whose parent is missing or that sit on a parent cycle become roots.
    """
    ids = {r.id for r in rows}
    children: dict[str | None, list[TreeRow]] = {}
    for row in rows:
        parent = row.parent_id if row.parent_id in ids and row.parent_id != row.id else None
        children.setdefault(parent, []).append(row)
    for kids in children.values():
        kids.sort(key=lambda r: r.timestamp)
    out: list[TreeRow] = []
    seen: set[str] = set()

    def walk(roots: list[TreeRow]) -> None:
        stack = list(reversed(roots))
        while stack:
            row = stack.pop()
            if row.id in seen:
                continue
            seen.add(row.id)
            out.append(row)
            stack.extend(reversed(children.get(row.id, [])))

    walk(children.get(None, []))
    if len(out) < len(rows):  # parent cycles: unreachable from any root
        for row in rows:
            if row.id not in seen:
                walk([row])
    return out


class _Block(msgspec.Struct):
    type: Any = None
    text: Any = None
    name: Any = None


class _PreviewMessage(msgspec.Struct):
    role: Any = None
    content: str | list[_Block] | None = None
    toolName: Any = None
    isError: Any = None
    errorMessage: Any = None
    summary: Any = None
    customType: Any = None


class _PreviewEntry(msgspec.Struct):
    message: _PreviewMessage | None = None
    summary: Any = None
    customType: Any = None
    content: str | list[_Block] | None = None
    provider: Any = None
    modelId: Any = None
    thinkingLevel: Any = None
    name: Any = None
    activeToolNames: Any = None


_PREVIEW = msgspec.json.Decoder(_PreviewEntry)


class _Light:
    """Duck-typed stand-in for a message model, enough for `_message_text`."""

    def __init__(self, m: _PreviewMessage) -> None:
        self.role = m.role
        self.content = m.content
        self.tool_name = m.toolName
        self.is_error = m.isError
        self.error_message = m.errorMessage
        self.summary = m.summary
        self.custom_type = m.customType


def _describe_raw(kind: str, raw: bytes) -> tuple[str | None, str] | None:
    """Preview from the JSON line without building typed entries; None: use the slow path."""
    try:
        e = _PREVIEW.decode(raw)
    except msgspec.DecodeError:
        return None
    role: str | None = None
    if kind == "message":
        if e.message is None:
            return None
        role, text = _message_text(_Light(e.message))
    elif kind == "compaction":
        text = f"Compaction: {e.summary}"
    elif kind == "branch_summary":
        text = f"Branch summary: {e.summary}" if e.summary else "Branch summary"
    elif kind == "model_change":
        text = f"Model: {e.provider}/{e.modelId}"
    elif kind == "thinking_level_change":
        text = f"Thinking level: {e.thinkingLevel}"
    elif kind == "session_info":
        text = f"Session name: {e.name}" if e.name else "Session name cleared"
    elif kind == "active_tools_change":
        names = e.activeToolNames if isinstance(e.activeToolNames, list) else []
        text = "Tools: " + (", ".join(str(n) for n in names) or "none")
    elif kind == "custom_message":
        body, _tools, _images = _blocks_text(e.content)
        text = f"{e.customType}: {body}" if body else str(e.customType)
    elif kind == "custom":
        text = f"Extension data: {e.customType}"
    else:
        text = kind
    return role, preview(text)


async def rows_from_session(session: Session) -> list[TreeRow]:
    """The session's nodes for the branch tree, parents first, siblings oldest first.

    ``leaf`` and ``label`` entries are bookkeeping and are not nodes: a node whose parent
    is one of them hangs on the nearest ancestor that is a node. Labels appear as
    `TreeRow.label` of the entry they name. Previews are decoded straight from each
    entry's JSON line, on a worker thread: the UI's loop only waits for the result (the
    interpreter switches threads every few ms, so the window stays responsive).
    """
    raw = session.raw_entries()
    labels = {entry_id: session.label_of(entry_id) for entry_id, *_ in raw}
    rows, unusual = await asyncio.to_thread(_rows_from_raw, raw, labels)
    if unusual:
        fixed: dict[str, tuple[str | None, str]] = {}
        for entry_id in unusual:
            entry = await session.get_entry(entry_id)
            fixed[entry_id] = describe_entry(entry) if entry is not None else (None, "?")
        rows = [
            replace(r, role=fixed[r.id][0], text=fixed[r.id][1]) if r.id in fixed else r
            for r in rows
        ]
    return rows


def _rows_from_raw(
    raw: list[tuple[str, str | None, str, str, bytes]], labels: dict[str, str | None]
) -> tuple[list[TreeRow], list[str]]:
    """Rows in tree order, and the ids whose line needs the typed (slow) description."""
    parents = _effective_parents([(i, p, t) for i, p, t, _ts, _r in raw])
    rows: list[TreeRow] = []
    unusual: list[str] = []
    for entry_id, _parent, kind, timestamp, line in raw:
        if kind in SKIPPED_TYPES:
            continue
        described = _describe_raw(kind, line)
        if described is None:
            unusual.append(entry_id)
            described = (None, kind)
        role, text = described
        rows.append(
            TreeRow(
                id=entry_id,
                parent_id=parents.get(entry_id),
                type=kind,
                role=role,
                text=text,
                timestamp=timestamp,
                label=labels.get(entry_id),
            )
        )
    return order_rows(rows), unusual


def _node_parent(session: Session, entry_id: str) -> str | None:
    """The nearest ancestor of ``entry_id`` that is a tree node (not a leaf or label)."""
    seen = {entry_id}
    parent = session.parent_of(entry_id)
    while parent is not None and parent not in seen:
        try:
            kind = session.entry_kind(parent)[0]
        except Exception:  # noqa: BLE001 - a missing parent: the entry is a root
            return None
        if kind not in SKIPPED_TYPES:
            return parent
        seen.add(parent)
        parent = session.parent_of(parent)
    return None


async def rows_for_entries(session: Session, entry_ids: Sequence[str]) -> list[TreeRow]:
    """Rows of a few entries (e.g. those just appended), in the given order.

    Bookkeeping entries (``leaf``, ``label``) give no row; a row's parent is its nearest
    ancestor that is a node, as in `rows_from_session`.
    """
    by_id = {r[0]: r for r in session.raw_entries()} if len(entry_ids) > 64 else None
    rows: list[TreeRow] = []
    for entry_id in entry_ids:
        kind, _role = session.entry_kind(entry_id)
        if kind in SKIPPED_TYPES:
            continue
        raw = by_id[entry_id] if by_id is not None else session.raw_entry(entry_id)
        described = _describe_raw(kind, raw[4])
        if described is None:
            entry = await session.get_entry(entry_id)
            described = describe_entry(entry) if entry is not None else (None, kind)
        role, text = described
        rows.append(
            TreeRow(
                id=entry_id,
                parent_id=_node_parent(session, entry_id),
                type=kind,
                role=role,
                text=text,
                timestamp=raw[3],
                label=session.label_of(entry_id),
            )
        )
    return rows
