"""File-system primitives that differ per OS: durable sync and advisory locks."""

from __future__ import annotations

import os
import sys

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def unlock(fd: int) -> None:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        except OSError:
            pass

    def fsync_fd(fd: int) -> None:
        os.fsync(fd)

    def fsync_dir(path: str) -> None:
        """Windows cannot open a directory for fsync; NTFS journals the metadata."""

else:
    import fcntl

    def try_lock(fd: int) -> bool:
        """Take an exclusive advisory lock on ``fd`` without waiting.

        ``flock`` locks belong to the open file description, so closing some other
        descriptor of the same file (as a reader does) does not drop it, unlike POSIX
        record locks; the lock lives on a separate ``.lock`` file all the same.
        """
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

    def fsync_fd(fd: int) -> None:
        """fsync that also flushes the drive's cache on macOS (F_FULLFSYNC)."""
        full = getattr(fcntl, "F_FULLFSYNC", None)
        if full is not None:
            try:
                fcntl.fcntl(fd, full)
                return
            except OSError:
                pass
        os.fsync(fd)

    def fsync_dir(path: str) -> None:
        """fsync a directory so a new or renamed file in it survives a power cut."""
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
