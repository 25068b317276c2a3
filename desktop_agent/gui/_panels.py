"""Small panels of the main window: the start page, the notice bar, the status bar."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStatusBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.workbench import Notice, SaveState, Usage


class StartPage(QWidget):
    """First launch: how to add a provider or pick a local server, then a workspace."""

    choose_workspace = Signal()
    open_settings = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("startPage")
        text = QLabel(
            "<h2>Welcome to Desktop Agent</h2>"
            "<p>Work with an AI agent in a project folder: it reads, edits and runs things "
            "there, and every conversation is kept as a session you can branch and resume."
            "</p><p><b>1.</b> Add a provider: an OpenAI or Anthropic API key, or a local "
            "server such as Ollama, LM Studio or LiteLLM (Settings).<br><b>2.</b> Choose "
            "the project folder the agent may work in.</p>"
        )
        text.setWordWrap(True)
        settings = QPushButton("Add a provider…", self)
        settings.setObjectName("startSettingsButton")
        settings.clicked.connect(self.open_settings.emit)
        folder = QPushButton("Choose a project folder…", self)
        folder.setObjectName("startWorkspaceButton")
        folder.clicked.connect(self.choose_workspace.emit)
        buttons = QHBoxLayout()
        buttons.addWidget(settings)
        buttons.addWidget(folder)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(text)
        layout.addLayout(buttons)
        layout.addStretch(2)


class NoticeBar(QWidget):
    """One line per notice above the chat; a notice may have an action (Undo) and can be
    dismissed. A notice goes away by itself when its cause does (the workbench says)."""

    action_requested = Signal(str)  # notice key
    dismissed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("noticeBar")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(8, 4, 8, 4)
        self._layout.setSpacing(2)
        self._shown: list[Notice] = []
        self.setVisible(False)

    def set_notices(self, notices: list[Notice]) -> None:
        if notices == self._shown:
            return
        self._shown = list(notices)
        while self._layout.count():
            item = self._layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for notice in notices:
            self._layout.addWidget(self._row(notice))
        self.setVisible(bool(notices))

    def texts(self) -> list[str]:
        return [n.text for n in self._shown]

    def _row(self, notice: Notice) -> QWidget:
        row = QWidget(self)
        row.setObjectName(f"notice_{notice.key}")
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        label = QLabel(notice.text, row)
        label.setObjectName("noticeText")
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        line.addWidget(label, 1)
        if notice.action_label:
            action = QPushButton(notice.action_label, row)
            action.setObjectName("undoButton" if notice.action_label == "Undo" else "noticeAction")
            action.clicked.connect(lambda: self.action_requested.emit(notice.key))
            line.addWidget(action)
        close = QToolButton(row)
        close.setObjectName("noticeDismiss")
        close.setText("×")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(lambda: self.dismissed.emit(notice.key))
        line.addWidget(close)
        return row


class StatusBar(QStatusBar):
    """Progress | context use | tokens and cost | save state (``statusSave``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.save = QLabel("", self)
        self.save.setObjectName("statusSave")
        self.usage = QLabel("", self)
        self.usage.setObjectName("statusUsage")
        self.context = QLabel("", self)
        self.context.setObjectName("statusContext")
        self.progress = QLabel("", self)
        self.progress.setObjectName("statusProgress")
        self.addWidget(self.progress, 1)
        self.addPermanentWidget(self.context)
        self.addPermanentWidget(self.usage)
        self.addPermanentWidget(self.save)

    def show_save(self, state: SaveState) -> None:
        label = state.label
        if state.status == "not_saved" and state.pending:
            label = f"Not saved ({state.pending})"
        self.save.setText(label)
        self.save.setToolTip(state.detail or "")

    def show_usage(self, usage: Usage, has_session: bool) -> None:
        if not has_session:
            self.usage.setText("")
            self.context.setText("")
            return
        self.usage.setText(f"{usage.tokens:,} tokens · ${usage.cost:.4f}")
        window = usage.context_window
        self.context.setText(f"context {usage.context_tokens:,}/{window:,}" if window else "")
