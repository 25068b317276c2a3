"""Session repos: in memory and JSONL files (SESSION_FORMAT.md §4-§5)."""

from __future__ import annotations

import asyncio
import builtins
import os
from typing import Any, Literal, Protocol

from desktop_agent.session._errors import SessionError
from desktop_agent.session._ids import now_iso, uuidv7
from desktop_agent.session._jsonl import (
    JsonlStorage,
    SessionList,
    TrashItem,
    check_session_id,
    encode_cwd,
    list_dir_sessions,
    list_trash,
    move_to_trash,
    new_header,
    read_header,
    restore_from_trash,
    session_file_name,
)
from desktop_agent.session._platform import try_lock, unlock
from desktop_agent.session._session import Session
from desktop_agent.session._storage import SessionMetadata, Storage
from desktop_agent.session._tree import Row, Tree, lines_of, serialize
from desktop_agent.utils.atomic import atomic_write

ForkPosition = Literal["before", "at"]


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
    if target.type != "message" or target.info[0] != "user":
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
            metadata=metadata,
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
            tree.add(row)
        return session


class JsonlSessionRepo:
    """Pi-compatible JSONL files under ``sessions_root`` (one folder per cwd).

    Deleted sessions go to ``trash_root`` (default: ``trash`` beside ``sessions_root``)
    and can be restored from there.
    """

    def __init__(self, sessions_root: str | os.PathLike[str], trash_root: str | None = None):
        self.sessions_root = os.path.abspath(os.fspath(sessions_root))
        self.trash_root = trash_root or os.path.join(os.path.dirname(self.sessions_root), "trash")

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
        storage = await asyncio.to_thread(JsonlStorage.create, path, header)
        return Session(storage)

    async def open(self, metadata: SessionMetadata | str) -> Session:
        """Open by metadata (its ``path``) or by a path."""
        path = metadata if isinstance(metadata, str) else metadata.path
        if not path:
            raise SessionError("not_found", "Session not found: no path")
        storage = await asyncio.to_thread(JsonlStorage.open, path)
        return Session(storage)

    async def list(self, cwd: str | None = None) -> SessionList:
        """Every readable session (newest first); unreadable files are in ``.problems``."""
        return await asyncio.to_thread(list_dir_sessions, self.sessions_root, cwd)

    async def delete(self, metadata: SessionMetadata) -> TrashItem | None:
        """Move the session file to the trash (a missing file is a no-op, as in Pi)."""
        path = metadata.path
        if not path:
            return None
        probe = await asyncio.to_thread(_is_locked_elsewhere, path)
        if probe:
            raise SessionError(
                "locked", f"Cannot delete {path}: it is open in another window or process"
            )
        return await asyncio.to_thread(move_to_trash, path, self.trash_root)

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
        src = await asyncio.to_thread(JsonlStorage.open, path, lock=False)
        try:
            rows = rows_to_fork(src.tree, entry_id, position)
        finally:
            src.force_close()
        session = await self.create(
            cwd=cwd,
            id=id,
            parent_session_path=parent_session_path if parent_session_path else path,
        )
        storage = session.get_storage()
        for row in rows:
            storage.append(row)  # verbatim: same ids, parents and timestamps
        await session.sync()
        return session

    async def repair(self, metadata: SessionMetadata) -> SessionMetadata:
        """Write the readable entries of a damaged session to a new file beside it.

        The damaged file is left exactly as it is. Returns the new file's metadata.
        """
        path = metadata.path
        if not path:
            raise SessionError("not_found", "Session not found: no path")
        src = await asyncio.to_thread(JsonlStorage.open, path, lock=False)
        try:
            rows = list(src.tree.rows)
            meta = src.metadata
        finally:
            src.force_close()
        base = path[: -len(".jsonl")] if path.endswith(".jsonl") else path
        dest = f"{base}.repaired-{now_iso().replace(':', '-').replace('.', '-')}.jsonl"
        header = new_header(
            cwd=meta.cwd or "",
            session_id=meta.id,
            parent_session_path=meta.parent_session_path,
            metadata={**(meta.metadata or {}), "repairedFrom": path},
        )
        header["timestamp"] = meta.created_at
        storage = await asyncio.to_thread(JsonlStorage.create, dest, header)
        try:
            for row in rows:
                storage.tree.add(row)
                storage.pending.append(row)
            await asyncio.to_thread(storage.sync)
        finally:
            storage.force_close()
        return storage.metadata


def _is_locked_elsewhere(path: str) -> bool:
    try:
        fd = os.open(path + ".lock", os.O_RDWR)
    except OSError:
        return False
    try:
        if try_lock(fd):
            unlock(fd)
            return False
        return True
    finally:
        os.close(fd)
