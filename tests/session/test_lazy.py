"""Issue 12 items 2-3: lazy views of a session and the progressive first open.

Facts come from the tree's columns without reading lines; previews and pages of a branch
are read off the loop and kept; an open of a file never seen shows the end of the current
branch before the whole file is read, and the finished session is the same as a plain
open. Memory: loaded lines are not kept with the entries.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.session import JsonlSessionRepo, Session
from desktop_agent.session._jsonl import JsonlStorage
from tests.session._faults import CountingOps, SessionFileOps
from tests.session._workload import CWD, run_workload

SEED = Path(__file__).resolve().parent.parent / "corpus" / "seeds" / "pi-core-fixture.jsonl"


def _repo(tmp_path: Path, *, index: bool = True) -> JsonlSessionRepo:
    return JsonlSessionRepo(
        tmp_path / "sessions", entry_index_dir=tmp_path / "cache" if index else None
    )


async def _long_session(tmp_path: Path, turns: int = 40) -> Path:
    s = await _repo(tmp_path, index=False).create(cwd=CWD)
    await run_workload(s, turns=turns, big=30_000)
    await s.close()
    return Path(s.metadata.path or "")


def _texts(messages: Any) -> list[str]:
    return [json.dumps(m.model_dump(by_alias=True), sort_keys=True) for m in messages]


@pytest.mark.asyncio
async def test_facts_previews_and_pages(tmp_path: Path) -> None:
    path = await _long_session(tmp_path)
    repo = _repo(tmp_path)
    s = await repo.open(str(path))
    tree = s.get_storage().tree
    assert not any(tree.pinned(i) for i in range(len(tree)))  # no line kept in memory
    leaf = s.leaf_id()
    assert leaf is not None
    facts = s.entry_facts(leaf)
    assert facts.preview is None and facts.offset > 0
    read_before = tree.lines_read
    branch = s.branch_ids()
    all_facts = s.facts(branch)
    assert tree.lines_read == read_before  # facts read no line
    assert [f.id for f in all_facts] == branch
    assert all_facts[0].parent_id is None and all_facts[1].parent_id == branch[0]
    # Pages from the end, then older ones, cover the branch exactly once.
    context = await s.build_context()
    pages: list[Any] = []
    before: str | None = None
    while True:
        page = await s.branch_page(before=before, limit=7)
        pages.insert(0, page)
        if not page.has_more:
            break
        before = page.entries[0].id
    ids = [f.id for p in pages for f in p.entries]
    assert ids == branch
    messages = [p.messages[f.id] for p in pages for f in p.entries if f.id in p.messages]
    projected = [m for m in messages]
    assert len(projected) >= len(context.messages) - 1
    # Previews are made once, kept, and saved in the entry index.
    shown = await s.previews(branch[-10:])
    assert all(shown.values())
    assert shown[branch[-1]] == "and the docs?"
    assert s.entry_facts(branch[-1]).preview == "and the docs?"
    await s.close()
    again = await repo.open(str(path))
    tree = again.get_storage().tree
    assert again.entry_facts(branch[-1]).preview == "and the docs?"
    assert tree.lines_read == 0
    await again.close()


@pytest.mark.asyncio
async def test_progressive_open_shows_the_end_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = await _long_session(tmp_path)
    plain = await _repo(tmp_path, index=False).open(str(path))
    expected_context = _texts((await plain.build_context()).messages)
    expected_leaf = plain.leaf_id()
    expected_branch = plain.branch_ids()
    end = await plain.branch_page(limit=5)
    expected_tail = _texts(end.messages[f.id] for f in end.entries if f.id in end.messages)
    await plain.close()

    # Hold the full scan until the tail has been looked at: the tail must not need it.
    gate = asyncio.Event()
    started = asyncio.Event()
    loop = asyncio.get_running_loop()
    real_open = JsonlStorage.open

    def slow_open(*args: Any, **kwargs: Any) -> Any:
        loop.call_soon_threadsafe(started.set)
        asyncio.run_coroutine_threadsafe(gate.wait(), loop).result(timeout=30)
        return real_open(*args, **kwargs)

    monkeypatch.setattr(JsonlStorage, "open", slow_open)
    repo = _repo(tmp_path)
    try:
        opening = await repo.open_progressive(str(path), tail=5)
    finally:
        loop.call_later(5, gate.set)  # never leave the scanning thread waiting
    tail = opening.tail
    assert not tail.complete and tail.leaf_id == expected_leaf
    assert [f.id for f in tail.entries] == expected_branch[-len(tail.entries) :]
    assert len(tail.messages) == 5 and tail.has_more
    tail_texts = _texts(tail.messages[f.id] for f in tail.entries if f.id in tail.messages)
    assert tail_texts == expected_tail
    await started.wait()
    assert opening.progress < 1.0
    gate.set()
    session = await opening.session()
    assert opening.progress == 1.0
    assert session.branch_ids() == expected_branch
    assert _texts((await session.build_context()).messages) == expected_context
    await session.close()
    monkeypatch.undo()

    # Next time the entry index exists: the open is quick and the tail is the finished one.
    opening = await repo.open_progressive(str(path), tail=5)
    assert opening.tail.complete and opening.progress == 1.0
    session = await opening.session()
    assert [f.id for f in opening.tail.entries] == [f.id for f in tail.entries]
    await session.close()

    # A file too big for its index to load before the tail shows (a million entries): the
    # tail first, the index loaded meanwhile; the same session in the end, no full scan.
    import desktop_agent.session._repos as repos

    monkeypatch.setattr(repos, "INDEXED_OPEN_MAX_BYTES", 1)
    counted = CountingOps()
    big = JsonlSessionRepo(tmp_path / "sessions", entry_index_dir=tmp_path / "cache",
                           file_ops=counted)  # fmt: skip
    opening = await big.open_progressive(str(path), tail=5)
    assert not opening.tail.complete
    assert [f.id for f in opening.tail.entries] == [f.id for f in tail.entries]
    tail_read = counted.read
    session = await opening.session()
    assert counted.read - tail_read <= 2 * 4096 + 1  # the index's checks, no scan
    assert session.branch_ids() == expected_branch
    assert _texts((await session.build_context()).messages) == expected_context
    await session.close()


@pytest.mark.asyncio
async def test_progressive_open_of_odd_files(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "--pi--"
    folder.mkdir(parents=True)
    pi = folder / "pi.jsonl"
    shutil.copy(SEED, pi)
    torn = folder / "torn.jsonl"
    torn.write_bytes(SEED.read_bytes() + b'{"type":"message","id":"zz","par')
    repo = _repo(tmp_path, index=False)
    for path in (pi, torn):
        plain = await repo.open(str(path))
        leaf = plain.leaf_id()
        branch = plain.branch_ids()
        await plain.close()
        if path == torn:
            shutil.copy(SEED, torn)
            torn.write_bytes(SEED.read_bytes() + b'{"type":"message","id":"zz","par')
        opening = await repo.open_progressive(str(path), tail=100)
        assert opening.tail.leaf_id == leaf  # a torn last line is not the leaf
        assert [f.id for f in opening.tail.entries] == branch  # the whole (short) branch
        assert not opening.tail.has_more
        session = await opening.session()
        await session.close()
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(Exception) as err:
        await repo.open_progressive(str(missing))
    assert getattr(err.value, "code", None) == "not_found"


@pytest.mark.asyncio
async def test_cancelled_progressive_open_lets_the_file_go(tmp_path: Path) -> None:
    path = await _long_session(tmp_path, turns=8)
    repo = _repo(tmp_path, index=False)
    opening = await repo.open_progressive(str(path))
    opening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await opening.session()
    for _ in range(100):  # the scan finishes in its thread, then the file is released
        await asyncio.sleep(0.02)
        s = await repo.open(str(path))
        owner = not s.read_only
        await s.close()
        if owner:
            break
    assert owner


def _bytes_of_lines(session: Session) -> int:
    tree = session.get_storage().tree
    return sum(len(tree.line(i)) for i in range(len(tree)))


@pytest.mark.asyncio
async def test_appended_lines_are_released_after_sync(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    s = await repo.create(cwd=CWD)
    await run_workload(s, turns=2, big=10_000)
    tree = s.get_storage().tree
    assert not any(tree.pinned(i) for i in range(len(tree)))  # all synced: read back
    await s.append_message(
        {"role": "user", "content": [{"type": "text", "text": "unsynced"}], "timestamp": 1}
    )
    assert tree.pinned(len(tree) - 1)  # kept until its fsync
    await s.sync()
    assert not tree.pinned(len(tree) - 1)
    assert _bytes_of_lines(s) > 10_000  # and still readable
    await s.close()


def _line(entry_id: str, parent: str | None, kind: str, **fields: Any) -> str:
    entry = {"type": kind, "id": entry_id, "parentId": parent}
    entry["timestamp"] = f"2026-11-01T00:00:{len(entry_id):02d}.000Z"
    entry.update(fields)
    return json.dumps(entry)


@pytest.mark.asyncio
async def test_context_messages_are_decoded_only_when_read(tmp_path: Path) -> None:
    """build_context reads no message line; len, indexing, slices and iteration give what
    an eager list gives, including entries that project to nothing (an empty branch
    summary, a message entry without a message object), which are left out up front."""
    user = {"role": "user", "content": "hi", "timestamp": 1}
    lines = [
        json.dumps(
            {
                "type": "session",
                "version": 3,
                "id": "s",
                "timestamp": "2026-11-01T00:00:00.000Z",
                "cwd": CWD,
            }
        )
    ]
    parent = None
    for n in range(30):
        eid = f"u{n:04d}"
        lines.append(_line(eid, parent, "message", message={**user, "content": f"q{n}"}))
        parent = eid
    lines.append(_line("bsempty", parent, "branch_summary", summary="", fromId="u0000"))
    lines.append(_line("nomsg", "bsempty", "message", message="not an object"))
    lines.append(_line("bsfull", "nomsg", "branch_summary", summary="went back", fromId="u0001"))
    lines.append(_line("last", "bsfull", "message", message={**user, "content": "end"}))
    folder = tmp_path / "sessions" / "w"
    folder.mkdir(parents=True)
    path = folder / "2026-11-01T00-00-00-000Z_s.jsonl"
    path.write_text("\n".join(lines) + "\n")

    s = await _repo(tmp_path).open(str(path))
    tree = s.get_storage().tree
    before = tree.lines_read
    ctx = await s.build_context()
    doubtful_lines = 3  # the two branch summaries and the entry without a message object
    assert tree.lines_read - before == doubtful_lines
    assert len(ctx.messages) == 32  # 30 + "went back" + "end"
    before = tree.lines_read
    assert ctx.messages[-1].content == "end"  # type: ignore[union-attr]
    assert ctx.messages[-2].role == "branchSummary"
    assert tree.lines_read - before == 1  # only the last line was read
    assert [m.content for m in ctx.messages[:2]] == ["q0", "q1"]  # type: ignore[union-attr]
    eager = list(ctx.messages)
    assert len(eager) == 32 and ctx.messages == eager
    assert [getattr(m, "content", None) for m in eager[:30]] == [f"q{n}" for n in range(30)]
    with pytest.raises(IndexError):
        ctx.messages[32]
    await s.close()


class _HeldReads(SessionFileOps):
    """The real OS; a read of a ``.jsonl`` file waits, once armed, until released."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.waiting = threading.Event()
        self.release = threading.Event()

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        if self.armed and self.session_file(fd):
            self.armed = False
            self.waiting.set()
            assert self.release.wait(10)
        return super().pread(fd, size, offset)


@pytest.mark.asyncio
async def test_close_waits_for_a_read_on_a_worker_thread(tmp_path: Path) -> None:
    """Quitting while the map's previews were read on a worker closed the descriptor
    under the read (EBADF in CI; a reused descriptor number could have read another
    file). Close now waits for the read, which then returns the right lines."""
    path = await _long_session(tmp_path, turns=4)
    ops = _HeldReads()
    s = await JsonlSessionRepo(tmp_path / "sessions", file_ops=ops).open(str(path))
    branch = s.branch_ids()
    ops.armed = True
    previews = asyncio.ensure_future(s.previews(branch))
    assert await asyncio.to_thread(ops.waiting.wait, 10)
    closing = asyncio.ensure_future(s.close())
    await asyncio.sleep(0.2)
    assert not closing.done()  # the close waits for the read in flight
    ops.release.set()
    texts = await previews
    await closing
    assert s.closed
    want = await (await _repo(tmp_path).open(str(path))).previews(branch)
    assert texts == want and any(texts.values())
