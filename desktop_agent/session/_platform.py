"""The JSONL store's only way to the OS: `FileOps` (open, read, write, fsync, rename, ...).

Everything the store does to a disk goes through one `FileOps` object, so the tests can
put a fault-injecting layer or a power-loss simulator under the real store
(RELIABILITY.md §8). `OS_FILE_OPS` is the real thing.

Locks (one writer per session): an exclusive lock on the session file's *own* descriptor,
so it belongs to the file (the inode), whatever name (symlink, hard link, another folder)
opened it, and no ``.lock`` sidecar is left beside Pi's files.

- POSIX: ``flock``. It belongs to the open file description, so closing some other
  descriptor of the same file (a reader, the index) does not drop it, unlike POSIX record
  locks; it is released by the kernel when the process dies. (On NFS, Linux emulates
  ``flock`` with record locks, which have that weakness; session folders on NFS are not
  supported for concurrent use.)
- Windows: ``LockFileEx`` on one byte far past any real end of file (offset 2**63 - 2**32).
  Windows locks are mandatory for the bytes they cover, so locking a byte inside the file
  would make other programs' reads of it fail; a byte past the end blocks nobody's reads
  or appends and still excludes a second locker. It belongs to the file object, so a hard
  link or another name of the same file conflicts too.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import threading
from typing import NamedTuple

from desktop_agent.utils.atomic import fsync_dir as fsync_dir
from desktop_agent.utils.atomic import fsync_file as fsync_fd

O_BINARY = getattr(os, "O_BINARY", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

READ_FLAGS = os.O_RDONLY | O_BINARY | O_CLOEXEC
APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | O_BINARY | O_CLOEXEC
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY | O_CLOEXEC


class FileStat(NamedTuple):
    """The parts of ``stat`` the store uses."""

    size: int
    mtime_ns: int
    ino: int
    dev: int
    nlink: int
    mode: int

    @property
    def identity(self) -> tuple[int, int]:
        return (self.ino, self.dev)

    @property
    def is_regular(self) -> bool:
        return stat.S_ISREG(self.mode)

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)


def _file_stat(st: os.stat_result) -> FileStat:
    return FileStat(st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, st.st_nlink, st.st_mode)


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


class NotRegularFileError(OSError):
    """The path names a FIFO, device, socket or folder: never read as a session."""

    def __init__(self, path: str, mode: int) -> None:
        super().__init__(errno.EINVAL, f"{path} is {kind_of(mode)}, not a session file")
        self.path = path
        self.mode = mode


class FileOps:
    """The real OS. Subclasses (tests) inject faults or simulate a power cut.

    Every method raises `OSError` on failure, as ``os`` does.
    """

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        return os.open(path, flags, mode)

    def open_regular(self, path: str, flags: int = READ_FLAGS) -> int:
        """Open ``path`` only if it is a regular file, without ever blocking.

        ``O_NONBLOCK`` makes opening a FIFO return at once instead of waiting for a
        writer (it changes nothing for a regular file), and ``fstat`` on the descriptor
        (not the name, so there is no race) refuses anything that is not a regular file
        with `NotRegularFileError`. Symlinks are followed: a loop fails with ``ELOOP``.
        """
        fd = self.open(path, flags | O_NONBLOCK)
        try:
            st = self.fstat(fd)
            if not st.is_regular:
                raise NotRegularFileError(path, st.mode)
        except BaseException:
            self.close(fd)
            raise
        return fd

    def close(self, fd: int) -> None:
        os.close(fd)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` (fewer only at the end of the file)."""
        chunks: list[bytes] = []
        while size > 0:
            chunk = _pread(fd, size, offset)
            if not chunk:
                break
            chunks.append(chunk)
            size -= len(chunk)
            offset += len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        fsync_fd(fd)

    def fsync_dir(self, path: str) -> None:
        fsync_dir(path)

    def fstat(self, fd: int) -> FileStat:
        return _file_stat(os.fstat(fd))

    def stat(self, path: str) -> FileStat:
        return _file_stat(os.stat(path))

    def replace(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def ftruncate(self, fd: int, size: int) -> None:
        os.ftruncate(fd, size)

    def unlink(self, path: str) -> None:
        os.unlink(path)

    def makedirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def exists(self, path: str) -> bool:
        try:
            self.stat(path)
        except OSError:
            return os.path.lexists(path)
        return True

    def try_lock(self, fd: int) -> bool:
        return try_lock(fd)

    def unlock(self, fd: int) -> None:
        unlock(fd)

    # ------------------------------------------------------------------ helpers

    def write_all(self, fd: int, data: bytes) -> None:
        """Write all of ``data`` (a short count is continued; 0 bytes is an error)."""
        view = memoryview(data)
        while view:
            written = self.write(fd, view)
            if written <= 0:
                raise OSError(errno.EIO, "short write")
            view = view[written:]

    def read_all(self, fd: int, size_hint: int = 0) -> bytes:
        """Everything from offset 0 to the end (also if the file grows meanwhile)."""
        chunks: list[bytes] = []
        offset = 0
        want = max(size_hint, 1 << 16)
        while True:
            chunk = self.pread(fd, want, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
            want = 1 << 20
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


if hasattr(os, "pread"):
    _pread = os.pread
else:  # pragma: no cover - Windows
    _SEEK_LOCK = threading.Lock()

    def _pread(fd: int, size: int, offset: int) -> bytes:
        # Windows has no pread: seek + read, under a lock since views read a session's
        # lines from the event loop and from worker threads.
        with _SEEK_LOCK:
            os.lseek(fd, offset, os.SEEK_SET)
            return os.read(fd, size)


OS_FILE_OPS = FileOps()


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import ctypes
    import msvcrt
    from ctypes import wintypes

    _kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)

    class _Overlapped(ctypes.Structure):
        _fields_ = [
            ("Internal", ctypes.c_size_t),
            ("InternalHigh", ctypes.c_size_t),
            ("Offset", wintypes.DWORD),
            ("OffsetHigh", wintypes.DWORD),
            ("hEvent", wintypes.HANDLE),
        ]

    _LOCKFILE_FAIL_IMMEDIATELY = 0x1
    _LOCKFILE_EXCLUSIVE_LOCK = 0x2
    _LOCK_OFFSET_HIGH = 0x7FFFFFFF  # the byte at 2**63 - 2**32: past any real file

    def _overlapped() -> _Overlapped:
        ov = _Overlapped()
        ov.Offset = 0
        ov.OffsetHigh = _LOCK_OFFSET_HIGH
        return ov

    def try_lock(fd: int) -> bool:
        handle = wintypes.HANDLE(msvcrt.get_osfhandle(fd))
        ov = _overlapped()
        flags = _LOCKFILE_EXCLUSIVE_LOCK | _LOCKFILE_FAIL_IMMEDIATELY
        return bool(_kernel32.LockFileEx(handle, flags, 0, 1, 0, ctypes.byref(ov)))

    def unlock(fd: int) -> None:
        try:
            handle = wintypes.HANDLE(msvcrt.get_osfhandle(fd))
        except OSError:
            return
        ov = _overlapped()
        _kernel32.UnlockFileEx(handle, 0, 1, 0, ctypes.byref(ov))

else:
    import fcntl

    def try_lock(fd: int) -> bool:
        """Take an exclusive ``flock`` on ``fd`` without waiting (see the module doc)."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def unlock(fd: int) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError:
            pass
