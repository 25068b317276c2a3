"""`SessionList`: where sessions are kept (our store, the Pi CLI's folder) and the list
the sidebar shows: its rows, the trash, the search, and the start-up handshake.

At start-up each folder's index is brought in line with its files (`start`): a stat per
file, awaited; a first index of thousands of files goes on in the background after
`WorkbenchLimits.index_wait_s`, and the list fills when it ends. A big file the list
does not know yet would be read twice before the window could show it (for the list,
then as the session): the one a launch restores, and big new ones the index only
glanced at, wait in `index_after_open` and are indexed from what opening them read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from desktop_agent.config import PiSessionsSettings
from desktop_agent.session import Session, SessionError
from desktop_agent.workbench._limits import WorkbenchLimits
from desktop_agent.workbench._store import JsonlStore, SessionStore
from desktop_agent.workbench._views import SidebarRow, newest_first

log = logging.getLogger("desktop_agent.workbench")

_T = TypeVar("_T")


class SessionList:
    """The stores and the rows of the session list (see the module doc)."""

    def __init__(
        self,
        store: SessionStore,
        *,
        pi_store: JsonlStore | None,
        make_pi: Callable[[PiSessionsSettings], JsonlStore | None] | None,
        pi_default_folder: str,
        limits: WorkbenchLimits,
        spawn: Callable[[Coroutine[Any, Any, Any]], asyncio.Task[Any]],
        refresh: Callable[[], Awaitable[object]],
        opening: Callable[[], bool],
    ) -> None:
        self.store = store
        self.pi_store = pi_store
        """The Pi CLI's sessions folder (the "Pi sessions" source; None: off). Its
        sessions open and continue in place; `copy_into_ours` makes our own copy."""
        self.make_pi = make_pi
        """Builds the Pi source from the setting (Settings changes it live); None: fixed."""
        self.pi_default_folder = pi_default_folder
        self.limits = limits
        self._spawn = spawn
        self._refresh = refresh
        self._opening = opening  # a session is being read progressively
        self.rows: list[SidebarRow] = []
        self._known: dict[str, SidebarRow] = {}
        self.trash_rows: list[SidebarRow] = []
        self.query = ""
        self.pi_indexed = False
        """Pi's folder's index is in line (until then the list leaves Pi's sessions out)."""
        self.index_after_open: list[str] = []
        """Sessions `start` left out of the list's update: the one a launch restores, and
        big ones the index only glanced at; indexed from what opening them read."""
        self.first_index: asyncio.Task[list[str]] | None = None
        """Our folder's index still being brought in line after ``index_wait_s``."""
        self.restored = False
        """The launch's restore ran (what `start` left to it was taken)."""

    # ------------------------------------------------------------ start-up

    async def start(self, restoring: str | None) -> None:
        """Bring our folder's index (and Pi's) in line; ``restoring``: the session the
        launch will open (indexed from what opening it reads)."""
        if restoring and self.store.holds(restoring):
            self.index_after_open = [restoring]
        self.first_index = await self._start_listing(
            self.store.start(list(self.index_after_open), glance=True), self._listed
        )
        if self.pi_store is not None:
            await self._start_pi(self.pi_store)

    async def _start_listing(
        self, start: Awaitable[_T], done: Callable[[_T], Awaitable[None]]
    ) -> asyncio.Task[_T] | None:
        """Bring a folder's index in line (``start``): a stat per file when it exists
        (tens of ms for thousands of files), so it is awaited, then ``done``; a first
        index of thousands of files takes seconds, so after ``index_wait_s`` it goes on
        in the background, and ``done`` and a refresh of the list follow when it ends.
        Returns the task still running (None: done in time)."""
        task = asyncio.ensure_future(start)
        finished, _ = await asyncio.wait([task], timeout=self.limits.index_wait_s)
        if finished:
            await done(task.result())
            return None

        async def finish() -> None:
            await done(await task)
            await self._refresh()

        self._spawn(finish())
        return task

    async def _listed(self, glanced: list[str]) -> None:
        """Our folder's index is in line. Big sessions it only glanced at are indexed
        whole once opened, or by `index_later` (at once when it ended after the
        restore)."""
        self.first_index = None
        later = self.index_after_open
        later += [r for r in glanced if r not in later]
        if self.restored and later and not self._opening():
            await self.index_later()

    async def _start_pi(self, pi: JsonlStore) -> None:
        """Bring the index of Pi's folder in line (`_start_listing`): the list gets Pi's
        sessions when it is done."""

        async def listed(_: list[str]) -> None:
            self.pi_indexed = True

        await self._start_listing(pi.start(), listed)

    async def index_later(self, opened: Session | None = None, ref: str | None = None) -> None:
        """The sessions `start` left to the restore, brought into the list now: ``ref``
        (just opened as ``opened``) from what opening it read (`SessionIndex.update_file`)."""
        later, self.index_after_open = self.index_after_open, []
        for each in later:
            await self.store.changed(each, opened if opened is not None and each == ref else None)

    async def wait_for_first_index(self) -> None:
        if self.first_index is not None:
            await asyncio.wait([self.first_index])

    # ------------------------------------------------------------ the list

    async def refresh(self, query: str | None = None) -> None:
        """Read the rows (and the trash) again, for ``query`` when given."""
        if query is not None:
            self.query = query
        try:
            rows = await self.store.sessions(self.query or None)
            self.trash_rows = await self.store.trash()
        except (OSError, SessionError) as exc:
            log.warning("could not list the sessions: %s", exc)
            rows = [r for r in self.rows if r.source != "pi"]
        if self.pi_store is not None and self.pi_indexed:  # (not while its first index runs)
            try:
                rows = newest_first(rows + await self.pi_store.sessions(self.query or None))
            except (OSError, SessionError) as exc:
                log.warning("could not list the Pi sessions: %s", exc)
        self.rows = rows
        # Every session listed, whatever the search: a search that hides the open
        # session must not take its title from the window (or from an export's name).
        if self.query:
            self._known.update((r.path, r) for r in rows)
        else:
            self._known = {r.path: r for r in rows}

    def row_for(self, ref: str) -> SidebarRow | None:
        """The row of ``ref``: as listed, else as last listed (a search may hide it)."""
        return next((r for r in self.rows if r.path == ref), None) or self._known.get(ref)

    def title(self, ref: str) -> str:
        row = self.row_for(ref)
        return row.title if row is not None else "Session"

    def is_pi(self, ref: str | None) -> bool:
        """Whether ``ref`` is a session of the Pi CLI's folder."""
        return ref is not None and self.pi_store is not None and self.pi_store.holds(ref)

    def store_for(self, ref: str) -> SessionStore:
        """The store that holds ``ref``: the Pi CLI's folder, or ours."""
        return (
            self.pi_store if self.pi_store is not None and self.pi_store.holds(ref) else self.store
        )

    @property
    def pi_count(self) -> int:
        """How many sessions of the Pi CLI's folder the list shows."""
        return sum(1 for r in self.rows if r.source == "pi")

    async def find(self, id_or_ref: str) -> str | None:
        """The reference of a session given by id or reference, ours first, then Pi's."""
        pi = self.pi_store
        if pi is not None and pi.holds(id_or_ref):
            return await pi.find(id_or_ref)
        ref = await self.store.find(id_or_ref)
        if ref is None and pi is not None and not id_or_ref.endswith(".jsonl"):
            ref = await pi.find(id_or_ref)
        return ref

    async def replace_pi(self, pi: JsonlStore | None) -> None:
        """The "Pi sessions" source after a Settings change: the list follows at once
        (the caller refreshes it); an open Pi session stays open (it is written through
        its own file)."""
        old, self.pi_store = self.pi_store, pi
        self.pi_indexed = False
        if old is not None:
            await old.close()
        if pi is not None:
            await self._start_pi(pi)

    async def close(self) -> None:
        await self.store.close()
        if self.pi_store is not None:
            await self.pi_store.close()
