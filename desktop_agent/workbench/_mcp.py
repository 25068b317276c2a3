"""The MCP servers as the workbench uses them: started after the first paint, their
tools handed to every harness, their statuses for the window, their failures as notices.

`McpServers.load` reads ``mcp.json`` (a broken file is a notice, never a failed start),
teaches the redactor every value of the servers' ``env`` and ``headers`` (so they never
reach a session file, the index or the logs) and builds the `McpManager`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol

from desktop_agent.mcp import McpConfig, McpConfigError, McpManager, ServerStatus, load_mcp_config
from desktop_agent.tools import Tool
from desktop_agent.utils import Redactor
from desktop_agent.workbench._changes import Changes

log = logging.getLogger(__name__)

FAILED = "The MCP server {name} failed: {detail}"
CONFIG_PROBLEM = "mcp.json: {problem}"


class McpServers:
    """The manager, and what the window shows of it."""

    def __init__(
        self,
        manager: McpManager | None = None,
        *,
        path: Path | None = None,
        problems: tuple[str, ...] = (),
    ) -> None:
        self.manager = manager or McpManager()
        self.path = path
        """The ``mcp.json`` it was read from (None: no file, as in most tests)."""
        self.problems = problems
        """Why ``mcp.json`` or some of its entries could not be used."""
        self.started = False
        self.noticed: set[str] = set()
        """The notice keys shown for servers and the file (dropped when resolved)."""

    @classmethod
    def load(cls, path: Path, *, redactor: Redactor | None = None) -> McpServers:
        try:
            config = load_mcp_config(path)
        except McpConfigError as exc:
            log.warning("%s", exc)
            return cls(McpManager(McpConfig()), path=path, problems=(str(exc),))
        if redactor is not None:
            redactor.add_secrets(config.secrets(), kind="MCP server secret")
        problems = tuple(config.problems)
        for problem in problems:
            log.warning("mcp.json: %s", problem)
        return cls(McpManager(config), path=path, problems=problems)

    def start(self) -> None:
        """Start the enabled servers in the background (once; returns at once)."""
        if not self.started:
            self.started = True
            self.manager.start()

    def tools(self) -> list[Tool[Any]]:
        return [*self.manager.tools()]

    def statuses(self) -> list[ServerStatus]:
        return self.manager.statuses()

    def failures(self) -> dict[str, str]:
        """The failed servers by name, with why (the notices)."""
        return {s.name: s.detail for s in self.statuses() if s.state == "failed"}

    def subscribe(self, listener: Callable[[], object]) -> Callable[[], None]:
        return self.manager.subscribe(listener)

    async def restart(self, name: str) -> None:
        await self.manager.restart(name)

    async def close(self) -> None:
        await self.manager.close()


Action = tuple[str, Callable[[], Coroutine[Any, Any, Changes]]]


class Notify(Protocol):
    def __call__(
        self, key: str, text: str | None, action: Action | None = None, **args: object
    ) -> Changes: ...


def mcp_changed(servers: McpServers, notify: Notify) -> Changes:
    """The notices of failed servers (with Restart) and of ``mcp.json``'s problems, once
    started; ``Changes(mcp=True)`` for the servers menu and Settings."""
    changes = Changes(mcp=True)
    if not servers.started:
        return changes
    shown: set[str] = set()
    for i, problem in enumerate(servers.problems):
        key = f"mcp-config:{i}"
        shown.add(key)
        if key not in servers.noticed:
            changes = changes | notify(key, CONFIG_PROBLEM, problem=problem)
    for name, detail in servers.failures().items():
        key = f"mcp:{name}"
        shown.add(key)
        changes = changes | notify(
            key, FAILED, ("Restart", _restarter(servers, name)), name=name, detail=detail
        )
    for key in servers.noticed - shown:
        changes = changes | notify(key, None)
    servers.noticed = shown
    return changes


def _restarter(servers: McpServers, name: str) -> Callable[[], Coroutine[Any, Any, Changes]]:
    async def restart() -> Changes:
        await servers.restart(name)
        return Changes(mcp=True)

    return restart
