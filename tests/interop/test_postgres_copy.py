"""Sessions copied from JSONL files to a PostgreSQL server and back with the app's
``--copy-sessions-from``: every entry byte for byte, and Pi 0.74.2 opens the file that
came back and builds the same context (issue 23 item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_agent.session import JsonlSessionRepo
from tests.helpers.pi import Pi
from tests.helpers.postgres import Cluster
from tests.interop.test_pi_interop import assert_same, describe, pi_view, write_our_session


def copy(data: Path, source: str, target: str, url: str) -> dict[str, object]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "desktop_agent",
            "--data-dir",
            str(data),
            "--store",
            target,
            "--database-url",
            url,
            "--copy-sessions-from",
            source,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(result, dict)
    return result


def entry_lines(path: str) -> list[bytes]:
    return Path(path).read_bytes().splitlines()[1:]  # without the header


@pytest.mark.asyncio
async def test_jsonl_to_postgres_and_back_is_byte_exact_and_pi_agrees(
    pi: Pi, tmp_path: Path, database_url: str, postgres_cluster: Cluster
) -> None:
    first = tmp_path / "first"
    repo = JsonlSessionRepo(first / "sessions")
    session = await repo.create(cwd=str(tmp_path / "project"))
    await write_our_session(session)
    ours = await describe(session)
    await session.close()
    original = session.metadata.path
    assert original is not None

    assert copy(first, "jsonl", "postgres", database_url) == {"copied": 1, "failed": {}}
    back = tmp_path / "back"
    assert copy(back, "postgres", "jsonl", database_url) == {"copied": 1, "failed": {}}
    (meta,) = await JsonlSessionRepo(back / "sessions").list()
    assert meta.path is not None and meta.id != session.metadata.id
    assert entry_lines(meta.path) == entry_lines(original)

    (report,) = await pi.abatch(["context", meta.path])
    assert_same(ours, pi_view(report))
    for data in (first, back):
        log = (data / "logs" / "desktop-agent.log").read_text()
        assert postgres_cluster.password not in log
