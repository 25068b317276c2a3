"""A local server's key without a keychain, across a real restart of the app; a restored
local session whose server is down never moves to another provider (FIRST_HOUR.md L1).

Each restart is the real app (``--smoke``) on the same data folder with keyring's ``fail``
backend (what a Linux desktop without a Secret Service gets); the local server is the
suite's provider server, which records the key each request carries.
"""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import pytest
from keyring.backends import fail

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.config import KeyFile, KeyStore
from desktop_agent.session import JsonlSessionRepo
from tests.app.test_smoke import run_smoke
from tests.helpers.provider_server import ProviderServer

pytestmark = pytest.mark.slow

NO_KEYCHAIN = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


async def _local_session(data: Path) -> str:
    repo = JsonlSessionRepo(data / "sessions")
    s = await repo.create(cwd=str(data))
    await s.append_model_change("local", "local-model")
    await s.append_message(UserMessage(content=[TextContent(text="hi")], timestamp=1))
    await s.close()
    return s.metadata.path or ""


def _settings(data: Path, url: str, **more: object) -> Path:
    config = data / "config"
    config.mkdir(parents=True, exist_ok=True)
    path = config / "settings.json"
    body = {"providers": {"local": {"base_url": url}}, "discover_local_servers": False, **more}
    path.write_text(json.dumps(body))
    return path


def _keys_sent(server: ProviderServer) -> list[str]:
    return [r.headers.get("authorization", "") for r in server.requests if r.method == "GET"]


def _restart_sends(data: Path, key: str, env: dict[str, str], **settings: object) -> None:
    """The real app restarted on ``data`` lists the local server with ``key`` and restores
    the session's local model."""
    with ProviderServer() as server:
        _settings(data, f"{server.url}/v1", **settings)
        result = run_smoke(data, env={**NO_KEYCHAIN, **env})
        assert result["model"] == "local/local-model", result
        assert result["notices"] == []
        assert _keys_sent(server) == [f"Bearer {key}"]
    assert key not in (data / "logs" / "desktop-agent.log").read_text()
    assert key not in (data / "config" / "settings.json").read_text()


@pytest.mark.asyncio
async def test_a_key_kept_in_the_file_survives_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await _local_session(data)
    key = "local-" + os.urandom(8).hex()
    # What Settings does when the key is typed with "Keep keys in a file" ticked.
    store = KeyStore(
        backend=fail.Keyring(),  # type: ignore[no-untyped-call]
        environ={},
        key_file=KeyFile(data / "config" / "keys.json"),
        use_file=True,
    )
    await store.set("local", key)
    assert stat.S_IMODE((data / "config" / "keys.json").stat().st_mode) == 0o600
    _restart_sends(data, key, {}, keys_in_file=True)


@pytest.mark.asyncio
async def test_the_local_servers_own_environment_variable_is_used(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await _local_session(data)
    key = "env-" + os.urandom(8).hex()
    _restart_sends(data, key, {"DESKTOP_AGENT_LOCAL_API_KEY": key})


@pytest.mark.asyncio
async def test_a_restored_local_session_whose_server_is_down_never_switches(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    path = await _local_session(data)
    before = Path(path).read_bytes()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: the server is down
    _settings(data, f"http://127.0.0.1:{port}/v1", default_model="openai/gpt-4o-mini")
    # The advice users followed: the proxy's key as OPENAI_API_KEY (so OpenAI is usable).
    env = {**NO_KEYCHAIN, "OPENAI_API_KEY": "sk-proj-" + "x" * 40}
    result = run_smoke(data, env=env)
    assert result["restored_session"] is not None
    assert result["model"] is None, result
    notices = result["notices"]
    assert isinstance(notices, list)
    said = " ".join(str(n) for n in notices)
    assert "local/local-model cannot be used now: Could not list the models of" in said, said
    assert "keeps it" in said and "openai" not in said.lower()
    assert Path(path).read_bytes() == before  # no model change was written
