"""The branch map, without Qt: a session tree laid out like ``git log --graph``.

BRANCH_MAP.md §3-§4. `BranchMap` keeps the layout of one session (`_map_layout.py` makes
it: one row per shown entry, in the order the chat reads, lanes and colours a function of
the tree only, so switching branches moves nothing);
`_map_saved.py` keeps it between launches, `_search.py` searches the entries.

The layout reads only the tree's columns (`Session.shape`: ids, parents, types, roles,
timestamps, labels): no message is decoded. What entries are rows depends on a filter
(`MAP_FILTERS`): by default user and assistant messages, compactions and summaries;
tool results, settings, model and thinking changes are hidden, and a hidden entry's
children hang on its nearest shown ancestor. Previews (one line) and tooltips (the whole
message) are read for the rows that are painted, on demand (`Workbench.map_previews`).

`BranchMap.sync` brings the layout up to date with the session: entries appended below
the last row add rows at the end (O(new entries)); a moved leaf only repaints; a filter
change or an entry elsewhere lays the map out again (O(entries), 60-80 ms for 10,000:
`BranchMap.update` runs it on the event loop a few milliseconds at a time).
"""

from __future__ import annotations

import asyncio
import operator
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import compress
from typing import NamedTuple

import msgspec

from desktop_agent.session import TreeShape
from desktop_agent.workbench._map_layout import (
    MAP_FILTERS,
    BranchTip,
    Layout,
    LayoutJob,
    MapFilter,
    MapRow,
    add_kids,
    branch_tips,
    connect,
    is_retry,
    reconnect,
    row_kind,
    visibility,
)
from desktop_agent.workbench._map_saved import decode_layout, encode_layout, layout_steps
from desktop_agent.workbench._slices import sliced


class FilesMark(NamedTuple):
    """The files a turn changed: how many, and (some of) their paths."""

    changed: int
    files: tuple[str, ...]


@dataclass(frozen=True)
class MapUpdate:
    """What `BranchMap.sync` changed: ``reset`` (lay out every row again), or rows
    ``first..`` appended at the end, and earlier rows whose drawing changed."""

    reset: bool = False
    first_new: int = -1
    changed: tuple[int, ...] = ()
    labels: bool = False
    """Labels changed (their rows are repainted)."""
    path: bool = False
    """The current path moved (no row moved: the rows are repainted, the tips renewed)."""

    @property
    def empty(self) -> bool:
        return not (self.reset or self.first_new >= 0 or self.changed or self.labels or self.path)


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
    _on_path: frozenset[int] = frozenset()  # the same, as a set
    _retries: dict[int, list[int]] | None = None
    """Retries of failed replies by the entry of their row (None: not made yet)."""
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
        return i is not None and i in self._on_path

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

    def attempts(self, row: int) -> list[str]:
        """The entries ``row`` stands for when it is a run of attempts at one reply: its
        own, then each retry after a failure, oldest first (L6); [] for other rows."""
        shape = self._shape
        if shape is None or not 0 <= row < len(self.rows):
            return []
        if self._retries is None:
            self._retries = {}
            self._add_retries(shape, 0, self._n)
        entry = self.rows[row].entry
        more = self._retries.get(entry)
        return [shape.ids[entry], *(shape.ids[i] for i in more)] if more else []

    def _add_retries(self, shape: TreeShape, start: int, end: int) -> set[int]:
        """File the retries among entries ``start..end`` under their rows' entries;
        returns those entries (their rows now stand for one more attempt)."""
        heads: set[int] = set()
        if self.filter in ("labeled", "user"):
            return heads
        retries, vis, vparent, roles = self._retries, self._vis, self._vparent, shape.roles
        # Only hidden entries (picked at C speed by compress) that are replies can be
        # retries: ~5 ms instead of ~11 for the first map paint of a 100,000-entry session.
        for i in compress(range(start, end), map(operator.not_, vis[start:end])):
            if roles[i] == "assistant" and vparent[i] >= 0 and is_retry(shape, i):
                heads.add(vparent[i])
                if retries is not None:
                    retries.setdefault(vparent[i], []).append(i)
        return heads

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
        out = branch_tips(shape, self._n, self._path, self.rows, self._row_of, self._vparent)
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
        self._vis, self._vparent, self._vkids, self._row_of = [], [], {}, {}
        self._set_path([])
        self._retries = None
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

    def _prepare(self, shape: TreeShape | None) -> LayoutJob | MapUpdate:
        """What the next sync needs: nothing, a moved leaf or rows appended (done here),
        or a relayout."""
        old = self._shape
        same_tree = (
            shape is not None
            and old is not None
            and shape.ids is old.ids
            and shape.parents is old.parents
        )
        if shape is not None and same_tree and len(shape.ids) == self._n > 0:
            path = list(shape.path)
            if path == self._path:
                return MapUpdate()  # nothing changed: the rows and the tips found stay valid
            # Another branch: the layout is the tree's, so no row moves (m12); the rows
            # of both paths are drawn again and the tips say which one is current.
            self._version += 1
            self._set_path(path)
            return MapUpdate(path=True)
        self._version += 1
        if shape is None:
            had = bool(self.rows)
            self.clear()
            return MapUpdate(reset=had)
        path = list(shape.path)
        old_n, n = self._n, len(shape.ids)
        full = not same_tree or old_n == 0 or n < old_n
        if not full and self.filter == "labeled" and _labels_in(shape, old_n, n):
            full = True  # a label shows or hides a row
        if full:
            return LayoutJob(shape, n, path, self.filter, full=True)
        # The same tree, grown: new entries get their place (cheap, here).
        self._shape = shape
        self._add_entries(shape, old_n, n)
        retried = self._add_retries(shape, old_n, n)
        self._n = n
        new_vis = [i for i in range(old_n, n) if self._vis[i]]
        if not self._appended_below(new_vis):
            return LayoutJob(shape, n, path, self.filter, full=False, vis=self._vis,
                        vparent=self._vparent, vkids=self._kids())  # fmt: skip
        moved = path[: len(self._path)] != self._path  # (not only longer)
        self._set_path(path)
        first = len(self.rows)
        lane, color = (self.rows[-1].lane, self.rows[-1].color) if self.rows else (0, 0)
        for i in new_vis:
            self._row_of[i] = len(self.rows)
            kind = row_kind(shape.types[i], shape.roles[i]) or "other"
            self.rows.append(MapRow(i, shape.ids[i], kind, lane, color))
        changed: list[int] = []
        if new_vis:
            changed = connect(self.rows, self._row_of, self._vparent, first, self._spans)
            if changed and changed[-1] == -1:  # lines now pass earlier rows: all again
                changed = reconnect(self.rows, self._row_of, self._vparent, self._spans)
        hits = self.set_hits(self._hit_entries) if new_vis else ()
        runs = {self._row_of[i] for i in retried if i in self._row_of}  # "N attempts" grew
        return MapUpdate(
            first_new=first if new_vis else -1,
            changed=tuple(sorted(set(changed) | set(hits) | runs)),
            labels=_labels_in(shape, old_n, n),
            path=moved,
        )

    def _appended_below(self, new_vis: list[int]) -> bool:
        """Whether the new shown entries ``new_vis`` go at the end, in the last row's
        lane, as in a layout from scratch: they are a chain hanging from the last row
        (each the newest, here the only, child of the one before it), or the first rows
        of an empty map."""
        if not new_vis:
            return True
        vparent, kids = self._vparent, self._kids()
        above = self.rows[-1].entry if self.rows else -1
        if above < 0 and len(kids.get(-1, ())) != 1:
            return False  # another root beside the new one
        for i in new_vis:
            if vparent[i] != above or len(kids.get(above, ())) != 1:
                return False
            above = i
        return True

    def _set_path(self, path: list[int]) -> None:
        self._path = path
        self._on_path = frozenset(path)

    def on_path(self, row: int) -> bool:
        """Whether ``row`` shows an entry of the current path."""
        return self.rows[row].entry in self._on_path

    def _finish(self, job: LayoutJob, done: Layout) -> MapUpdate:
        self._shape, self._n = job.shape, job.n
        self._set_path(job.path)
        self._vis, self._vparent, self._vkids = done.vis, done.vparent, done.vkids
        self.rows, self._row_of, self._spans = done.rows, done.row_of, done.spans
        self._retries = None
        self._version += 1
        if done.tips is not None:
            self._tips = (self._version, done.tips)
        self.set_hits(self._hit_entries)
        self.set_file_marks(self._file_entries)
        return MapUpdate(reset=True)

    # ------------------------------------------------------- the saved layout

    def saved(self) -> bytes | None:
        """The layout as bytes, for `restore_saved` at the next launch (a 100,000-entry
        session takes 0.2-0.4 s to lay out, on every launch); None when there is none
        (`_map_saved.encode_layout`)."""
        shape = self._shape
        if shape is None or not self.rows or len(self._vis) != self._n:
            return None
        layout = Layout(self._vis, self._vparent, None, self.rows, self._row_of, self._spans)
        return encode_layout(shape, self.filter, self._path, layout, self.tips())

    async def restore_saved(self, shape: TreeShape, data: bytes) -> bool:
        """Take the layout `saved` wrote when it was made for the same entries (the
        first ones of ``shape``: entries appended since are laid out as `update`
        does), the same current path and filter. False (nothing changed) otherwise.
        The rows are made on the event loop in steps (`sliced`)."""
        saved = decode_layout(shape, self.filter, data)
        if saved is None:
            return False
        async with self._lock:
            try:
                done = await sliced(layout_steps(shape, saved))
            except (KeyError, TypeError, ValueError, IndexError, msgspec.ValidationError):
                return False
            self._version += 1
            self._finish(LayoutJob(shape, saved.n, saved.path, self.filter, full=True), done)
        return True

    # ------------------------------------------------------------------ layout

    def _add_entries(self, shape: TreeShape, start: int, end: int) -> None:
        visibility(shape, self.filter, start, end, self._vis, self._vparent, self._kids())

    def _kids(self) -> dict[int, list[int]]:
        """`_vkids`, made from the visibility when first needed: a saved layout leaves
        them to be made (20-40 ms of a launch for 100,000 entries, for the first
        sibling step or append)."""
        if self._vkids is None:
            self._vkids = {}
            add_kids(self._vis, self._vparent, 0, len(self._vis), self._vkids)
        return self._vkids


def _labels_in(shape: TreeShape, start: int, end: int) -> bool:
    types = shape.types
    return any(types[i] == "label" for i in range(start, end))
