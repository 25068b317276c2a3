"""bash: streaming, timeout, process-group kill, scrubbed environment, truncation."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from desktop_agent.tools import BashParams, BashTool, ToolResult, run_tool
from tests.helpers.sandbox import Sandbox

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX process groups")


def live_members(pgid: int) -> list[int]:
    """Pids of the non-zombie processes in process group ``pgid`` (Linux /proc)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, group = fields[0], int(fields[2])
        if group == pgid and state not in ("Z", "X"):
            pids.append(int(entry))
    return pids


async def wait_group_gone(pgid: int, budget: float = 8.0) -> None:
    """No live member within 3 s; the group gone once the zombies are reaped."""
    if os.path.isdir("/proc"):
        await wait_for(lambda: live_members(pgid) == [], budget=3.0)
    deadline = time.monotonic() + budget
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"process group {pgid} still exists"
        await asyncio.sleep(0.05)


async def wait_for(predicate: object, budget: float = 5.0) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + budget
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


@pytest.mark.asyncio
async def test_runs_in_workspace_root_with_exit_code(sandbox: Sandbox) -> None:
    ok = await run_tool(BashTool(), "c", {"command": "pwd; echo err >&2"}, sandbox.ctx())
    assert not ok.is_error
    assert ok.text_content() == f"{sandbox.root}\nerr"
    assert ok.details is not None and ok.details["exitCode"] == 0
    failed = await run_tool(BashTool(), "c", {"command": "echo no; exit 3"}, sandbox.ctx())
    assert failed.is_error
    assert failed.text_content() == "no\n\nCommand exited with code 3."
    assert failed.details is not None and failed.details["exitCode"] == 3
    quiet = await run_tool(BashTool(), "c", {"command": "true"}, sandbox.ctx())
    assert quiet.text_content() == "(no output)"


@pytest.mark.asyncio
async def test_output_streams_through_on_update(sandbox: Sandbox) -> None:
    tool = BashTool(update_interval=0)
    seen_before_end: list[str] = []

    async def on_update(partial: ToolResult) -> None:
        seen_before_end.append(partial.text_content())
        if partial.text_content() == "one":
            (sandbox.root / "go").touch()  # the command waits for this before "two"

    ctx = sandbox.ctx()
    ctx.on_update = on_update
    command = "echo one; while [ ! -e go ]; do sleep 0.01; done; echo two"
    result = await run_tool(tool, "c", {"command": command, "timeout": 10}, ctx)
    assert result.text_content() == "one\ntwo"
    assert seen_before_end[0] == "one"
    assert seen_before_end[-1] == "one\ntwo"


@pytest.mark.asyncio
async def test_timeout_kills_the_command(sandbox: Sandbox) -> None:
    start = time.monotonic()
    result = await run_tool(
        BashTool(), "c", {"command": "echo begun; sleep 30", "timeout": 0.5}, sandbox.ctx()
    )
    assert time.monotonic() - start < 5
    assert result.is_error
    assert result.text_content().startswith("begun\n\nCommand timed out after 0.5 seconds")
    assert result.details is not None and result.details["timedOut"] is True
    await wait_group_gone(result.details["pid"])


@pytest.mark.asyncio
async def test_cancel_kills_the_whole_process_tree(sandbox: Sandbox) -> None:
    ctx = sandbox.ctx()
    command = "echo started; sh -c 'sleep 100 & sleep 100 & wait'"
    tool = BashTool(update_interval=0)
    task = asyncio.create_task(tool.execute("c", BashParams(command=command), ctx))
    await wait_for(lambda: any("started" in u.text_content() for u in sandbox.updates))
    # The group is led by the process the tool started (bwrap when sandboxed: inside its
    # PID namespace the shell's own $$ is not the host's pid).
    details = sandbox.updates[0].details
    assert details is not None
    pgid = int(details["pid"])
    await wait_for(lambda: len(live_members(pgid)) >= 3)  # (bwrap, bash,) sh, sleep, sleep
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_group_gone(pgid)


@pytest.mark.asyncio
async def test_background_children_do_not_outlive_a_finished_command(sandbox: Sandbox) -> None:
    start = time.monotonic()
    result = await run_tool(BashTool(), "c", {"command": "sleep 100 & echo started"}, sandbox.ctx())
    assert time.monotonic() - start < 5
    assert result.text_content() == "started"
    assert result.details is not None
    await wait_group_gone(result.details["pid"])


@pytest.mark.asyncio
async def test_environment_has_no_provider_keys(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    canaries = {
        "OPENAI_API_KEY": "sk-canary-openai-0000000000000000",
        "ANTHROPIC_API_KEY": "sk-ant-api03-canary0000000000000000",
        "ANTHROPIC_AUTH_TOKEN": "canary-auth",
        "MY_SERVICE_TOKEN": "canary-token",
        "DEPLOY_SECRET": "canary-secret",
        "custom_api_key": "canary-lower",
        "INNOCENT_LOOKING": "sk-ant-api03-canaryvalue00000000000000",
        "GH_STUFF": "ghp_canary0000000000000000000000000000",
    }
    for name, value in canaries.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    result = await run_tool(BashTool(), "c", {"command": "env"}, sandbox.ctx())
    text = result.text_content()
    assert "HARMLESS_SETTING=visible" in text
    assert "canary" not in text
    for name in canaries:
        assert f"{name}=" not in text


@pytest.mark.asyncio
async def test_large_output_keeps_the_tail_and_the_full_file(sandbox: Sandbox) -> None:
    result = await run_tool(BashTool(), "call/../1", {"command": "seq 1 100000"}, sandbox.ctx())
    text = result.text_content()
    assert not result.is_error
    assert result.details is not None and result.details["truncated"] is True
    assert len(text.encode()) < 52 * 1024
    assert "\n100000\n" in text
    assert not text.startswith("1\n")
    full = Path(result.details["fullOutputPath"])
    assert full.parent == sandbox.output_dir
    assert "/" not in full.name.removeprefix("bash-")
    assert full.read_text() == "".join(f"{i}\n" for i in range(1, 100001))
    assert f"Full output: {full}" in text
    assert "588895 bytes in all" in text


@pytest.mark.asyncio
async def test_small_limits_are_respected(sandbox: Sandbox) -> None:
    tool = BashTool(max_output_lines=3)
    result = await run_tool(tool, "c", {"command": "seq 1 10"}, sandbox.ctx())
    assert result.text_content().startswith("8\n9\n10\n\n[Output truncated: showing the last 3")
    assert result.details is not None
    assert Path(result.details["fullOutputPath"]).read_text().startswith("1\n2\n")


def test_preview_shows_argv_and_cwd_comes_from_workspace(sandbox: Sandbox) -> None:
    tool = BashTool()
    preview = tool.preview(tool.parse_arguments({"command": "ls -la"}), sandbox.ctx())
    assert preview.command is not None
    assert preview.command[-2:] == ("-c", "ls -la")
    assert preview.summary == "ls -la"
