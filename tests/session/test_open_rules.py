"""Issue 11 items 1-5: what opening promises, one regression test per finding.

Every file opens (read-only with the reason when it cannot be written safely) or is
refused with a documented `SessionError` code; opening changes no byte except the torn
tail it sets aside; a FIFO or symlink loop never hides or blocks a folder; a read-only
or full disk is reported, not raised; one writer per file whatever name opens it; a
power cut that reordered unsynced pages is a torn tail.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import (
    JsonlSessionRepo,
    SessionError,
    SessionIndex,
    SessionWriteError,
    encode_cwd,
)
from tests.session._faults import Fault, FaultyOps

CWD = "/home/demo/project"
HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}


def line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def header() -> bytes:
    return line({**HEADER, "cwd": CWD})


def message(i: int, parent: int | None, text: str | None = None) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"e{i}",
        "parentId": f"e{parent}" if parent is not None else None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": text if text is not None else f"m{i}"}],
            "timestamp": i,
        },
    }


def chain(n: int, text: str | None = None) -> bytes:
    return b"".join(line(message(i, i - 1 if i > 1 else None, text)) for i in range(1, n + 1))


def session_file(root: Path, body: bytes, head: bytes | None = None) -> Path:
    folder = root / encode_cwd(CWD)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "2026-01-01T00-00-00-000Z_s1.jsonl"
    path.write_bytes((header() if head is None else head) + body)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


# ------------------------------------------------------------------ 1. the loader


@pytest.mark.asyncio
async def test_header_without_newline_is_not_changed_on_open(tmp_path: Path) -> None:
    path = session_file(tmp_path, b"", header().rstrip(b"\n"))
    before = path.read_bytes()
    s = await JsonlSessionRepo(tmp_path).open(str(path))
    assert not s.read_only and s.recovery is None
    assert path.read_bytes() == before  # not even a "\n"
    await s.close()
    assert path.read_bytes() == before  # closing without appends writes nothing
    s = await JsonlSessionRepo(tmp_path).open(str(path))
    await s.append_message(user("first"))
    await s.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[0] == before and json.loads(lines[1])["type"] == "message"
    again = await JsonlSessionRepo(tmp_path).open(str(path))
    assert again.recovery is None and len(await again.get_entries()) == 1
    await again.close()


@pytest.mark.parametrize("tokens", [None, "many", [1, 2], {"n": 1}, True])
@pytest.mark.asyncio
async def test_compaction_with_odd_tokens_before_builds_a_context(
    tmp_path: Path, tokens: Any
) -> None:
    compaction = {
        "type": "compaction",
        "id": "c1",
        "parentId": "e2",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "summary": "what happened",
        "firstKeptEntryId": "e2",
        "tokensBefore": tokens,
    }
    after = {**message(3, None), "parentId": "c1"}
    path = session_file(tmp_path, chain(2) + line(compaction) + line(after))
    before = digest(path)
    s = await JsonlSessionRepo(tmp_path).open(str(path))
    context = await s.build_context()
    assert [m.role for m in context.messages] == ["compactionSummary", "user", "user"]
    assert context.messages[0].tokens_before == 0  # type: ignore[union-attr]
    await s.get_entries()
    await s.get_tree()
    await s.close()
    assert digest(path) == before


@pytest.mark.parametrize(
    "where",
    ["text", "timestamp", "extra", "header"],
)
@pytest.mark.asyncio
async def test_huge_integer_anywhere_is_read(tmp_path: Path, where: str) -> None:
    huge = "9" * 5000
    entry = line(message(1, None)).decode()
    head = header()
    if where == "text":
        entry = entry.replace('"text":"m1"', f'"text":"m1","n":{huge}')
    elif where == "timestamp":
        entry = entry.replace('"timestamp":1}', f'"timestamp":{huge}}}')
    elif where == "extra":
        entry = entry.replace('{"type":"message"', f'{{"big":{huge},"type":"message"')
    else:
        head = head.replace(b'"version":3', f'"size":{huge},"version":3'.encode())
    path = session_file(tmp_path, entry.encode(), head)
    before = digest(path)
    s = await JsonlSessionRepo(tmp_path).open(str(path))
    assert s.recovery is None and not s.read_only
    await s.build_context()
    entries = await s.get_entries()
    assert [e.id for e in entries] == ["e1"]
    await s.get_tree()
    await s.close()
    assert digest(path) == before


@pytest.mark.parametrize(
    "bad",
    [b'{"type":"message","id":"x","parentId":null,"timestamp":"t","n":NaN}', b"[" * 5000],
)
@pytest.mark.asyncio
async def test_unreadable_json_is_damage_not_a_crash(tmp_path: Path, bad: bytes) -> None:
    path = session_file(tmp_path, line(message(1, None)) + bad + b"\n" + line(message(2, 1)))
    before = digest(path)
    s = await JsonlSessionRepo(tmp_path).open(str(path))
    assert s.read_only and s.recovery is not None
    assert [d.line_number for d in s.recovery.damaged_lines] == [3]
    assert [m.role for m in (await s.build_context()).messages] == ["user", "user"]
    await s.close()
    assert digest(path) == before


@pytest.mark.asyncio
async def test_invalid_utf8_is_read_as_pi_reads_it(tmp_path: Path) -> None:
    """Node decodes invalid UTF-8 as U+FFFD; so do we (the bytes stay as they were)."""
    path = session_file(tmp_path, chain(1, "caf\xe9").replace("é".encode(), b"\xe9"))
    before = digest(path)
    s = await JsonlSessionRepo(tmp_path).open(str(path))
    assert s.recovery is None
    text = (await s.build_context()).messages[0].content[0].text  # type: ignore[union-attr]
    assert text == "caf\ufffd"
    await s.close()
    assert digest(path) == before


# ------------------------------------------------------------------ 2. FIFOs, loops


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.asyncio
async def test_fifo_and_symlink_loop_never_block_or_hide_a_folder(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    repo = JsonlSessionRepo(root)
    good = await repo.create(cwd=CWD)
    await good.append_message(user("still listed"))
    await good.close()
    folder = root / encode_cwd(CWD)
    os.mkfifo(folder / "pipe.jsonl")
    os.symlink(folder / "loop-b.jsonl", folder / "loop-a.jsonl")
    os.symlink(folder / "loop-a.jsonl", folder / "loop-b.jsonl")
    (folder / "folder.jsonl").mkdir()

    async def bounded(coro: Any) -> Any:
        return await asyncio.wait_for(coro, timeout=10)  # a blocked open would hang here

    listed = await bounded(repo.list())
    assert [m.id for m in listed] == [good.metadata.id]
    problems = {Path(p.path).name: p.reason for p in listed.problems}
    assert set(problems) == {"pipe.jsonl", "loop-a.jsonl", "loop-b.jsonl"}
    assert "FIFO" in problems["pipe.jsonl"] and "loops" in problems["loop-a.jsonl"]
    for name, code in (("pipe.jsonl", "invalid_session"), ("loop-a.jsonl", "invalid_session")):
        with pytest.raises(SessionError) as err:
            await bounded(repo.open(str(folder / name)))
        assert err.value.code == code
    with pytest.raises(SessionError) as err:
        await bounded(repo.open(str(folder / "folder.jsonl")))
    assert err.value.code == "not_found"
    index = SessionIndex(tmp_path / "index.sqlite", repo)
    try:
        report = await bounded(index.reconcile())
        assert report.added == (good.metadata.path,)
        assert [s.id for s in await index.sessions()] == [good.metadata.id]
        assert await bounded(index.update_file(folder / "pipe.jsonl")) is None
    finally:
        index.close()


# ------------------------------------------------------------------ 3. disks


@pytest.mark.parametrize("error", ["ENOSPC", "EIO", "EROFS"])
@pytest.mark.parametrize("kind", ["write", "fsync", "fsync_dir", "truncate", "open"])
@pytest.mark.asyncio
async def test_failed_quarantine_leaves_nothing_and_opens_read_only(
    tmp_path: Path, kind: str, error: str
) -> None:
    torn = b'{"type":"message","id":"e9","par'
    path = session_file(tmp_path, chain(3) + torn)
    before = path.read_bytes()
    ops = FaultyOps(only_under=str(tmp_path))
    # open #1 is the session file itself, #2 its append descriptor, #3 the sidecar.
    nth = {"open": 3, "write": 1, "fsync": 1, "fsync_dir": 1, "truncate": 1}[kind]
    ops.fault = Fault(kind, nth, error, forever=True)
    s = await JsonlSessionRepo(tmp_path, file_ops=ops).open(str(path))
    report = s.recovery
    assert report is not None and report.quarantine_error is not None
    assert s.read_only and "could not be set aside" in (s.read_only_reason or "")
    assert "could not be set aside" in report.describe()
    if kind == "fsync" and report.quarantine_path is not None:
        # The cut happened and its fsync failed: the tail is kept in the synced sidecar.
        assert Path(report.quarantine_path).read_bytes() == torn
    else:
        assert path.read_bytes() == before  # untouched
        assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no sidecar
    assert len(await s.get_entries()) == 3
    with pytest.raises(SessionWriteError) as err:
        await s.append_message(user("kept in memory"))
    assert err.value.code == "read_only"
    if report.quarantine_path is None:
        # The disk is fine again: retrying sets the tail aside and writes what was kept.
        ops.clear()
        assert await s.retry_persistence() == 1
        assert s.recovery is not None and s.recovery.quarantine_path is not None
        assert Path(s.recovery.quarantine_path).read_bytes() == torn
    await s.close()
    if report.quarantine_path is None:
        again = await JsonlSessionRepo(tmp_path).open(str(path))
        assert again.recovery is None and len(await again.get_entries()) == 4
        await again.close()


@pytest.mark.asyncio
async def test_read_only_file_system_opens_read_only_with_a_notice(tmp_path: Path) -> None:
    path = session_file(tmp_path, chain(2))
    ops = FaultyOps(only_under=str(tmp_path))
    ops.fault = Fault("open", 2, "EROFS", forever=True)  # the append descriptor
    s = await JsonlSessionRepo(tmp_path, file_ops=ops).open(str(path))
    assert s.read_only and s.recovery is None
    assert "read-only" in (s.read_only_reason or "") and "EROFS" in (s.read_only_reason or "")
    assert len((await s.build_context()).messages) == 2
    with pytest.raises(SessionWriteError) as err:
        await s.append_message(user("x"))
    assert err.value.code == "read_only" and err.value.pending_count == 1
    await s.close()


# ------------------------------------------------------------------ 4. one writer


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
@pytest.mark.asyncio
async def test_second_writer_through_another_name_is_refused(tmp_path: Path, how: str) -> None:
    repo = JsonlSessionRepo(tmp_path / "sessions")
    first = await repo.create(cwd=CWD)
    await first.append_message(user("a"))
    original = Path(first.metadata.path or "")
    other = tmp_path / "elsewhere" / "alias.jsonl"
    other.parent.mkdir()
    if how == "symlink":
        other.symlink_to(original)
    else:
        os.link(original, other)
    second = await JsonlSessionRepo(tmp_path / "elsewhere").open(str(other))
    assert second.read_only and second.get_storage().read_only_code == "locked"
    with pytest.raises(SessionWriteError) as err:
        await second.append_message(user("b"))
    assert err.value.code == "locked"
    await first.close()
    assert await second.retry_persistence() == 1  # the owner let go, file unchanged
    await second.close()
    names = sorted(p.name for p in original.parent.iterdir())
    assert names == [original.name]  # no .lock sidecar beside the file
    assert sorted(p.name for p in other.parent.iterdir()) == [other.name]
    again = await repo.open(first.metadata)
    assert [m.content[0].text for m in (await again.build_context()).messages] == ["a", "b"]  # type: ignore[union-attr]
    await again.close()


@pytest.mark.asyncio
async def test_legacy_lock_sidecar_is_ignored_and_trashed(tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path / "sessions")
    s = await repo.create(cwd=CWD)
    path = Path(s.metadata.path or "")
    await s.close()
    legacy = Path(str(path) + ".lock")
    legacy.write_bytes(b"")
    fcntl = pytest.importorskip("fcntl", reason="flock is POSIX-only")

    with legacy.open("rb") as held:  # an old version holding its sidecar lock
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        s = await repo.open(s.metadata)
        assert not s.read_only
        await s.close()
    await repo.delete(s.metadata)
    assert not legacy.exists()


# ------------------------------------------------------------------ 5. reordered pages


def _page_aligned_loss(good: bytes, unsynced: bytes, lost_pages: set[int]) -> bytes:
    """``good`` + ``unsynced`` with the given 4 KiB pages of the unsynced part zeroed."""
    data = bytearray(good + unsynced)
    start = len(good)
    for page in lost_pages:
        lo = max(start, page * 4096)
        hi = min(len(data), (page + 1) * 4096)
        if lo < hi:
            data[lo:hi] = b"\x00" * (hi - lo)
    return bytes(data)


@pytest.mark.asyncio
async def test_reordered_unsynced_pages_are_a_torn_tail(tmp_path: Path) -> None:
    good = header() + chain(3)
    big = "x" * 3000
    unsynced = b"".join(line(message(i, i - 1, big)) for i in range(4, 10))
    first_page = len(good) // 4096
    data = _page_aligned_loss(good, unsynced, {first_page, first_page + 1})
    assert data.endswith(b"\n") and data.count(b"\n") > 5  # later lines survived whole
    path = session_file(tmp_path, data[len(header()) :])
    s = await JsonlSessionRepo(tmp_path).open(str(path))
    assert not s.read_only, s.read_only_reason
    report = s.recovery
    assert report is not None and report.quarantine_path is not None
    assert Path(report.quarantine_path).read_bytes() == data[len(good) :]
    assert path.read_bytes() == good
    assert [m.content[0].text for m in (await s.build_context()).messages] == ["m1", "m2", "m3"]  # type: ignore[union-attr]
    await s.append_message(user("after the power cut"))
    await s.close()


@pytest.mark.asyncio
async def test_damaged_suffix_is_a_torn_tail(tmp_path: Path) -> None:
    path = session_file(tmp_path, chain(3) + b"garbage one\n\x00\x00\x00\ngarbage three\n")
    s = await JsonlSessionRepo(tmp_path).open(str(path))
    assert not s.read_only and s.recovery is not None and not s.recovery.damaged
    assert s.recovery.quarantined_bytes == len(b"garbage one\n\x00\x00\x00\ngarbage three\n")
    await s.close()


@pytest.mark.asyncio
async def test_flipped_byte_mid_file_stays_damage_and_context_is_the_readable_path(
    tmp_path: Path,
) -> None:
    lines = chain(4).split(b"\n")
    lines[1] = b"#" + lines[1][1:]  # e2 damaged; e3 and e4 descend from it
    path = session_file(tmp_path, b"\n".join(lines))
    before = digest(path)
    s = await JsonlSessionRepo(tmp_path).open(str(path))
    assert s.read_only and s.recovery is not None and s.recovery.damaged
    context = await s.build_context()  # strict: the readable part of the path
    assert [m.content[0].text for m in context.messages] == ["m3", "m4"]  # type: ignore[union-attr]
    await s.close()
    assert digest(path) == before


@pytest.mark.asyncio
async def test_missing_parent_without_damage_is_still_an_error(tmp_path: Path) -> None:
    path = session_file(tmp_path, line(message(2, 1)))
    s = await JsonlSessionRepo(tmp_path).open(str(path))
    with pytest.raises(SessionError) as err:
        await s.build_context()
    assert err.value.code == "invalid_session"
    await s.close()


def test_fault_layer_counts_only_watched_paths(tmp_path: Path) -> None:
    ops = FaultyOps(only_under=str(tmp_path / "a"))
    (tmp_path / "a").mkdir()
    fd = ops.open(str(tmp_path / "b"), os.O_WRONLY | os.O_CREAT)
    ops.write(fd, b"x")
    ops.close(fd)
    assert ops.calls == {}
    ops.fault = Fault("write", 1, "short")
    fd = ops.open(str(tmp_path / "a" / "f"), os.O_WRONLY | os.O_CREAT)
    assert ops.write(fd, b"abcd") == 2  # short
    with pytest.raises(OSError) as err:
        ops.write(fd, b"cd")
    assert err.value.errno == errno.ENOSPC
    ops.write_all(fd, b"ef")
    ops.close(fd)
    assert (tmp_path / "a" / "f").read_bytes() == b"abef"
