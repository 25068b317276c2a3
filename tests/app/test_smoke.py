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


def run_smoke(data_dir: Path, *extra: str) -> dict[str, object]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
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
