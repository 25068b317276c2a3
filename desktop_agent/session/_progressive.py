"""Opening a session never seen before: its current branch's end first (issue 12 item 3).

`open_progressive` reads the end of the file backwards (1 MiB, then 4x more while the
branch's tail is not found, at most 64 MiB), decodes the envelopes of those lines, walks
from the leaf up through the parents it found, and returns a `SessionOpening` at once
with the last messages of the current branch (`BranchTail`). The whole file is scanned
meanwhile in a worker thread (`SessionOpening.progress`), and `SessionOpening.session()`
returns the complete `Session`. When the file has an entry index the open is quick and
the tail comes from the finished tree.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from desktop_agent.ai import AgentMessage
from desktop_agent.session._codec import Entry, LineError, parse_line
from desktop_agent.session._context import project_line
from desktop_agent.session._facts import BranchTail, EntryFacts
from desktop_agent.session._header import open_error, open_for_read
from desktop_agent.session._jsonl import JsonlStorage
from desktop_agent.session._platform import FileOps
from desktop_agent.session._session import Session

FIRST_WINDOW = 1 << 20
LAST_WINDOW = 64 << 20


@dataclass
class _Line:
    entry: Entry
    offset: int
    raw: bytes


def read_tail(ops: FileOps, path: str, limit: int) -> BranchTail:
    """The last ``limit`` context messages of the current branch, from the file's end.

    Reads only regular files and never writes; a torn or damaged line is skipped (the
    full open reports it). Raises `SessionError` (``not_found``, ``invalid_session``,
    ``storage``) as opening does.
    """
    fd = open_for_read(path, ops)
    try:
        size = ops.fstat(fd).size
        window = FIRST_WINDOW
        while True:
            start = max(0, size - window)
            lines = _lines(ops.pread(fd, size - start, start), start)
            entries, end = _branch_end(lines, limit)
            if end != "missing" or start == 0:
                break
            if window >= LAST_WINDOW:
                break
            window *= 4
    except OSError as exc:
        raise open_error(path, exc) from exc
    finally:
        ops.close(fd)
    messages: dict[str, AgentMessage] = {}
    for line in _projected(entries):
        message = project_line(line.entry.type, line.entry.timestamp, line.raw)
        if message is not None:
            messages[line.entry.id] = message
    facts = [
        EntryFacts(
            id=line.entry.id,
            parent_id=line.entry.parent_id or None,
            type=line.entry.type,
            role=line.entry.role,
            timestamp=line.entry.timestamp,
            offset=line.offset,
        )
        for line in entries
    ]
    leaf = entries[-1].entry.id if entries else None
    has_more = end == "limit" or (end == "missing" and start > 0)
    return BranchTail(facts, messages, has_more=has_more, leaf_id=leaf)


def _lines(data: bytes, base: int) -> list[_Line]:
    """The valid entry lines of ``data`` (file offset ``base``), in file order."""
    pos = 0
    if base > 0:  # the first piece is the end of a line that started before the window
        pos = data.find(b"\n") + 1
        if pos == 0:
            return []
    out: list[_Line] = []
    seen_header = base > 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            break  # an unterminated last piece: torn, not an entry
        raw = data[pos:nl].rstrip(b"\r")
        if raw.strip():
            if not seen_header:
                seen_header = True  # the first line of the file is the header
            else:
                with contextlib.suppress(LineError):
                    out.append(_Line(parse_line(raw), base + pos, raw))
        pos = nl + 1
    return out


def _branch_end(lines: list[_Line], limit: int) -> tuple[list[_Line], str]:
    """Root-first lines of the current branch's end, and why they stop: "limit" (enough
    messages), "root", or "missing" (the parent is not among ``lines``)."""
    if not lines:
        return [], "missing"
    by_id = {line.entry.id: line for line in lines}
    last = lines[-1].entry
    leaf = last.extra if last.type == "leaf" else last.id
    found: list[_Line] = []
    current = by_id.get(leaf) if isinstance(leaf, str) else None
    shown = 0
    seen: set[str] = set()
    while current is not None and current.entry.id not in seen:
        seen.add(current.entry.id)
        found.append(current)
        if current.entry.type in _SHOWN:
            shown += 1
            if shown >= limit:
                found.reverse()
                return found, "limit"
        parent = current.entry.parent_id
        if not parent:
            found.reverse()
            return found, "root"
        current = by_id.get(parent)
    found.reverse()
    return found, "missing"


_SHOWN = frozenset(("message", "custom_message", "branch_summary"))


def _projected(lines: list[_Line]) -> list[_Line]:
    return [line for line in lines if line.entry.type in _SHOWN]


class SessionOpening:
    """A session being opened: the branch's end now, the whole session soon."""

    def __init__(self, tail: BranchTail, future: asyncio.Future[Session]) -> None:
        self.tail = tail
        self._future = future
        self._done = 0
        self._total = 0

    @property
    def progress(self) -> float:
        """How much of the file is read (0.0 to 1.0)."""
        if self._future.done():
            return 1.0
        return self._done / self._total if self._total else 0.0

    def _report(self, done: int, total: int) -> None:
        self._done, self._total = done, total  # from the scanning thread; two ints

    async def session(self) -> Session:
        """The complete session (raises what opening raises)."""
        return await asyncio.shield(self._future)

    def cancel(self) -> None:
        """Stop waiting; the session is closed as soon as the scan ends."""
        if not self._future.done():
            self._future.cancel()
        elif not self._future.cancelled() and self._future.exception() is None:
            self._future.result().get_storage().force_close()


async def open_progressive(
    path: str,
    *,
    ops: FileOps,
    opener: Callable[[Callable[[int, int], None]], JsonlStorage],
    indexed: bool,
    limit: int = 50,
) -> SessionOpening:
    """See the module doc. ``opener(progress)`` opens the storage (in a worker thread);
    ``indexed``: an entry index exists for the file, so the open itself is quick."""
    loop = asyncio.get_running_loop()
    if indexed:
        storage = await asyncio.to_thread(opener, lambda done, total: None)
        session = Session(storage)
        page = await session.branch_page(limit=limit)
        done: asyncio.Future[Session] = loop.create_future()
        done.set_result(session)
        tail = BranchTail(page.entries, page.messages, page.has_more, session.leaf_id(), True)
        return SessionOpening(tail, done)
    tail = await asyncio.to_thread(read_tail, ops, path, limit)
    holder: list[SessionOpening] = []

    def report(done: int, total: int) -> None:
        if holder:
            holder[0]._report(done, total)

    work = loop.run_in_executor(None, opener, report)
    future: asyncio.Future[Session] = loop.create_future()

    def finished(task: asyncio.Future[JsonlStorage]) -> None:
        if task.cancelled():
            if not future.done():
                future.cancel()
            return
        error = task.exception()
        if future.cancelled():
            if error is None:  # nobody wants it any more: let the file go
                task.result().force_close()
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(Session(task.result()))

    work.add_done_callback(finished)
    opening = SessionOpening(tail, future)
    holder.append(opening)
    return opening
