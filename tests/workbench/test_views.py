"""Windows over one workbench, without Qt (issue 22 item 3): each view shows its own
session and map; operations act on the active view's; a session is shown in one view at
most (asking for it elsewhere brings its view forward); a view's listeners hear its own
session's events and what every view shares; closing a view keeps its run going."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop_agent.workbench import (
    Changes,
    MessageEndEvent,
    RaiseViewEvent,
    RunEndedEvent,
    Workbench,
)
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.workbench import Recorder, make_workbench

pytestmark = pytest.mark.asyncio


async def until(predicate: Callable[[], bool], timeout: float = 15.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def last_stop(ref: str) -> str | None:
    for line in reversed(Path(ref).read_text().splitlines()):
        entry = json.loads(line)
        if entry.get("type") == "message":
            reason: str | None = entry["message"].get("stopReason")
            return reason
    return None


def slow(text: str, delay: float = 0.02) -> Reply:
    return Reply(text=[text[i : i + 3] for i in range(0, len(text), 3)], delay_s=delay)


def ref_in(wb: Workbench, view: int) -> str | None:
    with wb.viewing(view):
        return wb.ref


def running_in(wb: Workbench, view: int) -> bool:
    with wb.viewing(view):
        return wb.running


def answers(recorder: Recorder) -> list[str]:
    """The text of every answer a listener heard end."""
    out: list[str] = []
    for event in recorder.events:
        if isinstance(event, MessageEndEvent) and event.message.role == "assistant":
            blocks = getattr(event.message, "content", [])
            out.append("".join(getattr(b, "text", "") for b in blocks if not isinstance(b, str)))
    return out


async def started(tmp_path: Path, provider: ProviderServer) -> Workbench:
    wb = make_workbench(tmp_path / "data", provider.model("anthropic-messages"))
    await wb.start()
    return wb


async def finish(wb: Workbench) -> None:
    await wb.shutdown(stop=True)
    await wb.aclose()


async def test_each_view_shows_its_own_session_and_hears_its_own_run(
    tmp_path: Path, provider: ProviderServer, workspace: Path
) -> None:
    wb = await started(tmp_path, provider)
    first, second = Recorder(), Recorder()
    wb.subscribe(first, 0)
    try:
        await wb.new_session(str(workspace))
        a = wb.ref
        assert a is not None
        provider.script_for("alpha question", slow("the long answer of alpha"))
        run_a = asyncio.ensure_future(wb.send("alpha question"))
        await until(lambda: wb.running)
        view = wb.add_view()  # a second window: it shows nothing yet
        wb.subscribe(second, view)
        assert wb.activate_view(view) == Changes(notices=True)
        assert ref_in(wb, view) is None and wb.active_view == view
        await wb.new_session(str(workspace))
        b = wb.ref
        assert b is not None and b != a and not wb.running
        assert ref_in(wb, 0) == a and running_in(wb, 0)  # the first view's run goes on
        assert wb.map_of(0) is not wb.map_of(view) and wb.map is wb.map_of(view)
        provider.script_for("beta question", Reply(text="beta's answer"))
        await wb.send("beta question")  # answered in the second view while A streams
        assert not run_a.done() and last_stop(b) == "stop"
        await asyncio.wait_for(run_a, 15)
        assert last_stop(a) == "stop"
        # Each view heard its own session's run, and the list changes of both.
        assert answers(first) == ["the long answer of alpha"]
        assert answers(second) == ["beta's answer"]
        assert any(isinstance(e, Changes) and e.sessions for e in second.events)
        assert all(
            not (isinstance(e, Changes) and e.session) for e in first.events[-20:]
        )  # the second view's new session is not the first view's
        # A run that ended in a session shown in a window is no "finished elsewhere".
        assert not [e for e in first.events + second.events if isinstance(e, RunEndedEvent)]
        rows = {r.path: r for r in wb.rows}
        assert a in rows and b in rows
    finally:
        await finish(wb)


async def test_a_session_shows_in_one_view_only_and_moves_to_a_new_one(
    tmp_path: Path, provider: ProviderServer, workspace: Path
) -> None:
    wb = await started(tmp_path, provider)
    first, second = Recorder(), Recorder()
    wb.subscribe(first, 0)
    try:
        await wb.new_session(str(workspace))
        a = wb.ref
        assert a is not None
        provider.script_for("alpha", Reply(text="alpha's answer"))
        await wb.send("alpha")
        view = wb.add_view()
        wb.subscribe(second, view)
        wb.activate_view(view)
        await wb.new_session(str(workspace))
        b = wb.ref
        assert b is not None
        provider.script_for("beta", Reply(text="beta's answer"))
        await wb.send("beta")
        # Asking for A in the second view brings the first forward: never shown twice.
        first.events.clear()
        assert await wb.open(a) == Changes()
        assert wb.ref == b and ref_in(wb, 0) == a and wb.view_showing(a) == 0
        assert [e for e in first.events if isinstance(e, RaiseViewEvent)] == [RaiseViewEvent(0, a)]
        assert not [e for e in second.events if isinstance(e, RaiseViewEvent)]
        # "Open in new window" of the first view's session: a third view takes it.
        third = wb.add_view()
        wb.activate_view(third)
        await wb.open(a, take=True)
        assert wb.ref == a and ref_in(wb, 0) is None and wb.view_showing(a) == third
        assert a in wb.open_sessions
        # Closing a view whose session is idle releases it; the last view stays.
        await wb.close_view(view)
        assert b not in wb.open_sessions and wb.view_showing(b) is None
        assert wb.active_view == third
        await wb.close_view(third)
        await wb.close_view(0)  # the last one: kept (closing it quits the app)
        assert wb.active_view == 0 and wb.ref is None
    finally:
        await finish(wb)


async def test_closing_a_view_keeps_its_run_and_the_row_says_running(
    tmp_path: Path, provider: ProviderServer, workspace: Path
) -> None:
    wb = await started(tmp_path, provider)
    recorder = Recorder()
    wb.subscribe(recorder)
    try:
        await wb.new_session(str(workspace))
        view = wb.add_view()
        wb.activate_view(view)
        await wb.new_session(str(workspace))
        b = wb.ref
        assert b is not None
        provider.script_for("beta question", slow("the whole answer of beta", 0.03))
        run_b = asyncio.ensure_future(wb.send("beta question"))
        await until(lambda: wb.running)
        await wb.close_view(view)  # the window closes while its run streams
        assert wb.active_view == 0 and wb.ref != b
        row = wb.row_for(b)
        assert row is not None and row.activity == "running" and b in wb.open_sessions
        assert wb.runs_active == 1
        await asyncio.wait_for(run_b, 15)
        await until(lambda: b not in wb.open_sessions)  # released once it ended
        assert last_stop(b) == "stop" and "the whole answer of beta" in Path(b).read_text()
        ended = [e for e in recorder.events if isinstance(e, RunEndedEvent)]
        assert [(e.ref, e.failed) for e in ended] == [(b, False)]  # told: shown nowhere
        row = wb.row_for(b)
        assert row is not None and row.activity == "finished"
    finally:
        await finish(wb)
