"""Storage protocol shared by the memory, JSONL and SQLite backends.

A storage owns the in-memory `Tree` of one session and a queue of entries that are in
memory but not yet written. An append puts the entry in the tree first, then writes the
queue; if the disk fails the entry stays in the tree and in the queue, a
`SessionWriteError` says so, and `retry()` later writes exactly the queued entries, in
order (no duplicates, no gaps). Backends only implement the raw writes.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from desktop_agent.session._codec import Entry
from desktop_agent.session._errors import SessionError, SessionErrorCode, SessionWriteError
from desktop_agent.session._tree import Tree

if TYPE_CHECKING:
    from desktop_agent.session._reload import ReloadLeaf, ReloadReport


@dataclass(frozen=True)
class SessionMetadata:
    """What a repo knows about a session without reading its entries."""

    id: str
    created_at: str
    cwd: str | None = None
    path: str | None = None
    parent_session_path: str | None = None
    metadata: dict[str, Any] | None = None
    format_version: int = 3
    """1 or 2: a file in an older Pi format, open read-only (``JsonlSessionRepo.convert``)."""


@dataclass(frozen=True)
class DamagedLine:
    """A line of a session file that could not be read as an entry."""

    line_number: int  # physical, 1-based
    byte_offset: int
    reason: str
    raw: bytes = field(repr=False)


@dataclass(frozen=True)
class RecoveryReport:
    """What opening a session had to work around; shown to the user once."""

    quarantined_bytes: int = 0
    quarantine_path: str | None = None
    damaged_lines: tuple[DamagedLine, ...] = ()
    quarantine_error: str | None = None
    """Why the torn tail could not be set aside (full or read-only disk); the session is
    then read-only and the file unchanged, and `Session.retry_persistence` tries again."""

    @property
    def damaged(self) -> bool:
        return bool(self.damaged_lines)

    def describe(self) -> str:
        parts: list[str] = []
        if self.quarantined_bytes and self.quarantine_error is not None:
            kept = f"; it is kept in {self.quarantine_path}" if self.quarantine_path else ""
            parts.append(
                f"an incomplete last line ({self.quarantined_bytes} bytes) could not be set"
                f" aside: {self.quarantine_error}{kept}. The session is open read-only;"
                " free some space and retry saving to continue it"
            )
        elif self.quarantined_bytes and self.quarantine_path is None:
            parts.append(
                f"an incomplete last line ({self.quarantined_bytes} bytes) is not shown;"
                " the file was not changed"
            )
        elif self.quarantined_bytes:
            parts.append(
                f"an incomplete last line ({self.quarantined_bytes} bytes) was set aside"
                f" to {self.quarantine_path}"
            )
        if self.damaged_lines:
            lines = ", ".join(str(d.line_number) for d in self.damaged_lines[:10])
            more = "" if len(self.damaged_lines) <= 10 else ", ..."
            parts.append(
                f"{len(self.damaged_lines)} damaged line(s) ({lines}{more}) could not be read;"
                " the session is open read-only and the file was not changed"
            )
        return "; ".join(parts)


class ChangedOnDiskError(OSError):
    """The session file is not what this session wrote: another program appended to it,
    rewrote or replaced it. Writing on would interleave two histories, so nothing is
    written until the session is reloaded (``Session.reload_from_disk``)."""


class RemoteError(OSError):
    """An error a database server reported (or not reaching it): described in its own
    words (``strerror``), never as a disk's."""


def describe_os_error(exc: OSError) -> str:
    """A calm, specific sentence for the disk errors people actually meet."""
    if isinstance(exc, RemoteError):
        return f"{exc.strerror} ({errno.errorcode.get(exc.errno or -1, 'error')})"
    reasons = {
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is exhausted",
        errno.EACCES: "permission was denied",
        errno.EPERM: "the operation is not permitted",
        errno.EROFS: "the file system is read-only",
        errno.EIO: "the disk reported an input/output error",
        errno.ENOENT: "the file or its folder no longer exists",
    }
    reason = reasons.get(exc.errno or -1, exc.strerror or str(exc))
    return f"{reason} ({errno.errorcode.get(exc.errno or -1, 'OSError')})"


def changed_on_disk_error(
    where: str, path: str | None, count: int, operation: str, detail: str
) -> SessionWriteError:
    """The error for a session file another program changed (code ``changed_on_disk``)."""
    what = f"{count} unsaved entr{'y is' if count == 1 else 'ies are'}" if count else "nothing"
    return SessionWriteError(
        f"Could not save the session: another program (for example the Pi CLI) changed"
        f" {where} while it was open here ({detail}). Nothing is lost: {what} kept in"
        " memory. Saving again cannot work; reload the session to take in the other"
        " program's entries, and yours are kept as a branch beside them.",
        path=path,
        os_error=None,
        pending_count=count,
        operation=operation,
        code="changed_on_disk",
    )


NEWER_VERSION = "newer_version"
"""`Storage.read_only_code` of a session a newer Desktop Agent wrote: never written here."""


class Storage:
    """Base of every backend: the tree, the unwritten queue, read-only state."""

    writes_off_loop = False
    """Whether an append's write waits on a network (a database server): `Session` then
    adds the entry on the event loop and writes it on a worker thread, so the loop never
    waits for the server. Stores of local files write on the loop (fsync is off it)."""

    def __init__(
        self,
        metadata: SessionMetadata,
        tree: Tree,
        *,
        read_only_reason: str | None = None,
        read_only_code: str = "read_only",
        recovery: RecoveryReport | None = None,
    ) -> None:
        self.metadata = metadata
        self.tree = tree
        self.read_only_reason = read_only_reason
        self.read_only_code = read_only_code
        self.recovery = recovery
        self.pending: list[int] = []
        """Indices (in `tree`) of the entries that are in memory but not written yet."""
        self.closed = False
        self._needs_sync = False

    # ------------------------------------------------------------------ public

    @property
    def read_only(self) -> bool:
        return self.read_only_reason is not None

    def check_open(self) -> None:
        if self.closed:
            raise SessionError("storage", "The session is closed")

    def append(self, entry: Entry, raw: bytes) -> int:
        """Add the entry (its line ``raw``) to the tree, then write every unwritten entry
        in order. Returns its index in the tree.

        On a read-only session the entry is kept in memory and queued, and a
        `SessionWriteError` with code ``read_only``/``locked`` says it was not written.
        """
        index = self.queue(entry, raw)
        self.write_queued("append")
        return index

    def queue(self, entry: Entry, raw: bytes) -> int:
        """The first half of `append`: add the entry to the tree and queue it (no I/O)."""
        self.check_open()
        index = self.tree.add(entry, raw)
        self.pending.append(index)
        return index

    def write_queued(self, operation: str) -> None:
        """The second half of `append`: write what is queued (blocking I/O; stores with
        `writes_off_loop` have it called on a worker thread)."""
        if self.read_only_reason is not None and not self._try_become_writable():
            raise self._read_only_error(operation)
        self._flush(operation)

    def _read_only_error(self, operation: str) -> SessionWriteError:
        count = len(self.pending)
        if self.read_only_code == "changed_on_disk":
            where = self.metadata.path or self.metadata.id
            reason = self.read_only_reason or "another program changed it"
            return changed_on_disk_error(where, self.metadata.path, count, operation, reason)
        code: SessionErrorCode = "locked" if self.read_only_code == "locked" else "read_only"
        return SessionWriteError(
            f"This session is read-only: {self.read_only_reason}. Nothing is lost yet:"
            f" {count} unsaved entr{'y is' if count == 1 else 'ies are'} kept in memory;"
            " save a copy elsewhere to keep them.",
            path=self.metadata.path,
            os_error=None,
            pending_count=count,
            operation=operation,
            code=code,
        )

    def _try_become_writable(self) -> bool:
        """A locked session may become writable when its owner lets go (backends say)."""
        return False

    def sync(self) -> None:
        """Write what is queued, then make it durable (fsync)."""
        if self.closed:
            return
        self._flush("sync")
        if not self._needs_sync:
            return
        try:
            self._fsync()
        except OSError as exc:
            self._on_fsync_failed()
            raise self._write_error("sync", exc) from exc
        self._needs_sync = False

    def retry(self) -> int:
        """Write the queued entries (and sync); returns how many were written."""
        self.check_open()
        if self.read_only_reason is not None and not self._try_become_writable():
            raise self._read_only_error("retry")
        count = len(self.pending)
        self.sync()
        return count

    def close(self) -> None:
        """Sync and release the file; entries that cannot be written raise, kept in memory."""
        if self.closed:
            return
        try:
            if not self.read_only:
                self.sync()
        finally:
            if not self.pending:
                self.closed = True
                self._close()

    def reload_from_disk(self, leaf: ReloadLeaf = "theirs") -> ReloadReport:
        """Take in what another program wrote to the file (JSONL sessions only)."""
        raise SessionError("invalid_argument", "Only session files can be reloaded from disk")

    def pull(self) -> list[int]:
        """Entries another process appended since this read-only session was read (a
        store shared between machines follows its writer); returns their indices in the
        tree. Stores of files: none (blocking I/O: call it off the loop)."""
        return []

    def try_writable(self) -> bool:
        """Whether the session can be written now: a session another process held
        becomes writable here once it lets go (blocking I/O: call it off the loop)."""
        return self.read_only_reason is None or self._try_become_writable()

    def force_close(self) -> None:
        """Release the file even with unwritten entries (they are lost with the object)."""
        self.closed = True
        self._close()

    # --------------------------------------------------------------- internals

    def _flush(self, operation: str) -> None:
        if not self.pending:
            return
        try:
            self._write(self.pending)
        except OSError as exc:
            raise self._write_error(operation, exc) from exc
        self.pending.clear()
        self._needs_sync = True

    def _write_error(self, operation: str, exc: OSError) -> SessionWriteError:
        where = self.metadata.path or self.metadata.id
        count = len(self.pending)
        what = (
            f"{count} entr{'y is' if count == 1 else 'ies are'}" if count else "recent entries are"
        )
        if isinstance(exc, ChangedOnDiskError):
            return changed_on_disk_error(where, self.metadata.path, count, operation, str(exc))
        return SessionWriteError(
            f"Could not save the session to {where}: {describe_os_error(exc)}. "
            f"Nothing is lost yet: {what} kept in memory and will be written on retry.",
            path=self.metadata.path,
            os_error=exc,
            pending_count=count,
            operation=operation,
        )

    # Backends override these.

    def _write(self, indices: list[int]) -> None:
        """Write the entries ``indices`` (all or nothing as far as the file's content is
        concerned)."""

    def _fsync(self) -> None:
        """Make written rows durable."""

    def _on_fsync_failed(self) -> None:
        """After a failed fsync nothing since the last good one may be trusted."""

    def _close(self) -> None:
        """Release resources."""
