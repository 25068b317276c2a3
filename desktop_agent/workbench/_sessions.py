"""`OpenSessions`: the sessions open at once, the one shown, and their lifecycle.

Several sessions can be open, each with its own harness and run (`OpenSession`): one
is shown; switching to another (the list, Ctrl+N, a search hit, a restore) never stops a
run: the session left stays open while its run goes on (or waits for an approval), and
is released when the run ends (its writer lock and memory go). Its row says how it is
doing: running (since when), waiting for an approval, failed or finished and not yet
seen; a run that ends, and an approval asked, in a session not shown is told to the
window (`RunEndedEvent`: a desktop notification) and waits for the person (approvals
are answered when the session is shown, never by themselves). Two runs in one folder:
the second start warns once; putting files back there waits until the other run ends.
A big file never seen before opens progressively (`opening`: the end of its branch is
shown while the rest is read off the loop).

Each window is a view (`View`, by id): it shows its own session with its own branch map,
over the one set of open sessions. A session is shown in one view at most: opening it
from another view brings the view that shows it forward (`RaiseViewEvent`) instead of
showing it twice. The operations act on the active view's session (`active`, the window
the person works in); `viewing` reads another view's for a moment (a window drawing its
own session). Closing a view leaves its session like showing another one does: a run
goes on (its row says running) and the session is released when it ends.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from desktop_agent.session import Session, SessionError, SessionOpening
from desktop_agent.tools import ApprovalAnswer, ApprovalDecision, ApprovalRequest
from desktop_agent.workbench._changes import NOTHING, Changes
from desktop_agent.workbench._map import BranchMap
from desktop_agent.workbench._open import OpenSession, WorkbenchError, is_dir
from desktop_agent.workbench._views import SidebarRow

if TYPE_CHECKING:
    from desktop_agent.workbench._workbench import Workbench

log = logging.getLogger("desktop_agent.workbench")

SESSION_NOTICES = ("model", "workspace", "save", "read_only", "run", "error", "project_files")
"""Notices about the session shown: they go when another session is shown."""


@dataclass(frozen=True)
class RunEndedEvent:
    """A run ended (``failed`` or finished) in a session that is not shown, or one
    there waits for an approval (``waiting``): the window tells the person (a desktop
    notification); ``ref`` and ``title`` name the session."""

    ref: str
    title: str
    failed: bool = False
    waiting: bool = False
    type: str = "run_ended"


@dataclass(frozen=True)
class RaiseViewEvent:
    """The session asked for is shown in the view ``view`` already: its window comes
    forward (a session is never shown in two windows)."""

    view: int
    ref: str
    type: str = "raise_view"


@dataclass
class View:
    """One window's view of the workbench: the session it shows and its branch map."""

    map: BranchMap
    shown: OpenSession | None = None


class OpenSessions:
    """The open sessions of a workbench (see the module doc)."""

    def __init__(self, wb: Workbench, first_map: BranchMap) -> None:
        self.wb = wb
        self.open_sessions: dict[str, OpenSession] = {}
        """Every open session by reference: those shown, and those running elsewhere."""
        self.views: dict[int, View] = {0: View(first_map)}
        """The windows' views by id (0: the first window's)."""
        self.active = 0
        """The view the operations act on (the window the person works in)."""
        self._next_view = 1
        self.unseen: dict[str, str] = {}
        """Sessions whose run ended while not shown ("finished", "failed"), until shown."""
        self._warned_folders: set[str] = set()
        self._shown_again: dict[str, asyncio.Event] = {}
        self.opening: SessionOpening | None = None
        """A big session never seen before, being read (its branch's end is shown)."""
        self.opening_ref: str | None = None
        self.opening_view = 0
        """The view the big session is opened in."""
        self._opening_task: asyncio.Task[None] | None = None
        self.closing = False
        """The app quits: approvals still waiting in sessions not shown are denied."""
        self.opening_progress = ""
        self.opening_args: tuple[tuple[str, str], ...] = ()

    # ------------------------------------------------------------ views

    @property
    def shown(self) -> OpenSession | None:
        """The session of the active view."""
        view = self.views.get(self.active)
        return view.shown if view is not None else None

    @shown.setter
    def shown(self, opened: OpenSession | None) -> None:
        view = self.views.get(self.active)
        if view is not None:
            view.shown = opened

    @property
    def map(self) -> BranchMap:
        """The branch map of the active view."""
        view = self.views.get(self.active) or self.views[min(self.views)]
        return view.map

    def add_view(self, new_map: BranchMap) -> int:
        """A new view (a new window), showing nothing yet; returns its id."""
        view = self._next_view
        self._next_view += 1
        self.views[view] = View(new_map)
        return view

    def view_of(self, opened: OpenSession) -> int | None:
        """The view that shows ``opened`` (None: none does)."""
        return next((v for v, view in self.views.items() if view.shown is opened), None)

    def showing(self, ref: str) -> int | None:
        """The view that shows the session ``ref`` (None: none does)."""
        opened = self.open_sessions.get(ref)
        return self.view_of(opened) if opened is not None else None

    def activate(self, view: int) -> Changes:
        """The person works in ``view`` now: operations act on its session, and the
        notices about the session shown are its session's."""
        if view == self.active or view not in self.views:
            return NOTHING
        self.active = view
        for key in SESSION_NOTICES:
            self.wb.notify(key, None)
        shown = self.shown
        if shown is not None:
            for key, (text, action, args) in shown.notes.items():
                self.wb.notify(key, text, action, **args)
        return Changes(notices=True)

    @contextmanager
    def viewing(self, view: int) -> Iterator[None]:
        """Read ``view``'s session for a moment (no await inside: synchronous reads of
        a window drawing its own session)."""
        active = self.active
        self.active = view if view in self.views else active
        try:
            yield
        finally:
            self.active = active

    async def close_view(self, view: int) -> Changes:
        """A window closes: its session is left as when another is shown (a run goes on,
        the session stays open until it ends) and the view goes. The first window's
        view is kept as long as it is the last one."""
        if view not in self.views or len(self.views) == 1:
            return NOTHING
        await self.leave(view)
        self.views.pop(view)
        if self.active == view:
            self.active = min(self.views)
        return self.wb._changed(Changes(sessions=True, notices=True))

    def find_open(self, ref: str | None) -> OpenSession | None:
        """The open session ``ref`` (shown or running elsewhere), None when closed."""
        return self.open_sessions.get(ref) if ref is not None else None

    def rows(self, rows: list[SidebarRow]) -> list[SidebarRow]:
        """``rows`` with their sessions' runs (running, waiting, failed, finished)."""
        if not self.open_sessions and not self.unseen:
            return rows
        return [self.with_activity(r) for r in rows]

    def with_activity(self, row: SidebarRow) -> SidebarRow:
        opened = self.open_sessions.get(row.path)
        activity: str = opened.activity if opened is not None else ""
        activity = activity or self.unseen.get(row.path, "")
        if not activity:
            return row
        started = opened.run_started if opened is not None else None
        return replace(row, activity=activity, run_started=started)

    async def shutdown(self, *, stop: bool) -> int:
        """Settle every run, save everything; returns how many entries could not be saved
        (then the session stays open, for Retry / Save a copy / quitting without them)."""
        self.closing = True  # an approval nobody can answer now is denied
        for waiting in self._shown_again.values():
            waiting.set()
        for opened in list(self.open_sessions.values()):
            if opened.harness is not None and not opened.harness.is_idle:
                if stop:
                    await opened.harness.abort()
                else:
                    await opened.harness.wait_for_idle()
        for opened in list(self.open_sessions.values()):
            if opened.run is not None:
                await asyncio.wait([opened.run])
        self.wb._remember()
        pending = 0
        for opened in list(self.open_sessions.values()):
            try:
                view = self.view_of(opened)
                if view is not None:
                    await self.leave(view)
                else:
                    await self.release(opened)
            except WorkbenchError:
                pending += opened.session.pending_count
        self.closing = False
        return pending

    def abandon(self) -> None:
        """Quit without the entries that could not be saved (the user chose so)."""
        for opened in self.open_sessions.values():
            opened.session.get_storage().force_close()
            opened.detach()
        self.open_sessions.clear()
        for view in self.views.values():
            view.shown = None

    async def restore(
        self, target: str | None = None, *, new: bool = False, workspace: str | None = None
    ) -> Changes:
        """At launch: ``target``, else a new session when asked, else the last session
        (of the last workspace), else a new session in that workspace when it exists,
        else nothing (the start page). ``workspace`` (given on the command line) becomes
        the folder of new sessions."""
        changes = await self._restore(target, new=new, workspace=workspace)
        self.wb.listing.restored = True
        if self.wb.listing.index_after_open and self.opening is None:  # another one, or none
            await self.wb.listing.index_later()
            changes |= await self.wb.refresh_sessions()
        return changes

    async def _restore(self, target: str | None, *, new: bool, workspace: str | None) -> Changes:
        if workspace:
            self.wb.state.last_workspace = workspace
        if target is not None:
            ref = await self.wb.listing.find(target)
            if ref is None:
                return self.wb._changed(
                    self.wb.notify("open", "No session {target} was found.", target=target)
                )
            return await self.open(ref)
        if new or (
            self.wb.settings.restore == "new" and (workspace or self.wb.state.last_workspace)
        ):
            return await self.new_session(workspace)
        last = self.wb.state.last_session_path
        if (
            last
            and not self._in_other_workspace(last, workspace)
            and await self.wb.listing.find(last)
        ):
            return await self.open(last)
        if self.wb.listing.first_index is not None:  # the newest is chosen from the whole list
            await self.wb.listing.wait_for_first_index()
            await self.wb.refresh_sessions()
        wanted = workspace or self.wb.state.last_workspace
        rows = [r for r in self.wb.listing.rows if r.cwd == wanted] or self.wb.listing.rows
        if rows:
            return await self.open(rows[0].path)
        exists = bool(wanted) and await asyncio.to_thread(is_dir, wanted or "")
        if wanted and exists:
            # Nothing to restore but a folder to work in: a new session there, so a
            # prompt typed at once goes to the composer (not to the session search).
            return await self.new_session(wanted)
        return self.wb._changed(Changes.everything())

    def _in_other_workspace(self, ref: str, workspace: str | None) -> bool:
        """Whether the listed session ``ref`` belongs to another folder than the
        ``--workspace`` given (then the last session is not the one to restore: m19)."""
        row = self.wb.listing.row_for(ref)
        if not workspace or row is None:
            return False
        return os.path.realpath(row.cwd) != os.path.realpath(workspace)

    async def open(self, ref: str, *, take: bool = False) -> Changes:
        """Show the session ``ref`` in the active view (a run elsewhere goes on: its
        session stays open). A session shown in another view is not shown twice: that
        view comes forward (`RaiseViewEvent`) and this one keeps its session; with
        ``take`` (a session moved to a new window) this view takes it, the other shows
        none."""
        if ref == self.wb.ref or (self.opening is not None and ref == self.opening_ref):
            return NOTHING
        elsewhere = self.showing(ref)
        if elsewhere is not None and not take:
            self.wb._emit(RaiseViewEvent(elsewhere, ref), to=elsewhere)
            return NOTHING
        if elsewhere is not None:
            self.views[elsewhere].shown = None
            with self.viewing(elsewhere):
                self.wb._changed(Changes.everything())
        running = self.open_sessions.get(ref)
        if running is not None:  # open already: its run went on while another was shown
            self.cancel_opening()
            await self.leave()
            return self.show(running)
        store = self.wb.listing.store_for(ref)
        opening = await store.open_progressive(ref)
        if opening is None:
            session = await store.open(ref)
        elif opening.tail.complete:  # it has an entry index: it is open already
            session = await opening.session()
        else:
            return await self._open_progressively(ref, opening)
        self.cancel_opening()
        await self.leave()
        return await self.adopt(session)

    async def _open_progressively(self, ref: str, opening: SessionOpening) -> Changes:
        """A big file never seen before: the chat shows the end of its current branch
        now (`TailReader`), the status bar how much is read, and the session is adopted
        when the whole file is read off the loop."""
        self.cancel_opening()
        await self.leave()
        self.opening, self.opening_ref = opening, ref
        self.opening_view = self.active
        self.opening_progress, self.opening_args = "Reading the session…", ()
        self._opening_task = self.wb.spawn(self._finish_opening(ref, opening))
        return self.wb._changed(Changes.everything())

    async def _finish_opening(self, ref: str, opening: SessionOpening) -> None:
        try:
            while True:
                try:
                    session = await asyncio.wait_for(opening.session(), 0.25)
                    break
                except TimeoutError:
                    if self.opening is not opening:
                        return
                    self.opening_progress = "Reading the session… {percent}"
                    self.opening_args = (("percent", f"{opening.progress:.0%}"),)
                    self.wb._changed(Changes(running=True))
        except SessionError as exc:
            if self.wb.listing.index_after_open:
                await self.wb.listing.index_later()
            if self.opening is opening:
                self.opening, self.opening_ref = None, None
                notice = self.wb.notify(
                    "open", "Could not open {ref}: {error}", ref=ref, error=exc.message
                )
                self.wb._changed(Changes.everything() | notice)
            return
        if self.opening is not opening:  # another session was opened meanwhile
            opening.cancel()
            return
        self.opening, self.opening_ref = None, None
        await self.adopt(session, self.opening_view)

    def cancel_opening(self) -> None:
        if self.opening is not None:
            self.opening.cancel()
            self.opening, self.opening_ref = None, None

    async def opened(self) -> None:
        """Wait until a session being opened progressively is open (or failed)."""
        task = self._opening_task
        if task is not None and not task.done():
            await asyncio.wait([task])

    async def new_session(self, cwd: str | None = None) -> Changes:
        """The one way a session starts: it records its model, thinking level and tools.
        A run in the session shown goes on (its session stays open)."""
        workspace = cwd or self.wb.default_workspace()
        if not workspace:
            raise WorkbenchError("Choose the project folder for the new session first.")
        view = self.active  # (the person may work in another window meanwhile)
        await self.leave(view)
        session = await self.wb.store.create(str(workspace))
        changes = await self.adopt(session, view, ready=False)
        opened = self.views[view].shown if view in self.views else None
        try:
            harness = opened.harness if opened is not None else None
            if harness is not None and opened is not None:
                if harness.model is not None:
                    await session.append_model_change(harness.model.provider, harness.model.id)
                await session.append_thinking_level_change(harness.thinking_level)
                if harness.active_tool_names:
                    await session.append_active_tools_change(harness.active_tool_names)
                await opened.sync()
            await self.wb.store.changed(opened.ref if opened is not None else "")
            refreshed = await self.wb.refresh_sessions()
            with self.viewing(view):
                return self.wb._changed(changes | refreshed)
        finally:
            if opened is not None:
                opened.ready.set()

    async def adopt(
        self, session: Session, view: int | None = None, *, ready: bool = True
    ) -> Changes:
        """Make ``session`` the one shown in ``view`` (default: the active one): its
        harness, views, and what to remember; ``ready``: a prompt may go to it once this
        returns (`OpenSession.ready`)."""
        view = self.active if view is None else view
        path = session.metadata.path
        ref = path if path and self.wb.is_pi(path) else self.wb.store.ref_of(session)
        opened = OpenSession(self.wb, session, ref)
        self.open_sessions[ref] = opened
        if view in self.views:
            self.views[view].shown = opened
        self.unseen.pop(ref, None)
        done = False
        try:
            maps = self.wb._maps
            opened.kept_layout = await asyncio.to_thread(maps.read, ref) if maps else None
            await opened.start_harness()
            self.wb._notify_read_only(session)
            self.wb.state.last_session_path = ref
            self.wb.state.last_workspace = session.metadata.cwd or self.wb.state.last_workspace
            self.wb._remember()
            if self.wb.listing.index_after_open:
                await self.wb.listing.index_later(session, ref)
            refreshed = await self.wb.refresh_sessions()
            with self.viewing(view):
                self.wb._follow_files()
                changes = self.wb._changed(Changes.everything() | refreshed)
            done = True
            return changes
        finally:
            if ready or not done:  # (a failed open never leaves a prompt waiting)
                opened.ready.set()

    def show(self, opened: OpenSession) -> Changes:
        """Show a session that is open already (its run went on meanwhile)."""
        self.shown = opened
        self.unseen.pop(opened.ref, None)
        opened.ended = ""
        opened.entries_told = opened.session.entry_count  # the views read it whole
        for key, (text, action, args) in opened.notes.items():
            self.wb.notify(key, text, action, **args)
        self.wb.state.last_session_path = opened.ref
        self.wb._remember()
        if opened.ref in self._shown_again:
            self._shown_again.pop(opened.ref).set()  # its approvals are asked now
        self.wb._follow_files()
        return self.wb._changed(Changes.everything())

    async def leave(self, view: int | None = None) -> None:
        """Stop showing the session of ``view`` (default: the active one): closed (an
        empty "New session" discarded), unless it runs or waits for an approval (it
        stays open until its run ends)."""
        where = self.views.get(self.active if view is None else view)
        shown = where.shown if where is not None else None
        if where is None or shown is None:
            return
        self.wb._remember()
        await self.wb._keep_map(shown, where.map)
        if not shown.idle:
            where.shown = None
        else:
            await self.release(shown)
        if where is self.views.get(self.active):
            for key in SESSION_NOTICES:
                self.wb.notify(key, None)

    async def release(self, opened: OpenSession) -> None:
        """Close an open session (its writer lock and memory go)."""
        ref = opened.ref
        empty = opened.is_empty()
        draft = self.wb.state.drafts.get(opened.draft_key(), "")
        await opened.close()  # WorkbenchError: entries not saved (the session stays)
        self.open_sessions.pop(ref, None)
        for view in self.views.values():
            if view.shown is opened:
                view.shown = None
        store = self.wb.listing.store_for(ref)
        if empty and not draft and not opened.session.read_only and self.wb.store.holds(ref):
            await store.discard(ref)  # never another program's file
        else:
            await store.changed(ref)

    async def close(self) -> Changes:
        """Stop showing the session (the start page shows)."""
        await self.leave()
        return self.wb._changed(Changes.everything() | await self.wb.refresh_sessions())

    # ------------------------------------------------------------ runs

    def run_started(self, opened: OpenSession) -> None:
        """A run starts: a second run in the same folder is warned of, once."""
        folder = opened.folder
        others = [
            o
            for o in self.open_sessions.values()
            if o is not opened and o.running and o.folder == folder
        ]
        if others and folder and folder not in self._warned_folders:
            self._warned_folders.add(folder)
            self.wb.notify(
                "same_folder",
                "Another session's agent is working in {folder} too: their changes to the"
                " same files may clash.",
                folder=folder,
            )
        self.wb._activity_changed(opened)

    async def run_ended(self, opened: OpenSession, failed: bool) -> None:
        """A run ended: in a session not shown its row says so until it is seen, the
        window is told (a desktop notification), and the session is released."""
        if self.view_of(opened) is not None:  # a window shows it
            self.wb._activity_changed(opened)  # (the rows of the other windows)
            return
        self.unseen[opened.ref] = "failed" if failed else "finished"
        title = self.wb.listing.title(opened.ref)
        self.wb._emit(RunEndedEvent(opened.ref, title, failed=failed), to=self.active)
        self.wb.spawn(self._release_when_idle(opened))

    async def _release_when_idle(self, opened: OpenSession) -> None:
        await asyncio.sleep(0)  # after the run's own last report
        mine = self.open_sessions.get(opened.ref) is opened
        elsewhere = self.view_of(opened) is None
        if mine and elsewhere and opened.idle and opened.run is None:
            try:
                await self.release(opened)
            except WorkbenchError as exc:
                log.warning("a session could not be closed: %s", exc)
        self.wb._changed(Changes(sessions=True))

    async def ask_approval(
        self, opened: OpenSession, request: ApprovalRequest
    ) -> ApprovalDecision | ApprovalAnswer | None:
        """The person answers an approval in the window, when its session is shown; a
        session not shown waits until it is (a badge on its row, a notification)."""
        while self.view_of(opened) is None and not self.closing:
            title = self.wb.listing.title(opened.ref)
            self.wb._emit(RunEndedEvent(opened.ref, title, waiting=True), to=self.active)
            shown_again = self._shown_again.setdefault(opened.ref, asyncio.Event())
            await shown_again.wait()
        view = self.view_of(opened)
        approver = self.wb.approvers.get(view) if view is not None else None
        if approver is None:  # (quitting)
            return ApprovalDecision.DENY
        return await approver(request)

    def check_folder_free(self, what: str) -> None:
        """Files of a folder are not put back while another session's run works in it."""
        shown = self.shown
        if shown is None:
            return
        for other in self.open_sessions.values():
            if other is not shown and other.running and other.folder == shown.folder:
                raise WorkbenchError(
                    f"Another session's agent is working in this folder: wait for it (or stop"
                    f" it) before {what}."
                )
