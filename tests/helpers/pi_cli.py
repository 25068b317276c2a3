"""Run the real Pi CLI (npm ``@earendil-works/pi-coding-agent``, pinned in
``package-lock.json``) against the suite's scripted provider server.

`PiCli` gives each test its own home: ``HOME`` and ``PI_CODING_AGENT_DIR`` point into a
temp dir (the real ``~/.pi`` is never read or written), ``models.json`` there defines one
OpenAI-compatible provider whose base URL is the `ProviderServer` on 127.0.0.1, and
every run is offline: ``--offline``, ``PI_OFFLINE``, ``PI_SKIP_VERSION_CHECK``,
``PI_TELEMETRY=0`` and install telemetry off in ``settings.json`` (Pi's update check,
install ping and tool downloads are its only network uses besides the provider). On top,
``net_guard.mjs`` is preloaded into the CLI: a connection or DNS lookup for anything but
loopback is refused and logged, and `PiCli.network_attempts` must stay empty.

Print mode is one process per prompt (`PiCli.print`); RPC mode (`PiCli.rpc`) is one
process driven over stdin/stdout with JSON lines, with ``pi_interop_extension.ts`` loaded
for tree navigation.
"""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers.pi import INTEROP_DIR, NODE_MODULES, Pi
from tests.helpers.provider_server import ProviderServer

CLI = NODE_MODULES / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js"
NET_GUARD = INTEROP_DIR / "net_guard.mjs"
EXTENSION = INTEROP_DIR / "pi_interop_extension.ts"
PROVIDER = "interop"
MODEL = "local-test"
OTHER_MODEL = "local-other"
RUN_TIMEOUT = 90.0


class PiCliError(AssertionError):
    """The CLI failed, timed out, or said something the test did not expect."""


class PiCli:
    """The Pi CLI with a private home in ``base``, talking only to ``server``."""

    def __init__(self, pi: Pi, server: ProviderServer, base: Path) -> None:
        if pi.node is None:
            raise PiCliError(pi.setup_error or "Node.js is not available")
        self.node = pi.node
        self.server = server
        self.home = base / "home"
        self.agent_dir = self.home / ".pi" / "agent"
        self.sessions_dir = self.agent_dir / "sessions"
        self.net_log = base / "net-attempts.log"
        self.agent_dir.mkdir(parents=True, exist_ok=True)
        model = {"contextWindow": 128000, "maxTokens": 4096, "input": ["text", "image"]}
        models = {
            "providers": {
                PROVIDER: {
                    "baseUrl": f"{server.url}/v1",
                    "api": "openai-completions",
                    "apiKey": "interop-test-key",
                    "models": [
                        {"id": MODEL, **model},
                        {"id": OTHER_MODEL, "reasoning": True, **model},
                    ],
                }
            }
        }
        (self.agent_dir / "models.json").write_text(json.dumps(models), encoding="utf-8")
        settings = {"enableInstallTelemetry": False, "collapseChangelog": True}
        (self.agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")

    def env(self) -> dict[str, str]:
        """A clean environment: no provider keys, no proxies, our home, offline."""
        return {
            "PATH": os.path.dirname(self.node) + os.pathsep + os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "USERPROFILE": str(self.home),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
            "PI_INTEROP_NET_LOG": str(self.net_log),
            "NO_COLOR": "1",
            "TERM": "dumb",
            "LANG": "C.UTF-8",
        }

    def command(self, *args: str, extension: bool = False, resources: bool = False) -> list[str]:
        """``resources``: read context files, skills and prompt templates (off by default,
        so a test's temp folders never add to what the CLI sends)."""
        extra = ["--no-extensions", "-e", str(EXTENSION)] if extension else ["--no-extensions"]
        no_resources = (
            () if resources else ("--no-skills", "--no-prompt-templates", "--no-context-files")
        )
        return [
            self.node,
            "--import",
            NET_GUARD.as_uri(),
            str(CLI),
            "--offline",
            *no_resources,
            *extra,
            "--provider",
            PROVIDER,
            "--model",
            MODEL,
            *args,
        ]

    @property
    def network_attempts(self) -> list[str]:
        try:
            return self.net_log.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []

    def print(
        self, prompt: str, *, cwd: Path, args: tuple[str, ...] = (), resources: bool = False
    ) -> str:
        """``pi -p PROMPT`` in ``cwd``; returns what it printed."""
        command = self.command(*args, "-p", prompt, resources=resources)
        try:
            done = subprocess.run(
                command,
                cwd=cwd,
                env=self.env(),
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise PiCliError(f"pi -p {prompt!r} timed out") from exc
        if done.returncode != 0:
            raise PiCliError(
                f"pi -p {prompt!r} exited {done.returncode}:\n{done.stderr}{done.stdout}"
            )
        return done.stdout

    @contextmanager
    def rpc(self, *, cwd: Path, args: tuple[str, ...] = ()) -> Iterator[RpcClient]:
        """``pi --mode rpc`` in ``cwd`` with the interop extension loaded."""
        process = subprocess.Popen(
            self.command(*args, "--mode", "rpc", extension=True),
            cwd=cwd,
            env=self.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        client = RpcClient(process)
        try:
            yield client
        finally:
            client.close()

    def session_files(self, cwd: Path | None = None) -> list[Path]:
        """The CLI's session files (of one workspace), oldest first by name."""
        folders = [self.sessions_dir / encode(cwd)] if cwd is not None else [self.sessions_dir]
        return sorted(p for f in folders for p in f.rglob("*.jsonl"))


def encode(cwd: Path) -> str:
    from desktop_agent.session import encode_cwd

    return encode_cwd(str(cwd))


class RpcClient:
    """JSON lines over the CLI's stdin/stdout (split on ``\\n`` only, as rpc.md asks)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.events: list[dict[str, Any]] = []
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr: list[bytes] = []
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        stdout = self.process.stdout
        assert isinstance(stdout, io.BufferedReader)
        while chunk := stdout.read1(65536):
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                line = line.rstrip(b"\r")
                if line.strip():
                    self._queue.put(json.loads(line))
        self._queue.put(None)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        stderr = self.process.stderr
        assert isinstance(stderr, io.BufferedReader)
        while chunk := stderr.read1(65536):
            self._stderr.append(chunk)

    def _wait(self, predicate: Any, what: str, timeout: float = RUN_TIMEOUT) -> dict[str, Any]:
        while True:
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty as exc:
                raise PiCliError(f"pi --mode rpc: no {what} within {timeout:.0f} s") from exc
            if item is None:
                raise PiCliError(
                    f"pi --mode rpc ended before {what}:\n{b''.join(self._stderr).decode()}"
                )
            self.events.append(item)
            if predicate(item):
                return item

    def send(self, command: dict[str, Any]) -> dict[str, Any]:
        """Send a command and return its response (``success`` checked)."""
        self._next_id += 1
        request_id = f"req-{self._next_id}"
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({**command, "id": request_id}).encode() + b"\n")
        self.process.stdin.flush()
        response = self._wait(
            lambda e: e.get("type") == "response" and e.get("id") == request_id,
            f"response to {command['type']}",
        )
        if not response.get("success"):
            raise PiCliError(f"pi --mode rpc: {command} failed: {response}")
        return response

    def prompt(self, message: str) -> None:
        """A prompt, waiting until the agent is done with it."""
        self.send({"type": "prompt", "message": message})
        self._wait(lambda e: e.get("type") == "agent_end", f"agent_end after {message!r}")

    def extension(self, command: str) -> dict[str, Any]:
        """Run a ``/interop-...`` command and return the report it notifies."""

        def is_report(e: dict[str, Any]) -> bool:
            return e.get("type") == "extension_ui_request" and str(e.get("message", "")).startswith(
                "interop:"
            )

        start = len(self.events)
        self.send({"type": "prompt", "message": f"/{command}"})  # may come after the report
        early = [e for e in self.events[start:] if is_report(e)]
        notice = early[0] if early else self._wait(is_report, f"the report of /{command}")
        report: dict[str, Any] = json.loads(str(notice["message"])[len("interop:") :])
        return report

    def close(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
