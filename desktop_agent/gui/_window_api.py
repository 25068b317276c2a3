"""`WindowApi`: the main window as its binding root sees it (`install_actions`, the app's
composer commands in `gui._commands`). It is the window's public surface, declared: the
panes, the helpers, and the routes a menu entry, a key or a typed command goes to.
`MainWindow` fits it structurally; nothing here imports the window.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenuBar, QToolBar, QToolButton, QWidget

from desktop_agent.gui._composer import Composer
from desktop_agent.gui._dialogs import Dialogs
from desktop_agent.gui._keyboard import ChatActions, PaneCycler
from desktop_agent.gui._panels import NoticeBar, StartPage, StatusBar
from desktop_agent.gui._ports import Ops
from desktop_agent.gui._presenter import Presenter
from desktop_agent.gui._search import HitNavigator
from desktop_agent.gui._windows import Windows
from desktop_agent.gui._zoom import TextZoom
from desktop_agent.gui.chat import ChatPane
from desktop_agent.gui.map import MapPane
from desktop_agent.gui.sidebar import SessionSidebar
from desktop_agent.workbench import Attachment, Workbench


class WindowApi(Ops, Protocol):
    """Everything the window's menus, toolbar, shortcuts, widget signals and typed
    commands are bound to (see the module docstring)."""

    wb: Workbench
    chat: ChatPane
    composer: Composer
    map_pane: MapPane
    sidebar: SessionSidebar
    notices: NoticeBar
    start_page: StartPage
    status: StatusBar
    dialogs: Dialogs
    presenter: Presenter
    hits: HitNavigator
    panes: PaneCycler
    chat_actions: ChatActions
    zoom: TextZoom
    export_button: QToolButton
    windows: Windows
    view: int
    """The app's windows (a session in a window of its own: `Windows.open_new`)."""

    # Qt's own, of the QMainWindow
    def window(self) -> QWidget: ...
    def menuBar(self) -> QMenuBar: ...
    def addToolBar(self, toolbar: QToolBar, /) -> None: ...
    def addAction(self, action: QAction, /) -> None: ...

    # the routes
    async def new_session(self, cwd: str | None = None) -> None: ...
    async def choose_workspace(self) -> None: ...
    async def send(self, text: str, attachments: list[Attachment] | None = None) -> None: ...
    async def edit_resend(self, entry_id: str, text: str) -> None: ...
    async def show_file_changes(self, entry_id: str) -> None: ...
    async def show_branch_changes(self) -> None: ...
    async def settings(self) -> None: ...
    async def export(self, ref: str, fmt: str) -> None: ...
    async def backup(self) -> None: ...
    def reveal(self, path: str) -> None: ...
    def on_draft(self, text: str) -> None: ...
    def request_quit(self, *, ask: bool = True) -> None: ...
    def toggle_sidebar(self) -> None: ...
    def toggle_map(self) -> None: ...
    def focus_search(self) -> None: ...
    def focus_composer_now(self) -> None: ...
