"""The main window's panes, made and laid out: sidebar | notices over (start page or chat +
composer) | branch map, and the status bar; and the geometry kept between runs.
`MainWindow` binds them; this only builds.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QByteArray, QEvent, QObject
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._composer import Composer
from desktop_agent.gui._panels import NoticeBar, StartPage, StatusBar
from desktop_agent.gui.chat import ChatPane
from desktop_agent.gui.map import MapPane
from desktop_agent.gui.sidebar import SessionSidebar
from desktop_agent.workbench import Workbench


@dataclass(frozen=True)
class Panes:
    sidebar: SessionSidebar
    chat: ChatPane
    composer: Composer
    map_pane: MapPane
    start_page: StartPage
    notices: NoticeBar
    status: StatusBar
    center: QStackedWidget
    """The start page, or the chat with its composer (`chat_box`)."""
    chat_box: QWidget
    splitter: QSplitter


def build_panes(
    window: QMainWindow,
    wb: Workbench,
    spawn: Callable[[Coroutine[Any, Any, Any]], asyncio.Task[Any]],
) -> Panes:
    """Make the panes of ``window`` and lay them out in it (the map's previews and
    tooltips come from ``wb``, read through ``spawn``)."""
    sidebar = SessionSidebar(window, answers_searches=True)  # (`HitNavigator.search`)
    chat = ChatPane(window)
    composer = Composer(window)
    composer.set_send_key(wb.settings.send_key)
    chat.delegate.send_key = wb.settings.send_key
    map_pane = MapPane(window, previews=wb.map_previews, tooltip=wb.map_tooltip, spawn=spawn)
    start_page = StartPage(window)
    notices = NoticeBar(window)
    status = StatusBar(window)
    center = QStackedWidget(window)
    chat_box = QWidget(window)
    chat_layout = QVBoxLayout(chat_box)
    chat_layout.setContentsMargins(0, 0, 0, 0)
    chat_layout.addWidget(chat, 1)
    composer_row = QWidget(chat_box)
    composer_row.setObjectName("composerRow")
    row_layout = QHBoxLayout(composer_row)
    row_layout.setContentsMargins(0, 0, 0, 0)
    row_layout.addWidget(composer)
    chat_layout.addWidget(composer_row)
    _ComposerColumn(chat, composer_row, row_layout)
    center.addWidget(start_page)
    center.addWidget(chat_box)
    middle = QWidget(window)
    middle_layout = QVBoxLayout(middle)
    middle_layout.setContentsMargins(0, 0, 0, 0)
    middle_layout.addWidget(notices)
    middle_layout.addWidget(center, 1)
    splitter = QSplitter(window)
    splitter.setObjectName("mainSplitter")
    splitter.addWidget(sidebar)
    splitter.addWidget(middle)
    splitter.addWidget(map_pane)
    splitter.setSizes([260, 760, 260])
    # A narrower window narrows the chat, not the session list and the map (at 1000 px
    # the list cut its titles to 9 characters and the tab read "Branc…": m16).
    splitter.setStretchFactor(0, 0)
    splitter.setStretchFactor(1, 1)
    splitter.setStretchFactor(2, 0)
    window.setCentralWidget(splitter)
    window.setStatusBar(status)
    return Panes(
        sidebar, chat, composer, map_pane, start_page, notices, status, center, chat_box, splitter
    )


class _ComposerColumn(QObject):
    """Keeps the composer in the chat's card column: as wide as it at most and centred
    like the cards (FIRST_HOUR.md p13: with both side panes hidden it stretched across the
    window while the messages stayed centred)."""

    def __init__(self, chat: ChatPane, row: QWidget, box: QHBoxLayout) -> None:
        super().__init__(row)
        self._chat = chat
        self._row = row
        self._box = box
        chat.view.column_changed.connect(self.fit)
        row.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._row and event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self.fit()
        return False

    def fit(self) -> None:
        left, width = self._chat.card_column()
        if left <= 0:  # the cards fill the chat's width: so does the composer
            left = width = 0
        right = max(0, self._row.width() - left - width) if width else 0
        now = self._box.contentsMargins()
        if now.left() != left or now.right() != right:
            self._box.setContentsMargins(left, 0, right, 0)


def restore_geometry(
    window: QWidget, splitter: QSplitter, sidebar: QWidget, map_pane: QWidget, wb: Workbench
) -> None:
    """The window's size and place, the splitter and which side panes were shown."""
    state = wb.state
    map_pane.setVisible(state.map_visible)
    sidebar.setVisible(state.sidebar_visible)
    if state.splitter_state:
        splitter.restoreState(QByteArray(base64.b64decode(state.splitter_state)))
    if state.window_geometry:
        window.restoreGeometry(QByteArray(base64.b64decode(state.window_geometry)))


def geometry(
    window: QWidget, splitter: QSplitter, sidebar: QWidget, map_pane: QWidget
) -> dict[str, Any]:
    """What `restore_geometry` reads, for `Workbench.remember`."""

    def b64(data: QByteArray) -> str:
        return base64.b64encode(bytes(data.data())).decode("ascii")

    return {
        "window_geometry": b64(window.saveGeometry()),
        "splitter_state": b64(splitter.saveState()),
        "map_visible": not map_pane.isHidden(),
        "sidebar_visible": not sidebar.isHidden(),
    }
