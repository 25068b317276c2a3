"""R1: a writer killed with SIGKILL at a random moment loses no acknowledged entry."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from desktop_agent.session import JsonlSessionRepo

CHILD = r"""
import asyncio, sys
from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import JsonlSessionRepo

async def main() -> None:
    repo = JsonlSessionRepo(sys.argv[1])
    s = await repo.create(cwd="/crash/test")
    out = sys.stdout
    out.write("ready " + str(s.metadata.path) + "\n")
    out.flush()
    for i in range(10_000):
        size = 200 * 1024 if i % 500 == 499 else (4096 if i % 50 == 0 else 60)
        text = f"{i}:" + "x" * size
        message = UserMessage(content=[TextContent(text=text)], timestamp=i)
        entry_id = await s.append_message(message)
        out.write(entry_id + "\n")
        out.flush()
    out.write("done\n")
    out.flush()

asyncio.run(main())
"""

ITERATIONS = 50


def _run_and_kill(root: Path, rng: random.Random) -> tuple[str, list[str], bool]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root)],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
    ) as child:
        assert child.stdout is not None
        ready = child.stdout.readline().decode().split(" ", 1)
        assert ready[0] == "ready", ready
        path = ready[1].strip()
        acked: list[str] = []
        finished = threading.Event()
        # A random moment of the run: after a random number of acknowledgements, plus a
        # random few hundred microseconds (so the kill can land inside a write).
        kill_after = rng.randint(1, 9_900)
        extra_delay = rng.uniform(0.0, 0.0005)

        def reader() -> None:
            assert child.stdout is not None
            for raw in child.stdout:
                text = raw.decode().strip()
                if text == "done":
                    finished.set()
                elif text:
                    acked.append(text)
                    if len(acked) == kill_after:
                        time.sleep(extra_delay)
                        child.send_signal(signal.SIGKILL)

        thread = threading.Thread(target=reader)
        thread.start()
        thread.join(timeout=120)
        child.kill()
        child.wait()
        thread.join()
    return path, acked, finished.is_set()


@pytest.mark.slow
@pytest.mark.asyncio
async def test_sigkill_never_loses_an_acknowledged_entry(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    killed_mid_run = 0
    repo = JsonlSessionRepo(tmp_path / "sessions")
    for iteration in range(ITERATIONS):
        root = tmp_path / "sessions"
        path, acked, finished = _run_and_kill(root, rng)
        killed_mid_run += not finished
        session = await repo.open(path)
        try:
            assert not session.read_only, (iteration, session.read_only_reason)
            ids = [e.id for e in await session.get_entries()]
            missing = set(acked) - set(ids)
            assert not missing, f"iteration {iteration}: {len(missing)} acknowledged entries lost"
            # At most the one in-flight entry beyond the last acknowledgement.
            assert len(ids) - len(acked) in (0, 1)
            assert ids[: len(acked)] == acked
            report = session.recovery
            if report is not None and report.quarantine_path:
                sidecar = Path(report.quarantine_path).read_bytes()
                assert (sidecar and not sidecar.endswith(b"\n")) or _is_bad_json(sidecar)
            context = await session.build_context()
            assert len(context.messages) == len(ids)
        finally:
            await session.close()
        data = Path(path).read_bytes()
        assert data.endswith(b"\n")
    assert killed_mid_run >= ITERATIONS - 2  # the kills really landed mid-run


def _is_bad_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return True
    return False
