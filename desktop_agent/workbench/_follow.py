"""`Follower`: the workbench in step with other computers on a shared store.

What another computer does arrives as ``(kind, session id)`` (`PostgresStore.watch`):
sessions created, trashed or deleted elsewhere refresh the list; new entries of the
session open here read-only (another computer writes it) are read and shown; when that
computer lets go, the session becomes writable here. Work is coalesced: a burst of
notifications is one read.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from desktop_agent.session import SessionError
from desktop_agent.workbench._changes import Changes
from desktop_agent.workbench._views import SaveState

if TYPE_CHECKING:
    from desktop_agent.workbench._workbench import Workbench

log = logging.getLogger("desktop_agent.workbench")

LIST_KINDS = frozenset({"created", "deleted", "trash", "entries", "released", "connected"})


class Follower:
    def __init__(self, workbench: Workbench) -> None:
        self.wb = workbench
        self._list_due = False
        self._pull_due = False
        self._take_due = False
        self._task: asyncio.Task[None] | None = None

    def on_event(self, kind: str, session_id: str) -> None:
        """A notification (on the loop): note what to do, then do it once."""
        session = self.wb.session
        mine = session is not None and session.metadata.id == session_id
        writing_here = mine and session is not None and not session.read_only
        if kind in LIST_KINDS and not (writing_here and kind == "entries"):
            self._list_due = True  # (our own appends refresh the list themselves)
        if session is not None and session.read_only and (mine or kind == "connected"):
            if kind in ("entries", "connected"):
                self._pull_due = True
            if kind in ("released", "connected"):
                self._pull_due = self._take_due = True
        if self._task is None or self._task.done():
            self._task = self.wb.spawn(self._work())

    async def _work(self) -> None:
        while self._list_due or self._pull_due or self._take_due:
            if self._pull_due or self._take_due:
                self._pull_due = False
                await self._pull()
            if self._take_due:
                self._take_due = False
                await self._take_over()
            if self._list_due:
                self._list_due = False
                await self.wb.refresh_sessions()

    async def _pull(self) -> None:
        session = self.wb.session
        if session is None or not session.read_only:
            return
        storage = session.get_storage()
        try:
            added = await asyncio.to_thread(storage.pull)
        except OSError as exc:
            log.info("could not read the new entries of %s: %s", session.metadata.id, exc)
            return
        if added and session is self.wb.session:
            self.wb._changed(Changes(branch=True))  # appended ids are added by _changed

    async def _take_over(self) -> None:
        await take_over(self.wb)


async def take_over(wb: Workbench) -> bool:
    """Continue the open read-only session here if the computer that held it let go (it
    closed it, quit, crashed or lost its connection) and everything it wrote is read
    (`Storage.try_writable`); True when it is writable now. Stores of files: a session
    another process held becomes writable the same way."""
    session = wb.session
    if session is None or not session.read_only:
        return session is not None
    storage = session.get_storage()
    if storage.read_only_code != "locked":
        return False
    try:
        await asyncio.to_thread(storage.pull)
        writable = await asyncio.to_thread(storage.try_writable)
    except (OSError, SessionError) as exc:
        log.info("could not take over %s: %s", session.metadata.id, exc)
        return False
    if writable and session is wb.session:
        wb.save = SaveState("saved")
        wb._notify_read_only(session)
        wb._changed(Changes(session=True, save_state=True, notices=True))
    return writable and session is wb.session


async def continue_here(wb: Workbench) -> Changes:
    """The read-only notice's action on a session held elsewhere: take it over when the
    other computer let go (e.g. it crashed), else say it still holds it."""
    if await take_over(wb):
        return Changes(session=True, save_state=True, notices=True)
    session = wb.session
    if session is not None and session.read_only:
        wb._notify_read_only(session)  # the notice (and its action) again
        return wb.notify(
            "continue",
            "The session is still open on another computer or window; it can be continued"
            " here once it is closed there.",
        )
    return Changes(notices=True)
