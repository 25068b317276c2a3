"""The branch map's layout, without Qt: which entries are rows, and where each row's node
and lines go, like ``git log --graph`` (BRANCH_MAP.md §3-§4; `BranchMap` keeps the result).

One row per shown entry, in the order the chat reads. The layout is a function of the
tree only, never of the current path (FIRST_HOUR.md m12: switching branches moves no row
and changes no colour, so a clicked node stays under the pointer): from the newest root
the line runs down lane 0 following each entry's newest child; at each fork the older
children follow the fork row as blocks (oldest first), one lane to the right, before the
line goes on. Inside a block the line likewise follows the newest child and its other
children nest one lane further right. Blocks nest, so lines never cross; a block's colour
comes from its fork's id and its place among the fork's children, so sibling blocks differ
and keep their colours across redraws. (BRANCH_MAP.md §3.1 asked for the current path in
lane 0; it is shown by its text and the leaf's ring instead.)

Each pass is written as a generator that pauses every `STEP` entries or rows
(`LayoutJob.steps`), so that `BranchMap.update` runs a relayout on the event loop a few
milliseconds at a time; the plain functions (`visibility`, `connect`, ...) drain them.
"""

from __future__ import annotations

import zlib
from collections.abc import Generator
from dataclasses import dataclass, field
from itertools import compress
from typing import Literal

import msgspec

from desktop_agent.session import TreeShape
from desktop_agent.workbench._slices import drain

MapFilter = Literal["conversation", "user", "labeled", "all"]
MAP_FILTERS: tuple[MapFilter, ...] = ("conversation", "user", "labeled", "all")
"""conversation: user and assistant messages, compactions, summaries (the default);
user: your prompts only; labeled: labelled entries only; all: every entry (settings,
model and thinking changes, tool results, extension data)."""

LANE_COLORS = 8
"""Blocks use colours 1..LANE_COLORS-1 (0 is the main line: lane 0, the newest child
of every entry from the newest root down)."""

RowKind = Literal["user", "assistant", "compaction", "summary", "tool", "setting", "other"]

_NEVER = frozenset({"leaf", "label"})
"""Bookkeeping entries that are never rows (labels show on the entry they name)."""

_SETTINGS = frozenset(
    {"model_change", "thinking_level_change", "session_info", "active_tools_change", "custom"}
)


_ASSISTANT = ("message", "assistant")


def is_retry(shape: TreeShape, i: int) -> bool:
    """Whether entry ``i`` is a reply that follows a reply: only a failed request is
    retried so (a reply that calls tools is followed by their results, one that answers
    by the next prompt). A run of failed attempts, and the reply that ends it, are one
    row on the map: the first attempt's (FIRST_HOUR.md L6)."""
    types, roles = shape.types, shape.roles
    p = shape.parents[i]
    return (
        0 <= p < i
        and types[i] == "message"
        and roles[i] == "assistant"
        and types[p] == "message"
        and roles[p] == "assistant"
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


class MapRow(msgspec.Struct, array_like=True, gc=False):
    """One row of the map: where its node sits and which lines pass it.

    ``up``: the line of its lane comes down into the node; ``from_lane``: a block head,
    joined by a curve from its fork's lane (-1: none); ``down``: a line leaves the node
    downwards in its lane. The lines that pass a row are `BranchMap.through`.

    A msgspec ``Struct``: a saved layout's 50,000 rows are decoded into rows at C speed
    (made one by one in Python they were a third of taking the layout at a launch).
    ``gc=False``: a row holds only numbers and strings, so it can be in no reference
    cycle; untracked by the cyclic GC, 50,000 rows decode ~25% quicker (~21 -> ~16 ms
    for a 100,000-entry session) and are never scanned by a collection.
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
    def main(self) -> bool:
        """On the main line (lane 0, from the newest root down its newest children)."""
        return self.lane == 0 and self.color == 0


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


def block_color(entry_id: str) -> int:
    """A colour keyed by ``entry_id`` (1..LANE_COLORS-1), stable across redraws."""
    return 1 + zlib.crc32(entry_id.encode()) % (LANE_COLORS - 1)


def sibling_color(base: int, index: int) -> int:
    """The colour of the block of a fork's ``index``-th child: the fork's colour stepped
    by the child's place (so sibling blocks differ; the place counts every child, the one
    the line goes on with included)."""
    return 1 + (base - 1 + index) % (LANE_COLORS - 1)


@dataclass
class Layout:
    """A layout's result: what `BranchMap` keeps of it."""

    vis: list[bool]
    vparent: list[int]
    vkids: dict[int, list[int]] | None
    rows: list[MapRow]
    row_of: dict[int, int]
    spans: dict[int, tuple[list[int], list[int], list[int]]]
    tips: list[BranchTip] | None = None


@dataclass
class LayoutJob:
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

    def run(self) -> Layout:
        return drain(self.steps())

    def steps(self) -> Generator[None, None, Layout]:
        """The relayout in steps of `STEP` entries or rows (its result at the end)."""
        vis, vparent, vkids = self.vis, self.vparent, self.vkids
        if self.full:
            vis, vparent, vkids = [], [], {}
            yield from _visibility_steps(self.shape, self.filter, 0, self.n, vis, vparent, vkids)
        rows, row_of = yield from _emit_steps(self.shape, vis, vkids)
        spans: dict[int, tuple[list[int], list[int], list[int]]] = {}
        yield from _connect_steps(rows, row_of, vparent, 0, spans)
        tips = yield from tips_steps(self.shape, self.n, self.path, rows, row_of, vparent)
        return Layout(vis, vparent, vkids, rows, row_of, spans, tips)


STEP = 512
"""Entries or rows a layout step handles between pauses (`BranchMap.update` runs the steps
on the event loop a few milliseconds at a time)."""


def branch_tips(
    shape: TreeShape,
    n: int,
    path: list[int],
    rows: list[MapRow],
    row_of: dict[int, int],
    vparent: list[int],
) -> list[BranchTip]:
    """Every branch of a layout (see `BranchMap.tips`)."""
    return drain(tips_steps(shape, n, path, rows, row_of, vparent))


def tips_steps(
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
    return [branch_tip(shape, rows, row, i, i == leaf_i) for row, i in reversed(chosen)]


def branch_tip(shape: TreeShape, rows: list[MapRow], row: int, i: int, current: bool) -> BranchTip:
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


def visibility(
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
    """`visibility`, pausing every `STEP` entries."""
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
            p = parents[i]
            if shown and labeled:
                shown = ids[i] in labels
            elif shown and key == _ASSISTANT and 0 <= p < i and (types[p], roles[p]) == _ASSISTANT:
                shown = False  # a retry of a failed reply: one row with it (L6, `is_retry`)
            add_vis(shown)
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
    add_kids(vis, vparent, start, end, vkids)


def add_kids(
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
    shape: TreeShape, vis: list[bool], vkids: dict[int, list[int]]
) -> tuple[list[MapRow], dict[int, int]]:
    """Rows in map order with their lanes (one pass; see the module docstring)."""
    return drain(_emit_steps(shape, vis, vkids))


def _emit_steps(
    shape: TreeShape, vis: list[bool], vkids: dict[int, list[int]]
) -> Generator[None, None, tuple[list[MapRow], dict[int, int]]]:
    """`_emit`, pausing every `STEP` rows. A function of the tree only (not of the
    current path): switching branches moves no row and changes no colour (FIRST_HOUR.md
    m12)."""
    ids, types, roles = shape.ids, shape.types, shape.roles
    rows: list[MapRow] = []
    row_of: dict[int, int] = {}
    kinds: dict[tuple[str, str | None], RowKind] = {}
    add_row, kids_of = rows.append, vkids.get
    # A stack of lines to draw: (first entry, lane, colour).
    stack: list[tuple[int, int, int]] = []
    roots = vkids.get(-1, [])
    if roots:
        stack.append((roots[-1], 0, 0))
    for other in reversed(roots[:-1]):
        stack.append((other, 1, block_color(ids[other])))
    pause = STEP
    while stack:
        i, lane, color = stack.pop()
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
            nxt = kids[-1]  # the line goes on with the newest child
            if len(kids) == 1:  # most rows
                i = nxt
                continue
            stack.append((nxt, lane, color))
            base = block_color(ids[i])
            for index in range(len(kids) - 2, -1, -1):
                stack.append((kids[index], lane + 1, sibling_color(base, index)))
            break
    return rows, row_of


def connect(
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
    """`connect`, pausing every `STEP` rows."""
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


def reconnect(
    rows: list[MapRow],
    row_of: dict[int, int],
    vparent: list[int],
    spans: dict[int, tuple[list[int], list[int], list[int]]],
) -> list[int]:
    for row in rows:
        row.up, row.down, row.from_lane, row.tip = False, False, -1, True
    spans.clear()
    connect(rows, row_of, vparent, 0, spans)
    return list(range(len(rows)))
