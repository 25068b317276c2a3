"""The session writes of a harness (`Persister`): saving failures never stop a run.

A write that fails leaves its entries in the session's memory; ``persistence_error`` is
emitted once per failure burst and ``persistence_restored`` when the session is whole on
disk again (`retry`, or a reload from disk). Writes that would land in the middle of a
run (settings changes, records) are queued and written at the turn's end (`flush`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from desktop_agent.harness._events import (
    HarnessEvent,
    PersistenceErrorEvent,
    PersistenceRestoredEvent,
)
from desktop_agent.session import ReloadReport, Session, SessionWriteError

Write = Callable[[], Awaitable[Any]]


class Persister:
    """Runs the session writes of one harness; ``emit`` hears the failure events."""

    def __init__(self, session: Session, emit: Callable[[HarnessEvent], Awaitable[None]]) -> None:
        self.session = session
        self._emit = emit
        self.failing = False
        """Within a failure burst (its one ``persistence_error`` was emitted)."""
        self._queued: list[Write] = []

    async def persist(self, write: Write) -> None:
        """Run one session write; a failure becomes an event, its entries stay in memory."""
        try:
            await write()
        except SessionWriteError as exc:
            await self._failed(exc)
            return
        if self.failing and self.session.pending_count == 0:
            self.failing = False
            await self._emit(PersistenceRestoredEvent(written=0))

    async def persist_and_sync(self, write: Write) -> None:
        await self.persist(write)
        await self.persist(self.session.sync)

    def queue(self, write: Write) -> None:
        """Write later (`flush`: at the turn's end)."""
        self._queued.append(write)

    async def flush(self) -> bool:
        """Run the queued writes in order; whether there were any."""
        had = bool(self._queued)
        while self._queued:
            await self.persist(self._queued.pop(0))
        return had

    async def retry(self) -> int:
        """Write exactly the entries that are not on disk yet; returns how many."""
        try:
            written = await self.session.retry_persistence()
        except SessionWriteError as exc:
            self.failing = False  # a new burst: report it
            await self._failed(exc)
            raise
        was_failing = self.failing
        self.failing = False
        if was_failing or written:
            await self._emit(PersistenceRestoredEvent(written=written))
        return written

    async def reloaded(self, report: ReloadReport) -> None:
        """The session took in its file from disk (`Session.reload_from_disk`)."""
        self.failing = False
        if report.error is not None:
            await self._failed(report.error)
        else:
            await self._emit(PersistenceRestoredEvent(written=len(report.kept)))

    async def _failed(self, exc: SessionWriteError) -> None:
        if self.failing:
            return  # one event per failure burst
        self.failing = True
        os_error = exc.os_error
        await self._emit(
            PersistenceErrorEvent(
                operation=exc.operation,
                path=exc.path,
                os_error=str(os_error) if os_error is not None else None,
                errno=os_error.errno if os_error is not None else None,
                code=exc.code,
                pending_count=exc.pending_count,
                message=exc.message,
            )
        )
