"""The composer's ``/`` list: the app's commands, prompt templates and skills.

Typing ``/`` in an empty message asks the workbench once for the list (`needed`); while
the first word is typed the list shows the entries it starts (name, argument hint and
description). Up/Down choose, Enter or Tab fills the entry in (the next Enter sends it),
Esc closes. The list never takes the keyboard focus: the message box keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QPlainTextEdit, QWidget

from desktop_agent.workbench import Completion

_MAX_ROWS = 8


class CommandList(QListWidget):
    """objectName ``commandList``; shown above the message box while it is useful."""

    needed = Signal()
    """The message starts a command and the list is not loaded yet."""

    def __init__(self, editor: QPlainTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("commandList")
        self.setAccessibleName(self.tr("Commands"))
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setUniformItemSizes(True)
        self.editor = editor
        self._all: list[Completion] | None = None
        self._asked = False
        self.setVisible(False)
        editor.textChanged.connect(self.update_for_text)
        self.itemClicked.connect(lambda _item: self.accept())

    def set_completions(self, completions: Sequence[Completion]) -> None:
        self._all = list(completions)
        self.update_for_text()

    def _word(self) -> str | None:
        """The command being typed (without ``/``), or None when no list applies."""
        text = self.editor.toPlainText()
        if not text.startswith("/") or any(c.isspace() for c in text):
            return None
        return text[1:]

    def update_for_text(self) -> None:
        word = self._word()
        if word is None:
            self._all, self._asked = None, False  # asked again next time: files change
            self.setVisible(False)
            return
        if self._all is None:
            if not self._asked:
                self._asked = True
                self.needed.emit()
            return
        shown = [c for c in self._all if c.name.startswith(word)]
        self.clear()
        for completion in shown:
            hint = f" {completion.hint}" if completion.hint else ""
            item = QListWidgetItem(f"{completion.text}{hint} — {completion.description}")
            item.setData(Qt.ItemDataRole.UserRole, completion.text)
            item.setToolTip(completion.description)
            self.addItem(item)
        if shown:
            self.setCurrentRow(0)
            rows = min(len(shown), _MAX_ROWS)
            self.setFixedHeight(rows * max(self.sizeHintForRow(0), 1) + 2 * self.frameWidth())
        self.setVisible(bool(shown))

    def accept(self) -> None:
        """Put the chosen entry into the message box, followed by a space."""
        if self.currentRow() < 0:
            return
        text = f"{self.item(self.currentRow()).data(Qt.ItemDataRole.UserRole)} "
        self.setVisible(False)
        self.editor.setPlainText(text)
        cursor = self.editor.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.editor.setTextCursor(cursor)

    def handle_key(self, event: QKeyEvent) -> bool:
        """A key of the message box that the shown list takes (True: handled)."""
        if not self.isVisible():
            return False
        key = event.key()
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            step = -1 if key == Qt.Key.Key_Up else 1
            self.setCurrentRow((self.currentRow() + step) % self.count())
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                return False
            self.accept()
            return True
        if key == Qt.Key.Key_Escape:
            self.setVisible(False)
            return True
        return False
