"""`Session`: the domain API over one storage (SESSION_FORMAT.md §6-§7)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Final, overload

from desktop_agent.ai import (
    AgentMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    MessageFormatError,
    PiModel,
    UnknownMessage,
    parse_message,
)
from desktop_agent.session._codec import decode_entry, entry_from_obj, serialize
from desktop_agent.session._entries import SessionEntry, parse_entry
from desktop_agent.session._errors import SessionError
from desktop_agent.session._facts import BranchPage, EntryFacts, preview_of
from desktop_agent.session._ids import iso_to_ms, new_entry_id, now_iso
from desktop_agent.session._reload import ReloadLeaf, ReloadReport
from desktop_agent.session._storage import (
    NEWER_VERSION,
    RecoveryReport,
    SessionMetadata,
    Storage,
)
from desktop_agent.session._tree import Row, Tree


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


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


@dataclass
class TreeNode:
    """One node of `Session.get_tree()`; children are ordered by timestamp."""

    entry: SessionEntry
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None


@dataclass(frozen=True)
class TreeShape:
    """The tree's columns as they are now, for views that lay out every entry (the branch
    map): no line is read. The sequences are the tree's own (read-only for the caller);
    entries appended later extend them, so a view compares lengths to see what is new.
    """

    ids: Sequence[str]
    parents: Sequence[int]
    """Row index of each entry's parent: -1 a root, -2 a parent that names no entry."""
    types: Sequence[str]
    roles: Sequence[str | None]
    timestamps: Sequence[str]
    labels: Mapping[str, str]
    by_id: Mapping[str, int]
    path: Sequence[int]
    """Root-first row indices of the current branch (empty when the leaf is unknown)."""
    columns_crc: Callable[[int], int]
    """A CRC-32 of ids, parent rows, types, roles and timestamps of the first ``n``
    entries (`Tree.columns_crc`: kept from the entry index when it covers them)."""


@dataclass(frozen=True)
class BranchSummary:
    """A summary written with `Session.move_to` as a ``branch_summary`` entry."""

    summary: str
    details: Any = UNSET
    from_hook: bool | None = None


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


def _projected(tree: Tree, indices: Sequence[int]) -> list[AgentMessage | None]:
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
                i for i, m in zip(doubtful, _projected(tree, doubtful), strict=True) if m is None
            }
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
        decoded = iter(_projected(self._tree, rows))
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
    kinds = _along(tree.types, path)[::-1]  # leaf first
    roles = _along(tree.roles, path)[::-1]
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
        ids = tree.ids
        start = next(
            (pos for pos in range(compaction_at) if ids[path[pos]] == first_kept), compaction_at
        )
        kept = [*path[start:compaction_at], *path[compaction_at + 1 :]]
    types = tree.types
    wanted = [i for i in kept if types[i] in _PROJECTED]
    return SessionContext(ContextMessages(tree, head, wanted), thinking or "off", model, active)


_PROJECTED = frozenset(("message", "custom_message", "branch_summary"))


def _make_previews(tree: Tree, indices: Sequence[int]) -> None:
    types = tree.types
    for i, raw in zip(indices, tree.lines(indices), strict=True):
        try:
            tree.previews[i] = preview_of(types[i], decode_entry(raw))
        except SessionError:
            tree.previews[i] = types[i]


def _along(column: Sequence[Any], path: Sequence[int]) -> list[Any]:
    """``column[i]`` for every ``i`` of ``path`` (at C speed)."""
    if len(path) > 1:
        return list(itemgetter(*path)(column))
    return [column[i] for i in path]


def _json_value(value: Any) -> Any:
    if isinstance(value, PiModel):
        return value.to_json_dict()
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    return value


class Session:
    """One open session. All methods are async; mutations are serialised per session."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------- metadata

    @property
    def metadata(self) -> SessionMetadata:
        return self._storage.metadata

    def get_metadata(self) -> SessionMetadata:
        return self._storage.metadata

    def get_storage(self) -> Storage:
        return self._storage

    @property
    def read_only(self) -> bool:
        return self._storage.read_only

    @property
    def format_version(self) -> int:
        """3; 1 or 2 for a file in an older Pi format, open read-only through an
        in-memory migration (``JsonlSessionRepo.convert`` makes a v3 copy)."""
        return self._storage.metadata.format_version

    @property
    def read_only_reason(self) -> str | None:
        return self._storage.read_only_reason

    @property
    def written_by_newer_app(self) -> bool:
        """A newer Desktop Agent wrote this session: it is read-only and never written."""
        return self._storage.read_only_code == NEWER_VERSION

    @property
    def recovery(self) -> RecoveryReport | None:
        """What opening had to work around (torn tail set aside, damaged lines)."""
        return self._storage.recovery

    @property
    def pending_count(self) -> int:
        """Entries in memory that are not written to disk yet."""
        return len(self._storage.pending)

    @property
    def entry_count(self) -> int:
        return len(self._storage.tree)

    # ------------------------------------------------------------- reading

    async def get_leaf_id(self) -> str | None:
        return self._storage.tree.current_leaf()

    def leaf_id(self) -> str | None:
        """Synchronous `get_leaf_id` for UI code."""
        return self._storage.tree.current_leaf()

    async def get_entry(self, entry_id: str) -> SessionEntry | None:
        row = self._storage.tree.get(entry_id)
        return parse_entry(row.obj()) if row is not None else None

    def _entries(self, indices: Iterable[int]) -> list[SessionEntry]:
        """Typed entries of ``indices``, their lines read in runs of the file."""
        return [parse_entry(decode_entry(raw)) for raw in self._storage.tree.lines(indices)]

    async def get_entries(self) -> list[SessionEntry]:
        return self._entries(range(len(self._storage.tree)))

    async def find_entries(self, entry_type: str) -> list[SessionEntry]:
        types = self._storage.tree.types
        return self._entries(i for i, kind in enumerate(types) if kind == entry_type)

    async def get_branch(self, from_id: str | None = None) -> list[SessionEntry]:
        tree = self._storage.tree
        start = from_id if from_id is not None else tree.current_leaf()
        return self._entries(tree.path_indices(start))

    def branch_ids(self, from_id: str | None = None, *, lenient: bool = False) -> list[str]:
        """Root-first ids of the path to ``from_id`` (default: the leaf), cheaply.

        ``lenient``: for display of damaged sessions, a missing parent ends the path and
        an unknown leaf gives an empty branch instead of an error.
        """
        tree = self._storage.tree
        if from_id is None:
            try:
                from_id = tree.current_leaf()
            except SessionError:
                if not lenient:
                    raise
                return []
        ids = tree.ids
        return [ids[i] for i in tree.path_indices(from_id, lenient=lenient)]

    async def build_context(
        self, *, lenient: bool = False, messages: bool = True
    ) -> SessionContext:
        """The context of the current branch (SESSION_FORMAT §7).

        ``lenient`` (display of damaged sessions): a broken parent chain ends the path
        instead of raising ``invalid_session``. ``messages=False``: only the settings
        (model, thinking level, active tools), without listing the branch's messages.
        """
        return build_context_from_path(self._storage.tree, self._path(lenient), messages=messages)

    def branch_has(self, entry_type: str, *, lenient: bool = False) -> bool:
        """Whether an entry of ``entry_type`` is on the current branch (no line read)."""
        return entry_type in _along(self._storage.tree.types, self._path(lenient))

    def _path(self, lenient: bool) -> list[int]:
        tree = self._storage.tree
        if lenient:
            try:
                leaf = tree.current_leaf()
            except SessionError:
                return []
            return tree.path_indices(leaf, lenient=True)
        return tree.path_indices(tree.current_leaf())

    # Cheap synchronous views for UI code (no entry parsing).

    def entry_kind(self, entry_id: str) -> tuple[str, str | None]:
        """(entry type, message role or None) of an entry."""
        tree = self._storage.tree
        i = tree.require_index(entry_id)
        return tree.types[i], tree.roles[i]

    def parent_of(self, entry_id: str) -> str | None:
        return self._storage.tree.require(entry_id).parent_id or None

    def child_ids(self, entry_id: str | None) -> list[str]:
        """Children of ``entry_id`` (None: roots), oldest first, without parsing them."""
        ids = self._storage.tree.ids
        return [ids[i] for i in self._sorted_children(entry_id)]

    def get_message(self, entry_id: str) -> AgentMessage | None:
        """The context message an entry contributes (cached; treat it as read-only)."""
        tree = self._storage.tree
        return _projected(tree, [tree.require_index(entry_id)])[0]

    def entry_ids(self, start: int = 0) -> list[str]:
        """Ids of the entries in file order from the ``start``-th (no line is read)."""
        return self._storage.tree.ids[start:]

    def get_messages(self, entry_ids: Sequence[str]) -> list[AgentMessage | None]:
        """`get_message` of many entries, their lines read in runs of the file (safe to
        call in a worker thread: decoded messages go into the same cache)."""
        tree = self._storage.tree
        return _projected(tree, [tree.require_index(i) for i in entry_ids])

    def raw_lines(self, entry_ids: Sequence[str]) -> list[bytes]:
        """The exact JSON lines of entries (read in runs of the file), for light reads of
        one field of many entries off the event loop."""
        tree = self._storage.tree
        return list(tree.lines([tree.require_index(i) for i in entry_ids]))

    def raw_entries(self) -> list[tuple[str, str | None, str, str, bytes]]:
        """(id, parent id, type, timestamp, exact JSON line) of every entry, file order.

        For views that need a light read of many entries (the branch tree): decoding the
        lines they need is much cheaper than building typed entries for all of them.
        """
        tree = self._storage.tree
        n = len(tree)
        return list(
            zip(
                tree.ids,
                [p or None for p in tree.column("parents")],
                tree.types,
                [t or "" for t in tree.column("timestamps")],
                tree.lines(range(n)),
                strict=True,
            )
        )

    def shape(self) -> TreeShape:
        """The tree's shape now (`TreeShape`), without reading any line."""
        tree = self._storage.tree
        try:
            path = tree.path_indices(tree.current_leaf(), lenient=True)
        except SessionError:
            path = []
        return TreeShape(
            ids=tree.ids,
            parents=tree.parent_index(),
            types=tree.types,
            roles=tree.roles,
            timestamps=tree.timestamps_view(),
            labels=tree.labels,
            by_id=tree.by_id,
            path=path,
            columns_crc=tree.columns_crc,
        )

    # Lazy views (issue 12 item 2): facts from the tree's columns, lines on demand.

    def entry_facts(self, entry_id: str) -> EntryFacts:
        """The cheap facts of one entry (no line is read; see `previews`)."""
        tree = self._storage.tree
        return self._facts(tree, tree.require_index(entry_id))

    def facts(self, entry_ids: Iterable[str]) -> list[EntryFacts]:
        """`entry_facts` of many entries (unknown ids raise ``not_found``)."""
        tree = self._storage.tree
        return [self._facts(tree, tree.require_index(i)) for i in entry_ids]

    @staticmethod
    def _facts(tree: Tree, i: int) -> EntryFacts:
        entry_id = tree.ids[i]
        return EntryFacts(
            id=entry_id,
            parent_id=tree.parent_at(i) or None,
            type=tree.types[i],
            role=tree.roles[i],
            timestamp=tree.timestamp_at(i),
            label=tree.labels.get(entry_id),
            children=len(tree.children_of(entry_id)),
            preview=tree.previews.get(i),
            offset=tree.offsets[i],
        )

    async def previews(self, entry_ids: Iterable[str]) -> dict[str, str]:
        """Short previews of entries; lines not previewed before are read off the loop
        (in runs of the file) and the previews kept, also in the entry index."""
        tree = self._storage.tree
        indices = [tree.require_index(i) for i in entry_ids]
        missing = [i for i in indices if i not in tree.previews]
        if missing:
            await asyncio.to_thread(_make_previews, tree, missing)
        return {tree.ids[i]: tree.previews[i] for i in indices}

    async def branch_page(
        self, *, before: str | None = None, limit: int = 50, leaf: str | None = None
    ) -> BranchPage:
        """A page of a branch with its messages decoded, read off the event loop.

        The branch ends at ``leaf`` (default: the current leaf); the page ends just
        before ``before`` (default: at the end) and goes back until it holds ``limit``
        entries that show a message (with the bookkeeping entries between them), so a
        view shows the end of a long branch at once and loads older pages as it scrolls.
        Damaged sessions are walked leniently.
        """
        tree = self._storage.tree
        try:
            end = leaf if leaf is not None else tree.current_leaf()
        except SessionError:
            return BranchPage([])
        path = tree.path_indices(end, lenient=True)
        stop = len(path)
        if before is not None:
            at = tree.require_index(before)
            stop = path.index(at) if at in path else 0
        types = tree.types
        start, shown = stop, 0
        while start > 0 and shown < limit:
            start -= 1
            shown += types[path[start]] in _PROJECTED
        chunk = path[start:stop]
        messages = await asyncio.to_thread(_projected, tree, chunk)
        entries = [self._facts(tree, i) for i in chunk]
        decoded = {tree.ids[i]: m for i, m in zip(chunk, messages, strict=True) if m is not None}
        return BranchPage(entries, decoded, has_more=start > 0)

    def raw_entry(self, entry_id: str) -> tuple[str, str | None, str, str, bytes]:
        """`raw_entries` of one entry."""
        r = self._storage.tree.require(entry_id)
        return (r.id, r.parent_id or None, r.type, r.timestamp, r.raw)

    def label_of(self, entry_id: str) -> str | None:
        return self._storage.tree.labels.get(entry_id)

    async def get_label(self, entry_id: str) -> str | None:
        return self._storage.tree.labels.get(entry_id)

    async def get_session_name(self) -> str | None:
        return self._storage.tree.name

    async def get_children(self, entry_id: str | None) -> list[SessionEntry]:
        """Children of ``entry_id`` (None: the roots), oldest first."""
        return self._entries(self._sorted_children(entry_id))

    def _sorted_children(self, entry_id: str | None) -> list[int]:
        tree = self._storage.tree
        children = tree.children_of(entry_id)
        if entry_id is None:
            # Orphans (parent missing) and self-parented entries are roots too (kept by
            # the tree: this is not a scan of every entry).
            children = children + tree.orphan_roots()
        if len(children) < 2:
            return list(children)
        return sorted(children, key=tree.timestamp_at)

    async def get_tree(self) -> list[TreeNode]:
        """The whole forest (iterative, so deep sessions do not hit the recursion limit)."""
        tree = self._storage.tree
        children_map = tree.children_map()
        roots = self._sorted_children(None)
        labels, ids, timestamps = tree.labels, tree.ids, tree.timestamps_view()
        seen: set[str] = set()
        out: list[TreeNode] = []
        stack: list[tuple[int, list[TreeNode]]] = [(i, out) for i in reversed(roots)]
        while stack:
            i, siblings = stack.pop()
            entry_id = ids[i]
            if entry_id in seen:
                continue
            seen.add(entry_id)
            node = TreeNode(parse_entry(Row(tree, i).obj()), [], labels.get(entry_id))
            siblings.append(node)
            kids = sorted(children_map.get(entry_id, []), key=lambda k: timestamps[k])
            stack.extend((k, node.children) for k in reversed(kids) if ids[k] != entry_id)
        return out

    # ------------------------------------------------------------- writing

    async def _append(self, kind: str, fields: dict[str, Any]) -> str:
        async with self._lock:
            storage = self._storage
            storage.check_open()
            tree = storage.tree
            obj: dict[str, Any] = {
                "type": kind,
                "id": new_entry_id(tree.by_id),
                "parentId": tree.current_leaf(),
                "timestamp": now_iso(),
            }
            obj.update(fields)
            await self._store(storage, obj)
            return str(obj["id"])

    async def _store(self, storage: Storage, obj: dict[str, Any]) -> None:
        """Append ``obj`` (under ``_lock``): the entry joins the tree on the loop; a store
        whose writes wait on a server (`Storage.writes_off_loop`) writes on a worker
        thread, and a cancelled caller still waits for that write to end (the queue is
        shared with the next append)."""
        if not storage.writes_off_loop:
            storage.append(entry_from_obj(obj), serialize(obj))
            return
        storage.queue(entry_from_obj(obj), serialize(obj))
        write = asyncio.ensure_future(asyncio.to_thread(storage.write_queued, "append"))
        try:
            await asyncio.shield(write)
        except asyncio.CancelledError:
            await asyncio.wait({write})
            if not write.cancelled():
                write.exception()  # retrieved: the caller was cancelled, the save is queued
            raise

    async def append_message(self, message: AgentMessage | Mapping[str, Any]) -> str:
        if isinstance(message, Mapping):
            try:
                message = parse_message(message)
            except MessageFormatError as exc:
                raise SessionError("invalid_argument", str(exc)) from exc
        return await self._append("message", {"message": message.to_json_dict()})

    async def append_model_change(self, provider: str, model_id: str) -> str:
        return await self._append("model_change", {"provider": provider, "modelId": model_id})

    async def append_thinking_level_change(self, thinking_level: str) -> str:
        return await self._append("thinking_level_change", {"thinkingLevel": thinking_level})

    async def append_active_tools_change(self, active_tool_names: Sequence[str]) -> str:
        return await self._append(
            "active_tools_change", {"activeToolNames": list(active_tool_names)}
        )

    async def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int | float,
        details: Any = UNSET,
        from_hook: bool | None = None,
    ) -> str:
        fields: dict[str, Any] = {
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
        if details is not UNSET:
            fields["details"] = _json_value(details)
        if from_hook is not None:
            fields["fromHook"] = from_hook
        return await self._append("compaction", fields)

    async def append_custom_entry(self, custom_type: str, data: Any = UNSET) -> str:
        fields: dict[str, Any] = {"customType": custom_type}
        if data is not UNSET:
            fields["data"] = _json_value(data)
        return await self._append("custom", fields)

    async def append_custom_message_entry(
        self, custom_type: str, content: Any, display: bool, details: Any = UNSET
    ) -> str:
        fields: dict[str, Any] = {
            "customType": custom_type,
            "content": _json_value(content),
            "display": display,
        }
        if details is not UNSET:
            fields["details"] = _json_value(details)
        return await self._append("custom_message", fields)

    async def append_label(self, target_id: str, label: str | None = None) -> str:
        self._storage.tree.require(target_id)
        fields: dict[str, Any] = {"targetId": target_id}
        if label is not None and label.strip():
            fields["label"] = label
        return await self._append("label", fields)

    async def append_session_name(self, name: str) -> str:
        return await self._append("session_info", {"name": name.strip()})

    async def move_to(
        self,
        entry_id: str | None,
        summary: BranchSummary | Mapping[str, Any] | str | None = None,
    ) -> str | None:
        """Move the leaf (a ``leaf`` entry is always written); optionally add a summary.

        The ``leaf`` entry's ``parentId`` is the target (Pi's core writes the old leaf
        there): pi-agent-core reads only ``targetId``, and the Pi CLI, which knows no
        ``leaf`` entries and takes the last entry as its leaf, then walks from it to the
        target, so both continue where we moved (``pi --continue`` included).

        Returns the id of the ``branch_summary`` entry when a summary was given.
        """
        async with self._lock:
            storage = self._storage
            storage.check_open()
            tree = storage.tree
            if entry_id is not None:
                tree.require(entry_id)
            leaf_obj: dict[str, Any] = {
                "type": "leaf",
                "id": new_entry_id(tree.by_id),
                "parentId": entry_id,
                "timestamp": now_iso(),
                "targetId": entry_id,
            }
            await self._store(storage, leaf_obj)
            if summary is None:
                return None
            if isinstance(summary, str):
                summary = BranchSummary(summary)
            elif isinstance(summary, Mapping):
                summary = BranchSummary(
                    str(summary.get("summary", "")),
                    summary.get("details", UNSET),
                    summary.get("fromHook", summary.get("from_hook")),
                )
            obj: dict[str, Any] = {
                "type": "branch_summary",
                "id": new_entry_id(tree.by_id),
                "parentId": entry_id,
                "timestamp": now_iso(),
                "fromId": entry_id if entry_id is not None else "root",
                "summary": summary.summary,
            }
            if summary.details is not UNSET:
                obj["details"] = _json_value(summary.details)
            if summary.from_hook is not None:
                obj["fromHook"] = summary.from_hook
            await self._store(storage, obj)
            return str(obj["id"])

    # ------------------------------------------------------------- durability

    async def sync(self) -> None:
        """Write what is queued and fsync (off the event loop)."""
        async with self._lock:
            if self._storage.pending or getattr(self._storage, "_needs_sync", False):
                await asyncio.to_thread(self._storage.sync)

    async def retry_persistence(self) -> int:
        """Write exactly the entries that are not on disk yet; returns how many."""
        async with self._lock:
            return await asyncio.to_thread(self._storage.retry)

    async def reload_from_disk(self, leaf: ReloadLeaf = "theirs") -> ReloadReport:
        """After another program (the Pi CLI, another tool) wrote to this session's file
        (a save failed with ``changed_on_disk``): take in the file as it is now and keep
        our entries it lacks as a branch from where the two diverged.

        ``leaf``: "theirs" (default) continues where the other program left the file;
        "ours" stays on our branch. A ``leaf`` entry records it when needed. Nothing is
        lost and nothing interleaved; the result says what came in, what was kept, and
        whether writing our entries failed (they then wait for ``retry_persistence``).
        """
        async with self._lock:
            return await asyncio.to_thread(self._storage.reload_from_disk, leaf)

    async def save_copy(self, path: str) -> None:
        """Write the whole session (saved or not) to a new file, e.g. on another disk."""
        save = getattr(self._storage, "save_copy", None)
        if save is None:
            raise SessionError("invalid_argument", "This storage cannot save a copy")
        async with self._lock:
            await asyncio.to_thread(save, path)

    async def close(self) -> None:
        """Sync and release the session; raises (keeping the entries) if saving fails."""
        async with self._lock:
            await asyncio.to_thread(self._storage.close)

    @property
    def closed(self) -> bool:
        return self._storage.closed
