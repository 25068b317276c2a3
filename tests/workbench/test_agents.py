"""Several agents at once, without Qt (issue 22 items 2 and 4): switching sessions never
stops a run, a session not shown is released once it is idle, its approvals wait for the
person, Stop stops only the session shown, and two runs in one folder are warned of
(and files are not put back there while the other runs)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop_agent.session import Session
from desktop_agent.tools import ApprovalDecision, ApprovalRequest
from desktop_agent.workbench import RunEndedEvent, Workbench, WorkbenchError
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec
from tests.helpers.workbench import Recorder, make_workbench

pytestmark = pytest.mark.asyncio


async def until(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    """Let the loop run until ``predicate`` holds."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def last_stop(ref: str) -> str | None:
    """The stop reason of the last message written to the session file ``ref``."""
    for line in reversed(Path(ref).read_text().splitlines()):
        entry = json.loads(line)
        if entry.get("type") == "message":
            reason: str | None = entry["message"].get("stopReason")
            return reason
    return None


def running(wb: Workbench) -> bool:
    """Whether the session shown runs (a call: no narrowing between operations)."""
    return wb.running


def requested(provider: ProviderServer, key: str) -> bool:
    """Whether a request holding ``key`` reached the server (the SDK is loaded and its
    stream open: a Stop now is a Stop of a streaming reply, not of an import)."""
    return any(r.method == "POST" and key in json.dumps(r.body) for r in provider.requests)


def activity(wb: Workbench, ref: str) -> str:
    row = wb.row_for(ref)
    return row.activity if row is not None else "(no row)"


async def started(tmp_path: Path, provider: ProviderServer) -> tuple[Workbench, Recorder]:
    wb = make_workbench(tmp_path / "data", provider.model("anthropic-messages"))
    recorder = Recorder()
    wb.subscribe(recorder)
    await wb.start()
    return wb, recorder


async def finish(wb: Workbench) -> None:
    await wb.shutdown(stop=True)
    await wb.aclose()


def slow(text: str, delay: float = 0.01) -> Reply:
    return Reply(text=[text[i : i + 3] for i in range(0, len(text), 3)], delay_s=delay)


async def test_switching_sessions_keeps_the_run_and_releases_idle_sessions(
    tmp_path: Path, provider: ProviderServer, workspace: Path
) -> None:
    wb, recorder = await started(tmp_path, provider)
    try:
        await wb.new_session(str(workspace))
        a = wb.ref
        assert a is not None
        provider.script_for("alpha question", slow("the whole answer of alpha", 0.03))
        run_a = asyncio.ensure_future(wb.send("alpha question"))
        await until(lambda: running(wb))
        await wb.new_session(str(workspace))  # Ctrl+N: never "Stop the agent first"
        b = wb.ref
        assert b is not None and b != a and not running(wb) and not run_a.done()
        assert set(wb.open_sessions) == {a, b}
        row_a = wb.row_for(a)
        assert row_a is not None and row_a.activity == "running"
        assert row_a.run_started is not None
        provider.script_for("beta question", Reply(text="beta's answer"))
        await wb.send("beta question")  # answered while A still streams
        assert not run_a.done() and last_stop(b) == "stop"
        await wb.open(a)  # back to A while it runs: it is shown again, still running
        assert running(wb) and wb.ref == a
        assert b not in wb.open_sessions  # idle and not shown: released
        await wb.new_session(str(workspace))
        c = wb.ref
        await asyncio.wait_for(run_a, 60)
        await until(lambda: a not in wb.open_sessions)  # its run ended: released too
        assert last_stop(a) == "stop" and activity(wb, a) == "finished"
        ended = [e for e in recorder.events if isinstance(e, RunEndedEvent)]
        assert [(e.ref, e.failed, e.waiting) for e in ended] == [(a, False, False)]
        assert "the whole answer of alpha" in Path(a).read_text()
        assert "alpha" not in Path(b).read_text()  # nothing of A went into B
        await wb.open(a)  # seen: the row no longer says finished
        assert activity(wb, a) == "" and c not in wb.open_sessions  # (empty C discarded)
    finally:
        await finish(wb)


async def test_approvals_of_a_session_not_shown_wait_for_the_person(
    tmp_path: Path, provider: ProviderServer, workspace: Path
) -> None:
    wb, recorder = await started(tmp_path, provider)
    wb.settings.approval["bash"] = "ask"
    asked: list[tuple[str | None, str]] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append((wb.ref, request.tool_name))
        return ApprovalDecision.ALLOW_ONCE

    wb.approver = approver
    try:
        await wb.new_session(str(workspace))
        a = wb.ref
        assert a is not None
        call = ToolCallSpec("call_1", "bash", {"command": "echo approved"})
        provider.script_for(
            "gamma task", Reply(tool_calls=[call], delay_s=0.05), Reply(text="all done")
        )
        run_a = asyncio.ensure_future(wb.send("gamma task"))
        await until(lambda: running(wb))
        await wb.new_session(str(workspace))
        await until(lambda: activity(wb, a) == "waiting")
        await asyncio.sleep(0.3)
        assert asked == [] and not run_a.done()  # never approved by itself
        waiting = [e for e in recorder.events if isinstance(e, RunEndedEvent) and e.waiting]
        assert [e.ref for e in waiting] == [a]
        await wb.open(a)  # the person comes back: now they are asked
        await asyncio.wait_for(run_a, 60)
        assert asked == [(a, "bash")]
        assert last_stop(a) == "stop" and "approved" in Path(a).read_text()
    finally:
        await finish(wb)


async def test_stop_stops_only_the_session_shown(
    tmp_path: Path, provider: ProviderServer, workspace: Path
) -> None:
    wb, _ = await started(tmp_path, provider)
    try:
        await wb.new_session(str(workspace))
        a = wb.ref
        assert a is not None
        provider.script_for("delta long", Reply(text=["a", "b", "c"], stall_after=3, stall_s=30))
        run_a = asyncio.ensure_future(wb.send("delta long"))
        await until(lambda: requested(provider, "delta long"), 60)  # (the SDK's first import)
        await wb.new_session(str(workspace))
        b = wb.ref
        provider.script_for("epsilon long", Reply(text=["x", "y", "z"], stall_after=3, stall_s=30))
        run_b = asyncio.ensure_future(wb.send("epsilon long"))
        await until(lambda: requested(provider, "epsilon long"), 60)
        await wb.stop()
        await asyncio.wait_for(run_b, 15)
        assert last_stop(b or "") == "aborted"
        await asyncio.sleep(0.2)
        assert not run_a.done() and activity(wb, a) == "running"
        await wb.open(a)
        await wb.stop()
        await asyncio.wait_for(run_a, 60)
        assert last_stop(a) == "aborted"
    finally:
        await finish(wb)


async def test_a_second_run_in_one_folder_warns_once_and_files_wait_for_the_other_run(
    tmp_path: Path, provider: ProviderServer, workspace: Path
) -> None:
    wb = make_workbench(tmp_path / "data", provider.model("anthropic-messages"), checkpoints=True)
    await wb.start()
    try:
        await wb.new_session(str(workspace))
        a = wb.ref
        assert a is not None
        provider.script_for("zeta long", Reply(text=["a", "b"], stall_after=2, stall_s=30))
        run_a = asyncio.ensure_future(wb.send("zeta long"))
        await until(lambda: running(wb))
        await wb.new_session(str(workspace))
        assert "same_folder" not in wb.notices  # nothing runs here yet
        provider.script_for("eta short", Reply(text="quick"), Reply(text="quick again"))
        await wb.send("eta short")
        assert "same_folder" in wb.notices
        assert str(workspace) in wb.notices["same_folder"].english
        await wb.dismiss("same_folder")
        await wb.send("eta short again")
        assert "same_folder" not in wb.notices  # once
        with pytest.raises(WorkbenchError, match="Another session's agent is working"):
            await wb.restore_branch_files()
        await wb.open(a)
        await wb.stop()
        await asyncio.wait_for(run_a, 60)
    finally:
        await finish(wb)


async def test_a_prompt_sent_while_the_new_session_is_being_made_waits_for_it(
    tmp_path: Path, provider: ProviderServer, workspace: Path
) -> None:
    """Ctrl+N and Enter at once: the session is shown before its harness is built; the
    prompt waits for it instead of finding no model (and its card is not redrawn away)."""
    wb, _ = await started(tmp_path, provider)
    # The new session is held after it is shown and before it is ready (its store's
    # `changed`), so the prompt surely comes in between (a 10 ms poll raced with it).
    gate = asyncio.Event()
    real_changed = wb.store.changed

    async def held(ref: str, opened: Session | None = None) -> None:
        await gate.wait()
        await real_changed(ref, opened)

    wb.store.changed = held  # type: ignore[method-assign]
    try:
        making = asyncio.ensure_future(wb.new_session(str(workspace)))
        await until(lambda: wb.ref is not None)
        shown = wb.shown
        assert shown is not None and not shown.ready.is_set() and not making.done()
        provider.script_for("theta at once", Reply(text="theta's answer"))
        sending = asyncio.ensure_future(wb.send("theta at once"))
        await asyncio.sleep(0.1)
        assert not sending.done()
        assert not [r for r in provider.requests if "theta at once" in json.dumps(r.body)]
        gate.set()
        await sending
        assert making.done() and shown.ready.is_set()
        assert last_stop(wb.ref or "") == "stop"
        assert "theta at once" in Path(wb.ref or "").read_text()
    finally:
        await finish(wb)
