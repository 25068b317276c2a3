"""`desktop-agent --data-dir D --smoke` restores the most recent session on its saved leaf."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import JsonlSessionRepo
from desktop_agent.utils import RedactingFilter

pytestmark = pytest.mark.slow


def run_smoke(data_dir: Path, *extra: str, env: dict[str, str] | None = None) -> dict[str, object]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "desktop_agent", "--data-dir", str(data_dir), "--smoke", *extra],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("{")][-1]
    result = json.loads(line)
    assert isinstance(result, dict)
    return result


def test_first_launch_has_no_session(tmp_path: Path) -> None:
    result = run_smoke(tmp_path)
    assert result["restored_session"] is None and result["messages_shown"] == 0
    assert result["model"] is None and result["notices"] == []
    assert (tmp_path / "logs" / "desktop-agent.log").exists()


@pytest.mark.asyncio
async def test_restores_most_recent_session_on_saved_leaf(tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path / "sessions")
    older = await repo.create(cwd="/work/a")
    await older.append_message(UserMessage(content=[TextContent(text="old")], timestamp=1))
    await older.close()
    s = await repo.create(cwd="/work/b")
    first = await s.append_message(UserMessage(content=[TextContent(text="q1")], timestamp=1))
    await s.append_message(UserMessage(content=[TextContent(text="q2")], timestamp=2))
    await s.move_to(first)
    await s.close()
    result = run_smoke(tmp_path)
    assert result["restored_session"] == s.metadata.id
    assert result["leaf"] == first
    assert result["messages_shown"] == 1
    assert isinstance(result["startup_ms"], int)


def test_log_filter_redacts_keys() -> None:
    import logging

    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "key %s", ("sk-ant-api03-CANARYCANARYCANARY",), None
    )
    assert RedactingFilter().filter(record)
    assert "CANARY" not in record.getMessage()


def _settings_with_server(data_dir: Path, url: str) -> None:
    config = data_dir / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(
        json.dumps({"providers": {"local": {"base_url": url}}, "discover_local_servers": False})
    )


@pytest.mark.asyncio
async def test_smoke_names_the_model_of_a_local_server_from_settings(tmp_path: Path) -> None:
    from tests.helpers.provider_server import ProviderServer

    repo = JsonlSessionRepo(tmp_path / "sessions")
    s = await repo.create(cwd=str(tmp_path))
    await s.append_model_change("local", "local-model")
    await s.append_message(UserMessage(content=[TextContent(text="hi")], timestamp=1))
    await s.close()
    with ProviderServer() as server:
        _settings_with_server(tmp_path, f"{server.url}/v1")
        result = run_smoke(tmp_path)
    assert result["restored_session"] == s.metadata.id
    assert result["model"] == "local/local-model"
    assert result["notices"] == []


def test_a_server_that_never_answers_does_not_delay_the_first_paint(tmp_path: Path) -> None:
    import socket
    import time

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    try:
        _settings_with_server(tmp_path, f"http://127.0.0.1:{silent.getsockname()[1]}/v1")
        started = time.perf_counter()
        result = run_smoke(tmp_path)
        wall_ms = (time.perf_counter() - started) * 1000
    finally:
        silent.close()
    # The JSON line comes once the listing gave up (3 s); the paint did not wait for it.
    startup_ms = result["startup_ms"]
    assert isinstance(startup_ms, int) and wall_ms - startup_ms > 2500
    notices = result["notices"]
    assert isinstance(notices, list) and any("did not answer" in n for n in notices)


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
@pytest.mark.asyncio
async def test_sigterm_and_sigint_quit_like_closing_the_window(
    tmp_path: Path, signal_name: str
) -> None:
    import asyncio
    import signal
    import time

    repo = JsonlSessionRepo(tmp_path / "sessions")
    s = await repo.create(cwd=str(tmp_path))
    await s.append_message(UserMessage(content=[TextContent(text="q1")], timestamp=1))
    await s.close()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    child = subprocess.Popen(
        [sys.executable, "-m", "desktop_agent", "--data-dir", str(tmp_path), "--no-err-windows"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = tmp_path / "logs" / "desktop-agent.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if log.exists() and "The window is shown" in log.read_text():
            break
        await asyncio.sleep(0.05)
    child.send_signal(getattr(signal, signal_name))
    code = await asyncio.to_thread(child.wait, 60)
    child.communicate()
    assert code == 0
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["last_session_path"] == s.metadata.path
    assert Path(s.metadata.path or "").read_bytes().endswith(b"\n")
    assert "Traceback" not in log.read_text()


@pytest.mark.asyncio
async def test_the_whole_app_runs_on_the_sqlite_store(tmp_path: Path) -> None:
    from desktop_agent.session import SqliteSessionRepo

    repo = SqliteSessionRepo(tmp_path / "sessions.sqlite")
    s = await repo.create(cwd=str(tmp_path))
    first = await s.append_message(UserMessage(content=[TextContent(text="q1")], timestamp=1))
    await s.append_message(UserMessage(content=[TextContent(text="q2")], timestamp=2))
    await s.move_to(first)
    await s.close()
    await repo.close()
    result = run_smoke(tmp_path, "--store", "sqlite")
    assert result["restored_session"] == s.metadata.id
    assert result["leaf"] == first and result["messages_shown"] == 1


def _session(folder: Path, cwd: str, text: str) -> tuple[str, str]:
    """A v3 session in a folder of Pi's layout (ours or Pi's); returns its id and leaf."""
    import asyncio

    async def write() -> tuple[str, str]:
        s = await JsonlSessionRepo(folder).create(cwd=cwd)
        leaf = await s.append_message(UserMessage(content=[TextContent(text=text)], timestamp=1))
        await s.close()
        return s.metadata.id, leaf

    return asyncio.run(write())


def test_smoke_lists_pi_sessions_and_restores_the_most_recent_of_either(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    ours_id, _ = _session(data / "sessions", str(tmp_path / "a"), "ours")
    # Pi's default folder: $PI_CODING_AGENT_DIR/sessions (the suite points it at a temp
    # folder; never the real ~/.pi).
    agent = tmp_path / "pi-agent"
    pi_id, pi_leaf = _session(agent / "sessions", str(tmp_path / "b"), "newest, in pi")
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    result = _smoke_env(data, env)
    assert result["pi_sessions"] == 1 and result["sessions"] == 1
    assert result["restored_session"] == pi_id and result["leaf"] == pi_leaf
    assert result["restored_source"] == "pi"
    # The last session the user had open wins over a newer one (here: ours, by --session).
    result = _smoke_env(data, env, "--session", ours_id)
    assert result["restored_session"] == ours_id
    _session(agent / "sessions", str(tmp_path / "b"), "even newer, in pi")
    assert _smoke_env(data, env)["restored_session"] == ours_id
    # The setting turns the source off; --pi-sessions-dir names another folder.
    (data / "config").mkdir(exist_ok=True)
    (data / "config" / "settings.json").write_text(json.dumps({"pi_sessions": {"enabled": False}}))
    assert _smoke_env(data, env)["pi_sessions"] == 0
    other = tmp_path / "elsewhere"
    other_id, _ = _session(other, str(tmp_path / "c"), "in another folder")
    result = _smoke_env(data, env, "--pi-sessions-dir", str(other), "--session", other_id)
    assert result["pi_sessions"] == 1 and result["restored_session"] == other_id
    assert result["restored_source"] == "pi"


def _smoke_env(data_dir: Path, env: dict[str, str], *extra: str) -> dict[str, object]:
    return run_smoke(data_dir, *extra, env=env)


@pytest.mark.asyncio
async def test_restore_and_settle_import_no_provider_sdk(tmp_path: Path) -> None:
    """Restoring a session and settling the window never imports the openai or anthropic
    SDK (their imports take seconds: they are warmed up after the settle, or loaded by the
    first request), even with a key that makes a model usable."""
    repo = JsonlSessionRepo(tmp_path / "sessions")
    s = await repo.create(cwd=str(tmp_path))
    await s.append_message(UserMessage(content=[TextContent(text="q1")], timestamp=1))
    await s.close()
    script = (
        "import json, sys\n"
        "from desktop_agent.app import run\n"
        f"code = run(['--data-dir', {str(tmp_path)!r}, '--smoke'])\n"
        "sdks = sorted(n for n in ('anthropic', 'openai', 'httpx2') if n in sys.modules)\n"
        "print(json.dumps({'code': code, 'sdks': sdks}))\n"
    )
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    restored, last = json.loads(lines[0]), json.loads(lines[-1])
    assert restored["restored_session"] == s.metadata.id and restored["model"] is not None
    assert last == {"code": 0, "sdks": []}, done.stderr[-2000:]
