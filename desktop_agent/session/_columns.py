"""The columns of a `Tree` (`_tree.py`), kept compact: a live view of one value per entry
(`Column`), short strings packed in one text (`PackedStrings`, as the entry index keeps
them), timestamps read one by one with their CRC (`Stamps`, `timestamps_crc`), and the
few type and role names shared by every entry (`intern_text`).
"""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, TypeVar, overload

if TYPE_CHECKING:
    from desktop_agent.session._tree import Tree

_T = TypeVar("_T")


class Column(Sequence[_T]):
    """A live view of one value per entry of a tree, in file order, read one by one
    (``_at(tree, i)``): entries appended later are in it too."""

    __slots__ = ("_tree",)

    def __init__(self, tree: Tree) -> None:
        self._tree = tree

    def _at(self, i: int) -> _T:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._tree.ids)

    @overload
    def __getitem__(self, index: int) -> _T: ...

    @overload
    def __getitem__(self, index: slice) -> list[_T]: ...

    def __getitem__(self, index: int | slice) -> _T | list[_T]:
        n = len(self._tree.ids)
        if isinstance(index, slice):
            return [self._at(i) for i in range(n)[index]]
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        return self._at(index)

    def __iter__(self) -> Iterator[_T]:
        return (self._at(i) for i in range(len(self._tree.ids)))


class PackedStrings:
    """Many short strings (or None) in one text with end positions: a column restored
    from the entry index stays packed until something needs the whole list, and one
    element is read without unpacking the rest."""

    __slots__ = ("_ends", "_none", "_text")

    def __init__(self, text: str, ends: array[int], none: bytes) -> None:
        self._text = text
        self._ends = ends
        self._none = none  # one byte per element: 1 = None

    @classmethod
    def pack(cls, values: Sequence[str | None]) -> PackedStrings:
        ends = array("q", accumulate(len(v) if v is not None else 0 for v in values))
        none = bytes(v is None for v in values)
        return cls("".join([v for v in values if v is not None]), ends, none)

    def to_bytes(self) -> tuple[bytes, bytes, bytes]:
        return self._text.encode("utf-8", "surrogatepass"), self._ends.tobytes(), self._none

    @classmethod
    def from_bytes(cls, text: bytes, ends: bytes, none: bytes) -> PackedStrings:
        positions = array("q")
        positions.frombytes(ends)
        if len(positions) != len(none):
            raise ValueError("packed column of the wrong length")
        return cls(text.decode("utf-8", "surrogatepass"), positions, none)

    def __len__(self) -> int:
        return len(self._none)

    def __getitem__(self, i: int) -> str | None:
        if self._none[i]:
            return None
        start = self._ends[i - 1] if i else 0
        return self._text[start : self._ends[i]]

    def prefix_crc(self, n: int, crc: int) -> int:
        """`timestamps_crc` of the first ``n`` values (None counts as "")."""
        ends = self._ends[:n]
        crc = zlib.crc32(self._text[: ends[-1] if n else 0].encode("utf-8", "surrogatepass"), crc)
        return zlib.crc32(ends.tobytes(), crc)

    def extended(self, more: Sequence[str | None]) -> PackedStrings:
        """These values, then ``more``, packed (none of them unpacked)."""
        end = self._ends[-1] if len(self._ends) else 0
        texts = [v or "" for v in more]
        ends = self._ends + array("q", accumulate(map(len, texts), initial=end))[1:]
        return PackedStrings(
            self._text + "".join(texts), ends, self._none + bytes(v is None for v in more)
        )

    def __sizeof__(self) -> int:
        return sys.getsizeof(self._text) + sys.getsizeof(self._ends) + sys.getsizeof(self._none)

    def unpack(self) -> list[str | None]:
        text, none = self._text, self._none
        starts = [0, *self._ends[:-1]] if len(self._ends) else []
        pairs = zip(starts, self._ends, strict=True)
        return [None if none[i] else text[a:b] for i, (a, b) in enumerate(pairs)]


class Stamps(Column[str]):
    """The timestamps of a tree read one by one (`Tree.timestamp_at`, "" where an entry
    has none), so a column restored packed from the entry index is not unpacked for
    them (100,000 took 15-20 ms of each launch for the branch map's layout check)."""

    __slots__ = ()

    def _at(self, i: int) -> str:
        return self._tree.timestamp_at(i)

    def prefix_crc(self, n: int, crc: int) -> int:
        return self._tree.timestamps_crc(n, crc)


def timestamps_crc(stamps: Sequence[str], n: int, crc: int = 0) -> int:
    """A CRC-32 of the first ``n`` timestamps (their text, then where each ends): the
    same for a list and for a tree's packed column (`Stamps`), which is not unpacked."""
    if isinstance(stamps, Stamps):
        return stamps.prefix_crc(n, crc)
    head = stamps[:n]
    crc = zlib.crc32("".join(head).encode("utf-8", "surrogatepass"), crc)
    return zlib.crc32(array("q", accumulate(map(len, head))).tobytes(), crc)


_INTERNED: dict[str, str] = {}


def intern_text(text: str) -> str:
    """One shared object per type or role name (a few distinct values, 100k uses)."""
    if len(text) > 64:
        return text
    shared = _INTERNED.get(text)
    if shared is None:
        if len(_INTERNED) > 4096:
            return text
        _INTERNED[text] = shared = text
    return shared
