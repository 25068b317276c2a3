"""`Session`: the domain API over one storage (SESSION_FORMAT.md §6-§7); the context it
builds for the next model call is `_context.py`'s."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from typing import Any, Final

from desktop_agent.ai import (
    AgentMessage,
    MessageFormatError,
    PiModel,
    parse_message,
)
from desktop_agent.session._codec import decode_entry, entry_from_obj, serialize
from desktop_agent.session._context import (
    PROJECTED,
    SessionContext,
    along,
    build_context_from_path,
    projected,
)
from desktop_agent.session._entries import SessionEntry, parse_entry
from desktop_agent.session._errors import SessionError
from desktop_agent.session._facts import BranchPage, EntryFacts, preview_of
from desktop_agent.session._ids import new_entry_id, now_iso
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


def _make_previews(tree: Tree, indices: Sequence[int]) -> None:
    types = tree.types
    for i, raw in zip(indices, tree.lines(indices), strict=True):
        try:
            tree.previews[i] = preview_of(types[i], decode_entry(raw))
        except SessionError:
            tree.previews[i] = types[i]


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
        # (none, e.g. no checkpoint records, looked for twice at a launch: `in` tells so
        # in ~1 ms per 100,000 entries, the compress below in ~4)
        if entry_type not in types:
            return []
        # (compress + map at C speed: the generator took ~25 ms per 100,000 entries.)
        same = map(operator.eq, types, repeat(entry_type))
        return self._entries(compress(range(len(types)), same))

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
        return entry_type in along(self._storage.tree.types, self._path(lenient))

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
        return projected(tree, [tree.require_index(entry_id)])[0]

    def entry_ids(self, start: int = 0) -> list[str]:
        """Ids of the entries in file order from the ``start``-th (no line is read)."""
        return self._storage.tree.ids[start:]

    def get_messages(self, entry_ids: Sequence[str]) -> list[AgentMessage | None]:
        """`get_message` of many entries, their lines read in runs of the file (safe to
        call in a worker thread: decoded messages go into the same cache)."""
        tree = self._storage.tree
        return projected(tree, [tree.require_index(i) for i in entry_ids])

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
            shown += types[path[start]] in PROJECTED
        chunk = path[start:stop]
        messages = await asyncio.to_thread(projected, tree, chunk)
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
