"""Helpers of the MCP tests: configs of the test server (tests/helpers/mcp_server.py), a free
port, and waiting for a server's status."""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from pathlib import Path

from desktop_agent.mcp import McpManager, McpServerConfig, McpTool, ServerStatus

REPO = Path(__file__).resolve().parents[2]


def stdio_server(*flags: str, **extra: object) -> McpServerConfig:
    """A config that starts the test server over stdio with ``flags``."""
    return McpServerConfig.model_validate(
        {
            "command": sys.executable,
            "args": ["-m", "tests.helpers.mcp_server", *flags],
            "cwd": str(REPO),
            **extra,
        }
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def until(manager: McpManager, name: str, *states: str, within: float = 30) -> ServerStatus:
    """Wait until the server's status is one of ``states``."""
    deadline = time.monotonic() + within
    while True:
        status = next(s for s in manager.statuses() if s.name == name)
        if status.state in states:
            return status
        assert time.monotonic() < deadline, f"{name} stayed {status.state}: {status.detail}"
        await asyncio.sleep(0.02)


def tool(manager: McpManager, name: str) -> McpTool:
    return next(t for t in manager.tools() if t.name == name)
