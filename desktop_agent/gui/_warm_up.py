"""`WarmUp`: the first request's one-off work (importing the SDKs: seconds of CPU on a
thread), started once the restored session is settled, not during it: on the GIL it
stretched the settling of a 100 MB session by a second.

Sources read meanwhile (by tracebacks, warnings or an import hook; PySide6's own read
every module imported after Qt until `gui._pyside_hook` made it cheap) are dropped from
`linecache` once the SDKs are in: a traceback reads a file again when it needs it.
"""

from __future__ import annotations

import asyncio
import linecache
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

log = logging.getLogger("desktop_agent.gui")


class WarmUp:
    """``warm_up()`` (the workbench's SDK imports) run through ``spawn`` once
    ``restored()`` returns, after the window's first paint (`start`)."""

    def __init__(
        self,
        warm_up: Callable[[], Coroutine[Any, Any, None]],
        restored: Callable[[], Awaitable[None]],
        spawn: Callable[[Coroutine[Any, Any, Any]], asyncio.Task[Any]],
        *,
        enabled: bool = True,
    ) -> None:
        self._warm_up = warm_up
        self._restored = restored
        self._spawn = spawn
        self.enabled = enabled
        self.task: asyncio.Task[Any] | None = None
        """The SDK imports, once started."""
        self._waiter: asyncio.Task[None] | None = None
        self._cancelled = False

    def start(self) -> None:
        """After the first paint: wait for the settle, then import. The wait is not one
        of the window's tasks (`MainWindow.settle_tasks` does not wait for a big
        session's first read through it); `cancel` ends it."""
        linecache.clearcache()
        if self.enabled:
            self._waiter = asyncio.ensure_future(self._when_settled())
            self._waiter.add_done_callback(self._waiter_done)

    def cancel(self) -> None:
        """The window quits: no import starts any more."""
        self._cancelled = True
        if self._waiter is not None:
            self._waiter.cancel()

    async def done(self) -> None:
        """Once the warm-up is over: its wait for the settle, then the SDK imports (at
        once when there is none; a failure is logged, not raised)."""
        if self._waiter is not None:
            await asyncio.wait([self._waiter])
        if self.task is not None:
            await asyncio.wait([self.task])

    def _waiter_done(self, task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("the SDK warm-up could not start", exc_info=exc)

    async def _when_settled(self) -> None:
        await self._restored()
        if not self._cancelled:
            self.task = self._spawn(self._run())

    async def _run(self) -> None:
        try:
            await self._warm_up()
        finally:
            linecache.clearcache()
