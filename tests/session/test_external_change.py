"""Another program appends to (or rewrites) a session file while it is open here (issue 13
item 4): the next save names the cause (``changed_on_disk``), a retry cannot pretend to
succeed, and `Session.reload_from_disk` takes in the other program's entries and keeps
ours as a branch from where the two diverged.

"Another program" is simulated here by writing lines the way the Pi CLI does (one
``appendFileSync`` per entry, parent = the last entry); tests/interop/test_pi_cli.py does
it with the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import (
    JsonlSessionRepo,
    LabelEntry,
    MessageEntry,
    Session,
    SessionError,
    SessionWriteError,
)


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def pi_entry(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-12-01T10:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 2},
    }


def append_like_pi(path: str, *entries: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        for entry in entries:
            fh.write(json.dumps(entry, separators=(",", ":")) + "\n")


def text_of(entry: Any) -> str:
    assert isinstance(entry, MessageEntry)
    content = entry.message.content  # type: ignore[union-attr]
    return "".join(b.text for b in content if isinstance(b, TextContent))


async def branch_texts(session: Session, leaf: str | None = None) -> list[str]:
    return [text_of(e) for e in await session.get_branch(leaf) if e.type == "message"]


@pytest.fixture
def repo(tmp_path: Path) -> JsonlSessionRepo:
    return JsonlSessionRepo(tmp_path / "sessions")


async def started(repo: JsonlSessionRepo) -> tuple[Session, str, str]:
    s = await repo.create(cwd="/project")
    q1 = await s.append_message(user("q1"))
    q2 = await s.append_message(user("q2"))
    return s, q1, q2


@pytest.mark.asyncio
async def test_a_save_after_another_programs_append_names_the_cause(
    repo: JsonlSessionRepo,
) -> None:
    s, _, q2 = await started(repo)
    path = str(s.metadata.path)
    append_like_pi(path, pi_entry("pi000001", q2, "from pi"))
    on_disk = Path(path).read_bytes()
    with pytest.raises(SessionWriteError) as err:
        await s.append_message(user("ours"))
    exc = err.value
    assert exc.code == "changed_on_disk"
    assert exc.os_error is None and exc.pending_count == 1
    assert "another program" in exc.message and "reload" in exc.message
    assert "EIO" not in exc.message and "will be written on retry" not in exc.message
    # A retry cannot succeed, and says so again; the file holds only the other program's.
    with pytest.raises(SessionWriteError) as again:
        await s.retry_persistence()
    assert again.value.code == "changed_on_disk"
    with pytest.raises(SessionWriteError):
        await s.sync()
    assert Path(path).read_bytes() == on_disk
    assert s.pending_count == 1
    s.get_storage().force_close()


@pytest.mark.asyncio
async def test_reload_takes_in_theirs_and_keeps_ours_as_a_branch(
    repo: JsonlSessionRepo,
) -> None:
    s, q1, q2 = await started(repo)
    path = str(s.metadata.path)
    append_like_pi(path, pi_entry("pi000001", q2, "pi 1"), pi_entry("pi000002", "pi000001", "pi 2"))
    with pytest.raises(SessionWriteError):
        await s.append_message(user("ours 1"))
    with pytest.raises(SessionWriteError):
        await s.append_message(user("ours 2"))
    ours = [e.id for e in await s.get_entries()][-2:]

    report = await s.reload_from_disk()
    assert report.error is None and s.pending_count == 0
    assert report.taken_in == ("pi000001", "pi000002")
    assert report.kept == tuple(ours) and report.renamed == {}
    assert report.branch_point == q2
    assert (report.their_leaf, report.our_leaf) == ("pi000002", ours[-1])
    assert report.leaf == "pi000002" == await s.get_leaf_id()
    assert await branch_texts(s) == ["q1", "q2", "pi 1", "pi 2"]
    assert await branch_texts(s, ours[-1]) == ["q1", "q2", "ours 1", "ours 2"]
    # Written: the file first, then our block, then a leaf entry back to their leaf.
    lines = [json.loads(x) for x in Path(path).read_text().splitlines()[1:]]
    assert [x["id"] for x in lines[:6]] == [q1, q2, "pi000001", "pi000002", *ours]
    assert (lines[6]["type"], lines[6]["targetId"], lines[6]["parentId"]) == (
        "leaf",
        "pi000002",
        "pi000002",
    )
    # And saving works again, on their branch.
    nxt = await s.append_message(user("after reload"))
    assert (await s.get_entry(nxt)).parent_id == "pi000002"  # type: ignore[union-attr]
    await s.close()
    reopened = await repo.open(path)
    assert await branch_texts(reopened) == ["q1", "q2", "pi 1", "pi 2", "after reload"]
    await reopened.close()


@pytest.mark.asyncio
async def test_reload_can_stay_on_our_branch(repo: JsonlSessionRepo) -> None:
    s, _, q2 = await started(repo)
    path = str(s.metadata.path)
    append_like_pi(path, pi_entry("pi000001", q2, "pi 1"))
    with pytest.raises(SessionWriteError):
        await s.append_message(user("ours"))
    report = await s.reload_from_disk(leaf="ours")
    assert report.leaf == report.our_leaf == await s.get_leaf_id()
    assert await branch_texts(s) == ["q1", "q2", "ours"]
    assert json.loads(Path(path).read_text().splitlines()[-1])["type"] == "message"
    await s.close()


@pytest.mark.asyncio
async def test_an_id_both_used_is_renamed_with_its_references(repo: JsonlSessionRepo) -> None:
    s, _, q2 = await started(repo)
    path = str(s.metadata.path)
    append_like_pi(path, pi_entry("pi000001", q2, "pi"))
    with pytest.raises(SessionWriteError):
        mine = await s.append_message(user("ours"))
    mine = [e.id for e in await s.get_entries()][-1]
    with pytest.raises(SessionWriteError):
        await s.append_label(mine, "mine")
    # The other program happened to use the same id for another entry.
    append_like_pi(path, pi_entry(mine, "pi000001", "pi's own"))
    report = await s.reload_from_disk(leaf="ours")
    new = report.renamed[mine]
    assert new != mine and report.kept[0] == new
    assert text_of(await s.get_entry(mine)) == "pi's own"
    assert text_of(await s.get_entry(new)) == "ours"
    label = await s.get_entry(report.kept[1])
    assert isinstance(label, LabelEntry) and label.target_id == new
    assert await s.get_label(new) == "mine"
    await s.close()


@pytest.mark.asyncio
async def test_entries_a_rewrite_dropped_are_kept(repo: JsonlSessionRepo) -> None:
    s, q1, q2 = await started(repo)
    path = str(s.metadata.path)
    lines = Path(path).read_bytes().split(b"\n")
    # Another tool rewrote the file without our last entry, with its own instead.
    rewritten = b"\n".join(lines[:2]) + b"\n"
    Path(path).write_bytes(rewritten)
    append_like_pi(path, pi_entry("pi000001", q1, "instead of q2"))
    with pytest.raises(SessionWriteError) as err:
        await s.append_message(user("q3"))
    assert err.value.code == "changed_on_disk"
    report = await s.reload_from_disk(leaf="ours")
    assert report.kept[0] == q2 and report.branch_point == q1
    assert await branch_texts(s) == ["q1", "q2", "q3"]
    assert await branch_texts(s, "pi000001") == ["q1", "instead of q2"]
    await s.close()


@pytest.mark.asyncio
async def test_a_file_replaced_by_another_session_is_not_merged(repo: JsonlSessionRepo) -> None:
    s, _, _ = await started(repo)
    path = str(s.metadata.path)
    other = await repo.create(cwd="/elsewhere")
    await other.append_message(user("someone else"))
    await other.close()
    Path(path).write_bytes(Path(str(other.metadata.path)).read_bytes())
    with pytest.raises(SessionWriteError) as err:
        await s.append_message(user("ours"))
    assert err.value.code == "changed_on_disk"
    with pytest.raises(SessionError) as refused:
        await s.reload_from_disk()
    assert refused.value.code == "changed_on_disk"
    assert "another session" in refused.value.message
    assert s.pending_count == 1  # still in memory: save a copy elsewhere keeps it
    copy = Path(path).with_name("copy.jsonl")
    await s.save_copy(str(copy))
    assert b"ours" in copy.read_bytes()
    s.get_storage().force_close()


@pytest.mark.asyncio
async def test_nothing_to_keep_just_reloads(repo: JsonlSessionRepo) -> None:
    s, _, q2 = await started(repo)
    path = str(s.metadata.path)
    append_like_pi(path, pi_entry("pi000001", q2, "pi"))
    report = await s.reload_from_disk()
    assert report.kept == () and report.leaf == "pi000001"
    assert Path(path).read_text().splitlines()[-1].startswith('{"type":"message"')
    await s.append_message(user("continue"))
    assert await branch_texts(s) == ["q1", "q2", "pi", "continue"]
    await s.close()
