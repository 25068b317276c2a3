"""Issue 23's acceptance with two app processes ("two computers"), each with a data folder
of its own, on one database of the suite's PostgreSQL cluster (tests/_postgres.py) and the
suite's scripted model server, each driven through its window by ``--script -``
(desktop_agent/gui/_script.py): commands on its standard input, JSON answers on its
standard output.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.session import PostgresSessionRepo, SessionMetadata
from desktop_agent.utils.text import message_text
from tests.helpers import figures
from tests.helpers.postgres import Cluster
from tests.helpers.provider_server import ProviderServer, Reply

pytestmark = pytest.mark.slow  # the real app, in processes of its own


def _settings(data: Path, provider: ProviderServer) -> None:
    config = data / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(
        json.dumps(
            {
                "providers": {"local": {"base_url": f"{provider.url}/v1"}},
                "discover_local_servers": False,
            }
        )
    )


def _env() -> dict[str, str]:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen"}


def _app(data: Path, url: str, *extra: str) -> list[str]:
    """The command line of an app on ``data`` using the server ``url``."""
    store = ["--store", "postgres", "--database-url", url]
    return [sys.executable, "-m", "desktop_agent", "--data-dir", str(data), *extra, *store]


class Computer:
    """One app process on the shared database, driven by ``--script -``."""

    def __init__(self, data: Path, provider: ProviderServer, url: str) -> None:
        _settings(data, provider)
        self.data = data
        self.proc = subprocess.Popen(
            _app(data, url, "--script", "-"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=_env(),
        )
        self._answers: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.output: list[str] = []  # what is not an answer (stderr)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                self._answers.put(json.loads(line))
            else:
                self.output.append(line)
        self._answers.put(None)

    def tell(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60) -> dict[str, Any]:
        got = self._answers.get(timeout=timeout)
        assert got is not None, f"the app ended: {''.join(self.output)}"
        return got

    def ask(self, line: str, timeout: float = 60) -> dict[str, Any]:
        self.tell(line)
        return self.answer(timeout)

    def quit(self) -> int:
        assert self.ask("quit")["event"] == "quitting"
        return self.proc.wait(60)

    def end(self) -> None:
        """Kill it if it still runs; close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


def stored_texts(url: str, session_id: str) -> list[str]:
    """The session's messages as a third reader finds them on the server."""

    async def read() -> list[str]:
        repo = PostgresSessionRepo(url)
        try:
            session = await repo.open(SessionMetadata(id=session_id, created_at=""), write=False)
            context = await session.build_context()
            session.get_storage().force_close()
            return [message_text(m) for m in context.messages]
        finally:
            await repo.close()

    return asyncio.run(read())


def test_two_app_processes_share_a_session_one_writes_the_other_follows_within_1s_then_continues(
    tmp_path: Path, database_url: str, postgres_cluster: Cluster
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    with ProviderServer() as provider:
        first = Computer(tmp_path / "first", provider, database_url)
        second: Computer | None = None
        try:
            assert first.answer()["event"] == "ready"
            opened = first.ask(f"new {workspace}")
            ref = opened["ref"]
            assert ref.startswith("postgres:")
            session_id = ref.removeprefix("postgres:")
            provider.script(Reply(text="First answer from the model."))
            sent = first.ask("send First question")
            assert sent["reply"] == "First answer from the model." and sent["saved"]

            # The second computer lists it and restores it (--smoke), read-only.
            _settings(tmp_path / "second-smoke", provider)
            done = subprocess.run(
                _app(tmp_path / "second-smoke", database_url, "--smoke"),
                capture_output=True,
                text=True,
                timeout=90,
                env=_env(),
                check=True,
            )
            smoke = json.loads([ln for ln in done.stdout.splitlines() if ln.startswith("{")][-1])
            assert smoke["restored_session"] == session_id and smoke["sessions"] == 1
            assert smoke["messages_shown"] == 2
            assert any("another computer" in str(n) for n in smoke["notices"])
            assert postgres_cluster.password not in done.stdout + done.stderr

            # The second computer's window: open read-only while the first holds it.
            second = Computer(tmp_path / "second", provider, database_url)
            assert second.answer()["ref"] == ref
            state = second.ask("state")
            assert state["read_only"] is True and state["messages_shown"] == 2
            refused = second.ask("send Written where it may only be read")
            assert refused["event"] == "error" and "read-only" in refused["error"]

            # It sees each of the first's next replies within 1 s of their writing.
            latencies: list[float] = []
            for n, question in enumerate(("Second question", "Another one", "And a third"), 2):
                reply = f"Reply {n}, seen on the other computer."
                second.tell(f"wait {reply} 10")
                time.sleep(0.2)  # (it is waiting before the first sends)
                provider.script(Reply(text=reply))
                sent = first.ask(f"send {question}")
                assert sent["reply"] == reply and sent["saved"]
                seen = second.answer(15)
                assert seen["event"] == "seen", seen
                latencies.append(seen["at"] - seen["entry_at"])
            print(f"follow latency, entry written -> shown elsewhere: {latencies}")
            figures.add("two computers: slowest follow (ms)", round(max(latencies) * 1000))
            assert max(latencies) < 1.0
            state = second.ask("state")
            assert state["read_only"] is True and state["messages_shown"] == 8
            assert state["save"]["pending"] == 0

            # The first closes: the second continues it.
            assert first.quit() == 0
            assert second.ask("writable 10")["event"] == "writable"
            provider.script(Reply(text="Final answer, written on the second computer."))
            sent = second.ask("send Final question")
            assert sent["reply"] == "Final answer, written on the second computer."
            assert sent["saved"]
            assert second.quit() == 0
        finally:
            first.end()
            if second is not None:
                second.end()
    assert stored_texts(database_url, session_id) == [
        "First question",
        "First answer from the model.",
        "Second question",
        "Reply 2, seen on the other computer.",
        "Another one",
        "Reply 3, seen on the other computer.",
        "And a third",
        "Reply 4, seen on the other computer.",
        "Final question",
        "Final answer, written on the second computer.",
    ]
