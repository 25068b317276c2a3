"""Find in the conversation (Ctrl+F, FIRST_HOUR.md m5): a bar above the chat; every hit in
the cards shown is marked, the current one stands out and is scrolled into view; Enter
or F3 goes to the next, Shift+Enter or Shift+F3 to the previous, Esc closes the bar. Only
the messages loaded in the chat are searched (older ones come in as you scroll up)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QKeyEvent, QTextDocument, QTextLine
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QToolButton,
    QWidget,
)

from desktop_agent.gui.chat._parts import FOUND, FOUND_CURRENT, CardLayout, DocPart, Mark

Hit = tuple[int, int, int, int]
"""(chat row, part index, start, end) of one occurrence."""


def find_in(layout: CardLayout, query: str) -> list[tuple[int, int, int]]:
    """(part index, start, end) of every case-insensitive occurrence of ``query``."""
    found: list[tuple[int, int, int]] = []
    for i, part in enumerate(layout.parts):
        if not isinstance(part, DocPart):
            continue
        cursor = part.doc.find(query, 0, QTextDocument.FindFlag(0))
        while not cursor.isNull():
            found.append((i, cursor.selectionStart(), cursor.selectionEnd()))
            cursor = part.doc.find(query, cursor, QTextDocument.FindFlag(0))
    return found


def _x_of(line: QTextLine, position: int) -> float:
    """The x of a position on ``line`` (PySide6 gives ``cursorToX`` as (x, position))."""
    found: Any = line.cursorToX(position)
    return float(found[0] if isinstance(found, tuple) else found)


class FindBar(QWidget):
    """See the module docstring."""

    def __init__(
        self,
        parent: QWidget,
        view: QAbstractItemView,
        layout_of: Callable[[int], CardLayout],
        row_count: Callable[[], int],
    ) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self._view = view
        self._layout_of = layout_of
        self._row_count = row_count
        self.hits: list[Hit] = []
        self.current = -1
        line = QHBoxLayout(self)
        line.setContentsMargins(8, 4, 8, 4)
        self.input = QLineEdit(self)
        self.input.setObjectName("findInChat")
        self.input.setPlaceholderText(self.tr("Find in the conversation"))
        self.input.setAccessibleName(self.tr("Find in the conversation"))
        self.input.setAccessibleDescription(
            self.tr("Every hit is marked; Enter goes to the next, Shift+Enter to the previous")
        )
        self.input.setClearButtonEnabled(True)
        self.input.textChanged.connect(lambda _t: self.refresh())
        self.input.installEventFilter(self)
        self.count = QLabel(self)
        self.count.setObjectName("findCount")
        line.addWidget(self.input, 1)
        line.addWidget(self.count)
        for text, tip, step in (
            ("‹", self.tr("Previous (Shift+Enter)"), -1),
            ("›", self.tr("Next (Enter)"), 1),
        ):
            button = QToolButton(self)
            button.setText(text)
            button.setToolTip(tip)
            button.setObjectName("findNext" if step > 0 else "findPrevious")
            button.setAccessibleName(tip)
            button.setAccessibleDescription(self.tr("Go to another hit in the conversation"))
            button.setAutoRaise(True)
            button.clicked.connect(lambda _c=False, s=step: self.step(s))
            line.addWidget(button)
        close = QToolButton(self)
        close.setObjectName("findClose")
        close.setText("×")
        close.setAutoRaise(True)
        close.setToolTip(self.tr("Close (Esc)"))
        close.setAccessibleName(self.tr("Close the find bar"))
        close.setAccessibleDescription(self.tr("Hide the find bar and its marks (Esc)"))
        close.clicked.connect(self.close_bar)
        line.addWidget(close)
        self.hide()

    def open_bar(self) -> None:
        self.show()
        self.input.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.input.selectAll()
        self.refresh()

    def show_query(self, query: str, row: int) -> None:
        """Mark ``query`` in the chat, its first hit at or after chat row ``row`` the
        current one (a session opened from the sidebar's search: m5), without taking
        the focus from where the person is."""
        self.show()
        self.hits, self.current = [], -1
        self.input.setText(query)  # finds (textChanged)
        first = next((i for i, h in enumerate(self.hits) if h[0] >= row), None)
        if first is not None and first != self.current:
            self.current = first
            self._show_current()

    def drop_query(self, query: str) -> None:
        """The sidebar's search ended: its marks go, unless the bar was given other text."""
        if self.isVisible() and self.input.text() == query:
            self.hide()
            self.hits, self.current = [], -1
            self._view.viewport().update()

    def close_bar(self) -> None:
        self.hide()
        self.hits, self.current = [], -1
        self._view.viewport().update()
        self._view.setFocus(Qt.FocusReason.OtherFocusReason)

    def refresh(self) -> None:
        """Find again (the text or the chat changed); the current hit stays the first at
        or after the one before."""
        query = self.input.text() if self.isVisible() else ""
        before = self.hits[self.current][:2] if 0 <= self.current < len(self.hits) else None
        self.hits = []
        if query:
            for row in range(self._row_count()):
                layout = self._layout_of(row)
                self.hits.extend((row, *hit) for hit in find_in(layout, query))
        self.current = -1
        if self.hits:
            self.current = next(
                (i for i, h in enumerate(self.hits) if before is None or h[:2] >= before), 0
            )
        self._show_current()

    def step(self, step: int) -> None:
        if self.hits:
            self.current = (self.current + step) % len(self.hits)
            self._show_current()

    def _show_current(self) -> None:
        if not self.input.text():
            self.count.setText("")
        elif not self.hits:
            self.count.setText(self.tr("No match"))
        else:
            self.count.setText(
                self.tr("%1 of %2")
                .replace("%1", str(self.current + 1))
                .replace("%2", str(len(self.hits)))
            )
        hit = self.current_rect()
        if hit is not None:
            shown = self._view.viewport().rect()
            if not (shown.top() <= hit.top() and hit.bottom() <= shown.bottom()):
                # The hit itself a third of the way down (not its card's or its text's
                # top: a long reply is one text, and its top may be far above the hit).
                bar = self._view.verticalScrollBar()
                bar.setValue(bar.value() + hit.top() - shown.height() // 3)
        self._view.viewport().update()

    def current_rect(self) -> QRect | None:
        """Where the current hit is, in the view's viewport (None: no hit)."""
        if not 0 <= self.current < len(self.hits):
            return None
        row, part_index, start, end = self.hits[self.current]
        part = self._layout_of(row).parts[part_index]
        card = self._view.visualRect(self._view.model().index(row, 0))
        if not isinstance(part, DocPart):
            return card
        block = part.doc.findBlock(start)
        box = part.doc.documentLayout().blockBoundingRect(block)
        offset = start - block.position()
        line = block.layout().lineForTextPosition(offset)
        if not line.isValid():
            top, height, left, right = box.top(), box.height(), box.left(), box.right()
        else:
            top, height = box.top() + line.y(), line.height()
            last = min(end - block.position(), line.textStart() + line.textLength())
            left = box.left() + _x_of(line, offset)
            right = box.left() + _x_of(line, last)
        x, y = card.left() + part.x, card.top() + part.y
        return QRect(
            int(x + left), int(y + top), max(1, int(right - left)), max(1, int(height + 0.999))
        )

    def marks_for(self, row: int) -> dict[int, list[Mark]]:
        marks: dict[int, list[Mark]] = {}
        if not self.isVisible():
            return marks
        for i, (r, part, start, end) in enumerate(self.hits):
            if r == row:
                kind = FOUND_CURRENT if i == self.current else FOUND
                marks.setdefault(part, []).append((start, end, kind))
        return marks

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key, shift = event.key(), event.modifiers() & Qt.KeyboardModifier.ShiftModifier
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_F3):
                self.step(-1 if shift else 1)
                return True
            if key == Qt.Key.Key_Escape:
                self.close_bar()
                return True
        return False
