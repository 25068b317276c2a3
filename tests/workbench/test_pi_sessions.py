"""The "Pi sessions" source, "Convert to the current format" and reloading after another
program wrote, as workbench operations (issue 13 items 3, 4, 6; no Qt).

The Pi CLI's folder is always a temp folder given to the workbench (never ~/.pi). Files
written by the real Pi CLI are checked in tests/interop/test_pi_gui.py; these use files in
the same v3 format written by our repo, and hand-written v2 files.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from desktop_agent.workbench import Workbench, WorkbenchError
from tests.helpers.pi_files import outside_append, pi_session, place, v2_file
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.workbench import make_workbench


@pytest.fixture
def pi_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "pi-agent" / "sessions"
    folder.mkdir(parents=True)
    return folder


@pytest_asyncio.fixture
async def wb(
    tmp_path: Path, provider: ProviderServer, store: str, pi_folder: Path, workspace: Path
) -> AsyncIterator[Workbench]:
    await pi_session(pi_folder, workspace, "from pi")
    bench = make_workbench(
        tmp_path / "data", provider.model("anthropic-messages"), store=store, pi_folder=pi_folder
    )
    await bench.start()
    try:
        yield bench
    finally:
        if bench.session is not None:
            await bench.shutdown(stop=True)
        await bench.aclose()


def pi_rows(wb: Workbench) -> list[str]:
    return [r.path for r in wb.rows if r.source == "pi"]


@pytest.mark.asyncio
async def test_pi_sessions_are_listed_beside_ours_and_continue_in_place(
    wb: Workbench, provider: ProviderServer, pi_folder: Path, workspace: Path
) -> None:
    await wb.new_session(str(workspace))
    provider.script(Reply(text="ours"))
    await wb.send("our question")
    assert wb.pi_count == 1 and len(wb.rows) == 2
    (pi_path,) = pi_rows(wb)
    assert wb.row_for(pi_path) is not None and wb.row_for(pi_path).title == "from pi"  # type: ignore[union-attr]
    before = Path(pi_path).read_bytes()
    ours_before = [r.path for r in wb.rows if r.source != "pi"]

    await wb.open(pi_path)
    assert wb.ref == pi_path and not wb.read_only
    provider.script(Reply(text="answered here"))
    await wb.send("continued here")
    after = Path(pi_path).read_bytes()
    assert after.startswith(before)  # appended in place, nothing rewritten
    added = [json.loads(x) for x in after[len(before) :].splitlines()]
    assert [e["message"]["role"] for e in added if e["type"] == "message"] == [
        "user",
        "assistant",
    ]
    assert not Path(pi_path + ".lock").exists()  # no sidecar in Pi's folder
    assert [p.name for p in pi_folder.rglob("*") if p.is_file()] == [Path(pi_path).name]
    assert [r.path for r in wb.rows if r.source != "pi"] == ours_before  # no copy of ours
    # Leaving a Pi session never deletes or trashes Pi's file, and the list still has it.
    await wb.close()
    assert Path(pi_path).read_bytes() == after
    assert pi_path in pi_rows(wb)
    with pytest.raises(WorkbenchError, match="deleted with Pi"):
        await wb.trash(pi_path)
    assert Path(pi_path).exists()
    # Search covers Pi's sessions too (their index has the content).
    await wb.refresh_sessions("answered here")
    assert [r.path for r in wb.rows] == [pi_path]
    await wb.refresh_sessions("")
    assert len(wb.rows) == 2


@pytest.mark.asyncio
async def test_copy_into_desktop_agent_makes_our_own_copy_and_opens_it(
    wb: Workbench, provider: ProviderServer
) -> None:
    (pi_path,) = pi_rows(wb)
    original = Path(pi_path).read_bytes()
    await wb.copy_into_ours(pi_path)
    assert wb.ref is not None and wb.ref != pi_path and not wb.is_pi(wb.ref)
    assert "copy" in wb.notices
    assert Path(pi_path).read_bytes() == original
    assert [i.role for i in await wb.branch()] == ["user", "assistant"]
    provider.script(Reply(text="in our copy"))
    await wb.send("next")
    assert Path(pi_path).read_bytes() == original  # the copy is ours alone
    ours = [r for r in wb.rows if r.source != "pi"]
    assert [r.path for r in ours] == [wb.ref] and wb.pi_count == 1
    with pytest.raises(WorkbenchError):
        await wb.copy_into_ours(wb.ref)  # already ours


@pytest.mark.asyncio
async def test_restore_prefers_the_last_open_session_else_the_most_recent_of_either(
    tmp_path: Path, provider: ProviderServer, store: str, pi_folder: Path, workspace: Path
) -> None:
    data = tmp_path / "data"
    model = provider.model("anthropic-messages")
    wb = make_workbench(data, model, store=store, pi_folder=pi_folder)
    await wb.start()
    await wb.new_session(str(workspace))
    provider.script(Reply(text="ours"))
    await wb.send("ours first")
    ours = wb.ref
    await wb.shutdown(stop=True)
    await wb.aclose()
    newest = await pi_session(pi_folder, workspace, "written later by pi")

    # The last session the user had open wins, even when Pi wrote one since.
    wb = make_workbench(data, model, store=store, pi_folder=pi_folder)
    await wb.start()
    await wb.restore()
    assert wb.ref == ours
    await wb.shutdown(stop=True)
    await wb.aclose()

    # Without it (a first launch on this data dir): the most recent of either source.
    (data / "state.json").unlink()
    wb = make_workbench(data, model, store=store, pi_folder=pi_folder)
    await wb.start()
    await wb.restore()
    assert wb.ref == newest and wb.is_pi(wb.ref)
    # --session ID finds Pi's sessions too, and a Pi session reopens as the last one.
    pi_id = wb.session.metadata.id if wb.session else ""
    await wb.open(ours or "")
    await wb.restore(pi_id)
    assert wb.ref == newest
    await wb.shutdown(stop=True)
    await wb.aclose()
    wb = make_workbench(data, model, store=store, pi_folder=pi_folder)
    await wb.start()
    await wb.restore()
    assert wb.ref == newest
    await wb.shutdown(stop=True)
    await wb.aclose()


@pytest.mark.asyncio
async def test_a_v2_session_opens_read_only_and_converts_beside_the_original(
    wb: Workbench, provider: ProviderServer, tmp_path: Path, pi_folder: Path
) -> None:
    # In our folder with the JSONL store; in Pi's with the SQLite one (which holds only
    # v3 sessions of its own): both routes of `convert`.
    root = tmp_path / "data" / "sessions" if wb.store.kind == "jsonl" else pi_folder
    path = place(root, "2025-12-08T22-41-00-000Z_v2-session.jsonl", v2_file())
    original = path.read_bytes()
    await wb.refresh_sessions()
    await wb.open(str(path))
    assert wb.read_only and wb.save.status == "read_only"
    notice = wb.notices["read_only"]
    assert "older Pi format (version 2)" in notice.english
    assert notice.action_label == "Convert to the current format"
    assert wb.read_only_text() == notice.english
    with pytest.raises(WorkbenchError, match="older Pi format"):
        await wb.send("cannot continue")

    await wb.notice_action("read_only")
    new = wb.ref or ""
    assert new != str(path) and Path(new).parent == path.parent  # beside the original
    assert path.read_bytes() == original  # never rewritten
    assert wb.read_only_text() is None and "read_only" not in wb.notices
    assert "convert" in wb.notices
    assert json.loads(Path(new).read_text().splitlines()[0])["version"] == 3
    # hi, hello, the hook's message, after the hook, done (as the read-only view had them)
    assert len(await wb.branch()) == 5
    # --session ID gives the converted file (the one written last), not the v2 original.
    await wb.close()
    await wb.restore("v2-session")
    assert wb.ref == new
    provider.script(Reply(text="continued"))
    await wb.send("go on")
    assert Path(new).read_bytes().count(b"\n") == original.count(b"\n") + 2


@pytest.mark.asyncio
async def test_a_save_after_another_program_appended_is_named_and_reloads(
    wb: Workbench, provider: ProviderServer
) -> None:
    (pi_path,) = pi_rows(wb)
    await wb.open(pi_path)
    leaf = wb.session.leaf_id() if wb.session else None
    outside_append(pi_path, leaf, "typed in Pi", "pi000001")
    provider.script(Reply(text="ours, kept"))
    await wb.send("typed here meanwhile")
    failed = wb.save
    assert failed.status == "not_saved" and failed.code == "changed_on_disk"
    assert "another program" in (failed.detail or "")

    await wb.retry_saving()  # a retry cannot succeed: it reloads instead
    assert wb.save.label == "Saved" and wb.session is not None
    assert wb.session.pending_count == 0
    assert "came in" in wb.notices["save"].text and "kept as a branch" in wb.notices["save"].text
    assert wb.session.leaf_id() == "pi000001"  # where the other program left it
    text = Path(pi_path).read_text()
    assert "typed in Pi" in text and "typed here meanwhile" in text and "ours, kept" in text
    lines = [json.loads(x) for x in text.splitlines()]
    # theirs, then ours as one block, then the leaf back on theirs (Pi's CLI follows it)
    assert lines[-4]["id"] == "pi000001"
    assert lines[-3]["parentId"] == lines[-4]["parentId"]  # ours branch where they diverged
    assert [e["message"]["role"] for e in lines[-3:-1]] == ["user", "assistant"]
    assert lines[-1]["type"] == "leaf" and lines[-1]["parentId"] == "pi000001"
    assert [i.message.role for i in await wb.branch()][-1] == "user"


@pytest.mark.asyncio
async def test_a_slow_first_index_of_pi_folder_does_not_hold_up_the_start(
    tmp_path: Path,
    provider: ProviderServer,
    pi_folder: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    from desktop_agent.workbench import Changes, WorkbenchLimits

    pi_path = await pi_session(pi_folder, workspace, "listed later")
    model = provider.model("anthropic-messages")
    limits = WorkbenchLimits(index_wait_s=0.05)
    wb = make_workbench(tmp_path / "data", model, pi_folder=pi_folder, limits=limits)
    assert wb.pi_store is not None
    gate = asyncio.Event()  # a first index of thousands of files: it takes its time
    real_start = wb.pi_store.start

    async def slow_start() -> None:
        await gate.wait()
        await real_start()

    monkeypatch.setattr(wb.pi_store, "start", slow_start)
    seen: list[Changes] = []
    wb.subscribe(lambda e: seen.append(e) if isinstance(e, Changes) else None)
    try:
        await asyncio.wait_for(wb.start(), timeout=10)  # returns while the index runs
        assert pi_rows(wb) == []  # the window shows ours at once
        seen.clear()
        gate.set()
        for _ in range(500):
            if pi_rows(wb):
                break
            await asyncio.sleep(0.01)
        assert pi_rows(wb) == [pi_path]  # then the list gets Pi's
        assert any(c.sessions for c in seen)
    finally:
        gate.set()
        await wb.aclose()


@pytest.mark.asyncio
async def test_an_empty_pi_session_is_never_deleted_even_after_the_source_is_off(
    wb: Workbench, pi_folder: Path, workspace: Path
) -> None:
    from desktop_agent.workbench import SettingsForm

    empty = await pi_session(pi_folder, workspace)  # a header only: Pi started, then quit
    await wb.refresh_sessions()
    await wb.open(empty)
    await wb.close()
    assert Path(empty).exists()  # ours would be discarded; Pi's file is Pi's
    await wb.open(empty)
    form = wb.settings_form()
    assert form.pi_sessions and form.pi_default_folder == str(pi_folder)
    await wb.apply_settings(SettingsForm(**{**form.__dict__, "pi_sessions": False}))
    assert wb.pi_store is None and wb.pi_count == 0 and wb.ref == empty
    await wb.close()
    assert Path(empty).exists()
    assert wb.settings.pi_sessions.enabled is False
