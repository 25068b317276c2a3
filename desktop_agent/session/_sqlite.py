"""SQLite session repo (stdlib sqlite3): the same entries and rules, one database file.

WAL journal, ``synchronous=FULL`` (every commit is durable), ``busy_timeout=5000``. The
schema version lives in ``PRAGMA user_version`` as ``major * 1000 + minor``; migrations
run in order inside a transaction, and a database from a newer *major* version is refused
without writing anything. Each entry is stored as its exact JSON line, so a session moves
between SQLite and JSONL without any change.
"""

from __future__ import annotations

import asyncio
import builtins
import errno
import json
import os
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from desktop_agent.session._codec import Entry, LineError, serialize
from desktop_agent.session._errors import SessionError
from desktop_agent.session._facts_scan import WORD, query_terms, searchable_body, text_hit
from desktop_agent.session._ids import now_iso, uuidv7
from desktop_agent.session._repos import ForkPosition, rows_to_fork
from desktop_agent.session._session import Session
from desktop_agent.session._storage import (
    NEWER_VERSION,
    DamagedLine,
    RecoveryReport,
    SessionMetadata,
    Storage,
    describe_os_error,
)
from desktop_agent.session._tree import Row, Tree
from desktop_agent.utils.atomic import atomic_write
from desktop_agent.utils.versions import header_stamp, is_newer, newer_reason, written_by

SCHEMA_MAJOR = 1
SCHEMA_MINOR = 0
SCHEMA_VERSION = SCHEMA_MAJOR * 1000 + SCHEMA_MINOR


def _migrate_0_to_1000(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE sessions (
            sid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            cwd TEXT,
            parent_session_path TEXT,
            metadata TEXT
        )"""
    )
    db.execute(
        """CREATE TABLE entries (
            sid INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            line TEXT NOT NULL,
            PRIMARY KEY (sid, seq)
        ) WITHOUT ROWID"""
    )


# from-version -> (to-version, step); applied in order until SCHEMA_VERSION.
MIGRATIONS: dict[int, tuple[int, Callable[[sqlite3.Connection], None]]] = {
    0: (1000, _migrate_0_to_1000),
}

_SQLITE_ERRNO = {
    13: errno.ENOSPC,  # SQLITE_FULL
    8: errno.EROFS,  # SQLITE_READONLY
    10: errno.EIO,  # SQLITE_IOERR
    14: errno.EACCES,  # SQLITE_CANTOPEN
    5: errno.EBUSY,  # SQLITE_BUSY
    6: errno.EBUSY,  # SQLITE_LOCKED
    11: errno.EIO,  # SQLITE_CORRUPT
    26: errno.EIO,  # SQLITE_NOTADB
}


def _as_os_error(exc: sqlite3.Error) -> OSError:
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    number = _SQLITE_ERRNO.get(primary or -1, errno.EIO)
    return OSError(number, f"{os.strerror(number)} (SQLite: {exc})")


class _Database:
    """One connection, used from the loop and worker threads under a lock."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lock = threading.Lock()
        directory = os.path.dirname(os.path.abspath(path))
        try:
            os.makedirs(directory, exist_ok=True)
            self.db = sqlite3.connect(
                path, check_same_thread=False, isolation_level=None, timeout=5.0
            )
        except (OSError, sqlite3.Error) as exc:
            raise SessionError("storage", f"Cannot open session database {path}: {exc}") from exc
        try:
            self.db.execute("PRAGMA busy_timeout=5000")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.Error as exc:
            self.db.close()
            raise SessionError(
                "storage",
                f"Cannot use session database {path}: {describe_os_error(_as_os_error(exc))}",
            ) from exc
        except SessionError:
            self.db.close()
            raise

    def _migrate(self) -> None:
        version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
        if version // 1000 > SCHEMA_MAJOR:
            raise SessionError(
                "invalid_session",
                f"The session database {self.path} was written by a newer Desktop Agent"
                f" (schema {version // 1000}.{version % 1000}); update the app to open it."
                " Nothing was changed.",
            )
        while version < SCHEMA_VERSION and version // 1000 <= SCHEMA_MAJOR:
            step = MIGRATIONS.get(version)
            if step is None:
                break
            target, migrate = step
            self.db.execute("BEGIN IMMEDIATE")
            try:
                migrate(self.db)
                self.db.execute(f"PRAGMA user_version={int(target)}")
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            version = target

    def close(self) -> None:
        with self.lock:
            self.db.close()


class SqliteStorage(Storage):
    def __init__(
        self,
        database: _Database,
        sid: int,
        metadata: SessionMetadata,
        tree: Tree,
        written: int,
        *,
        read_only_reason: str | None = None,
        recovery: RecoveryReport | None = None,
    ) -> None:
        super().__init__(metadata, tree, read_only_reason=read_only_reason, recovery=recovery)
        self._database = database
        self._sid = sid
        self._written = written

    def _write(self, indices: list[int]) -> None:
        db = self._database.db
        start = self._written
        lines = self.tree.lines(indices)
        params = [(self._sid, start + n, raw.decode("utf-8")) for n, raw in enumerate(lines)]
        with self._database.lock:
            try:
                db.execute("BEGIN IMMEDIATE")
                db.executemany("INSERT INTO entries (sid, seq, line) VALUES (?, ?, ?)", params)
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                if db.in_transaction:
                    try:
                        db.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                raise _as_os_error(exc) from exc
        self._written += len(indices)

    def _fsync(self) -> None:
        """Every commit is already durable (synchronous=FULL)."""

    def save_copy(self, dest: str) -> None:
        """Everything in memory (written or not) as a Pi v3 JSONL file at ``dest``."""
        meta = self.metadata
        header: dict[str, Any] = {
            "type": "session",
            "version": 3,
            "id": meta.id,
            "timestamp": meta.created_at,
            "cwd": meta.cwd or "",
        }
        if meta.parent_session_path:
            header["parentSession"] = meta.parent_session_path
        if meta.metadata is not None:
            header["metadata"] = meta.metadata
        tree = self.tree
        data = serialize(header) + b"\n" + tree.lines_bytes(range(len(tree)))
        atomic_write(dest, data, mode=0o644)


class SqliteSessionRepo:
    """All sessions in one SQLite database."""

    def __init__(self, database_path: str | os.PathLike[str]) -> None:
        self.database_path = os.fspath(database_path)
        self._database: _Database | None = None

    def _db(self) -> _Database:
        if self._database is None:
            self._database = _Database(self.database_path)
        return self._database

    async def close(self) -> None:
        if self._database is not None:
            self._database.close()
            self._database = None

    def _create_sync(
        self,
        cwd: str | None,
        session_id: str | None,
        metadata: dict[str, Any] | None,
        parent: str | None,
        rows: list[Row],
    ) -> Session:
        return self._create_from(
            cwd, session_id, metadata, parent, [(r.entry(), r.raw) for r in rows]
        )

    def _create_from(
        self,
        cwd: str | None,
        session_id: str | None,
        metadata: dict[str, Any] | None,
        parent: str | None,
        copies: list[tuple[Entry, bytes]],
    ) -> Session:
        database = self._db()
        entries = [e for e, _ in copies]
        lines = [raw for _, raw in copies]
        metadata = {**(metadata or {}), **header_stamp()}  # which app wrote it
        meta = SessionMetadata(
            id=session_id or uuidv7(),
            created_at=now_iso(),
            cwd=cwd,
            path=None,
            parent_session_path=parent,
            metadata=metadata,
        )
        with database.lock:
            db = database.db
            try:
                db.execute("BEGIN IMMEDIATE")
                cur = db.execute(
                    "INSERT INTO sessions (id, created_at, cwd, parent_session_path, metadata)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (
                        meta.id,
                        meta.created_at,
                        cwd,
                        parent,
                        json.dumps(metadata),
                    ),
                )
                sid = int(cur.lastrowid or 0)
                db.executemany(
                    "INSERT INTO entries (sid, seq, line) VALUES (?, ?, ?)",
                    [(sid, i, raw.decode("utf-8")) for i, raw in enumerate(lines)],
                )
                db.execute("COMMIT")
            except sqlite3.IntegrityError as exc:
                db.execute("ROLLBACK")
                raise SessionError("invalid_argument", f"Session {meta.id} already exists") from exc
            except sqlite3.Error as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise SessionError(
                    "storage", f"Cannot create session: {describe_os_error(_as_os_error(exc))}"
                ) from exc
        tree = Tree()
        for entry, raw in zip(entries, lines, strict=True):
            tree.add(entry, raw)
        return Session(SqliteStorage(database, sid, meta, tree, len(lines)))

    async def create(
        self,
        *,
        cwd: str | None = None,
        id: str | None = None,
        metadata: dict[str, Any] | None = None,
        parent_session_path: str | None = None,
    ) -> Session:
        return await asyncio.to_thread(
            self._create_sync, cwd, id, metadata, parent_session_path, []
        )

    def _lookup(self, session_id: str) -> tuple[int, SessionMetadata]:
        database = self._db()
        with database.lock:
            row = database.db.execute(
                "SELECT sid, id, created_at, cwd, parent_session_path, metadata"
                " FROM sessions WHERE id = ?",
                (session_id,),
            ).fetchone()
        if row is None:
            raise SessionError("not_found", f"Session not found: {session_id}")
        meta_json = json.loads(row[5]) if row[5] else None
        return int(row[0]), SessionMetadata(
            id=row[1],
            created_at=row[2],
            cwd=row[3],
            path=None,
            parent_session_path=row[4],
            metadata=meta_json if isinstance(meta_json, dict) else None,
        )

    def _load_tree(self, sid: int) -> tuple[Tree, list[DamagedLine], int]:
        database = self._db()
        with database.lock:
            lines = database.db.execute(
                "SELECT seq, line FROM entries WHERE sid = ? ORDER BY seq", (sid,)
            ).fetchall()
        tree = Tree()
        damaged: list[DamagedLine] = []
        for seq, line in lines:
            raw = line.encode("utf-8", "surrogatepass")
            try:
                tree.add_line(raw)
            except LineError as exc:
                damaged.append(DamagedLine(int(seq) + 2, 0, exc.reason, raw))
        return tree, damaged, len(lines)

    def _open_sync(self, metadata: SessionMetadata) -> Session:
        sid, meta = self._lookup(metadata.id)
        tree, damaged, count = self._load_tree(sid)
        recovery = RecoveryReport(damaged_lines=tuple(damaged)) if damaged else None
        reason = "parts of the session are damaged" if damaged else None
        code = "read_only"
        version = written_by(meta.metadata)
        if version is not None and is_newer(version):
            reason, code = newer_reason("it", version), NEWER_VERSION
        storage = SqliteStorage(
            self._db(), sid, meta, tree, count, read_only_reason=reason, recovery=recovery
        )
        storage.read_only_code = code
        return Session(storage)

    async def open(self, metadata: SessionMetadata) -> Session:
        return await asyncio.to_thread(self._open_sync, metadata)

    def _list_sync(self, cwd: str | None) -> list[SessionMetadata]:
        database = self._db()
        with database.lock:
            rows = database.db.execute(
                "SELECT id, created_at, cwd, parent_session_path, metadata FROM sessions"
                " ORDER BY created_at DESC, sid DESC"
            ).fetchall()
        out = []
        for r in rows:
            if cwd is not None and r[2] != cwd:
                continue
            meta = json.loads(r[4]) if r[4] else None
            out.append(
                SessionMetadata(
                    id=r[0],
                    created_at=r[1],
                    cwd=r[2],
                    path=None,
                    parent_session_path=r[3],
                    metadata=meta if isinstance(meta, dict) else None,
                )
            )
        return out

    async def list(self, cwd: str | None = None) -> list[SessionMetadata]:
        return await asyncio.to_thread(self._list_sync, cwd)

    def _search_sync(self, query: str) -> dict[str, str]:
        terms = query_terms(query)
        if not terms:
            return {}
        database = self._db()
        with database.lock:
            db = database.db
            # Candidates: sessions with lines that hold each ASCII term (lower() folds
            # ASCII only; a non-ASCII term is left to the check of the text below).
            sids: set[int] | None = None
            # (as typed: casefold makes "ß" an ASCII "ss" that the line does not hold)
            ascii_words = [w.lower() for w in WORD.findall(query) if w.isascii()]
            for term in ascii_words:
                found = {
                    r[0]
                    for r in db.execute(
                        "SELECT DISTINCT sid FROM entries WHERE instr(lower(line), ?) > 0", (term,)
                    )
                }
                sids = found if sids is None else sids & found
                if not sids:
                    return {}
            ids = dict(db.execute("SELECT sid, id FROM sessions").fetchall())
        hits: dict[str, str] = {}
        for sid in sorted(ids if sids is None else sids):
            with database.lock:
                lines = [
                    r[0]
                    for r in database.db.execute(
                        "SELECT line FROM entries WHERE sid = ? ORDER BY seq", (sid,)
                    )
                ]
            snippet = text_hit(terms, searchable_body(lines))
            if snippet is not None and sid in ids:
                hits[ids[sid]] = snippet
        return hits

    async def search(self, query: str) -> dict[str, str]:
        """The sessions whose text (what Copy copies of its prompts, replies and tool
        results, the first `TEXT_CAP_CHARS`) holds every word of ``query`` as the start of
        one of its words, as the files' full-text index finds them: id -> the snippet
        around the first hit. (An ASCII word does not find an accented spelling here.)"""
        return await asyncio.to_thread(self._search_sync, query)

    def _delete_sync(self, metadata: SessionMetadata) -> None:
        database = self._db()
        with database.lock:
            db = database.db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "DELETE FROM entries WHERE sid IN (SELECT sid FROM sessions WHERE id = ?)",
                    (metadata.id,),
                )
                db.execute("DELETE FROM sessions WHERE id = ?", (metadata.id,))
                db.execute("COMMIT")
            except sqlite3.Error:
                db.execute("ROLLBACK")
                raise

    async def delete(self, metadata: SessionMetadata) -> None:
        await asyncio.to_thread(self._delete_sync, metadata)

    async def create_from_entries(
        self,
        copies: builtins.list[tuple[Entry, bytes]],
        *,
        cwd: str | None,
        parent_session_path: str,
    ) -> Session:
        """A new session holding ``copies`` (entries with their lines, e.g. another
        store's `read_entries`), verbatim; its header names ``parent_session_path``."""
        return await asyncio.to_thread(
            self._create_from, cwd, None, None, parent_session_path, copies
        )

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
        def run() -> Session:
            sid, meta = self._lookup(source.id)
            tree, _damaged, _count = self._load_tree(sid)
            rows = rows_to_fork(tree, entry_id, position)
            return self._create_sync(
                cwd if cwd is not None else meta.cwd,
                id,
                None,
                parent_session_path or f"sqlite:{meta.id}",
                rows,
            )

        return await asyncio.to_thread(run)
