"""The `bash` tool: a shell command in the workspace, in its own process group.

The command runs with ``start_new_session=True`` so it leads a new process group; on
timeout, cancellation, and after the shell exits, the whole group gets SIGTERM and then
SIGKILL, so background children never outlive the call (outside the sandbox, children
that start a session of their own escape this, as with any process-group kill; inside it,
the PID namespace ends with the command and takes them along). Output (stdout and stderr
merged) is streamed through `ToolContext.update`; the result keeps the tail, and the full
output goes to a file under `ToolContext.output_dir` once it exceeds the limit.

Every command runs in the OS sandbox of `desktop_agent.tools._sandbox` (bubblewrap on Linux,
Seatbelt on macOS) unless the call's context says the user let it run outside once; a
command the sandbox blocked ends its result with plain words saying so (``details``:
``sandboxBlocked``), which the harness turns into the offer to run it outside once.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import IO, Any

from pydantic import Field

from desktop_agent.ai import ToolDefinition
from desktop_agent.tools._base import CallPreview, Tool, ToolContext, ToolParams, ToolResult
from desktop_agent.tools._env import scrub_environment
from desktop_agent.tools._sandbox import Sandbox, default_sandbox
from desktop_agent.utils import StreamRedactor

SANDBOX_NOTE = (
    "Commands run in a sandbox: only the workspace and $TMPDIR are writable (not /tmp), "
    "and a blocked command says so."
)
"""Added to the description when commands run in an OS sandbox."""
DEFAULT_TIMEOUT = 300.0
MAX_TIMEOUT = 3600.0
MAX_OUTPUT_BYTES = 50 * 1024
MAX_OUTPUT_LINES = 2000
_POSIX = os.name == "posix"


def default_shell_argv(command: str) -> tuple[str, ...]:
    """The argv that runs ``command`` in the platform's shell."""
    if not _POSIX:
        return (os.environ.get("COMSPEC", "cmd.exe"), "/d", "/s", "/c", command)
    shell = "/bin/bash" if os.path.exists("/bin/bash") else shutil.which("sh") or "/bin/sh"
    return (shell, "-c", command)


class BashParams(ToolParams):
    command: str = Field(description="The shell command to run in the workspace root.")
    timeout: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT,
        description=f"Timeout in seconds (default {int(DEFAULT_TIMEOUT)}).",
    )


class _Output:
    """Collects a command's output: a bounded tail in memory, everything in a file.

    The file gets the output through ``redactor`` (secrets replaced by markers); the
    tail is redacted by the harness with the rest of the result.
    """

    def __init__(
        self,
        max_bytes: int,
        max_lines: int,
        output_dir: Path,
        call_id: str,
        redactor: StreamRedactor | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.max_lines = max_lines
        self.output_dir = output_dir
        self.call_id = re.sub(r"[^A-Za-z0-9_.-]", "_", call_id)[:64] or "call"
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head: list[bytes] = []  # raw bytes kept until the output spills to a file
        self._tail = ""
        self.total_bytes = 0
        self.total_lines = 0
        self.path: Path | None = None
        self._file: IO[bytes] | None = None
        self._redactor = redactor

    def _write(self, data: bytes) -> None:
        assert self._file is not None
        if self._redactor is not None:
            data = self._redactor.feed(data)
        if data:
            self._file.write(data)

    def feed(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        self.total_lines += chunk.count(b"\n")
        if self._file is not None:
            self._write(chunk)
        else:
            self._head.append(chunk)
            if self.total_bytes > self.max_bytes or self.total_lines > self.max_lines:
                self._spill()
        self._tail += self._decoder.decode(chunk)
        keep = self.max_bytes * 2
        if len(self._tail) > keep * 2:
            self._tail = self._tail[-keep:]

    def _spill(self) -> None:
        self.output_dir.mkdir(parents=True, exist_ok=True)
        name = f"bash-{self.call_id}-{secrets.token_hex(4)}.log"
        self.path = self.output_dir / name
        self._file = open(self.path, "xb")  # noqa: SIM115 - closed in close()
        for piece in self._head:
            self._write(piece)
        self._head.clear()

    def close(self) -> None:
        self._tail += self._decoder.decode(b"", final=True)
        if self._file is not None:
            try:
                if self._redactor is not None:
                    self._file.write(self._redactor.finish())
            finally:
                self._file.close()
                self._file = None

    def text(self) -> tuple[str, bool]:
        """The tail within the limits, and whether anything was cut."""
        text = self._tail
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        kept: list[str] = []
        used = 0
        for line in reversed(lines):
            size = len(line.encode("utf-8")) + 1
            if len(kept) >= self.max_lines or used + size > self.max_bytes:
                if not kept:
                    raw = line.encode("utf-8")[-self.max_bytes :]
                    kept.append(raw.decode("utf-8", "ignore"))
                break
            kept.append(line)
            used += size
        kept.reverse()
        cut = self.path is not None or len(kept) < len(lines)
        return "\n".join(kept), cut


class BashTool(Tool[BashParams]):
    name = "bash"
    label = "Bash"
    description = (
        "Run a shell command in the workspace root (stdout and stderr merged). Output is "
        f"cut to the last {MAX_OUTPUT_LINES} lines or {MAX_OUTPUT_BYTES // 1024} KB; the full "
        "output is then saved to a file whose path is reported. Commands are killed, "
        "together with every process they started, on timeout or cancellation; "
        "background processes do not survive the command."
    )
    parameters = BashParams
    execution_mode = "sequential"
    needs_approval = True

    def __init__(
        self,
        *,
        default_timeout: float = DEFAULT_TIMEOUT,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
        max_output_lines: int = MAX_OUTPUT_LINES,
        kill_grace: float = 2.0,
        drain_grace: float = 0.5,
        update_interval: float = 0.1,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.sandbox = sandbox if sandbox is not None else default_sandbox()
        """Where commands run (`default_sandbox`: what this machine offers)."""
        self.default_timeout = default_timeout
        self.max_output_bytes = max_output_bytes
        self.max_output_lines = max_output_lines
        self.kill_grace = kill_grace
        self.drain_grace = drain_grace
        self.update_interval = update_interval

    def argv(self, command: str) -> tuple[str, ...]:
        return default_shell_argv(command)

    def definition(self) -> ToolDefinition:
        """The description says where commands may write when they run in a sandbox."""
        if not self.sandbox.available:
            return super().definition()
        return ToolDefinition(
            name=self.name,
            description=f"{self.description} {SANDBOX_NOTE}",
            parameters=self.parameters,
        )

    def always_ask(self) -> str | None:
        if self.sandbox.available:
            return None
        return self.sandbox.problem or "Shell commands cannot run in a sandbox here."

    def preview(self, args: BashParams, ctx: ToolContext) -> CallPreview:
        return CallPreview(summary=args.command, command=self.argv(args.command))

    async def execute(self, call_id: str, args: BashParams, ctx: ToolContext) -> ToolResult:
        sandbox = self.sandbox if not ctx.outside_sandbox else Sandbox.none("run outside")
        if not sandbox.available:
            return await self._run(call_id, args, ctx, sandbox, None)
        # The command's private temporary folder (the only writable one besides the
        # workspace), removed with what it holds once the command and its children are gone.
        tmpdir = Path(tempfile.mkdtemp(prefix="desktop-agent-sh-"))
        try:
            return await self._run(call_id, args, ctx, sandbox, tmpdir)
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)

    async def _run(
        self,
        call_id: str,
        args: BashParams,
        ctx: ToolContext,
        sandbox: Sandbox,
        tmpdir: Path | None,
    ) -> ToolResult:
        timeout = args.timeout if args.timeout is not None else self.default_timeout
        base_env = ctx.env if ctx.env is not None else os.environ
        env = sandbox.environment(scrub_environment(base_env), tmpdir)
        argv = sandbox.wrap(
            self.argv(args.command),
            workspace=ctx.workspace.root,
            forbidden=ctx.workspace.forbidden_roots,
            tmpdir=tmpdir,
        )
        redactor = ctx.redactor.stream(shapes=ctx.redact_shapes) if ctx.redactor else None
        out = _Output(
            self.max_output_bytes, self.max_output_lines, ctx.output_dir, call_id, redactor
        )
        extra: dict[str, Any] = (
            {"start_new_session": True}
            if _POSIX
            else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
        )
        # Our own pipe instead of asyncio's PIPE: Process.wait() then resolves when the
        # shell exits even if a background child still holds the write end (3.11 waits
        # for the pipes too), and closing our read end never depends on the children.
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        stream = asyncio.StreamReader(loop=loop)
        try:
            transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(stream, loop=loop),
                os.fdopen(read_fd, "rb", buffering=0),
            )
        except BaseException:
            os.close(write_fd)
            raise
        try:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=ctx.workspace.root,
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=write_fd,
                    stderr=write_fd,
                    **extra,
                )
            finally:
                os.close(write_fd)
            reader = asyncio.create_task(self._pump(stream, out, ctx, proc.pid))
            timed_out = False
            try:
                try:
                    async with asyncio.timeout(timeout):
                        await proc.wait()
                except TimeoutError:
                    timed_out = True
                else:
                    await asyncio.wait({reader}, timeout=self.drain_grace)
            finally:
                try:
                    await self._kill_group(proc, reader)
                    await asyncio.wait({reader}, timeout=self.drain_grace)
                finally:
                    if not reader.done():
                        reader.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await reader
        finally:
            transport.close()
            out.close()
        result = self._result(args, out, proc.returncode, timed_out, timeout, proc.pid)
        return self._sandbox_result(result, out, sandbox, proc.returncode, ctx)

    def _sandbox_result(
        self,
        result: ToolResult,
        out: _Output,
        sandbox: Sandbox,
        code: int | None,
        ctx: ToolContext,
    ) -> ToolResult:
        """Says where the command ran, and in plain words what the sandbox blocked."""
        details = dict(result.details or {})
        details["sandbox"] = "outside" if ctx.outside_sandbox else sandbox.kind
        text, _ = out.text()
        blocked = sandbox.blocked(text, code, ctx.workspace.forbidden_roots)
        if blocked is None:
            result.details = details
            return result
        details["sandboxBlocked"] = blocked
        explained = result.text_content() + "\n\n" + sandbox.explain(blocked, ctx.workspace.root)
        return ToolResult.text(explained, details, is_error=True)

    async def _pump(
        self, stream: asyncio.StreamReader, out: _Output, ctx: ToolContext, pid: int
    ) -> None:
        loop = asyncio.get_running_loop()
        last = -1e9
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            out.feed(chunk)
            now = loop.time()
            if now - last >= self.update_interval:
                last = now
                text, _ = out.text()
                await ctx.update(ToolResult.text(text, {"pid": pid}))

    async def _kill_group(
        self, proc: asyncio.subprocess.Process, reader: asyncio.Task[None]
    ) -> None:
        """SIGTERM the whole group, wait a little, then SIGKILL it; reap the shell."""
        if not _POSIX:
            await _kill_tree_windows(proc)
            return
        pgid = proc.pid
        alive = _signal_group(pgid, signal.SIGTERM)
        try:
            if alive:
                deadline = asyncio.get_running_loop().time() + self.kill_grace
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout_at(deadline):
                        await proc.wait()
                        await asyncio.wait({reader})
        finally:
            if alive:
                _signal_group(pgid, signal.SIGKILL)
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            await proc.wait()

    def _result(
        self,
        args: BashParams,
        out: _Output,
        code: int | None,
        timed_out: bool,
        timeout: float,
        pid: int,
    ) -> ToolResult:
        text, truncated = out.text()
        parts = [text if text else "(no output)"]
        if truncated:
            shown_lines = text.count("\n") + 1 if text else 0
            parts.append(
                f"[Output truncated: showing the last {shown_lines} lines of "
                f"{max(out.total_lines, shown_lines)} ({out.total_bytes} bytes in all). "
                f"Full output: {out.path}]"
            )
        is_error = False
        if timed_out:
            parts.append(
                f"Command timed out after {timeout:g} seconds; it and its child processes "
                "were killed."
            )
            is_error = True
        elif code is not None and code != 0:
            if code < 0:
                parts.append(f"Command was killed by signal {-code}.")
            else:
                parts.append(f"Command exited with code {code}.")
            is_error = True
        details: dict[str, Any] = {
            "exitCode": code,
            "timedOut": timed_out,
            "truncated": truncated,
            "fullOutputPath": str(out.path) if out.path is not None else None,
            "pid": pid,
        }
        return ToolResult.text("\n\n".join(parts), details, is_error=is_error)


def _signal_group(pgid: int, sig: int) -> bool:
    killpg = getattr(os, "killpg", None)
    if killpg is None:
        return False
    try:
        killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _kill_tree_windows(proc: asyncio.subprocess.Process) -> None:  # pragma: no cover
    if proc.returncode is None:
        try:
            killer = await asyncio.create_subprocess_exec(
                "taskkill",
                "/F",
                "/T",
                "/PID",
                str(proc.pid),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            await killer.wait()
        except OSError:
            pass
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    await proc.wait()
