"""Small panels of the main window: the start page, the notice bar, the status bar."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStatusBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._identity import open_path
from desktop_agent.gui._tr import QT_TRANSLATE_NOOP
from desktop_agent.workbench import Notice, SaveState, Usage, fill


class StartPage(QWidget):
    """First launch: how to add a provider or pick a local server, then a workspace."""

    choose_workspace = Signal()
    open_settings = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("startPage")
        text = QLabel(
            self.tr(
                "<h2>Welcome to Desktop Agent</h2>"
                "<p>Work with an AI agent in a project folder: it reads, edits and runs things "
                "there, and every conversation is kept as a session you can branch and resume."
                "</p><p><b>1.</b> Add a provider: an OpenAI or Anthropic API key, or a local "
                "server such as Ollama, LM Studio or LiteLLM (Settings).<br><b>2.</b> Choose "
                "the project folder the agent may work in.</p>"
            )
        )
        text.setObjectName("startText")
        text.setWordWrap(True)
        settings = QPushButton(self.tr("Add a provider…"), self)
        settings.setObjectName("startSettingsButton")
        settings.clicked.connect(self.open_settings.emit)
        folder = QPushButton(self.tr("Choose a project folder…"), self)
        folder.setObjectName("startWorkspaceButton")
        folder.clicked.connect(self.choose_workspace.emit)
        column = QWidget(self)
        column.setMaximumWidth(640)
        inner = QVBoxLayout(column)
        inner.setContentsMargins(24, 0, 24, 0)
        buttons = QHBoxLayout()
        buttons.addWidget(settings)
        buttons.addWidget(folder)
        buttons.addStretch(1)
        inner.addWidget(text)
        inner.addLayout(buttons)
        row = QHBoxLayout()  # the column takes its real width, so wrapped text fits
        row.addStretch(1)
        row.addWidget(column, 4)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)


SETTINGS_NOTICES = frozenset({"model", "servers"})
"""Keys of the notices whose cause is fixed in Settings: they get a Settings button."""


FILE_NOTICES = frozenset({"export", "save"})
"""Keys of the notices that can name a file the app just wrote (their ``path``): such a
notice has Open and Show in folder, and passes by itself after `PASSING_MS`; a notice
of a problem stays until its cause goes (FIRST_HOUR.md m9: "Exported to …" stayed)."""
PASSING_MS = 20_000


class NoticeBar(QWidget):
    """One line per notice above the chat; a notice may have an action (Undo) and can be
    dismissed. A notice goes away by itself when its cause does (the workbench says)."""

    action_requested = Signal(str)  # notice key
    dismissed = Signal(str)
    settings_requested = Signal()
    """A notice whose cause is fixed in Settings (no model, a server not listed)."""

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
        """The notices as shown (translated, values filled in)."""
        return [fill(QCoreApplication.translate("notices", n.text), n.args) for n in self._shown]

    def _row(self, notice: Notice) -> QWidget:
        row = QWidget(self)
        row.setObjectName(f"notice_{notice.key}")
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        text = fill(QCoreApplication.translate("notices", notice.text), notice.args)
        label = QLabel(text, row)
        label.setObjectName("noticeText")
        label.setAccessibleName(self.tr("Notice"))
        label.setAccessibleDescription(text)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        line.addWidget(label, 1)
        if notice.action_label:
            label_text = QCoreApplication.translate("notices", notice.action_label)
            action = QPushButton(label_text, row)
            action.setObjectName("undoButton" if notice.action_label == "Undo" else "noticeAction")
            action.setAccessibleName(label_text)
            action.setAccessibleDescription(text)
            action.clicked.connect(lambda: self.action_requested.emit(notice.key))
            line.addWidget(action)
        for choice, key in notice.more:  # e.g. Keep / Show changes
            line.addWidget(self._button(row, choice, key, text))
        path = dict(notice.args).get("path") if notice.key in FILE_NOTICES else None
        if path:
            self._file_buttons(row, line, Path(path), text)
            timer = QTimer(row)  # (goes with its row)
            timer.setSingleShot(True)
            timer.timeout.connect(lambda: self._pass(notice))
            timer.start(self.passing_ms)
        if notice.key in SETTINGS_NOTICES:
            settings = QPushButton(self.tr("Settings…"), row)
            settings.setObjectName("noticeSettings")
            settings.setAccessibleName(self.tr("Settings…"))
            settings.setAccessibleDescription(text)
            settings.clicked.connect(self.settings_requested)
            line.addWidget(settings)
        close = QToolButton(row)
        close.setObjectName("noticeDismiss")
        close.setText("×")
        close.setAutoRaise(True)
        close.setToolTip(self.tr("Dismiss"))
        close.setAccessibleName(self.tr("Dismiss"))
        close.setAccessibleDescription(self.tr("Dismiss the notice: %s") % text)
        close.clicked.connect(lambda: self.dismissed.emit(notice.key))
        line.addWidget(close)
        return row

    passing_ms = PASSING_MS

    def _pass(self, notice: Notice) -> None:
        if notice in self._shown:
            self.dismissed.emit(notice.key)

    def _file_buttons(self, row: QWidget, line: QHBoxLayout, path: Path, text: str) -> None:
        buttons = [(self.tr("Show in folder"), "noticeShowFolder", path.parent)]
        if not path.is_dir():
            buttons.insert(0, (self.tr("Open"), "noticeOpen", path))
        else:
            buttons[0] = (self.tr("Show in folder"), "noticeShowFolder", path)
        for label, name, target in buttons:
            button = QPushButton(label, row)
            button.setObjectName(name)
            button.setAccessibleName(label)
            button.setAccessibleDescription(text)
            button.clicked.connect(lambda _=False, t=target: open_path(t))
            line.addWidget(button)

    def _button(self, row: QWidget, label: str, key: str, description: str) -> QPushButton:
        shown = QCoreApplication.translate("notices", label)
        button = QPushButton(shown, row)
        button.setObjectName("noticeChoice")
        button.setAccessibleName(shown)
        button.setAccessibleDescription(description)
        button.clicked.connect(lambda: self.action_requested.emit(key))
        return button


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
        label = QCoreApplication.translate("notices", state.label)
        if state.status == "not_saved" and state.pending:
            label = self.tr("Not saved ({count})").format(count=state.pending)
        self.save.setText(label)
        self.save.setToolTip(state.detail or "")

    def show_usage(self, usage: Usage, has_session: bool) -> None:
        if not has_session:
            self.usage.setText("")
            self.context.setText("")
            return
        self.usage.setText(
            self.tr("{tokens} tokens · ${cost}").format(
                tokens=f"{usage.tokens:,}", cost=f"{usage.cost:.4f}"
            )
        )
        window = usage.context_window
        context = self.tr("context {used}/{window}").format(
            used=f"{usage.context_tokens:,}", window=f"{window:,}"
        )
        self.context.setText(context if window else "")


def name_widgets(root: QWidget) -> None:
    """Accessible names and descriptions of the window's controls, by objectName (a
    combo box's popup list is named after the box). Found by name: wrapping every
    child of the window for Python to read its name took 4-10 ms of each launch."""
    for object_name, (source_name, source_description) in ACCESSIBLE.items():
        name = QCoreApplication.translate("Accessibility", source_name)
        description = QCoreApplication.translate("Accessibility", source_description)
        for widget in root.findChildren(QWidget, object_name):
            widget.setAccessibleName(name)
            widget.setAccessibleDescription(description)
            if isinstance(widget, QComboBox):
                widget.view().setAccessibleName(name)
                widget.view().setAccessibleDescription(description)


ACCESSIBLE: dict[str, tuple[str, str]] = {
    "sessionSidebar": (
        QT_TRANSLATE_NOOP("Accessibility", "Sessions"),
        QT_TRANSLATE_NOOP("Accessibility", "All sessions, grouped by project folder"),
    ),
    "sessionSearch": (
        QT_TRANSLATE_NOOP("Accessibility", "Search sessions"),
        QT_TRANSLATE_NOOP("Accessibility", "Type to filter the sessions by title and content"),
    ),
    "sessionList": (
        QT_TRANSLATE_NOOP("Accessibility", "Session list"),
        QT_TRANSLATE_NOOP("Accessibility", "Enter opens the selected session"),
    ),
    "trashList": (
        QT_TRANSLATE_NOOP("Accessibility", "Trash"),
        QT_TRANSLATE_NOOP("Accessibility", "Sessions moved to the trash; Enter restores one"),
    ),
    "newSessionButton": (
        QT_TRANSLATE_NOOP("Accessibility", "New session"),
        QT_TRANSLATE_NOOP("Accessibility", "Start a new session in the project folder"),
    ),
    "trashToggle": (
        QT_TRANSLATE_NOOP("Accessibility", "Trash"),
        QT_TRANSLATE_NOOP("Accessibility", "Show the sessions moved to the trash"),
    ),
    "backupButton": (
        QT_TRANSLATE_NOOP("Accessibility", "Back up"),
        QT_TRANSLATE_NOOP("Accessibility", "Back up all sessions to one archive"),
    ),
    "chatPane": (
        QT_TRANSLATE_NOOP("Accessibility", "Conversation"),
        QT_TRANSLATE_NOOP("Accessibility", "The messages of the current branch"),
    ),
    "chatView": (
        QT_TRANSLATE_NOOP("Accessibility", "Conversation"),
        QT_TRANSLATE_NOOP(
            "Accessibility",
            "Up and Down move between messages; Ctrl+E edits, "
            "Ctrl+Shift+C copies, Alt+Left and Alt+Right switch versions",
        ),
    ),
    "composer": (
        QT_TRANSLATE_NOOP("Accessibility", "Message box"),
        QT_TRANSLATE_NOOP("Accessibility", "Write to the agent"),
    ),
    "composerInput": (
        QT_TRANSLATE_NOOP("Accessibility", "Message"),
        QT_TRANSLATE_NOOP(
            "Accessibility",
            "Write to the agent; Enter sends, Shift+Enter starts a new line, Tab moves on",
        ),
    ),
    "sendButton": (
        QT_TRANSLATE_NOOP("Accessibility", "Send"),
        QT_TRANSLATE_NOOP("Accessibility", "Send the message to the agent"),
    ),
    "stopButton": (
        QT_TRANSLATE_NOOP("Accessibility", "Stop"),
        QT_TRANSLATE_NOOP("Accessibility", "Stop the agent (Esc)"),
    ),
    "followUpButton": (
        QT_TRANSLATE_NOOP("Accessibility", "Queue"),
        QT_TRANSLATE_NOOP("Accessibility", "Send after the agent has finished"),
    ),
    "modelPicker": (
        QT_TRANSLATE_NOOP("Accessibility", "Model"),
        QT_TRANSLATE_NOOP("Accessibility", "The model that answers in this session"),
    ),
    "thinkingPicker": (
        QT_TRANSLATE_NOOP("Accessibility", "Thinking level"),
        QT_TRANSLATE_NOOP("Accessibility", "How much the model thinks before it answers"),
    ),
    "startSettingsButton": (
        QT_TRANSLATE_NOOP("Accessibility", "Add a provider"),
        QT_TRANSLATE_NOOP("Accessibility", "Open Settings to add a key or a server"),
    ),
    "startWorkspaceButton": (
        QT_TRANSLATE_NOOP("Accessibility", "Choose a project folder"),
        QT_TRANSLATE_NOOP("Accessibility", "The folder the agent may work in"),
    ),
    "branchPane": (
        QT_TRANSLATE_NOOP("Accessibility", "Branches"),
        QT_TRANSLATE_NOOP("Accessibility", "The branch map and the list of branches"),
    ),
    "branchTabs": (
        QT_TRANSLATE_NOOP("Accessibility", "Branch map or branch list"),
        QT_TRANSLATE_NOOP("Accessibility", "Switch between the map and the list of branches"),
    ),
    "branchTree": (
        QT_TRANSLATE_NOOP("Accessibility", "Branch map"),
        QT_TRANSLATE_NOOP("Accessibility", "Arrows move, Enter continues from that point"),
    ),
    "branchFilter": (
        QT_TRANSLATE_NOOP("Accessibility", "Entries shown on the map"),
        QT_TRANSLATE_NOOP("Accessibility", "Messages only, or settings and other entries too"),
    ),
    "branchList": (
        QT_TRANSLATE_NOOP("Accessibility", "Branches, newest first"),
        QT_TRANSLATE_NOOP("Accessibility", "Enter switches to that branch"),
    ),
}
