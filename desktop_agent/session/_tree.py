"""The in-memory tree every storage shares: a compact record per entry, lines on demand.

Per entry the tree keeps, in columns, only what the tree's shape, the context builder
and cheap views need: id, parent id, type, timestamp, message role, the byte offset and
length of its line in the file, and for the few bookkeeping types (label, leaf, name,
model, thinking level, active tools) their one value. The JSON line itself stays in the
file and is read back by offset when an entry is needed (`Tree.line`: ``pread`` on the
storage's read descriptor, checked against the entry's id, with a small cache). So an
open 100 MB session holds a few MB plus what is shown, and a persisted entry index
(`_entryindex`) rebuilds the tree without reading the file. Lines that are in no file
yet, or whose write is not durable yet, and every line of the memory and SQLite
storages, are kept in memory.

`Row` is a light view of one entry (``tree.rows[i]``, ``tree.get(id)``); rows are
immutable, so an index names an entry for the life of the tree.
"""

from __future__ import annotations

import operator
import sys
import threading
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, Protocol

from desktop_agent.session._codec import BOOKKEEPING, Entry, decode_entry, line_id, parse_line
from desktop_agent.session._columns import (
    Column,
    PackedStrings,
    Stamps,
    intern_text,
    timestamps_crc,
)
from desktop_agent.session._errors import SessionError

CACHE_LINES = 512
CACHE_BYTES = 8 << 20
"""The cache of lines read back from the file: at most this many lines / bytes."""

SPAN_BYTES = 16 << 20
"""Reading many lines in file order reads runs of up to this many bytes at once."""


class LineSource(Protocol):
    """Where a tree reads entry lines back from (the storage's read descriptor)."""

    def read_span(self, offset: int, length: int) -> bytes:
        """Exactly ``length`` bytes at ``offset`` (fewer only if the file shrank)."""
        ...

    def changed_error(self, detail: str) -> SessionError:
        """The error to raise when the file no longer holds what was indexed."""
        ...


class Row:
    """A view of one entry of a `Tree` (cheap to make; the tree holds the data)."""

    __slots__ = ("_tree", "index")

    def __init__(self, tree: Tree, index: int) -> None:
        self._tree = tree
        self.index = index

    @property
    def id(self) -> str:
        return self._tree.ids[self.index]

    @property
    def parent_id(self) -> str | None:
        return self._tree.parent_at(self.index)

    @property
    def type(self) -> str:
        return self._tree.types[self.index]

    @property
    def timestamp(self) -> str:
        return self._tree.timestamp_at(self.index)

    @property
    def role(self) -> str | None:
        return self._tree.roles[self.index]

    @property
    def extra(self) -> Any:
        return self._tree.extra.get(self.index)

    @property
    def raw(self) -> bytes:
        """The entry's exact JSON line (read back from the file when not in memory)."""
        return self._tree.line(self.index)

    def obj(self) -> dict[str, Any]:
        """The entry as a JSON object (parsed from the line each time)."""
        return decode_entry(self.raw)

    def entry(self) -> Entry:
        return self._tree.entry(self.index)

    def __repr__(self) -> str:
        return f"Row({self.index}, {self.type} {self.id})"


class _Rows(Column[Row]):
    """``tree.rows``: every entry in file order, as `Row` views."""

    __slots__ = ()

    def _at(self, i: int) -> Row:
        return Row(self._tree, i)


class Tree:
    """Entries in file order with lookups, labels, leaf recovery and path walks."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self._parents: list[str | None] | None = []
        self.types: list[str] = []
        self._timestamps: list[str] | None = []
        self._packed: dict[str, PackedStrings] = {}
        """Columns restored from the entry index and not unpacked yet."""
        self._columns_crc: tuple[int, int] | None = None
        """(n, `columns_crc(n)`) as last computed or kept in the entry index."""
        self._tails: dict[str, list[Any]] = {}
        """What was appended to a packed column since it was restored (a grown file's
        new lines, the entries of this run): appends never unpack a column (1,000,000
        timestamps and parent ids took 0.75 s and 350 MB to unpack)."""
        self.roles: list[str | None] = []
        self.offsets = array("q")
        """Byte offset of each entry's line in the file; -1 when it is in no file."""
        self.lengths = array("q")
        """Length of each line without its line end."""
        self.extra: dict[int, Any] = {}
        """The one value of each bookkeeping entry (`BOOKKEEPING`): label ->
        (targetId, label); leaf -> targetId; session_info -> name; model_change ->
        (provider, modelId); thinking_level_change -> level; active_tools_change ->
        tuple of names or None."""
        self.by_id: dict[str, int] = {}
        """Row index of each id (a later duplicate wins, as in Pi)."""
        self.labels: dict[str, str] = {}
        self.leaf_id: str | None = None
        self.name: str | None = None
        self.damaged = False
        """Lines of the file could not be read: a missing parent is explained by the
        damage, so path walks end there instead of failing (the readable path)."""
        self.parsed: dict[int, Any] = {}
        """Context messages already parsed, by row index; rows are immutable."""
        self.previews: dict[int, str] = {}
        """Short previews already made (`_facts.preview_of`), by row index."""
        self.source: LineSource | None = None
        self.rows = _Rows(self)
        self._pinned: dict[int, bytes] = {}
        self._cache: OrderedDict[int, bytes] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._cache_bytes = 0
        self._children: dict[str | None, list[int]] | None = None
        self._pidx_bytes: bytes | None = None  # `children_of`'s copy of the parent index
        self._backward = False  # some entry names a parent further down the file
        self._pidx: array[int] | None = array("i")
        """Row index of each entry's parent: -1 root, -2 missing (None: to rebuild)."""
        self._paths: dict[int, list[int]] = {}
        self._orphans = False  # some parent id named no entry when _pidx was built
        self._lost: tuple[array[int], int, list[int]] | None = None
        """`orphan_roots` so far: (the `_pidx` it read, rows read, the roots found)."""
        self.lines_read = 0
        """Lines read back from the source (for tests and benchmarks)."""

    # ------------------------------------------------------------------ columns

    @property
    def parents(self) -> list[str | None]:
        """Every entry's parent id as one list (a packed column is unpacked for it:
        `parent_at` reads one without that)."""
        if self._parents is None:
            self._parents = self._packed.pop("parents").unpack() + self._tails.pop("parents")
        return self._parents

    @property
    def timestamps(self) -> list[str]:
        """Every entry's timestamp as one list (a packed column is unpacked for it:
        `timestamp_at` and `timestamps_view` read them without that)."""
        if self._timestamps is None:
            packed = self._packed.pop("timestamps").unpack()
            self._timestamps = [t or "" for t in packed] + self._tails.pop("timestamps")
        return self._timestamps

    def column(self, name: str) -> list[Any]:
        """The whole column ``name`` ("parents", "timestamps": None for no timestamp)
        as a list, without keeping a packed column unpacked (one-off reads of every
        entry, like a search of the whole session)."""
        if name in self._packed:
            return self._packed[name].unpack() + self._tails[name]
        return list(self.parents if name == "parents" else self.timestamps)

    def packed_column(self, name: str) -> PackedStrings:
        """Column ``name`` packed (for the entry index): a packed column and its tail
        without unpacking either; timestamps never None ("" where an entry has none)."""
        if name in self._packed:
            tail = self._tails[name]
            return self._packed[name].extended(
                tail if name == "parents" else [t or "" for t in tail]
            )
        return PackedStrings.pack(self.parents if name == "parents" else self.timestamps)

    def growing(self, name: str) -> list[Any]:
        """The list an entry's value of column ``name`` ("parents", "timestamps") is
        appended to: the column, or the tail of a column still packed."""
        if name in self._packed:
            return self._tails[name]
        return self.parents if name == "parents" else self.timestamps

    def _packed_at(self, name: str, i: int) -> Any:
        packed = self._packed[name]
        n = len(packed)
        if i < 0:
            i += n + len(self._tails[name])
        return packed[i] if i < n else self._tails[name][i - n]

    def parent_at(self, i: int) -> str | None:
        if self._parents is None:
            value: str | None = self._packed_at("parents", i)
            return value
        return self._parents[i]

    def timestamps_view(self) -> Sequence[str]:
        """The timestamps without unpacking a packed column (`Stamps`); the list once
        something unpacked it."""
        return Stamps(self) if self._timestamps is None else self._timestamps

    def timestamps_crc(self, n: int, crc: int = 0) -> int:
        """`timestamps_crc` of the first ``n`` timestamps, from the packed column (and
        what was appended to it) while it is one."""
        if self._timestamps is None:
            packed = self._packed["timestamps"]
            if n <= len(packed):
                return packed.prefix_crc(n, crc)
            return packed.extended(self._tails["timestamps"][: n - len(packed)]).prefix_crc(n, crc)
        return timestamps_crc(self._timestamps, n, crc)

    def columns_crc(self, n: int) -> int:
        """A CRC-32 of the shape of the first ``n`` entries: their ids, parent rows
        (`parent_index`), types, roles and timestamps (what a layout of them, like the
        branch map's, depends on). Kept for the last ``n`` asked, and in the entry index
        (`keep_columns_crc`): a launch that takes a map laid out at the last close checks
        it without joining 100,000 ids again (~20 ms)."""
        kept = self._columns_crc
        if kept is not None and kept[0] == n:
            return kept[1]
        crc = zlib.crc32("\0".join(self.ids[:n]).encode("utf-8", "surrogatepass"))
        crc = zlib.crc32(self.parent_index()[:n].tobytes(), crc)
        crc = zlib.crc32("\0".join(self.types[:n]).encode("utf-8", "surrogatepass"), crc)
        crc = zlib.crc32("\0".join([r or "" for r in self.roles[:n]]).encode(), crc)
        crc = self.timestamps_crc(n, crc)
        self._columns_crc = (n, crc)
        return crc

    def keep_columns_crc(self, n: int, crc: int) -> None:
        """`columns_crc(n)` as computed when these columns were written (entry index)."""
        if 0 < n <= len(self.ids):
            self._columns_crc = (n, crc)

    def timestamp_at(self, i: int) -> str:
        if self._timestamps is None:
            return self._packed_at("timestamps", i) or ""
        return self._timestamps[i]

    def restore_packed(
        self, parents: PackedStrings, timestamps: PackedStrings, pidx: array[int] | None
    ) -> None:
        """Use columns from the entry index (unpacked when first needed in full)."""
        self._parents, self._timestamps = None, None
        self._packed = {"parents": parents, "timestamps": timestamps}
        self._tails = {"parents": [], "timestamps": []}
        self._pidx = pidx
        self._pidx_bytes, self._backward = None, False
        self._orphans = pidx is not None and -2 in pidx

    def parent_index(self) -> array[int]:
        """`_pidx`, extended to the new rows (or rebuilt after a duplicate id)."""
        pidx = self._pidx
        n = len(self.ids)
        if pidx is None:
            pidx = self._pidx = array("i")
        if len(pidx) < n:
            by_id = self.by_id
            start = len(pidx)
            parents = [self.parent_at(k) for k in range(start, n)]
            pidx.extend(by_id.get(p, -2) if p else -1 for p in parents)
            if -2 in pidx[start:]:
                self._orphans = True
        return pidx

    def orphan_roots(self) -> list[int]:
        """Rows whose parent id names no entry, or the row itself: roots too, file order.

        Read from `parent_index` and kept: rows appended later are looked at once each
        (O(new rows) per call, not O(entries)); when parent links may change (a duplicate
        id, a missing parent turning up) `parent_index` is rebuilt and so is this.
        """
        pidx = self.parent_index()
        lost = self._lost
        if lost is None or lost[0] is not pidx:
            lost = (pidx, 0, [])
        _, seen, found = lost
        n = len(pidx)
        if seen < n:
            found = found + [i for i in range(seen, n) if pidx[i] == -2 or pidx[i] == i]
        self._lost = (pidx, n, found)
        return found

    # ------------------------------------------------------------------ building

    def add(
        self, entry: Entry, raw: bytes | None = None, offset: int = -1, length: int = -1
    ) -> int:
        """Append one entry; ``raw`` keeps its line in memory (pinned). Returns its index."""
        i = len(self.ids)
        self.ids.append(entry.id)
        self.growing("parents").append(entry.parent_id)
        self.types.append(intern_text(entry.type))
        self.growing("timestamps").append(entry.timestamp)
        self.roles.append(intern_text(entry.role) if entry.role is not None else None)
        if raw is not None:
            self._pinned[i] = raw
            if length < 0:
                length = len(raw)
        self.offsets.append(offset)
        self.lengths.append(length)
        if entry.type in BOOKKEEPING:
            self.extra[i] = entry.extra
        if self._orphans or entry.id in self.by_id:
            self._duplicate()  # this id may be a parent that was missing so far
        self.by_id[entry.id] = i
        self._apply(i)
        if self._children is not None:
            self._children.setdefault(entry.parent_id or None, []).append(i)
        return i

    def load_columns(
        self,
        ids: list[str],
        parents: list[str | None],
        types: list[str],
        timestamps: list[str],
        roles: list[str | None],
        lengths: Sequence[int],
        extra: dict[int, Any],
        source: LineSource,
    ) -> None:
        """Fill an empty tree from columns a database keeps (no line is parsed): the
        lines are read back from ``source`` as from a file holding them one per line
        (line ``i`` at the sum of the lengths before it, plus one newline each)."""
        assert not self.ids, "load_columns fills an empty tree"
        self.ids = ids
        self._parents = parents
        names = {t: intern_text(t) for t in set(types)}
        self.types = list(map(names.__getitem__, types))
        self._timestamps = timestamps
        kinds = {r: intern_text(r) if r is not None else None for r in set(roles)}
        self.roles = list(map(kinds.__getitem__, roles))
        self.lengths = array("q", lengths)
        offsets = array("q", [0])
        offsets.extend(accumulate(n + 1 for n in lengths))
        offsets.pop()
        self.offsets = offsets
        self.extra = extra
        self.source = source
        self.finish_bulk(0)

    def add_line(self, raw: bytes) -> int:
        """Parse, validate and append one line kept in memory (`LineError` if bad)."""
        return self.add(parse_line(raw), raw)

    def copy_row(self, row: Row) -> int:
        """Append an entry of another tree, keeping its exact line in memory."""
        return self.add(row.entry(), row.raw)

    def finish_bulk(self, start: int) -> None:
        """Index rows ``start..`` that a loader appended to the columns directly."""
        ids = self.ids
        by_id = self.by_id
        before = len(by_id)
        by_id.update(zip(ids[start:] if start else ids, range(start, len(ids)), strict=True))
        if len(by_id) != before + len(ids) - start or (self._orphans and len(ids) > start):
            self._duplicate()
        extra = self.extra
        for i in sorted(k for k in extra if k >= start):
            self._apply(i)
        if len(ids) > start:
            last = len(ids) - 1
            self.leaf_id = extra.get(last) if self.types[last] == "leaf" else ids[last]
        self._children = None

    def _duplicate(self) -> None:
        """An id appears twice (the later row wins lookups), or a missing parent may have
        appeared: parent links may change, so they are worked out again."""
        self._pidx = None
        self._pidx_bytes, self._backward = None, False
        self._orphans = False
        self._paths.clear()
        self._columns_crc = None  # (parent rows of earlier entries may change)

    def _apply(self, i: int) -> None:
        kind = self.types[i]
        if kind == "label":
            target, label = self.extra[i]
            text = label.strip() if isinstance(label, str) else ""
            if isinstance(target, str):
                if text:
                    self.labels[target] = text
                else:
                    self.labels.pop(target, None)
        elif kind == "session_info":
            name = self.extra[i]
            self.name = name.strip() or None if isinstance(name, str) else None
        self.leaf_id = self.extra[i] if kind == "leaf" else self.ids[i]

    def truncate(self, count: int) -> None:
        """Drop every entry from index ``count`` on (a loader's torn-tail cut)."""
        if count >= len(self.ids):
            return
        kept = Tree()
        for i in range(count):
            kept.add(self.entry(i), self._pinned.get(i), self.offsets[i], self.lengths[i])
        source, damaged = self.source, self.damaged
        self.__dict__.update(kept.__dict__)
        self.rows = _Rows(self)
        self.source, self.damaged = source, damaged

    # ------------------------------------------------------------------ lines

    def entry(self, i: int) -> Entry:
        return Entry(
            self.ids[i],
            self.parent_at(i),
            self.types[i],
            self.timestamp_at(i),
            self.roles[i],
            self.extra.get(i),
        )

    def set_location(self, i: int, offset: int, length: int) -> None:
        self.offsets[i] = offset
        self.lengths[i] = length

    def release(self) -> None:
        """Forget the in-memory copy of every line that is in the file (durably)."""
        offsets = self.offsets
        self._pinned = {i: raw for i, raw in self._pinned.items() if offsets[i] < 0}

    def pinned(self, i: int) -> bool:
        return i in self._pinned

    def line(self, i: int) -> bytes:
        """The exact JSON line of entry ``i`` (without its newline)."""
        raw = self._pinned.get(i)
        if raw is not None:
            return raw
        with self._cache_lock:  # views read from the loop and from worker threads
            cache = self._cache
            raw = cache.get(i)
            if raw is not None:
                cache.move_to_end(i)
                return raw
            raw = self._read(i, i)[0]
            cache[i] = raw
            self._cache_bytes += len(raw)
            while len(cache) > CACHE_LINES or (self._cache_bytes > CACHE_BYTES and len(cache) > 1):
                _, old = cache.popitem(last=False)
                self._cache_bytes -= len(old)
            return raw

    def lines(self, indices: Iterable[int]) -> Iterator[bytes]:
        """The lines of ``indices`` (in that order), reading runs of the file at once."""
        run: list[int] = []
        for i in indices:
            if i in self._pinned:
                yield from self._run_lines(run)
                run = []
                yield self._pinned[i]
                continue
            if run and (i != run[-1] + 1 or self.offsets[i] - self.offsets[run[0]] > SPAN_BYTES):
                yield from self._run_lines(run)
                run = []
            run.append(i)
        yield from self._run_lines(run)

    def _run_lines(self, run: list[int]) -> list[bytes]:
        return self._read(run[0], run[-1]) if run else []

    def _read(self, first: int, last: int) -> list[bytes]:
        """Lines ``first..last`` (consecutive, not pinned) from the source, checked."""
        source = self.source
        offsets, lengths = self.offsets, self.lengths
        if source is None or offsets[first] < 0:
            raise SessionError("storage", f"The line of entry {self.ids[first]} is not available")
        start = offsets[first]
        end = offsets[last] + lengths[last]
        span = source.read_span(start, end - start)
        if len(span) != end - start:
            raise source.changed_error("it is shorter than when it was read")
        out = [
            span[offsets[i] - start : offsets[i] - start + lengths[i]]
            for i in range(first, last + 1)
        ]
        self.lines_read += len(out)
        # The first and last line of every run must still be the entries indexed there.
        for i in {first, last}:
            if line_id(out[i - first]) != self.ids[i]:
                raise source.changed_error(f"entry {self.ids[i]} is no longer where it was")
        return out

    def lines_bytes(self, indices: Iterable[int]) -> bytes:
        """The lines as file content: each followed by a newline."""
        return b"".join([raw + b"\n" for raw in self.lines(indices)])

    # ------------------------------------------------------------------ lookups

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def index_of(self, entry_id: str) -> int | None:
        return self.by_id.get(entry_id)

    def get(self, entry_id: str) -> Row | None:
        i = self.by_id.get(entry_id)
        return Row(self, i) if i is not None else None

    def require_index(self, entry_id: str) -> int:
        i = self.by_id.get(entry_id)
        if i is None:
            raise SessionError("not_found", f"Entry {entry_id} not found")
        return i

    def require(self, entry_id: str) -> Row:
        return Row(self, self.require_index(entry_id))

    def current_leaf(self) -> str | None:
        """The leaf id; `invalid_session` if it names an entry that does not exist."""
        leaf = self.leaf_id
        if leaf is not None and leaf not in self.by_id:
            raise SessionError("invalid_session", f"Entry {leaf} not found")
        return leaf

    def path_indices(self, entry_id: str | None, *, lenient: bool = False) -> list[int]:
        """Root-first indices of the path ending at ``entry_id``: O(path length),
        cycle-safe, and O(1) more per appended entry (the last paths are kept).

        ``lenient``: a missing parent ends the path (the orphan becomes a root, as the
        coding-agent reads damaged files) instead of raising ``invalid_session``; a tree
        with damaged lines is always walked so.
        """
        if entry_id is None:
            return []
        i = self.require_index(entry_id)
        lenient = lenient or self.damaged
        pidx = self.parent_index()
        cached = self._paths.get(i)
        if cached is None:
            cached = self._walk(i, pidx, lenient)
            if len(self._paths) >= 4:
                self._paths.clear()
            self._paths[i] = cached
        if not lenient and cached and pidx[cached[0]] == -2:
            raise SessionError("invalid_session", f"Entry {self.parent_at(cached[0])} not found")
        return list(cached)

    def _walk(self, i: int, pidx: array[int], lenient: bool) -> list[int]:
        """Walk up from ``i`` until the root, or until a kept path (a branch that grew)."""
        path = [i]
        append = path.append
        kept = self._paths
        j = pidx[i]
        for _ in range(len(pidx)):
            if j < 0:
                break
            above = kept.get(j)
            if above is not None:
                path.reverse()
                return [*above, *path]
            append(j)
            j = pidx[j]
        else:
            raise SessionError(
                "invalid_session", f"Parent cycle: entry {self.ids[j]} is its own ancestor"
            )
        if j == -2 and not lenient:
            raise SessionError("invalid_session", f"Entry {self.parent_at(path[-1])} not found")
        path.reverse()
        return path

    def known_path(self, entry_id: str | None) -> list[int] | None:
        """The kept path to ``entry_id`` if one is kept (for the entry index)."""
        i = self.by_id.get(entry_id) if entry_id is not None else None
        return self._paths.get(i) if i is not None else None

    def keep_path(self, path: list[int]) -> None:
        """Keep a path restored from the entry index (its last entry is the leaf)."""
        if path:
            self._paths[path[-1]] = path

    def path_to_root(self, entry_id: str | None, *, lenient: bool = False) -> list[Row]:
        """`path_indices` as `Row` views."""
        return [Row(self, i) for i in self.path_indices(entry_id, lenient=lenient)]

    def children_of(self, entry_id: str | None) -> list[int]:
        """``children_map().get(entry_id, [])`` without building the map when it is not
        built yet: a search of the parent index at C speed (~0.1 ms for 100,000 entries),
        for the few entries a launch shows (the map took ~60 ms before the first paint)."""
        if self._children is not None:
            return self._children.get(entry_id, [])
        target = -1 if entry_id is None else self.by_id.get(entry_id)
        if target is None:  # (an id no entry has: only the map knows who names it)
            return self.children_map().get(entry_id, [])
        pidx = self.parent_index()
        data = self._pidx_bytes
        if data is None or len(data) != 4 * len(pidx):
            checked = len(data) // 4 if data is not None else 0
            # A child comes after its parent in an append-only file: the search starts
            # at the parent, unless some entry names a parent further down (odd files).
            # (map + operator.gt runs at C speed: the generator took ~25 ms per 100,000.)
            self._backward = self._backward or any(
                map(operator.gt, pidx[checked:], range(checked, len(pidx)))
            )
            data = self._pidx_bytes = pidx.tobytes()
        needle = array("i", [target]).tobytes()
        found: list[int] = []
        pos = data.find(needle, 0 if self._backward or target < 0 else 4 * target)
        while pos >= 0:
            if pos % 4:  # (straddling two entries)
                pos = data.find(needle, pos + 1)
                continue
            found.append(pos // 4)
            pos = data.find(needle, pos + 4)
        return found

    def children_map(self) -> dict[str | None, list[int]]:
        """Children indices of every entry (key None = roots), in file order; built once."""
        if self._children is None:
            # From the parent index (kept in the entry index), not the parent ids: those
            # are unpacked from the entry index only when asked for (~45 ms per 100,000).
            ids, parent_at = self.ids, self.parent_at
            children: dict[str | None, list[int]] = {}
            for i, p in enumerate(self.parent_index()):
                key = ids[p] if p >= 0 else None if p == -1 else parent_at(i)
                kids = children.get(key)
                if kids is None:
                    children[key] = [i]
                else:
                    kids.append(i)
            self._children = children
        return self._children

    def memory_bytes(self) -> int:
        """About how much memory the per-entry records take (for benchmarks)."""
        size = sys.getsizeof
        columns: list[Any] = [self.ids, self.types, *self._tails.values(), *self._packed.values()]
        columns += [c for c in (self._parents, self._timestamps) if c is not None]
        total = sum(size(c) for c in columns) + sum(size(s) for s in self.ids)
        total += sum(size(s) for s in self._timestamps or ())
        total += self.offsets.itemsize * len(self.offsets) * 2
        total += sum(len(v) for v in self._pinned.values()) + self._cache_bytes
        return total


def lines_of(rows: Iterable[Row]) -> bytes:
    """The rows as file content: each entry's line followed by a newline."""
    return b"".join([r.raw + b"\n" for r in rows])
