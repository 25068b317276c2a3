"""What the session stores list, with one rule each for a session's title
(`session_title`: its name, else its first prompt, else "New session") and for a title
search (`text_matches`: every word, case and accents ignored): the JSONL store with its
index, without it (its fallback reads the files), and the SQLite store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_agent.session import (
    JsonlSessionRepo,
    SessionIndex,
    SqliteSessionRepo,
    encode_cwd,
)
from desktop_agent.workbench import JsonlStore, SessionStore, SqliteStore
from tests.helpers.workbench import answer, user

PROMPT = "  Where is the   Café Zürich?\n" + "x" * 300


async def fill_store(store: SessionStore) -> None:
    """Three sessions: a named one, one with a long first prompt, an empty one."""
    named = await store.create("/w/a")
    await named.append_message(user("a prompt", 1))
    await named.append_session_name("Release notes")
    await named.close()
    asked = await store.create("/w/b")
    await asked.append_message(user(PROMPT, 1))
    await asked.append_message(answer("over there", 2))
    await asked.close()
    empty = await store.create("/w/c")
    await empty.close()


async def titles(store: SessionStore, query: str | None = None) -> set[str]:
    return {r.title for r in await store.sessions(query)}


@pytest.mark.parametrize("kind", ["indexed", "files", "sqlite"])
@pytest.mark.asyncio
async def test_every_store_titles_and_searches_titles_alike(tmp_path: Path, kind: str) -> None:
    store: SessionStore
    if kind == "sqlite":
        store = SqliteStore(SqliteSessionRepo(tmp_path / "s.sqlite"), tmp_path / "trash.json")
    else:
        repo = JsonlSessionRepo(tmp_path / "sessions", str(tmp_path / "trash"))
        index = SessionIndex(tmp_path / "index.sqlite", repo) if kind == "indexed" else None
        store = JsonlStore(repo, index)
    await store.start()
    await fill_store(store)
    await store.start()
    first = " ".join(PROMPT.split())
    long_title = first[:199].rstrip() + "…"
    try:
        assert await titles(store) == {"Release notes", long_title, "New session"}
        rows = await store.sessions()
        assert [r.last_activity for r in rows] == sorted(
            (r.last_activity for r in rows), reverse=True
        )
        assert await titles(store, "cafe ZURICH") == {long_title}
        assert await titles(store, "notes release") == {"Release notes"}
        assert await titles(store, "   ") == await titles(store)
    finally:
        await store.close()


@pytest.mark.parametrize("kind", ["indexed", "sqlite"])
@pytest.mark.asyncio
async def test_m6_every_store_finds_a_session_by_its_text_and_says_where(
    tmp_path: Path, kind: str
) -> None:
    """A search finds a session by the words of its prompts and replies too, each word as
    the start of a word and all of them required, and says where on the row (the snippet
    the list shows on a second line); a title-only hit has none. The SQLite store searched
    titles only."""
    store: SessionStore
    if kind == "sqlite":
        store = SqliteStore(SqliteSessionRepo(tmp_path / "s.sqlite"), tmp_path / "trash.json")
    else:
        repo = JsonlSessionRepo(tmp_path / "sessions", str(tmp_path / "trash"))
        store = JsonlStore(repo, SessionIndex(tmp_path / "index.sqlite", repo))
    await store.start()
    await fill_store(store)
    talk = await store.create("/w/d")
    await talk.append_message(user("How do I add two numbers?", 1))
    await talk.append_message(answer("Use the calculator module: calc.add(2, 3) gives 5.", 2))
    await talk.append_message(user("Und die Straße?", 3))
    await talk.close()
    await store.start()
    try:
        found = {r.title: r.snippet for r in await store.sessions("calculat numbers")}
        assert list(found) == ["How do I add two numbers?"]
        assert "calculator module" in found["How do I add two numbers?"]
        assert await titles(store, "calculator zebra") == set()  # every word is needed
        assert await titles(store, "ulator") == set()  # the start of a word, not its middle
        assert await titles(store, "straße") == {"How do I add two numbers?"}
        over = {r.title: r.snippet for r in await store.sessions("over")}
        assert "over there" in over[" ".join(PROMPT.split())[:199].rstrip() + "…"]
        release = {r.title: r.snippet for r in await store.sessions("release")}
        assert release == {"Release notes": ""}  # found by its title: no snippet
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_without_its_index_the_jsonl_store_lists_another_programs_files(
    tmp_path: Path,
) -> None:
    """The Pi CLI's folder with no index (it could not be opened): the files are read."""
    folder = tmp_path / "pi"
    path = folder / encode_cwd("/w") / "2001-01-01T10-05-00-000Z_only.jsonl"
    path.parent.mkdir(parents=True)
    lines = [
        {"type": "session", "version": 3, "id": "only", "timestamp": "2001-01-01T10:05:00.000Z"}
        | {"cwd": "/w"},
        {
            "type": "message",
            "id": "e0000000",
            "parentId": None,
            "timestamp": "2001-01-01T10:06:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "x"}]}
            | {"timestamp": 1},
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    store = JsonlStore(JsonlSessionRepo(folder), None, source="pi")
    [row] = await store.sessions()
    assert (row.id, row.cwd, row.title, row.source) == ("only", "/w", "x", "pi")
    assert row.last_activity == "2001-01-01T10:06:00.000Z" and row.message_count == 1
    assert await store.sessions(query="y") == []
    with path.open("a") as fh:  # read again once the file changed
        fh.write(json.dumps({"type": "session_info", "id": "n1", "parentId": "e0000000"}) + "\n")
    [row] = await store.sessions()
    assert row.title == "x"  # (a session_info without a name names nothing)


@pytest.mark.asyncio
async def test_a_legacy_session_copies_into_ours_as_v3(tmp_path: Path) -> None:
    """ "Copy into Desktop Agent" of a v1 file of the Pi CLI: every entry, in the current
    format, the original untouched."""
    path = tmp_path / "pi" / encode_cwd("/w") / "old_v1.jsonl"
    path.parent.mkdir(parents=True)
    header = {"type": "session", "id": "v1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}
    entry = {
        "type": "message",
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "old", "timestamp": 1},
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps(entry) + "\n")
    before = path.read_bytes()
    store = JsonlStore(JsonlSessionRepo(tmp_path / "sessions"), None)
    ref = await store.copy_in(str(path))
    copy = await store.open(ref)
    try:
        assert copy.format_version == 3 and not copy.read_only
        assert len(await copy.get_entries()) == 1
    finally:
        await copy.close()
    assert path.read_bytes() == before
    [row] = await store.sessions()
    assert (row.path, row.title, row.cwd) == (ref, "old", "/w")
