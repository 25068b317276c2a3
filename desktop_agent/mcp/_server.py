"""One configured MCP server, connected on the MCP worker loop (never the window's).

This module loads the MCP SDK: only the worker thread imports it (`_manager`), so the
app's start (and its first paint) never pays for the SDK's imports.

`ServerConnection` owns one server's lifetime: it starts the connection (stdio process,
Streamable HTTP or SSE), waits at most ``initTimeout`` for ``initialize`` and the first
``tools/list``, keeps the tool list current on ``notifications/tools/list_changed``,
runs calls (with a timeout, progress and cancellation: cancelling the call's task makes
the SDK send ``notifications/cancelled``), notices a connection that ends by itself and
starts again after a back-off (1, 2, 4 … 60 s; `MAX_RESTARTS` in a row, then it stays
failed). Every change of state is reported through ``on_change`` (on the worker loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import IO, Any, Literal, TextIO, cast

import anyio
import mcp.types as mt
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from desktop_agent.mcp._config import McpServerConfig
from desktop_agent.mcp._status import (
    ProgressSink,
    ServerGone,
    ServerRefused,
    ServerStatus,
    ServerTool,
    State,
)

_log = logging.getLogger(__name__)

MAX_RESTARTS = 5
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0)
STDERR_LINES = 8
GONE_WAIT_S = 10.0
STABLE_S = 30.0
"""A connection that lasted this long resets the restart count."""
CLIENT_INFO = mt.Implementation(name="desktop-agent", version="1")


class _Watched:
    """The transport's read stream; `lost` is set when it ends (the server went away)."""

    def __init__(self, inner: Any, lost: asyncio.Event) -> None:
        self._inner = inner
        self._lost = lost

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _Watched:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        self._lost.set()
        return await self._inner.__aexit__(*exc)

    def __aiter__(self) -> _Watched:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError, anyio.EndOfStream):
            self._lost.set()
            raise


def _tail(stderr: IO[str] | None, lines: int = STDERR_LINES) -> str:
    if stderr is None:
        return ""
    try:
        stderr.flush()
        stderr.seek(0)
        text = stderr.read()[-20_000:]
        stderr.seek(0, 2)
    except (OSError, ValueError):
        return ""
    return "\n".join(line.rstrip() for line in text.strip().splitlines()[-lines:])


def _describe(exc: BaseException) -> str:
    if isinstance(exc, MCPError):
        return exc.message
    if isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return _describe(inner)
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class ServerConnection:
    """One server on the worker loop. All methods run on that loop."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        on_change: Callable[[ServerConnection], None],
    ) -> None:
        self.name = name
        self.config = config
        self._on_change = on_change
        self.state: State = "stopped"
        self.detail = ""
        self.tools: list[ServerTool] = []
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lost = asyncio.Event()
        self._stderr: IO[str] | None = None
        self._last_stderr = ""
        self._relist: asyncio.Task[None] | None = None
        self._state_changed = asyncio.Event()
        """Set (and replaced) at every change of `state`."""
        self.restarts = 0
        self.starts = 0

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def status(self) -> ServerStatus:
        detail = "disabled" if self.config.disabled and self.state == "stopped" else self.detail
        return ServerStatus(self.name, self.state, len(self.tools), detail, self.config.transport)

    def _set(self, state: State, detail: str = "") -> None:
        self.state, self.detail = state, detail
        if state != "ready":
            self.tools = []
        changed, self._state_changed = self._state_changed, asyncio.Event()
        changed.set()
        self._on_change(self)

    # ------------------------------------------------------------- lifetime

    def start(self) -> None:
        """Start (or restart) in the background; the state says how it goes."""
        if self._task is not None and not self._task.done():
            return
        self._stop = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp:{self.name}")

    async def stop(self) -> None:
        """Stop and wait until its process has ended (or its connection is closed)."""
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.state != "stopped":
            self._set("stopped")

    async def restart(self) -> None:
        await self.stop()
        self.restarts = 0
        self.start()

    async def wait_ready(self, within: float) -> None:
        """Start if needed and wait until ready; raises `ServerGone` when it is not."""
        if self.state != "ready":
            self.start()
            deadline = time.monotonic() + within
            while not self.ready:
                if self.state == "failed" and (self._task is None or self._task.done()):
                    break
                if time.monotonic() >= deadline:
                    break
                await asyncio.sleep(0.05)
        if self.state != "ready" or self._client is None:
            reason = f": {self.detail}" if self.detail else ""
            raise ServerGone(f"The MCP server '{self.name}' is {self.state}{reason}")

    async def _run(self) -> None:
        """Connect; after a connection that ended by itself, back off and connect again."""
        while not self._stop.is_set():
            began = time.monotonic()
            outcome = await self._connect_once()
            if outcome == "stopped" or self._stop.is_set():
                return
            if outcome == "init_failed":
                return  # failed; started again on demand (or by the next call)
            if time.monotonic() - began >= STABLE_S:
                self.restarts = 0
            if self.restarts >= MAX_RESTARTS:
                self._set(
                    "failed", f"{self.detail}\n(stopped restarting after {MAX_RESTARTS} tries)"
                )
                return
            delay = BACKOFF_S[min(self.restarts, len(BACKOFF_S) - 1)]
            self.restarts += 1
            _log.info("MCP server %s ended; restarting in %.0f s", self.name, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)

    async def _connect_once(self) -> Literal["stopped", "init_failed", "lost"]:
        """One connection, from the start to its end; every wait also ends on `stop`, and
        the session (the process or the HTTP connection) is always closed on the way out."""
        self.starts += 1
        self._set("starting")
        self._lost = asyncio.Event()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        session = loop.create_task(self._session(ready))
        stop_wait = loop.create_task(self._stop.wait())
        first: set[asyncio.Future[Any]] = {session, ready, stop_wait}
        try:
            done, _ = await asyncio.wait(
                first,
                timeout=self.config.init_timeout,
                return_when="FIRST_COMPLETED",
            )
            if self._stop.is_set():
                return "stopped"
            if not ready.done() or ready.exception() is not None:
                if not session.done():
                    session.cancel()
                error = await _outcome(session)
                if not done:
                    why = f"did not finish initialize in {self.config.init_timeout:g} s"
                else:
                    why = _describe(error) if error is not None else "the connection ended"
                self._fail(why)
                return "init_failed"
            self._set("ready")
            await asyncio.wait({session, stop_wait}, return_when="FIRST_COMPLETED")
            if self._stop.is_set():
                return "stopped"
            error = await _outcome(session)
            ended = _describe(error) if error else "connection closed"
            self._fail(f"stopped unexpectedly ({ended})")
            return "lost"
        finally:
            stop_wait.cancel()
            if not session.done():
                session.cancel()
            await _outcome(session)

    def _fail(self, why: str) -> None:
        tail = _tail(self._stderr) or self._last_stderr
        self._client = None
        self._set("failed", f"{why}\n{tail}".strip())
        _log.warning("MCP server %s failed: %s", self.name, why)

    async def _session(self, ready: asyncio.Future[None]) -> None:
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as stderr:
            self._stderr = stderr
            try:
                async with AsyncExitStack() as stack:
                    transport = self._transport(stderr)
                    client = Client(
                        transport,
                        mode="legacy",
                        message_handler=self._on_message,
                        client_info=CLIENT_INFO,
                        cache=None,
                    )
                    await stack.enter_async_context(client)
                    self.tools = await self._list(client)
                    self._client = client
                    ready.set_result(None)
                    await self._lost.wait()
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(
                        exc if isinstance(exc, Exception) else ServerGone("stopped")
                    )
                    ready.exception()  # retrieved here: the caller reads the session's outcome
                raise
            finally:
                self._client = None
                if self._relist is not None:
                    self._relist.cancel()
                self._last_stderr = _tail(stderr)  # what it said, after the file is gone
                self._stderr = None

    @asynccontextmanager
    async def _transport(self, stderr: IO[str]) -> AsyncIterator[Any]:
        config = self.config
        async with AsyncExitStack() as stack:
            if config.transport == "stdio":
                params = StdioServerParameters(
                    command=config.command or "",
                    args=config.args,
                    env=config.env or None,
                    cwd=config.cwd,
                )
                streams = await stack.enter_async_context(
                    stdio_client(params, errlog=cast(TextIO, stderr))
                )
            elif config.transport == "sse":
                streams = await stack.enter_async_context(
                    sse_client(config.url or "", headers=dict(config.headers))
                )
            else:
                http = await stack.enter_async_context(
                    create_mcp_http_client(headers=dict(config.headers))
                )
                streams = await stack.enter_async_context(
                    streamable_http_client(config.url or "", http_client=http)
                )
            read, write = streams
            yield _Watched(read, self._lost), write

    async def _list(self, client: Client) -> list[ServerTool]:
        tools: list[ServerTool] = []
        cursor: str | None = None
        for _page in range(100):
            listed = await (client.list_tools(cursor=cursor) if cursor else client.list_tools())
            tools += [
                ServerTool(t.name, t.description or t.title or "", dict(t.input_schema or {}))
                for t in listed.tools
            ]
            cursor = listed.next_cursor
            if not cursor:
                break
        return tools

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mt.ServerNotification):
            message = message.root if hasattr(message, "root") else message
        if isinstance(message, mt.ToolListChangedNotification) and self._client is not None:
            if self._relist is None or self._relist.done():
                self._relist = asyncio.get_running_loop().create_task(self._refresh())
        elif isinstance(message, Exception):
            _log.debug("MCP server %s: %s", self.name, message)

    async def _refresh(self) -> None:
        client = self._client
        if client is None:
            return
        try:
            self.tools = await self._list(client)
        except Exception as exc:  # noqa: BLE001 - the old list stays; the next change retries
            _log.warning("MCP server %s: listing its tools failed: %s", self.name, _describe(exc))
            return
        if self.state == "ready":
            self._on_change(self)

    # ------------------------------------------------------------- calls

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: ProgressSink | None
    ) -> mt.CallToolResult:
        """Call ``tool``; raises `ServerGone` (naming the server) or `TimeoutError`."""
        await self.wait_ready(self.config.init_timeout)
        client = self._client
        assert client is not None

        sink = progress

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if sink is not None:
                sink(progress, total, message)

        try:
            with anyio.fail_after(self.config.timeout):
                return await client.call_tool(tool, arguments, progress_callback=on_progress)
        except MCPError as exc:
            if exc.code == mt.CONNECTION_CLOSED or self._lost.is_set():
                await self._wait_gone()
                raise ServerGone(self._gone_text()) from exc
            raise ServerRefused(exc.message) from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            await self._wait_gone()
            raise ServerGone(self._gone_text()) from exc

    async def _wait_gone(self) -> None:
        """Until the session has reported the failure (with its stderr): at once, unless
        the machine is very busy (at most `GONE_WAIT_S`)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(GONE_WAIT_S):
                while self.state == "ready":
                    await self._state_changed.wait()

    def _gone_text(self) -> str:
        detail = self.detail or "connection closed"
        return f"The MCP server '{self.name}' stopped during the call: {detail}"


async def _outcome(task: asyncio.Task[None]) -> BaseException | None:
    try:
        await task
    except asyncio.CancelledError:
        return None
    except BaseException as exc:  # noqa: BLE001 - reported as the server's failure
        return exc
    return None
