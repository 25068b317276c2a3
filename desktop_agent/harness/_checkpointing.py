"""Checkpoints of a run: the folder is snapshotted before the first tool call of a turn
that may change files, and again at the turn's end; both are recorded in the session as
``custom`` entries (`desktop_agent.checkpoints.record_data`), at the points they describe.

Every tool may change files except the read-only built-ins (`READ_ONLY_TOOLS`): write,
edit, bash, and any tool the app does not know (MCP tools) are gated by
`CheckpointedTool`. A failed snapshot never stops the run: it becomes a notice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from desktop_agent.agent import AgentTool, AgentToolResult, ToolUpdate
from desktop_agent.ai import ToolDefinition
from desktop_agent.checkpoints import (
    CheckpointError,
    FolderCheckpoints,
    Skipped,
    Snapshot,
    record_data,
)

_log = logging.getLogger("desktop_agent.harness.checkpoints")

READ_ONLY_TOOLS = frozenset({"read", "ls", "grep", "find"})
"""Built-in tools that never change a file; every other tool is snapshotted around."""

Append = Callable[[dict[str, Any]], Awaitable[None]]
Notify = Callable[[str], Awaitable[None]]


def skipped_notice(skipped: tuple[Skipped, ...]) -> str | None:
    if not skipped:
        return None
    listed = "; ".join(f"{s.path} ({s.reason})" for s in skipped[:20])
    more = f" and {len(skipped) - 20} more" if len(skipped) > 20 else ""
    return f"Not in the checkpoint, so a restore will not bring them back: {listed}{more}"


class TurnCheckpoints:
    """The before/after snapshots of the current turn."""

    def __init__(self, folder: FolderCheckpoints, append: Append, notify: Notify) -> None:
        self.folder = folder
        self._append = append
        self._notify = notify
        self._lock = asyncio.Lock()
        self._before: Snapshot | None = None
        self._tried = False
        self._last_skipped: frozenset[Skipped] = frozenset()

    async def before_tool(self) -> None:
        """Snapshot the folder once per turn, before its first file-changing tool runs."""
        async with self._lock:
            if self._tried:
                return
            self._tried = True
            snapshot = await self._snapshot()
            if snapshot is None:
                return
            self._before = snapshot
            await self._append(record_data("before", snapshot))

    async def turn_end(self) -> None:
        """Snapshot the folder after a turn that took a "before" snapshot."""
        async with self._lock:
            before, self._before, self._tried = self._before, None, False
            if before is None:
                return
            snapshot = await self._snapshot()
            if snapshot is None:
                return
            try:
                changes = await self.folder.diff(before.tree, snapshot.tree)
            except CheckpointError as exc:
                await self._notify(f"Checkpoint not compared: {exc.message}")
                changes = []
            await self._append(
                record_data(
                    "after", snapshot, before=before.tree, changed=[c.path for c in changes]
                )
            )

    async def _snapshot(self) -> Snapshot | None:
        try:
            snapshot = await self.folder.snapshot()
        except CheckpointError as exc:
            _log.warning("checkpoint failed: %s", exc.message)
            await self._notify(f"No checkpoint of the folder: {exc.message}")
            return None
        skipped = frozenset(snapshot.skipped)
        if skipped - self._last_skipped:  # each new skip once, not at every snapshot
            notice = skipped_notice(snapshot.skipped)
            if notice is not None:
                await self._notify(notice)
        self._last_skipped = skipped
        return snapshot


class CheckpointedTool:
    """A tool that may change files: the turn's "before" snapshot is taken first."""

    def __init__(self, tool: AgentTool, checkpoints: TurnCheckpoints) -> None:
        self.tool = tool
        self._checkpoints = checkpoints

    @property
    def definition(self) -> ToolDefinition:
        return self.tool.definition

    @property
    def execution_mode(self) -> Literal["parallel", "sequential"]:
        return self.tool.execution_mode

    async def execute(
        self, call_id: str, arguments: dict[str, Any], on_update: ToolUpdate
    ) -> AgentToolResult:
        await self._checkpoints.before_tool()
        return await self.tool.execute(call_id, arguments, on_update)
