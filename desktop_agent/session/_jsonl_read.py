"""Reading a JSONL session file through a `FileOps`: its tree from the entry index or a
scan (`read_tree`), its append descriptor (`open_for_append`), whether another writer
holds it (`is_locked_elsewhere`), and lines read back from a descriptor (`FdLines`).
"""

from __future__ import annotations

from collections.abc import Callable

from desktop_agent.session._entryindex import EntryIndex
from desktop_agent.session._errors import SessionError
from desktop_agent.session._header import parse_header, v3_header
from desktop_agent.session._platform import APPEND_FLAGS, OS_FILE_OPS, FileOps, FileStat
from desktop_agent.session._scan import ScanResult, scan
from desktop_agent.session._storage import DamagedLine, describe_os_error
from desktop_agent.session._tree import Tree


def read_all(ops: FileOps, fd: int, size: int) -> bytes:
    """The first ``size`` bytes of the file (fewer if it is shorter)."""
    parts: list[bytes] = []
    offset = 0
    while offset < size:
        chunk = ops.pread(fd, min(8 << 20, size - offset), offset)
        if not chunk:
            break
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


class FdLines:
    """Reads a tree's lines from a descriptor (a reload's new file, before it is ours)."""

    def __init__(self, ops: FileOps, fd: int, path: str) -> None:
        self._ops, self._fd, self._path = ops, fd, path

    def read_span(self, offset: int, length: int) -> bytes:
        try:
            return self._ops.pread(self._fd, length, offset)
        except OSError as exc:
            raise SessionError(
                "storage", f"Failed to read session {self._path}: {describe_os_error(exc)}"
            ) from exc

    def changed_error(self, detail: str) -> SessionError:
        return SessionError(
            "changed_on_disk", f"The session file {self._path} changed again ({detail})"
        )


def read_tree(
    ops: FileOps,
    fd: int,
    path: str,
    st: FileStat,
    index: EntryIndex | None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Tree, ScanResult, bool]:
    """The file's tree: from its entry index when valid (scanning only what grew), else
    from a full scan. Returns (tree, what was found, whether the index is to be written
    again: something was scanned, or it lacks what this version keeps in it)."""
    cached = index.load(path, fd, st) if index is not None else None
    if cached is None:
        tree = Tree()
        found = scan(ops, fd, path, tree, size=st.size, header=v3_header, progress=progress)
        return tree, found, True
    header = parse_header(cached.header, path)
    if cached.complete:
        damaged = [
            DamagedLine(number, offset, reason, ops.pread(fd, length, offset))
            for number, offset, length, reason in cached.damaged
        ]
        cached.tree.damaged = bool(damaged)
        result = ScanResult(
            size=st.size,
            clean_end=cached.clean_end,
            lines=cached.lines,
            torn_offset=cached.clean_end if st.size > cached.clean_end else None,
            damaged=damaged,
        )
    else:
        result = scan(
            ops,
            fd,
            path,
            cached.tree,
            size=st.size,
            start=cached.clean_end,
            lines=cached.lines,
            progress=progress,
        )
    result.header, result.header_raw = header, cached.header
    return cached.tree, result, not (cached.complete and cached.current)


def open_for_append(ops: FileOps, path: str, st: FileStat) -> tuple[int | None, str | None]:
    """The append descriptor of the file ``st`` describes, or None and why not."""
    try:
        fd = ops.open(path, APPEND_FLAGS)
    except OSError as exc:
        return None, f"it cannot be written: {describe_os_error(exc)}"
    try:
        same = ops.fstat(fd).identity == st.identity
    except OSError as exc:
        ops.close(fd)
        return None, f"it cannot be written: {describe_os_error(exc)}"
    if not same:
        ops.close(fd)
        return None, "the file was replaced while it was being opened"
    return fd, None


def is_locked_elsewhere(path: str, ops: FileOps = OS_FILE_OPS) -> bool:
    """Whether another open session (this process or another) holds the file's lock."""
    try:
        fd = ops.open_regular(path)
    except OSError:
        return False
    try:
        if ops.try_lock(fd):
            ops.unlock(fd)
            return False
        return True
    finally:
        ops.close(fd)
