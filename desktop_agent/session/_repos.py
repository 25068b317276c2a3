"""Session repos: in memory and JSONL files (SESSION_FORMAT.md §4-§5)."""

from __future__ import annotations

import asyncio
import builtins
import os
from collections.abc import Callable
from typing import Any, Literal, Protocol

from desktop_agent.session._codec import Entry, serialize
from desktop_agent.session._dirlist import SessionList, list_dir_sessions
from desktop_agent.session._entryindex import EntryIndex
from desktop_agent.session._errors import SessionError
from desktop_agent.session._header import (
    check_session_id,
    encode_cwd,
    new_header,
    read_header,
    session_file_name,
)
from desktop_agent.session._ids import now_iso, uuidv7
from desktop_agent.session._jsonl import JsonlStorage
from desktop_agent.session._jsonl_read import is_locked_elsewhere
from desktop_agent.session._platform import OS_FILE_OPS, FileOps
from desktop_agent.session._progressive import SessionOpening, open_progressive
from desktop_agent.session._session import Session
from desktop_agent.session._storage import SessionMetadata, Storage
from desktop_agent.session._trash import TrashItem, list_trash, move_to_trash, restore_from_trash
from desktop_agent.session._tree import Row, Tree, lines_of
from desktop_agent.utils.atomic import atomic_write
from desktop_agent.utils.versions import header_stamp

ForkPosition = Literal["before", "at"]


INDEXED_OPEN_MAX_BYTES = 256 * 1024 * 1024
"""Above this size the entry index of a file (a million entries: ~1 s to load) is loaded
after the end of the branch is shown, not before (the tail is read in milliseconds)."""


class SessionRepo(Protocol):
    """What every repo offers (ARCHITECTURE.md §3)."""

    async def create(
        self,
        *,
        cwd: str,
        id: str | None = None,
        metadata: dict[str, Any] | None = None,
        parent_session_path: str | None = None,
    ) -> Session: ...

    async def open(self, metadata: SessionMetadata) -> Session: ...

    async def list(self, cwd: str | None = None) -> list[SessionMetadata]: ...

    async def delete(self, metadata: SessionMetadata) -> None: ...

    async def fork(
        self,
        source: SessionMetadata,
        *,
        cwd: str,
        entry_id: str | None = None,
        position: ForkPosition = "before",
        id: str | None = None,
        parent_session_path: str | None = None,
    ) -> Session: ...


def rows_to_fork(tree: Tree, entry_id: str | None, position: ForkPosition) -> list[Row]:
    """Which entries a fork copies (Pi's ``getEntriesToFork``)."""
    if entry_id is None:
        return list(tree.rows)
    target = tree.get(entry_id)
    if target is None:
        raise SessionError("invalid_fork_target", f"Entry {entry_id} not found")
    if position == "at":
        return tree.path_to_root(entry_id)
    if target.type != "message" or target.role != "user":
        raise SessionError("invalid_fork_target", f"Entry {entry_id} is not a user message")
    return tree.path_to_root(target.parent_id) if target.parent_id else []


class InMemorySessionStorage(Storage):
    """Entries in memory only (tests, previews)."""

    def save_copy(self, dest: str) -> None:
        header = new_header(
            cwd=self.metadata.cwd or os.getcwd(),
            session_id=self.metadata.id,
            parent_session_path=None,
            metadata=self.metadata.metadata,
        )
        data = serialize(header) + b"\n" + lines_of(self.tree.rows)
        atomic_write(dest, data, mode=0o644)


class InMemorySessionRepo:
    """Sessions kept in a dict; ``open`` returns the same object (as Pi's memory repo)."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}

    async def create(
        self,
        *,
        cwd: str | None = None,
        id: str | None = None,
        metadata: dict[str, Any] | None = None,
        parent_session_path: str | None = None,
    ) -> Session:
        session_id = id or uuidv7()
        meta = SessionMetadata(
            id=session_id,
            created_at=now_iso(),
            cwd=cwd,
            parent_session_path=parent_session_path,
            metadata={**(metadata or {}), **header_stamp()},
        )
        session = Session(InMemorySessionStorage(meta, Tree()))
        self._sessions[session_id] = session
        return session

    async def open(self, metadata: SessionMetadata) -> Session:
        session = self._sessions.get(metadata.id)
        if session is None:
            raise SessionError("not_found", f"Session not found: {metadata.id}")
        return session

    async def list(self, cwd: str | None = None) -> list[SessionMetadata]:
        return [s.metadata for s in self._sessions.values() if cwd is None or s.metadata.cwd == cwd]

    async def delete(self, metadata: SessionMetadata) -> None:
        self._sessions.pop(metadata.id, None)

    async def fork(
        self,
        source: SessionMetadata,
        *,
        cwd: str | None = None,
        entry_id: str | None = None,
        position: ForkPosition = "before",
        id: str | None = None,
        parent_session_path: str | None = None,
    ) -> Session:
        src = await self.open(source)
        rows = rows_to_fork(src.get_storage().tree, entry_id, position)
        session = await self.create(
            cwd=cwd if cwd is not None else source.cwd,
            id=id,
            parent_session_path=parent_session_path,
        )
        tree = session.get_storage().tree
        for row in rows:
            tree.copy_row(row)
        return session


class JsonlSessionRepo:
    """Pi-compatible JSONL files under ``sessions_root`` (one folder per cwd).

    Deleted sessions go to ``trash_root`` (default: ``trash`` beside ``sessions_root``)
    and can be restored from there.
    """

    def __init__(
        self,
        sessions_root: str | os.PathLike[str],
        trash_root: str | None = None,
        *,
        entry_index_dir: str | os.PathLike[str] | None = None,
        file_ops: FileOps = OS_FILE_OPS,
    ):
        self.sessions_root = os.path.abspath(os.fspath(sessions_root))
        self.trash_root = trash_root or os.path.join(os.path.dirname(self.sessions_root), "trash")
        self.file_ops = file_ops
        self.entry_index = (
            EntryIndex(entry_index_dir, file_ops) if entry_index_dir is not None else None
        )
        """Persisted entry indexes (issue 12): in the app's data dir, never beside the
        session files; None: every open scans the file."""

    def path_for(self, cwd: str, created_at: str, session_id: str) -> str:
        check_session_id(session_id)
        path = os.path.join(
            self.sessions_root, encode_cwd(cwd), session_file_name(created_at, session_id)
        )
        root = os.path.realpath(self.sessions_root)
        real = os.path.realpath(path)
        if os.path.commonpath([root, real]) != root:
            raise SessionError("invalid_argument", f"Session path escapes {self.sessions_root}")
        return path

    async def create(
        self,
        *,
        cwd: str,
        id: str | None = None,
        metadata: dict[str, Any] | None = None,
        parent_session_path: str | None = None,
    ) -> Session:
        if not cwd:
            raise SessionError("invalid_argument", "A session needs a working directory (cwd)")
        header = new_header(
            cwd=cwd, session_id=id, parent_session_path=parent_session_path, metadata=metadata
        )
        path = self.path_for(cwd, now_iso(), header["id"])
        storage = await asyncio.to_thread(JsonlStorage.create, path, header, ops=self.file_ops)
        storage.attach_index(self.entry_index)
        return Session(storage)

    async def open(self, metadata: SessionMetadata | str) -> Session:
        """Open by metadata (its ``path``) or by a path.

        Every file either opens (read-only, with ``read_only_reason`` and ``recovery``
        saying why, when it cannot be written safely) or is refused with a `SessionError`
        of code ``not_found``, ``invalid_session`` or ``storage`` (see `JsonlStorage.open`);
        opening never changes a byte except setting a torn tail aside.
        """
        path = metadata if isinstance(metadata, str) else metadata.path
        if not path:
            raise SessionError("not_found", "Session not found: no path")
        storage = await asyncio.to_thread(
            JsonlStorage.open, path, ops=self.file_ops, index=self.entry_index
        )
        return Session(storage)

    async def open_progressive(
        self, metadata: SessionMetadata | str, *, tail: int = 50
    ) -> SessionOpening:
        """Open showing the end first: returns once the last ``tail`` messages of the
        current branch are known (`SessionOpening.tail`), while the rest of a file never
        seen before is read off the loop (``await opening.session()``). A file with an
        entry index is opened through it before returning, unless it is so big that
        loading its index takes longer than reading the tail (`INDEXED_OPEN_MAX_BYTES`):
        then the tail comes first too, and the index is loaded off the loop."""
        path = metadata if isinstance(metadata, str) else metadata.path
        if not path:
            raise SessionError("not_found", "Session not found: no path")
        index = self.entry_index

        def opener(progress: Callable[[int, int], None]) -> JsonlStorage:
            return JsonlStorage.open(path, ops=self.file_ops, index=index, progress=progress)

        def quick() -> bool:
            if index is None or not index.has(path):
                return False
            try:
                return self.file_ops.stat(path).size < INDEXED_OPEN_MAX_BYTES
            except OSError:
                return True  # the open itself reports the error

        indexed = await asyncio.to_thread(quick)
        return await open_progressive(
            path, ops=self.file_ops, opener=opener, indexed=indexed, limit=tail
        )

    async def list(self, cwd: str | None = None) -> SessionList:
        """Every readable session (newest first); unreadable files are in ``.problems``."""
        return await asyncio.to_thread(list_dir_sessions, self.sessions_root, cwd)

    async def delete(self, metadata: SessionMetadata) -> TrashItem | None:
        """Move the session file to the trash (a missing file is a no-op, as in Pi)."""
        path = metadata.path
        if not path:
            return None
        probe = await asyncio.to_thread(is_locked_elsewhere, path, self.file_ops)
        if probe:
            raise SessionError(
                "locked", f"Cannot delete {path}: it is open in another window or process"
            )
        item = await asyncio.to_thread(move_to_trash, path, self.trash_root)
        if self.entry_index is not None:
            self.entry_index.forget(path)
        return item

    async def list_trash(self) -> builtins.list[TrashItem]:
        return await asyncio.to_thread(list_trash, self.trash_root)

    async def restore(self, item: TrashItem) -> SessionMetadata:
        path = await asyncio.to_thread(restore_from_trash, item)
        return await asyncio.to_thread(read_header, path)

    async def fork(
        self,
        source: SessionMetadata,
        *,
        cwd: str,
        entry_id: str | None = None,
        position: ForkPosition = "before",
        id: str | None = None,
        parent_session_path: str | None = None,
    ) -> Session:
        path = source.path
        if not path:
            raise SessionError("not_found", "Session not found: no path")
        _, copies = await asyncio.to_thread(self._read_entries, path, entry_id, position)
        session = await self.create(
            cwd=cwd,
            id=id,
            parent_session_path=parent_session_path if parent_session_path else path,
        )
        storage = session.get_storage()
        for entry, raw in copies:
            storage.append(entry, raw)  # verbatim: same ids, parents and timestamps
        await session.sync()
        return session

    async def read_entries(self, path: str) -> builtins.list[tuple[Entry, bytes]]:
        """Every readable entry of the file at ``path`` with its line, verbatim (a v1/v2
        file: as Pi's migration gives them), to copy into another store."""
        _, copies = await asyncio.to_thread(self._read_entries, path, None, "before")
        return copies

    def _read_entries(
        self, path: str, entry_id: str | None, position: ForkPosition
    ) -> tuple[SessionMetadata, builtins.list[tuple[Entry, bytes]]]:
        """The readable entries a fork (or a repair: ``entry_id`` None) copies, verbatim."""
        meta, _, copies = self._read_source(path, entry_id, position)
        return meta, copies

    def _read_source(
        self, path: str, entry_id: str | None, position: ForkPosition
    ) -> tuple[SessionMetadata, dict[str, Any], builtins.list[tuple[Entry, bytes]]]:
        """`_read_entries` plus the header as read (v1/v2: as Pi's migration leaves it)."""
        src = JsonlStorage.open(path, lock=False, ops=self.file_ops, index=self.entry_index)
        try:
            rows = rows_to_fork(src.tree, entry_id, position)
            lines = src.tree.lines(r.index for r in rows)
            copies = [(r.entry(), raw) for r, raw in zip(rows, lines, strict=True)]
            return src.metadata, dict(src.header), copies
        finally:
            src.close()  # read-only: writes nothing but the entry index

    async def repair(self, metadata: SessionMetadata) -> SessionMetadata:
        """Write the readable entries of a damaged session to a new file beside it.

        The damaged file is left exactly as it is. Returns the new file's metadata.
        """
        path = metadata.path
        if not path:
            raise SessionError("not_found", "Session not found: no path")
        meta, copies = await asyncio.to_thread(self._read_entries, path, None, "before")
        header = new_header(
            cwd=meta.cwd or "",
            session_id=meta.id,
            parent_session_path=meta.parent_session_path,
            metadata={**(meta.metadata or {}), "repairedFrom": path},
        )
        header["timestamp"] = meta.created_at
        return await asyncio.to_thread(self._write_beside, path, "repaired", header, copies)

    async def convert(self, metadata: SessionMetadata | str) -> SessionMetadata:
        """ "Convert to the current format": a v1/v2 session (an older Pi format) as a new
        v3 file beside it, which both Pi packages and we can continue.

        The new file holds what Pi's own migration would write (same header keys, same
        entries; v1 ids as our read-only view shows them) plus ``metadata.convertedFrom``
        in the header; it keeps the session id, like `repair`. The original file is never
        changed. Returns the new file's metadata; ``invalid_argument`` if the session is
        already in the current format.
        """
        path = metadata if isinstance(metadata, str) else metadata.path
        if not path:
            raise SessionError("not_found", "Session not found: no path")
        meta, header, copies = await asyncio.to_thread(self._read_source, path, None, "before")
        version = meta.format_version
        if version >= 3:
            raise SessionError(
                "invalid_argument", f"{path} is already in the current session format"
            )
        extra = header.get("metadata")
        header["metadata"] = {
            **(extra if isinstance(extra, dict) else {}),
            "convertedFrom": {"path": path, "version": version},
            **header_stamp(),  # written by this app
        }
        return await asyncio.to_thread(self._write_beside, path, "converted", header, copies)

    def _write_beside(
        self,
        path: str,
        kind: str,
        header: dict[str, Any],
        copies: builtins.list[tuple[Entry, bytes]],
    ) -> SessionMetadata:
        """A new file ``<path without .jsonl>.<kind>-<time>.jsonl`` with ``header`` and
        the entries, synced; the file at ``path`` is not touched."""
        base = path[: -len(".jsonl")] if path.endswith(".jsonl") else path
        dest = f"{base}.{kind}-{now_iso().replace(':', '-').replace('.', '-')}.jsonl"
        storage = JsonlStorage.create(dest, header, ops=self.file_ops)
        try:
            for entry, raw in copies:
                storage.pending.append(storage.tree.add(entry, raw))
            storage.sync()
        finally:
            storage.force_close()
        return storage.metadata
