"""What the window's helpers may use of it, declared (REVIEW §3): the helpers take these
narrow protocols or plain constructor arguments, never the `MainWindow`, so no module of
the GUI imports the window except the composition (`gui._app`) and no helper needs a
whole window to be tested. `MainWindow` fits each protocol structurally (mypy checks it
where the window hands itself over).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Protocol

from desktop_agent.gui._composer import Composer
from desktop_agent.gui._dialogs import Dialogs
from desktop_agent.gui._notify import DesktopNotifier
from desktop_agent.gui._panels import NoticeBar, StatusBar
from desktop_agent.gui.chat import ChatPane
from desktop_agent.gui.map import MapPane
from desktop_agent.gui.sidebar import SessionSidebar
from desktop_agent.workbench import Changes


class Ops(Protocol):
    """How work runs: the window's tasks and its one route for workbench operations."""

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` on the loop, keep it alive, and report its failure."""
        ...

    async def do(self, op: Coroutine[Any, Any, Changes]) -> Changes | None:
        """Run a workbench operation (a refusal becomes a notice); returns once the
        views show its result."""
        ...

    async def drawn(self) -> None:
        """Once every redraw the workbench asked for so far is painted."""
        ...


class PresenterView(Protocol):
    """Exactly what `Presenter` draws on."""

    chat: ChatPane
    map_pane: MapPane
    sidebar: SessionSidebar
    composer: Composer
    status: StatusBar
    notices: NoticeBar
    dialogs: Dialogs
    notifier: DesktopNotifier

    def show_session(self, shown: bool) -> None:
        """The chat and composer when a session is open (or opening), else the start page."""
        ...

    def setWindowTitle(self, title: str) -> None: ...

    def set_composer_text(self, text: str) -> None: ...

    def focus_composer(self) -> None: ...

    def bring_forward(self) -> None:
        """Show the window in front (its session was asked for in another window)."""
        ...

    async def save_copy(self) -> bool:
        """Ask where and write a copy of the open session (the "could not save" way out)."""
        ...
