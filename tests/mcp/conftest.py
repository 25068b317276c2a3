"""Real MCP servers for the tests: the SDK's MCPServer (tests/helpers/mcp_server.py) as a
subprocess over stdio, or over Streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.mcp_servers import REPO, free_port


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """The test server over Streamable HTTP; yields its URL."""
    yield from _serve(tmp_path, "--http", "/mcp")


@pytest.fixture
def sse_server(tmp_path: Path) -> Iterator[str]:
    """The test server over the legacy SSE transport; yields its URL."""
    yield from _serve(tmp_path, "--sse", "/sse")


def _serve(tmp_path: Path, flag: str, endpoint: str) -> Iterator[str]:
    port = free_port()
    log = tmp_path / "http-server.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.mcp_server", flag, str(port), "--log", str(log)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise AssertionError("the HTTP test server did not listen within 30 s")
        yield f"http://127.0.0.1:{port}{endpoint}"
    finally:
        process.terminate()
        process.wait(10)
