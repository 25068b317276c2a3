"""A session's context as Pi builds it (``buildSessionContext``, SESSION_FORMAT.md §7):
the messages and settings the next model call sees, projected from the tree's columns
and decoded from their lines only when read (`ContextMessages`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final, overload

from desktop_agent.ai import (
    AgentMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    MessageFormatError,
    UnknownMessage,
    parse_message,
)
from desktop_agent.session._codec import decode_entry
from desktop_agent.session._ids import iso_to_ms
from desktop_agent.session._tree import Row, Tree


@dataclass(frozen=True)
class ModelRef:
    """The model a session was last used with."""

    provider: str
    model_id: str


@dataclass
class SessionContext:
    """What the next LLM call sees: messages of the current branch plus settings.

    ``active_tool_names`` is None when the branch never restricted the tools (= all).
    """

    messages: Sequence[AgentMessage]
    """The branch's messages; a `ContextMessages` from a session (decoded on access)."""
    thinking_level: str = "off"
    model: ModelRef | None = None
    active_tool_names: list[str] | None = None


def project_line(kind: str, timestamp: str, raw: bytes) -> AgentMessage | None:
    """The context message an entry contributes (SESSION_FORMAT §7 step 2), if any."""
    if kind == "message":
        obj = decode_entry(raw).get("message")
        if not isinstance(obj, dict):
            return None
        try:
            return parse_message(obj, keep_key_order=False)
        except MessageFormatError:
            # Kept as read; convert_to_llm drops it, so a provider never sees it.
            return UnknownMessage.model_construct(**{"role": str(obj.get("role")), **obj})
    if kind == "custom_message":
        obj = decode_entry(raw)
        data: dict[str, Any] = {
            "role": "custom",
            "customType": obj.get("customType"),
            "content": obj.get("content"),
            "display": obj.get("display"),
        }
        if "details" in obj:
            data["details"] = obj["details"]
        data["timestamp"] = iso_to_ms(timestamp) or 0
        try:
            return CustomMessage.model_validate(data)
        except ValueError:
            return UnknownMessage.model_construct(**data)
    if kind == "branch_summary":
        obj = decode_entry(raw)
        summary = obj.get("summary")
        if not isinstance(summary, str) or not summary:
            return None
        return BranchSummaryMessage(
            summary=summary,
            from_id=_text(obj.get("fromId")),
            timestamp=iso_to_ms(timestamp) or 0,
        )
    return None


def _number(value: Any) -> int | float:
    """A number field as read: anything else a buggy writer left (null, text, a list)
    counts as 0 instead of failing the whole context."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return 0


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str)


def projected(tree: Tree, indices: Sequence[int]) -> list[AgentMessage | None]:
    """The context message of each entry (cached in ``tree.parsed``); the lines that are
    needed are read in runs of the file, not one by one."""
    cache = tree.parsed
    types = tree.types
    missing = [i for i in indices if i not in cache]
    for i, raw in zip(missing, tree.lines(missing), strict=True):
        cache[i] = project_line(types[i], tree.timestamp_at(i), raw)
    return [cache[i] for i in indices]


class ContextMessages(Sequence[AgentMessage]):
    """The messages of a context, decoded from their lines only when they are read.

    Which entries contribute a message is known from the tree's columns without decoding
    (an entry whose projection might be nothing is decoded up front: a branch summary, a
    ``message`` entry whose role is not a string), so ``len`` and indexing match what an
    eager list would hold. Reading every message (iteration) decodes them in runs of the
    file; decoded messages are cached in ``tree.parsed`` and shared: treat them as
    read-only. Opening a huge session therefore costs what is shown, not the whole branch.
    """

    __slots__ = ("_head", "_rows", "_tree")
    _CHUNK: Final = 512

    def __init__(self, tree: Tree, head: Sequence[AgentMessage], rows: Sequence[int]) -> None:
        self._tree = tree
        self._head = list(head)
        types, roles = tree.types, tree.roles
        doubtful = [
            i
            for i in rows
            if (types[i] == "message" and roles[i] is None) or types[i] == "branch_summary"
        ]
        if doubtful:
            dropped = {
                i for i, m in zip(doubtful, projected(tree, doubtful), strict=True) if m is None
            }
            if dropped:  # (most builds drop none: the filter took ~7 ms per 60,000 rows)
                rows = [i for i in rows if i not in dropped]
        self._rows = list(rows)

    def __len__(self) -> int:
        return len(self._head) + len(self._rows)

    @overload
    def __getitem__(self, index: int) -> AgentMessage: ...
    @overload
    def __getitem__(self, index: slice) -> list[AgentMessage]: ...
    def __getitem__(self, index: int | slice) -> AgentMessage | list[AgentMessage]:
        if isinstance(index, slice):
            return self._decode(range(len(self))[index])
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("context message index out of range")
        return self._decode([index])[0]

    def __iter__(self) -> Iterator[AgentMessage]:
        for start in range(0, len(self), self._CHUNK):
            yield from self._decode(range(start, min(start + self._CHUNK, len(self))))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ContextMessages({len(self)} messages)"

    def _decode(self, positions: Sequence[int]) -> list[AgentMessage]:
        head, k = self._head, len(self._head)
        rows = [self._rows[p - k] for p in positions if p >= k]
        decoded = iter(projected(self._tree, rows))
        out: list[AgentMessage] = []
        for p in positions:
            if p < k:
                out.append(head[p])
            else:
                message = next(decoded)
                assert message is not None  # rows that project to nothing were dropped
                out.append(message)
        return out


def _assistant_model(tree: Tree, index: int) -> tuple[str, str] | None:
    """(provider, model) of an assistant message entry, read from its line."""
    message = Row(tree, index).obj().get("message")
    if isinstance(message, dict):
        provider, model = message.get("provider"), message.get("model")
        if isinstance(provider, str) and isinstance(model, str):
            return provider, model
    return None


def along(column: Sequence[Any], path: Sequence[int]) -> list[Any]:
    """``column[i]`` for every ``i`` of ``path`` (at C speed)."""
    if len(path) > 1:
        return list(itemgetter(*path)(column))
    return [column[i] for i in path]


def build_context_from_path(
    tree: Tree, path: Sequence[int], *, messages: bool = True
) -> SessionContext:
    """`buildSessionContext` of a root-first path of row indices, exactly as Pi 0.74.2
    plus active tools (``messages=False``: the settings only, with no messages).

    The settings are found walking back from the leaf (the last one on the path wins, so
    the nearest one decides), which reads one assistant line for the model, not every
    message. Parsed messages are cached in ``tree.parsed`` between calls (the harness
    rebuilds the context every turn); they are shared, so treat them as read-only.
    """
    extra = tree.extra
    kinds = along(tree.types, path)[::-1]  # leaf first
    roles = along(tree.roles, path)[::-1]
    n = len(kinds)

    def nearest(column: list[Any], value: Any, start: int) -> int:
        """Position (leaf first) of the first ``value`` at or after ``start``, or n."""
        try:
            return column.index(value, start)
        except ValueError:
            return n

    thinking: str | None = None
    pos = nearest(kinds, "thinking_level_change", 0)
    while pos < n and thinking is None:
        value = extra[path[n - 1 - pos]]
        thinking = value if isinstance(value, str) else None
        pos = nearest(kinds, "thinking_level_change", pos + 1)

    model_key: tuple[str, str] | None = None
    by_message, by_change = nearest(roles, "assistant", 0), nearest(kinds, "model_change", 0)
    while model_key is None and min(by_message, by_change) < n:
        if by_message < by_change:
            model_key = _assistant_model(tree, path[n - 1 - by_message])
            by_message = nearest(roles, "assistant", by_message + 1)
        else:
            provider, model_id = extra[path[n - 1 - by_change]]
            if isinstance(provider, str) and isinstance(model_id, str):
                model_key = (provider, model_id)
            by_change = nearest(kinds, "model_change", by_change + 1)

    active: list[str] | None = None
    pos = nearest(kinds, "active_tools_change", 0)
    while pos < n and active is None:
        value = extra[path[n - 1 - pos]]
        active = list(value) if value is not None else None
        pos = nearest(kinds, "active_tools_change", pos + 1)

    model = ModelRef(*model_key) if model_key is not None else None
    if not messages:
        return SessionContext((), thinking or "off", model, active)

    last = nearest(kinds, "compaction", 0)
    compaction_at = n - 1 - last if last < n else None

    head: list[AgentMessage] = []
    if compaction_at is None:
        kept: Sequence[int] = path
    else:
        comp_row = Row(tree, path[compaction_at])
        comp = comp_row.obj()
        head.append(
            CompactionSummaryMessage(
                summary=_text(comp.get("summary", "")),
                tokens_before=_number(comp.get("tokensBefore")),
                timestamp=iso_to_ms(comp_row.timestamp) or 0,
            )
        )
        first_kept = comp.get("firstKeptEntryId")
        # (the ids along the path at C speed, then one search: a generator over the
        # path took ~14 ms per build of a 100,000-entry branch)
        before = along(tree.ids, path[:compaction_at])
        start = before.index(first_kept) if first_kept in before else compaction_at
        kept = [*path[start:compaction_at], *path[compaction_at + 1 :]]
    types = tree.types
    wanted = [i for i in kept if types[i] in PROJECTED]
    return SessionContext(ContextMessages(tree, head, wanted), thinking or "off", model, active)


PROJECTED = frozenset(("message", "custom_message", "branch_summary"))
