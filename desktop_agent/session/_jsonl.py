"""JSONL storage and repo: Pi v3 files, crash-honest (SESSION_FORMAT.md §3-§4, decisions).

Layout: ``<root>/--<encoded cwd>--/<createdAt with ':' '.' -> '-'>_<id>.jsonl``.

Guarantees:
- one ``os.write`` of whole lines per append on an ``O_APPEND`` descriptor kept open;
  ``fsync`` at ``sync()`` and close; a failed write is cut back before the next one;
- one writer per file: a lock on the session file's own descriptor (`_platform`), so a
  symlink or hard link to it is refused as a second writer and no sidecar is left beside
  Pi's files; another opener is read-only;
- a torn last line is moved byte-for-byte to ``<file>.corrupt-<timestamp>`` (synced
  first) and cut; damage anywhere else opens the session read-only, never rewrites it;
- every disk operation goes through a `FileOps` (tests inject faults and power cuts);
- ``delete()`` moves the file into a trash folder it can be restored from.

The header and naming rules are in `_header.py`, the torn-tail quarantine in
`_quarantine.py`, folder listing in `_dirlist.py`, the trash in `_trash.py`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from desktop_agent.session._codec import LineError, entry_from_obj, serialize
from desktop_agent.session._entryindex import EntryIndex
from desktop_agent.session._errors import SessionError, SessionWriteError
from desktop_agent.session._header import (
    LegacyFile,
    header_metadata,
    newer_writer,
    open_error,
    open_for_read,
    parse_header,
)
from desktop_agent.session._ids import new_entry_id, now_iso
from desktop_agent.session._jsonl_read import open_for_append, read_all, read_tree
from desktop_agent.session._migrate import migrate_legacy
from desktop_agent.session._platform import (
    APPEND_FLAGS,
    O_BINARY,
    O_CLOEXEC,
    OS_FILE_OPS,
    FileOps,
    FileStat,
)
from desktop_agent.session._quarantine import QuarantineError, quarantine_tail
from desktop_agent.session._reload import ReloadLeaf, ReloadReport, read_for_reload
from desktop_agent.session._scan import ScanResult
from desktop_agent.session._storage import (
    NEWER_VERSION,
    ChangedOnDiskError,
    DamagedLine,
    RecoveryReport,
    SessionMetadata,
    Storage,
    describe_os_error,
)
from desktop_agent.session._tree import Tree
from desktop_agent.utils.atomic import atomic_write
from desktop_agent.utils.versions import newer_reason


class JsonlStorage(Storage):
    """One open JSONL session file.

    Two descriptors: ``_rfd`` (read-only, held while the session is open; it carries the
    writer lock) and ``_fd`` (``O_APPEND``, only while this process is the writer).
    """

    def __init__(
        self,
        metadata: SessionMetadata,
        tree: Tree,
        *,
        ops: FileOps,
        rfd: int,
        fd: int | None,
        locked: bool,
        size: int,
        header_line: bytes,
        read_only_reason: str | None,
        read_only_code: str = "read_only",
        recovery: RecoveryReport | None = None,
    ) -> None:
        super().__init__(
            metadata,
            tree,
            read_only_reason=read_only_reason,
            read_only_code=read_only_code,
            recovery=recovery,
        )
        self.path = metadata.path or ""
        self._ops = ops
        self._rfd: int | None = rfd
        # Lines are read on worker threads (previews, branch pages) while the loop may
        # close or swap the descriptor: a read between the check and the pread would
        # hit a closed descriptor, or worse a reused number pointing at another file.
        self._rfd_guard = threading.Lock()
        self._fd = fd
        self._locked = locked  # we hold the writer lock (on _rfd)
        self._good_size = size  # bytes known to be whole lines (or the header)
        self._dirty = False  # a write failed part-way: cut back before writing again
        self._rewrite = False  # an fsync failed: rewrite the whole file on retry
        self._identity = ops.fstat(rfd).identity
        self._header_line = header_line
        # The file does not end with "\n" (a header written without it): the first
        # write starts with one, so opening never has to change a byte.
        self._needs_newline = False
        self._torn_unrecovered = False  # a torn tail seen while another process owned it
        self._torn_size: int | None = None  # size with the torn tail, while it waits
        self.scan: ScanResult | None = None
        """What opening read (None for a new file)."""
        self.header: dict[str, Any] = {}
        """The header as read (v1/v2: as Pi's migration leaves it)."""
        self._index: EntryIndex | None = None
        self._indexed: tuple[int, int, int] = (0, 0, 0)  # entries, bytes, previews indexed
        self._lines = 1  # physical lines in the first _good_size bytes
        self._discard = False  # force_close: nothing is saved
        tree.source = self

    # ------------------------------------------------------------- reading lines

    def read_span(self, offset: int, length: int) -> bytes:
        """Bytes of the file for the tree's lines (pread on the read descriptor; after
        close, on a descriptor opened for this read)."""
        ops = self._ops
        try:
            with self._rfd_guard:
                if self._rfd is not None:
                    return ops.pread(self._rfd, length, offset)
            fd = ops.open_regular(self.path)
            try:
                return ops.pread(fd, length, offset)
            finally:
                ops.close(fd)
        except OSError as exc:
            raise SessionError(
                "storage", f"Failed to read session {self.path}: {describe_os_error(exc)}"
            ) from exc

    def whole_file(self, tail: int) -> tuple[FileStat, bytes] | None:
        """The file's stat and its last ``tail`` bytes when the tree holds exactly what
        the file holds: a v3 file read cleanly to its end (no damaged or torn line), at
        its path still, nothing waiting to be written. None otherwise. For the sessions
        index, which then takes a just-opened session's facts from the tree instead of
        reading the file a second time (`SessionIndex.update_file`)."""
        recovery = self.recovery
        if (
            self.metadata.format_version != 3
            or self.pending
            or self._dirty
            or self._needs_newline
            or self._torn_unrecovered
            or self.tree.damaged
            or (recovery is not None and (recovery.damaged or recovery.quarantined_bytes > 0))
        ):
            return None
        ops = self._ops
        with self._rfd_guard:
            if self._rfd is None:
                return None
            try:
                st = ops.fstat(self._rfd)
                if st.size != self._good_size or ops.stat(self.path).identity != st.identity:
                    return None
                start = max(0, st.size - tail)
                return st, ops.pread(self._rfd, st.size - start, start)
            except OSError:
                return None

    def changed_error(self, detail: str) -> SessionError:
        return SessionError(
            "changed_on_disk",
            f"The session file {self.path} was changed by another program ({detail});"
            " reload the session to take in what it wrote",
        )

    # ------------------------------------------------------------------- open

    @classmethod
    def open(
        cls,
        path: str,
        *,
        lock: bool = True,
        ops: FileOps = OS_FILE_OPS,
        index: EntryIndex | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> JsonlStorage:
        """Open a session file (section 3.1 plus our recovery rules).

        Raises only `SessionError`: ``not_found`` (missing, or a folder), ``invalid_session``
        (no valid header; not a regular file; a symlink loop), ``storage`` (the disk failed
        while reading). Anything else opens, read-only when the file cannot be written
        safely, with ``read_only_reason`` and `RecoveryReport` saying why. Opening changes
        no byte of the file, except cutting a torn tail that was first copied to a synced
        ``.corrupt-*`` sidecar. ``lock=False`` opens for reading only (never locks or
        writes, a torn tail is left in place). With an `EntryIndex`, an unchanged file is
        not read again and a grown one only from where it grew.
        """
        rfd = open_for_read(path, ops)
        fd: int | None = None
        try:
            locked = lock and ops.try_lock(rfd)
            try:
                st = ops.fstat(rfd)
                try:
                    tree, scanned, fresh = read_tree(ops, rfd, path, st, index, progress)
                except LegacyFile:
                    return cls._open_legacy(path, ops, rfd, st, locked)
                torn = (
                    ops.pread(rfd, st.size - scanned.torn_offset, scanned.torn_offset)
                    if scanned.torn_offset is not None
                    else b""
                )
            except OSError as exc:
                raise open_error(path, exc) from exc
            assert scanned.header is not None
            read_only_reason: str | None = None
            read_only_code = "read_only"
            if not lock:
                read_only_reason = "it was opened for reading only"
            elif not locked:
                read_only_reason = "it is open in another Desktop Agent window or process"
                read_only_code = "locked"
            elif (newer := newer_writer(scanned.header)) is not None:
                read_only_reason = newer_reason("it", newer)  # nothing is written, ever
                read_only_code = NEWER_VERSION
            elif scanned.damaged:
                read_only_reason = "parts of the file are damaged"
            else:
                fd, read_only_reason = open_for_append(ops, path, st)
            size = scanned.clean_end  # the whole lines; a torn tail is not ours to write
            quarantined = len(torn)
            quarantine_path: str | None = None
            quarantine_error: str | None = None
            if scanned.torn_offset is not None and fd is not None:
                try:
                    quarantine_path = quarantine_tail(ops, path, fd, torn, scanned.torn_offset)
                except QuarantineError as exc:
                    quarantine_error = exc.reason
                    quarantine_path = exc.kept
                    ops.close(fd)
                    fd = None
                    read_only_reason = (
                        f"an incomplete last line could not be set aside ({exc.reason})"
                    )
            recovery = None
            if quarantined or scanned.damaged:
                recovery = RecoveryReport(
                    quarantined_bytes=quarantined,
                    quarantine_path=quarantine_path,
                    damaged_lines=tuple(scanned.damaged),
                    quarantine_error=quarantine_error,
                )
            storage = cls(
                header_metadata(scanned.header, path),
                tree,
                ops=ops,
                rfd=rfd,
                fd=fd,
                locked=locked,
                size=size,
                header_line=scanned.header_raw + b"\n",
                read_only_reason=read_only_reason,
                read_only_code=read_only_code,
                recovery=recovery,
            )
            storage._needs_newline = size > 0 and (
                ops.pread(rfd, 1, size - 1) != b"\n" if scanned.torn_offset is None else False
            )
            storage.scan = scanned
            storage.header = scanned.header
            storage._index = index
            storage._lines = scanned.lines
            # The index is written when the session closes (not while opening, which
            # someone waits for) if the file or what is known of it changed.
            if not (fresh or quarantine_path is not None):
                storage._indexed = storage._index_state()
            if scanned.torn_offset is not None and fd is None:
                if read_only_code == "locked":
                    storage._torn_unrecovered = True
                elif quarantine_error is not None and quarantine_path is None:
                    storage._torn_size = st.size
            return storage
        except BaseException:
            if fd is not None:
                ops.close(fd)
            ops.unlock(rfd)
            ops.close(rfd)
            raise

    @classmethod
    def _open_legacy(
        cls, path: str, ops: FileOps, rfd: int, st: FileStat, locked: bool
    ) -> JsonlStorage:
        """A v1/v2 file (an older Pi format), read through Pi's migration in memory.

        Never rewritten (the Pi CLI would migrate it in place): it opens read-only, its
        migrated lines stay in memory, and it gets no entry index;
        `JsonlSessionRepo.convert` writes a v3 copy beside it.
        """
        data = read_all(ops, rfd, st.size)
        migrated = migrate_legacy(path, data)
        pieces = migrated.data.split(b"\n")
        header_raw = pieces[0]
        header = parse_header(header_raw, path, allow_legacy=True)
        tree = Tree()
        damaged: list[DamagedLine] = []
        offset = len(header_raw) + 1
        for number, raw in enumerate(pieces[1:], start=2):
            if raw.strip():
                try:
                    tree.add_line(raw)
                except LineError as exc:
                    damaged.append(DamagedLine(number, offset, exc.reason, raw))
            offset += len(raw) + 1
        damaged = migrated.original_damage(damaged)
        tree.damaged = bool(damaged)
        storage = cls(
            header_metadata(header, path, migrated.version),
            tree,
            ops=ops,
            rfd=rfd,
            fd=None,
            locked=locked,
            size=st.size,
            header_line=header_raw + b"\n",
            read_only_reason=(
                f"it is in an older Pi format (version {migrated.version}); convert it to"
                " the current format to continue it"
            ),
            recovery=RecoveryReport(damaged_lines=tuple(damaged)) if damaged else None,
        )
        storage.header = header
        storage._indexed = storage._index_state()
        return storage

    @classmethod
    def create(
        cls, path: str, header: dict[str, Any], *, ops: FileOps = OS_FILE_OPS
    ) -> JsonlStorage:
        """Write a new file holding just the header; never overwrites an existing file."""
        directory = os.path.dirname(path)
        try:
            ops.makedirs(directory)
        except OSError as exc:
            raise SessionError(
                "storage", f"Failed to create {directory}: {describe_os_error(exc)}"
            ) from exc
        line = serialize(header) + b"\n"
        rfd: int | None = None
        fd: int | None = None
        try:
            rfd = ops.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | O_BINARY | O_CLOEXEC)
            if not ops.try_lock(rfd):  # pragma: no cover - nobody else knows the name yet
                raise OSError(errno.EAGAIN, "the new session file is locked by another process")
            ops.write_all(rfd, line)
            ops.fsync(rfd)
            ops.fsync_dir(directory)
            fd = ops.open(path, APPEND_FLAGS)
        except OSError as exc:
            for handle in (fd, rfd):
                if handle is not None:
                    with contextlib.suppress(OSError):
                        ops.close(handle)
            if rfd is not None:
                with contextlib.suppress(OSError):
                    ops.unlink(path)
            if isinstance(exc, FileExistsError):
                raise SessionError("storage", f"Session file {path} already exists") from exc
            raise SessionError(
                "storage", f"Failed to create session {path}: {describe_os_error(exc)}"
            ) from exc
        storage = cls(
            header_metadata(header, path),
            Tree(),
            ops=ops,
            rfd=rfd,
            fd=fd,
            locked=True,
            size=len(line),
            header_line=line,
            read_only_reason=None,
        )
        storage.header = dict(header)
        return storage

    # ------------------------------------------------------------- writing

    def _try_become_writable(self) -> bool:
        """Leave read-only mode when what caused it is gone.

        A session locked by another process becomes ours once it lets go, provided the
        file is still exactly what we read (nobody appended meanwhile). A torn tail that
        could not be set aside (full disk) is set aside now, if the file is unchanged.
        """
        if self.read_only_code == "locked":
            return self._take_over()
        if self._torn_size is not None:
            return self._retry_quarantine()
        return False

    def _take_over(self) -> bool:
        ops = self._ops
        if self._torn_unrecovered or self._rfd is None:
            return False
        if not ops.try_lock(self._rfd):
            return False
        try:
            st = ops.fstat(self._rfd)
            on_disk = ops.stat(self.path)
            if st.size != self._good_size or on_disk.identity != st.identity:
                ops.unlock(self._rfd)
                self.read_only_reason = "another process changed it while it was open here"
                self.read_only_code = "changed_on_disk"
                return False
            fd, reason = open_for_append(ops, self.path, st)
        except OSError:
            ops.unlock(self._rfd)
            return False
        if fd is None:
            ops.unlock(self._rfd)
            self.read_only_reason = reason
            self.read_only_code = "read_only"
            return False
        self._fd = fd
        self._locked = True
        self.read_only_reason = None
        self.read_only_code = "read_only"
        return True

    def _retry_quarantine(self) -> bool:
        ops = self._ops
        assert self._rfd is not None and self._torn_size is not None
        try:
            st = ops.fstat(self._rfd)
            if st.size != self._torn_size:
                return False
            fd, reason = open_for_append(ops, self.path, st)
            if fd is None:
                self.read_only_reason = reason
                return False
            data = ops.pread(self._rfd, st.size - self._good_size, self._good_size)
        except OSError:
            return False
        try:
            sidecar = quarantine_tail(ops, self.path, fd, data, self._good_size)
        except QuarantineError as exc:
            ops.close(fd)
            self.read_only_reason = f"an incomplete last line could not be set aside ({exc.reason})"
            return False
        report = self.recovery or RecoveryReport()
        self.recovery = RecoveryReport(
            quarantined_bytes=report.quarantined_bytes,
            quarantine_path=sidecar,
            damaged_lines=report.damaged_lines,
        )
        self._fd = fd
        self._torn_size = None
        self.read_only_reason = None
        return True

    def _check_identity(self) -> None:
        assert self._fd is not None
        ops = self._ops
        st = ops.fstat(self._fd)
        if st.nlink == 0:
            raise FileNotFoundError(
                2, "the session file was deleted while it was open; not recreating it"
            )
        try:
            on_disk = ops.stat(self.path)
        except FileNotFoundError as exc:
            raise FileNotFoundError(
                2, "the session file was moved or deleted while it was open"
            ) from exc
        if on_disk.identity != st.identity:
            raise ChangedOnDiskError("the file was replaced by another file")
        if st.size != self._good_size:
            if st.size > self._good_size and self._dirty:
                ops.ftruncate(self._fd, self._good_size)
            else:
                grown = st.size - self._good_size
                raise ChangedOnDiskError(
                    f"{grown} bytes were added to it"
                    if grown > 0
                    else f"it is {-grown} bytes shorter than what was written here"
                )
        self._dirty = False

    def _write(self, indices: list[int]) -> None:
        if self._rewrite:
            self._rewrite_file()
            return
        if self._fd is None:
            raise OSError(9, "the session file is not open for writing")
        tree = self.tree
        lines = [tree.line(i) for i in indices]  # pinned: not in the file yet
        data = b"".join([raw + b"\n" for raw in lines])
        lead = b"\n" if self._needs_newline else b""
        self._check_identity()
        try:
            self._ops.write_all(self._fd, lead + data)
        except OSError:
            self._dirty = True
            with contextlib.suppress(OSError):
                self._ops.ftruncate(self._fd, self._good_size)
                self._dirty = False
            raise
        offset = self._good_size + len(lead)
        for i, raw in zip(indices, lines, strict=True):
            tree.set_location(i, offset, len(raw))
            offset += len(raw) + 1
        self._good_size = offset
        self._lines += len(indices)
        self._needs_newline = False

    def _fsync(self) -> None:
        if self._rewrite:
            self._rewrite_file()
            return
        if self._fd is not None:
            self._ops.fsync(self._fd)
            self.tree.release()  # durable now: the lines are read back from the file

    def _on_fsync_failed(self) -> None:
        # Linux may drop dirty pages after a failed fsync and report success next time,
        # so a retry rewrites the whole file from memory instead of fsyncing again.
        self._rewrite = True

    def _rewrite_file(self) -> None:
        """Write header + every entry to a temp file, fsync, rename over, fsync the dir.

        The temp file is locked before the rename, so the lock moves with the content.
        If the rename or the directory fsync fails, the next write or sync rewrites again.
        """
        ops = self._ops
        directory = os.path.dirname(self.path)
        tmp = f"{self.path}.tmp-{os.getpid()}-{time.monotonic_ns()}"
        tree = self.tree
        lines = list(tree.lines(range(len(tree))))  # synced ones from the old file
        data = self._header_line + b"".join([raw + b"\n" for raw in lines])
        rfd = ops.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | O_BINARY | O_CLOEXEC)
        fd: int | None = None
        try:
            ops.write_all(rfd, data)
            ops.fsync(rfd)
            if not ops.try_lock(rfd):  # pragma: no cover - a fresh private file
                raise OSError(errno.EAGAIN, "cannot lock the rewritten session file")
            ops.replace(tmp, self.path)
        except OSError:
            ops.close(rfd)
            with contextlib.suppress(OSError):
                ops.unlink(tmp)
            raise
        try:
            ops.fsync_dir(directory)
            fd = ops.open(self.path, APPEND_FLAGS)
        except OSError:
            # The new content is in place and locked; the old descriptors are stale.
            self._swap_descriptors(rfd, None)
            raise
        self._swap_descriptors(rfd, fd)
        offset = len(self._header_line)
        for i, raw in enumerate(lines):
            tree.set_location(i, offset, len(raw))
            offset += len(raw) + 1
        tree.release()
        self._good_size = len(data)
        self._lines = 1 + len(lines)
        self._rewrite = False
        self._dirty = False
        self._needs_newline = False

    def _swap_descriptors(self, rfd: int, fd: int | None) -> None:
        with self._rfd_guard:
            for old in (self._fd, self._rfd):
                if old is not None:
                    with contextlib.suppress(OSError):
                        self._ops.close(old)
            self._rfd, self._fd = rfd, fd
        self._identity = self._ops.fstat(rfd).identity

    def reload_from_disk(self, leaf: ReloadLeaf = "theirs") -> ReloadReport:
        """Take in the file as another program left it; keep ours as a branch
        (`desktop_agent.session._reload`). Our kept entries are queued and written; a
        failed write is reported in the result, the entries staying queued."""
        self.check_open()
        ops = self._ops
        took = read_for_reload(
            ops, self.path, self.metadata.id, self.tree, our_rfd=self._rfd, locked=self._locked
        )
        rfd, fd, disk, found, kept = took.rfd, took.fd, took.disk, took.found, took.kept
        our_leaf, their_leaf = self.tree.leaf_id, disk.leaf_id
        # The file as it is now becomes this session's; then ours go after it.
        if took.same_locked_file:
            # Our read descriptor holds the writer lock on this very file: keep it.
            ops.close(rfd)
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    ops.close(self._fd)
            self._fd = fd
        else:
            if self._locked and self._rfd is not None:
                ops.unlock(self._rfd)
            self._swap_descriptors(rfd, fd)
        self._locked = True
        disk.source = self
        self.tree = disk
        self._good_size = found.clean_end
        self._lines = found.lines
        self._needs_newline = took.needs_newline
        self._dirty = self._rewrite = self._torn_unrecovered = False
        self._torn_size = None
        assert found.header is not None
        self._header_line = found.header_raw + b"\n"
        self.header = found.header
        self.scan = found
        self._indexed = (0, 0, 0)  # the entry index is written again at close
        self.read_only_reason = None
        self.read_only_code = "read_only"
        self.pending = []
        for entry, raw in kept:
            self.pending.append(disk.add(entry, raw))
        if our_leaf is not None:
            our_leaf = took.renamed.get(our_leaf, our_leaf)
        want = their_leaf if leaf == "theirs" or not kept else our_leaf
        if disk.leaf_id != want:
            obj = {
                "type": "leaf",
                "id": new_entry_id(disk.by_id),
                "parentId": want,
                "timestamp": now_iso(),
                "targetId": want,
            }
            line = serialize(obj)
            self.pending.append(disk.add(entry_from_obj(obj), line))
        error: SessionWriteError | None = None
        try:
            self.sync()
        except SessionWriteError as exc:
            error = exc
        first_parent = kept[0][0].parent_id if kept else None
        return ReloadReport(
            taken_in=took.taken_in,
            kept=tuple(e.id for e, _ in kept),
            renamed=took.renamed,
            branch_point=first_parent or None,
            our_leaf=our_leaf,
            their_leaf=their_leaf,
            leaf=disk.leaf_id,
            error=error,
        )

    def save_copy(self, dest: str) -> None:
        """Write everything in memory (written or not) to a new file at ``dest``."""
        tree = self.tree
        data = self._header_line + tree.lines_bytes(range(len(tree)))
        atomic_write(dest, data, mode=0o644)

    def attach_index(self, index: EntryIndex | None) -> None:
        """Keep ``index`` up to date when this (new) session closes."""
        self._index = index

    def _save_index(self) -> None:
        """Write the entry index for what the file holds now (never raises)."""
        index, tree = self._index, self.tree
        if index is None or self._rfd is None or self.pending:
            return
        damaged = list(self.recovery.damaged_lines) if self.recovery is not None else []
        saved = index.save(
            self.path,
            self._rfd,
            tree,
            header=self._header_line[:-1],
            clean_end=self._good_size,
            lines=self._lines,
            damaged=damaged,
        )
        if saved:
            self._indexed = self._index_state()

    def _index_state(self) -> tuple[int, int, int]:
        return (len(self.tree), self._good_size, len(self.tree.previews))

    def force_close(self) -> None:
        self._discard = True
        super().force_close()

    def _close(self) -> None:
        ops = self._ops
        if not self._discard and self._indexed != self._index_state():
            self._save_index()
        if self._fd is not None:
            with contextlib.suppress(OSError):
                ops.close(self._fd)
            self._fd = None
        with self._rfd_guard:
            if self._rfd is not None:
                if self._locked:
                    ops.unlock(self._rfd)
                with contextlib.suppress(OSError):
                    ops.close(self._rfd)
                self._rfd = None
        self._locked = False
