"""`Windows`: the app's windows over the one workbench.

Each window is a view of the workbench (`Workbench.add_view`): it shows its own session
and sees the others live (the list, their runs). A session opens in a window of its own
("Open in new window", Ctrl+Shift+N for a new session there); one already shown in a
window brings that window forward instead of showing it twice. Closing a window leaves
its session (a run goes on; its row says running); closing the last one quits as
before, and quitting asks once for every run of every window (`request_quit`, in the
window in use). New windows cascade from the last one; the first
window's geometry is the one kept.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from PySide6.QtCore import QPoint, QSize, Qt

from desktop_agent.workbench import Changes, Workbench

log = logging.getLogger("desktop_agent.gui")

CASCADE = QPoint(32, 32)
"""How far a new window sits from the last one."""


class AppWindow(Protocol):
    """What `Windows` uses of a window (`MainWindow` fits it)."""

    view: int
    exit_code: int

    async def do(self, op: Coroutine[Any, Any, Changes]) -> Changes | None: ...
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...
    def ask_stop_or_wait(self) -> str: ...
    async def shut_down(self, *, stop: bool, ask: bool) -> int | None: ...
    async def new_session(self, cwd: str | None = None) -> None: ...
    async def settle_tasks(self, *, but_warm_up: bool = False) -> None: ...
    def close_for_good(self) -> None: ...
    def focus_composer_now(self) -> None: ...
    def bring_forward(self) -> None: ...
    def remember_geometry(self) -> None: ...
    def show(self) -> None: ...
    def setAttribute(self, attribute: Qt.WidgetAttribute, on: bool = True, /) -> None: ...
    def pos(self) -> QPoint: ...
    def size(self) -> QSize: ...
    def move(self, pos: QPoint, /) -> None: ...
    def resize(self, size: QSize, /) -> None: ...


class Windows:
    """The open windows (see the module doc); ``make`` builds the window of a view."""

    def __init__(
        self, workbench: Workbench, make: Callable[[int, Windows], AppWindow] | None = None
    ) -> None:
        self.wb = workbench
        self.make = make
        """Builds the window of a view (the composition's factory)."""
        self.windows: list[AppWindow] = []
        self.exit_code = 0
        self._quitting = False
        self._asking = False
        self._all_closed = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._quitter: AppWindow | None = None

    def add(self, window: AppWindow) -> None:
        if window not in self.windows:
            self.windows.append(window)

    def window_of(self, view: int) -> AppWindow | None:
        return next((w for w in self.windows if w.view == view), None)

    @property
    def current(self) -> AppWindow | None:
        """The window the person works in (that of the active view)."""
        return self.window_of(self.wb.active_view) or (self.windows[0] if self.windows else None)

    async def open_new(self, origin: int, ref: str | None) -> None:
        """``ref`` (None: a new session, in the folder of the session of the window of
        view ``origin``) in a new window. A session shown in another window brings that
        window forward instead; the one shown in ``origin`` moves to the new window."""
        self.wb.activate_view(origin)
        if ref is not None:
            shown_in = self.wb.view_showing(ref)
            if shown_in is not None and shown_in != origin:
                other = self.window_of(shown_in)
                if other is not None:
                    other.bring_forward()
                    return
        cwd = self.wb.default_workspace() if ref is None else None
        if self.make is None:
            return
        view = self.wb.add_view()
        window = self.make(view, self)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # its memory goes with it
        last = self.windows[-1] if self.windows else None
        self.add(window)
        if last is not None:
            window.resize(last.size())
            window.move(last.pos() + CASCADE)
        window.show()
        window.bring_forward()
        self.wb.activate_view(view)
        if ref is None:
            await window.new_session(cwd)
        else:
            await window.do(self.wb.open(ref, take=True))
        window.focus_composer_now()

    def close_alone(self, window: AppWindow) -> bool:
        """Whether ``window`` closes on its own (it is not the last one, and the app is
        not quitting): its session is left, a run goes on."""
        if self._quitting or len(self.windows) < 2 or window not in self.windows:
            return False
        if window.view == 0:
            window.remember_geometry()  # the first window's, kept as before
        self.windows.remove(window)
        self._spawn(self._close_view(window))
        return True

    async def _close_view(self, window: AppWindow) -> None:
        await self.wb.close_view(window.view)  # (its run, if any, goes on)

    def request_quit(self, *, ask: bool = True) -> None:
        """Quit: the window the person works in runs the quit sequence once, for every
        window (one question for all the runs; a second request while it is asked or
        while quitting is ignored)."""
        window = self.current
        if window is None or self._quitting or self._asking:
            return
        stop = not ask
        if ask and self.wb.runs_active:  # one question for every session's run
            self._asking = True
            try:
                choice = window.ask_stop_or_wait()
            finally:
                self._asking = False
            if choice == "cancel":
                return
            stop = choice == "stop"
        self._quitting = True  # no window closes alone any more
        window.spawn(self._quit(window, stop=stop, ask=ask))

    async def _quit(self, window: AppWindow, *, stop: bool, ask: bool) -> None:
        """Save the first window's geometry, settle and save everything, then close
        every window (unless the person keeps the app open)."""
        self.remember_geometry()
        code = await window.shut_down(stop=stop, ask=ask)
        if code is None:
            self._quitting = False
            return
        self.exit_code = window.exit_code = code
        self._quitter = window
        for each in list(self.windows):
            each.close_for_good()
        self.windows.clear()
        self._all_closed.set()

    def remember_geometry(self) -> None:
        """The first window's geometry (if it is still open) is kept."""
        first = self.window_of(0)
        if first is not None:
            first.remember_geometry()

    @property
    def all_closed(self) -> bool:
        """Whether the app quit (every window closed, everything saved)."""
        return self._all_closed.is_set()

    async def closed(self) -> None:
        """Once the app quit (every window closed)."""
        await self._all_closed.wait()
        while self._tasks:
            await asyncio.wait(list(self._tasks))
        if self._quitter is not None:
            await self._quitter.settle_tasks()

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("closing a window failed", exc_info=exc)
