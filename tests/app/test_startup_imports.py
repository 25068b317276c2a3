"""The first paint imports nothing it does not need (issue 25 item 6: the empty launch
went from 0.44-0.69 s to 0.77 s once MCP, the project prompt and PostgreSQL landed).

What is checked is the app process itself after ``--smoke`` (restored, painted, settled):
the PostgreSQL client (only for ``--store postgres``), the MCP SDK (imported on the
servers' own thread once the window is shown, and only when servers are set), YAML (skill
and template front matter) and pathspec (ignore files of skill folders) are imported only
when they are used.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import JsonlSessionRepo

pytestmark = pytest.mark.slow  # the app's start-up, in a Python process of its own

LAZY = ("psycopg", "psycopg_pool", "mcp", "yaml", "pathspec")


def imported_after_smoke(data: Path, *extra: str) -> tuple[dict[str, object], list[str]]:
    script = (
        "import json, sys\n"
        "from desktop_agent.app import run\n"
        f"code = run(['--data-dir', {str(data)!r}, '--smoke', *{list(extra)!r}])\n"
        f"found = sorted(n for n in {LAZY!r} if n in sys.modules)\n"
        "print(json.dumps({'code': code, 'found': found}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        check=False,
    )
    lines = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    assert len(lines) == 2, done.stderr[-2000:]
    assert lines[-1]["code"] == 0, done.stderr[-2000:]
    return lines[0], lines[-1]["found"]


@pytest.mark.parametrize("store", ["jsonl", "sqlite"])
def test_an_empty_launch_imports_no_database_client_mcp_yaml_or_pathspec(
    tmp_path: Path, store: str
) -> None:
    smoke, found = imported_after_smoke(tmp_path / "data", "--store", store)
    assert smoke["restored_session"] is None
    assert found == []


def test_restoring_a_session_imports_no_database_client_mcp_yaml_or_pathspec(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Answer briefly.\n")

    async def write() -> str:
        repo = JsonlSessionRepo(tmp_path / "data" / "sessions")
        session = await repo.create(cwd=str(project))
        await session.append_message(UserMessage(content=[TextContent(text="hi")], timestamp=1))
        await session.close()
        return session.metadata.id

    session_id = asyncio.run(write())
    smoke, found = imported_after_smoke(tmp_path / "data")
    assert smoke["restored_session"] == session_id
    assert found == []
