"""The composer: multi-line input, Send/Stop, model and thinking pickers, attachments."""

from __future__ import annotations

import mimetypes
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import (
    QDragEnterEvent,
    QDropEvent,
    QKeyEvent,
    QPaintEvent,
    QPalette,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._completer import CommandList
from desktop_agent.gui._icons import icon, palette_of
from desktop_agent.workbench import Attachment

IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024


class _Input(QPlainTextEdit):
    """Enter sends (or Ctrl+Enter, per setting); Shift+Enter always inserts a newline."""

    submit = Signal()
    resized = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.send_key = "enter"
        self.setTabChangesFocus(True)  # Tab moves on; the agent gets no tab characters
        self.commands: CommandList | None = None

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.resized.emit()  # lines wrap anew

    def event(self, event: QEvent) -> bool:
        # Tab reaches keyPressEvent only when it does not move the focus: take it first.
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and self.commands is not None
            and event.key() == Qt.Key.Key_Tab
            and self.commands.handle_key(event)
        ):
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self.commands is not None and self.commands.handle_key(event):
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
            shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
            if (self.send_key == "enter" and not shift and not ctrl) or (
                self.send_key == "ctrl+enter" and ctrl
            ):
                self.submit.emit()
                return
        super().keyPressEvent(event)


class ElidingCombo(QComboBox):
    """A combo box as wide as its longest entry or its placeholder (up to ``max_chars``
    characters), narrower only when the window is; text that does not fit ends in "…",
    never cut mid-letter (FIRST_HOUR.md p12, the cut first-run placeholder)."""

    def __init__(self, parent: QWidget | None = None, max_chars: int = 40) -> None:
        super().__init__(parent)
        self.max_chars = max_chars
        self.shown_text = ""
        """The text last painted (what a person sees; tests read it)."""
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def _hint(self, chars: int) -> QSize:
        fm = self.fontMetrics()
        texts = [self.itemText(i) for i in range(self.count())]
        widest = max((fm.horizontalAdvance(t) for t in texts), default=0)
        width = min(widest, fm.averageCharWidth() * chars) + 2
        if self.currentIndex() < 0:  # the placeholder is a sentence: whole, if it can be
            width = max(width, fm.horizontalAdvance(self.placeholderText()) + 2)
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        size = QSize(width, fm.height())
        return self.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, opt, size, self)

    def sizeHint(self) -> QSize:
        return self._hint(self.max_chars)

    def minimumSizeHint(self) -> QSize:
        return self._hint(min(12, self.max_chars))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QStylePainter(self)
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        if self.currentIndex() < 0 and self.placeholderText():
            opt.currentText = self.placeholderText()
            color = self.palette().color(QPalette.ColorRole.PlaceholderText)
            opt.palette.setColor(QPalette.ColorRole.ButtonText, color)
            opt.palette.setColor(QPalette.ColorRole.Text, color)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, opt)
        field = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox,
            opt,
            QStyle.SubControl.SC_ComboBoxEditField,
            self,
        )
        opt.currentText = self.fontMetrics().elidedText(
            opt.currentText, Qt.TextElideMode.ElideRight, field.width()
        )
        self.shown_text = opt.currentText
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, opt)

    def setPlaceholderText(self, text: str) -> None:
        super().setPlaceholderText(text)
        self.updateGeometry()


class Composer(QWidget):
    """objectName ``composer``; children ``sendButton``, ``stopButton``, ``modelPicker``,
    ``thinkingPicker``. While the agent runs, Send steers (Enter) and the follow-up button
    queues a message for after the run."""

    send_requested = Signal(str, list)  # text, attachments
    steer_requested = Signal(str)
    follow_up_requested = Signal(str)
    stop_requested = Signal()
    model_chosen = Signal(str)  # "provider/id"
    thinking_chosen = Signal(str)
    draft_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self.setAcceptDrops(True)
        self.input = _Input(self)
        self.input.setObjectName("composerInput")
        self.input.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.input.submit.connect(self._submit)
        self.input.textChanged.connect(lambda: self.draft_changed.emit(self.text()))
        self.input.textChanged.connect(self.fit_height)
        self.input.resized.connect(self.fit_height)
        self.fit_height()
        self.input.installEventFilter(self)
        self.commands = CommandList(self.input, self)
        self.input.commands = self.commands
        self.send_button = QPushButton(self.tr("Send"), self)
        self.send_button.setObjectName("sendButton")
        self.send_button.clicked.connect(self._submit)
        self.follow_button = QPushButton(self.tr("Queue"), self)
        self.follow_button.setMinimumWidth(0)
        self.follow_button.setObjectName("followUpButton")
        self.follow_button.setToolTip(self.tr("Send after the agent has finished (follow-up)"))
        self.follow_button.clicked.connect(self._follow_up)
        self.follow_button.setVisible(False)
        self.stop_button = QPushButton(self.tr("Stop"), self)
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip(self.tr("Stop the agent (Esc)"))
        self.stop_button.clicked.connect(self.stop_requested.emit)
        self.stop_button.setEnabled(False)
        self.model_picker = ElidingCombo(self, max_chars=56)
        self.model_picker.setObjectName("modelPicker")
        self.model_picker.activated.connect(self._model_activated)
        self.thinking_picker = ElidingCombo(self, max_chars=30)
        self.thinking_picker.setObjectName("thinkingPicker")
        self.thinking_picker.activated.connect(self._thinking_activated)
        self.attachments_label = QLabel(self)
        self.attachments_label.setObjectName("attachmentsLabel")
        self.attachments: list[Attachment] = []
        self._running = False
        self._read_only: str | None = None

        controls = QHBoxLayout()
        controls.addWidget(self.model_picker)
        controls.addWidget(self.thinking_picker)
        controls.addWidget(self.attachments_label, 1)
        controls.addStretch(1)
        controls.addWidget(self.follow_button)
        controls.addWidget(self.stop_button)
        controls.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.commands)
        layout.addWidget(self.input)
        layout.addLayout(controls)
        self.set_send_key("enter")
        self.tint()

    def tint(self) -> None:
        palette = palette_of(self)
        self.send_button.setIcon(icon("send", palette))
        self.stop_button.setIcon(icon("stop", palette))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.tint()

    # ---------------------------------------------------------------- state

    def text(self) -> str:
        return self.input.toPlainText()

    MIN_LINES = 3
    MAX_LINES = 12

    def fit_height(self) -> None:
        """As tall as its text, from `MIN_LINES` to `MAX_LINES` lines (then it scrolls),
        as chat apps' message boxes grow (FIRST_HOUR.md p13: it stayed 5 lines tall)."""
        field = self.input
        lines = int(field.document().documentLayout().documentSize().height())
        lines = min(max(lines, self.MIN_LINES), self.MAX_LINES)
        margins = field.contentsMargins()
        chrome = int(2 * field.document().documentMargin()) + margins.top() + margins.bottom()
        height = lines * field.fontMetrics().lineSpacing() + chrome + 2
        if field.height() != height:
            field.setFixedHeight(height)

    def set_text(self, text: str) -> None:
        self.input.setPlainText(text)
        cursor = self.input.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.input.setTextCursor(cursor)

    def set_send_key(self, key: str) -> None:
        self.input.send_key = key
        if key == "ctrl+enter":
            hint = self.tr("Ask the agent… (Ctrl+Enter to send, Enter for a new line)")
        else:
            hint = self.tr("Ask the agent… (Enter to send, Shift+Enter for a new line)")
        self.input.setPlaceholderText(hint)

    def set_read_only(self, reason: str | None) -> None:
        """A session that cannot be continued (e.g. an older Pi format): typing and
        sending are off, and the input says why (None: writable again)."""
        if reason == self._read_only:
            return
        self._read_only = reason
        self.input.setReadOnly(reason is not None)
        self.send_button.setEnabled(reason is None)
        self.follow_button.setEnabled(reason is None)
        if reason is not None:
            self.input.setPlaceholderText(reason)
        else:
            self.set_send_key(self.input.send_key)

    def set_running(self, running: bool) -> None:
        self._running = running
        self.stop_button.setEnabled(running)
        self.follow_button.setVisible(running)
        self.send_button.setText(self.tr("Steer") if running else self.tr("Send"))
        self.send_button.setToolTip(
            self.tr("Send now: the agent reads it before its next step")
            if running
            else self.tr("Send (Enter)")
        )

    def set_models(
        self, models: list[tuple[str, str]], current: str | None, pending: str | None = None
    ) -> None:
        """``models``: (key "provider/id", label) pairs; ``pending``: a model whose server
        has not answered yet (shown as connecting)."""
        self.model_picker.blockSignals(True)
        self.model_picker.clear()
        for key, label in models:
            self.model_picker.addItem(label, key)
        index = self.model_picker.findData(current) if current else -1
        if index < 0 and current:
            state = self.tr("connecting…") if current == pending else self.tr("unavailable")
            self.model_picker.addItem(f"{current} ({state})", current)
            index = self.model_picker.count() - 1
        self.model_picker.setCurrentIndex(max(index, 0) if self.model_picker.count() else -1)
        self.model_picker.setPlaceholderText(self.tr("No model: set one up in Settings (Ctrl+,)"))
        self.model_picker.updateGeometry()  # as wide as its entries now
        self.model_picker.blockSignals(False)

    def set_thinking_levels(self, levels: list[str], current: str) -> None:
        """``levels`` empty: the model reasons as its server decides (no level is sent)."""
        picker = self.thinking_picker
        picker.blockSignals(True)
        picker.clear()
        for level in levels:
            picker.addItem(self.tr("Thinking: %s") % level, level)
        if not levels:
            picker.addItem(self.tr("Thinking: set by the server"), current)
            picker.setToolTip(
                self.tr("This server takes no thinking level: the model thinks as it decides")
            )
        elif len(levels) == 1:
            picker.setToolTip(self.tr("This model takes no thinking level"))
        else:
            picker.setToolTip(self.tr("How much the model thinks before it answers"))
        picker.setCurrentIndex(max(picker.findData(current), 0))
        picker.setEnabled(len(levels) > 1)
        picker.blockSignals(False)

    # ---------------------------------------------------------------- actions

    def _submit(self) -> None:
        text = self.text().strip()
        if not text and not self.attachments:
            return
        if self._running:
            self.steer_requested.emit(text)
        else:
            self.send_requested.emit(text, list(self.attachments))
            self.attachments = []
            self._show_attachments()
        self.input.clear()

    def _follow_up(self) -> None:
        text = self.text().strip()
        if text:
            self.follow_up_requested.emit(text)
            self.input.clear()

    def _model_activated(self, index: int) -> None:
        key = self.model_picker.itemData(index)
        if isinstance(key, str):
            self.model_chosen.emit(key)

    def _thinking_activated(self, index: int) -> None:
        level = self.thinking_picker.itemData(index)
        if isinstance(level, str):
            self.thinking_chosen.emit(level)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.input
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
            and self._running
        ):
            self.stop_requested.emit()
            return True
        return super().eventFilter(watched, event)

    # ---------------------------------------------------------------- attachments

    def add_attachment(self, path: str) -> str | None:
        """Attach a file; returns a reason when it cannot be attached."""
        file = Path(path)
        try:
            size = file.stat().st_size
        except OSError as exc:
            return (
                self.tr("Cannot attach %1: %2").replace("%1", path).replace("%2", str(exc.strerror))
            )
        if size > MAX_ATTACHMENT_BYTES:
            return self.tr("Cannot attach %1: larger than 20 MB").replace("%1", file.name)
        mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        try:
            data = file.read_bytes()
        except OSError as exc:
            return (
                self.tr("Cannot attach %1: %2").replace("%1", path).replace("%2", str(exc.strerror))
            )
        if mime not in IMAGE_TYPES:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return self.tr("Cannot attach %1: not an image or a text file").replace(
                    "%1", file.name
                )
        self.attachments.append(Attachment(file.name, mime, data))
        self._show_attachments()
        return None

    def _show_attachments(self) -> None:
        names = [a.name for a in self.attachments]
        self.attachments_label.setText(("📎 " + ", ".join(names)) if names else "")

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.add_attachment(url.toLocalFile())
        event.acceptProposedAction()
