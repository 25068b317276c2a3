"""R1: a writer killed with SIGKILL at a random moment loses no acknowledged entry.

A fork server (one interpreter that imported the store once) forks a child per run; the
child appends entries of mixed sizes (60 B to 200 KiB) with a save point every few
entries and prints each id after its append returned (the acknowledgement). The test
kills the child at a random moment: after a random number of acknowledgements plus a
random few hundred microseconds, so kills land inside writes and fsyncs too. Then the
real loader reopens the file: every acknowledged entry is there, in order, at most the
one in-flight entry beyond them, a torn tail is in a byte-exact sidecar, and the
session is writable. 40 runs in the PR suite, 200 with ``DESKTOP_AGENT_LONG_TESTS=1``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_agent.session import JsonlSessionRepo
from tests.helpers import figures
from tests.session._workload import LONG

RUNS = 200 if LONG else 40
APPENDS = 10_000 if LONG else 1_500

WORKLOAD = r"""
import asyncio, os, random, sys
from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import JsonlSessionRepo


def say(text):
    os.write(1, (text + "\n").encode())


async def workload(root, seed, count):
    rng = random.Random(seed)
    session = await JsonlSessionRepo(root).create(cwd="/crash/test")
    say("ready " + session.metadata.path)
    for i in range(count):
        size = rng.choice((60, 60, 60, 300, 4096, 9000, 200 * 1024 if rng.random() < 0.05 else 60))
        message = UserMessage(content=[TextContent(text=f"{i}:" + "x" * size)], timestamp=i)
        entry_id = await session.append_message(message)
        say(entry_id)
        if i % 6 == 5:
            await session.sync()  # a save point: kills land in fsyncs too
    await session.close()
    say("done")
"""

SERVER = (
    WORKLOAD
    + r"""

def serve():
    for command in sys.stdin:
        root, seed, count = command.split()
        pid = os.fork()
        if pid == 0:
            try:
                say("pid " + str(os.getpid()))
                asyncio.run(workload(root, int(seed), int(count)))
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        say("exit " + str(status))


serve()
"""
)

ONE_RUN = (
    WORKLOAD
    + r"""
say("pid " + str(os.getpid()))
asyncio.run(workload(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
"""
)


class _Runner:
    """Starts workload children: forked from one server, or (no fork) one process each."""

    def __init__(self) -> None:
        self.env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        self.server: subprocess.Popen[bytes] | None = None
        if hasattr(os, "fork"):
            self.server = subprocess.Popen(
                [sys.executable, "-c", SERVER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=self.env,
            )

    def start(self, root: Path, seed: int) -> subprocess.Popen[bytes] | None:
        if self.server is not None:
            assert self.server.stdin is not None
            self.server.stdin.write(f"{root} {seed} {APPENDS}\n".encode())
            self.server.stdin.flush()
            return None
        return subprocess.Popen(
            [sys.executable, "-c", ONE_RUN, str(root), str(seed), str(APPENDS)],
            stdout=subprocess.PIPE,
            env=self.env,
        )

    def close(self) -> None:
        if self.server is not None:
            self.server.communicate(timeout=30)  # closes stdin: the server ends


@pytest.fixture(scope="module")
def runner() -> Iterator[_Runner]:
    r = _Runner()
    try:
        yield r
    finally:
        r.close()


def _run_and_kill(runner: _Runner, root: Path, rng: random.Random) -> tuple[str, list[str], bool]:
    """One run; returns the session path, the acknowledged ids, whether it finished."""
    child = runner.start(root, rng.getrandbits(32))
    source = runner.server if child is None else child
    assert source is not None and source.stdout is not None
    stream = source.stdout
    pid_line = stream.readline().decode().split()
    assert pid_line[0] == "pid", pid_line
    pid = int(pid_line[1])
    ready = stream.readline().decode().split(" ", 1)
    assert ready[0] == "ready", ready
    path = ready[1].strip()
    kill_after = rng.randint(1, APPENDS - 50)
    delay = rng.uniform(0.0, 0.0005)
    acked: list[str] = []
    finished = False
    killed = False
    while True:
        raw = stream.readline()
        text = raw.decode().strip()
        if not raw or text.startswith("exit"):
            break
        if text == "done":
            finished = True
            if child is not None:
                break
            continue
        acked.append(text)
        if len(acked) == kill_after and not killed:
            time.sleep(delay)
            os.kill(pid, signal.SIGKILL)
            killed = True
    if child is not None:
        child.communicate()
    return path, acked, finished


@pytest.mark.slow
@pytest.mark.asyncio
async def test_sigkill_never_loses_an_acknowledged_entry(tmp_path: Path, runner: _Runner) -> None:
    rng = random.Random(20261129)
    killed_mid_run = 0
    lost_total = 0
    repo = JsonlSessionRepo(tmp_path / "sessions")
    for iteration in range(RUNS):
        path, acked, finished = await asyncio.to_thread(
            _run_and_kill, runner, tmp_path / "sessions", rng
        )
        killed_mid_run += not finished
        session = await repo.open(path)
        try:
            assert not session.read_only, (iteration, session.read_only_reason)
            ids = [e.id for e in await session.get_entries()]
            lost = len(set(acked) - set(ids))
            lost_total += lost
            assert not lost, f"run {iteration}: {lost} acknowledged entries lost"
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
        assert Path(path).read_bytes().endswith(b"\n")
    figures.add("kills", killed_mid_run)
    figures.add("entries lost", lost_total)
    assert killed_mid_run >= RUNS - 2  # the kills really landed mid-run


def _is_bad_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return True
    return False
