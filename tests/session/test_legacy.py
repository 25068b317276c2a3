"""v1 and v2 session files (older Pi formats): read-only through an in-memory migration
that gives what the Pi CLI's migration gives, never rewritten; "Convert to the current
format" writes a v3 file beside them (issue 13 item 3).

The interop suite checks the same files against the real CLI's ``migrateSessionEntries``
(tests/interop/test_pi_cli.py); these tests pin the rules with hand-written files.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import AssistantMessage, CustomMessage, TextContent, UserMessage
from desktop_agent.session import (
    CompactionEntry,
    JsonlSessionRepo,
    SessionError,
    SessionIndex,
    SessionWriteError,
)
from desktop_agent.utils.versions import header_stamp
from tests.helpers.pi_files import CWD, V1_HEADER, place, v1_file, v2_file


def texts(messages: Sequence[Any]) -> list[tuple[str, str]]:
    out = []
    for m in messages:
        if isinstance(m, UserMessage | AssistantMessage | CustomMessage):
            content = m.content
            text = (
                content
                if isinstance(content, str)
                else "".join(b.text for b in content if isinstance(b, TextContent))
            )
        else:
            text = getattr(m, "summary", "")
        out.append((m.role, text))
    return out


@pytest.mark.asyncio
async def test_v1_opens_read_only_with_pis_migration(tmp_path: Path) -> None:
    data = v1_file()
    path = place(tmp_path, "2025-12-09T00-53-29-825Z_ffae836b.jsonl", data)
    repo = JsonlSessionRepo(tmp_path)
    session = await repo.open(str(path))
    try:
        assert session.format_version == 1 and session.read_only
        assert "older Pi format (version 1)" in (session.read_only_reason or "")
        assert session.recovery is None
        entries = await session.get_entries()
        ids = [e.id for e in entries]
        assert len(set(ids)) == 7 and all(len(i) == 8 for i in ids)
        assert [e.parent_id for e in entries] == [None, *ids[:-1]]  # one linear chain
        compaction = entries[4]
        assert isinstance(compaction, CompactionEntry)
        assert compaction.first_kept_entry_id == ids[2]  # line index 3 = third entry
        assert "firstKeptEntryIndex" not in (compaction.model_extra or {})
        context = await session.build_context()
        assert texts(context.messages) == [
            ("compactionSummary", "## Goal\nAnswer questions."),
            ("user", "second question"),
            ("assistant", "second answer"),
            ("user", "third question"),
            ("assistant", "third answer"),
        ]
        assert context.model is not None and context.model.model_id == "claude-opus-4-5"
        # usage without totalTokens: computed (input + output + cacheRead + cacheWrite)
        last = context.messages[-1]
        assert isinstance(last, AssistantMessage) and last.usage.total_tokens == 15
        with pytest.raises(SessionWriteError) as err:
            await session.append_message(UserMessage(content="no", timestamp=1))
        assert err.value.code == "read_only"
    finally:
        await session.close()
    again = await repo.open(str(path))
    try:
        assert [e.id for e in await again.get_entries()] == ids  # same ids every time
    finally:
        await again.close()
    assert path.read_bytes() == data  # never rewritten


@pytest.mark.asyncio
async def test_v2_renames_hook_messages_and_keeps_its_tree(tmp_path: Path) -> None:
    data = v2_file()
    path = place(tmp_path, "2025-12-08T22-41-00-000Z_v2-session.jsonl", data)
    session = await JsonlSessionRepo(tmp_path).open(str(path))
    try:
        assert session.format_version == 2 and session.read_only
        assert await session.get_leaf_id() == "a3"
        context = await session.build_context()
        assert texts(context.messages) == [
            ("user", "hi"),
            ("assistant", "hello"),
            ("custom", "A hook said this."),
            ("user", "after the hook"),
            ("assistant", "done"),
        ]
        assert isinstance(context.messages[2], CustomMessage)
        assert [e.id for e in await session.get_children("a1")] == ["u2", "h1"]
    finally:
        await session.close()
    assert path.read_bytes() == data


@pytest.mark.asyncio
async def test_damaged_legacy_lines_are_reported_with_their_own_line_numbers(
    tmp_path: Path,
) -> None:
    data = v2_file().replace(b'"text":"abandoned"', b'"text":"abandoned" oops', 1)
    data += b'{"type":"message","id":"late","parentId":"a3"}\n'  # no timestamp
    data += b'{"torn":'
    path = place(tmp_path, "x_v2-session.jsonl", data)
    session = await JsonlSessionRepo(tmp_path).open(str(path))
    try:
        recovery = session.recovery
        assert recovery is not None
        assert [d.line_number for d in recovery.damaged_lines] == [4, 8, 9]
        assert b'abandoned" oops' in recovery.damaged_lines[0].raw
        assert recovery.quarantine_path is None
        assert await session.get_leaf_id() == "a3"
    finally:
        await session.close()
    assert path.read_bytes() == data


@pytest.mark.asyncio
async def test_legacy_sessions_are_listed_and_indexed(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    v1 = place(root, "2025-12-09T00-53-29-825Z_ffae836b.jsonl", v1_file())
    v2 = place(root, "2025-12-08T22-41-00-000Z_v2-session.jsonl", v2_file())
    repo = JsonlSessionRepo(root)
    listed = {m.path: m for m in await repo.list(cwd=CWD)}
    assert {p: m.format_version for p, m in listed.items()} == {str(v1): 1, str(v2): 2}
    index = SessionIndex(tmp_path / "index.sqlite", repo)
    try:
        await index.reconcile()
        items = {s.path: s for s in await index.sessions()}
    finally:
        index.close()
    assert items[str(v1)].problem is None
    assert items[str(v1)].first_prompt == "first question"
    assert items[str(v1)].message_count == 6
    assert items[str(v2)].problem is None and items[str(v2)].first_prompt == "hi"


@pytest.mark.asyncio
async def test_convert_writes_a_new_v3_file_and_leaves_the_original(tmp_path: Path) -> None:
    data = v1_file()
    path = place(tmp_path, "2025-12-09T00-53-29-825Z_ffae836b.jsonl", data)
    repo = JsonlSessionRepo(tmp_path)
    view = await repo.open(str(path))
    try:
        before = await view.build_context()
        ids = [e.id for e in await view.get_entries()]
    finally:
        await view.close()

    converted = await repo.convert(str(path))
    assert converted.path is not None and converted.path != str(path)
    assert Path(converted.path).parent == path.parent
    assert converted.format_version == 3 and converted.id == V1_HEADER["id"]
    assert path.read_bytes() == data
    lines = Path(converted.path).read_bytes().split(b"\n")
    header = json.loads(lines[0])
    # Pi's migrated header (every key kept, version appended) plus where it came from
    assert list(header)[: len(V1_HEADER)] == list(V1_HEADER)
    assert header["version"] == 3
    assert header["metadata"] == {
        "convertedFrom": {"path": str(path), "version": 1},
        **header_stamp(),
    }

    session = await repo.open(converted)
    try:
        assert not session.read_only and session.format_version == 3
        assert [e.id for e in await session.get_entries()] == ids
        after = await session.build_context()
        assert texts(after.messages) == texts(before.messages)
        await session.append_message(UserMessage(content="continued", timestamp=2))
    finally:
        await session.close()
    with pytest.raises(SessionError) as err:
        await repo.convert(converted)
    assert err.value.code == "invalid_argument"
    assert path.read_bytes() == data


@pytest.mark.asyncio
async def test_fork_of_a_legacy_session_is_v3(tmp_path: Path) -> None:
    path = place(tmp_path / "s", "x_v2-session.jsonl", v2_file())
    repo = JsonlSessionRepo(tmp_path / "s")
    fork = await repo.fork(await asyncio.to_thread(lambda: repo_meta(path)), cwd=CWD)
    try:
        assert fork.format_version == 3 and not fork.read_only
        assert texts((await fork.build_context()).messages)[2] == ("custom", "A hook said this.")
    finally:
        await fork.close()


def repo_meta(path: Path) -> Any:
    from desktop_agent.session import SessionMetadata

    return SessionMetadata(id="v2-session", created_at="", path=str(path))
