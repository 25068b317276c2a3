"""`SessionIndex`: a SQLite cache of per-file session facts (`_facts_scan.py` reads them)
and full-text content.

The sidebar and search read this instead of parsing transcripts (ARCHITECTURE.md §4).
It is derived data: deleting ``index.sqlite`` loses nothing, a damaged or newer index is
deleted and rebuilt, and `reconcile` brings it in line with the files by re-reading only
those whose ``(size, mtime_ns)`` changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_agent.session._errors import SessionError
from desktop_agent.session._facts_scan import (
    HIT_MARK,
    WORD,
    FileFacts,
    FoundSession,
    IndexedSession,
    facts_of_session,
    is_glance,
    read_facts,
    snippet_from_hit,
)
from desktop_agent.session._repos import JsonlSessionRepo
from desktop_agent.utils.text import fold, query_words

if TYPE_CHECKING:
    from desktop_agent.session._session import Session

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2

_T = TypeVar("_T")
_COLUMNS = (
    "path, id, cwd, created_at, name, first_prompt, last_activity, entry_count,"
    " message_count, size, mtime_ns, problem, parent_session_path"
)

_SCHEMA = f"""
CREATE TABLE sessions (
    doc INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    id TEXT NOT NULL,
    cwd TEXT,
    created_at TEXT NOT NULL,
    name TEXT,
    first_prompt TEXT,
    last_activity TEXT NOT NULL,
    entry_count INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    problem TEXT,
    parent_session_path TEXT,
    title_fold TEXT NOT NULL,
    text_chars INTEGER NOT NULL,
    tail_crc INTEGER
);
CREATE INDEX sessions_by_activity ON sessions (last_activity DESC);
CREATE INDEX sessions_by_cwd ON sessions (cwd, last_activity DESC);
CREATE VIRTUAL TABLE content USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2');
PRAGMA user_version = {SCHEMA_VERSION};
"""


@dataclass(frozen=True)
class ReconcileReport:
    """What `SessionIndex.reconcile` changed (paths)."""

    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()
    """Indexed files (added or updated) with a ``problem``."""
    glanced: tuple[str, ...] = ()
    """Big files never seen, only glanced at (``reconcile(glance=True)``)."""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


RECONCILE_SLICE_S = 0.05
"""How long one transaction of `SessionIndex.reconcile` reads files: a first index of
10,000 sessions took 6 s in one, and opening a session waited for it."""


# ----------------------------------------------------------------------- the index


SNIPPET_WORDS = 12
"""Words around a search's first hit in a session's text (`FoundSession.snippet`)."""


def _fts_query(query: str) -> str | None:
    """Every word of ``query`` as a prefix term, all required; None without words."""
    words = WORD.findall(query)
    if not words:
        return None
    return " AND ".join('"' + w.replace('"', '""') + '"*' for w in words)


class SessionIndex:
    """The session list and search over a `JsonlSessionRepo`'s folder.

    All methods run their blocking work in a worker thread, one at a time, on one SQLite
    connection (WAL, busy timeout). ``index_path`` is usually ``<data>/index.sqlite``.
    """

    def __init__(self, index_path: str | os.PathLike[str], repo: JsonlSessionRepo) -> None:
        self.index_path = os.fspath(index_path)
        self.repo = repo
        self._conn: sqlite3.Connection | None = None
        self._thread_lock = threading.Lock()
        self._lock = asyncio.Lock()
        self._closed = False
        self.newer_schema: int | None = None
        """The schema of an index a newer app wrote: left as it is, never used or
        rewritten (this run keeps its index in memory)."""

    # ------------------------------------------------------------------ public

    async def reconcile(
        self, later: Collection[str] = (), *, glance: bool = False
    ) -> ReconcileReport:
        """Bring the index in line with the files on disk; files in ``later`` (the one
        the app is about to open) wait for `update_file` with the opened session.
        ``glance``: big files never seen are only glanced at (`read_facts`); they are in
        the report's ``glanced``, for `update_file` to finish."""
        added, updated, removed = await self._run(lambda: self._plan(later))
        todo = [*added, *updated]
        unreadable: list[str] = []
        glanced: list[str] = []
        while todo:
            # A slice at a time, each in its own transaction: what waits for the index
            # meanwhile (the session being opened, the list) runs between two slices.
            count, bad, glimpsed = await self._run(partial(self._index_some, todo, glance))
            todo = todo[count:]
            unreadable += bad
            glanced += glimpsed
        return ReconcileReport(
            tuple(added), tuple(updated), tuple(removed), tuple(unreadable), tuple(glanced)
        )

    async def sessions(
        self, cwd: str | None = None, query: str | None = None
    ) -> list[IndexedSession]:
        """Indexed sessions, most recent activity first.

        ``cwd`` limits to one workspace. ``query`` matches words in the content (prefix,
        all words, case- and accent-insensitive) or all its words in the name or first
        prompt (`text_matches`: case and accents ignored).
        """
        return await self._run(lambda: self._sessions(cwd, query))

    async def update_file(
        self, path: str | os.PathLike[str], opened: Session | None = None
    ) -> IndexedSession | None:
        """Re-index one file now (after the app wrote it); None if it no longer exists.
        ``opened``: the session of that file, just read whole: a file the index does not
        know yet is indexed from it (`facts_of_opened`) instead of read again."""
        return await self._run(lambda: self._update_file(os.path.abspath(path), opened))

    async def forget(self, path: str | os.PathLike[str]) -> None:
        """Drop one file from the index (it was deleted or moved to the trash)."""
        await self._run(lambda: self._forget(os.path.abspath(path)))

    def close(self) -> None:
        """Close the database (waits for a running operation to finish)."""
        with self._thread_lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # --------------------------------------------------------------- plumbing

    async def _run(self, fn: Callable[[], _T]) -> _T:
        async with self._lock:
            return await asyncio.to_thread(self._locked, fn)

    def _locked(self, fn: Callable[[], _T]) -> _T:
        with self._thread_lock:
            if self._closed:
                raise SessionError("storage", "The session index is closed")
            try:
                return fn()
            except sqlite3.DatabaseError as exc:
                if not _is_damage(exc):
                    raise
            # A damaged index is derived data: throw it away and do the work again.
            self._reset()
            return fn()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._connect()
            self._conn.create_function("fold", 1, fold, deterministic=True)
        return self._conn

    def _connect(self) -> sqlite3.Connection:
        os.makedirs(os.path.dirname(os.path.abspath(self.index_path)), exist_ok=True)
        version = _file_user_version(self.index_path)
        if version is not None and version > SCHEMA_VERSION:
            log.warning(
                "The session index %s has schema %d, newer than this app's %d (a newer"
                " Desktop Agent wrote it): it is left untouched; this run indexes in memory",
                self.index_path,
                version,
                SCHEMA_VERSION,
            )
            self.newer_schema = version
            conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            conn.executescript(_SCHEMA)
            return conn
        for attempt in range(2):
            conn = sqlite3.connect(self.index_path, check_same_thread=False, isolation_level=None)
            try:
                conn.execute("PRAGMA busy_timeout = 5000")
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version == SCHEMA_VERSION:
                    conn.execute("SELECT doc FROM sessions LIMIT 1").fetchall()
                    conn.execute("SELECT rowid FROM content LIMIT 1").fetchall()
                    conn.execute("PRAGMA journal_mode = WAL")
                    conn.execute("PRAGMA synchronous = NORMAL")
                    return conn
                has_tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if version == 0 and not has_tables:
                    conn.execute("PRAGMA journal_mode = WAL")
                    conn.execute("PRAGMA synchronous = NORMAL")
                    conn.executescript(_SCHEMA)
                    return conn
                # Older or newer schema, or unknown content: rebuild from the files.
            except sqlite3.DatabaseError:
                if attempt:
                    conn.close()
                    raise
            conn.close()
            self._delete_files()
        raise sqlite3.DatabaseError("cannot create the session index")  # pragma: no cover

    def _delete_files(self) -> None:
        if self.newer_schema is not None:
            return  # a newer app's index: never ours to delete
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.index_path + suffix)

    def _reset(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        self._delete_files()

    # --------------------------------------------------------------- work

    def _scan_disk(self) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}
        root = self.repo.sessions_root
        try:
            with os.scandir(root) as it:
                folders = [e.path for e in it if e.is_dir(follow_symlinks=False)]
        except (FileNotFoundError, NotADirectoryError):
            return found
        for folder in folders:
            try:
                with os.scandir(folder) as it:
                    for entry in it:
                        if not entry.name.endswith(".jsonl"):
                            continue
                        try:
                            st = entry.stat()  # follows symlinks; a loop fails: skipped
                        except OSError:
                            continue
                        if stat.S_ISREG(st.st_mode):  # never a FIFO, device or folder
                            found[entry.path] = (st.st_size, st.st_mtime_ns)
            except OSError:
                continue
        return found

    def _plan(self, later: Collection[str]) -> tuple[list[str], list[str], list[str]]:
        """(added, updated, removed) files since the index was last brought in line,
        but for ``later``; the rows of the removed ones are deleted here."""
        skip = {os.path.abspath(p) for p in later}
        db = self._db()
        on_disk = {p: stat for p, stat in self._scan_disk().items() if p not in skip}
        known = {
            path: (size, mtime)
            for path, size, mtime in db.execute("SELECT path, size, mtime_ns FROM sessions")
        }
        added = [p for p in on_disk if p not in known]
        updated = [p for p, stat in on_disk.items() if p in known and known[p] != stat]
        removed = [p for p in known if p not in on_disk and p not in skip]
        if removed:
            with _transaction(db):
                for path in removed:
                    self._delete_row(db, path)
        return added, updated, removed

    def _index_some(self, paths: list[str], glance: bool) -> tuple[int, list[str], list[str]]:
        """Index the first of ``paths`` for at most `RECONCILE_SLICE_S` (one file at
        least), in one transaction; returns (how many, unreadable, glanced). A file gone
        since `_plan` (moved to the trash meanwhile, say) loses its row."""
        db = self._db()
        deadline = time.monotonic() + RECONCILE_SLICE_S
        unreadable: list[str] = []
        glanced: list[str] = []
        count = 0
        with _transaction(db):
            for path in paths:
                if count and time.monotonic() > deadline:
                    break
                count += 1
                if not os.path.isfile(path):
                    self._delete_row(db, path)
                    continue
                indexed = self._known(db, path)
                facts = read_facts(path, indexed, glance=glance and indexed is None)
                if facts.problem is not None:
                    unreadable.append(path)
                if is_glance(facts):
                    glanced.append(path)
                self._store(db, facts)
        return count, unreadable, glanced

    @staticmethod
    def _known(db: sqlite3.Connection, path: str) -> FileFacts | None:
        """The facts of ``path`` as indexed (an append is indexed from them on); None
        when not indexed, or only glanced at (a launch that stopped before finishing it
        glances again, any other update reads the whole file)."""
        row = db.execute(
            f"SELECT doc, {_COLUMNS}, text_chars, tail_crc FROM sessions WHERE path = ?",
            (path,),
        ).fetchone()
        if row is None:
            return None
        body = db.execute("SELECT body FROM content WHERE rowid = ?", (row[0],)).fetchone()
        *columns, text_chars, tail_crc = row[1:]
        facts = FileFacts(
            **dataclasses.asdict(IndexedSession(*columns)),
            body=body[0] if body else "",
            text_chars=text_chars,
            tail_crc=tail_crc,
        )
        return None if is_glance(facts) else facts

    def _store(self, db: sqlite3.Connection, facts: FileFacts) -> None:
        row = db.execute("SELECT doc FROM sessions WHERE path = ?", (facts.path,)).fetchone()
        values = facts.record()
        if row is None:
            cursor = db.execute(
                f"INSERT INTO sessions ({_COLUMNS}, title_fold, text_chars, tail_crc)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            doc = cursor.lastrowid
        else:
            doc = row[0]
            db.execute(
                "UPDATE sessions SET path = ?, id = ?, cwd = ?, created_at = ?, name = ?,"
                " first_prompt = ?, last_activity = ?, entry_count = ?, message_count = ?,"
                " size = ?, mtime_ns = ?, problem = ?, parent_session_path = ?, title_fold = ?,"
                " text_chars = ?, tail_crc = ? WHERE doc = ?",
                (*values, doc),
            )
            db.execute("DELETE FROM content WHERE rowid = ?", (doc,))
        if facts.body:
            db.execute("INSERT INTO content (rowid, body) VALUES (?, ?)", (doc, facts.body))

    @staticmethod
    def _delete_row(db: sqlite3.Connection, path: str) -> None:
        row = db.execute("SELECT doc FROM sessions WHERE path = ?", (path,)).fetchone()
        if row is not None:
            db.execute("DELETE FROM content WHERE rowid = ?", (row[0],))
            db.execute("DELETE FROM sessions WHERE doc = ?", (row[0],))

    def _update_file(self, path: str, opened: Session | None = None) -> IndexedSession | None:
        db = self._db()
        with _transaction(db):
            if not os.path.isfile(path):
                self._delete_row(db, path)
                return None
            if (known := self._unchanged(db, path)) is not None:
                return known  # e.g. closing a session that was only read: no re-read
            indexed = self._known(db, path)  # (a grown file is read from where it was)
            facts = facts_of_session(opened, path) if indexed is None else None
            facts = facts or read_facts(path, indexed)
            self._store(db, facts)
            return IndexedSession(*facts.row()[:-1])

    @staticmethod
    def _unchanged(db: sqlite3.Connection, path: str) -> IndexedSession | None:
        """The row of ``path`` when its ``(size, mtime_ns)`` still match the file (the
        rule `reconcile` keeps too), else None."""
        row = db.execute(f"SELECT {_COLUMNS} FROM sessions WHERE path = ?", (path,)).fetchone()
        if row is None:
            return None
        known = IndexedSession(*row)
        try:
            st = os.stat(path)
        except OSError:
            return None
        return known if (known.size, known.mtime_ns) == (st.st_size, st.st_mtime_ns) else None

    def _forget(self, path: str) -> None:
        with _transaction(db := self._db()):
            self._delete_row(db, path)

    def _sessions(self, cwd: str | None, query: str | None) -> list[IndexedSession]:
        db = self._db()
        where: list[str] = []
        params: list[Any] = []
        if cwd is not None:
            where.append("cwd = ?")
            params.append(cwd)
        words = query_words(query or "")
        match: str | None = None
        if words:
            # Every word in the name or first prompt (the one rule, `text_matches`), or
            # every word as a prefix of a word of the content (full-text search).
            title = " AND ".join("instr(fold(title_fold), ?) > 0" for _ in words)
            match = _fts_query(query or "")
            if match is None:
                where.append(f"({title})")
                params.extend(words)
            else:
                where.append(
                    f"(({title}) OR doc IN (SELECT rowid FROM content WHERE content MATCH ?))"
                )
                params.extend((*words, match))
        sql = f"SELECT {_COLUMNS} FROM sessions"
        if match is not None:
            # Where the words are in its text, for the list to show (m6: a hit showed
            # no hint of where it was); None when only the title matched.
            sql = (
                f"SELECT {_COLUMNS}, (SELECT snippet(content, 0, '{HIT_MARK}', '', '…',"
                f" {SNIPPET_WORDS}) FROM content WHERE content MATCH ? AND rowid = sessions.doc)"
                " FROM sessions"
            )
            params.insert(0, match)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY last_activity DESC, created_at DESC, path"
        if match is not None:
            return [
                dataclasses.replace(FoundSession(*row[:-1]), snippet=snippet_from_hit(row[-1]))
                for row in db.execute(sql, params)
            ]
        return [IndexedSession(*row) for row in db.execute(sql, params)]


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction (``BEGIN IMMEDIATE``): committed, or rolled back on any
    exception (cancellation included) before it goes on."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Errors that mean the index file itself is bad (not busy, not a bug)."""
    code = getattr(exc, "sqlite_errorcode", None)
    damage = {
        getattr(sqlite3, "SQLITE_CORRUPT", 11),
        getattr(sqlite3, "SQLITE_NOTADB", 26),
    }
    if code is not None:
        return code & 0xFF in damage
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def _file_user_version(path: str) -> int | None:
    """``PRAGMA user_version`` read from the database file's header (offset 60), without
    opening it with SQLite (which could create journal files or checkpoint a WAL)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except OSError:
        return None
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        return None
    return int.from_bytes(head[60:64], "big", signed=True)
