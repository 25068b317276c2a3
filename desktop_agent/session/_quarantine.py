"""A torn last line moved aside: byte-for-byte to a synced ``<file>.corrupt-<timestamp>``
sidecar, then cut from the session file (SESSION_FORMAT.md §4), all or nothing."""

from __future__ import annotations

import contextlib
import os
import time

from desktop_agent.session._platform import CREATE_FLAGS, FileOps
from desktop_agent.session._storage import describe_os_error


class QuarantineError(Exception):
    """The torn tail could not be moved aside (``reason``); the file is as it was."""

    def __init__(self, reason: str, kept: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kept = kept  # a sidecar that holds the tail all the same


def quarantine_tail(ops: FileOps, path: str, fd: int, tail: bytes, offset: int) -> str:
    """Move the torn tail to a synced sidecar, then cut the file back to ``offset``.

    All or nothing as far as the user can tell: when the sidecar cannot be written and
    synced (full disk, read-only or failing disk), or the file cannot be cut, the sidecar
    is removed again, the file is left exactly as it was, and `QuarantineError` says why.
    """
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    sidecar = f"{path}.corrupt-{stamp}"
    n = 1
    while ops.exists(sidecar):
        n += 1
        sidecar = f"{path}.corrupt-{stamp}-{n}"
    created = False
    try:
        side_fd = ops.open(sidecar, CREATE_FLAGS)
        created = True
        try:
            ops.write_all(side_fd, tail)
            ops.fsync(side_fd)
        finally:
            ops.close(side_fd)
        ops.fsync_dir(os.path.dirname(path) or ".")
        ops.ftruncate(fd, offset)
    except OSError as exc:
        if created:
            with contextlib.suppress(OSError):
                ops.unlink(sidecar)
        raise QuarantineError(describe_os_error(exc)) from exc
    try:
        ops.fsync(fd)
    except OSError as exc:
        # The tail is safe in the synced sidecar; the cut may not be durable yet.
        raise QuarantineError(
            f"{describe_os_error(exc)}; the incomplete line is kept in {sidecar}", sidecar
        ) from exc
    return sidecar
