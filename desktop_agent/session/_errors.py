"""The one error type of the session layer, with Pi's codes plus our own."""

from __future__ import annotations

from typing import Literal, TypeAlias

SessionErrorCode: TypeAlias = Literal[
    "not_found",
    "invalid_session",
    "invalid_entry",
    "invalid_fork_target",
    "storage",
    "unknown",
    # ours
    "read_only",
    "locked",
    "invalid_argument",
    "changed_on_disk",
]


class SessionError(Exception):
    """A session could not be read, written or changed as asked.

    ``code`` is machine-readable (Pi's codes plus ``read_only``, ``locked``,
    ``invalid_argument`` and ``changed_on_disk``: another program, such as the Pi CLI,
    wrote to the file while it was open here; see ``Session.reload_from_disk``);
    ``message`` is written for a person.
    """

    def __init__(self, code: SessionErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: SessionErrorCode = code
        self.message = message

    def __repr__(self) -> str:
        return f"SessionError({self.code!r}, {self.message!r})"


class SessionWriteError(SessionError):
    """Entries are in memory but could not be written to disk (yet).

    Nothing is lost: the entries stay in the session, in order, and are written by
    ``Session.retry_persistence()``. Raised by appends and ``sync()`` when the disk fails
    (ENOSPC, EACCES, EIO, read-only file system, ...; code ``storage``) and when the
    session is read-only (code ``read_only``, or ``locked`` when another process owns it),
    and when another program changed the file (code ``changed_on_disk``: a retry fails the
    same way until ``Session.reload_from_disk`` takes in the other program's entries).
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None,
        os_error: OSError | None,
        pending_count: int,
        operation: str,
        code: SessionErrorCode = "storage",
    ) -> None:
        super().__init__(code, message)
        self.path = path
        self.os_error = os_error
        self.pending_count = pending_count
        self.operation = operation
