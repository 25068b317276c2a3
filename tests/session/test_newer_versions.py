"""Files a newer Desktop Agent wrote (issue 10 item 5): sessions open read-only and are
never rewritten; a newer session index or entry index is not used and not overwritten."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path

import msgspec
import pytest

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import (
    InMemorySessionRepo,
    JsonlSessionRepo,
    SessionError,
    SessionIndex,
    SessionWriteError,
    SqliteSessionRepo,
)
from desktop_agent.session._entryindex import MAGIC
from desktop_agent.utils.versions import APP_VERSION, header_stamp

NEWER = "99.1.0"


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def set_header_version(path: Path, version: str) -> bytes:
    """Rewrite the header's ``metadata.desktopAgent.version``; returns the new bytes."""
    lines = path.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    header["metadata"]["desktopAgent"]["version"] = version
    lines[0] = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    data = b"\n".join(lines)
    path.write_bytes(data)
    return data


async def seeded(tmp_path: Path) -> tuple[JsonlSessionRepo, Path]:
    repo = JsonlSessionRepo(tmp_path / "sessions", entry_index_dir=tmp_path / "cache" / "entries")
    session = await repo.create(cwd=str(tmp_path), metadata={"title": "T"})
    await session.append_message(user("hello"))
    await session.close()
    assert session.metadata.path is not None
    return repo, Path(session.metadata.path)


@pytest.mark.asyncio
async def test_new_headers_carry_the_app_version(tmp_path: Path) -> None:
    _, path = await seeded(tmp_path)
    header = json.loads(path.read_bytes().split(b"\n")[0])
    assert header["metadata"] == {"title": "T", "desktopAgent": {"version": APP_VERSION}}
    assert header["version"] == 3 and header["type"] == "session"
    memory = await InMemorySessionRepo().create(cwd="/w")
    assert memory.metadata.metadata == header_stamp()
    sqlite_repo = SqliteSessionRepo(tmp_path / "s.sqlite")
    s = await sqlite_repo.create(cwd="/w")
    assert s.metadata.metadata == header_stamp()
    await s.close()
    await sqlite_repo.close()


@pytest.mark.asyncio
async def test_a_session_from_a_newer_version_opens_read_only_and_is_never_written(
    tmp_path: Path,
) -> None:
    repo, path = await seeded(tmp_path)
    data = set_header_version(path, NEWER) + b'{"type":"mess'  # and a torn last line
    path.write_bytes(data)
    session = await repo.open(str(path))
    try:
        assert session.read_only and session.written_by_newer_app
        reason = session.read_only_reason or ""
        assert NEWER in reason and APP_VERSION in reason and "newer" in reason
        assert [e.type for e in await session.get_entries()] == ["message"]
        with pytest.raises(SessionWriteError) as err:
            await session.append_message(user("more"))
        assert err.value.code == "read_only"
        assert "newer" in err.value.message
        with pytest.raises(SessionError):
            await session.reload_from_disk()
    finally:
        session.get_storage().force_close()  # the refused entry is only in memory
    assert path.read_bytes() == data  # the torn tail is not even set aside
    assert not list(path.parent.glob("*.corrupt-*"))
    # an older version's file opens as usual
    set_header_version(path, "0.0.1")
    path.write_bytes(path.read_bytes()[: -len(b'{"type":"mess')])
    again = await repo.open(str(path))
    assert not again.read_only, again.read_only_reason
    assert not again.written_by_newer_app
    await again.close()


@pytest.mark.asyncio
async def test_a_sqlite_session_from_a_newer_version_is_read_only(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    repo = SqliteSessionRepo(db)
    s = await repo.create(cwd="/w")
    await s.append_message(user("hello"))
    await s.close()
    await repo.close()
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE sessions SET metadata = ?", (json.dumps({"desktopAgent": {"version": NEWER}}),)
    )
    conn.commit()
    before = conn.execute("SELECT count(*) FROM entries").fetchone()
    conn.close()
    repo = SqliteSessionRepo(db)
    (meta,) = await repo.list()
    session = await repo.open(meta)
    assert session.read_only and session.written_by_newer_app
    with pytest.raises(SessionWriteError):
        await session.append_message(user("more"))
    await session.close()
    await repo.close()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM entries").fetchone() == before
    conn.close()


@pytest.mark.asyncio
async def test_a_newer_session_index_is_left_untouched(tmp_path: Path) -> None:
    repo, path = await seeded(tmp_path)
    index_path = tmp_path / "index.sqlite"
    conn = sqlite3.connect(index_path)
    conn.execute("CREATE TABLE future (x)")
    conn.execute("INSERT INTO future VALUES ('kept')")
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    conn.close()
    data = index_path.read_bytes()
    index = SessionIndex(index_path, repo)
    try:
        await index.reconcile()
        listed = await index.sessions()
        assert [s.path for s in listed] == [str(path)]  # the app still works (in memory)
        assert index.newer_schema == 7
    finally:
        index.close()
    assert index_path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.glob("index.sqlite*")) == ["index.sqlite"]


def _entry_index_file(folder: Path) -> Path:
    (only,) = list(folder.glob("*.idx"))
    return only


@pytest.mark.asyncio
async def test_a_newer_entry_index_is_not_used_and_not_overwritten(tmp_path: Path) -> None:
    repo, path = await seeded(tmp_path)
    s = await repo.open(str(path))  # writes our entry index at close
    await s.append_message(user("second"))
    await s.close()
    idx = _entry_index_file(tmp_path / "cache" / "entries")
    body = msgspec.msgpack.encode([99, "a format from the future", {"x": 1}])
    newer = MAGIC + zlib.crc32(body).to_bytes(4, "little") + body
    idx.write_bytes(newer)
    repo = JsonlSessionRepo(tmp_path / "sessions", entry_index_dir=tmp_path / "cache" / "entries")
    session = await repo.open(str(path))
    try:
        assert not session.read_only
        assert len(await session.get_entries()) == 2  # read from the file itself
        await session.append_message(user("third"))
    finally:
        await session.close()
    assert idx.read_bytes() == newer
