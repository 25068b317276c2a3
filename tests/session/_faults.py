"""A fault-injecting `FileOps` for the JSONL store (RELIABILITY.md §8, SQLite's loop).

`FaultyOps` wraps the real OS and makes the n-th call of one kind of operation fail,
once or forever, with ``ENOSPC``, ``EIO``, ``EACCES``, ``EROFS`` or a short write.
`SessionFileOps` is the real OS, knowing which descriptors are session files;
`CountingOps` counts the bytes read from them.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field

from desktop_agent.session._platform import FileOps

KINDS = ("open", "write", "fsync", "rename", "truncate", "fsync_dir")
ERRORS: dict[str, int] = {
    "ENOSPC": errno.ENOSPC,
    "EIO": errno.EIO,
    "EACCES": errno.EACCES,
    "EROFS": errno.EROFS,
    "short": errno.ENOSPC,  # a short count, then the disk is full
}


class SessionFileOps(FileOps):
    """The real OS; `session_file` tells whether a descriptor is a ``*.jsonl`` file."""

    def __init__(self) -> None:
        self._watched: set[int] = set()

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        fd = super().open(path, flags, mode)
        if path.endswith(".jsonl"):
            self._watched.add(fd)
        return fd

    def close(self, fd: int) -> None:
        self._watched.discard(fd)
        super().close(fd)

    def session_file(self, fd: int) -> bool:
        return fd in self._watched


class CountingOps(SessionFileOps):
    """The real OS, counting the bytes read from files named ``*.jsonl``."""

    def __init__(self) -> None:
        super().__init__()
        self.read = 0

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        data = super().pread(fd, size, offset)
        if self.session_file(fd):
            self.read += len(data)
        return data


@dataclass
class Fault:
    """Fail the ``nth`` call (1-based) of ``kind``; ``forever``: that one and every later."""

    kind: str
    nth: int
    error: str
    forever: bool = False
    after_previous: bool = False
    """Count calls only once the fault before it in `FaultyOps.faults` has fired."""
    fired: int = 0
    seen: int = 0


@dataclass
class FaultyOps(FileOps):
    """The real OS with at most one active `Fault`; ``calls`` counts calls per kind."""

    faults: list[Fault] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)
    only_under: str | None = None
    """Count and fail only operations on paths under this folder (fds opened there)."""
    _fds: set[int] = field(default_factory=set)
    _short_pending: bool = False

    # ------------------------------------------------------------------ plumbing

    def _watched_path(self, path: str) -> bool:
        return self.only_under is None or os.path.abspath(path).startswith(self.only_under)

    def _watched_fd(self, fd: int) -> bool:
        return self.only_under is None or fd in self._fds

    @property
    def fault(self) -> Fault | None:
        return self.faults[0] if self.faults else None

    @fault.setter
    def fault(self, value: Fault | None) -> None:
        self.faults = [] if value is None else [value]

    def _hit(self, kind: str) -> str | None:
        """Count a call of ``kind``; the error name to raise now, if any."""
        self.calls[kind] = self.calls.get(kind, 0) + 1
        hit: str | None = None
        previous: Fault | None = None
        for fault in self.faults:
            armed = not fault.after_previous or (previous is not None and previous.fired > 0)
            previous = fault
            if fault.kind != kind or not armed:
                continue
            fault.seen += 1
            n = fault.seen
            if hit is None and (n == fault.nth or (fault.forever and n > fault.nth)):
                fault.fired += 1
                hit = fault.error
        return hit

    @property
    def forever(self) -> bool:
        return any(f.forever for f in self.faults)

    @staticmethod
    def _raise(name: str) -> None:
        code = ERRORS[name]
        raise OSError(code, f"injected {name}: {os.strerror(code)}")

    def clear(self) -> None:
        self.faults = []
        self._short_pending = False

    # ------------------------------------------------------------------ the ops

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        if self._watched_path(path):
            error = self._hit("open")
            if error is not None:
                self._raise("EACCES" if error == "short" else error)
        fd = super().open(path, flags, mode)
        if self._watched_path(path):
            self._fds.add(fd)
        return fd

    def close(self, fd: int) -> None:
        self._fds.discard(fd)
        super().close(fd)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        if not self._watched_fd(fd):
            return super().write(fd, data)
        if self._short_pending:
            self._short_pending = self.forever
            self._raise("ENOSPC")
        error = self._hit("write")
        if error == "short" and len(data) > 1:
            self._short_pending = True
            return super().write(fd, data[: len(data) // 2])
        if error is not None:
            self._raise(error)
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        if self._watched_fd(fd):
            error = self._hit("fsync")
            if error is not None:
                self._raise("EIO" if error == "short" else error)
        super().fsync(fd)

    def fsync_dir(self, path: str) -> None:
        if self._watched_path(path):
            error = self._hit("fsync_dir")
            if error is not None:
                self._raise("EIO" if error == "short" else error)
        super().fsync_dir(path)

    def replace(self, src: str, dst: str) -> None:
        if self._watched_path(dst):
            error = self._hit("rename")
            if error is not None:
                self._raise("EIO" if error == "short" else error)
        super().replace(src, dst)

    def ftruncate(self, fd: int, size: int) -> None:
        if self._watched_fd(fd):
            error = self._hit("truncate")
            if error is not None:
                self._raise("EIO" if error == "short" else error)
        super().ftruncate(fd, size)


class NoSyncOps(FileOps):
    """The real OS without fsync: checking thousands of crash states or fuzzed files
    stays fast (what is checked there is the content, not its durability)."""

    def fsync(self, fd: int) -> None:
        pass

    def fsync_dir(self, path: str) -> None:
        pass


NO_SYNC = NoSyncOps()
