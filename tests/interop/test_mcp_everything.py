"""The MCP client against the reference server, npm ``@modelcontextprotocol/server-everything``
(pinned in package.json), over stdio and over Streamable HTTP (issue 20, Acceptance)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_agent.ai import ImageContent
from desktop_agent.mcp import McpConfig, McpManager, McpServerConfig
from desktop_agent.tools import ToolContext, ToolResult, Workspace, run_tool
from tests.helpers.mcp_servers import free_port, tool, until
from tests.helpers.pi import NODE_MODULES, Pi

pytestmark = pytest.mark.interop

EVERYTHING = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def node_of(pi: Pi) -> str:
    if pi.node is None:
        pytest.fail(pi.setup_error or "Node.js is not available", pytrace=False)
    assert EVERYTHING.exists(), "npm ci did not install @modelcontextprotocol/server-everything"
    return pi.node


@pytest.fixture
def everything_http(pi: Pi) -> Iterator[str]:
    """server-everything over Streamable HTTP on 127.0.0.1; yields its URL."""
    node = node_of(pi)
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    process = subprocess.Popen(
        [node, str(EVERYTHING), "streamableHttp"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None, "server-everything exited"
                assert time.monotonic() < deadline, "server-everything did not listen in 60 s"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


async def exercise(manager: McpManager, name: str, tmp_path: Path) -> None:
    """Echo, a sum, an image and a long operation with progress, through `run_tool`."""
    status = await until(manager, name, "ready", within=60)
    assert status.tools >= 10
    names = {t.name for t in manager.tools()}
    assert {f"mcp__{name}__echo", f"mcp__{name}__get-sum"} <= names
    folder = tmp_path / "ws"
    folder.mkdir(exist_ok=True)
    updates: list[ToolResult] = []
    ctx = ToolContext(workspace=Workspace(folder), on_update=updates.append)

    async def call(tool_name: str, args: dict[str, object]) -> ToolResult:
        return await run_tool(tool(manager, f"mcp__{name}__{tool_name}"), "c", args, ctx)

    echo = await call("echo", {"message": "hello everything"})
    assert (echo.is_error, echo.text_content()) == (False, "Echo: hello everything")
    total = await call("get-sum", {"a": 2, "b": 3})
    assert "5" in total.text_content()
    image = await call("get-tiny-image", {})
    assert any(isinstance(b, ImageContent) for b in image.content)
    long = await call("trigger-long-running-operation", {"duration": 1, "steps": 2})
    assert "Long running operation completed" in long.text_content()
    assert [u.text_content() for u in updates] == ["1/2", "2/2"]
    bad = await call("get-sum", {"a": "two"})
    assert bad.is_error


@pytest.mark.asyncio
async def test_server_everything_over_stdio(pi: Pi, tmp_path: Path) -> None:
    config = McpServerConfig(command=node_of(pi), args=[str(EVERYTHING), "stdio"])
    manager = McpManager(McpConfig(servers={"everything": config}))
    manager.start()
    try:
        await exercise(manager, "everything", tmp_path)
    finally:
        await manager.close()


@pytest.mark.asyncio
async def test_server_everything_over_streamable_http(everything_http: str, tmp_path: Path) -> None:
    manager = McpManager(McpConfig(servers={"web": McpServerConfig(url=everything_http)}))
    manager.start()
    try:
        await exercise(manager, "web", tmp_path)
    finally:
        await manager.close()
