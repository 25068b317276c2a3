"""SessionIndex: follows appends, renames, deletes and damage; search; rebuilds itself."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from desktop_agent.ai import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.session import (
    IndexedSession,
    JsonlSessionRepo,
    ReconcileReport,
    Session,
    SessionIndex,
    encode_cwd,
)
from desktop_agent.session import _facts_scan as scan_module
from desktop_agent.session import _index as index_module
from tests.session._faults import CountingOps

CWD = "/home/demo/project"
OTHER_CWD = "/home/demo/other"


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def assistant(text: str) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="openai-completions",
        provider="openai",
        model="gpt",
        stop_reason="stop",
        timestamp=2,
    )


def digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def message_entry(i: int, role: str, text: str, ts: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    message["timestamp"] = i
    return {
        "type": "message",
        "id": f"e{i}",
        "parentId": f"e{i - 1}" if i > 1 else None,
        "timestamp": ts,
        "message": message,
    }


def write_raw(repo: JsonlSessionRepo, name: str, body: bytes, cwd: str = CWD) -> Path:
    folder = Path(repo.sessions_root) / encode_cwd(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    header = {
        "type": "session",
        "version": 3,
        "id": name.rpartition("_")[2].removesuffix(".jsonl"),
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": cwd,
    }
    path.write_bytes(line(header) + body)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> JsonlSessionRepo:
    return JsonlSessionRepo(tmp_path / "data" / "sessions")


@pytest_asyncio.fixture
async def index(tmp_path: Path, repo: JsonlSessionRepo) -> AsyncIterator[SessionIndex]:
    idx = SessionIndex(tmp_path / "data" / "index.sqlite", repo)
    try:
        yield idx
    finally:
        idx.close()


async def new_session(repo: JsonlSessionRepo, cwd: str, *texts: str) -> Session:
    session = await repo.create(cwd=cwd)
    for i, text in enumerate(texts):
        await session.append_message(user(text) if i % 2 == 0 else assistant(text))
    await session.sync()
    return session


def counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the index has `read_facts` read from now on."""
    reads: list[str] = []
    real = scan_module.read_facts

    def counting(path: str, *known: Any, **glance: Any) -> Any:
        reads.append(path)
        return real(path, *known, **glance)

    monkeypatch.setattr(index_module, "read_facts", counting)
    return reads


def by_path(items: list[IndexedSession]) -> dict[str, IndexedSession]:
    return {s.path: s for s in items}


@pytest.mark.asyncio
async def test_index_follows_appends_renames_deletes_and_damage(
    repo: JsonlSessionRepo, index: SessionIndex, tmp_path: Path
) -> None:
    assert await index.reconcile() == ReconcileReport()
    a = await new_session(repo, CWD, "  Fix   the\nlogin bug  ", "Looking at auth.py")
    b = await new_session(repo, OTHER_CWD, "Write a haiku")
    c = await new_session(repo, CWD)  # header only
    pa, pb, pc = (s.metadata.path or "" for s in (a, b, c))

    report = await index.reconcile()
    assert sorted(report.added) == sorted([pa, pb, pc])
    assert report.updated == report.removed == report.unreadable == ()
    items = by_path(await index.sessions())
    assert items[pa].title == "Fix the login bug"
    assert items[pa].first_prompt == "Fix the login bug"
    assert (items[pa].message_count, items[pa].entry_count) == (2, 2)
    assert items[pa].cwd == CWD and items[pa].id == a.metadata.id
    assert items[pa].size == os.path.getsize(pa)
    assert items[pc].title == "New session" and items[pc].message_count == 0
    assert items[pc].last_activity == items[pc].created_at == c.metadata.created_at
    assert [s.path for s in await index.sessions(cwd=OTHER_CWD)] == [pb]

    # Nothing changed: nothing re-read.
    assert await index.reconcile() == ReconcileReport()

    # Append to the oldest session: it becomes the most recent one.
    await a.append_message(user("and the logout bug"))
    await a.sync()
    assert (await index.reconcile()).updated == (pa,)
    items_now = await index.sessions()
    assert items_now[0].path == pa
    assert items_now[0].message_count == 3
    assert items_now[0].last_activity > items[pa].last_activity

    # Rename (session_info), then clear the name: the first prompt is the title again.
    await b.append_session_name("  Poetry  ")
    await b.sync()
    await index.reconcile()
    assert by_path(await index.sessions())[pb].title == "Poetry"
    assert [s.path for s in await index.sessions(query="POET")] == [pb]
    await b.append_session_name("")
    await b.sync()
    await index.reconcile()
    assert by_path(await index.sessions())[pb].title == "Write a haiku"

    # Delete to the trash: gone from the index.
    for s in (a, b, c):
        await s.close()
    await repo.delete(c.metadata)
    assert (await index.reconcile()).removed == (pc,)
    assert pc not in by_path(await index.sessions())

    # Damage in the middle and a torn tail: indexed from what is readable, file untouched.
    with open(pa, "ab") as fh:
        fh.write(b"{not json\n")
        fh.write(line(message_entry(99, "user", "after the damage", "2027-01-01T00:00:00.000Z")))
        fh.write(b'{"type":"message","id":"torn","parentId":null,"timest')
    before = digest(pa)
    report = await index.reconcile()
    assert report.updated == (pa,) and report.unreadable == (pa,)
    damaged = by_path(await index.sessions())[pa]
    assert damaged.problem is not None
    assert "1 damaged line" in damaged.problem and "incomplete" in damaged.problem
    assert damaged.message_count == 4
    assert damaged.last_activity == "2027-01-01T00:00:00.000Z"
    assert [s.path for s in await index.sessions(query="after the damage")] == [pa]
    assert digest(pa) == before, "indexing never modifies a session file"
    assert not list(Path(pa).parent.glob("*.corrupt-*")), "indexing never quarantines"


@pytest.mark.asyncio
async def test_search_content_and_titles(repo: JsonlSessionRepo, index: SessionIndex) -> None:
    s1 = await new_session(repo, CWD, "How do I parse TOML?", "Use tomllib from the stdlib.")
    s2 = await new_session(repo, CWD, "Résumé template please")
    s3 = await repo.create(cwd=OTHER_CWD)
    call = ToolCall(id="c1", name="bash", arguments={"command": "ls"})
    await s3.append_message(user("list files"))
    await s3.append_message(
        AssistantMessage(
            content=[call],
            api="openai-completions",
            provider="openai",
            model="gpt",
            stop_reason="toolUse",
            timestamp=3,
        )
    )
    await s3.append_message(
        ToolResultMessage(
            tool_call_id="c1",
            tool_name="bash",
            content=[TextContent(text="zebra_config.yaml\nREADME.md")],
            is_error=False,
            timestamp=4,
        )
    )
    for s in (s1, s2, s3):
        await s.close()
    await index.reconcile()
    p1, p2, p3 = (s.metadata.path for s in (s1, s2, s3))

    async def found(query: str, cwd: str | None = None) -> list[str | None]:
        return [s.path for s in await index.sessions(cwd=cwd, query=query)]

    assert await found("tomllib") == [p1]  # assistant text
    assert await found("TOMLLIB stdlib") == [p1]  # all words, any case
    assert await found("toml") == [p1]  # prefix
    assert await found("zebra") == [p3]  # tool result text
    assert await found("resume") == [p2]  # accents folded in content
    assert await found("RÉSUMÉ TEMP") == [p2]  # substring of the first prompt
    assert await found("W DO I p") == [p1]  # substring of the title ("How do I parse")
    assert await found("?") == [p1]  # no words: title substring only
    assert await found("zebra", cwd=CWD) == []
    assert await found('"quoted" AND OR NOT *') == []  # FTS syntax is never interpreted
    assert await found("   ") == [p3, p2, p1]  # blank query = no filter


@pytest.mark.asyncio
async def test_unchanged_files_are_not_reread(
    repo: JsonlSessionRepo, index: SessionIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(5):
        await (await new_session(repo, CWD, f"prompt {i}")).close()
    await index.reconcile()
    reads = counted_reads(monkeypatch)
    assert await index.reconcile() == ReconcileReport()
    assert reads == []
    target = (await index.sessions())[2].path
    with open(target, "ab") as fh:
        fh.write(line(message_entry(7, "user", "more", "2030-01-01T00:00:00.000Z")))
    assert (await index.reconcile()).updated == (target,)
    assert reads == [target]


@pytest.mark.asyncio
async def test_update_file_of_an_unchanged_file_reads_nothing(
    repo: JsonlSessionRepo, index: SessionIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing a session that was only read (every quit) must not re-read its file."""
    session = await new_session(repo, CWD, "first", "answer")
    path = session.metadata.path or ""
    first = await index.update_file(path)
    reads = counted_reads(monkeypatch)
    assert await index.update_file(path) == first
    assert reads == []
    await session.append_message(user("more"))
    await session.sync()
    grown = await index.update_file(path)
    assert reads == [path] and grown is not None and grown.message_count == 3
    await session.close()


def test_facts_are_the_same_whatever_the_read_chunk(
    repo: JsonlSessionRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file is indexed a chunk at a time (memory bounded by a line, not the file): lines
    cut by a chunk's end, damage, blank lines and a torn tail give the same facts."""
    body = b"".join(
        line(message_entry(i, "user" if i % 2 else "assistant", f"text {i} " * i, f"2027-01-0{i}"))
        for i in range(1, 9)
    )
    cases = {
        "plain": body,
        "damaged": body[:200] + b"\n{not json\n\n\n" + body[200:],
        "torn": body + b'{"type":"message","id":"torn","parentId":null,"timest',
        "crlf": body.replace(b"\n", b"\r\n"),
        "blank tail": body + b"\n\n  \n",
        "named": body + line({"type": "session_info", "id": "n", "name": " Named "}),
    }
    for name, data in cases.items():
        file_name = f"2026-01-01T00-00-00-000Z_{name.replace(' ', '-')}.jsonl"
        path = str(write_raw(repo, file_name, data))
        whole = scan_module.read_facts(path)
        for chunk in (1, 7, 64, 1000):
            monkeypatch.setattr(scan_module, "READ_CHUNK", chunk)
            assert scan_module.read_facts(path) == whole, (name, chunk)
        monkeypatch.undo()
        assert whole.entry_count >= 8 or name == "damaged", name


def test_an_appended_file_is_indexed_from_where_the_last_read_stopped(
    repo: JsonlSessionRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program (Pi) appended entries: only the new bytes are read (and a check of
    the bytes before them), and the facts are those of a read from the start."""
    ops = CountingOps()
    monkeypatch.setattr(scan_module, "OS_FILE_OPS", ops)
    body = b"".join(
        line(message_entry(i, "user" if i % 2 else "assistant", f"text {i}", f"2027-01-{i:02d}"))
        for i in range(1, 200)
    )
    path = write_raw(repo, "2026-01-01T00-00-00-000Z_grown.jsonl", body)
    known = scan_module.read_facts(str(path))
    assert known.problem is None and known.tail_crc is not None
    more = line(message_entry(300, "user", "the appended prompt", "2028-01-01")) + line(
        {"type": "session_info", "id": "n1", "parentId": "e300", "name": "Grown"}
    )
    with path.open("ab") as fh:
        fh.write(more)
    ops.read = 0
    grown = scan_module.read_facts(str(path), known)
    assert ops.read <= len(more) + 2 * scan_module.TAIL_CHECK + 1  # + the CRCs before, after
    assert grown == scan_module.read_facts(str(path))
    assert grown.name == "Grown" and grown.message_count == 200
    assert "the appended prompt" in grown.body

    # A file whose end changed, or that was read with a torn tail, is read again whole.
    for damage in (b"X", b'{"type":"message","id":"torn"'):
        data = path.read_bytes()
        edited = data[:-2] + damage + b"\n" if damage == b"X" else data + damage
        path.write_bytes(edited)
        before = scan_module.read_facts(str(path))
        path.write_bytes(edited + b"\n" + more)
        ops.read = 0
        again = scan_module.read_facts(str(path), known if damage == b"X" else before)
        assert again == scan_module.read_facts(str(path))
        assert ops.read >= len(edited), damage


@pytest.mark.asyncio
async def test_update_file_and_forget(repo: JsonlSessionRepo, index: SessionIndex) -> None:
    session = await new_session(repo, CWD, "first")
    path = session.metadata.path or ""
    indexed = await index.update_file(path)
    assert indexed is not None and indexed.title == "first"
    await session.append_session_name("Named")
    await session.sync()
    indexed = await index.update_file(path)
    assert indexed is not None and indexed.title == "Named"
    assert [s.title for s in await index.sessions()] == ["Named"]
    assert await index.reconcile() == ReconcileReport(), "update_file recorded size and mtime"
    await index.forget(path)
    assert await index.sessions() == []
    await session.close()
    await repo.delete(session.metadata)
    assert await index.update_file(path) is None
    assert await index.sessions() == []


@pytest.mark.asyncio
async def test_metadata_opens_the_session(repo: JsonlSessionRepo, index: SessionIndex) -> None:
    session = await new_session(repo, CWD, "hello", "hi")
    await session.close()
    await index.reconcile()
    [item] = await index.sessions()
    reopened = await repo.open(item.metadata())
    try:
        assert reopened.metadata == session.metadata
        assert reopened.entry_count == item.entry_count
    finally:
        await reopened.close()


@pytest.mark.asyncio
async def test_open_and_locked_session_is_indexed_without_touching_it(
    repo: JsonlSessionRepo, index: SessionIndex
) -> None:
    session = await new_session(repo, CWD, "busy")
    path = session.metadata.path or ""
    await index.reconcile()  # while the writer holds its lock
    [item] = await index.sessions()
    assert item.problem is None and item.title == "busy"
    await session.append_message(assistant("still here"))  # the writer is undisturbed
    await session.close()
    assert (await index.reconcile()).updated == (path,)


@pytest.mark.asyncio
async def test_unreadable_files_are_listed_with_a_problem(
    repo: JsonlSessionRepo, index: SessionIndex
) -> None:
    bad_header = Path(repo.sessions_root) / encode_cwd(CWD) / "2026-01-01T00-00-00-000Z_bad.jsonl"
    bad_header.parent.mkdir(parents=True)
    bad_header.write_bytes(b'{"type":"session","version":4}\n')
    empty = bad_header.with_name("2026-01-01T00-00-00-000Z_empty.jsonl")
    empty.write_bytes(b"")
    odd = write_raw(
        repo,
        "2026-01-01T00-00-00-000Z_odd.jsonl",
        b'{"type":"message","id":"m1","parentId":null,"timestamp":"t","message":"text"}\n'
        + b'{"type":"custom","id":"c1","parentId":"m1","timestamp":"t2"}\n',
    )
    report = await index.reconcile()
    assert sorted(report.unreadable) == sorted([str(bad_header), str(empty)])
    items = by_path(await index.sessions())
    assert items[str(bad_header)].id == "bad"
    assert "unsupported session version" in (items[str(bad_header)].problem or "")
    assert "no session header" in (items[str(empty)].problem or "")
    assert items[str(odd)].problem is None
    assert (items[str(odd)].entry_count, items[str(odd)].message_count) == (2, 1)
    assert items[str(odd)].last_activity == "t2"


@pytest.mark.asyncio
async def test_text_is_capped_but_counts_are_not(
    repo: JsonlSessionRepo, index: SessionIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_module, "TEXT_CAP_CHARS", 50)
    body = b"".join(
        line(message_entry(i, "user" if i % 2 else "assistant", f"word{i} " * 5, f"t{i:03}"))
        for i in range(1, 40)
    )
    path = write_raw(repo, "2026-01-01T00-00-00-000Z_big.jsonl", body)
    await index.reconcile()
    [item] = await index.sessions()
    assert (item.message_count, item.last_activity) == (39, "t039")
    assert item.first_prompt == ("word1 " * 5).strip()
    assert [s.path for s in await index.sessions(query="word2")] == [str(path)]
    assert await index.sessions(query="word30") == []


@pytest.mark.asyncio
async def test_damaged_or_newer_index_is_rebuilt(repo: JsonlSessionRepo, tmp_path: Path) -> None:
    await (await new_session(repo, CWD, "survives")).close()
    index_path = tmp_path / "data" / "index.sqlite"

    index_path.write_bytes(b"this is not a database" * 100)
    idx = SessionIndex(index_path, repo)
    assert len((await idx.reconcile()).added) == 1
    assert [s.title for s in await idx.sessions()] == ["survives"]
    idx.close()

    conn = sqlite3.connect(index_path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    idx = SessionIndex(index_path, repo)
    assert len((await idx.reconcile()).added) == 1
    idx.close()

    # Deleting the index loses nothing.
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index_path}{suffix}").unlink(missing_ok=True)
    idx = SessionIndex(index_path, repo)
    assert len((await idx.reconcile()).added) == 1
    assert [s.title for s in await idx.sessions(query="survives")] == ["survives"]
    idx.close()


@pytest.mark.asyncio
async def test_closed_index_refuses_work(repo: JsonlSessionRepo, index: SessionIndex) -> None:
    index.close()
    index.close()
    with pytest.raises(Exception, match="closed"):
        await index.sessions()


# ------------------------------------------------ one read of a big session at launch


@pytest.mark.asyncio
async def test_an_opened_session_is_indexed_from_what_opening_read(
    repo: JsonlSessionRepo, index: SessionIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the index does not know, just opened whole: its row comes from the tree
    (the file is not read again) and equals what reading the file gives."""
    session = await new_session(repo, CWD, "first prompt", "answer", "second", "more")
    await session.append_session_name("Named")
    await session.append_message(user("last words"))
    await session.sync()
    path = session.metadata.path or ""
    want = scan_module.read_facts(path)
    reads = counted_reads(monkeypatch)
    row = await index.update_file(path, session)
    assert reads == [] and row is not None
    assert row == IndexedSession(*want.row()[:-1])
    assert index._known(index._db(), path) == want  # body, text_chars, tail_crc too
    # A known file that grew is read from where it was, not taken from the tree.
    await session.append_message(assistant("appended"))
    await session.sync()
    grown = await index.update_file(path, session)
    assert reads == [path] and grown is not None and grown.message_count == 6
    await session.close()


@pytest.mark.asyncio
async def test_an_opened_session_that_is_not_the_whole_file_is_read(
    repo: JsonlSessionRepo, index: SessionIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Damage, or entries not yet written: the facts come from the file."""
    first, second = (
        line(message_entry(i, "user", f"m{i}", "2026-01-01T00:00:01.000Z")) for i in (1, 2)
    )
    name = "2026_019a0000-0000-7000-8000-00000000000d.jsonl"
    path = write_raw(repo, name, first + b"{not json\n" + second)
    session = await repo.open(str(path))
    assert session.recovery is not None and session.recovery.damaged
    reads = counted_reads(monkeypatch)
    row = await index.update_file(str(path), session)
    assert reads == [str(path)] and row is not None and row.problem is not None
    await session.close()


@pytest.mark.asyncio
async def test_a_launch_glances_at_a_big_new_file_and_indexes_it_once_opened(
    repo: JsonlSessionRepo, index: SessionIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big file never seen is listed at once (its start and end read), and indexed
    whole from the opened session; until then (or after a launch that stopped) it is
    glanced at again, never left half-indexed by a plain reconcile."""
    monkeypatch.setattr(scan_module, "GLANCE_BYTES", 2_000)
    monkeypatch.setattr(scan_module, "READ_CHUNK", 1_024)
    texts = [f"prompt {i} " + "x" * 300 for i in range(12)]
    session = await new_session(repo, CWD, *texts)
    await session.close()
    path = session.metadata.path or ""
    whole = scan_module.read_facts(path)
    report = await index.reconcile(glance=True)
    assert report.glanced == (path,) and report.added == (path,)
    [row] = await index.sessions()
    assert row.first_prompt == whole.first_prompt and row.last_activity == whole.last_activity
    assert row.size == 0  # a glance: not the whole file's facts yet
    again = await index.reconcile(glance=True)
    assert again.glanced == (path,)
    opened = await repo.open(path)
    done = await index.update_file(path, opened)
    assert done == IndexedSession(*whole.row()[:-1])
    assert await index.reconcile(glance=True) == ReconcileReport()
    await opened.close()
    # Without glance (the Pi folder's index), a glanced row is read whole.
    await index.forget(path)
    await index.reconcile(glance=True)
    full = await index.reconcile()
    assert full.updated == (path,) and full.glanced == ()
    assert (await index.sessions())[0].message_count == whole.message_count


@pytest.mark.asyncio
async def test_a_long_first_index_lets_other_work_through_between_its_slices(
    repo: JsonlSessionRepo, index: SessionIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first index of many files runs in slices, each its own transaction: the file
    the app opens meanwhile is updated (and the list read) before it ends; a file gone
    since the index was planned (moved to the trash) gets no row; the report and the
    rows are what one pass gives."""
    import asyncio
    import threading
    import time

    paths = [
        write_raw(repo, f"2026-01-01T00-00-{i:02}-000Z_s{i:02}.jsonl", line(message_entry(
            1, "user", f"prompt {i}", "2026-01-01T00:00:01.000Z")))
        for i in range(12)
    ]  # fmt: skip
    monkeypatch.setattr(index_module, "RECONCILE_SLICE_S", 0.0, raising=False)  # a file a slice
    real = scan_module.read_facts
    started = threading.Event()

    def slow(path: str, *known: Any, **glance: Any) -> Any:
        started.set()
        time.sleep(0.02)
        return real(path, *known, **glance)

    monkeypatch.setattr(index_module, "read_facts", slow)
    gone = paths[-1]
    reconcile = asyncio.ensure_future(index.reconcile(later=[str(paths[0])]))
    await asyncio.to_thread(started.wait)
    gone.unlink()  # (after the plan listed it)
    opened = await index.update_file(paths[0])
    listed = await index.sessions()
    assert opened is not None and not reconcile.done()  # it went between two slices
    assert 0 < len(listed) < len(paths)
    report = await reconcile
    assert sorted(report.added) == sorted(str(p) for p in paths[1:])
    rows = by_path(await index.sessions())
    assert sorted(rows) == sorted(str(p) for p in paths[:-1])
    assert all(r.first_prompt and r.problem is None for r in rows.values())


@pytest.mark.asyncio
async def test_a_name_or_a_label_is_not_activity_and_a_fork_is_as_new_as_its_header(
    repo: JsonlSessionRepo, index: SessionIndex
) -> None:
    """FIRST_HOUR.md p17: renaming a session moved it to the top of the list."""
    worked = line(message_entry(1, "user", "hello", "2026-01-02T00:00:00.000Z"))
    renamed = write_raw(
        repo,
        "2026-01-01T00-00-00-000Z_renamed.jsonl",
        worked
        + line(
            {
                "type": "session_info",
                "id": "n1",
                "parentId": "e1",
                "name": "New name",
                "timestamp": "2026-03-01T00:00:00.000Z",
            }
        )
        + line(
            {
                "type": "label",
                "id": "l1",
                "parentId": "n1",
                "targetId": "e1",
                "label": "idea",
                "timestamp": "2026-03-02T00:00:00.000Z",
            }
        ),
    )
    folder = renamed.parent
    fork = folder / "2026-02-01T00-00-00-000Z_fork.jsonl"
    header = {"type": "session", "version": 3, "id": "fork",
              "timestamp": "2026-02-01T00:00:00.000Z", "cwd": CWD}  # fmt: skip
    fork.write_bytes(line(header) + worked)  # the copied entry is older than the fork
    await index.reconcile()
    items = by_path(await index.sessions())
    assert items[str(renamed)].title == "New name"
    assert items[str(renamed)].last_activity == "2026-01-02T00:00:00.000Z"
    assert items[str(fork)].last_activity == "2026-02-01T00:00:00.000Z"
