"""PostgreSQL session repo (psycopg 3 and its pool): the same entries on a shared server.

Everything lives in the schema ``desktop_agent``. Each entry is kept as its exact JSON line
(``lines.line``, ``bytea``), so a session exports to a Pi file byte for byte, with the text
of messages for PostgreSQL's full-text search; apart from it (``entries``) the columns a
tree is built from (id, parent, type, time, role, the line's length), so opening a session
reads no line but the few bookkeeping ones. The ``sessions`` row carries what
the list shows (name, first prompt, counts, last activity, trash), written in the same
transaction as the entries, so the list never reads a transcript.

One writer per session across machines: a session opened for writing holds a
session-level advisory lock on a connection of its own; another process opens it
read-only and follows it (`PostgresStorage.pull`, woken by LISTEN/NOTIFY, see `Listener`).
Every write sends a NOTIFY on channel ``desktop_agent`` with ``"<kind> <session id>"``
(``entries``, ``created``, ``released``, ``deleted``, ``trash``).

A lost server is a failed save (`OSError` ``ENOTCONN`` inside the `SessionWriteError`),
like a full disk: the entries stay queued and a retry writes exactly the missing ones.
A server that stops answering but keeps its connections open (a frozen host, a stopped
process: the kernel still acknowledges, so neither TCP keepalives nor
``tcp_user_timeout`` notice) is the same failed save once `Deadline` ends the exchange
(``ETIMEDOUT``, after ``answer_timeout_s``): every statement on the server runs under one.
Rows are numbered (``seq``) by the writer; a retry after a commit whose answer was lost
finds its rows already there, checks they are the same entry ids and lines, and does not
write them again.

The schema version is in ``desktop_agent.meta``; numbered migrations run under a
transaction-level advisory lock, so two apps starting at once migrate once. A database
migrated by a newer version opens read-only (`PostgresSessionRepo.read_only_reason`).
"""

from __future__ import annotations

import asyncio
import bisect
import builtins
import errno
import hashlib
import heapq
import itertools
import json
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from desktop_agent.session import _entryindex
from desktop_agent.session._codec import (
    BOOKKEEPING,
    Entry,
    LineError,
    loads_js,
    parse_line,
    serialize,
)
from desktop_agent.session._entries import NOT_ACTIVITY
from desktop_agent.session._errors import SessionError
from desktop_agent.session._facts_scan import HIT_MARK, snippet_from_hit
from desktop_agent.session._ids import now_iso, uuidv7
from desktop_agent.session._platform import FileStat
from desktop_agent.session._repos import ForkPosition, rows_to_fork
from desktop_agent.session._session import Session
from desktop_agent.session._storage import (
    NEWER_VERSION,
    DamagedLine,
    RecoveryReport,
    RemoteError,
    SessionMetadata,
    Storage,
)
from desktop_agent.session._tree import Tree
from desktop_agent.utils.atomic import atomic_write
from desktop_agent.utils.versions import header_stamp, is_newer, newer_reason, written_by

log = logging.getLogger("desktop_agent.session.postgres")

SCHEMA = "desktop_agent"
SCHEMA_VERSION = 1
CHANNEL = "desktop_agent"
LOCK_CLASS = 0x44410001  # "DA\0\1": the class of our advisory locks (int4)
MIGRATION_LOCK = 0x4441_4D49_4752  # "DAMIGR": one migration at a time
CONNECT_TIMEOUT_S = 5
KEEPALIVE_IDLE_S = 10
KEEPALIVE_INTERVAL_S = 3
KEEPALIVE_COUNT = 3
TCP_USER_TIMEOUT_MS = 20_000
ANSWER_TIMEOUT_S = 15.0
"""How long a statement (or a transaction of appends) may wait for the server's answer
before the exchange is ended and the save fails (`Deadline`); a copy of a whole session
gets one more second per 200 KB it sends (a slow link or a busy server is not a silent
one), and reading a whole session eight times the time."""
WHOLE_READ_FACTOR = 8
REF_PREFIX = "postgres:"


def _migrate_0_to_1(cur: psycopg.Cursor[Any]) -> None:
    cur.execute(
        """
        CREATE TABLE desktop_agent.sessions (
            sid serial PRIMARY KEY,
            id text NOT NULL UNIQUE,
            created_at text NOT NULL,
            cwd text,
            parent_session_path text,
            metadata text,
            name text,
            first_prompt text,
            entry_count integer NOT NULL DEFAULT 0,
            message_count integer NOT NULL DEFAULT 0,
            last_activity text NOT NULL,
            trashed_at text
        );
        CREATE INDEX sessions_activity ON desktop_agent.sessions (last_activity DESC);
        CREATE TABLE desktop_agent.entries (
            sid integer NOT NULL REFERENCES desktop_agent.sessions (sid) ON DELETE CASCADE,
            seq integer NOT NULL,
            entry_id text NOT NULL,
            parent_id text,
            type text NOT NULL,
            ts text NOT NULL,
            role text,
            len integer NOT NULL,
            PRIMARY KEY (sid, seq)
        );
        CREATE TABLE desktop_agent.lines (
            sid integer NOT NULL REFERENCES desktop_agent.sessions (sid) ON DELETE CASCADE,
            seq integer NOT NULL,
            line bytea NOT NULL,
            body text,
            PRIMARY KEY (sid, seq)
        );
        CREATE INDEX lines_search ON desktop_agent.lines
            USING gin (to_tsvector('simple', body)) WHERE body IS NOT NULL;
        """
    )


MIGRATIONS: dict[int, Callable[[psycopg.Cursor[Any]], None]] = {0: _migrate_0_to_1}
"""from-version -> the step to from-version + 1; applied in order up to SCHEMA_VERSION."""


class ServerError(RemoteError):
    """The database server could not be reached or refused a statement."""


def server_error(exc: BaseException) -> ServerError:
    """A calm sentence for a psycopg error (never the URL or password: libpq's messages
    name the host and port only)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return ServerError(errno.ETIMEDOUT, f"the database server timed out ({text})")
    if "authentication failed" in text or "no password supplied" in text:
        return ServerError(errno.EACCES, f"the database server refused the login ({text})")
    if isinstance(exc, psycopg.OperationalError | PoolTimeout):
        return ServerError(errno.ENOTCONN, f"the database server cannot be reached ({text})")
    return ServerError(errno.EIO, f"the database server refused it ({text})")


class Deadline:
    """Ends ``conn``'s exchange with the server when it is not over within ``seconds``:
    its socket is shut down (by `_WATCHDOG`'s thread), so the thread blocked in libpq gets
    "connection lost" at once and the statement fails (a server that is stopped or frozen
    keeps TCP open, so libpq would wait forever). Used as a context manager around every
    exchange; `expired` says it was the deadline (the error is then ``ETIMEDOUT``)."""

    def __init__(self, conn: psycopg.Connection[Any], seconds: float) -> None:
        self._conn = conn
        self.seconds = seconds
        self.expired = False
        self.due = 0.0
        self.over = False
        self._lock = threading.Lock()

    def expire(self) -> None:
        """(The watchdog's thread) shut the socket down unless the exchange is over."""
        with self._lock:
            if self.over:
                return
            self.expired = True
            try:
                fd = self._conn.pgconn.socket
                with socket.socket(fileno=os.dup(fd)) as sock:
                    sock.shutdown(socket.SHUT_RDWR)
            except (OSError, psycopg.Error) as exc:  # already closed: nothing is waiting
                log.debug("ending a silent connection: %s", exc)

    def __enter__(self) -> Deadline:
        self.due = time.monotonic() + self.seconds
        _WATCHDOG.watch(self)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.over = True

    def error(self, exc: BaseException) -> ServerError:
        """The `ServerError` for ``exc`` raised inside: a silent server says so."""
        if self.expired:
            return ServerError(
                errno.ETIMEDOUT,
                f"the database server did not answer within {max(1, round(self.seconds))} s",
            )
        return server_error(exc)


class _Watchdog:
    """One thread for every `Deadline` (a timer thread each would start a thread per
    statement): it sleeps until the earliest one is due and expires it if still open."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: Deadline) -> None:
        with self._wake:
            heapq.heappush(self._due, (deadline.due, next(self._order), deadline))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="postgres-deadlines", daemon=True
                )
                self._thread.start()
            if self._due[0][2] is deadline:  # (else it wakes for an earlier one anyway)
                self._wake.notify()

    def _next(self) -> Deadline:
        with self._wake:
            while True:
                due = self._due
                while due and due[0][2].over:
                    heapq.heappop(due)
                now = time.monotonic()
                if due and due[0][0] <= now:
                    return heapq.heappop(due)[2]
                self._wake.wait(due[0][0] - now if due else None)

    def _run(self) -> None:
        while True:
            self._next().expire()


_WATCHDOG = _Watchdog()


def _check_connection(conn: psycopg.Connection[Any]) -> None:
    """The pool's check of a connection it lends (bounded: a silent server fails it)."""
    with Deadline(conn, CONNECT_TIMEOUT_S):
        ConnectionPool.check_connection(conn)


def searchable_text(raw: bytes) -> str | None:
    """The words of a message entry (its text blocks), for full-text search."""
    if b'"type":"message"' not in raw and b'"type":"custom_message"' not in raw:
        return None
    try:
        obj = loads_js(raw)
    except ValueError:
        return None
    holder = obj.get("message", obj) if isinstance(obj, dict) else None
    content = holder.get("content") if isinstance(holder, dict) else None
    if isinstance(content, str):
        text = content
    else:
        text = " ".join(
            block["text"]
            for block in content or ()
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    # The server's text holds neither NUL nor lone surrogates (the line keeps them).
    clean = text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8")
    return clean or None


def _first_prompt(tree: Tree, indices: Iterable[int]) -> str | None:
    for i in indices:
        if tree.types[i] == "message" and tree.roles[i] == "user":
            text = searchable_text(next(iter(tree.lines([i]))))
            if text:
                return " ".join(text.split())[:200]
    return None


def newer_schema(version: int) -> str:
    return (
        f"the session database was migrated by a newer Desktop Agent (schema {version},"
        f" this version knows {SCHEMA_VERSION}); update the app to write to it"
    )


class _Server:
    """The pool of connections for everything but writing (listing, opening, creating),
    used from worker threads, and the facts of the database (its schema version)."""

    def __init__(self, url: str, answer_timeout_s: float = ANSWER_TIMEOUT_S) -> None:
        self.url = url
        self.answer_timeout_s = answer_timeout_s
        self.read_only_reason: str | None = None
        try:
            _connect(url).close()  # the real reason at once (the pool retries quietly)
        except psycopg.Error as exc:
            raise SessionError(
                "storage", f"Cannot use the session database: {server_error(exc).strerror}"
            ) from exc
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=4,
            kwargs=_defaults(url),
            check=_check_connection,
            open=False,
            name="desktop-agent",
        )
        try:
            self.pool.open(wait=True, timeout=CONNECT_TIMEOUT_S + 1)
        except (PoolTimeout, psycopg.Error) as exc:
            self.pool.close()
            raise SessionError(
                "storage", f"Cannot use the session database: {server_error(exc).strerror}"
            ) from exc
        try:
            self._migrate()
        except psycopg.Error as exc:
            self.pool.close()
            raise SessionError(
                "storage", f"Cannot use the session database: {server_error(exc).strerror}"
            ) from exc
        except SessionError:
            self.pool.close()
            raise

    def _version(self) -> int:
        """The schema version (0: none yet), read without writing anything (a login
        that may only read sessions gets this far)."""
        with self.pool.connection() as conn, Deadline(conn, self.answer_timeout_s):
            found = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.meta",)).fetchone()
            if not found or found[0] is None:
                return 0
            row = conn.execute(
                f"SELECT value FROM {SCHEMA}.meta WHERE key = 'schema_version'"
            ).fetchone()
            return int(row[0]) if row else 0

    def _migrate(self) -> None:
        version = self._version()
        if version > SCHEMA_VERSION:
            self.read_only_reason = newer_schema(version)
            return
        if version == SCHEMA_VERSION:
            return
        with (
            self.pool.connection() as conn,
            Deadline(conn, self.answer_timeout_s),
            conn.transaction(),
            conn.cursor() as cur,
        ):
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            cur.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            cur.execute(
                f"CREATE TABLE IF NOT EXISTS {SCHEMA}.meta (key text PRIMARY KEY, value text)"
            )
            cur.execute(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'schema_version'")
            row = cur.fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:  # (migrated by a newer app meanwhile)
                self.read_only_reason = newer_schema(version)
                return
            while version < SCHEMA_VERSION:
                MIGRATIONS[version](cur)
                version += 1
            cur.execute(
                f"INSERT INTO {SCHEMA}.meta (key, value) VALUES ('schema_version', %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(version),),
            )

    def close(self) -> None:
        self.pool.close()


def connect_kwargs() -> dict[str, Any]:
    """Defaults a URL may override (libpq reads ``sslmode``, ``options``, … from it).

    A network partition must not hang a save until the system's TCP timeout (hours):
    keepalives notice a silent server on an idle connection within
    ``KEEPALIVE_IDLE_S + KEEPALIVE_INTERVAL_S * KEEPALIVE_COUNT`` s, and
    ``tcp_user_timeout`` fails a connection whose sent data stays unacknowledged that
    long (a write in flight), so the save fails and the Retry dialog shows."""
    return {
        "connect_timeout": CONNECT_TIMEOUT_S,
        "application_name": "desktop-agent",
        "keepalives": 1,
        "keepalives_idle": KEEPALIVE_IDLE_S,
        "keepalives_interval": KEEPALIVE_INTERVAL_S,
        "keepalives_count": KEEPALIVE_COUNT,
        "tcp_user_timeout": TCP_USER_TIMEOUT_MS,
    }


def _defaults(url: str) -> dict[str, Any]:
    given = psycopg.conninfo.conninfo_to_dict(url)
    return {k: v for k, v in connect_kwargs().items() if k not in given}


def _connect(url: str) -> psycopg.Connection[Any]:
    return psycopg.connect(url, autocommit=True, **_defaults(url))


def _connect_or_raise(url: str) -> psycopg.Connection[Any]:
    """`_connect`, its failure a `ServerError`."""
    try:
        return _connect(url)
    except psycopg.Error as exc:
        raise server_error(exc) from exc


def _notify(cur: psycopg.Cursor[Any], kind: str, session_id: str) -> None:
    cur.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{kind} {session_id}"))


class PostgresStorage(Storage):
    """One session's entries on the server; writes through a connection of its own that
    holds the session's advisory lock (None while read-only). Appends write on a worker
    thread (`writes_off_loop`): the event loop never waits for the server."""

    writes_off_loop = True

    def __init__(
        self,
        server: _Server,
        sid: int,
        metadata: SessionMetadata,
        tree: Tree,
        written: int,
        writer: psycopg.Connection[Any] | None,
        *,
        read_only_reason: str | None = None,
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
        self._server = server
        self.sid = sid
        self._written = written
        self._writer = writer
        self._io = threading.Lock()  # the writer connection: loop thread and workers
        self._lost_pid: int | None = None  # the server process of a writer connection lost
        self._silent: ServerError | None = None  # the server stopped answering: until Retry
        types = tree.types
        self._messages = (
            types.count("message")
            if written == len(types)
            else sum(1 for i in range(written) if types[i] == "message")
        )
        self._first_prompt = _first_prompt(tree, range(written))

    @property
    def written(self) -> int:
        return self._written

    # ----------------------------------------------------------------- writing

    def _connection(self) -> psycopg.Connection[Any]:
        """The writer connection, connected again (and the lock taken again) after the
        server was lost."""
        conn = self._writer
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        if conn is not None:
            self._lose(conn)
        conn = _connect_or_raise(self._server.url)
        try:
            with Deadline(conn, self._server.answer_timeout_s) as deadline:
                got = self._lock_again(conn)
        except psycopg.Error as exc:
            conn.close()
            raise deadline.error(exc) from exc
        if not got:
            conn.close()
            raise ServerError(
                errno.EBUSY,
                "another Desktop Agent took this session over while the server was away",
            )
        self._writer = conn
        self._lost_pid = None
        return conn

    def _lose(self, conn: psycopg.Connection[Any]) -> None:
        """Close a writer connection that failed, noting its server process: it may still
        hold the session's lock for a while (a frozen server resumes it later)."""
        if self._lost_pid is None:
            try:
                self._lost_pid = conn.info.backend_pid or None
            except psycopg.Error:
                self._lost_pid = None
        conn.close()
        if self._writer is conn:
            self._writer = None

    def _lock_again(self, conn: psycopg.Connection[Any]) -> bool:
        """Take the session's lock on a new writer connection. When the process of our
        lost connection still holds it (the server was frozen, not gone), that process
        is ended (a login may end its own) and the lock taken once it is free: its
        transaction either committed or not, and the retry's rows say which."""
        lock = "SELECT pg_try_advisory_lock(%s::int4, %s::int4)"
        row = conn.execute(lock, (LOCK_CLASS, self.sid)).fetchone()
        if row and row[0]:
            return True
        if self._lost_pid is None:
            return False
        holder = conn.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND classid = %s AND objid = %s AND objsubid = 2",
            (LOCK_CLASS, self.sid),
        ).fetchone()
        if holder is None or int(holder[0]) != self._lost_pid:
            return False
        conn.execute("SELECT pg_terminate_backend(%s)", (self._lost_pid,))
        for _ in range(50):
            row = conn.execute(lock, (LOCK_CLASS, self.sid)).fetchone()
            if row and row[0]:
                return True
            threading.Event().wait(0.05)
        return False

    def retry(self) -> int:
        """The user's Retry: the server is tried again even after it stopped answering."""
        self._silent = None
        return super().retry()

    def _write(self, indices: list[int]) -> None:
        if self._silent is not None:
            # A silent server would make every append of the run wait for the connect
            # timeout again: they queue at once, and Retry tries the server again.
            raise ServerError(self._silent.errno, self._silent.strerror)
        tree = self.tree
        start = self._written
        lines = list(tree.lines(indices))
        rows = [
            (
                self.sid,
                start + n,
                tree.ids[i],
                tree.parent_at(i),
                tree.types[i],
                tree.timestamp_at(i),
                tree.roles[i],
                len(raw),
            )
            for n, (i, raw) in enumerate(zip(indices, lines, strict=True))
        ]
        texts = [(self.sid, start + n, raw, searchable_text(raw)) for n, raw in enumerate(lines)]
        messages = self._messages + sum(1 for i in indices if tree.types[i] == "message")
        # A rename or a label is not activity (p17): the row keeps its place in the list.
        active = next(
            (
                stamp
                for i in reversed(indices)
                if tree.types[i] not in NOT_ACTIVITY and (stamp := tree.timestamp_at(i))
            ),
            None,
        )
        first = self._first_prompt or _first_prompt(tree, indices)
        size = sum(len(raw) for raw in lines)
        with self._io:
            conn = self._connection()
            deadline = Deadline(conn, self._server.answer_timeout_s + size / 200_000)
            try:
                with deadline, conn.transaction(), conn.cursor() as cur:
                    cur.executemany(
                        f"INSERT INTO {SCHEMA}.entries (sid, seq, entry_id, parent_id, type, ts,"
                        " role, len) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                        " ON CONFLICT DO NOTHING",
                        rows,
                    )
                    if cur.rowcount != len(rows):
                        self._check_written(cur, rows, lines)
                    cur.executemany(
                        f"INSERT INTO {SCHEMA}.lines (sid, seq, line, body)"
                        " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        texts,
                    )
                    cur.execute(
                        f"UPDATE {SCHEMA}.sessions SET entry_count = %s, message_count = %s,"
                        " last_activity = greatest(coalesce(%s, last_activity), created_at),"
                        " name = %s, first_prompt = %s WHERE sid = %s",
                        (
                            start + len(rows),
                            messages,
                            active,
                            tree.name,
                            first,
                            self.sid,
                        ),
                    )
                    _notify(cur, "entries", self.metadata.id)
            except ServerError:
                raise
            except psycopg.Error as exc:
                self._lose(conn)  # connected again (and locked again) on retry
                error = deadline.error(exc)
                if deadline.expired:
                    self._silent = error
                raise error from exc
        self._written += len(rows)
        self._messages = messages
        self._first_prompt = first

    def _check_written(
        self, cur: psycopg.Cursor[Any], rows: list[tuple[Any, ...]], lines: list[bytes]
    ) -> None:
        """Some rows were there already: a retry of a commit whose answer was lost wrote
        them (same ids and lines: fine), or another writer did (refused)."""
        cur.execute(
            f"SELECT e.seq, e.entry_id, l.line FROM {SCHEMA}.entries e LEFT JOIN"
            f" {SCHEMA}.lines l ON l.sid = e.sid AND l.seq = e.seq"
            " WHERE e.sid = %s AND e.seq >= %s AND e.seq <= %s",
            (self.sid, rows[0][1], rows[-1][1]),
        )
        there = {
            int(seq): (entry_id, bytes(line) if line is not None else None)
            for seq, entry_id, line in cur.fetchall()
        }
        for row, raw in zip(rows, lines, strict=True):
            seq, entry_id = row[1], row[2]
            if there.get(seq, (entry_id, raw)) != (entry_id, raw):
                raise ServerError(
                    errno.EEXIST,
                    f"another Desktop Agent wrote entry {seq + 1} of this session meanwhile",
                )

    def _fsync(self) -> None:
        """Every commit is durable on the server (its own fsync)."""

    # ------------------------------------------------------------- following

    def _try_become_writable(self) -> bool:
        """A session another process held becomes ours once it lets go, if we have read
        everything it wrote."""
        if self.read_only_code != "locked":
            return False
        with self._io:
            try:
                conn = _connect(self._server.url)
            except psycopg.Error:
                return False
            try:
                with Deadline(conn, self._server.answer_timeout_s):
                    got = conn.execute(
                        "SELECT pg_try_advisory_lock(%s::int4, %s::int4)", (LOCK_CLASS, self.sid)
                    ).fetchone()
                    if not got or not got[0]:
                        conn.close()
                        return False
                    row = conn.execute(
                        f"SELECT count(*) FROM {SCHEMA}.entries WHERE sid = %s", (self.sid,)
                    ).fetchone()
            except psycopg.Error:
                conn.close()
                return False
            if row is None or int(row[0]) != self._written:
                conn.close()  # it wrote more than we read: pull first
                return False
            self._writer = conn
        self.read_only_reason = None
        self.read_only_code = "read_only"
        return True

    def pull(self) -> list[int]:
        """Read the entries another process appended since we last looked (a read-only
        session following a writer); returns their indices in the tree."""
        if not self.read_only or self.pending:
            return []
        server = self._server
        deadline: Deadline | None = None
        try:
            with (
                server.pool.connection(timeout=CONNECT_TIMEOUT_S + 1) as conn,
                Deadline(conn, server.answer_timeout_s) as deadline,
            ):
                rows = conn.execute(
                    f"SELECT seq, line FROM {SCHEMA}.lines WHERE sid = %s AND seq >= %s"
                    " ORDER BY seq",
                    (self.sid, self._written),
                    binary=True,
                ).fetchall()
        except (psycopg.Error, PoolTimeout) as exc:
            raise (deadline.error(exc) if deadline else server_error(exc)) from exc
        added: list[int] = []
        for seq, line in rows:
            if int(seq) != self._written:
                break  # a gap: the rest comes with the next notification
            try:
                added.append(self.tree.add_line(bytes(line)))
            except LineError as exc:
                log.warning("entry %d of session %s is unreadable: %s", seq, self.sid, exc)
                break
            self._written += 1
        return added

    # ------------------------------------------------------------- the rest

    def save_copy(self, dest: str) -> None:
        """Everything in memory (written or not) as a Pi v3 JSONL file at ``dest``."""
        atomic_write(dest, jsonl_bytes(self.metadata, self.tree), mode=0o644)

    def _close(self) -> None:
        source = self.tree.source
        if isinstance(source, _RowSource):
            source.stop()
        with self._io:
            conn, self._writer = self._writer, None
            if conn is None:
                return
            try:
                if not conn.closed and not conn.broken:
                    with Deadline(conn, CONNECT_TIMEOUT_S), conn.cursor() as cur:
                        cur.execute(
                            "SELECT pg_advisory_unlock(%s::int4, %s::int4)", (LOCK_CLASS, self.sid)
                        )
                        _notify(cur, "released", self.metadata.id)
            except psycopg.Error as exc:
                log.info("releasing session %s: %s", self.metadata.id, server_error(exc))
            finally:
                conn.close()


def jsonl_bytes(meta: SessionMetadata, tree: Tree) -> bytes:
    """The session as a Pi v3 JSONL file: its header line, then every entry's line."""
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
    return serialize(header) + b"\n" + tree.lines_bytes(range(len(tree)))


def _meta_of(row: tuple[Any, ...]) -> SessionMetadata:
    """`SessionMetadata` of a row ``(id, created_at, cwd, parent_session_path, metadata)``."""
    extra = json.loads(row[4]) if row[4] else None
    return SessionMetadata(
        id=row[0],
        created_at=row[1],
        cwd=row[2],
        path=None,
        parent_session_path=row[3],
        metadata=extra if isinstance(extra, dict) else None,
    )


class ListedSession:
    """What the list shows of one session, from its ``sessions`` row."""

    __slots__ = (
        "created_at",
        "cwd",
        "entry_count",
        "id",
        "last_activity",
        "message_count",
        "parent",
        "snippet",
        "title",
        "trashed_at",
    )

    def __init__(self, row: tuple[Any, ...]) -> None:
        (
            self.id,
            self.created_at,
            self.cwd,
            name,
            first,
            self.entry_count,
            self.message_count,
            self.last_activity,
            self.trashed_at,
            parent,
            snippet,
        ) = row
        self.title: str | None = name or first
        self.parent: str | None = parent
        """The session it was forked from (`REF_PREFIX` + its id, or a file's path)."""
        self.snippet: str | None = (
            snippet_from_hit(snippet.replace("\x03", "")) if isinstance(snippet, str) else None
        )
        """Listed for a search: the words around its hit (None: only its title matched)."""


class ColumnCache:
    """The tree columns of sessions opened from one server, kept on this computer (the
    JSONL store's entry index, `_entryindex`, for rows): one file per session, named by
    a hash of the server (host, port, database: never the password) and the session's
    row number. Rows are append-only and numbered without gaps, so a cache holding
    ``count`` rows is valid while the session's last row is row ``count - 1`` with the
    same entry id; anything else reads the columns from the server and writes it again.
    Derived data: never fsynced, checked by CRC, deleting the folder loses nothing."""

    def __init__(self, folder: str | os.PathLike[str], url: str) -> None:
        self.folder = os.path.abspath(os.fspath(folder))
        given = psycopg.conninfo.conninfo_to_dict(url)
        self.server = "/".join(str(given.get(k, "")) for k in ("host", "port", "dbname", "user"))
        self.hits = 0
        """Opens served from the cache (for tests)."""

    def _key(self, sid: int) -> str:
        return f"postgres/{self.server}/{sid}"

    def _file(self, sid: int) -> str:
        digest = hashlib.sha256(self._key(sid).encode("utf-8", "surrogatepass")).hexdigest()
        return os.path.join(self.folder, digest[:32] + ".pgidx")

    def load(self, sid: int, count: int, last_id: str) -> Tree | None:
        try:
            with open(self._file(sid), "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        body = data[8:]
        if len(data) < 8 or data[:4] != _entryindex.MAGIC or data[4:8] != _entryindex._crc(body):
            return None
        try:
            payload = _entryindex._DECODE(body)
        except (msgspec.DecodeError, RecursionError):
            return None
        if (
            payload.format != _entryindex.FORMAT
            or payload.byteorder != sys.byteorder
            or payload.path != self._key(sid)
            or payload.lines != count
            or len(payload.ids) != count
            or payload.head != last_id.encode()
        ):
            return None
        try:
            tree = _entryindex._tree_of(payload)
        except (ValueError, UnicodeDecodeError):
            return None
        if tree.ids[-1] != last_id:
            return None
        self.hits += 1
        return tree

    def save(self, sid: int, tree: Tree, count: int) -> None:
        """Keep the columns of the first ``count`` rows of ``tree`` (never raises)."""
        n = len(tree.ids)
        end = tree.offsets[n - 1] + tree.lengths[n - 1] if n else 0
        try:
            payload = _entryindex._payload(
                self._key(sid), FileStat(end, 0, 0, 0, 0, 0), tree, b"", end, count, []
            )
            payload.path = self._key(sid)
            payload.head = tree.ids[-1].encode()
            body = _entryindex._ENCODE(payload)
            os.makedirs(self.folder, exist_ok=True)
            atomic_write(
                self._file(sid),
                _entryindex.MAGIC + _entryindex._crc(body) + body,
                mode=0o600,
                durable=False,
            )
        except (OSError, ValueError, TypeError, OverflowError, msgspec.EncodeError) as exc:
            log.info("keeping the columns of session row %s: %s", sid, exc)


PREFETCH_BYTES = 256 * 1024 * 1024
"""How much of an opened session's current branch `_RowSource.prefetch` keeps in memory."""
PREFETCH_ROWS = 1_000
"""Rows a prefetch reads at once (newest first): few enough that the thread never holds
the interpreter long while it turns them into bytes."""


class _RowSource:
    """A session's rows read back as the lines of a file (`LineSource`): line ``i``
    starts at the tree's ``offsets[i]`` (the lengths before it, plus a newline each).

    Reads must not wait for the server on the event loop (`build_context` and the views
    read lines there, as they read a JSONL file): once a session is open, `prefetch`
    reads its current branch's rows on a thread of its own, newest first, and keeps them
    (up to `PREFETCH_BYTES`); every row read is kept too. Rows that are not kept yet (the
    first moments after opening a long session, another branch) are read from the
    server where they are asked for, as before."""

    def __init__(self, repo: PostgresSessionRepo, sid: int, tree: Tree, count: int) -> None:
        self._repo = repo
        self._sid = sid
        self._tree = tree
        self._count = count  # rows appended later are in memory (offset -1)
        self._kept: dict[int, bytes] = {}
        self._kept_bytes = 0
        self._stop = threading.Event()
        self.prefetched = threading.Event()
        """Set once `prefetch` ended (for tests and benchmarks)."""
        self.server_reads = 0
        """Reads that went to the server (for tests and benchmarks)."""

    def read_span(self, offset: int, length: int) -> bytes:
        offsets = self._tree.offsets
        first = bisect.bisect_left(offsets, offset, 0, self._count)
        last = bisect.bisect_left(offsets, offset + length, 0, self._count) - 1
        kept = self._kept
        try:
            return b"\n".join([kept[i] for i in range(first, last + 1)])
        except KeyError:
            pass
        self.server_reads += 1
        lines = self._repo.read_lines(self._sid, first, last)
        self._keep(range(first, last + 1), lines)
        return b"\n".join(lines)

    def _keep(self, rows: Iterable[int], lines: Iterable[bytes]) -> bool:
        """Keep rows while the budget allows; False once it is spent."""
        kept = self._kept
        for i, raw in zip(rows, lines, strict=True):
            if i not in kept:
                if self._kept_bytes + len(raw) > PREFETCH_BYTES:
                    return False
                kept[i] = raw
                self._kept_bytes += len(raw)
        return True

    def start_prefetch(self) -> None:
        threading.Thread(target=self.prefetch, name="postgres-prefetch", daemon=True).start()

    def prefetch(self, chunks: int | None = None) -> None:
        """Read the current branch's rows from the server, newest first (blocking; a
        thread of its own, see `start_prefetch`); stops when the session closes.
        ``chunks``: read only that many `PREFETCH_ROWS` (the open reads the newest rows,
        what a window shows first, before it returns)."""
        try:
            tree = self._tree
            try:
                path = tree.path_indices(tree.current_leaf(), lenient=True)
            except SessionError:
                return
            wanted = [i for i in reversed(path) if i < self._count and i not in self._kept]
            if chunks is not None:
                wanted = wanted[: chunks * PREFETCH_ROWS]
            for n in range(0, len(wanted), PREFETCH_ROWS):
                if self._stop.is_set():
                    return
                rows = wanted[n : n + PREFETCH_ROWS]
                first, last = min(rows), max(rows)
                if last - first < 4 * PREFETCH_ROWS:
                    # A range of the primary key (a branch is mostly runs of rows): the
                    # plan is an index range scan whatever the table's statistics say.
                    span = range(first, last + 1)
                    kept = self._keep(span, self._repo.read_lines(self._sid, first, last))
                else:
                    kept = self._keep(rows, self._repo.read_rows(self._sid, rows))
                if not kept:
                    return
        except SessionError as exc:  # (the server went away, the app is quitting)
            log.info("reading session row %s ahead: %s", self._sid, exc)
        except Exception:  # (logged: a read-ahead never takes the app down)
            log.warning("reading session row %s ahead failed", self._sid, exc_info=True)
        finally:
            if chunks is None:
                self.prefetched.set()

    def stop(self) -> None:
        self._stop.set()

    def changed_error(self, detail: str) -> SessionError:
        return SessionError(
            "storage", f"Cannot read the session from the server: {detail}; reopen it"
        )


class PostgresSessionRepo:
    """Every session in one PostgreSQL database (``url``: a libpq URL or conninfo; its
    password may come from ``password`` instead, e.g. the keychain)."""

    def __init__(
        self,
        url: str,
        *,
        password: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        answer_timeout_s: float = ANSWER_TIMEOUT_S,
    ) -> None:
        """``cache_dir``: where the tree columns of opened sessions are kept on this
        computer (`ColumnCache`); None: every open reads them from the server.
        ``answer_timeout_s``: how long the server may leave a statement unanswered
        before the operation fails (`Deadline`)."""
        if password and "password" not in psycopg.conninfo.conninfo_to_dict(url):
            url = psycopg.conninfo.make_conninfo(url, password=password)
        self._url = url
        self._cache = ColumnCache(cache_dir, url) if cache_dir is not None else None
        self._server: _Server | None = None
        self._closed = False
        self._connect_lock = threading.Lock()
        self._answer_timeout_s = answer_timeout_s

    @property
    def url(self) -> str:
        return self._url

    @property
    def answer_timeout_s(self) -> float:
        """How long a statement may wait for the server (`Deadline`)."""
        return self._answer_timeout_s

    @answer_timeout_s.setter
    def answer_timeout_s(self, seconds: float) -> None:
        self._answer_timeout_s = seconds
        if self._server is not None:
            self._server.answer_timeout_s = seconds

    @property
    def read_only_reason(self) -> str | None:
        """Why nothing may be written (a newer schema), once connected."""
        return self._server.read_only_reason if self._server is not None else None

    def _db(self) -> _Server:
        with self._connect_lock:
            if self._closed:
                raise SessionError("storage", "The session database is closed")
            if self._server is None:
                self._server = _Server(self._url, self._answer_timeout_s)
            return self._server

    async def connect(self) -> None:
        """Reach the server and bring its schema up to date (`SessionError` ``storage``
        when it cannot be reached)."""
        await asyncio.to_thread(self._db)

    async def close(self) -> None:
        self._closed = True
        server, self._server = self._server, None
        if server is not None:
            await asyncio.to_thread(server.close)

    def _run(
        self, fn: Callable[[psycopg.Connection[Any]], Any], what: str, *, whole: bool = False
    ) -> Any:
        """``fn`` on a connection of the pool, within the server's answer time (``whole``:
        a read of a whole session, `WHOLE_READ_FACTOR` times that)."""
        server = self._db()
        seconds = server.answer_timeout_s * (WHOLE_READ_FACTOR if whole else 1)
        deadline: Deadline | None = None
        try:
            with (
                server.pool.connection(timeout=CONNECT_TIMEOUT_S + 1) as conn,
                Deadline(conn, seconds) as deadline,
            ):
                return fn(conn)
        except (psycopg.Error, PoolTimeout) as exc:
            error = deadline.error(exc) if deadline is not None else server_error(exc)
            raise SessionError("storage", f"Cannot {what}: {error.strerror}") from exc

    # ------------------------------------------------------------- creating

    def _check_writable(self) -> None:
        reason = self._db().read_only_reason
        if reason is not None:
            raise SessionError("read_only", f"Cannot create a session: {reason}")

    def _create_sync(
        self,
        cwd: str | None,
        session_id: str | None,
        metadata: dict[str, Any] | None,
        parent: str | None,
        copies: builtins.list[tuple[Entry, bytes]],
    ) -> Session:
        self._check_writable()
        server = self._db()
        metadata = {**(metadata or {}), **header_stamp()}
        meta = SessionMetadata(
            id=session_id or uuidv7(),
            created_at=now_iso(),
            cwd=cwd,
            path=None,
            parent_session_path=parent,
            metadata=metadata,
        )
        tree = Tree()
        for entry, raw in copies:
            tree.add(entry, raw)
        try:
            writer = _connect(server.url)
        except psycopg.Error as exc:
            raise SessionError(
                "storage", f"Cannot create a session: {server_error(exc).strerror}"
            ) from exc
        deadline = Deadline(writer, server.answer_timeout_s)
        try:
            with deadline, writer.transaction(), writer.cursor() as cur:
                cur.execute(
                    f"INSERT INTO {SCHEMA}.sessions (id, created_at, cwd, parent_session_path,"
                    " metadata, last_activity) VALUES (%s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (id) DO NOTHING RETURNING sid",
                    (meta.id, meta.created_at, cwd, parent, json.dumps(metadata), meta.created_at),
                )
                row = cur.fetchone()
                if row is None:
                    raise SessionError("invalid_argument", f"Session {meta.id} already exists")
                sid = int(row[0])
                cur.execute("SELECT pg_advisory_lock(%s::int4, %s::int4)", (LOCK_CLASS, sid))
                _notify(cur, "created", meta.id)
        except psycopg.Error as exc:
            writer.close()
            raise SessionError(
                "storage", f"Cannot create a session: {deadline.error(exc).strerror}"
            ) from exc
        except SessionError:
            writer.close()
            raise
        storage = PostgresStorage(server, sid, meta, tree, 0, writer)
        if copies:
            storage.pending.extend(range(len(tree)))
            try:
                storage.sync()
            except SessionError:
                storage.force_close()
                raise
        return Session(storage)

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

    async def create_from_entries(
        self,
        copies: builtins.list[tuple[Entry, bytes]],
        *,
        cwd: str | None,
        parent_session_path: str | None,
        id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Session:
        """A new session holding ``copies`` (entries with their lines, e.g. another
        store's `read_entries`), verbatim."""
        return await asyncio.to_thread(
            self._create_sync, cwd, id, metadata, parent_session_path, copies
        )

    # ------------------------------------------------------------- opening

    def _lookup(self, session_id: str) -> tuple[int, SessionMetadata]:
        def run(conn: psycopg.Connection[Any]) -> Any:
            return conn.execute(
                f"SELECT sid, id, created_at, cwd, parent_session_path, metadata"
                f" FROM {SCHEMA}.sessions WHERE id = %s",
                (session_id,),
            ).fetchone()

        row = self._run(run, "open the session")
        if row is None:
            raise SessionError("not_found", f"Session not found: {session_id}")
        return int(row[0]), _meta_of(row[1:])

    def _load(self, sid: int) -> tuple[Tree, builtins.list[DamagedLine], int]:
        """The session's tree from its columns (no line is read but the few
        bookkeeping ones: lines are read back when shown, `_RowSource`); a line that
        cannot be read reads every line, reporting the damaged ones."""

        cache = self._cache
        if cache is not None:
            last = self._run(
                lambda conn: conn.execute(
                    f"SELECT seq, entry_id FROM {SCHEMA}.entries WHERE sid = %s"
                    " ORDER BY seq DESC LIMIT 1",
                    (sid,),
                ).fetchone(),
                "read the session",
            )
            if last is None:
                return Tree(), [], 0
            count = int(last[0]) + 1
            tree = cache.load(sid, count, str(last[1]))
            if tree is not None:
                tree.source = _RowSource(self, sid, tree, count)
                return tree, [], count
            tree, damaged, count = self._load_columns(sid)
            if not damaged and count:
                cache.save(sid, tree, count)
            return tree, damaged, count
        return self._load_columns(sid)

    def _load_columns(self, sid: int) -> tuple[Tree, builtins.list[DamagedLine], int]:
        def columns(conn: psycopg.Connection[Any]) -> Any:
            with conn.cursor(binary=True) as cur:
                # One ordered index scan feeds every aggregate (no sort per column);
                # the seq column says whether the order held (else: every line).
                cur.execute(
                    "SELECT count(*), array_agg(entry_id), array_agg(parent_id),"
                    " array_agg(type), array_agg(ts), array_agg(role), array_agg(len),"
                    " array_agg(seq) FROM (SELECT seq, entry_id, parent_id, type, ts, role,"
                    f" len FROM {SCHEMA}.entries WHERE sid = %s"
                    " ORDER BY seq) AS rows",
                    (sid,),
                )
                head = cur.fetchone()
                cur.execute(
                    f"SELECT l.seq, l.line FROM {SCHEMA}.entries e JOIN {SCHEMA}.lines l"
                    " ON l.sid = e.sid AND l.seq = e.seq WHERE e.sid = %s"
                    " AND e.type = ANY(%s) ORDER BY l.seq",
                    (sid, sorted(BOOKKEEPING)),
                )
                return head, cur.fetchall()

        head, kept = self._run(columns, "read the session", whole=True)
        count = int(head[0]) if head else 0
        tree = Tree()
        if not count:
            return tree, [], 0
        if list(head[7]) != list(range(count)):
            return self._load_lines(sid)
        extra: dict[int, Any] = {}
        for seq, line in kept:
            try:
                extra[int(seq)] = parse_line(bytes(line)).extra
            except LineError:
                return self._load_lines(sid)
        tree.load_columns(
            list(head[1]),
            list(head[2]),
            list(head[3]),
            list(head[4]),
            list(head[5]),
            list(head[6]),
            extra,
            _RowSource(self, sid, tree, count),
        )
        return tree, [], count

    def _load_lines(self, sid: int) -> tuple[Tree, builtins.list[DamagedLine], int]:
        def run(conn: psycopg.Connection[Any]) -> Any:
            with conn.cursor(binary=True) as cur:
                cur.execute(
                    f"SELECT seq, line FROM {SCHEMA}.lines WHERE sid = %s ORDER BY seq",
                    (sid,),
                )
                return cur.fetchall()

        rows = self._run(run, "read the session", whole=True)
        tree = Tree()
        damaged: builtins.list[DamagedLine] = []
        for seq, line in rows:
            raw = bytes(line)
            try:
                tree.add_line(raw)
            except LineError as exc:
                damaged.append(DamagedLine(int(seq) + 2, 0, exc.reason, raw))
        return tree, damaged, len(rows)

    def read_lines(self, sid: int, first: int, last: int) -> builtins.list[bytes]:
        """The lines of rows ``first..last`` of a session (blocking)."""

        def run(conn: psycopg.Connection[Any]) -> Any:
            with conn.cursor(binary=True) as cur:
                cur.execute(
                    f"SELECT line FROM {SCHEMA}.lines WHERE sid = %s AND seq >= %s"
                    " AND seq <= %s ORDER BY seq",
                    (sid, first, last),
                )
                return cur.fetchall()

        return [bytes(r[0]) for r in self._run(run, "read the session")]

    def read_rows(self, sid: int, rows: builtins.list[int]) -> builtins.list[bytes]:
        """The lines of the rows ``rows`` of a session, in that order (blocking)."""

        def run(conn: psycopg.Connection[Any]) -> Any:
            with conn.cursor(binary=True) as cur:
                cur.execute(
                    f"SELECT seq, line FROM {SCHEMA}.lines"
                    " WHERE sid = %s AND seq = ANY(%s::int4[])",
                    (sid, rows),
                )
                return cur.fetchall()

        found = {int(seq): bytes(line) for seq, line in self._run(run, "read the session")}
        if len(found) != len(rows):
            raise SessionError("storage", "Cannot read the session: rows are missing")
        return [found[i] for i in rows]

    def _open_sync(self, session_id: str, *, write: bool) -> Session:
        server = self._db()
        sid, meta = self._lookup(session_id)
        writer: psycopg.Connection[Any] | None = None
        reason: str | None = None
        code = "read_only"
        if server.read_only_reason is not None:
            reason, code = server.read_only_reason, NEWER_VERSION
        elif write:
            try:
                writer = _connect(server.url)
                with Deadline(writer, server.answer_timeout_s):
                    got = writer.execute(
                        "SELECT pg_try_advisory_lock(%s::int4, %s::int4)", (LOCK_CLASS, sid)
                    ).fetchone()
            except psycopg.Error as exc:
                if writer is not None:
                    writer.close()
                raise SessionError(
                    "storage", f"Cannot open the session: {server_error(exc).strerror}"
                ) from exc
            if not got or not got[0]:
                writer.close()
                writer = None
                reason = "it is open in Desktop Agent on another computer or window"
                code = "locked"
        else:
            reason = "it was opened for reading only"
        try:
            tree, damaged, count = self._load(sid)
        except SessionError:
            if writer is not None:
                writer.close()
            raise
        recovery = RecoveryReport(damaged_lines=tuple(damaged)) if damaged else None
        if damaged and reason is None:
            reason = "parts of the session are damaged"
        version = written_by(meta.metadata)
        if version is not None and is_newer(version):
            reason, code = newer_reason("it", version), NEWER_VERSION
        if reason is not None and writer is not None:
            writer.close()  # (the lock goes with its connection)
            writer = None
        storage = PostgresStorage(
            server,
            sid,
            meta,
            tree,
            count,
            writer,
            read_only_reason=reason,
            read_only_code=code,
            recovery=recovery,
        )
        if isinstance(tree.source, _RowSource):
            tree.source.prefetch(chunks=1)  # (this is a worker thread already)
            tree.source.start_prefetch()
        return Session(storage)

    async def open(self, metadata: SessionMetadata, *, write: bool = True) -> Session:
        """Open for writing (the advisory lock), or read-only when another process holds
        it (code ``locked``: it follows that writer, see `PostgresStorage.pull`)."""
        return await asyncio.to_thread(self._open_sync, metadata.id, write=write)

    async def exists(self, session_id: str) -> bool:
        def run(conn: psycopg.Connection[Any]) -> Any:
            return conn.execute(
                f"SELECT 1 FROM {SCHEMA}.sessions WHERE id = %s", (session_id,)
            ).fetchone()

        return bool(await asyncio.to_thread(self._run, run, "find the session"))

    # ------------------------------------------------------------- listing

    def _list_sync(self, cwd: str | None) -> builtins.list[SessionMetadata]:
        def run(conn: psycopg.Connection[Any]) -> Any:
            query = (
                f"SELECT id, created_at, cwd, parent_session_path, metadata FROM {SCHEMA}.sessions"
            )
            params: tuple[Any, ...] = ()
            if cwd is not None:
                query += " WHERE cwd = %s"
                params = (cwd,)
            return conn.execute(query + " ORDER BY created_at DESC, sid DESC", params).fetchall()

        return [_meta_of(r) for r in self._run(run, "list the sessions")]

    async def list(self, cwd: str | None = None) -> builtins.list[SessionMetadata]:
        return await asyncio.to_thread(self._list_sync, cwd)

    def _listed_sync(self, query: str | None, trashed: bool) -> builtins.list[ListedSession]:
        where = "trashed_at IS NOT NULL" if trashed else "trashed_at IS NULL"
        params: builtins.list[Any] = []
        # Where a search found its words (the list's second line, m6): the words around
        # its first hit in the first line that holds them; NULL when only the title did.
        snippet = "NULL"
        if query:
            where += (
                " AND (coalesce(name, first_prompt, '') ILIKE %s OR sid IN (SELECT e.sid FROM"
                f" {SCHEMA}.lines e WHERE e.body IS NOT NULL AND"
                " to_tsvector('simple', e.body) @@ websearch_to_tsquery('simple', %s)))"
            )
            like = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params += [like + "%", query]
            snippet = (
                "(SELECT ts_headline('simple', e.body, websearch_to_tsquery('simple', %s), %s)"
                f" FROM {SCHEMA}.lines e WHERE e.sid = s.sid AND e.body IS NOT NULL AND"
                " to_tsvector('simple', e.body) @@ websearch_to_tsquery('simple', %s)"
                " ORDER BY e.seq LIMIT 1)"
            )
            options = f"MaxWords=14, MinWords=6, MaxFragments=1, StartSel={HIT_MARK}, StopSel=\x03"
            params = [query, options, query, *params]

        def run(conn: psycopg.Connection[Any]) -> Any:
            return conn.execute(
                "SELECT id, created_at, cwd, name, first_prompt, entry_count, message_count,"
                f" last_activity, trashed_at, parent_session_path, {snippet}"
                f" FROM {SCHEMA}.sessions s WHERE {where}"
                " ORDER BY coalesce(trashed_at, last_activity) DESC, sid DESC",
                params,
            ).fetchall()

        return [ListedSession(r) for r in self._run(run, "list the sessions")]

    async def listed(
        self, query: str | None = None, *, trashed: bool = False
    ) -> builtins.list[ListedSession]:
        """What the list shows, newest activity first; ``query`` matches names and first
        prompts, and words of any message (full-text search)."""
        return await asyncio.to_thread(self._listed_sync, query, trashed)

    # ------------------------------------------------------------- trash, delete

    def _set_trashed(self, session_id: str, when: str | None) -> bool:
        def run(conn: psycopg.Connection[Any]) -> Any:
            with conn.transaction(), conn.cursor() as cur:
                cur.execute(
                    f"UPDATE {SCHEMA}.sessions SET trashed_at = %s WHERE id = %s",
                    (when, session_id),
                )
                _notify(cur, "trash", session_id)
                return cur.rowcount

        self._check_writable()
        return bool(self._run(run, "move the session"))

    async def set_trashed(self, session_id: str, when: str | None) -> bool:
        """Put a session in the trash (``when``) or back (None); False: no such session."""
        return await asyncio.to_thread(self._set_trashed, session_id, when)

    def _delete_sync(self, metadata: SessionMetadata) -> None:
        def run(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction(), conn.cursor() as cur:
                cur.execute(f"SELECT sid FROM {SCHEMA}.sessions WHERE id = %s", (metadata.id,))
                row = cur.fetchone()
                if row is None:
                    return
                got = cur.execute(
                    "SELECT pg_try_advisory_xact_lock(%s::int4, %s::int4)", (LOCK_CLASS, row[0])
                ).fetchone()
                if not got or not got[0]:
                    raise SessionError(
                        "locked", "Cannot delete the session: it is open somewhere else"
                    )
                cur.execute(f"DELETE FROM {SCHEMA}.sessions WHERE sid = %s", (row[0],))
                _notify(cur, "deleted", metadata.id)

        self._check_writable()
        self._run(run, "delete the session")

    async def delete(self, metadata: SessionMetadata) -> None:
        await asyncio.to_thread(self._delete_sync, metadata)

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
            tree, _damaged, _count = self._load(sid)
            rows = rows_to_fork(tree, entry_id, position)
            return self._create_sync(
                cwd if cwd is not None else meta.cwd,
                id,
                None,
                parent_session_path or REF_PREFIX + meta.id,
                [(r.entry(), r.raw) for r in rows],
            )

        return await asyncio.to_thread(run)


class Listener:
    """LISTEN on channel ``desktop_agent`` in a thread of its own (a blocking connection,
    whatever the event loop): ``on_event(kind, session_id)`` is called on ``loop`` for each
    notification, and ``("connected", "")`` each time the connection is (re)made, so a
    follower reads what it missed while the server was away."""

    def __init__(
        self,
        repo: PostgresSessionRepo,
        on_event: Callable[[str, str], None],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self._url = repo.url
        self._on_event = on_event
        self._loop = loop
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="postgres-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _deliver(self, kind: str, session_id: str) -> None:
        try:
            self._loop.call_soon_threadsafe(self._on_event, kind, session_id)
        except RuntimeError:  # the loop is closed: the app is quitting
            self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with _connect(self._url) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._deliver("connected", "")
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.25):
                            kind, _, session_id = note.payload.partition(" ")
                            self._deliver(kind, session_id)
            except psycopg.Error as exc:
                log.info("listening for other computers' changes: %s", server_error(exc))
                self._stop.wait(1.0)
