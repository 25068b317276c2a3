"""`workbench.McpServers` below the window: secret values typed in the servers dialog go
to the keychain (the file says ``${keychain}``) and reach the server's process, a broken
mcp.json is a notice, and without a keychain the secret stays in the file, said so."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import keyring.backends.fail
import pytest

from desktop_agent.config import SERVICE, KeyStore
from desktop_agent.mcp import KEYCHAIN
from desktop_agent.utils import Redactor
from desktop_agent.workbench import Changes, McpConfigError, McpServers
from desktop_agent.workbench._mcp import mcp_changed
from tests.helpers.keyring import MemoryKeyring
from tests.helpers.mcp_servers import REPO, until

TOKEN = "tok-abcdef1234567890"


def entry(log: Path, token: str = TOKEN) -> str:
    return json.dumps(
        {
            "command": sys.executable,
            "args": ["-m", "tests.helpers.mcp_server", "--log", str(log)],
            "cwd": str(REPO),
            "env": {"MCP_TEST_SECRET_TOKEN": token, "LOG_LEVEL": "info-and-more"},
        }
    )


async def wait_for_line(path: Path, line: str) -> None:
    deadline = time.monotonic() + 30
    while line not in (path.read_text().splitlines() if path.exists() else []):
        assert time.monotonic() < deadline, f"{line!r} never came"
        await asyncio.sleep(0.05)


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_typed_secret_goes_to_the_keychain_and_reaches_the_server(tmp_path: Path) -> None:
    path = tmp_path / "config" / "mcp.json"
    ring = MemoryKeyring()
    redactor = Redactor()
    servers = McpServers.load(path, redactor=redactor)
    servers.keys = KeyStore(backend=ring, environ={})
    await servers.start()
    log = tmp_path / "server.log"
    await servers.put("s", entry(log))
    saved = json.loads(path.read_text())["mcpServers"]["s"]["env"]
    assert saved == {"MCP_TEST_SECRET_TOKEN": KEYCHAIN, "LOG_LEVEL": "info-and-more"}
    assert TOKEN not in path.read_text()
    assert ring.get_password(SERVICE, "mcp/s/env/MCP_TEST_SECRET_TOKEN") == TOKEN
    assert redactor.redact(f"echo {TOKEN}") == "echo [redacted: MCP server secret]"
    await until(servers.manager, "s", "ready")
    await wait_for_line(log, f"secret {TOKEN}")
    # Editing shows the file's form (no secret), and saving it unchanged keeps the value.
    row = servers.rows()[0]
    assert TOKEN not in row.entry and KEYCHAIN in row.entry
    await servers.put("s", row.entry, old="s")
    assert json.loads(path.read_text())["mcpServers"]["s"]["env"] == saved
    assert servers.manager.statuses()[0].state == "ready"  # the same server: not restarted
    await servers.close()

    # The next launch reads it back from the keychain.
    log.unlink()
    again = McpServers.load(path, redactor=Redactor())
    again.keys = KeyStore(backend=ring, environ={})
    await again.start()
    try:
        await until(again.manager, "s", "ready")
        await wait_for_line(log, f"secret {TOKEN}")
    finally:
        await again.close()


@pytest.mark.asyncio
async def test_without_a_keychain_the_secret_stays_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    servers = McpServers.load(path)
    servers.keys = KeyStore(backend=keyring.backends.fail.Keyring(), environ={})  # type: ignore[no-untyped-call]
    await servers.put("s", entry(tmp_path / "log", "tok-kept-in-the-file-123"))
    assert servers.kept_in_file
    assert "tok-kept-in-the-file-123" in path.read_text()
    await servers.close()


@pytest.mark.asyncio
async def test_bad_files_and_entries_are_clear_errors_or_notices(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"a": {"args": []}}}')
    servers = McpServers.load(path)
    notices: dict[str, str] = {}

    def notify(key: str, text: str | None, action: object = None, **args: object) -> Changes:
        if text is None:
            notices.pop(key, None)
        else:
            notices[key] = text.format(**args)
        return Changes(notices=True)

    await servers.start()
    mcp_changed(servers, notify)
    assert notices == {
        "mcp-config:0": "mcp.json: a: needs a 'command' (stdio) or a 'url' (HTTP); left out"
    }
    with pytest.raises(McpConfigError, match="This is not valid JSON"):
        await servers.put("b", "{broken")
    with pytest.raises(McpConfigError, match="A server needs a name"):
        await servers.put(" ", '{"command": "x"}')
    assert json.loads(path.read_text()) == {"mcpServers": {"a": {"args": []}}}  # untouched
    await servers.close()


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_server_that_never_initializes_is_a_notice_with_restart(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    mute = {
        "command": sys.executable,
        "args": ["-m", "tests.helpers.mcp_server", "--never-init"],
        "cwd": str(REPO),
        "initTimeout": 1,
    }
    path.write_text(json.dumps({"mcpServers": {"mute": mute}}))
    servers = McpServers.load(path)
    shown: dict[str, tuple[str, object]] = {}

    def notify(key: str, text: str | None, action: object = None, **args: object) -> Changes:
        if text is None:
            shown.pop(key, None)
        else:
            shown[key] = (text.format(**args), action)
        return Changes(notices=True)

    servers.subscribe(lambda: mcp_changed(servers, notify))
    await servers.start()
    try:
        await until(servers.manager, "mute", "failed", within=20)
        text, action = shown["mcp:mute"]
        assert text.startswith("The MCP server mute failed: did not finish initialize in 1 s")
        assert isinstance(action, tuple) and action[0] == "Restart"
        await action[1]()  # Restart: it starts again (and fails again after 1 s)
        await until(servers.manager, "mute", "starting", within=5)
        assert "mcp:mute" not in shown  # the notice goes while it starts
    finally:
        await servers.close()
