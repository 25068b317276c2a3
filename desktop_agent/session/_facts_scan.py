"""What the session index keeps of one session file, read with its own line scan
(`read_facts`: never writing, locking, cutting or quarantining the file; a damaged or
half-written file is read from what is readable and its ``problem`` says what was not),
or taken from a session just opened whole (`facts_of_opened`). Also the one definition
of a session's title (`session_title`, `first_prompt_of`, `IndexedSession.title`).
"""

from __future__ import annotations

import dataclasses
import os
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import msgspec

from desktop_agent.session._entries import NOT_ACTIVITY
from desktop_agent.session._errors import SessionError
from desktop_agent.session._header import header_metadata, open_error, parse_header
from desktop_agent.session._jsonl import JsonlStorage
from desktop_agent.session._migrate import first_line, is_legacy_header, migrated_if_legacy
from desktop_agent.session._platform import OS_FILE_OPS
from desktop_agent.session._storage import SessionMetadata, describe_os_error
from desktop_agent.utils.text import content_text, fold

if TYPE_CHECKING:
    from desktop_agent.session._session import Session

FIRST_PROMPT_CHARS = 200
NEW_SESSION_TITLE = "New session"
TEXT_CAP_CHARS = 200_000
"""Searchable text kept per session (the start of the conversation)."""
TAIL_CHECK = 4096
"""Bytes before the indexed size whose CRC is kept: a file that grew and still has them
is indexed from where the last read stopped (an append), not from the start."""

_SPACES = re.compile(r"\s+")


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


HIT_MARK = "\x02"
"""Marks each hit in a snippet, for `snippet_from_hit` (a control character: were one in a
session's text, only where its snippet starts would change)."""

SNIPPET_LEAD = 24
"""Characters of a snippet kept before its hit: a narrow list shows the hit, not only the
words before it."""


WORD = re.compile(r"\w+")
"""A word of a search or of a session's text, as the full-text index splits them."""


def query_terms(query: str) -> list[str]:
    """The words of a search, folded (each must start a word of the text)."""
    return [w for w in (fold(t) for t in WORD.findall(query)) if w]


def searchable_body(lines: Sequence[str]) -> str:
    """The searchable text of a session's JSON lines (`_searchable_text` of each message,
    as the files' scan keeps it), the first `TEXT_CAP_CHARS`; unreadable lines skipped."""
    parts: list[str] = []
    budget = TEXT_CAP_CHARS
    for line in lines:
        try:
            entry = _DECODE_FULL.decode(line)
        except (msgspec.DecodeError, RecursionError):  # (ValidationError: an odd shape)
            continue
        if entry.type != "message" or entry.message is None:
            continue
        text = _searchable_text(entry.message)
        if text:
            parts.append(text[:budget])
            budget -= len(parts[-1])
            if budget <= 0:
                break
    return "\n".join(parts)


def text_hit(terms: Sequence[str], text: str) -> str | None:
    """Where ``text`` holds every term as the start of one of its words (the full-text
    index's rule): the snippet around the first such word (`snippet_from_hit`), or None."""
    folded = fold(text)  # (a quick no for most texts, before the walk word by word)
    if not all(re.search(r"(?<!\w)" + re.escape(t), folded) for t in terms):
        return None
    need = set(terms)
    first: re.Match[str] | None = None
    for m in WORD.finditer(text):
        word = fold(m.group())
        found = {t for t in need if word.startswith(t)}
        if found:
            need -= found
            first = first or m
            if not need:
                break
    if need or first is None:
        return None
    start, end = first.span()
    before = text[max(0, start - 80) : start]
    lead = "…" if start > 80 else ""
    after = text[end : end + 100] + ("…" if len(text) > end + 100 else "")
    return snippet_from_hit(f"{lead}{before}{HIT_MARK}{text[start:end]}{after}")


def snippet_from_hit(snippet: str | None) -> str | None:
    """The snippet on one line, from a few words before its first hit."""
    if snippet is None:
        return None
    text = " ".join(snippet.split())
    at = text.find(HIT_MARK)
    if at > SNIPPET_LEAD:
        cut = text.rfind(" ", 0, at - SNIPPET_LEAD // 2)
        text = "…" + text[cut + 1 if cut >= 0 else at - SNIPPET_LEAD :]
    return text.replace(HIT_MARK, "")


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
class FoundSession(IndexedSession):
    """A session a search found by its text (`SessionIndex.sessions` with a query)."""

    snippet: str | None = None
    """The words around its first hit in the session's text (None: only its title
    matched)."""


# ----------------------------------------------------------------------- reading


def later(stamp: str, than: str) -> str:
    """The later of two ISO-8601 times (as written, with the same writer: text order)."""
    return stamp if not than or stamp > than else than


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


def _searchable_text(message: Any) -> str:
    """Searchable text: what Copy copies of user, assistant and tool-result messages."""
    if getattr(message, "role", None) in ("user", "toolResult", "assistant"):
        return content_text(getattr(message, "content", None))
    return ""


@dataclass
class FileFacts:
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


GLANCE_BYTES = 16 << 20
"""A file never seen that is bigger than this is only glanced at by a launch's reconcile
(`read_facts` with ``glance``): the app reads it whole when it opens it anyway."""


def read_facts(path: str, known: FileFacts | None = None, *, glance: bool = False) -> FileFacts:
    """Everything the index keeps about one file; never raises for a bad file. With
    ``known`` (its facts as indexed) and a file that only grew since (the bytes before
    ``known.size`` end as they did, a line ended there), only the new bytes are read.

    ``glance``: a v3 file over `GLANCE_BYTES` is read only at its start (header, first
    prompt, the text there) and its end (the last activity), so that a launch lists it
    at once; the row has size 0 (`is_glance`) until `SessionIndex.update_file` indexes
    it whole, from the session the app opened when it was that one."""
    facts = FileFacts(
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
            stamp = _last_timestamp(ops, fd, st.size)
            facts.last_activity = later(stamp, facts.created_at) if stamp else facts.last_activity
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


def facts_of_opened(storage: JsonlStorage) -> FileFacts | None:
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
    facts = FileFacts(
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
        if types[i] not in NOT_ACTIVITY and (stamp := tree.timestamp_at(i)):
            facts.last_activity = later(stamp, meta.created_at)
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


def facts_of_session(session: Session | None, path: str) -> FileFacts | None:
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


def is_glance(facts: FileFacts) -> bool:
    """Whether ``facts`` are a glance (`read_facts`), not the whole file's."""
    return facts.size == 0 and facts.tail_crc is None


def _last_timestamp(ops: Any, fd: int, size: int) -> str | None:
    """The timestamp of the last whole entry line in the file's last 64 KiB that is
    activity (`NOT_ACTIVITY`)."""
    start = max(0, size - (64 << 10))
    lines = ops.pread(fd, size - start, start).split(b"\n")
    lines.pop()  # after the last newline: an unfinished line, or nothing
    for raw in reversed(lines[1:] if start else lines):  # (the first may be cut)
        try:
            entry = _DECODE_BARE.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            continue
        stamp = entry.timestamp
        if isinstance(stamp, str) and stamp and entry.type not in NOT_ACTIVITY:
            return stamp
    return None


def _tail_crc(ops: Any, fd: int, size: int) -> int:
    start = max(0, size - TAIL_CHECK)
    return zlib.crc32(ops.pread(fd, size - start, start))


def _only_grew(ops: Any, fd: int, known: FileFacts, size: int) -> bool:
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

    def __init__(self, facts: FileFacts, texts: list[str] | None = None, chars: int = 0) -> None:
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
        stamp = entry.timestamp
        if isinstance(stamp, str) and stamp and entry.type not in NOT_ACTIVITY:
            # (never before the header's time: a fork's copied entries are older than it)
            facts.last_activity = later(stamp, facts.created_at)
        if entry.type == "session_info":
            name = entry.name.strip() if isinstance(entry.name, str) else ""
            facts.name = name or None
        elif entry.type == "message":
            facts.message_count += 1
            if isinstance(entry, _Line) and entry.message is not None:
                text = _searchable_text(entry.message)
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


def _scan(lines: _Lines, facts: FileFacts) -> None:
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
