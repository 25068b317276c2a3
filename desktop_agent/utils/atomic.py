"""The one atomic file write: temp file, fsync, rename over, fsync the folder.

An exception at any step leaves the previous file exactly as it was and removes the
temp file. Used for settings, app state, session copies, trash manifests, exports and
backups (a crash leaves either the old or the new file, never a torn one).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def fsync_file(fd: int) -> None:
    """fsync that also flushes the drive's cache on macOS (``F_FULLFSYNC``)."""
    if sys.platform == "darwin":  # pragma: no cover - macOS only
        import fcntl

        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_FULLFSYNC)
            return
    os.fsync(fd)


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a folder so a new or renamed file in it survives a power cut.

    Windows cannot open a folder for fsync; NTFS journals the rename itself.
    """
    if os.name == "nt":  # pragma: no cover - Windows only
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a zero-byte write is an error)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(5, "short write")
        view = view[written:]


@contextlib.contextmanager
def atomic_file(
    path: str | os.PathLike[str], *, mode: int = 0o600, durable: bool = True
) -> Iterator[BinaryIO]:
    """A binary file that replaces ``path`` when the ``with`` block ends without error.

    The data goes to a hidden temp file (``.<name>.tmp-<pid>-<ns>``) in the same folder
    (created when missing), which is fsynced, renamed over ``path``, and the folder is
    fsynced. On any exception the temp file is removed and ``path`` is left as it was.
    ``mode`` applies to a new file (0o600: private by default). ``durable=False`` skips
    both fsyncs: for derived caches that carry their own checksum, where a power cut may
    lose the new file (it is rebuilt) but never leaves a torn one under the final name
    that passes the check.
    """
    target = Path(path)
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{target.name}.tmp-{os.getpid()}-{time.monotonic_ns()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY | _O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "wb", closefd=True) as fh:
            yield fh
            fh.flush()
            if durable:
                fsync_file(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(folder)


def atomic_write(
    path: str | os.PathLike[str], data: bytes, *, mode: int = 0o600, durable: bool = True
) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old or the new file
    (see `atomic_file`)."""
    with atomic_file(path, mode=mode, durable=durable) as fh:
        write_all(fh.fileno(), data)
