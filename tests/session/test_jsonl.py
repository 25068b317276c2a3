"""JSONL-only behaviour: header checks, torn tails, mid-file damage, locks, trash, faults."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import (
    JsonlSessionRepo,
    SessionError,
    SessionMetadata,
    SessionWriteError,
    encode_cwd,
)
from desktop_agent.session._platform import OS_FILE_OPS
from tests.session._faults import Fault, FaultyOps

CWD = "/home/demo/project"
HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def entry(i: int, parent: int | None) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"e{i}",
        "parentId": f"e{parent}" if parent is not None else None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": f"m{i} ü"}],
            "timestamp": i,
        },
    }


def write_session(tmp_path: Path, body: bytes, header: dict[str, Any] | None = None) -> Path:
    folder = tmp_path / "sessions" / encode_cwd(CWD)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "2026-01-01T00-00-00-000Z_s1.jsonl"
    head = line({**HEADER, "cwd": CWD} if header is None else header)
    path.write_bytes(head + body)
    return path


def three_entries() -> bytes:
    return line(entry(1, None)) + line(entry(2, 1)) + line(entry(3, 2))


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def meta(path: Path) -> SessionMetadata:
    return SessionMetadata(id="s1", created_at="", path=str(path))


# ------------------------------------------------------------------ header checks


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "missing session header"),
        (b"\n\n  \n", "missing session header"),
        (b'{"type":"session","version":"3","id":"a","timestamp":"t","cwd":"c"}\n', "version"),
        (b'{"type":"session","version":4,"id":"a","timestamp":"t","cwd":"c"}\n', "version"),
        (b'{"type":"session","version":true,"id":"a","timestamp":"t","cwd":"c"}\n', "version"),
        # v1 (no version) and v2 open read-only (tests/session/test_legacy.py), but not
        # without their id
        (b'{"type":"session","version":2,"timestamp":"t","cwd":"c"}\n', "missing id"),
        (b'{"type":"session","id":"a","cwd":"c"}\n', "missing timestamp"),
        (b'{"type":"session","version":3,"id":"a","timestamp":"t","cwd":""}\n', "missing cwd"),
        (b'{"type":"session","version":3,"id":"","timestamp":"t","cwd":"c"}\n', "missing id"),
        (
            b'{"type":"session","version":3,"id":"a","timestamp":"t","cwd":"c","parentSession":null}\n',
            "parentSession must be a string",
        ),
        (b"[1,2]\n", "not a valid session header"),
        (b"garbage\n", "not a valid session header"),
    ],
)
@pytest.mark.asyncio
async def test_bad_headers_are_rejected_and_file_untouched(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(SessionError) as err:
        await JsonlSessionRepo(tmp_path).open(meta(path))
    assert err.value.code == "invalid_session"
    assert message in err.value.message
    assert path.read_bytes() == content


@pytest.mark.asyncio
async def test_missing_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(SessionError) as err:
        await JsonlSessionRepo(tmp_path).open(meta(tmp_path / "nope.jsonl"))
    assert err.value.code == "not_found"


@pytest.mark.asyncio
async def test_blank_lines_crlf_and_extra_header_keys(tmp_path: Path) -> None:  # 121, 123
    header = {**HEADER, "cwd": CWD, "metadata": {"a": 1}, "provider": "x"}
    body = b"\n" + line(entry(1, None)).replace(b"\n", b"\r\n") + b"\n  \n" + line(entry(2, 1))
    path = write_session(tmp_path, body, header)
    s = await JsonlSessionRepo(tmp_path).open(meta(path))
    assert [m.role for m in (await s.build_context()).messages] == ["user", "user"]
    assert s.metadata.metadata == {"a": 1} and s.recovery is None
    await s.close()


@pytest.mark.asyncio
async def test_pi_edge_semantics(tmp_path: Path) -> None:  # 126-131
    unknown = {"type": "active_tools_x", "id": "u1", "parentId": "e1", "timestamp": "t"}
    dup = {**entry(9, 1), "id": "e2"}
    path = write_session(
        tmp_path, line(entry(1, None)) + line(entry(2, 1)) + line(dup) + line(unknown)
    )
    s = await JsonlSessionRepo(tmp_path).open(meta(path))
    assert await s.get_leaf_id() == "u1"
    assert len(await s.get_entries()) == 4
    got = await s.get_entry("e2")
    assert got is not None and got.message.timestamp == 9  # type: ignore[union-attr]
    await s.close()


@pytest.mark.asyncio
async def test_parent_cycle_is_an_error_not_a_hang(tmp_path: Path) -> None:
    a = {**entry(1, 2)}
    b = {**entry(2, 1)}
    path = write_session(tmp_path, line(a) + line(b))
    s = await JsonlSessionRepo(tmp_path).open(meta(path))
    with pytest.raises(SessionError) as err:
        await s.build_context()
    assert err.value.code == "invalid_session" and "cycle" in err.value.message
    await s.close()


@pytest.mark.asyncio
async def test_missing_parent_and_unknown_leaf(tmp_path: Path) -> None:  # 127, 128
    path = write_session(tmp_path, line(entry(2, 1)))
    s = await JsonlSessionRepo(tmp_path).open(meta(path))
    with pytest.raises(SessionError) as err:
        await s.build_context()
    assert err.value.code == "invalid_session"
    await s.close()
    leaf = {"type": "leaf", "id": "l1", "parentId": None, "timestamp": "t", "targetId": "zz"}
    path = write_session(tmp_path, line(entry(1, None)) + line(leaf))
    s = await JsonlSessionRepo(tmp_path).open(meta(path))
    with pytest.raises(SessionError):
        await s.get_leaf_id()
    await s.close()


# ------------------------------------------------------------------ torn tails


TORN_TAILS = {
    "cut json": b'{"type":"message","id":"e4","par',
    "missing newline": line(entry(4, 3)).rstrip(b"\n"),
    "nul run": b"\x00" * 4096,
    "nul run with newline": b"\x00" * 700 + b"\n",
    "half utf8": line(entry(4, 3))[:-12] + "ü".encode()[:1],
    "garbage line": b"\xff\xfe garbage \x01\n",
    "spaces only": b"   ",
}


@pytest.mark.parametrize("name", sorted(TORN_TAILS))
@pytest.mark.asyncio
async def test_torn_tail_is_quarantined(tmp_path: Path, name: str) -> None:
    tail = TORN_TAILS[name]
    path = write_session(tmp_path, three_entries() + tail)
    good = path.read_bytes()[: -len(tail)]
    repo = JsonlSessionRepo(tmp_path)
    s = await repo.open(meta(path))
    assert len(await s.get_entries()) == 3
    report = s.recovery
    assert report is not None and report.quarantined_bytes == len(tail)
    assert report.quarantine_path is not None
    assert Path(report.quarantine_path).read_bytes() == tail
    assert path.read_bytes() == good and path.read_bytes().endswith(b"\n")
    assert not s.read_only
    await s.append_message(user("next"))
    await s.close()
    again = await repo.open(meta(path))
    assert len(await again.get_entries()) == 4 and again.recovery is None
    assert [m.role for m in (await again.build_context()).messages] == ["user"] * 4
    await again.close()


@pytest.mark.asyncio
async def test_header_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(line({**HEADER, "cwd": CWD}).rstrip(b"\n"))
    s = await JsonlSessionRepo(tmp_path).open(meta(path))
    await s.append_message(user("x"))
    await s.close()
    lines = path.read_bytes().split(b"\n")
    assert json.loads(lines[0])["type"] == "session" and json.loads(lines[1])["type"] == "message"


# ------------------------------------------------------------------ mid-file damage


DAMAGE = {
    "flipped byte": lambda lines: [lines[0], b"#" + lines[1][1:], *lines[2:]],
    "cut line": lambda lines: [lines[0], lines[1][:20], *lines[2:]],
    "nul run": lambda lines: [lines[0], b"\x00" * 300, *lines[1:]],
    "array line": lambda lines: [lines[0], b"[1,2]", *lines[1:]],
    "no parentId": lambda lines: [lines[0], b'{"type":"x","id":"q","timestamp":"t"}', *lines[1:]],
}


@pytest.mark.parametrize("name", sorted(DAMAGE))
@pytest.mark.asyncio
async def test_mid_file_damage_opens_read_only_and_never_writes(tmp_path: Path, name: str) -> None:
    lines = [line(entry(i, i - 1 if i > 1 else None)).rstrip(b"\n") for i in range(1, 5)]
    damaged = DAMAGE[name](lines)
    path = write_session(tmp_path, b"\n".join(damaged) + b"\n")
    before = sha(path)
    repo = JsonlSessionRepo(tmp_path)
    s = await repo.open(meta(path))
    assert s.read_only and s.recovery is not None and s.recovery.damaged
    assert s.recovery.damaged_lines[0].line_number in (2, 3)
    readable = len(await s.get_entries())
    assert readable >= 3  # entries after the damage are still read
    with pytest.raises(SessionError) as err:
        await s.append_message(user("x"))
    assert err.value.code == "read_only"
    await s.close()
    assert sha(path) == before
    repaired = await repo.repair(meta(path))
    assert sha(path) == before
    fixed = await repo.open(repaired)
    assert fixed.recovery is None and not fixed.read_only
    assert len(await fixed.get_entries()) == readable
    await fixed.close()


# ------------------------------------------------------------------ locks


@pytest.mark.asyncio
async def test_second_opener_is_read_only(tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path)
    first = await repo.create(cwd=CWD)
    await first.append_message(user("a"))
    second = await repo.open(first.metadata)
    assert second.read_only
    with pytest.raises(SessionWriteError) as err:
        await second.append_message(user("b"))
    assert err.value.code == "locked" and err.value.pending_count == 1
    assert len(await second.get_entries()) == 2  # kept in memory, not written
    with pytest.raises(SessionError) as err2:
        await repo.delete(first.metadata)
    assert err2.value.code == "locked"
    with pytest.raises(SessionWriteError):
        await second.retry_persistence()  # still locked
    await first.close()
    assert await second.retry_persistence() == 1  # the owner let go: ours now
    assert second.read_only_reason is None
    await second.close()
    third = await repo.open(first.metadata)
    assert not third.read_only
    assert [e.id for e in await third.get_entries()] == [e.id for e in await second.get_entries()]
    await third.close()


@pytest.mark.asyncio
async def test_locked_session_that_changed_stays_read_only(tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path)
    first = await repo.create(cwd=CWD)
    second = await repo.open(first.metadata)
    with pytest.raises(SessionWriteError):
        await second.append_message(user("mine"))
    await first.append_message(user("theirs"))
    await first.close()
    with pytest.raises(SessionWriteError) as err:
        await second.retry_persistence()
    assert err.value.code == "changed_on_disk" and "changed" in err.value.message
    copy = tmp_path / "copy.jsonl"
    await second.save_copy(str(copy))
    saved = await repo.open(str(copy))
    assert len(await saved.get_entries()) == 1
    await saved.close()
    # Reloading takes the other window's entry in and keeps ours as a branch (issue 13).
    report = await second.reload_from_disk()
    assert len(report.taken_in) == 1 and len(report.kept) == 1
    assert not second.read_only and second.pending_count == 0
    await second.close()
    reopened = await repo.open(first.metadata)
    assert [e.type for e in await reopened.get_entries()] == ["message", "message", "leaf"]
    await reopened.close()


CHILD_HOLD = """
import asyncio, sys
from desktop_agent.session import JsonlSessionRepo
async def main():
    s = await JsonlSessionRepo(sys.argv[1]).open(sys.argv[2])
    print("locked" if s.read_only else "owner", flush=True)
    sys.stdin.readline()
asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.asyncio
async def test_other_process_gets_read_only_and_lock_is_freed_by_kill(tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path / "s")
    s = await repo.create(cwd=CWD)
    path = s.metadata.path or ""
    await s.close()
    with subprocess.Popen(
        [sys.executable, "-c", CHILD_HOLD, str(tmp_path / "s"), path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as owner:
        try:
            assert owner.stdout is not None and owner.stdout.readline().strip() == "owner"
            mine = await repo.open(s.metadata)
            assert mine.read_only
            await mine.close()
        finally:
            owner.kill()
            owner.wait()
    mine = await repo.open(s.metadata)
    assert not mine.read_only
    await mine.close()


# ------------------------------------------------------------------ list, trash, ids


@pytest.mark.asyncio
async def test_list_skips_and_reports_unreadable(tmp_path: Path) -> None:  # 136
    repo = JsonlSessionRepo(tmp_path / "sessions")
    good = await repo.create(cwd=CWD)
    await good.close()
    folder = tmp_path / "sessions" / encode_cwd(CWD)
    (folder / "bad.jsonl").write_bytes(b'{"type":"session","version":2}\n')
    (folder / "blank.jsonl").write_bytes(b"\n" + line({**HEADER, "cwd": CWD}))
    (folder / "notes.txt").write_text("x")
    (folder / "dir.jsonl").mkdir()
    (tmp_path / "sessions" / "top.jsonl").write_bytes(line({**HEADER, "cwd": CWD}))
    result = await repo.list()
    assert [m.id for m in result] == [good.metadata.id]
    assert {Path(p.path).name for p in result.problems} == {"bad.jsonl", "blank.jsonl"}
    assert await JsonlSessionRepo(tmp_path / "missing").list() == []


@pytest.mark.asyncio
async def test_list_newest_first_and_by_cwd(tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path)
    made = []
    for cwd in ("/a", "/b", "/a"):
        s = await repo.create(cwd=cwd)
        made.append(s.metadata.id)
        await s.close()
    assert [m.id for m in await repo.list()] == list(reversed(made))
    assert [m.id for m in await repo.list(cwd="/a")] == [made[2], made[0]]
    assert encode_cwd("C:\\Users\\me\\proj") == "--C--Users-me-proj--"


@pytest.mark.asyncio
async def test_delete_moves_to_trash_and_restore(tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path / "sessions")
    s = await repo.create(cwd=CWD)
    await s.append_message(user("keep me"))
    metadata = s.metadata
    await s.close()
    item = await repo.delete(metadata)
    assert item is not None and not Path(metadata.path or "").exists()
    assert Path(item.trash_path).is_relative_to(tmp_path / "trash")
    assert [t.session_id for t in await repo.list_trash()] == [metadata.id]
    assert await repo.list() == []
    restored = await repo.restore(item)
    again = await repo.open(restored)
    assert [m.role for m in (await again.build_context()).messages] == ["user"]
    await again.close()
    assert await repo.list_trash() == []


@pytest.mark.parametrize(
    "bad_id",
    ["../x", "..", "a/b", "a\\b", "/abs", "C:x", "nul", "CON.txt", "x\x00y", "a" * 300, ".hidden"],
)
@pytest.mark.asyncio
async def test_hostile_session_ids_refused(tmp_path: Path, bad_id: str) -> None:
    repo = JsonlSessionRepo(tmp_path / "sessions")
    with pytest.raises(SessionError) as err:
        await repo.create(cwd=CWD, id=bad_id)
    assert err.value.code == "invalid_argument"
    assert not (tmp_path / "x").exists() and list(tmp_path.glob("*")) == []


# ------------------------------------------------------------------ disk failures


@pytest.mark.parametrize("err", ["ENOSPC", "EIO", "EACCES", "EROFS", "short"])
@pytest.mark.asyncio
async def test_write_failure_keeps_entries_and_retry_writes_exactly_once(
    tmp_path: Path, err: str
) -> None:
    ops = FaultyOps()
    repo = JsonlSessionRepo(tmp_path, file_ops=ops)
    s = await repo.create(cwd=CWD)
    await s.append_message(user("before"))
    ops.calls.clear()
    ops.fault = Fault("write", 1, err, forever=True)
    with pytest.raises(SessionWriteError) as failure:
        await s.append_message(user("during 1"))
    assert failure.value.pending_count == 1 and failure.value.os_error is not None
    assert "Nothing is lost yet" in failure.value.message
    with pytest.raises(SessionWriteError) as failure:
        await s.append_message(user("during 2"))
    assert failure.value.pending_count == 2
    assert s.pending_count == 2
    assert len((await s.build_context()).messages) == 3  # memory has everything
    on_disk = (Path(s.metadata.path or "")).read_bytes()
    assert on_disk.endswith(b"\n") and on_disk.count(b"\n") == 2  # no partial line left
    ops.clear()
    assert await s.retry_persistence() == 2
    await s.append_message(user("after"))
    await s.close()
    again = await repo.open(s.metadata)
    texts = [m.content[0].text for m in (await again.build_context()).messages]  # type: ignore[union-attr]
    assert texts == ["before", "during 1", "during 2", "after"]
    await again.close()


@pytest.mark.asyncio
async def test_fsync_failure_rewrites_file_on_retry(tmp_path: Path) -> None:
    ops = FaultyOps()
    repo = JsonlSessionRepo(tmp_path, file_ops=ops)
    s = await repo.create(cwd=CWD)
    await s.append_message(user("one"))
    ops.calls.clear()
    ops.fault = Fault("fsync", 1, "EIO", forever=True)
    with pytest.raises(SessionWriteError) as failure:
        await s.sync()
    assert failure.value.operation == "sync"
    ops.clear()
    await s.append_message(user("two"))
    await s.retry_persistence()
    await s.close()
    again = await repo.open(s.metadata)
    assert len(await again.get_entries()) == 2
    await again.close()
    assert sorted(p.name for p in Path(s.metadata.path or "").parent.iterdir()) == [
        Path(s.metadata.path or "").name
    ]  # no temp file, no lock sidecar


@pytest.mark.asyncio
async def test_deleted_file_is_not_recreated(tmp_path: Path) -> None:  # A9, R18
    repo = JsonlSessionRepo(tmp_path)
    s = await repo.create(cwd=CWD)
    await s.append_message(user("one"))
    path = Path(s.metadata.path or "")
    path.unlink()
    with pytest.raises(SessionWriteError):
        await s.append_message(user("two"))
    assert not path.exists()
    copy = tmp_path / "rescued.jsonl"
    await s.save_copy(str(copy))
    rescued = await repo.open(str(copy))
    assert len(await rescued.get_entries()) == 2
    await rescued.close()
    s.get_storage().force_close()


@pytest.mark.asyncio
async def test_real_enospc_from_dev_full() -> None:
    """The writer's whole-line write loop reports a real ENOSPC (not a short count)."""
    if not Path("/dev/full").exists():
        pytest.fail("/dev/full is required for this test on Linux")
    fd = os.open("/dev/full", os.O_WRONLY)
    try:
        with pytest.raises(OSError) as err:
            OS_FILE_OPS.write_all(fd, b"data\n")
        assert err.value.errno == errno.ENOSPC
    finally:
        os.close(fd)
