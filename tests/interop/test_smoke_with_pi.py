"""Acceptance of issue 5: ``--smoke`` over a data dir holding several sessions, one of
them written by Pi 0.74.2 with branches, names the most recent one and its saved leaf."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import JsonlSessionRepo, encode_cwd
from tests.helpers.pi import Pi


def test_smoke_restores_the_pi_written_session(pi: Pi, tmp_path: Path) -> None:
    data = tmp_path / "data"
    sessions = data / "sessions"

    async def ours() -> None:
        repo = JsonlSessionRepo(sessions)
        for n in range(2):
            s = await repo.create(cwd=str(tmp_path / f"older-{n}"))
            await s.append_message(UserMessage(content=[TextContent(text=f"old {n}")], timestamp=n))
            await s.close()

    asyncio.run(ours())
    time.sleep(0.05)
    project = tmp_path / "pi-project"
    project.mkdir()
    report = pi.run("write-fixture", sessions, str(project))
    pi_path = Path(report["path"])
    assert pi_path.is_file()
    # Written last, the Pi session has the most recent activity (its last entry).
    done = subprocess.run(
        [sys.executable, "-m", "desktop_agent", "--data-dir", str(data), "--smoke"],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        check=True,
    )
    payload = json.loads([ln for ln in done.stdout.splitlines() if ln.startswith("{")][-1])
    header = json.loads(pi_path.read_text(encoding="utf-8").splitlines()[0])
    assert payload["restored_session"] == header["id"]
    assert payload["leaf"] == report["leafId"]
    assert payload["messages_shown"] == len(report["context"]["messages"])
    assert isinstance(payload["startup_ms"], int)
    shutil.rmtree(data / "logs", ignore_errors=True)


def test_smoke_lists_the_pi_folder_and_restores_its_cli_written_session(
    pi: Pi, tmp_path: Path
) -> None:
    """Issue 13 acceptance: with the setting on, ``--smoke`` on a machine whose Pi folder
    holds sessions lists them and restores the most recent one on its leaf."""
    data = tmp_path / "data"

    async def ours() -> None:
        repo = JsonlSessionRepo(data / "sessions")
        s = await repo.create(cwd=str(tmp_path / "older"))
        await s.append_message(UserMessage(content=[TextContent(text="old")], timestamp=1))
        await s.close()

    asyncio.run(ours())
    time.sleep(0.05)
    pi_folder = tmp_path / "pi-home" / "sessions"  # the pi_sessions setting names it
    project = tmp_path / "pi-project"
    project.mkdir()
    report = pi.run("cli-write-fixture", pi_folder / encode_cwd(str(project)), str(project))
    pi_path = Path(report["path"])
    (data / "config").mkdir(parents=True)
    (data / "config" / "settings.json").write_text(
        json.dumps({"pi_sessions": {"enabled": True, "folder": str(pi_folder)}})
    )
    done = subprocess.run(
        [sys.executable, "-m", "desktop_agent", "--data-dir", str(data), "--smoke"],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        check=True,
    )
    payload = json.loads([ln for ln in done.stdout.splitlines() if ln.startswith("{")][-1])
    header = json.loads(pi_path.read_text(encoding="utf-8").splitlines()[0])
    assert payload["pi_sessions"] == 1 and payload["sessions"] == 1
    assert payload["restored_session"] == header["id"]
    assert payload["restored_source"] == "pi"
    assert payload["leaf"] == report["leafId"]
    assert payload["messages_shown"] == len(report["context"]["messages"])
    assert not list(pi_folder.rglob("*.lock"))  # nothing of ours left in Pi's folder
    assert sorted(p.name for p in pi_folder.rglob("*") if p.is_file()) == [pi_path.name]
