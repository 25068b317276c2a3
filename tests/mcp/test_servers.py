"""The MCP client against real servers (MCPServer of the SDK over stdio and Streamable HTTP):
statuses, tools, results of every kind, errors, Stop, timeouts, crashes, list changes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from desktop_agent.ai import ImageContent, TextContent
from desktop_agent.mcp import McpConfig, McpManager, McpServerConfig
from desktop_agent.tools import ToolContext, ToolResult, Workspace, run_tool
from tests.helpers.mcp_servers import free_port, stdio_server, tool, until


@pytest_asyncio.fixture
async def manager(tmp_path: Path) -> AsyncIterator[McpManager]:
    config = McpConfig(servers={"test": stdio_server("--log", str(tmp_path / "server.log"))})
    manager = McpManager(config)
    manager.start()
    yield manager
    await manager.close()


def context(tmp_path: Path, updates: list[ToolResult] | None = None) -> ToolContext:
    folder = tmp_path / "ws"
    folder.mkdir(exist_ok=True)
    return ToolContext(
        workspace=Workspace(folder), on_update=updates.append if updates is not None else None
    )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_stdio_server_starts_in_the_background_and_offers_its_tools_by_full_name(
    manager: McpManager, tmp_path: Path
) -> None:
    assert [s.state for s in manager.statuses()] == ["starting"]
    status = await until(manager, "test", "ready")
    assert status.tools == 7
    names = sorted(t.name for t in manager.tools())
    assert names == [
        "mcp__test__crash",
        "mcp__test__document",
        "mcp__test__echo",
        "mcp__test__fail",
        "mcp__test__grow",
        "mcp__test__picture",
        "mcp__test__slow",
    ]
    echo = tool(manager, "mcp__test__echo")
    definition = echo.definition()
    assert definition.description == "Echo the text back."
    assert definition.json_schema()["required"] == ["text"]
    result = await run_tool(echo, "c1", {"text": "hello"}, context(tmp_path))
    assert (result.is_error, result.text_content()) == (False, "echo: hello")
    assert result.details == {"mcp": {"server": "test", "tool": "echo"}}


@pytest.mark.slow
@pytest.mark.asyncio
async def test_errors_images_and_resources_come_back_as_tool_results(
    manager: McpManager, tmp_path: Path
) -> None:
    await until(manager, "test", "ready")
    ctx = context(tmp_path)
    failed = await run_tool(tool(manager, "mcp__test__fail"), "c1", {"reason": "nope"}, ctx)
    assert failed.is_error
    assert "it failed: nope" in failed.text_content()
    picture = await run_tool(tool(manager, "mcp__test__picture"), "c2", {}, ctx)
    assert isinstance(picture.content[0], ImageContent)
    assert picture.content[0].mime_type == "image/png"
    document = await run_tool(tool(manager, "mcp__test__document"), "c3", {}, ctx)
    assert document.content == [TextContent(text="[resource memo://one]\nmemo text")]


@pytest.mark.slow
@pytest.mark.asyncio
async def test_stop_cancels_the_call_on_the_server_and_progress_reaches_the_card(
    manager: McpManager, tmp_path: Path
) -> None:
    await until(manager, "test", "ready")
    updates: list[ToolResult] = []
    slow = tool(manager, "mcp__test__slow")
    task = asyncio.ensure_future(run_tool(slow, "c1", {"seconds": 30}, context(tmp_path, updates)))
    deadline = time.monotonic() + 20
    while not updates:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    assert updates[0].text_content() == "1/3 started"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    log = tmp_path / "server.log"
    while "slow cancelled" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the server never heard of the cancellation"
        await asyncio.sleep(0.05)
    echo = await run_tool(
        tool(manager, "mcp__test__echo"), "c2", {"text": "after"}, context(tmp_path)
    )
    assert echo.text_content() == "echo: after"


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_call_longer_than_the_server_timeout_is_an_error_result(tmp_path: Path) -> None:
    manager = McpManager(McpConfig(servers={"t": stdio_server(timeout=0.5)}))
    manager.start()
    try:
        await until(manager, "t", "ready")
        result = await run_tool(
            tool(manager, "mcp__t__slow"), "c1", {"seconds": 20}, context(tmp_path)
        )
        assert result.is_error
        assert result.text_content() == "The MCP server 't' did not finish 'slow' within 0.5 s."
    finally:
        await manager.close()


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_server_that_dies_mid_call_gives_an_error_naming_it_and_comes_back(
    manager: McpManager, tmp_path: Path
) -> None:
    await until(manager, "test", "ready")
    result = await run_tool(tool(manager, "mcp__test__crash"), "c1", {}, context(tmp_path))
    assert result.is_error
    text = result.text_content()
    assert text.startswith("The MCP server 'test' stopped during the call")
    assert "about to crash: goodbye" in text  # the last lines of its stderr
    status = next(s for s in manager.statuses() if s.name == "test")
    assert status.state == "failed"
    assert "stopped unexpectedly" in status.detail
    await until(manager, "test", "ready")  # restarted after the back-off
    echo = await run_tool(
        tool(manager, "mcp__test__echo"), "c2", {"text": "back"}, context(tmp_path)
    )
    assert echo.text_content() == "echo: back"


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_server_that_never_initializes_fails_with_a_notice_after_its_timeout() -> None:
    manager = McpManager(McpConfig(servers={"mute": stdio_server("--never-init", initTimeout=2)}))
    manager.start()
    try:
        status = await until(manager, "mute", "failed", within=20)
        assert status.detail.startswith("did not finish initialize in 2 s")
        assert "test server starting" in status.detail  # its stderr
        assert manager.tools() == []
    finally:
        await manager.close()


@pytest.mark.asyncio
async def test_a_command_that_does_not_exist_fails_with_a_clear_reason() -> None:
    config = McpServerConfig(command="/nonexistent/mcp-server-xyz")
    manager = McpManager(McpConfig(servers={"ghost": config}))
    manager.start()
    try:
        status = await until(manager, "ghost", "failed")
        assert "/nonexistent/mcp-server-xyz" in status.detail
    finally:
        await manager.close()


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_changed_tool_list_is_offered_at_once(manager: McpManager, tmp_path: Path) -> None:
    await until(manager, "test", "ready")
    heard: list[int] = []
    manager.subscribe(lambda: heard.append(len(manager.tools())))
    await run_tool(tool(manager, "mcp__test__grow"), "c1", {}, context(tmp_path))
    deadline = time.monotonic() + 20
    while "mcp__test__extra" not in {t.name for t in manager.tools()}:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    assert heard[-1] == 8
    extra = await run_tool(tool(manager, "mcp__test__extra"), "c2", {}, context(tmp_path))
    assert extra.text_content() == "extra here"


@pytest.mark.slow
@pytest.mark.asyncio
async def test_allow_list_restart_and_disabled_servers(tmp_path: Path) -> None:
    marker = str(tmp_path / "small.log")  # in its command line: finds its processes
    config = McpConfig(
        servers={
            "small": stdio_server("--log", marker, allowedTools=["echo"]),
            "off": stdio_server(disabled=True),
        }
    )
    manager = McpManager(config)
    manager.start()
    try:
        await until(manager, "small", "ready")
        assert [t.name for t in manager.tools()] == ["mcp__small__echo"]
        off = next(s for s in manager.statuses() if s.name == "off")
        assert (off.state, off.detail) == ("stopped", "disabled")
        first = processes_with(marker)
        assert len(first) == 1
        await manager.restart("small")
        await until(manager, "small", "ready")
        assert [t.name for t in manager.tools()] == ["mcp__small__echo"]
        second = processes_with(marker)
        assert len(second) == 1 and second != first  # the old process has ended
    finally:
        await manager.close()
    assert processes_with(marker) == set()


def processes_with(marker: str) -> set[int]:
    """The live processes whose command line holds ``marker`` (Linux /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().split(") ", 1)[1][:1]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state != "Z":
            found.add(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.asyncio
async def test_streamable_http_server_with_headers(http_server: str, tmp_path: Path) -> None:
    config = McpServerConfig.model_validate(
        {"url": http_server, "headers": {"Authorization": "Bearer test-token-123"}}
    )
    assert config.transport == "http"
    manager = McpManager(McpConfig(servers={"web": config}))
    manager.start()
    try:
        status = await until(manager, "web", "ready")
        assert (status.tools, status.transport) == (7, "http")
        ctx = context(tmp_path)
        echo = await run_tool(tool(manager, "mcp__web__echo"), "c1", {"text": "over http"}, ctx)
        assert echo.text_content() == "echo: over http"
        picture = await run_tool(tool(manager, "mcp__web__picture"), "c2", {}, ctx)
        assert isinstance(picture.content[0], ImageContent)
        updates: list[ToolResult] = []
        slow = tool(manager, "mcp__web__slow")
        task = asyncio.ensure_future(
            run_tool(slow, "c3", {"seconds": 30}, context(tmp_path, updates))
        )
        deadline = time.monotonic() + 20
        while not updates:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        await manager.close()


@pytest.mark.slow
@pytest.mark.asyncio
async def test_legacy_sse_server(sse_server: str, tmp_path: Path) -> None:
    config = McpServerConfig.model_validate({"type": "sse", "url": sse_server})
    assert config.transport == "sse"
    manager = McpManager(McpConfig(servers={"old": config}))
    manager.start()
    try:
        status = await until(manager, "old", "ready")
        assert (status.tools, status.transport) == (7, "sse")
        echo_tool = tool(manager, "mcp__old__echo")
        echo = await run_tool(echo_tool, "c1", {"text": "over sse"}, context(tmp_path))
        assert echo.text_content() == "echo: over sse"
    finally:
        await manager.close()


@pytest.mark.asyncio
async def test_an_http_server_that_is_not_there_fails_with_the_http_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    manager = McpManager(McpConfig(servers={"gone": McpServerConfig(url=url, init_timeout=10)}))
    manager.start()
    try:
        status = await until(manager, "gone", "failed", within=20)
        assert status.detail.startswith("ConnectError"), status.detail
    finally:
        await manager.close()
