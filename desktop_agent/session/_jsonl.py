"""JSONL storage and repo: Pi v3 files, crash-honest (SESSION_FORMAT.md §3-§4, decisions).

Layout: ``<root>/--<encoded cwd>--/<createdAt with ':' '.' -> '-'>_<id>.jsonl``.

Guarantees:
- one ``os.write`` of whole lines per append on an ``O_APPEND`` descriptor kept open;
  ``fsync`` at ``sync()`` and close; a failed write is cut back before the next one;
- one writer per file (advisory lock on ``<file>.lock``); another opener is read-only;
- a torn last line is moved byte-for-byte to ``<file>.corrupt-<timestamp>`` (synced
  first) and cut; damage anywhere else opens the session read-only, never rewrites it;
- ``delete()`` moves the file into a trash folder it can be restored from.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_agent.session._errors import SessionError
from desktop_agent.session._ids import iso_to_ms, now_iso, uuidv7
from desktop_agent.session._platform import fsync_dir, fsync_fd, try_lock, unlock
from desktop_agent.session._storage import (
    DamagedLine,
    RecoveryReport,
    SessionMetadata,
    Storage,
    describe_os_error,
)
from desktop_agent.session._tree import LineError, Row, Tree, lines_of, parse_line, serialize
from desktop_agent.utils.atomic import atomic_write, write_all

_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$", re.IGNORECASE)


def encode_cwd(cwd: str) -> str:
    """Pi's directory name for a cwd: drop one leading slash, ``/\\:`` -> ``-``, wrap."""
    stripped = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + re.sub(r"[/\\:]", "-", stripped) + "--"


def check_session_id(session_id: str) -> None:
    """Refuse ids that could escape the sessions folder or are not portable file names."""
    if not _SAFE_ID.match(session_id) or _WINDOWS_RESERVED.match(session_id):
        raise SessionError(
            "invalid_argument",
            f"Invalid session id {session_id!r}: use letters, digits, '.', '_' or '-'"
            " (at most 128 characters, not starting with '.')",
        )


def _invalid(path: str, reason: str) -> SessionError:
    return SessionError("invalid_session", f"Invalid JSONL session file {path}: {reason}")


def parse_header(line: bytes, path: str) -> dict[str, Any]:
    """Validate a header line with Pi's checks and messages."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise _invalid(path, "first line is not a valid session header") from exc
    if not isinstance(obj, dict) or obj.get("type") != "session":
        raise _invalid(path, "first line is not a valid session header")
    version = obj.get("version")
    if version != 3 or isinstance(version, bool) or not isinstance(version, int | float):
        raise _invalid(path, "unsupported session version")
    for key, what in (("id", "id"), ("timestamp", "timestamp"), ("cwd", "cwd")):
        value = obj.get(key)
        if not isinstance(value, str) or not value:
            raise _invalid(path, f"session header is missing {what}")
    if "parentSession" in obj and not isinstance(obj["parentSession"], str):
        raise _invalid(path, "session header parentSession must be a string")
    return obj


def header_metadata(obj: dict[str, Any], path: str) -> SessionMetadata:
    meta = obj.get("metadata")
    return SessionMetadata(
        id=obj["id"],
        created_at=obj["timestamp"],
        cwd=obj["cwd"],
        path=path,
        parent_session_path=obj.get("parentSession"),
        metadata=meta if isinstance(meta, dict) else None,
    )


def read_header(path: str) -> SessionMetadata:
    """Read only the first line (as Pi's listing does: a blank first line is no header)."""
    with open(path, "rb") as fh:
        first = fh.readline(1 << 20)
    if not first.strip():
        raise _invalid(path, "missing session header")
    return header_metadata(parse_header(first.rstrip(b"\r\n"), path), path)


@dataclass
class _Loaded:
    header: dict[str, Any]
    header_raw: bytes
    tree: Tree
    damaged: list[DamagedLine]
    torn_offset: int | None  # where the torn last line starts
    size: int


def _load(path: str, data: bytes) -> _Loaded:
    """Parse a whole file; a torn last line and mid-file damage are reported, not fatal."""
    # Physical lines with their offsets; the piece after the last "\n" is unterminated.
    starts: list[int] = []
    pieces = data.split(b"\n")
    offset = 0
    for piece in pieces:
        starts.append(offset)
        offset += len(piece) + 1
    terminated = len(pieces) - 1  # pieces[:terminated] ended with "\n"

    # The header: first non-blank line.
    index = 0
    while index < len(pieces) and not pieces[index].strip():
        index += 1
    if index >= len(pieces):
        raise _invalid(path, "missing session header")
    header_raw = pieces[index].rstrip(b"\r")
    header = parse_header(header_raw, path)
    index += 1

    # The last non-blank line is a torn-tail candidate when it is unterminated or bad.
    last = len(pieces) - 1
    while last >= index and not pieces[last].strip():
        last -= 1

    tree = Tree()
    damaged: list[DamagedLine] = []
    torn_offset: int | None = None
    # Rows hold no reference cycles: pausing the cyclic GC while 100k of them are made
    # saves a third of the load time.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        torn_offset = _load_rows(pieces, starts, index, last, terminated, tree, damaged)
    finally:
        if gc_was_enabled:
            gc.enable()
    if torn_offset is None and pieces[-1] and len(pieces) - 1 >= index:
        # Only whitespace after the last newline: an unterminated run all the same.
        torn_offset = starts[-1]
    return _Loaded(header, header_raw, tree, damaged, torn_offset, len(data))


def _load_rows(
    pieces: list[bytes],
    starts: list[int],
    index: int,
    last: int,
    terminated: int,
    tree: Tree,
    damaged: list[DamagedLine],
) -> int | None:
    """Parse entry lines ``index..last`` into ``tree``; returns the torn tail's offset."""
    torn_offset: int | None = None
    for i in range(index, last + 1):
        raw = pieces[i]
        if not raw.strip():
            continue
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if i == last and i >= terminated:
            torn_offset = starts[i]
            break
        try:
            row = parse_line(raw)
        except LineError as exc:
            if i == last:
                torn_offset = starts[i]
                break
            damaged.append(DamagedLine(i + 1, starts[i], exc.reason, pieces[i]))
            continue
        tree.add(row)
    return torn_offset


class JsonlStorage(Storage):
    """One open JSONL session file."""

    def __init__(
        self,
        metadata: SessionMetadata,
        tree: Tree,
        *,
        fd: int | None,
        lock_fd: int | None,
        size: int,
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
        self._fd = fd
        self._lock_fd = lock_fd
        self._good_size = size  # bytes known to be whole lines
        self._dirty = False  # a write failed part-way: cut back before writing again
        self._rewrite = False  # an fsync failed: rewrite the whole file on retry
        self._identity = os.fstat(fd)[1:3] if fd is not None else None  # (ino, dev)
        self._header_line: bytes | None = None
        self._torn_unrecovered = False  # a torn tail seen while another process owned it

    # ------------------------------------------------------------------- open

    @classmethod
    def open(cls, path: str, *, lock: bool = True) -> JsonlStorage:
        """Open a session file (section 3.1 plus our recovery rules)."""
        lock_fd = None
        read_only_reason: str | None = None
        read_only_code = "read_only"
        if lock:
            lock_fd, held = _acquire_lock(path)
            if not held:
                read_only_reason = "it is open in another Desktop Agent window or process"
                read_only_code = "locked"
        try:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except FileNotFoundError as exc:
                raise SessionError("not_found", f"Session not found: {path}") from exc
            except IsADirectoryError as exc:
                raise SessionError("not_found", f"Session not found: {path}") from exc
            except OSError as exc:
                raise SessionError(
                    "storage", f"Failed to read session {path}: {describe_os_error(exc)}"
                ) from exc
            loaded = _load(path, data)
            metadata = header_metadata(loaded.header, path)
            quarantine_path: str | None = None
            quarantined = 0
            size = loaded.size
            if loaded.damaged and read_only_reason is None:
                read_only_reason = "parts of the file are damaged"
            if loaded.torn_offset is not None:
                quarantined = loaded.size - loaded.torn_offset
                if read_only_reason is None:
                    quarantine_path = _quarantine(path, data, loaded.torn_offset)
                    size = loaded.torn_offset
            recovery = None
            if quarantined or loaded.damaged:
                recovery = RecoveryReport(
                    quarantined_bytes=quarantined,
                    quarantine_path=quarantine_path,
                    damaged_lines=tuple(loaded.damaged),
                )
            fd = None
            if read_only_reason is None:
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | _O_BINARY | _O_CLOEXEC)
                if data and not data[:size].endswith(b"\n"):
                    # A header or last line without its newline (written by another
                    # tool): terminate it so our first line does not join it.
                    os.write(fd, b"\n")
                    size += 1
            storage = cls(
                metadata,
                loaded.tree,
                fd=fd,
                lock_fd=lock_fd,
                size=size,
                read_only_reason=read_only_reason,
                read_only_code=read_only_code,
                recovery=recovery,
            )
            storage._header_line = loaded.header_raw + b"\n"
            storage._torn_unrecovered = loaded.torn_offset is not None and fd is None
            return storage
        except BaseException:
            if lock_fd is not None:
                unlock(lock_fd)
                os.close(lock_fd)
            raise

    @classmethod
    def create(cls, path: str, header: dict[str, Any]) -> JsonlStorage:
        """Write a new file holding just the header; never overwrites an existing file."""
        directory = os.path.dirname(path)
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise SessionError(
                "storage", f"Failed to create {directory}: {describe_os_error(exc)}"
            ) from exc
        lock_fd, held = _acquire_lock(path)
        if not held:
            os.close(lock_fd)
            raise SessionError("locked", f"Session file {path} is locked by another process")
        line = serialize(header) + b"\n"
        fd = None
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _O_BINARY | _O_CLOEXEC
            fd = os.open(path, flags, 0o644)
            _write_all(fd, line)
            fsync_fd(fd)
            fsync_dir(directory)
        except OSError as exc:
            if fd is not None:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(path)
            unlock(lock_fd)
            os.close(lock_fd)
            if isinstance(exc, FileExistsError):
                raise SessionError("storage", f"Session file {path} already exists") from exc
            raise SessionError(
                "storage", f"Failed to create session {path}: {describe_os_error(exc)}"
            ) from exc
        storage = cls(
            header_metadata(header, path),
            Tree(),
            fd=fd,
            lock_fd=lock_fd,
            size=len(line),
            read_only_reason=None,
        )
        storage._header_line = line
        return storage

    # ------------------------------------------------------------- writing

    def _try_become_writable(self) -> bool:
        """A session that was locked by another process becomes ours once it lets go,
        provided the file is still exactly what we read (nobody appended meanwhile)."""
        if self.read_only_code != "locked" or self._torn_unrecovered:
            return False
        if self._lock_fd is None:
            return False
        if not try_lock(self._lock_fd):
            return False
        try:
            st = os.stat(self.path)
            if st.st_size != self._good_size:
                unlock(self._lock_fd)
                self.read_only_reason = (
                    "another process changed it while it was open here; save a copy elsewhere"
                )
                self.read_only_code = "read_only"
                return False
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | _O_BINARY | _O_CLOEXEC)
        except OSError:
            unlock(self._lock_fd)
            return False
        self._identity = os.fstat(self._fd)[1:3]
        self.read_only_reason = None
        self.read_only_code = "read_only"
        return True

    def _check_identity(self) -> None:
        assert self._fd is not None
        st = os.fstat(self._fd)
        if st.st_nlink == 0:
            raise FileNotFoundError(
                2, "the session file was deleted while it was open; not recreating it"
            )
        try:
            on_disk = os.stat(self.path)
        except FileNotFoundError as exc:
            raise FileNotFoundError(
                2, "the session file was moved or deleted while it was open"
            ) from exc
        if (on_disk.st_ino, on_disk.st_dev) != (st.st_ino, st.st_dev):
            raise FileExistsError(17, "the session file was replaced by another file")
        if st.st_size != self._good_size:
            if st.st_size > self._good_size and self._dirty:
                os.ftruncate(self._fd, self._good_size)
            else:
                raise OSError(
                    5, "the session file was changed on disk by another program (size differs)"
                )
        self._dirty = False

    def _write(self, rows: list[Row]) -> None:
        if self._fd is None:
            raise OSError(9, "the session file is not open for writing")
        if self._rewrite:
            self._rewrite_file()
            return
        data = lines_of(rows)
        self._check_identity()
        try:
            _write_all(self._fd, data)
        except OSError:
            self._dirty = True
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._good_size)
                self._dirty = False
            raise
        self._good_size += len(data)

    def _fsync(self) -> None:
        if self._fd is None:
            return
        if self._rewrite:
            self._rewrite_file()
            return
        fsync_fd(self._fd)

    def _on_fsync_failed(self) -> None:
        # Linux may drop dirty pages after a failed fsync and report success next time,
        # so a retry rewrites the whole file from memory instead of fsyncing again.
        self._rewrite = True

    def _rewrite_file(self) -> None:
        """Write header + every entry to a new file that replaces this one atomically."""
        assert self._fd is not None
        data = (self._header_line or b"") + lines_of(self.tree.rows)
        atomic_write(self.path, data, mode=0o644)
        os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | _O_BINARY | _O_CLOEXEC)
        self._good_size = len(data)
        self._identity = os.fstat(self._fd)[1:3]
        self._rewrite = False
        self._dirty = False

    def save_copy(self, dest: str) -> None:
        """Write everything in memory (written or not) to a new file at ``dest``."""
        header = self._header_line or b""
        data = header + lines_of(self.tree.rows)
        atomic_write(dest, data, mode=0o644)

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            unlock(self._lock_fd)
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)
            self._lock_fd = None


def _acquire_lock(path: str) -> tuple[int, bool]:
    lock_path = path + ".lock"
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | _O_CLOEXEC, 0o644)
    except OSError:
        # A read-only folder: nobody can write the session, so no lock is needed to
        # read it; the storage will report its write failures.
        fd = os.open(os.devnull, os.O_RDONLY)
        return fd, True
    return fd, try_lock(fd)


def _quarantine(path: str, data: bytes, offset: int) -> str:
    """Move the torn tail to a synced sidecar, then cut the file back to ``offset``."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    sidecar = f"{path}.corrupt-{stamp}"
    n = 1
    while os.path.exists(sidecar):
        n += 1
        sidecar = f"{path}.corrupt-{stamp}-{n}"
    fd = os.open(sidecar, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY | _O_CLOEXEC, 0o644)
    try:
        _write_all(fd, data[offset:])
        fsync_fd(fd)
    finally:
        os.close(fd)
    fsync_dir(os.path.dirname(path) or ".")
    fd = os.open(path, os.O_WRONLY | _O_BINARY | _O_CLOEXEC)
    try:
        os.ftruncate(fd, offset)
        fsync_fd(fd)
    finally:
        os.close(fd)
    return sidecar


_write_all = write_all  # the one write loop; a module global, so tests can inject faults


def session_file_name(created_at: str, session_id: str) -> str:
    return f"{created_at.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


@dataclass(frozen=True)
class TrashItem:
    """A deleted session waiting in the trash."""

    trash_path: str
    original_path: str
    deleted_at: str
    session_id: str


@dataclass(frozen=True)
class ListProblem:
    """A file ``list()`` could not read; it is reported, never hidden or deleted."""

    path: str
    reason: str


class SessionList(list[SessionMetadata]):
    """``list()``'s result: the sessions, plus the files that could not be read."""

    problems: list[ListProblem]

    def __init__(self, items: list[SessionMetadata], problems: list[ListProblem]) -> None:
        super().__init__(items)
        self.problems = problems


def list_dir_sessions(root: str, cwd: str | None) -> SessionList:
    """Headers of every session file under ``root`` (Pi's rules), newest first."""
    items: list[SessionMetadata] = []
    problems: list[ListProblem] = []
    try:
        if cwd is not None:
            dirs = [os.path.join(root, encode_cwd(cwd))]
        else:
            with os.scandir(root) as it:
                dirs = [e.path for e in it if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return SessionList([], [])
    except OSError as exc:
        return SessionList([], [ListProblem(root, describe_os_error(exc))])
    for directory in dirs:
        try:
            with os.scandir(directory) as it:
                files = [
                    e.path
                    for e in it
                    if e.name.endswith(".jsonl") and not e.is_dir(follow_symlinks=True)
                ]
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(ListProblem(directory, describe_os_error(exc)))
            continue
        for path in files:
            try:
                items.append(read_header(path))
            except SessionError as exc:
                problems.append(ListProblem(path, exc.message))
            except OSError as exc:
                problems.append(ListProblem(path, describe_os_error(exc)))
    keyed = [(iso_to_ms(m.created_at), i, m) for i, m in enumerate(items)]
    keyed.sort(key=lambda k: (k[0] is not None, k[0] or 0, -k[1]), reverse=True)
    return SessionList([m for _, _, m in keyed], problems)


def new_header(
    *,
    cwd: str,
    session_id: str | None,
    parent_session_path: str | None,
    metadata: dict[str, Any] | None,
) -> dict[str, Any]:
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": session_id or uuidv7(),
        "timestamp": now_iso(),
        "cwd": cwd,
    }
    if parent_session_path is not None:
        header["parentSession"] = parent_session_path
    if metadata is not None:
        header["metadata"] = metadata
    return header


def move_to_trash(path: str, trash_root: str) -> TrashItem | None:
    """Move a session file (and its sidecars) into the trash; None if it is missing."""
    if not os.path.exists(path):
        return None
    deleted_at = now_iso()
    folder = os.path.join(trash_root, deleted_at.replace(":", "-").replace(".", "-"))
    n = 1
    while os.path.exists(folder):
        n += 1
        folder = os.path.join(trash_root, f"{deleted_at.replace(':', '-')}-{n}")
    os.makedirs(folder)
    dest = os.path.join(folder, os.path.basename(path))
    try:
        session_id = read_header(path).id
    except (SessionError, OSError):
        session_id = ""
    manifest = {"originalPath": path, "deletedAt": deleted_at, "sessionId": session_id}
    atomic_write(os.path.join(folder, "trash.json"), json.dumps(manifest).encode(), mode=0o644)
    shutil.move(path, dest)
    fsync_dir(folder)
    fsync_dir(os.path.dirname(path))
    with contextlib.suppress(OSError):
        os.unlink(path + ".lock")
    return TrashItem(dest, path, deleted_at, session_id)


def list_trash(trash_root: str) -> list[TrashItem]:
    items: list[TrashItem] = []
    root = Path(trash_root)
    if not root.is_dir():
        return items
    for manifest in sorted(root.glob("*/trash.json"), reverse=True):
        try:
            info = json.loads(manifest.read_bytes())
            files = [p for p in manifest.parent.iterdir() if p.name.endswith(".jsonl")]
        except (OSError, ValueError):
            continue
        for f in files:
            items.append(
                TrashItem(
                    str(f),
                    str(info.get("originalPath", "")),
                    str(info.get("deletedAt", "")),
                    str(info.get("sessionId", "")),
                )
            )
    return items


def restore_from_trash(item: TrashItem) -> str:
    """Put a trashed session back where it was (refuses to overwrite anything)."""
    dest = item.original_path
    if os.path.exists(dest):
        raise SessionError("storage", f"Cannot restore: {dest} already exists")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.move(item.trash_path, dest)
    fsync_dir(os.path.dirname(dest))
    folder = os.path.dirname(item.trash_path)
    if not any(p.endswith(".jsonl") for p in os.listdir(folder)):
        shutil.rmtree(folder, ignore_errors=True)
    return dest
