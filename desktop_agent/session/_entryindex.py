"""The persisted entry index: a session's tree without reading its file again.

One file per session in a cache folder of the app's data directory (never beside the
session file: Pi users do not want our files among theirs), named by a hash of the
session file's real path. It holds the tree's columns (`Tree`: id, parent, type,
timestamp, role, byte offset and length of every line, the bookkeeping values), the
header line, the damaged lines, and the file facts it is valid for: size, mtime and a
hash of the first and of the last 4 KiB of the indexed bytes.

- Same size, mtime and hashes: the tree is rebuilt from the index alone; opening then
  reads 8 KiB of the file, and `build_context` the lines of the active path after the
  last compaction.
- The file only grew (first and last 4 KiB of the indexed part unchanged): only the new
  bytes are scanned.
- Anything else (an edit, a truncation, another file under the name, a damaged or
  foreign index file): a full scan, and the index is written again.

It is derived data: writes are atomic (temp file + rename) but not fsynced, a torn or
damaged index is detected by its checksum and ignored, and deleting the folder loses
nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import zlib
from array import array
from dataclasses import dataclass
from typing import Any

import msgspec

from desktop_agent.session._columns import PackedStrings, intern_text
from desktop_agent.session._errors import SessionError
from desktop_agent.session._facts import PREVIEWS_VERSION
from desktop_agent.session._platform import FileOps, FileStat
from desktop_agent.session._storage import DamagedLine
from desktop_agent.session._tree import Tree
from desktop_agent.utils.atomic import atomic_write

FORMAT = 1
MAGIC = b"DAEI"
EDGE = 4096
"""Bytes hashed at each end of the indexed part of the file."""


class _Payload(msgspec.Struct, array_like=True):
    format: int
    byteorder: str
    path: str
    size: int
    mtime_ns: int
    clean_end: int
    lines: int
    head: bytes
    tail: bytes
    header: bytes
    ids: list[str]
    parents: tuple[bytes, bytes, bytes]
    parent_index: bytes
    type_names: list[str]
    types: bytes
    role_names: list[str]
    roles: bytes
    timestamps: tuple[bytes, bytes, bytes]
    offsets: bytes
    lengths: bytes
    extra_at: bytes
    extra_values: list[Any]
    damaged: list[tuple[int, int, int, str]]
    leaf_path: bytes
    previews_at: bytes
    previews: list[str]
    columns_crc: tuple[int, int] = (0, 0)
    """(entries, `Tree.columns_crc` of them); (0, 0) in files written before it (an
    optional last field: apps that do not know it read the rest as before)."""
    previews_version: int = 0
    """The `PREVIEWS_VERSION` the previews were made by (0 before it was kept): previews
    made by another version are dropped and made again, so a fix of how an entry is
    previewed reaches the sessions indexed before it (another optional last field)."""


class _Head(msgspec.Struct, array_like=True):
    format: int  # the payload's first field (the rest of the array is skipped)


_ENCODE = msgspec.msgpack.Encoder().encode
_DECODE = msgspec.msgpack.Decoder(_Payload).decode
_DECODE_HEAD = msgspec.msgpack.Decoder(_Head).decode


@dataclass
class Cached:
    """A usable index for an open file: the tree, and where scanning must go on."""

    tree: Tree
    header: bytes
    clean_end: int
    lines: int
    damaged: list[tuple[int, int, int, str]]
    complete: bool
    """The file is exactly what was indexed (else it grew after ``clean_end``)."""
    current: bool = True
    """The index holds all this version writes (else it is written again at close)."""


def _crc(body: bytes) -> bytes:
    return zlib.crc32(body).to_bytes(4, "little")


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _edges(ops: FileOps, fd: int, end: int) -> tuple[bytes, bytes]:
    head = ops.pread(fd, min(EDGE, end), 0)
    tail = ops.pread(fd, min(EDGE, end), max(0, end - EDGE))
    return _digest(head), _digest(tail)


def _codes(values: list[str | None]) -> tuple[list[str], bytes]:
    """A table of the distinct values and one code per value (0 = None)."""
    table: dict[str | None, int] = {None: 0}
    names: list[str] = []
    codes = array("H")
    for value in values:
        code = table.get(value)
        if code is None:
            code = table[value] = len(table)
            names.append(value)  # type: ignore[arg-type]  # never None here
        codes.append(code)
    return names, codes.tobytes()


def _decode_codes(names: list[str], raw: bytes, none: str | None = None) -> list[str | None]:
    """The values of `_codes` again (code 0, None, as ``none``)."""
    codes = array("H")
    codes.frombytes(raw)
    table: list[str | None] = [none, *(intern_text(n) for n in names)]
    return list(map(table.__getitem__, codes))


class EntryIndex:
    """The entry indexes of a repo's sessions, in ``folder`` (see the module doc)."""

    def __init__(self, folder: str | os.PathLike[str], ops: FileOps) -> None:
        self.folder = os.path.abspath(os.fspath(folder))
        self.ops = ops
        self.bytes_read = 0
        """Bytes of session files read to validate indexes (for tests)."""
        self.newer: set[str] = set()
        """Index files in a newer app's format: never used, never overwritten."""

    def file_for(self, session_path: str) -> str:
        key = os.path.realpath(session_path).encode("utf-8", "surrogatepass")
        return os.path.join(self.folder, hashlib.sha256(key).hexdigest()[:32] + ".idx")

    def has(self, session_path: str) -> bool:
        """Whether an index file exists for the session (valid or not)."""
        return os.path.exists(self.file_for(session_path))

    # ------------------------------------------------------------------ reading

    def load(self, session_path: str, fd: int, st: FileStat) -> Cached | None:
        """The index of the open file ``fd`` if it is still valid for it (else None)."""
        payload = self._read(session_path)
        if payload is None:
            return None
        end = payload.clean_end
        if st.size < end or end <= 0:
            return None
        head, tail = _edges(self.ops, fd, end)
        self.bytes_read += min(EDGE, end) * 2
        if head != payload.head or tail != payload.tail:
            return None
        complete = st.size == payload.size and st.mtime_ns == payload.mtime_ns
        if not complete and (payload.damaged or st.size <= payload.size):
            return None  # edited in place, or grew after damage: scan it all again
        try:
            tree = _tree_of(payload)
        except (ValueError, UnicodeDecodeError):
            return None
        return Cached(
            tree,
            payload.header,
            end,
            payload.lines,
            [tuple(d) for d in payload.damaged],  # type: ignore[misc]
            complete,
            current=payload.columns_crc[0] == len(payload.ids)
            and payload.previews_version == PREVIEWS_VERSION,
        )

    def _read(self, session_path: str) -> _Payload | None:
        try:
            with open(self.file_for(session_path), "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        if len(data) < 8 or data[:4] != MAGIC:
            return None
        body = data[8:]
        if data[4:8] != _crc(body):
            return None
        try:
            if _DECODE_HEAD(body).format > FORMAT:
                self.newer.add(self.file_for(session_path))
                return None
            payload = _DECODE(body)
        except (msgspec.DecodeError, RecursionError):
            return None
        if payload.format != FORMAT or payload.byteorder != sys.byteorder:
            return None
        if payload.path != os.path.realpath(session_path):
            return None
        n = len(payload.ids)
        if len(payload.types) != 2 * n or len(payload.roles) != 2 * n:
            return None
        if len(payload.parent_index) not in (0, 4 * n):
            return None
        if len(payload.offsets) != 8 * n or len(payload.lengths) != 8 * n:
            return None
        if len(payload.extra_at) != 4 * len(payload.extra_values):
            return None
        return payload

    # ------------------------------------------------------------------ writing

    def save(
        self,
        session_path: str,
        fd: int,
        tree: Tree,
        *,
        header: bytes,
        clean_end: int,
        lines: int,
        damaged: list[DamagedLine],
    ) -> bool:
        """Write the index of the file ``fd`` (its first ``clean_end`` bytes hold the
        header and ``tree``'s entries). Never raises: the index is a cache. An index a
        newer app wrote (seen by `load`) is kept as it is."""
        if self.file_for(session_path) in self.newer:
            return False
        try:
            st = self.ops.fstat(fd)
            head, tail = _edges(self.ops, fd, clean_end)
            payload = _payload(session_path, st, tree, header, clean_end, lines, damaged)
            payload.head, payload.tail = head, tail
            body = _ENCODE(payload)
        except (OSError, ValueError, TypeError, OverflowError, msgspec.EncodeError):
            return False
        return self._write(self.file_for(session_path), MAGIC + _crc(body) + body)

    def _write(self, dest: str, data: bytes) -> bool:
        # Not fsynced: a cache with its own CRC; a power cut loses it (rebuilt), and the
        # rename means a reader never sees a torn file under the final name.
        try:
            atomic_write(dest, data, mode=0o644, durable=False)
        except OSError:
            return False
        return True

    def forget(self, session_path: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.file_for(session_path))


def _payload(
    session_path: str,
    st: FileStat,
    tree: Tree,
    header: bytes,
    clean_end: int,
    lines: int,
    damaged: list[DamagedLine],
) -> _Payload:
    n = len(tree.ids)
    offsets = tree.offsets[:n]
    if n and (min(offsets) < 0 or offsets[n - 1] + tree.lengths[n - 1] >= clean_end + 1):
        raise ValueError("entries that are not in the file")
    type_names, types = _codes(list(tree.types))
    role_names, roles = _codes(tree.roles)
    keys = sorted(tree.extra)
    preview_keys = sorted(k for k in tree.previews if k < n)
    return _Payload(
        format=FORMAT,
        byteorder=sys.byteorder,
        path=os.path.realpath(session_path),
        size=st.size,
        mtime_ns=st.mtime_ns,
        clean_end=clean_end,
        lines=lines,
        head=b"",
        tail=b"",
        header=header,
        ids=tree.ids,
        parents=tree.packed_column("parents").to_bytes(),
        parent_index=tree.parent_index()[:n].tobytes(),
        type_names=type_names,
        types=types,
        role_names=role_names,
        roles=roles,
        timestamps=tree.packed_column("timestamps").to_bytes(),
        offsets=offsets.tobytes(),
        lengths=tree.lengths[:n].tobytes(),
        extra_at=array("i", keys).tobytes(),
        extra_values=[tree.extra[k] for k in keys],
        damaged=[(d.line_number, d.byte_offset, len(d.raw), d.reason) for d in damaged],
        leaf_path=array("i", _leaf_path(tree)).tobytes(),
        previews_at=array("i", preview_keys).tobytes(),
        previews=[tree.previews[k] for k in preview_keys],
        columns_crc=(n, tree.columns_crc(n)),
        previews_version=PREVIEWS_VERSION,
    )


def _leaf_path(tree: Tree) -> list[int]:
    """The current branch's path when it is known whole (else nothing is kept)."""
    try:
        leaf = tree.current_leaf()
        return tree.known_path(leaf) or tree.path_indices(leaf)
    except SessionError:
        return []


def _tree_of(payload: _Payload) -> Tree:
    tree = Tree()
    n = len(payload.ids)
    parents = PackedStrings.from_bytes(*payload.parents)
    stamps = PackedStrings.from_bytes(*payload.timestamps)
    if len(parents) != n or len(stamps) != n:
        raise ValueError("columns of different lengths")
    pidx: array[int] | None = None
    if payload.parent_index:
        pidx = array("i")
        pidx.frombytes(payload.parent_index)
    tree.ids = payload.ids
    tree.restore_packed(parents, stamps, pidx)
    # (None as "" through the table, at C speed: a comprehension over the column took
    # ~5 ms of every launch restoring a 100,000-entry session)
    types = _decode_codes(payload.type_names, payload.types, none="")
    tree.types = types  # type: ignore[assignment]  # no None: code 0 is ""
    tree.roles = _decode_codes(payload.role_names, payload.roles)
    tree.offsets.frombytes(payload.offsets)
    tree.lengths.frombytes(payload.lengths)
    keys = array("i")
    keys.frombytes(payload.extra_at)
    tree.extra = dict(zip(keys, payload.extra_values, strict=True))
    tree.finish_bulk(0)
    path = array("i")
    path.frombytes(payload.leaf_path)
    if path and path[-1] == tree.by_id.get(tree.leaf_id or "") and max(path) < n:
        tree.keep_path(path.tolist())
    counted, crc = payload.columns_crc
    if counted == n:
        tree.keep_columns_crc(counted, crc)
    at = array("i")
    at.frombytes(payload.previews_at)
    same = payload.previews_version == PREVIEWS_VERSION
    if same and len(at) == len(payload.previews) and (not at or max(at) < n):
        tree.previews = dict(zip(at, payload.previews, strict=True))
    return tree
