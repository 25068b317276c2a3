"""The "Pi sessions" source below the GUI (issue 13 item 6): the Pi CLI's folder beside
ours, listed and grouped by workspace like ours, the most recent one restored on its
leaf, opened and continued in place, or copied into our own folder.

Pi's folder is a temp dir holding files written the way the Pi CLI writes them (its
entries, its layout); tests/interop/test_pi_cli.py does the same with the real CLI.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import (
    JsonlSessionRepo,
    SessionError,
    SessionIndex,
    SessionSource,
    SessionSources,
    encode_cwd,
)


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def pi_file(folder: Path, cwd: str, session_id: str, minute: int, texts: list[str]) -> Path:
    """A session as the Pi CLI leaves it: header, model/thinking, then messages.

    ``minute`` >= 30 lies in the future (newer than anything this test run writes)."""
    day = "2099-01-01" if minute >= 30 else "2001-01-01"
    stamp = f"{day}T10:{minute:02d}:00.000Z"
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": session_id, "timestamp": stamp, "cwd": cwd},
        {
            "type": "model_change",
            "id": "m0000000",
            "parentId": None,
            "timestamp": stamp,
            "provider": "interop",
            "modelId": "local-test",
        },
    ]
    parent = "m0000000"
    for n, text in enumerate(texts):
        entry_id = f"e{n:07d}"
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": f"{day}T10:{minute:02d}:{n + 1:02d}.000Z",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": 1796122182520 + n,
                },
            }
        )
        parent = entry_id
    path = (
        folder / encode_cwd(cwd) / f"{stamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))
    return path


@pytest_asyncio.fixture
async def setup(tmp_path: Path) -> AsyncIterator[tuple[SessionSources, Path, Path]]:
    data = tmp_path / "data"
    pi_folder = tmp_path / "home" / ".pi" / "agent" / "sessions"
    ours_repo = JsonlSessionRepo(data / "sessions", str(data / "trash"))
    ours_index = SessionIndex(data / "index.sqlite", ours_repo)
    s = await ours_repo.create(cwd="/work/app")
    await s.append_message(user("our older question"))
    await s.close()
    pi_file(pi_folder, "/work/app", "01a2-pi-old", 1, ["pi old"])
    newest = pi_file(pi_folder, "/work/cli", "01a2-pi-new", 59, ["pi first", "pi newest"])
    sources = SessionSources.with_pi(
        SessionSource("desktop_agent", "Desktop Agent", ours_repo, ours_index),
        pi_folder,
        index_path=data / "pi-index.sqlite",
    )
    await sources.reconcile()
    yield sources, pi_folder, newest
    sources.close()
    ours_index.close()


@pytest.mark.asyncio
async def test_pi_sessions_are_listed_beside_ours_grouped_by_workspace(
    setup: tuple[SessionSources, Path, Path],
) -> None:
    sources, pi_folder, newest = setup
    groups = await sources.grouped()
    assert [g.cwd for g in groups] == ["/work/cli", "/work/app"]
    cli, app = groups
    assert [(s.kind, s.title) for s in cli.sessions] == [("pi", "pi first")]
    assert {(s.kind, s.title) for s in app.sessions} == {
        ("pi", "pi old"),
        ("desktop_agent", "our older question"),
    }
    assert cli.sessions[0].path == str(newest)
    found = await sources.sessions(query="newest")
    assert [s.id for s in found] == ["01a2-pi-new"]
    # Nothing was written into Pi's folder but the files (the index lives with our data).
    assert not any(p.name.endswith((".sqlite", "-wal")) for p in pi_folder.rglob("*"))


@pytest.mark.asyncio
async def test_the_most_recent_pi_session_is_restored_on_its_leaf(
    setup: tuple[SessionSources, Path, Path],
) -> None:
    """What ``--smoke`` restores once the sidebar is wired to these sources."""
    sources, _, newest = setup
    recent = await sources.most_recent()
    assert recent is not None and recent.kind == "pi" and recent.path == str(newest)
    assert (await sources.most_recent(workspace="/work/app")).cwd == "/work/app"  # type: ignore[union-attr]
    session = await sources.open(recent)
    try:
        assert session.leaf_id() == "e0000001" and not session.read_only
        # continued in place, the Pi CLI's way (parent = the leaf)
        added = await session.append_message(user("we continue"))
        assert (await session.get_entry(added)).parent_id == "e0000001"  # type: ignore[union-attr]
    finally:
        await session.close()
    assert json.loads(newest.read_text().splitlines()[-1])["id"] == added


@pytest.mark.asyncio
async def test_copy_into_desktop_agent(setup: tuple[SessionSources, Path, Path]) -> None:
    sources, _, newest = setup
    before = newest.read_bytes()
    copied = await sources.copy_into_ours(str(newest))
    assert copied.path is not None and sources.source_of(copied.path) is sources.ours
    assert copied.id != "01a2-pi-new" and copied.parent_session_path == str(newest)
    assert newest.read_bytes() == before
    copy = await sources.open(copied.path)
    try:
        assert [e.id for e in await copy.get_entries()] == ["m0000000", "e0000000", "e0000001"]
        assert copy.leaf_id() == "e0000001"
    finally:
        await copy.close()
    ours = [s for s in await sources.sessions() if s.kind == "desktop_agent"]
    assert copied.path in {s.path for s in ours}  # indexed at once
    with pytest.raises(SessionError) as err:
        await sources.copy_into_ours(copied.path)
    assert err.value.code == "invalid_argument"


@pytest.mark.asyncio
async def test_a_legacy_pi_session_copies_into_v3(tmp_path: Path) -> None:
    pi_folder = tmp_path / "pi"
    path = pi_folder / encode_cwd("/w") / "old_v1.jsonl"
    path.parent.mkdir(parents=True)
    header = {"type": "session", "id": "v1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}
    entry = {
        "type": "message",
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "old", "timestamp": 1},
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps(entry) + "\n")
    ours = SessionSource("desktop_agent", "Desktop Agent", JsonlSessionRepo(tmp_path / "s"))
    sources = SessionSources.with_pi(ours, pi_folder)
    [item] = [s for s in await sources.sessions() if s.kind == "pi"]
    view = await sources.open(item)
    assert view.read_only and view.format_version == 1
    await view.close()
    copied = await sources.copy_into_ours(item)
    copy = await sources.open(str(copied.path))
    assert copy.format_version == 3 and not copy.read_only
    assert len(await copy.get_entries()) == 1
    await copy.close()


def test_the_same_folder_twice_is_one_source(tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path / "s")
    ours = SessionSource("desktop_agent", "Desktop Agent", repo)
    assert len(SessionSources.with_pi(ours, tmp_path / "s").sources) == 1
    assert len(SessionSources.with_pi(ours, None).sources) == 1
    with pytest.raises(ValueError, match="first session source"):
        SessionSources([SessionSource("pi", "Pi", repo)])


@pytest.mark.asyncio
async def test_without_an_index_the_source_lists_from_headers(tmp_path: Path) -> None:
    pi_folder = tmp_path / "pi"
    pi_file(pi_folder, "/w", "only", 5, ["x"])
    os.utime(pi_folder, (time.time(), time.time()))
    ours = SessionSource("desktop_agent", "Desktop Agent", JsonlSessionRepo(tmp_path / "s"))
    sources = SessionSources.with_pi(ours, pi_folder)
    [item] = await sources.sessions()
    assert (item.kind, item.id, item.cwd) == ("pi", "only", "/w")
    assert await sources.sessions(query="x") == []
