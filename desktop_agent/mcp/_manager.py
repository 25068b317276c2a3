"""`McpManager`: every configured server, on one worker thread with its own event loop.

MCP I/O never runs on the window's loop (ARCHITECTURE §5): the SDK, the processes and the
HTTP connections live on the ``mcp-io`` thread. The caller's loop keeps a snapshot of each
server's status and tools, updated by the worker, and hears of every change through the
listeners (called on the caller's loop). `start` returns at once; servers come up in the
background. A call runs on the worker; cancelling the caller's task cancels it there (the
SDK then sends ``notifications/cancelled``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_agent.mcp._config import McpConfig, McpServerConfig
from desktop_agent.mcp._names import tool_name
from desktop_agent.mcp._status import (
    ProgressSink,
    ServerGone,
    ServerRefused,
    ServerStatus,
    ServerTool,
)
from desktop_agent.mcp._tool import McpTool
from desktop_agent.tools import ToolResult

if TYPE_CHECKING:
    from desktop_agent.mcp._server import ServerConnection

_log = logging.getLogger(__name__)
T = TypeVar("T")
Listener = Callable[[], object]


class _Worker:
    """A thread running an asyncio loop until `close`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="mcp-io", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
            pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        """``coro`` on the worker, as a future of the caller's loop (cancel propagates)."""
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        await asyncio.to_thread(self._thread.join)


class _Handle:
    """The caller's handle on one server. Its `ServerConnection` (and with it the MCP SDK)
    is made on the worker thread; every coroutine here runs on the worker loop."""

    def __init__(self, name: str, config: McpServerConfig) -> None:
        self.name = name
        self.config = config
        self.connection: ServerConnection | None = None

    def create(self, on_change: Callable[[_Handle, ServerConnection], None]) -> None:
        """(worker loop) Make the connection and start it."""
        from desktop_agent.mcp._server import ServerConnection

        self.connection = ServerConnection(self.name, self.config, lambda c: on_change(self, c))
        self.connection.start()

    def _live(self) -> ServerConnection:
        assert self.connection is not None, "created first (FIFO on the worker loop)"
        return self.connection

    async def stop(self) -> None:
        await self._live().stop()

    async def restart(self) -> None:
        await self._live().restart()

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: ProgressSink
    ) -> ToolResult:
        from desktop_agent.mcp._results import convert_result

        result = await self._live().call(tool, arguments, progress)
        return convert_result(result, self.name, tool)


class McpManager:
    """The configured servers: their statuses, their tools as `McpTool`s, calls, restarts."""

    def __init__(self, config: McpConfig | None = None) -> None:
        self.config = config or McpConfig()
        self._worker: _Worker | None = None
        self._main: asyncio.AbstractEventLoop | None = None
        self._connections: dict[str, _Handle] = {}
        self._status: dict[str, ServerStatus] = {}
        self._tools: dict[str, list[ServerTool]] = {}
        self._listeners: list[Listener] = []
        self._closed = False
        self._tool_cache: list[McpTool] | None = None

    # ------------------------------------------------------------- views (caller's loop)

    def statuses(self) -> list[ServerStatus]:
        """Every configured server's status, in the order of the file."""
        out = []
        for name, server in self.config.servers.items():
            status = self._status.get(name)
            if status is None:
                detail = "disabled" if server.disabled else ""
                status = ServerStatus(name, "stopped", 0, detail, server.transport)
            out.append(status)
        return out

    def tools(self) -> list[McpTool]:
        """The tools of the ready, enabled servers (allow-lists applied), uniquely named;
        the same objects until a status or a tool list changes."""
        if self._tool_cache is None:
            self._tool_cache = self._build_tools()
        return list(self._tool_cache)

    def _build_tools(self) -> list[McpTool]:
        out: list[McpTool] = []
        taken: set[str] = set()
        for name, server in self.config.servers.items():
            status = self._status.get(name)
            if server.disabled or status is None or status.state != "ready":
                continue
            allowed = set(server.allowed_tools) if server.allowed_tools is not None else None
            for tool in self._tools.get(name, []):
                if allowed is not None and tool.name not in allowed:
                    continue
                full = tool_name(name, tool.name)
                n = 2
                while full in taken:
                    full = f"{tool_name(name, tool.name)[:60]}_{n}"
                    n += 1
                taken.add(full)
                out.append(
                    McpTool(
                        name=full,
                        server=name,
                        tool=tool.name,
                        description=tool.description,
                        input_schema=tool.input_schema,
                        call=self.call,
                    )
                )
        return out

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """``listener()`` after every change of a status or a tool list (caller's loop)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # ------------------------------------------------------------- lifetime

    def start(self) -> None:
        """Start every enabled server in the background (returns at once)."""
        if self._closed or self._worker is not None:
            return
        self._main = asyncio.get_running_loop()
        if not self.config.enabled():
            return  # no thread for no servers
        self._ensure_worker()
        for name, server in self.config.enabled().items():
            self._connect(name, server)

    def _ensure_worker(self) -> _Worker:
        if self._worker is None:
            self._main = asyncio.get_running_loop()
            self._worker = _Worker()
        return self._worker

    def _connect(self, name: str, server: McpServerConfig) -> None:
        worker = self._ensure_worker()
        handle = _Handle(name, server)
        self._connections[name] = handle
        self._status[name] = ServerStatus(name, "starting", 0, "", server.transport)
        self._tool_cache = None
        worker.loop.call_soon_threadsafe(handle.create, self._changed)

    def _changed(self, handle: _Handle, connection: ServerConnection) -> None:
        """(worker loop) Hand the new status and tools to the caller's loop."""
        status, tools = connection.status(), list(connection.tools)
        main = self._main
        if main is None or main.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the caller's loop has gone
            main.call_soon_threadsafe(self._apply, handle, status, tools)

    def _apply(self, handle: _Handle, status: ServerStatus, tools: list[ServerTool]) -> None:
        if self._connections.get(status.name) is not handle:
            return  # a connection replaced since
        self._status[status.name] = status
        self._tools[status.name] = tools
        self._tell()

    def _tell(self) -> None:
        self._tool_cache = None
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:  # noqa: BLE001 - a listener never breaks the others
                _log.exception("MCP status listener failed")

    async def restart(self, name: str) -> None:
        """Stop and start one server (also a failed or stopped one)."""
        server = self.config.servers.get(name)
        if server is None or self._closed:
            return
        connection = self._connections.get(name)
        if connection is None:
            self._connect(name, server)
            return
        await self._ensure_worker().submit(connection.restart())

    async def apply_config(self, config: McpConfig) -> None:
        """Use ``config`` from now on: stop removed, disabled or changed servers, start new ones."""
        old, self.config = self.config, config
        if self._main is None or self._closed:  # not started (yet): only the new config
            self._tell()
            return
        for name, connection in list(self._connections.items()):
            new = config.servers.get(name)
            if new is None or new.disabled or new != old.servers.get(name):
                del self._connections[name]
                self._status.pop(name, None)
                self._tools.pop(name, None)
                await self._ensure_worker().submit(connection.stop())
        for name, server in config.enabled().items():
            if name not in self._connections:
                self._connect(name, server)
        self._tell()

    async def close(self) -> None:
        """Stop every server and the worker thread."""
        self._closed = True
        self._status.clear()  # all "stopped" now (not told: the window is closing)
        self._tools.clear()
        self._tool_cache = None
        worker, self._worker = self._worker, None
        if worker is None:
            return
        connections = list(self._connections.values())
        self._connections.clear()
        with contextlib.suppress(Exception):
            await worker.submit(_stop_all(connections))
        await worker.close()

    # ------------------------------------------------------------- calls

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], progress: ProgressSink
    ) -> ToolResult:
        """Call ``tool`` of ``server``; every failure is an error result naming the server."""
        connection = self._connections.get(server)
        if connection is None or self._worker is None:
            return ToolResult.error(f"The MCP server '{server}' is not running.")
        main = asyncio.get_running_loop()

        def forward(done: float, total: float | None, message: str | None) -> None:
            with contextlib.suppress(RuntimeError):
                main.call_soon_threadsafe(progress, done, total, message)

        try:
            return await self._worker.submit(connection.call(tool, arguments, forward))
        except ServerGone as exc:
            return ToolResult.error(str(exc), {"mcp": {"server": server, "tool": tool}})
        except TimeoutError:
            return ToolResult.error(
                f"The MCP server '{server}' did not finish '{tool}' within "
                f"{connection.config.timeout:g} s."
            )
        except ServerRefused as exc:
            return ToolResult.error(f"The MCP server '{server}' refused '{tool}': {exc}")


async def _stop_all(connections: list[_Handle]) -> None:
    await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)
