"""Workbench operations without Qt, on both stores: new, send, open, restore, drafts,
versions, retries, settings, the first launch, the map's cache and the first index. The
session operations (rename, fork, trash, repair, export, back up, quitting with unsaved
entries) are in test_session_operations.py."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import AssistantMessage, UserMessage
from desktop_agent.session import Session
from desktop_agent.workbench import Workbench, WorkbenchError
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.workbench import (
    Recorder,
    answer,
    make_workbench,
    seed_async,
    user,
)

pytestmark = pytest.mark.asyncio

Bench = tuple[Workbench, Recorder]


def opened(wb: Workbench) -> str | None:
    """The open session's reference (a call, so checks after operations are not narrowed)."""
    return wb.ref if wb.session is not None else None


def kinds(session: Session) -> list[str]:
    return [kind for _id, _p, kind, _ts, _raw in session.raw_entries()]


async def test_new_session_records_model_thinking_and_tools(bench: Bench, workspace: Path) -> None:
    wb, _ = bench
    changes = await wb.new_session(str(workspace))
    assert changes.session and changes.sessions
    session = wb.session
    assert session is not None and wb.ref is not None
    assert kinds(session) == ["model_change", "thinking_level_change", "active_tools_change"]
    assert wb.model_key() == "anthropic/claude-test"
    assert wb.ref in [r.path for r in wb.rows]
    assert wb.state.last_workspace == str(workspace)


async def test_send_emits_saved_items_usage_and_save_state(
    bench: Bench, workspace: Path, provider: ProviderServer
) -> None:
    wb, rec = bench
    await wb.new_session(str(workspace))
    rec.clear()
    provider.script(Reply(text=["Hello ", "there."]))
    await wb.send("Say hello")
    total = rec.changes()
    saved = [item.role for item in total.saved_items]
    assert saved == ["user", "assistant"]
    assert all(item.entry_id for item in total.saved_items)
    assert total.usage and total.save_state and total.running
    assert not total.branch  # nothing failed: what streamed in is the branch, no redraw
    assert wb.save.status == "saved" and wb.usage.tokens > 0
    assert set(total.appended) >= {item.entry_id for item in total.saved_items}
    items = await wb.branch()
    assert [i.role for i in items] == ["user", "assistant"]
    assert not wb.running


async def test_restore_on_launch_opens_the_last_session_on_its_leaf(
    tmp_path: Path, workspace: Path, provider: ProviderServer, store: str
) -> None:
    data = tmp_path / "data"
    ids: dict[str, str] = {}

    async def build(s: Session) -> None:
        await s.append_model_change("anthropic", "claude-test")
        ids["q"] = await s.append_message(user("q1"))
        await s.append_message(answer("a1"))
        await s.move_to(ids["q"])

    ref = await seed_async(data, workspace, build, store)
    wb = make_workbench(data, provider.model("anthropic-messages"), store=store)
    await wb.start()
    await wb.restore()
    assert wb.ref == ref and wb.session is not None
    assert wb.session.leaf_id() == ids["q"]
    assert wb.model_key() == "anthropic/claude-test"
    assert [i.role for i in await wb.branch()] == ["user"]
    await wb.shutdown(stop=True)
    await wb.aclose()


async def test_empty_new_sessions_are_not_kept(bench: Bench, workspace: Path) -> None:
    wb, _ = bench
    await wb.new_session(str(workspace))
    empty = wb.ref
    await wb.new_session(str(workspace))
    assert empty not in [r.path for r in wb.rows]
    assert len(wb.rows) == 1


async def test_drafts_are_kept_per_branch_and_between_runs(
    tmp_path: Path, workspace: Path, provider: ProviderServer
) -> None:
    data = tmp_path / "data"
    wb = make_workbench(data, provider.model("anthropic-messages"))
    await wb.start()
    await wb.new_session(str(workspace))
    wb.set_draft("half a thought")
    ref = wb.ref
    assert await wb.shutdown(stop=True) == 0
    await wb.aclose()
    again = make_workbench(data, provider.model("anthropic-messages"))
    await again.start()
    await again.restore()
    assert again.ref == ref and again.draft() == "half a thought"
    await again.shutdown(stop=True)
    await again.aclose()


async def test_navigate_edit_and_switch_versions(
    bench: Bench, workspace: Path, provider: ProviderServer
) -> None:
    wb, _ = bench
    await wb.new_session(str(workspace))
    provider.script(Reply(text="answer one"), Reply(text="answer two"))
    await wb.send("question one")
    items = await wb.branch()
    first_user = items[0].entry_id
    await wb.edit_resend(first_user, "question one, edited")
    items = await wb.branch()
    assert [(i.role, i.sibling_index, i.sibling_count) for i in items] == [
        ("user", 1, 2),
        ("assistant", 0, 1),
    ]
    session = wb.session
    assert session is not None
    leaves_before = kinds(session).count("leaf")
    changes = await wb.switch_sibling(items[0].entry_id, -1)
    assert changes.branch
    assert kinds(session).count("leaf") == leaves_before + 1  # exactly one leaf entry
    message = session.get_message(session.leaf_id() or "")
    assert isinstance(message, AssistantMessage) and message.content[0].text == "answer one"  # type: ignore[union-attr]
    assert (await wb.navigate(session.leaf_id() or "")).empty  # already there
    prompt = (await wb.branch())[0].entry_id
    await wb.navigate(prompt)  # a prompt: the leaf lands on it (no text goes anywhere)
    assert session.leaf_id() == prompt
    wb.state.last_workspace = None
    await wb.close()
    with pytest.raises(WorkbenchError, match="project folder"):
        await wb.new_session()


async def test_retries_fold_into_one_item_and_401_is_never_retried(
    bench: Bench, workspace: Path, provider: ProviderServer
) -> None:
    from tests.helpers.provider_server import HttpError

    wb, rec = bench
    await wb.new_session(str(workspace))
    provider.script(HttpError(500, "busy"), HttpError(503, "still busy"), Reply(text="finally"))
    rec.clear()
    await wb.send("try hard")
    assert rec.changes().branch  # failures folded away: the chat redraws
    items = await wb.branch()
    assert [i.role for i in items] == ["user", "assistant"]
    assert len(items[1].failed_attempts) == 2
    assert all(m.stop_reason == "error" for m in items[1].attempts())
    posts = len([r for r in provider.requests if r.method == "POST"])
    provider.script(HttpError(401, "bad key", error_type="api_error"))
    await wb.send("again")
    assert len([r for r in provider.requests if r.method == "POST"]) == posts + 1
    last = (await wb.branch())[-1]
    assert isinstance(last.message, AssistantMessage) and last.message.stop_reason == "error"
    assert "401" in (last.message.error_message or "")
    assert "401 401" not in (last.message.error_message or "")
    user_items = [i for i in await wb.branch() if isinstance(i.message, UserMessage)]
    assert len(user_items) == 2


async def test_a_key_typed_in_settings_takes_effect_for_the_open_session(
    tmp_path: Path, workspace: Path, provider: ProviderServer
) -> None:
    from desktop_agent.config import Settings
    from desktop_agent.workbench import SettingsForm

    remote = provider.model("anthropic-messages", base_url="https://api.anthropic.test")
    settings = Settings(default_model=remote.key, discover_local_servers=False)
    wb = make_workbench(tmp_path / "data", remote, settings=settings)
    await wb.start()
    await wb.new_session(str(workspace))
    assert wb.model_key() is None and "No model is available" in wb.notices["model"].text
    assert not wb.settings_form().models  # nothing usable is offered as the default
    await wb.apply_settings(SettingsForm(keys={"anthropic": "sk-ant-typed-in-settings"}))
    for _ in range(100):
        if wb.model_key() is not None:
            break
        await asyncio.sleep(0.01)
    assert wb.model_key() == remote.key and "model" not in wb.notices
    assert wb.models.get_api_key(remote) == "sk-ant-typed-in-settings"
    await wb.shutdown(stop=True)
    await wb.aclose()


async def test_a_bad_server_address_saved_by_hand_does_not_stop_another_store_being_chosen(
    tmp_path: Path, provider: ProviderServer
) -> None:
    """settings.json edited by hand to an address no server can have, then SQLite chosen in
    Settings (the server's field, disabled, still shows that address): the choice is saved
    for the next start and the address is left as it was; choosing the server with it is
    refused in words, changing nothing."""
    from dataclasses import replace

    from desktop_agent.config import Settings

    bad = "postgresql://me@[db.example/agent"
    wb = make_workbench(
        tmp_path / "data", provider.model("anthropic-messages"), settings=Settings(database_url=bad)
    )
    await wb.start()
    form = wb.settings_form()
    assert form.database_url == bad
    with pytest.raises(WorkbenchError, match="IPv6"):
        await wb.apply_settings(replace(form, store="postgres"))
    assert wb.settings.store == "jsonl"
    await wb.apply_settings(replace(form, store="sqlite"))
    assert (wb.settings.store, wb.settings.database_url) == ("sqlite", bad)
    assert "from the next start" in wb.notices["settings"].english
    await wb.aclose()


async def test_first_launch_with_a_folder_opens_a_new_session_there(
    tmp_path: Path, workspace: Path, provider: ProviderServer, store: str
) -> None:
    """Nothing to restore but a folder given (or remembered): a new session in it, not
    the start page (a prompt typed at once must reach the composer)."""
    wb = make_workbench(tmp_path / "data", provider.model("anthropic-messages"), store=store)
    await wb.start()
    await wb.restore(workspace=str(workspace))
    assert wb.session is not None and wb.session.metadata.cwd == str(workspace)
    await wb.shutdown(stop=True)
    await wb.aclose()
    gone = make_workbench(tmp_path / "other", provider.model("anthropic-messages"), store=store)
    await gone.start()
    await gone.restore(workspace=str(tmp_path / "no-such-folder"))
    assert gone.session is None  # the start page: no folder to work in
    await gone.shutdown(stop=True)
    await gone.aclose()


@pytest.mark.parametrize("seen", ["never", "restored before"])
async def test_a_launch_reads_the_session_it_restores_once(
    tmp_path: Path, workspace: Path, provider: ProviderServer, monkeypatch: pytest.MonkeyPatch,
    seen: str,
) -> None:  # fmt: skip
    """The list took a big session's facts from a read of its own, then the restore read
    it again (0.5 s of a first launch with 120 MB): now the list glances at a big file
    never seen, or leaves the one to restore to the restore, and takes its facts from
    the opened session. The list ends up as a read of the file would make it."""
    from desktop_agent.session import _facts_scan as scan_module
    from desktop_agent.session import _index as index_module

    monkeypatch.setattr(scan_module, "GLANCE_BYTES", 2_000)
    data = tmp_path / "data"

    async def build(s: Session) -> None:
        for i in range(8):
            await s.append_message(user(f"question {i} " + "x" * 300))
            await s.append_message(answer(f"answer {i}"))

    path = await seed_async(data, workspace, build)
    if seen == "restored before":  # the app restored it, then another program wrote it
        state = {"last_session_path": path}
        (data / "state.json").write_text(json.dumps(state), encoding="utf-8")
    whole = scan_module.read_facts(path)
    reads: list[tuple[str, bool]] = []
    real = scan_module.read_facts

    def counting(p: str, *known: Any, glance: bool = False) -> Any:
        facts = real(p, *known, glance=glance)
        reads.append((p, scan_module.is_glance(facts)))
        return facts

    monkeypatch.setattr(index_module, "read_facts", counting)
    wb = make_workbench(data, provider.model("anthropic-messages"))
    await wb.start()
    await wb.restore()
    await wb.opened()
    assert wb.ref == path
    assert reads == ([(path, True)] if seen == "never" else [])  # a glance, or nothing
    [row] = wb.rows
    assert row.message_count == whole.message_count == 16
    assert row.title == whole.first_prompt
    assert wb.store.index is not None  # type: ignore[attr-defined]
    indexed = await wb.store.index.sessions()  # type: ignore[attr-defined]
    assert indexed[0].size == whole.size and indexed[0].entry_count == whole.entry_count
    await wb.shutdown(stop=True)
    await wb.aclose()


async def test_a_big_sessions_map_is_laid_out_once_across_launches(
    tmp_path: Path, workspace: Path, provider: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing a big session keeps its map's layout; the next launch takes it instead of
    laying the map out again, and the map is the one a layout makes."""
    from desktop_agent.workbench import WorkbenchLimits, _map_layout

    limits = WorkbenchLimits(map_min_rows=6)
    data = tmp_path / "data"

    async def build(s: Session) -> None:
        for i in range(5):
            await s.append_message(user(f"question {i}"))
            await s.append_message(answer(f"answer {i}"))

    path = await seed_async(data, workspace, build)
    layouts: list[int] = []
    real = _map_layout._emit_steps

    def counting(*args: Any) -> Any:
        layouts.append(1)
        return real(*args)

    monkeypatch.setattr(_map_layout, "_emit_steps", counting)
    rows: list[list[tuple[str, int]]] = []
    for _launch in range(2):
        wb = make_workbench(data, provider.model("anthropic-messages"), limits=limits)
        await wb.start()
        await wb.restore(path)
        assert (await wb.update_map()).reset
        rows.append([(r.entry_id, r.lane) for r in wb.map.rows])
        await wb.shutdown(stop=True)
        await wb.aclose()
    assert len(layouts) == 1  # the second launch took the kept layout
    assert rows[0] == rows[1] and len(rows[0]) == 10
    assert len(list((data / "cache" / "maps").glob("*.map"))) == 1
    assert WorkbenchLimits().map_min_rows > 6  # (small sessions keep nothing by default)


async def test_kept_map_layouts_are_a_bounded_cache_that_never_fails(
    tmp_path: Path,
) -> None:
    from desktop_agent.workbench._map_saved import SavedMaps

    maps = SavedMaps(tmp_path / "maps", keep=3)
    for i in range(5):
        maps.write(f"/s/{i}.jsonl", b"layout %d" % i)
        for kept in (tmp_path / "maps").glob("*.map"):  # (clock ticks may be coarse)
            if kept.read_bytes() == b"layout %d" % i:
                os.utime(kept, ns=(i * 10**9, i * 10**9))
    assert len(list((tmp_path / "maps").glob("*.map"))) == 3
    assert maps.read("/s/4.jsonl") == b"layout 4" and maps.read("/s/0.jsonl") is None
    maps.forget("/s/4.jsonl")
    assert maps.read("/s/4.jsonl") is None
    (tmp_path / "file").write_bytes(b"")
    broken = SavedMaps(tmp_path / "file" / "maps")  # cannot be made: nothing is raised
    broken.write("/s/x.jsonl", b"layout")
    assert broken.read("/s/x.jsonl") is None


@pytest.mark.parametrize("remembered", [True, False])
async def test_a_slow_first_index_of_our_folder_does_not_hold_up_the_window(
    tmp_path: Path,
    workspace: Path,
    provider: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    remembered: bool,
) -> None:
    """The index of our own folder built from scratch (a new install with sessions copied
    in, a deleted or damaged index: 10,000 sessions took 6 s with no window): start-up
    waits for it `WorkbenchLimits.index_wait_s` at most, the session remembered from last time is
    restored meanwhile and the list fills when it is done. With no session remembered,
    the newest of the whole list is restored (its choice waits for the list)."""
    from desktop_agent.workbench import WorkbenchLimits

    data = tmp_path / "data"

    async def build(s: Session) -> None:
        await s.append_message(user("hello"))

    older = await seed_async(data, workspace, build)
    newer = await seed_async(data, workspace, build)
    wb = make_workbench(data, provider.model("anthropic-messages"))
    await wb.start()
    await wb.restore(older if remembered else newer)  # remembered in state.json
    await wb.shutdown(stop=True)
    await wb.aclose()
    os.utime(newer, ns=(10**18, 10**18))  # the newest, whatever the clock did
    for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
        (data / name).unlink(missing_ok=True)
    if not remembered:
        state = json.loads((data / "state.json").read_text())
        state["last_session_path"] = None
        (data / "state.json").write_text(json.dumps(state))

    wb = make_workbench(
        data, provider.model("anthropic-messages"), limits=WorkbenchLimits(index_wait_s=0.05)
    )
    gate = asyncio.Event()  # a first index of thousands of files: it takes its time
    real_start = wb.store.start

    async def slow_start(*args: Any, **kwargs: Any) -> list[str]:
        await gate.wait()
        return await real_start(*args, **kwargs)

    monkeypatch.setattr(wb.store, "start", slow_start)
    try:
        await asyncio.wait_for(wb.start(), timeout=10)  # returns while the index runs
        restoring = asyncio.ensure_future(wb.restore())
        if remembered:
            await asyncio.wait_for(restoring, timeout=10)
            assert wb.ref == older and not gate.is_set()  # restored before the list
        else:
            await asyncio.sleep(0.2)
            assert not restoring.done()  # the newest is chosen from the whole list
        gate.set()
        await asyncio.wait_for(restoring, timeout=10)
        await asyncio.wait_for(wb.settled(), timeout=10)
        assert wb.ref == (older if remembered else newer)
        assert sorted(r.path for r in wb.rows) == sorted([older, newer])
    finally:
        gate.set()
        if wb.session is not None:
            await wb.shutdown(stop=True)
        await wb.aclose()
