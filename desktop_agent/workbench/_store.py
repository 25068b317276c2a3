"""`SessionStore`: the sessions the workbench works with, whatever keeps them.

The workbench and the GUI depend on this protocol only. `JsonlStore` keeps Pi-compatible
files (with the SQLite `SessionIndex` for the list and search, and a trash folder);
`SqliteStore` keeps every session in one database (its trash is a list of ids beside it).
A session is named by a *reference* string: its file path (JSONL) or ``sqlite:<id>``.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import dataclasses
import json
import logging
import os
import shutil
import tempfile
import zipfile
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from desktop_agent.session import NEW_SESSION_TITLE as NEW_SESSION_TITLE  # (for _pg_store)
from desktop_agent.session import (
    NOT_ACTIVITY,
    FoundSession,
    IndexedSession,
    JsonlSessionRepo,
    Session,
    SessionError,
    SessionIndex,
    SessionMetadata,
    SessionOpening,
    SqliteSessionRepo,
    first_prompt_of,
    session_facts,
    session_title,
)
from desktop_agent.utils.atomic import atomic_file, atomic_write
from desktop_agent.utils.text import message_text, query_words, text_matches
from desktop_agent.workbench._views import PAGE, SidebarRow, newest_first

log = logging.getLogger("desktop_agent.workbench")

PROGRESSIVE_BYTES = 8 << 20
"""Files from this size on, never seen before, open showing their end first."""


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


class SessionStore(Protocol):
    """What the workbench needs from wherever sessions are kept (see the module doc)."""

    kind: str

    async def start(self, later: Collection[str] = (), *, glance: bool = False) -> list[str]:
        """Get ready (bring an index in line with the files); ``later``: sessions about
        to be opened, brought in line by `changed` with the opened session. ``glance``:
        big sessions never seen are only glanced at and returned, for `changed` to
        finish (`SessionIndex.reconcile`)."""

    async def sessions(self, query: str | None = None) -> list[SidebarRow]:
        """Every session, newest activity first; ``query`` searches titles (and content
        where the store can)."""

    async def trash(self) -> list[SidebarRow]:
        """Sessions in the trash (``path`` is the trash reference), newest first."""

    async def create(self, cwd: str) -> Session: ...

    async def open(self, ref: str) -> Session: ...

    async def open_progressive(self, ref: str) -> SessionOpening | None:
        """Start opening a big session never seen before: its branch's end is known at
        once, the rest is read off the loop. None: open it with `open` (it is quick)."""

    def ref_of(self, session: Session) -> str: ...

    def holds(self, ref: str) -> bool:
        """Whether ``ref`` is one of this store's sessions (not a file elsewhere)."""

    async def find(self, id_or_ref: str) -> str | None:
        """The reference of a session given by id or reference, if it exists."""

    async def fork(self, ref: str, cwd: str, at: str | None = None) -> Session:
        """A new session holding every entry of ``ref`` (same leaf), open; with ``at``,
        only the path from the root to that entry (Pi's fork "at" an entry)."""

    async def move_to_trash(self, ref: str) -> str | None:
        """Move a session to the trash; returns its trash reference (None: not found)."""

    async def restore(self, trash_ref: str) -> str:
        """Put a trashed session back; returns its reference."""

    async def discard(self, ref: str) -> None:
        """Remove an empty session for good (it holds no message)."""

    async def open_trashed(self, trash_ref: str) -> Session:
        """A session in the trash, opened to be read (e.g. the checkpoints it uses)."""

    async def purge(self, trash_ref: str) -> None:
        """Delete a session in the trash for good."""

    async def repair(self, ref: str) -> str:
        """Write the readable entries of a damaged session to a new session (the damaged
        one is left as it is); returns the new reference."""

    async def copy_jsonl(self, ref: str, dest: str) -> None:
        """A Pi-compatible JSONL copy of one session at ``dest``."""

    async def backup(self, dest: str) -> int:
        """Every session into one zip archive at ``dest``; returns how many."""

    async def changed(self, ref: str, opened: Session | None = None) -> None:
        """``ref`` was written to: refresh what the list knows about it (``opened``: its
        session, just read whole, which the list may take its facts from)."""

    async def convert(self, ref: str) -> str:
        """ "Convert to the current format": a v1/v2 session as a new v3 session (the
        original is never rewritten); returns the new reference."""

    async def copy_in(self, path: str) -> str:
        """ "Copy into Desktop Agent": our own session holding every entry of another
        program's session file at ``path`` (left as it is); returns its reference."""

    async def close(self) -> None: ...


def _existing_file(path: str) -> str | None:
    return os.path.abspath(path) if os.path.isfile(path) else None


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def _meta(path: str) -> SessionMetadata:
    return SessionMetadata(id="", created_at="", path=path)


def _row(s: IndexedSession, source: str) -> SidebarRow:
    return SidebarRow(
        path=s.path,
        id=s.id,
        cwd=s.cwd or "",
        title=s.title,
        last_activity=s.last_activity or s.created_at,
        problem=s.problem,
        source=source,
        message_count=s.message_count,
        parent=s.parent_session_path or "",
        snippet=(s.snippet or "") if isinstance(s, FoundSession) else "",
    )


def titles_matching(rows: list[SidebarRow], query: str | None) -> list[SidebarRow]:
    """The rows whose title holds every word of ``query`` (`text_matches`: case and
    accents ignored); all of them when it has no words."""
    words = query_words(query or "")
    return [r for r in rows if text_matches(words, r.title)] if words else rows


# --------------------------------------------------------------------------- JSONL


class JsonlStore:
    """Pi-compatible JSONL files under the repo's folder, listed through the index.

    ``source`` names the list its rows belong to (`SidebarRow.source`): ours, or
    ``"pi"`` for the Pi CLI's folder (`Workbench.pi_store`)."""

    kind = "jsonl"

    def __init__(
        self, repo: JsonlSessionRepo, index: SessionIndex | None, *, source: str = "sessions"
    ) -> None:
        self.repo = repo
        self.index = index
        self.source = source
        self._trash: list[SidebarRow] | None = None  # read again after a move in or out
        self._read: dict[str, tuple[tuple[int, int], IndexedSession]] = {}  # (no index)

    async def start(self, later: Collection[str] = (), *, glance: bool = False) -> list[str]:
        if self.index is None:
            return []
        try:
            later = [r for r in later if self.holds(r)]
            report = await self.index.reconcile(later, glance=glance)
        except Exception:
            log.exception("the session index is unavailable; listing files instead")
            self.index = None
            return []
        return list(report.glanced)

    async def sessions(self, query: str | None = None) -> list[SidebarRow]:
        if self.index is not None:
            try:
                return [
                    _row(s, self.source) for s in await self.index.sessions(query=query or None)
                ]
            except Exception:
                log.exception("the session index failed; listing files instead")
                self.index = None
        rows = newest_first([_row(s, self.source) for s in await self._read_files()])
        return titles_matching(rows, query)

    async def _read_files(self) -> list[IndexedSession]:
        """Without the index: every session's facts read from its file (the same reading
        as the index's), a file read again only when its size or mtime changed."""
        paths = [m.path for m in await self.repo.list() if m.path]

        def read() -> list[IndexedSession]:
            out: list[IndexedSession] = []
            for path in paths:
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                stamp = (st.st_size, st.st_mtime_ns)
                known = self._read.get(path)
                if known is None or known[0] != stamp:
                    known = self._read[path] = (stamp, session_facts(path))
                out.append(known[1])
            return out

        return await asyncio.to_thread(read)

    async def trash(self) -> list[SidebarRow]:
        if self._trash is not None:
            return list(self._trash)
        rows: list[SidebarRow] = []
        for item in await self.repo.list_trash():
            facts = await asyncio.to_thread(session_facts, item.trash_path)
            rows.append(
                SidebarRow(
                    path=item.trash_path,
                    id=item.session_id or facts.id,
                    cwd=facts.cwd or "",
                    title=facts.title,
                    last_activity=item.deleted_at,
                    problem=facts.problem,
                    in_trash=True,
                    message_count=facts.message_count,
                    parent=facts.parent_session_path or "",
                )
            )
        rows.sort(key=lambda r: r.last_activity, reverse=True)
        self._trash = rows
        return list(rows)

    async def create(self, cwd: str) -> Session:
        return await self.repo.create(cwd=cwd)

    async def open(self, ref: str) -> Session:
        return await self.repo.open(ref)

    async def open_progressive(self, ref: str) -> SessionOpening | None:
        size = await asyncio.to_thread(_size, ref)
        if size < PROGRESSIVE_BYTES:
            return None
        return await self.repo.open_progressive(ref, tail=PAGE)

    def ref_of(self, session: Session) -> str:
        return session.metadata.path or ""

    def holds(self, ref: str) -> bool:
        """Whether ``ref`` is a file inside this store's folder."""
        if not ref.endswith(".jsonl"):
            return False
        root = os.path.realpath(self.repo.sessions_root)
        real = os.path.realpath(ref)
        return real != root and os.path.commonpath([root, real]) == root

    async def find(self, id_or_ref: str) -> str | None:
        if id_or_ref.endswith(".jsonl"):
            return await asyncio.to_thread(_existing_file, id_or_ref)
        found = [row.path for row in await self.sessions() if row.id == id_or_ref]
        if len(found) > 1:
            # A converted (or repaired) file keeps its original's id: the one written
            # last is the one to continue.
            found.sort(key=_mtime, reverse=True)
        return found[0] if found else None

    async def fork(self, ref: str, cwd: str, at: str | None = None) -> Session:
        forked = await self.repo.fork(_meta(ref), cwd=cwd, entry_id=at, position="at")
        await self.changed(self.ref_of(forked))
        return forked

    async def move_to_trash(self, ref: str) -> str | None:
        item = await self.repo.delete(_meta(ref))
        self._trash = None
        if self.index is not None:
            await self.index.forget(ref)
        return item.trash_path if item is not None else None

    async def restore(self, trash_ref: str) -> str:
        for item in await self.repo.list_trash():
            if item.trash_path == trash_ref:
                meta = await self.repo.restore(item)
                self._trash = None
                path = meta.path or item.original_path
                await self.changed(path)
                return path
        raise SessionError("not_found", f"{trash_ref} is no longer in the trash")

    async def discard(self, ref: str) -> None:
        def remove() -> None:
            for name in (ref, ref + ".lock"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name)

        await asyncio.to_thread(remove)
        if self.index is not None:
            await self.index.forget(ref)

    def _in_trash(self, trash_ref: str) -> str:
        root = os.path.realpath(self.repo.trash_root)
        real = os.path.realpath(trash_ref)
        if real == root or os.path.commonpath([root, real]) != root:
            raise SessionError("not_found", f"{trash_ref} is not in the trash")
        return real

    async def open_trashed(self, trash_ref: str) -> Session:
        return await self.repo.open(self._in_trash(trash_ref))

    async def purge(self, trash_ref: str) -> None:
        path = self._in_trash(trash_ref)

        def remove() -> None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            folder = os.path.dirname(path)
            with contextlib.suppress(OSError):
                if not any(name.endswith(".jsonl") for name in os.listdir(folder)):
                    shutil.rmtree(folder)

        await asyncio.to_thread(remove)
        if self.repo.entry_index is not None:  # reading it for its checkpoints cached it
            self.repo.entry_index.forget(path)
        self._trash = None

    async def repair(self, ref: str) -> str:
        meta = await self.repo.repair(_meta(ref))
        path = meta.path or ""
        await self.changed(path)
        return path

    async def copy_jsonl(self, ref: str, dest: str) -> None:
        data = await asyncio.to_thread(Path(ref).read_bytes)
        await asyncio.to_thread(atomic_write, dest, data, mode=0o644)

    async def convert(self, ref: str) -> str:
        meta = await self.repo.convert(ref)
        path = meta.path or ""
        await self.changed(path)
        return path

    async def copy_in(self, path: str) -> str:
        if self.holds(path):
            raise SessionError("invalid_argument", f"{path} is already a session of this list")
        facts = await asyncio.to_thread(session_facts, path)  # its cwd (fork reads the rest)
        # Every entry as it is (a v1/v2 file becomes v3); the header names the original.
        copy = await self.repo.fork(_meta(path), cwd=facts.cwd or "", parent_session_path=path)
        ref = self.ref_of(copy)
        await copy.close()
        await self.changed(ref)
        return ref

    async def backup(self, dest: str) -> int:
        root = Path(self.repo.sessions_root)

        def run() -> int:
            files = sorted(root.rglob("*.jsonl"))
            with (
                atomic_file(dest) as fh,
                zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as archive,
            ):
                for file in files:
                    archive.write(file, str(file.relative_to(root)))
            return len(files)

        return await asyncio.to_thread(run)

    async def changed(self, ref: str, opened: Session | None = None) -> None:
        if self.index is not None and ref and self.holds(ref):  # never another folder's file
            try:
                await self.index.update_file(ref, opened)
            except Exception:
                log.exception("could not update the session index for %s", ref)

    async def close(self) -> None:
        if self.index is not None:
            await asyncio.to_thread(self.index.close)


# --------------------------------------------------------------------------- SQLite


class _Copier(Protocol):
    async def copy_jsonl(self, ref: str, dest: str) -> None: ...


async def backup_copies(store: _Copier, refs: Iterable[str], dest: str) -> int:
    """Every session of ``refs`` as a Pi JSONL file ``<id>.jsonl`` in one zip at ``dest``
    (a database store's backup); returns how many."""
    with tempfile.TemporaryDirectory(prefix="desktop-agent-backup-") as tmp:
        names: list[str] = []
        for ref in refs:
            name = ref.rpartition(":")[2] + ".jsonl"
            await store.copy_jsonl(ref, os.path.join(tmp, name))
            names.append(name)

        def run() -> None:
            with (
                atomic_file(dest) as fh,
                zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as archive,
            ):
                for name in names:
                    archive.write(os.path.join(tmp, name), name)

        await asyncio.to_thread(run)
    return len(names)


async def entries_of_file(path: str) -> tuple[str | None, list[tuple[Any, bytes]]]:
    """The cwd and every entry (with its exact line) of a session file, to copy into a
    database store."""
    facts = await asyncio.to_thread(session_facts, path)  # its cwd
    copies = await JsonlSessionRepo(os.path.dirname(path)).read_entries(path)
    return facts.cwd, copies


SQLITE_PREFIX = "sqlite:"


class _DatabaseRepo(Protocol):
    async def list(self, cwd: str | None = None) -> list[SessionMetadata]: ...

    async def create_from_entries(
        self,
        copies: builtins.list[tuple[Any, bytes]],
        *,
        cwd: str | None,
        parent_session_path: str,
    ) -> Session: ...


_Repo = TypeVar("_Repo", bound=_DatabaseRepo)


class OneDatabase(Generic[_Repo]):
    """What a store keeping every session in one database (SQLite, PostgreSQL) does the
    same way: its refs are ``prefix`` + id, a backup is every session as a Pi file in one
    zip, copying a file in keeps its lines, and there is no older format to convert."""

    prefix: str
    repo: _Repo

    def ref_of(self, session: Session) -> str:
        return self.prefix + session.metadata.id

    async def copy_jsonl(self, ref: str, dest: str) -> None:
        raise NotImplementedError  # each store writes its own

    async def backup(self, dest: str) -> int:
        refs = [self.prefix + meta.id for meta in await self.repo.list()]
        return await backup_copies(self, refs, dest)

    async def convert(self, ref: str) -> str:
        raise SessionError("invalid_argument", "This session is already in the current format")

    async def copy_in(self, path: str) -> str:
        cwd, copies = await entries_of_file(path)
        session = await self.repo.create_from_entries(copies, cwd=cwd, parent_session_path=path)
        ref = self.ref_of(session)
        await session.close()
        return ref


@dataclass(frozen=True)
class _Facts:
    entry_count: int
    title: str
    last_activity: str
    message_count: int


async def _facts_of(session: Session) -> _Facts:
    raw = session.raw_entries()
    first: str | None = None
    messages = 0
    for entry_id, _parent, kind, _ts, _line in raw:
        if kind == "message":
            messages += 1
            if first is None and session.entry_kind(entry_id)[1] == "user":
                first = first_prompt_of(message_text(session.get_message(entry_id)))
    name = await session.get_session_name()
    # A rename or a label is not activity (p17); a fork is as new as its header.
    created = session.metadata.created_at
    last = next(
        (ts for _i, _p, kind, ts, _l in reversed(raw) if ts and kind not in NOT_ACTIVITY), ""
    )
    return _Facts(len(raw), session_title(name, first), max(last, created), messages)


class SqliteStore(OneDatabase[SqliteSessionRepo]):
    """Every session in one SQLite database (`SqliteSessionRepo`).

    Titles come from reading each session once (cached by its entry count); the trash
    is a small JSON file of ids beside the database (a trashed session stays in the
    database until it is restored)."""

    kind = "sqlite"
    prefix = SQLITE_PREFIX

    def __init__(self, repo: SqliteSessionRepo, trash_file: Path) -> None:
        self.repo = repo
        self.trash_file = trash_file
        self._facts: dict[str, _Facts] = {}
        self._trashed: dict[str, dict[str, str]] | None = None

    @staticmethod
    def _id(ref: str) -> str:
        return ref[len(SQLITE_PREFIX) :] if ref.startswith(SQLITE_PREFIX) else ref

    def _meta(self, ref: str) -> SessionMetadata:
        return SessionMetadata(id=self._id(ref), created_at="")

    async def _trash_entries(self) -> dict[str, dict[str, str]]:
        if self._trashed is None:

            def read() -> dict[str, dict[str, str]]:
                try:
                    data = json.loads(self.trash_file.read_bytes())
                except FileNotFoundError:
                    return {}
                except (OSError, ValueError):
                    log.warning("the trash list %s is unreadable; starting empty", self.trash_file)
                    return {}
                return {str(k): dict(v) for k, v in data.items()} if isinstance(data, dict) else {}

            self._trashed = await asyncio.to_thread(read)
        return self._trashed

    async def _save_trash(self, entries: dict[str, dict[str, str]]) -> None:
        data = json.dumps(entries, indent=1).encode()
        await asyncio.to_thread(atomic_write, self.trash_file, data)
        self._trashed = entries

    async def start(self, later: Collection[str] = (), *, glance: bool = False) -> list[str]:
        await self._trash_entries()
        return []

    async def _facts_for(self, meta: SessionMetadata) -> _Facts:
        cached = self._facts.get(meta.id)
        if cached is not None:
            return cached
        try:
            session = await self.repo.open(meta)
        except SessionError as exc:
            return _Facts(0, exc.message, meta.created_at, -1)
        try:
            facts = await _facts_of(session)
        finally:
            session.get_storage().force_close()
        self._facts[meta.id] = facts
        return facts

    async def _rows(self, metas: Iterable[SessionMetadata], trash: bool) -> list[SidebarRow]:
        trashed = await self._trash_entries()
        rows: list[SidebarRow] = []
        for meta in metas:
            facts = await self._facts_for(meta)
            rows.append(
                SidebarRow(
                    path=(SQLITE_PREFIX if not trash else "sqlite-trash:") + meta.id,
                    id=meta.id,
                    cwd=meta.cwd or "",
                    title=facts.title,
                    last_activity=trashed[meta.id]["deleted_at"] if trash else facts.last_activity,
                    in_trash=trash,
                    message_count=facts.message_count,
                    parent=meta.parent_session_path or "",
                )
            )
        rows.sort(key=lambda r: r.last_activity, reverse=True)
        return rows

    async def sessions(self, query: str | None = None) -> list[SidebarRow]:
        """The sessions (not in the trash); with ``query``, those whose title or text holds
        its words, a text hit with where it was (m6), as the files' index answers."""
        trashed = await self._trash_entries()
        metas = [m for m in await self.repo.list() if m.id not in trashed]
        rows = await self._rows(metas, trash=False)
        if not query_words(query or ""):
            return rows
        found = await self.repo.search(query or "")
        titled = {r.id for r in titles_matching(rows, query)}
        return [
            dataclasses.replace(r, snippet=found.get(r.id, ""))
            for r in rows
            if r.id in titled or r.id in found
        ]

    async def trash(self) -> list[SidebarRow]:
        trashed = await self._trash_entries()
        metas = [m for m in await self.repo.list() if m.id in trashed]
        return await self._rows(metas, trash=True)

    async def create(self, cwd: str) -> Session:
        return await self.repo.create(cwd=cwd)

    async def open_progressive(self, ref: str) -> SessionOpening | None:
        return None  # a database session opens from its rows, quickly

    async def open(self, ref: str) -> Session:
        trashed = await self._trash_entries()
        if self._id(ref) in trashed:
            raise SessionError("not_found", "This session is in the trash")
        return await self.repo.open(self._meta(ref))

    def holds(self, ref: str) -> bool:
        return ref.startswith(SQLITE_PREFIX)

    async def find(self, id_or_ref: str) -> str | None:
        wanted = self._id(id_or_ref)
        for meta in await self.repo.list():
            if meta.id == wanted:
                return SQLITE_PREFIX + meta.id
        return None

    async def fork(self, ref: str, cwd: str, at: str | None = None) -> Session:
        return await self.repo.fork(self._meta(ref), cwd=cwd, entry_id=at, position="at")

    async def move_to_trash(self, ref: str) -> str | None:
        session_id = self._id(ref)
        if await self.find(session_id) is None:
            return None
        entries = dict(await self._trash_entries())
        entries[session_id] = {"deleted_at": datetime.now(UTC).isoformat()}
        await self._save_trash(entries)
        return "sqlite-trash:" + session_id

    async def restore(self, trash_ref: str) -> str:
        session_id = trash_ref.removeprefix("sqlite-trash:")
        entries = dict(await self._trash_entries())
        if entries.pop(session_id, None) is None:
            raise SessionError("not_found", f"{trash_ref} is no longer in the trash")
        await self._save_trash(entries)
        return SQLITE_PREFIX + session_id

    async def discard(self, ref: str) -> None:
        await self.repo.delete(self._meta(ref))
        self._facts.pop(self._id(ref), None)

    async def open_trashed(self, trash_ref: str) -> Session:
        session_id = trash_ref.removeprefix("sqlite-trash:")
        if session_id not in await self._trash_entries():
            raise SessionError("not_found", f"{trash_ref} is not in the trash")
        return await self.repo.open(self._meta(session_id))

    async def purge(self, trash_ref: str) -> None:
        session_id = trash_ref.removeprefix("sqlite-trash:")
        entries = dict(await self._trash_entries())
        if entries.pop(session_id, None) is None:
            raise SessionError("not_found", f"{trash_ref} is no longer in the trash")
        await self.repo.delete(self._meta(session_id))
        await self._save_trash(entries)
        self._facts.pop(session_id, None)

    async def repair(self, ref: str) -> str:
        source = await self.repo.open(self._meta(ref))
        cwd = source.metadata.cwd or ""
        source.get_storage().force_close()
        repaired = await self.repo.fork(self._meta(ref), cwd=cwd)
        new_ref = self.ref_of(repaired)
        await repaired.close()
        return new_ref

    async def copy_jsonl(self, ref: str, dest: str) -> None:
        session = await self.repo.open(self._meta(ref))
        try:
            await session.save_copy(dest)
        finally:
            session.get_storage().force_close()

    async def changed(self, ref: str, opened: Session | None = None) -> None:
        self._facts.pop(self._id(ref), None)

    async def close(self) -> None:
        await self.repo.close()
