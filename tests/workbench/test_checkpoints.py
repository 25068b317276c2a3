"""The files follow the branch, without Qt, on both stores: every way of moving the leaf
(map click, ‹ › versions, edit and resend, navigate with a summary, restore on launch)
with ``follow_branch`` "always", "ask" (Restore files / Keep / Show changes, Undo restore)
and "never", in a folder that is the user's own git repository."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from desktop_agent.config import CheckpointSettings, FollowBranch, Settings
from desktop_agent.workbench import Workbench
from desktop_agent.workbench._checkpoints import session_records
from desktop_agent.workbench._store import JsonlStore
from tests.helpers.checkpoint_flow import V1, V2, assert_version, two_versions
from tests.helpers.git_repo import dot_git_fingerprint, git, make_user_repo
from tests.helpers.provider_server import ProviderServer, Reply, tool_call
from tests.helpers.workbench import make_workbench

pytestmark = pytest.mark.asyncio


def settings(provider: ProviderServer, mode: FollowBranch) -> Settings:
    return Settings(
        default_model=provider.model("anthropic-messages").key,
        approval={"bash": "allow", "write": "allow", "edit": "allow"},
        discover_local_servers=False,
        checkpoints=CheckpointSettings(follow_branch=mode),
    )


async def bench(data: Path, provider: ProviderServer, store: str, mode: FollowBranch) -> Workbench:
    wb = make_workbench(
        data,
        provider.model("anthropic-messages"),
        store=store,
        settings=settings(provider, mode),
        checkpoints=True,
    )
    await wb.start()
    return wb


async def test_always_every_leaf_change_and_a_relaunch(
    tmp_path: Path, provider: ProviderServer, store: str
) -> None:
    project = make_user_repo(tmp_path / "project")
    git_before = dot_git_fingerprint(project)
    data = tmp_path / "data"
    wb = await bench(data, provider, store, "always")
    first, second = await two_versions(wb, provider, project)

    await wb.switch_sibling(second, -1)  # ‹ (Alt+Left)
    await wb.settled()
    assert_version(project, 1)
    assert wb.notices["files"].english == "The files now follow this branch (3 restored)."
    await wb.switch_sibling(first, +1)  # › (Alt+Right)
    await wb.settled()
    assert_version(project, 2)

    # A map click on version one's answer, then navigating back with a summary.
    session = wb.session
    assert session is not None
    one_answer = session.child_ids(first)[0]
    await wb.navigate_to_branch_of(one_answer)
    await wb.settled()
    assert_version(project, 1)
    two_end = [i for i in session.entry_ids() if session.entry_kind(i)[1] == "assistant"][-1]
    provider.script(Reply(text="## Goal\nVersion one."))
    await wb.navigate(two_end, summarize=True)
    await wb.settled()
    assert_version(project, 2)

    # Quit on version one with the folder left at version two ("never" for a moment),
    # then launch again: the restore on launch brings version one's files.
    await wb.navigate_to_branch_of(one_answer)
    await wb.settled()
    wb.settings.checkpoints.follow_branch = "never"
    await wb.switch_sibling(first, +1)
    await wb.settled()
    assert_version(project, 1)
    await wb.switch_sibling(second, -1)
    wb.settings.checkpoints.follow_branch = "always"
    (project / "extra.txt").write_text("extra\n")  # as if still on version two
    (project / "notes.txt").write_text(V2)
    await wb.shutdown(stop=True)
    await wb.aclose()

    again = await bench(data, provider, store, "always")
    await again.restore()
    await again.settled()
    assert again.session is not None and again.session.leaf_id() is not None
    assert_version(project, 1)
    await again.shutdown(stop=True)
    await again.aclose()
    assert dot_git_fingerprint(project) == git_before
    assert not any(".restore-" in p.name for p in project.rglob("*"))


async def test_ask_offers_restore_keep_and_show_changes_and_undo(
    tmp_path: Path, provider: ProviderServer, store: str
) -> None:
    project = make_user_repo(tmp_path / "project")
    wb = await bench(tmp_path / "data", provider, store, "ask")
    first, second = await two_versions(wb, provider, project)
    await wb.switch_sibling(second, -1)
    await wb.settled()
    assert_version(project, 2)  # asked, not restored
    bar = wb.notices["files"]
    assert bar.english == "The files in the folder are from another branch (3 differ)"
    assert bar.action_label == "Restore files"
    assert [label for label, _ in bar.more] == ["Keep", "Show changes"]

    await wb.notice_action("files/Show changes")
    listed = wb.notices["files"].english
    assert listed.startswith("The files in the folder are from another branch (3 differ): ")
    assert "extra.txt (removed)" in listed and "keep.txt (restored)" in listed
    assert "notes.txt (changed)" in listed

    (project / "by-hand.txt").write_text("typed while the bar was up\n")
    await wb.notice_action("files")  # Restore files
    assert_version(project, 1)
    assert (project / "by-hand.txt").exists()
    assert wb.notices["files"].action_label == "Undo restore"
    await wb.notice_action("files")  # Undo restore
    assert_version(project, 2)
    assert wb.notices["files"].english == "The files are back as they were before the restore."

    await wb.switch_sibling(first, +1)  # back on version two: nothing to ask
    await wb.settled()
    assert "files" not in wb.notices
    await wb.switch_sibling(second, -1)
    await wb.settled()
    await wb.notice_action("files/Keep")
    assert "files" not in wb.notices
    assert_version(project, 2)
    await wb.shutdown(stop=True)
    await wb.aclose()


async def test_never_leaves_the_folder_as_it_is(
    tmp_path: Path, provider: ProviderServer, store: str
) -> None:
    project = make_user_repo(tmp_path / "project")
    wb = await bench(tmp_path / "data", provider, store, "never")
    _first, second = await two_versions(wb, provider, project)
    await wb.switch_sibling(second, -1)
    await wb.settled()
    assert_version(project, 2)
    assert "files" not in wb.notices
    await wb.shutdown(stop=True)
    await wb.aclose()


async def test_the_changes_of_a_turn_and_reverting_a_file_or_the_turn(
    tmp_path: Path, provider: ProviderServer, store: str
) -> None:
    project = make_user_repo(tmp_path / "project")
    wb = await bench(tmp_path / "data", provider, store, "ask")
    _first, second = await two_versions(wb, provider, project)
    session = wb.session
    assert session is not None
    await wb.update_map()
    tool_call = session.child_ids(second)[0]  # the answer that called the tools
    changes = await wb.turn_changes(tool_call)
    assert changes is not None
    by_path = {f.path: f for f in changes.files}
    assert {p: f.kind for p, f in by_path.items()} == {
        "notes.txt": "modified",
        "extra.txt": "added",
        "keep.txt": "deleted",
    }
    assert "-version one\n+version two\n" in by_path["notes.txt"].diff
    assert by_path["extra.txt"].diff.startswith("--- a/extra.txt\n+++ b/extra.txt\n")
    assert await wb.turn_changes(session.child_ids(tool_call)[0]) is not None  # same row
    (project / "later.txt").write_text("made after the turn\n")

    await wb.revert_changes(changes, ["keep.txt"])  # one file
    assert (project / "keep.txt").read_text() == "keep me\n"
    assert (project / "notes.txt").read_text() == V2
    assert wb.notices["files"].action_label == "Undo restore"
    await wb.notice_action("files")
    assert not (project / "keep.txt").exists()

    await wb.revert_changes(changes)  # the whole turn
    assert (project / "notes.txt").read_text() == V1
    assert (project / "keep.txt").read_text() == "keep me\n"
    assert not (project / "extra.txt").exists()
    assert (project / "later.txt").exists()  # not the turn's: left alone
    await wb.notice_action("files")  # Undo restore
    assert_version(project, 2)
    await wb.shutdown(stop=True)
    await wb.aclose()


async def test_editing_the_first_prompt_goes_back_to_the_folder_before_it(
    tmp_path: Path, provider: ProviderServer, store: str
) -> None:
    project = make_user_repo(tmp_path / "project")
    wb = await bench(tmp_path / "data", provider, store, "always")
    await wb.new_session(str(project))
    provider.script(
        tool_call("write", {"path": "notes.txt", "content": V1}, "w1"),
        Reply(text="one written"),
    )
    await wb.send("Write version one")
    assert (project / "notes.txt").read_text() == V1
    first = (await wb.branch())[0].entry_id
    provider.script(Reply(text="just talking"))
    await wb.edit_resend(first, "Only talk")  # from the point before any snapshot
    await wb.settled()
    assert not (project / "notes.txt").exists()  # the folder as the first turn found it
    assert (project / "keep.txt").read_text() == "keep me\n"
    assert (project / "mine.txt").read_text() == "my untracked notes\n"
    await wb.switch_sibling((await wb.branch())[0].entry_id, -1)
    await wb.settled()
    assert (project / "notes.txt").read_text() == V1
    await wb.shutdown(stop=True)
    await wb.aclose()


def snapshots_read(records: list[logging.LogRecord]) -> list[int]:
    """How many paths each snapshot of the folder read again, in order."""
    found = (
        re.search(r": (\d+) paths read again$", r.getMessage())
        for r in records
        if r.name == "desktop_agent.checkpoints"
    )
    return [int(m.group(1)) for m in found if m is not None]


async def test_the_first_snapshot_of_a_folder_starts_when_a_session_opens_in_it(
    tmp_path: Path, provider: ProviderServer, store: str, caplog: pytest.LogCaptureFixture
) -> None:
    project = make_user_repo(tmp_path / "project")
    for i in range(40):
        (project / "src" / f"module{i}.py").write_text(f"VALUE = {i}\n")
    files = git(project, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    every_file = len([p for p in files.split("\0") if p])
    wb = await bench(tmp_path / "data", provider, store, "ask")
    caplog.set_level(logging.DEBUG, logger="desktop_agent.checkpoints")
    await wb.new_session(str(project))  # the first snapshot starts in the background
    provider.script(
        tool_call("write", {"path": "notes.txt", "content": V1}, "w1"),
        Reply(text="one written"),
    )
    await wb.send("Write version one")  # its first tool call waits for what is left
    await wb.settled()
    # The one started at the open read every file; the first tool call's snapshot, after
    # it, only checked their stat data; the turn's end read the file the tool wrote (and
    # the comparisons after the run, the leaf having moved, found nothing new).
    read = snapshots_read(caplog.records)
    assert read[:3] == [every_file, 0, 1]
    assert set(read[3:]) <= {0}
    caplog.clear()

    # Another session in the same folder (and the app started again with it): the store
    # has its snapshot, nothing is taken ahead.
    await wb.new_session(str(project))
    await wb.settled()
    assert snapshots_read(caplog.records) == []
    await wb.shutdown(stop=True)
    await wb.aclose()


async def test_deleting_a_trashed_session_for_good_frees_the_checkpoints_only_it_used(
    tmp_path: Path, provider: ProviderServer, store: str
) -> None:
    wb = await bench(tmp_path / "data", provider, store, "ask")
    await delete_for_good_flow(wb, provider, make_user_repo(tmp_path / "project"))


async def test_deleting_for_good_on_postgres(
    tmp_path: Path, provider: ProviderServer, database_url: str
) -> None:
    wb = make_workbench(
        tmp_path / "data",
        provider.model("anthropic-messages"),
        store="postgres",
        database_url=database_url,
        settings=settings(provider, "ask"),
        checkpoints=True,
    )
    await wb.start()
    await delete_for_good_flow(wb, provider, make_user_repo(tmp_path / "project"))


async def delete_for_good_flow(wb: Workbench, provider: ProviderServer, project: Path) -> None:
    assert wb.files is not None
    folder = wb.files.files.store.folder(project)

    async def session_with(path: str) -> tuple[str, list[str]]:
        await wb.new_session(str(project))
        provider.clear_script()
        provider.script(
            tool_call("write", {"path": path, "content": path}, "w"),
            Reply(text="written"),
        )
        await wb.send(f"Write {path}")
        await wb.settled()
        session = wb.session
        assert session is not None and wb.ref is not None
        records = [r for r in (await session_records(session)).values() if r.kind == "after"]
        assert records[0].before is not None
        return wb.ref, [records[0].before, records[0].tree]

    ref_a, (a_before, a_after) = await session_with("a.txt")
    _ref_b, (b_before, b_after) = await session_with("b.txt")
    assert b_before == a_after  # the folder as session A left it: one snapshot, two users
    await wb.settled()
    await wb.trash(ref_a)
    trash_ref = wb.trash_rows[0].path
    assert folder._has(a_before)  # in the trash, its checkpoints are kept

    await wb.delete_for_good([trash_ref])
    await wb.settled()
    assert wb.trash_rows == []
    if isinstance(wb.store, JsonlStore):  # nothing of it left in the trash
        assert not Path(trash_ref).exists() and not Path(trash_ref).parent.exists()
    assert wb.notices["trash"].english.startswith("Deleted 1 sessions for good (")
    assert not folder._has(a_before)  # only A used it
    assert folder._has(a_after) and folder._has(b_after)  # B points at them
    # Session B still compares and restores with its checkpoints.
    assert [c.path for c in await folder.diff(b_before, b_after)] == ["b.txt"]
    await wb.shutdown(stop=True)
    await wb.aclose()
