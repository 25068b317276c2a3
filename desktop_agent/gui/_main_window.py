"""Main window (first slice): session sidebar and the restored branch, on a qasync loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import qasync
from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QListWidget,
    QMainWindow,
    QPlainTextEdit,
    QSplitter,
    QStatusBar,
)

from desktop_agent.session import JsonlSessionRepo, Session


def _message_text(message: Any) -> str:
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            getattr(block, "text", None) or getattr(block, "thinking", "") for block in content
        ]
        return "\n".join(p for p in parts if p)
    return str(getattr(message, "summary", ""))


class MainWindow(QMainWindow):
    """Sidebar of sessions and the current branch of the restored session."""

    shown = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("Desktop Agent")
        self.resize(1100, 700)
        self.sidebar = QListWidget()
        self.sidebar.setObjectName("sessionSidebar")
        self.chat = QPlainTextEdit()
        self.chat.setObjectName("chatPane")
        self.chat.setReadOnly(True)
        splitter = QSplitter()
        splitter.addWidget(self.sidebar)
        splitter.addWidget(self.chat)
        splitter.setSizes([280, 820])
        self.setCentralWidget(splitter)
        status = QStatusBar()
        self.status_save = QLabel("Saved")
        self.status_save.setObjectName("statusSave")
        status.addPermanentWidget(self.status_save)
        self.setStatusBar(status)
        self._shown_once = False
        self.messages_shown = 0

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            QTimer.singleShot(0, self, self.shown.emit)

    async def load(self, repo: JsonlSessionRepo, session: Session | None) -> None:
        for meta in await repo.list():
            self.sidebar.addItem(f"{meta.cwd}  ·  {meta.created_at}")
        if session is None:
            self.chat.setPlainText(
                "No session yet. Add a provider key in Settings or pick a local server,"
                " then start a new session."
            )
            return
        context = await session.build_context()
        self.messages_shown = len(context.messages)
        self.chat.setPlainText(
            "\n\n".join(f"[{m.role}] {_message_text(m)}" for m in context.messages)
        )


def run_main_window(
    *,
    repo: JsonlSessionRepo,
    restore: Callable[[], Awaitable[Session | None]],
    smoke: bool,
    started: float,
    report: Callable[[dict[str, Any]], None],
) -> int:
    app = QApplication.instance() or QApplication(["desktop-agent"])
    assert isinstance(app, QApplication)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = MainWindow()
    done = asyncio.Event()
    session_box: list[Session | None] = [None]

    async def start() -> None:
        session = await restore()
        session_box[0] = session
        await window.load(repo, session)
        window.show()

    def on_shown() -> None:
        if not smoke:
            return
        session = session_box[0]
        report(
            {
                "restored_session": session.metadata.id if session else None,
                "leaf": session.leaf_id() if session else None,
                "messages_shown": window.messages_shown,
                "startup_ms": round((time.perf_counter() - started) * 1000),
            }
        )
        done.set()

    window.shown.connect(on_shown)
    app.aboutToQuit.connect(done.set)
    with loop:
        loop.run_until_complete(start())
        loop.run_until_complete(done.wait())
        session = session_box[0]
        if session is not None:
            loop.run_until_complete(session.close())
    window.close()
    return 0
