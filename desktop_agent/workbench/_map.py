"""The branch map, without Qt: a session tree laid out like ``git log --graph``.

BRANCH_MAP.md §3-§4. One row per shown entry, in the order the chat reads: the current
path runs straight down lane 0 from the root to the leaf; at each fork the alternatives
that are not on the path follow the fork row as blocks (oldest first), each block in the
lowest free lane to the right, before the path goes on. Inside a block the line follows
the newest child and its other children nest one lane further right. Blocks nest, so
lines never cross; a block's colour comes from its fork's id and its place among the
fork's children, so sibling blocks differ and keep their colours across redraws.

The layout reads only the tree's columns (`Session.shape`: ids, parents, types, roles,
timestamps, labels): no message is decoded. What entries are rows depends on a filter
(`MAP_FILTERS`): by default user and assistant messages, compactions and summaries;
tool results, settings, model and thinking changes are hidden, and a hidden entry's
children hang on its nearest shown ancestor. Previews (one line) and tooltips (the whole
message) are read for the rows that are painted, on demand (`Workbench.map_previews`).

`BranchMap.sync` brings the layout up to date with the session: entries appended to the
current leaf add rows at the end (O(new entries)); a moved leaf, a filter change or an
entry elsewhere lays the map out again (O(entries), 60-80 ms for 10,000: `BranchMap.update`
runs it on the event loop a few milliseconds at a time).
"""

from __future__ import annotations

import asyncio
import json
import zlib
from array import array
from bisect import bisect_right
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress, pairwise
from typing import Any, Literal, NamedTuple

import msgspec

from desktop_agent.session import TreeShape
from desktop_agent.workbench._slices import drain, sliced

MapFilter = Literal["conversation", "user", "labeled", "all"]
MAP_FILTERS: tuple[MapFilter, ...] = ("conversation", "user", "labeled", "all")
"""conversation: user and assistant messages, compactions, summaries (the default);
user: your prompts only; labeled: labelled entries only; all: every entry (settings,
model and thinking changes, tool results, extension data)."""

LANE_COLORS = 8
"""Blocks off the current path use colours 1..LANE_COLORS-1 (0 is the current path)."""

RowKind = Literal["user", "assistant", "compaction", "summary", "tool", "setting", "other"]

_NEVER = frozenset({"leaf", "label"})
"""Bookkeeping entries that are never rows (labels show on the entry they name)."""

_SETTINGS = frozenset(
    {"model_change", "thinking_level_change", "session_info", "active_tools_change", "custom"}
)


def row_kind(entry_type: str, role: str | None) -> RowKind | None:
    """What an entry is on the map (None: never a row)."""
    if entry_type in _NEVER:
        return None
    if entry_type == "message":
        if role in ("user", "assistant"):
            return role  # type: ignore[return-value]
        if role == "compactionSummary":
            return "compaction"
        if role == "branchSummary":
            return "summary"
        if role == "toolResult":
            return "tool"
        return "other"  # custom messages, shell executions, unknown roles
    if entry_type == "compaction":
        return "compaction"
    if entry_type == "branch_summary":
        return "summary"
    if entry_type == "custom_message":
        return "other"
    if entry_type in _SETTINGS:
        return "setting"
    return "setting"


_SHOWN: dict[MapFilter, frozenset[str]] = {
    "conversation": frozenset({"user", "assistant", "compaction", "summary", "other"}),
    "user": frozenset({"user"}),
    "labeled": frozenset(),
    "all": frozenset({"user", "assistant", "compaction", "summary", "tool", "setting", "other"}),
}


class MapRow(msgspec.Struct, array_like=True):
    """One row of the map: where its node sits and which lines pass it.

    ``up``: the line of its lane comes down into the node; ``from_lane``: a block head,
    joined by a curve from its fork's lane (-1: none); ``down``: a line leaves the node
    downwards in its lane. The lines that pass a row are `BranchMap.through`.

    A msgspec ``Struct``: a saved layout's 50,000 rows are decoded into rows at C speed
    (made one by one in Python they were a third of taking the layout at a launch).
    """

    entry: int
    """Row index of the entry in the session's tree (`TreeShape`)."""
    entry_id: str
    kind: RowKind
    lane: int
    color: int
    parent: int = -1
    """The map row of the nearest shown ancestor (-1: a root)."""
    up: bool = False
    from_lane: int = -1
    down: bool = False
    tip: bool = True
    """No shown entry below it: the end of a branch."""

    @property
    def on_path(self) -> bool:
        return self.lane == 0 and self.color == 0


class FilesMark(NamedTuple):
    """The files a turn changed: how many, and (some of) their paths."""

    changed: int
    files: tuple[str, ...]


@dataclass(frozen=True)
class BranchTip:
    """One branch for the Branches list: its last entry and the row that shows it."""

    leaf_id: str
    """The branch's last entry (where switching moves the leaf)."""
    entry_id: str
    """The shown entry its preview comes from (the leaf or its nearest shown ancestor)."""
    row: int
    timestamp: str
    label: str | None
    current: bool


@dataclass(frozen=True)
class MapUpdate:
    """What `BranchMap.sync` changed: ``reset`` (lay out every row again), or rows
    ``first..`` appended at the end, and earlier rows whose drawing changed."""

    reset: bool = False
    first_new: int = -1
    changed: tuple[int, ...] = ()
    labels: bool = False
    """Labels changed (their rows are repainted)."""

    @property
    def empty(self) -> bool:
        return not (self.reset or self.first_new >= 0 or self.changed or self.labels)


def block_color(entry_id: str) -> int:
    """A colour keyed by ``entry_id`` (1..LANE_COLORS-1), stable across redraws."""
    return 1 + zlib.crc32(entry_id.encode()) % (LANE_COLORS - 1)


def sibling_color(base: int, index: int) -> int:
    """The colour of the block of a fork's ``index``-th child: the fork's colour stepped
    by the child's place (so sibling blocks differ, and keep their colour when the path
    moves: the place counts every child, the one on the path included)."""
    return 1 + (base - 1 + index) % (LANE_COLORS - 1)


@dataclass
class BranchMap:
    """The map of one session (see the module docstring); rebuilt by `sync`."""

    filter: MapFilter = "conversation"
    rows: list[MapRow] = field(default_factory=list)
    hits: frozenset[int] = frozenset()
    """Rows that hold (or stand for a hidden entry that holds) a search hit."""
    file_marks: dict[int, FilesMark] = field(default_factory=dict)
    """Rows where a turn changed files (the row that stands for its checkpoint entry)."""
    _file_entries: dict[str, FilesMark] = field(default_factory=dict)
    _shape: TreeShape | None = None
    _n: int = 0  # entries seen
    _vis: list[bool] = field(default_factory=list)
    _vparent: list[int] = field(default_factory=list)  # nearest shown ancestor, -1 none
    _vkids: dict[int, list[int]] | None = field(default_factory=dict)
    """Shown children by entry, file order (None: not made yet, see `_kids`)."""
    _row_of: dict[int, int] = field(default_factory=dict)  # entry index -> row
    _path: list[int] = field(default_factory=list)  # entry indices of the current path
    _hit_entries: tuple[str, ...] = ()
    _tips: tuple[int, list[BranchTip]] | None = None
    _version: int = 0  # one more at every sync that changes the layout
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _spans: dict[int, tuple[list[int], list[int], list[int]]] = field(default_factory=dict)
    """Per lane, sorted disjoint row ranges (starts, ends, colours) a line passes."""

    # ------------------------------------------------------------------ queries

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def shape(self) -> TreeShape | None:
        return self._shape

    @property
    def leaf_row(self) -> int:
        """The row of the current leaf (or of its nearest shown ancestor); -1: none."""
        for i in reversed(self._path):
            row = self._row_of.get(i)
            if row is not None:
                return row
        return -1

    def row_of(self, entry_id: str) -> int:
        """The row that shows ``entry_id``: its own, else its nearest shown ancestor's
        (-1: unknown, or no ancestor is shown)."""
        shape = self._shape
        if shape is None:
            return -1
        i = shape.by_id.get(entry_id)
        if i is None or i >= self._n:
            return -1
        row = self._row_of.get(i)
        if row is not None:
            return row
        vp = self._vparent[i]
        return self._row_of.get(vp, -1) if vp >= 0 else -1

    def on_current_path(self, entry_id: str) -> bool:
        shape = self._shape
        i = shape.by_id.get(entry_id) if shape is not None else None
        return i is not None and i in set(self._path)

    def label(self, row: int) -> str | None:
        shape = self._shape
        return shape.labels.get(self.rows[row].entry_id) if shape is not None else None

    def timestamp(self, row: int) -> str:
        shape = self._shape
        return shape.timestamps[self.rows[row].entry] if shape is not None else ""

    def children(self, row: int) -> list[int]:
        """Rows whose parent is ``row``, oldest first."""
        shape = self._shape
        if shape is None:
            return []
        kids = self._kids().get(self.rows[row].entry, [])
        return [self._row_of[k] for k in kids if k in self._row_of]

    def siblings(self, row: int) -> list[int]:
        """Rows that share ``row``'s parent (``row`` included), oldest first."""
        parent = self.rows[row].parent
        if parent >= 0:
            return self.children(parent)
        return [r for r, m in enumerate(self.rows) if m.parent < 0]

    def continuation(self, row: int) -> int:
        """The row below ``row`` in its lane (the line's next node), else -1."""
        lane = self.rows[row].lane
        for kid in self.children(row):
            if self.rows[kid].lane == lane:
                return kid
        return -1

    def through(self, row: int) -> list[tuple[int, int]]:
        """(lane, colour) of the lines that pass ``row`` (from a fork above it to a child
        below it), lane order; a few bisections per lane, for the rows being painted."""
        out: list[tuple[int, int]] = []
        for lane in sorted(self._spans):
            starts, ends, colors = self._spans[lane]
            k = bisect_right(starts, row) - 1
            if k >= 0 and ends[k] >= row:
                out.append((lane, colors[k]))
        return out

    def width(self, row: int) -> int:
        """Lanes the drawing of ``row`` spans (its text starts after them)."""
        return max([self.rows[row].lane, *(lane for lane, _ in self.through(row))]) + 1

    def max_lane(self) -> int:
        return max((r.lane for r in self.rows), default=0)

    def tips(self) -> list[BranchTip]:
        """Every branch of the session (its last entry), newest first (kept until the
        map changes).

        A branch ends at an entry without children (leaf and label entries aside); its
        row is the nearest shown one. Branches that end on one row (e.g. they differ only
        in hidden entries) are listed once, by their newest entry.
        """
        shape = self._shape
        if shape is None:
            return []
        if self._tips is not None and self._tips[0] == self._version:
            return list(self._tips[1])
        out = drain(_tips_steps(shape, self._n, self._path, self.rows, self._row_of,
                                 self._vparent))  # fmt: skip
        self._tips = (self._version, out)
        return list(out)

    # ------------------------------------------------------------------ updates

    def set_filter(self, name: MapFilter) -> None:
        if name not in MAP_FILTERS:
            raise ValueError(f"unknown map filter {name!r}")
        if name != self.filter:
            self.filter = name
            self._n = 0  # visibility changes: start again at the next sync

    def clear(self) -> None:
        self._shape = None
        self._n = 0
        self.rows = []
        self._vis, self._vparent, self._vkids, self._row_of, self._path = [], [], {}, {}, []
        self._spans = {}
        self.hits = frozenset()
        self._hit_entries = ()
        self.file_marks, self._file_entries = {}, {}

    def set_hits(self, entry_ids: Iterable[str]) -> tuple[int, ...]:
        """Mark the rows of search hits; returns the rows whose mark changed."""
        self._hit_entries = tuple(entry_ids)
        old = self.hits
        self.hits = frozenset(r for r in (self.row_of(e) for e in self._hit_entries) if r >= 0)
        return tuple(sorted(old ^ self.hits))

    def set_file_marks(self, marks: dict[str, FilesMark]) -> None:
        """Mark where turns changed files: ``marks`` by checkpoint entry id, each shown
        on the row that stands for it (counts and files of hidden turns add up)."""
        self._file_entries = dict(marks)
        out: dict[int, FilesMark] = {}
        for entry_id, mark in marks.items():
            row = self.row_of(entry_id)
            if row < 0:
                continue
            old = out.get(row)
            out[row] = (
                mark
                if old is None
                else FilesMark(
                    old.changed + mark.changed,
                    old.files + tuple(f for f in mark.files if f not in old.files),
                )
            )
        self.file_marks = out

    def sync(self, shape: TreeShape | None) -> MapUpdate:
        """Bring the layout in line with ``shape`` (the session now; None: no session)."""
        job = self._prepare(shape)
        if isinstance(job, MapUpdate):
            return job
        return self._finish(job, job.run())

    async def update(self, shape: TreeShape | None) -> MapUpdate:
        """`sync`, with a relayout run on the event loop in slices of at most `SLICE_S`
        (`_slices.sliced`: not a worker thread, which would hold the GIL against the GUI
        thread); the old rows stay valid until the new ones are swapped in."""
        async with self._lock:
            job = self._prepare(shape)
            if isinstance(job, MapUpdate):
                return job
            version = self._version
            done = await sliced(job.steps())
            if self._version != version:  # `sync` ran meanwhile: this result is stale
                return self.sync(self._shape or job.shape)
            return self._finish(job, done)

    def _prepare(self, shape: TreeShape | None) -> _Job | MapUpdate:
        """What the next sync needs: nothing, rows appended (done here), or a relayout."""
        old = self._shape
        if (
            shape is not None
            and old is not None
            and shape.ids is old.ids
            and shape.parents is old.parents
            and len(shape.ids) == self._n > 0
            and list(shape.path) == self._path
        ):
            return MapUpdate()  # nothing changed: the rows and the tips found stay valid
        self._version += 1
        if shape is None:
            had = bool(self.rows)
            self.clear()
            return MapUpdate(reset=had)
        path = list(shape.path)
        old_n, n = self._n, len(shape.ids)
        same_tree = old is not None and shape.ids is old.ids and shape.parents is old.parents
        full = not same_tree or old_n == 0 or n < old_n
        if not full and self.filter == "labeled" and _labels_in(shape, old_n, n):
            full = True  # a label shows or hides a row
        if full:
            return _Job(shape, n, path, self.filter, full=True)
        # The same tree, grown: new entries get their place (cheap, here).
        self._shape = shape
        self._add_entries(shape, old_n, n)
        self._n = n
        new_vis = [i for i in range(old_n, n) if self._vis[i]]
        old_path = self._path
        tip = self.leaf_row
        fresh = set(path[len(old_path) :])
        appended = (
            path[: len(old_path)] == old_path
            and all(i >= old_n for i in fresh)  # (not the leaf moved down a branch)
            and (not new_vis or self._only_blocks_below(tip))
            and all(i in fresh for i in new_vis)
        )
        if not appended:
            return _Job(shape, n, path, self.filter, full=False, vis=self._vis,
                        vparent=self._vparent, vkids=self._kids())  # fmt: skip
        self._path = path
        first = len(self.rows)
        for i in new_vis:
            self._row_of[i] = len(self.rows)
            kind = row_kind(shape.types[i], shape.roles[i]) or "other"
            self.rows.append(MapRow(i, shape.ids[i], kind, 0, 0))
        changed: list[int] = []
        if new_vis:
            changed = _connect(self.rows, self._row_of, self._vparent, first, self._spans)
            if changed and changed[-1] == -1:  # lines now pass earlier rows: all again
                changed = _reconnect(self.rows, self._row_of, self._vparent, self._spans)
        hits = self.set_hits(self._hit_entries) if new_vis else ()
        return MapUpdate(
            first_new=first if new_vis else -1,
            changed=tuple(sorted(set(changed) | set(hits))),
            labels=_labels_in(shape, old_n, n),
        )

    def _only_blocks_below(self, tip: int) -> bool:
        """Whether rows appended below the current path's last row ``tip`` go at the
        end, as in a layout from scratch: nothing is below it, or only the other
        branches that fork off it (the first prompt after going back to an earlier
        message; each row's parent is above it, so it is enough that none is above
        ``tip``)."""
        rows = self.rows
        if tip == len(rows) - 1:
            return True
        return tip >= 0 and all(rows[r].parent >= tip for r in range(tip + 1, len(rows)))

    def _finish(self, job: _Job, done: _Done) -> MapUpdate:
        self._shape, self._n, self._path = job.shape, job.n, job.path
        self._vis, self._vparent, self._vkids = done.vis, done.vparent, done.vkids
        self.rows, self._row_of, self._spans = done.rows, done.row_of, done.spans
        self._version += 1
        if done.tips is not None:
            self._tips = (self._version, done.tips)
        self.set_hits(self._hit_entries)
        self.set_file_marks(self._file_entries)
        return MapUpdate(reset=True)

    # ------------------------------------------------------- the saved layout

    def saved(self) -> bytes | None:
        """The layout as bytes, for `restore_saved` at the next launch (a 100,000-entry
        session takes 0.2-0.4 s to lay out, on every launch); None when there is none.
        A CRC-32 of the rest comes first: a damaged file is refused, not drawn."""
        shape = self._shape
        if shape is None or not self.rows or len(self._vis) != self._n:
            return None
        rows = self.rows
        spans = {
            str(lane): [array("i", starts).tobytes(), array("i", ends).tobytes(),
                        array("i", colors).tobytes()]
            for lane, (starts, ends, colors) in self._spans.items()
        }  # fmt: skip
        tips = self.tips()
        record = {
            "version": _SAVED_VERSION,
            "filter": self.filter,
            "key": _layout_key(shape, self._n, self._path, self.filter),
            "n": self._n,
            "path": array("i", self._path).tobytes(),
            "vis": bytes(self._vis),
            "vparent": array("i", self._vparent).tobytes(),
            "entry": array("i", (r.entry for r in rows)).tobytes(),
            "rows": msgspec.msgpack.encode(rows),
            "spans": spans,
            "tips": [[shape.by_id[t.leaf_id], t.row, t.current] for t in tips],
        }
        body = msgspec.msgpack.encode(record)
        return zlib.crc32(body).to_bytes(4, "little") + body

    async def restore_saved(self, shape: TreeShape, data: bytes) -> bool:
        """Take the layout `saved` wrote when it was made for the same entries (the
        first ones of ``shape``: entries appended since are laid out as `update`
        does), the same current path and filter. False (nothing changed) otherwise.
        The rows are made on the event loop in steps (`sliced`)."""
        try:
            if len(data) < 4 or int.from_bytes(data[:4], "little") != zlib.crc32(data[4:]):
                return False
            record = msgspec.msgpack.decode(data[4:])
            n, path = int(record["n"]), _ints(record["path"])
            ok = (
                record["version"] == _SAVED_VERSION
                and record["filter"] == self.filter
                and n <= len(shape.ids)
                and list(shape.path[: len(path)]) == path
                and record["key"] == _layout_key(shape, n, path, self.filter)
            )
        except (msgspec.DecodeError, KeyError, TypeError, ValueError):
            return False
        if not ok:
            return False
        async with self._lock:
            try:
                done = await sliced(_saved_steps(shape, record))
            except (KeyError, TypeError, ValueError, IndexError, msgspec.ValidationError):
                return False
            self._version += 1
            self._finish(_Job(shape, n, path, self.filter, full=True), done)
        return True

    # ------------------------------------------------------------------ layout

    def _add_entries(self, shape: TreeShape, start: int, end: int) -> None:
        _visibility(shape, self.filter, start, end, self._vis, self._vparent, self._kids())

    def _kids(self) -> dict[int, list[int]]:
        """`_vkids`, made from the visibility when first needed: a saved layout leaves
        them to be made (20-40 ms of a launch for 100,000 entries, for the first
        sibling step or append)."""
        if self._vkids is None:
            self._vkids = {}
            _add_kids(self._vis, self._vparent, 0, len(self._vis), self._vkids)
        return self._vkids


def _labels_in(shape: TreeShape, start: int, end: int) -> bool:
    types = shape.types
    return any(types[i] == "label" for i in range(start, end))


@dataclass
class _Done:
    vis: list[bool]
    vparent: list[int]
    vkids: dict[int, list[int]] | None
    rows: list[MapRow]
    row_of: dict[int, int]
    spans: dict[int, tuple[list[int], list[int], list[int]]]
    tips: list[BranchTip] | None = None


@dataclass
class _Job:
    """A relayout of the first ``n`` entries; `steps` touches nothing of the map, so it
    can run in slices while the old rows are shown (entries appended meanwhile come
    with the next sync)."""

    shape: TreeShape
    n: int
    path: list[int]
    filter: MapFilter
    full: bool
    vis: list[bool] = field(default_factory=list)
    vparent: list[int] = field(default_factory=list)
    vkids: dict[int, list[int]] = field(default_factory=dict)

    def run(self) -> _Done:
        return drain(self.steps())

    def steps(self) -> Generator[None, None, _Done]:
        """The relayout in steps of `STEP` entries or rows (its result at the end)."""
        vis, vparent, vkids = self.vis, self.vparent, self.vkids
        if self.full:
            vis, vparent, vkids = [], [], {}
            yield from _visibility_steps(self.shape, self.filter, 0, self.n, vis, vparent, vkids)
        rows, row_of = yield from _emit_steps(self.shape, self.path, vis, vkids)
        spans: dict[int, tuple[list[int], list[int], list[int]]] = {}
        yield from _connect_steps(rows, row_of, vparent, 0, spans)
        tips = yield from _tips_steps(self.shape, self.n, self.path, rows, row_of, vparent)
        return _Done(vis, vparent, vkids, rows, row_of, spans, tips)


STEP = 512
"""Entries or rows a layout step handles between pauses (`BranchMap.update` runs the steps
on the event loop a few milliseconds at a time)."""


def _tips_steps(
    shape: TreeShape,
    n: int,
    path: list[int],
    rows: list[MapRow],
    row_of: dict[int, int],
    vparent: list[int],
) -> Generator[None, None, list[BranchTip]]:
    """`BranchMap.tips` of a layout, pausing every `STEP` entries."""
    types, parents, stamps = shape.types, shape.parents, shape.timestamps
    has_child = bytearray(n)
    for i in range(n):
        if i % STEP == 0:
            yield
        p = parents[i]
        if 0 <= p < n and p != i and types[i] not in _NEVER:
            has_child[p] = 1
    leaf_i = path[-1] if path else -1
    best: dict[int, int] = {}
    for i in range(n):
        if i % STEP == 0:
            yield
        if has_child[i] or types[i] in _NEVER:
            continue
        row = row_of.get(i)
        if row is None:
            vp = vparent[i]
            row = row_of.get(vp) if vp >= 0 else None
        if row is None:
            continue
        old = best.get(row)
        if old is None or i == leaf_i or (old != leaf_i and stamps[i] >= stamps[old]):
            best[row] = i
    chosen = sorted(best.items(), key=lambda kv: (stamps[kv[1]], kv[1] == leaf_i, kv[1]))
    return [_tip(shape, rows, row, i, i == leaf_i) for row, i in reversed(chosen)]


def _tip(shape: TreeShape, rows: list[MapRow], row: int, i: int, current: bool) -> BranchTip:
    """The branch ending at entry ``i``, shown by ``row``."""
    entry_id = rows[row].entry_id
    return BranchTip(
        leaf_id=shape.ids[i],
        entry_id=entry_id,
        row=row,
        timestamp=shape.timestamps[i],
        label=shape.labels.get(entry_id),
        current=current,
    )


def _visibility(
    shape: TreeShape,
    name: MapFilter,
    start: int,
    end: int,
    vis: list[bool],
    vparent: list[int],
    vkids: dict[int, list[int]],
) -> None:
    """Whether entries ``start..end`` are rows, and their nearest shown ancestors."""
    drain(_visibility_steps(shape, name, start, end, vis, vparent, vkids))


def _visibility_steps(
    shape: TreeShape,
    name: MapFilter,
    start: int,
    end: int,
    vis: list[bool],
    vparent: list[int],
    vkids: dict[int, list[int]],
) -> Generator[None, None, None]:
    """`_visibility`, pausing every `STEP` entries."""
    parents, types, roles, ids = shape.parents, shape.types, shape.roles, shape.ids
    shown_kinds = _SHOWN[name]
    labeled = name == "labeled"
    labels = shape.labels
    known: dict[tuple[str, str | None], bool] = {}
    add_vis, add_vparent = vis.append, vparent.append
    odd = False
    # (The loops are written for speed: 100,000 entries of a day's session pass here
    # at every launch, 2-3x quicker than one step per entry with its pause check.)
    for low in range(start, end, STEP):
        yield
        for i in range(low, min(low + STEP, end)):
            key = (types[i], roles[i])
            shown = known.get(key)
            if shown is None:
                kind = row_kind(*key)
                shown = known[key] = kind is not None and (labeled or kind in shown_kinds)
            if shown and labeled:
                shown = ids[i] in labels
            add_vis(shown)
            p = parents[i]
            if p < 0 or p == i:
                add_vparent(-1)
            elif p < i:
                add_vparent(p if vis[p] else vparent[p])
            else:
                add_vparent(-2)  # a parent later in the file: resolved below
                odd = True
    # Odd files (a parent after its child, cycles): walk up, bounded.
    for i in range(start, end) if odd else ():
        if vparent[i] == -2:
            seen = {i}
            p = parents[i]
            vparent[i] = -1
            while 0 <= p < end and p not in seen:
                if vis[p]:
                    vparent[i] = p
                    break
                seen.add(p)
                p = parents[p]
    yield
    _add_kids(vis, vparent, start, end, vkids)


def _add_kids(
    vis: list[bool], vparent: list[int], start: int, end: int, vkids: dict[int, list[int]]
) -> None:
    """File the shown entries ``start..end`` under their nearest shown ancestors."""
    for i in compress(range(start, end), vis[start:end]):
        vp = vparent[i]
        kids = vkids.get(vp)
        if kids is None:
            vkids[vp] = [i]
        else:
            kids.append(i)


def _emit(
    shape: TreeShape, path: list[int], vis: list[bool], vkids: dict[int, list[int]]
) -> tuple[list[MapRow], dict[int, int]]:
    """Rows in map order with their lanes (one pass; see the module docstring)."""
    return drain(_emit_steps(shape, path, vis, vkids))


def _emit_steps(
    shape: TreeShape, path: list[int], vis: list[bool], vkids: dict[int, list[int]]
) -> Generator[None, None, tuple[list[MapRow], dict[int, int]]]:
    """`_emit`, pausing every `STEP` rows."""
    ids, types, roles = shape.ids, shape.types, shape.roles
    on_path = [i for i in path if i < len(vis) and vis[i]]
    next_on_path = dict(pairwise(on_path))
    rows: list[MapRow] = []
    row_of: dict[int, int] = {}
    kinds: dict[tuple[str, str | None], RowKind] = {}
    add_row, kids_of = rows.append, vkids.get
    # A stack of lines to draw: (first entry, lane, colour, follows the path).
    stack: list[tuple[int, int, int, bool]] = []
    roots = vkids.get(-1, [])
    first = on_path[0] if on_path else (roots[-1] if roots else -1)
    if first >= 0:
        stack.append((first, 0, 0, bool(on_path)))
    for other in reversed(roots):
        if other != first:
            stack.append((other, 1, block_color(ids[other]), False))
    pause = STEP
    while stack:
        i, lane, color, path_line = stack.pop()
        while True:
            if i in row_of:  # a cycle in an odd file
                break
            r = len(rows)
            if r >= pause:
                pause += STEP
                yield
            row_of[i] = r
            key = (types[i], roles[i])
            kind = kinds.get(key)
            if kind is None:
                kind = kinds[key] = row_kind(*key) or "other"
            add_row(MapRow(i, ids[i], kind, lane, color))
            kids = kids_of(i)
            if not kids:
                break
            if len(kids) == 1:  # most rows: the line goes straight on
                only = kids[0]
                if not path_line or next_on_path.get(i, -1) == only:
                    i = only
                    continue
            nxt = next_on_path.get(i, -1) if path_line else kids[-1]
            others = [k for k in kids if k != nxt]
            if not others:
                i = nxt
                continue
            if nxt >= 0:
                stack.append((nxt, lane, color, path_line))
            base = block_color(ids[i])
            for k in reversed(others):
                stack.append((k, lane + 1, sibling_color(base, kids.index(k)), False))
            break
    return rows, row_of


def _connect(
    rows: list[MapRow],
    row_of: dict[int, int],
    vparent: list[int],
    start: int,
    spans: dict[int, tuple[list[int], list[int], list[int]]],
) -> list[int]:
    """Parents, up/down/curves of rows ``start..`` and the spans of the lines between
    them; returns earlier rows whose drawing changed (ending in -1 when rows appended
    below need lines through earlier rows: the caller connects everything again)."""
    return drain(_connect_steps(rows, row_of, vparent, start, spans))


def _connect_steps(
    rows: list[MapRow],
    row_of: dict[int, int],
    vparent: list[int],
    start: int,
    spans: dict[int, tuple[list[int], list[int], list[int]]],
) -> Generator[None, None, list[int]]:
    """`_connect`, pausing every `STEP` rows."""
    last_child: dict[int, int] = {}
    changed: list[int] = []
    for r in range(start, len(rows)):
        if r % STEP == 0:
            yield
        row = rows[r]
        vp = vparent[row.entry]
        pr = row_of.get(vp, -1) if vp >= 0 else -1
        row.parent = pr
        if pr < 0:
            continue
        parent = rows[pr]
        if not parent.down:
            parent.down = True
            parent.tip = False
            if pr < start:
                changed.append(pr)
        if parent.lane == row.lane:
            row.up = True
        else:
            row.from_lane = parent.lane
        last_child[pr] = r
    new = sorted((pr + 1, r - 1, pr) for pr, r in last_child.items() if r > pr + 1)
    if start > 0 and new:
        # Lines from earlier rows down to appended ones pass the rows between: kept
        # here when each goes below every line of its lane (the current path's line
        # past the other branches below its old end), else all are connected again.
        for first, _last, pr in new:
            ends = spans.get(rows[pr].lane, ([], [], []))[1]
            if ends and ends[-1] >= first:
                return [*changed, -1]
        changed += [k for first, last, _pr in new for k in range(first, last + 1)]
    for first, last, pr in new:
        parent = rows[pr]
        starts, ends, colors = spans.setdefault(parent.lane, ([], [], []))
        starts.append(first)
        ends.append(last)
        colors.append(parent.color)
    return changed


def _reconnect(
    rows: list[MapRow],
    row_of: dict[int, int],
    vparent: list[int],
    spans: dict[int, tuple[list[int], list[int], list[int]]],
) -> list[int]:
    for row in rows:
        row.up, row.down, row.from_lane, row.tip = False, False, -1, True
    spans.clear()
    _connect(rows, row_of, vparent, 0, spans)
    return list(range(len(rows)))


# ------------------------------------------------------------- the saved layout

_SAVED_VERSION = 3
_SAVED_ROWS = msgspec.msgpack.Decoder(list[MapRow])


def _ints(data: bytes) -> list[int]:
    return array("i", data).tolist()


def _layout_key(shape: TreeShape, n: int, path: Sequence[int], name: MapFilter) -> int:
    """A checksum of what a layout of the first ``n`` entries depends on: their ids,
    parents, types, roles and times (`TreeShape.columns_crc`, kept in the entry index
    when it covers them), the current path, and the labels when only labelled entries
    are shown."""
    crc = zlib.crc32(shape.columns_crc(n).to_bytes(4, "little"))
    crc = zlib.crc32(array("i", path).tobytes(), crc)
    if name == "labeled":
        crc = zlib.crc32(json.dumps(sorted(shape.labels.items())).encode(), crc)
    return crc


def _saved_steps(shape: TreeShape, record: dict[str, Any]) -> Generator[None, None, _Done]:
    """The `_Done` of a saved layout, made in a few steps."""
    vis = list(map(bool, record["vis"]))
    vparent = _ints(record["vparent"])
    if len(vis) != record["n"] or len(vparent) != record["n"]:
        raise ValueError("a saved layout of the wrong length")
    yield
    rows = _SAVED_ROWS.decode(record["rows"])
    entries = _ints(record["entry"])
    if len(entries) != len(rows):
        raise ValueError("a saved layout of the wrong length")
    yield
    row_of = dict(zip(entries, range(len(rows)), strict=True))
    spans = {
        int(lane): (_ints(starts), _ints(ends), _ints(colors))
        for lane, (starts, ends, colors) in record["spans"].items()
    }
    tips = [_tip(shape, rows, row, i, bool(current)) for i, row, current in record["tips"]]
    return _Done(vis, vparent, None, rows, row_of, spans, tips)
