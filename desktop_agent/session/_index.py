"""`SessionIndex`: a SQLite cache of per-file session facts and full-text content.

The sidebar and search read this instead of parsing transcripts (ARCHITECTURE.md §4).
It is derived data: deleting ``index.sqlite`` loses nothing, a damaged or newer index is
deleted and rebuilt, and `reconcile` brings it in line with the files by re-reading only
those whose ``(size, mtime_ns)`` changed.

Indexing reads files with its own line scan and never writes, locks, cuts or quarantines
a session file: a damaged or half-written file is indexed from what is readable and its
``problem`` says what was not.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
import sqlite3
import stat
import threading
import time
import zlib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, fields
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from desktop_agent.session._errors import SessionError
from desktop_agent.session._header import header_metadata, open_error, parse_header
from desktop_agent.session._jsonl import JsonlStorage
from desktop_agent.session._migrate import first_line, is_legacy_header, migrated_if_legacy
from desktop_agent.session._platform import OS_FILE_OPS
from desktop_agent.session._repos import JsonlSessionRepo
from desktop_agent.session._storage import SessionMetadata, describe_os_error
from desktop_agent.utils.text import content_text, fold, query_words

if TYPE_CHECKING:
    from desktop_agent.session._session import Session

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
FIRST_PROMPT_CHARS = 200
NEW_SESSION_TITLE = "New session"
TEXT_CAP_CHARS = 200_000
"""Searchable text kept per session (the start of the conversation)."""
TAIL_CHECK = 4096
"""Bytes before the indexed size whose CRC is kept: a file that grew and still has them
is indexed from where the last read stopped (an append), not from the start."""

_T = TypeVar("_T")
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"\w+")

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


def _collapse(text: str, limit: int) -> str:
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def session_title(name: str | None, first_prompt: str | None) -> str:
    """A session's title, wherever it is listed: its name, else its first prompt (see
    `first_prompt_of`), else "New session"."""
    return name or first_prompt or NEW_SESSION_TITLE


def first_prompt_of(text: str) -> str | None:
    """The first prompt as a title shows it, from the text of the first user message
    (whitespace runs collapsed, cut at `FIRST_PROMPT_CHARS`); None when it has no text."""
    return _collapse(text, FIRST_PROMPT_CHARS) or None


@dataclass(frozen=True)
class IndexedSession:
    """One session file as the index knows it."""

    path: str
    id: str
    cwd: str | None
    created_at: str
    name: str | None
    first_prompt: str | None
    last_activity: str
    entry_count: int
    message_count: int
    size: int
    mtime_ns: int
    problem: str | None
    parent_session_path: str | None = None

    @property
    def title(self) -> str:
        """The session name, else its first prompt, else "New session" (`session_title`)."""
        return session_title(self.name, self.first_prompt)

    def metadata(self) -> SessionMetadata:
        """What ``JsonlSessionRepo.open`` needs."""
        return SessionMetadata(
            id=self.id,
            created_at=self.created_at,
            cwd=self.cwd,
            path=self.path,
            parent_session_path=self.parent_session_path,
        )


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


# ----------------------------------------------------------------------- reading


class _Message(msgspec.Struct):
    role: Any = None
    content: Any = None


class _Line(msgspec.Struct):
    type: Any = None
    id: Any = None
    timestamp: Any = None
    name: Any = msgspec.UNSET
    message: _Message | None = None


class _Bare(msgspec.Struct):
    """The envelope only: message content is skipped, not built."""

    type: Any = None
    id: Any = None
    timestamp: Any = None
    name: Any = msgspec.UNSET


_DECODE_FULL = msgspec.json.Decoder(_Line)
_DECODE_BARE = msgspec.json.Decoder(_Bare)


def _message_text(message: Any) -> str:
    """Searchable text: what Copy copies of user, assistant and tool-result messages."""
    if getattr(message, "role", None) in ("user", "toolResult", "assistant"):
        return content_text(getattr(message, "content", None))
    return ""


@dataclass
class _Facts:
    path: str
    id: str
    cwd: str | None
    created_at: str
    name: str | None
    first_prompt: str | None
    last_activity: str
    entry_count: int
    message_count: int
    size: int
    mtime_ns: int
    problem: str | None
    parent_session_path: str | None
    body: str
    text_chars: int = 0
    """The length of the texts in ``body`` (without the newlines joining them)."""
    tail_crc: int | None = None
    """CRC-32 of the `TAIL_CHECK` bytes before ``size`` (None: not read to there)."""

    def row(self) -> tuple[Any, ...]:
        """The `IndexedSession` columns in their order, then the folded title."""
        fold = f"{self.name or ''}\n{self.first_prompt or ''}".casefold()
        return (*(getattr(self, f.name) for f in fields(IndexedSession)), fold)

    def record(self) -> tuple[Any, ...]:
        """`row`, then what an append needs to go on from (`text_chars`, `tail_crc`)."""
        return (*self.row(), self.text_chars, self.tail_crc)


def _id_from_file_name(path: str) -> str:
    stem = os.path.basename(path)
    stem = stem[: -len(".jsonl")] if stem.endswith(".jsonl") else stem
    return stem.rpartition("_")[2] or stem


READ_CHUNK = 4 << 20
"""Bytes read at a time when indexing a file: its memory stays bounded by the longest
line (plus one chunk), never the file's size."""

_Lines = Iterator[tuple[bytes, bool]]
"""Each line of a file without its newline, and whether one ended it."""


RECONCILE_SLICE_S = 0.05
"""How long one transaction of `SessionIndex.reconcile` reads files: a first index of
10,000 sessions took 6 s in one, and opening a session waited for it."""

GLANCE_BYTES = 16 << 20
"""A file never seen that is bigger than this is only glanced at by a launch's reconcile
(`read_facts` with ``glance``): the app reads it whole when it opens it anyway."""


def read_facts(path: str, known: _Facts | None = None, *, glance: bool = False) -> _Facts:
    """Everything the index keeps about one file; never raises for a bad file. With
    ``known`` (its facts as indexed) and a file that only grew since (the bytes before
    ``known.size`` end as they did, a line ended there), only the new bytes are read.

    ``glance``: a v3 file over `GLANCE_BYTES` is read only at its start (header, first
    prompt, the text there) and its end (the last activity), so that a launch lists it
    at once; the row has size 0 (`is_glance`) until `SessionIndex.update_file` indexes
    it whole, from the session the app opened when it was that one."""
    facts = _Facts(
        path=path,
        id=_id_from_file_name(path),
        cwd=None,
        created_at="",
        name=None,
        first_prompt=None,
        last_activity="",
        entry_count=0,
        message_count=0,
        size=0,
        mtime_ns=0,
        problem=None,
        parent_session_path=None,
        body="",
    )
    ops = OS_FILE_OPS
    try:
        # Only a regular file, opened without blocking: a FIFO named *.jsonl is refused.
        fd = ops.open_regular(path)
    except OSError as exc:
        facts.problem = f"cannot be read: {open_error(path, exc).message}"
        return facts
    try:
        st = ops.fstat(fd)  # before reading: what is read is the file up to this size
        if known is not None and _only_grew(ops, fd, known, st.size):
            facts = dataclasses.replace(known, size=st.size, mtime_ns=st.mtime_ns)
            scanner = _Scanner(facts, [known.body] if known.body else [], known.text_chars)
            _feed(_read_lines(ops, fd, known.size, st.size), scanner)
            facts.tail_crc = _tail_crc(ops, fd, st.size)
            return facts
        facts.size, facts.mtime_ns = st.size, st.mtime_ns
        first = ops.pread(fd, min(READ_CHUNK, st.size), 0)
        if _legacy_header(first):  # v1/v2: what the read-only view shows (all of it)
            raw = ops.read_all(fd, st.size)[: st.size]
            data = migrated_if_legacy(path, raw)
            _scan(_split(data), facts)
            if data is raw:  # a v3 file after all (its first line is a long one)
                facts.tail_crc = _tail_crc(ops, fd, st.size)
        elif glance and st.size > GLANCE_BYTES:
            _scan(_read_lines(ops, fd, 0, len(first), first), facts)
            facts.last_activity = _last_timestamp(ops, fd, st.size) or facts.last_activity
            facts.size = facts.mtime_ns = 0
            facts.problem = None  # (the first chunk ends inside a line: not a torn file)
        else:
            _scan(_read_lines(ops, fd, 0, st.size, first), facts)
            facts.tail_crc = _tail_crc(ops, fd, st.size)
    except OSError as exc:
        facts.problem = f"cannot be read: {describe_os_error(exc)}"
        return facts
    finally:
        ops.close(fd)
    return facts


def facts_of_opened(storage: JsonlStorage) -> _Facts | None:
    """What `read_facts` would find in the file of a session just opened whole, from
    what opening read: the tree's columns count entries and messages and give the last
    activity and the name; only the first messages' lines are read again, for the first
    prompt and the searchable text (`TEXT_CAP_CHARS`). The first launch with a 120 MB
    file never seen read it twice before (the session, then the list: 0.5 s more).
    None unless the tree holds exactly the file (`JsonlStorage.whole_file`)."""
    whole = storage.whole_file(TAIL_CHECK)
    if whole is None:
        return None
    st, tail = whole
    meta, tree = storage.metadata, storage.tree
    facts = _Facts(
        path=storage.path,
        id=meta.id,
        cwd=meta.cwd,
        created_at=meta.created_at,
        name=tree.name,
        first_prompt=None,
        last_activity=meta.created_at,
        entry_count=len(tree),
        message_count=0,
        size=st.size,
        mtime_ns=st.mtime_ns,
        problem=None,
        parent_session_path=meta.parent_session_path,
        body="",
        tail_crc=zlib.crc32(tail),
    )
    types = tree.types
    facts.message_count = types.count("message")
    for i in range(len(tree) - 1, -1, -1):
        if stamp := tree.timestamp_at(i):
            facts.last_activity = stamp
            break
    counted = facts.entry_count, facts.message_count, facts.last_activity, facts.name
    scanner = _Scanner(facts)  # (it counts what it is fed: the counts are put back)
    messages = (i for i, kind in enumerate(types) if kind == "message")
    for raw in tree.lines(messages):
        scanner.line(raw, last=False, terminated=True)
        if scanner.budget <= 0 and facts.first_prompt is not None:
            break
    scanner.finish()
    facts.entry_count, facts.message_count, facts.last_activity, facts.name = counted
    return facts


def _of_opened(session: Session | None, path: str) -> _Facts | None:
    storage = session.get_storage() if session is not None else None
    if not isinstance(storage, JsonlStorage) or os.path.abspath(storage.path) != path:
        return None
    try:
        return facts_of_opened(storage)
    except SessionError:  # its file changed under it: read it
        return None


def session_facts(path: str) -> IndexedSession:
    """What the index keeps about one file, read now and never written anywhere (for
    files outside the indexed folder, e.g. in the trash)."""
    return IndexedSession(*read_facts(path).row()[:-1])


def is_glance(facts: _Facts) -> bool:
    """Whether ``facts`` are a glance (`read_facts`), not the whole file's."""
    return facts.size == 0 and facts.tail_crc is None


def _last_timestamp(ops: Any, fd: int, size: int) -> str | None:
    """The timestamp of the last whole entry line in the file's last 64 KiB."""
    start = max(0, size - (64 << 10))
    lines = ops.pread(fd, size - start, start).split(b"\n")
    lines.pop()  # after the last newline: an unfinished line, or nothing
    for raw in reversed(lines[1:] if start else lines):  # (the first may be cut)
        try:
            stamp = _DECODE_BARE.decode(raw).timestamp
        except (msgspec.DecodeError, RecursionError):
            continue
        if isinstance(stamp, str) and stamp:
            return stamp
    return None


def _tail_crc(ops: Any, fd: int, size: int) -> int:
    start = max(0, size - TAIL_CHECK)
    return zlib.crc32(ops.pread(fd, size - start, start))


def _only_grew(ops: Any, fd: int, known: _Facts, size: int) -> bool:
    """Whether the file of ``known`` (read cleanly to its end) grew by an append since."""
    if known.problem is not None or known.tail_crc is None or not 0 < known.size < size:
        return False
    return (
        ops.pread(fd, 1, known.size - 1) == b"\n"
        and _tail_crc(ops, fd, known.size) == known.tail_crc
    )


def _legacy_header(head: bytes) -> bool:
    """Whether the first line of ``head`` may be a v1/v2 header (then the file is
    migrated whole, as when it is opened). A first line longer than ``head`` counts
    as may-be: `migrated_if_legacy` decides on the whole file."""
    found = first_line(head)
    if found is None:
        return False
    line, ended = found
    return is_legacy_header(line) if ended else True


def _split(data: bytes) -> _Lines:
    lines = data.split(b"\n")
    last = len(lines) - 1
    for i, line in enumerate(lines):
        yield line, i < last


def _read_lines(ops: Any, fd: int, start: int, end: int, first: bytes | None = None) -> _Lines:
    """The lines of the file's bytes ``start:end``, read `READ_CHUNK` bytes at a time;
    ``first``: its first chunk, already read."""
    pending: list[bytes] = []  # the start of a line longer than what was read so far
    offset = start
    chunk = ops.pread(fd, min(READ_CHUNK, end - offset), offset) if first is None else first
    while chunk:
        offset += len(chunk)
        cut = chunk.rfind(b"\n")
        if cut < 0:
            pending.append(chunk)
        else:
            if pending:
                pending.append(chunk[: cut + 1])
                block = b"".join(pending)
                pending = [chunk[cut + 1 :]]
            else:
                block = chunk[: cut + 1]
                pending = [chunk[cut + 1 :]]
            lines = block.split(b"\n")
            lines.pop()  # the empty piece after the block's last newline
            for line in lines:
                yield line, True
        chunk = ops.pread(fd, min(READ_CHUNK, end - offset), offset) if offset < end else b""
    yield b"".join(pending), False


class _Scanner:
    """The facts of one file's entry lines, fed in order; the last non-blank line is
    told apart (without a newline it is still being written: not an entry)."""

    def __init__(self, facts: _Facts, texts: list[str] | None = None, chars: int = 0) -> None:
        self.facts = facts
        self.damaged = 0
        self.torn = False
        self.texts: list[str] = texts or []
        self.chars = chars
        self.budget = TEXT_CAP_CHARS - chars

    def line(self, raw: bytes, *, last: bool, terminated: bool) -> None:
        facts = self.facts
        if last and not terminated:
            self.torn = True  # no newline yet: as when opening, it is not an entry
            return
        # Content is decoded while the text budget lasts (and until the first prompt).
        full = self.budget > 0 or facts.first_prompt is None
        entry: _Line | _Bare
        try:
            entry = (_DECODE_FULL if full else _DECODE_BARE).decode(raw)
        except msgspec.ValidationError:
            try:
                entry = _DECODE_BARE.decode(raw)  # "message" of an odd shape
            except (msgspec.DecodeError, RecursionError):
                entry = _Bare()
        except (msgspec.DecodeError, RecursionError):
            entry = _Bare()
        if not isinstance(entry.type, str) or not isinstance(entry.id, str) or not entry.id:
            if last:
                self.torn = True
            else:
                self.damaged += 1
            return
        facts.entry_count += 1
        if isinstance(entry.timestamp, str) and entry.timestamp:
            facts.last_activity = entry.timestamp
        if entry.type == "session_info":
            name = entry.name.strip() if isinstance(entry.name, str) else ""
            facts.name = name or None
        elif entry.type == "message":
            facts.message_count += 1
            if isinstance(entry, _Line) and entry.message is not None:
                text = _message_text(entry.message)
                if facts.first_prompt is None and entry.message.role == "user":
                    facts.first_prompt = first_prompt_of(text)
                if text and self.budget > 0:
                    self.texts.append(text[: self.budget])
                    self.budget -= len(self.texts[-1])
                    self.chars += len(self.texts[-1])

    def finish(self) -> None:
        self.facts.body = "\n".join(self.texts)
        self.facts.text_chars = self.chars
        problems: list[str] = []
        if self.damaged:
            problems.append(f"{self.damaged} damaged line(s) could not be read")
        if self.torn:
            problems.append("the last line is incomplete")
        self.facts.problem = "; ".join(problems) or None


def _scan(lines: _Lines, facts: _Facts) -> None:
    header: bytes | None = None
    for raw, _terminated in lines:
        if raw.strip():
            header = raw
            break
    if header is None:
        facts.problem = "the file has no session header"
        return
    try:
        meta = header_metadata(parse_header(header.rstrip(b"\r"), facts.path), facts.path)
    except SessionError as exc:
        facts.problem = exc.message
        return
    facts.id, facts.cwd, facts.created_at = meta.id, meta.cwd, meta.created_at
    facts.parent_session_path = meta.parent_session_path
    facts.last_activity = meta.created_at

    _feed(lines, _Scanner(facts))


def _feed(lines: _Lines, scanner: _Scanner) -> None:
    """The entry lines to ``scanner``, then its `finish`."""
    held: tuple[bytes, bool] | None = None  # a line is fed once the next one is seen
    for raw, terminated in lines:
        if not raw.strip():
            continue
        if held is not None:
            scanner.line(held[0], last=False, terminated=held[1])
        held = (raw, terminated)
    if held is not None:
        scanner.line(held[0], last=True, terminated=held[1])
    scanner.finish()


# ----------------------------------------------------------------------- the index


def _fts_query(query: str) -> str | None:
    """Every word of ``query`` as a prefix term, all required; None without words."""
    words = _WORD.findall(query)
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
    def _known(db: sqlite3.Connection, path: str) -> _Facts | None:
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
        facts = _Facts(
            **dataclasses.asdict(IndexedSession(*columns)),
            body=body[0] if body else "",
            text_chars=text_chars,
            tail_crc=tail_crc,
        )
        return None if is_glance(facts) else facts

    def _store(self, db: sqlite3.Connection, facts: _Facts) -> None:
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
            facts = _of_opened(opened, path) if indexed is None else None
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
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY last_activity DESC, created_at DESC, path"
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
