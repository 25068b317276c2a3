"""Selecting reply text in place (FIRST_HOUR.md M6): the cards are painted, not widgets,
so the chat view keeps one selection itself.

A selection goes from an anchor to a focus, each a card (its row's uid) and a spot in it
(document part of the card's layout, character position); the two may lie in different
cards. A drag selects (from one card into others; above or below the view it scrolls, as
text editors do), a double-click selects a word, Ctrl+A the whole card; Shift+arrows
(Ctrl: by word) and Shift+Home/End extend it. Ctrl+C copies the selection, the cards'
texts in order with a blank line between them (or, with none, the whole current message,
never a preview); the right-click menu has Copy, Copy as Markdown, Select all and Quote in
reply. Documents paint the selection with the palette's highlight (`DocPart.paint`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QObject,
    QPoint,
    QPointF,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QContextMenuEvent, QKeyEvent, QKeySequence, QMouseEvent, QTextCursor
from PySide6.QtWidgets import QAbstractItemView, QMenu
from shiboken6 import isValid

from desktop_agent.gui.chat._parts import CardLayout, DocPart

_HANDLED = frozenset(
    {
        QEvent.Type.KeyPress,
        QEvent.Type.ContextMenu,
        QEvent.Type.MouseButtonPress,
        QEvent.Type.MouseButtonDblClick,
        QEvent.Type.MouseMove,
        QEvent.Type.MouseButtonRelease,
    }
)

_Move = QTextCursor.MoveOperation
_MOVES = {
    Qt.Key.Key_Left: _Move.Left,
    Qt.Key.Key_Right: _Move.Right,
    Qt.Key.Key_Up: _Move.Up,
    Qt.Key.Key_Down: _Move.Down,
    Qt.Key.Key_Home: _Move.StartOfLine,
    Qt.Key.Key_End: _Move.EndOfLine,
}
_WORD_MOVES = {_Move.Left: _Move.PreviousWord, _Move.Right: _Move.NextWord}
_BACKWARDS = frozenset({_Move.Left, _Move.Up, _Move.StartOfLine, _Move.PreviousWord})

Spot = tuple[int, int]
"""(index of a `DocPart` among the card's parts, character position in its document)."""


def _tr(text: str) -> str:
    return QCoreApplication.translate("ChatCard", text)


SCROLL_MS = 30
"""How often a drag held above or below the view scrolls it."""


@dataclass
class _Selection:
    uid: int
    """The chat row (`Row.uid`) of the anchor."""
    anchor: Spot
    focus: Spot
    focus_uid: int
    """The chat row of the focus (the anchor's, or another card a drag went into)."""


def _docs(layout: CardLayout) -> list[tuple[int, DocPart]]:
    return [(i, p) for i, p in enumerate(layout.parts) if isinstance(p, DocPart)]


def spot_at(layout: CardLayout, pos: QPoint, *, strict: bool) -> Spot | None:
    """The document position under ``pos`` (card coordinates). ``strict``: only on a
    document; else the nearest one by height (a drag that leaves the text)."""
    docs = _docs(layout)
    if not docs:
        return None
    chosen: tuple[int, DocPart] | None = None
    for i, part in docs:
        width = part.doc.size().width()
        inside_y = part.y <= pos.y() < part.y + max(part.height, 1)
        if inside_y and (not strict or part.x <= pos.x() <= part.x + width):
            chosen = (i, part)
            break
        if not strict and pos.y() >= part.y:
            chosen = (i, part)
    if chosen is None:
        if strict:
            return None
        chosen = docs[0]
    i, part = chosen
    local = QPointF(pos.x() - part.x, min(max(pos.y() - part.y, 0), part.height - 1))
    hit = part.doc.documentLayout().hitTest(local, Qt.HitTestAccuracy.FuzzyHit)
    return (i, max(hit, 0))


def _end(part: DocPart) -> int:
    return max(part.doc.characterCount() - 1, 0)


def ranges(layout: CardLayout, start: Spot | None, end: Spot | None) -> dict[int, tuple[int, int]]:
    """Part index -> (start, end) selected in it, from ``start`` to ``end`` (None: the
    card's start, its end)."""
    docs = _docs(layout)
    if not docs:
        return {}
    pa, ca = start if start is not None else (docs[0][0], 0)
    pb, cb = end if end is not None else (docs[-1][0], _end(docs[-1][1]))
    out: dict[int, tuple[int, int]] = {}
    for i, part in docs:
        if pa <= i <= pb:
            a = ca if i == pa else 0
            b = cb if i == pb else _end(part)
            if b > a:
                out[i] = (a, b)
    return out


def selected_text(layout: CardLayout, start: Spot | None, end: Spot | None) -> str:
    texts = []
    for i, (a, b) in sorted(ranges(layout, start, end).items()):
        part = layout.parts[i]
        assert isinstance(part, DocPart)
        cursor = QTextCursor(part.doc)
        cursor.setPosition(a)
        cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
        texts.append(cursor.selectedText().replace("\u2029", "\n").replace("\u2028", "\n"))
    return "\n".join(texts)


class TextSelection(QObject):
    """The chat view's selection; see the module docstring. The pane answers what a card
    shows (``layout_of``, ``uid_of``, ``row_of_uid``) and what a message is in Markdown
    (``markdown_of``)."""

    copied = Signal(str)
    quote_requested = Signal(str)

    def __init__(
        self,
        view: QAbstractItemView,
        layout_of: Callable[[int], CardLayout],
        uid_of: Callable[[int], int],
        row_of_uid: Callable[[int], int],
        markdown_of: Callable[[int], str],
        copy: Callable[[str], None],
    ) -> None:
        super().__init__(view)
        self._view = view
        self._layout_of = layout_of
        self._uid_of = uid_of
        self._row_of_uid = row_of_uid
        self._markdown_of = markdown_of
        self._copy = copy
        self._sel: _Selection | None = None
        self._dragging = False
        self._drag_pos = QPoint()
        self._scroller = QTimer(self)
        self._scroller.setInterval(SCROLL_MS)
        self._scroller.timeout.connect(self._scroll_drag)
        view.viewport().installEventFilter(self)
        view.installEventFilter(self)

    # -- what is selected

    def row(self) -> int:
        """The row of the selection's focus (-1: none)."""
        return self._row_of_uid(self._sel.focus_uid) if self._sel is not None else -1

    def _span(self) -> tuple[tuple[int, Spot], tuple[int, Spot]] | None:
        """(row, spot) of the selection's first and last end, in the chat's order."""
        sel = self._sel
        if sel is None:
            return None
        a = (self._row_of_uid(sel.uid), sel.anchor)
        b = (self._row_of_uid(sel.focus_uid), sel.focus)
        if a[0] < 0 or b[0] < 0:
            return None
        return (a, b) if a <= b else (b, a)

    def rows(self) -> range:
        """The rows the selection touches."""
        span = self._span()
        return range(span[0][0], span[1][0] + 1) if span is not None else range(0)

    def ranges_for(self, row: int) -> dict[int, tuple[int, int]]:
        """What to paint selected in card ``row`` (part index -> range)."""
        span = self._span()
        if span is None or not span[0][0] <= row <= span[1][0]:
            return {}
        (first, start), (last, end) = span
        return ranges(
            self._layout_of(row), start if row == first else None, end if row == last else None
        )

    def text(self) -> str:
        """The selected text: each card's part in order, a blank line between cards."""
        span = self._span()
        if span is None:
            return ""
        (first, start), (last, end) = span
        texts = (
            selected_text(
                self._layout_of(row), start if row == first else None, end if row == last else None
            )
            for row in range(first, last + 1)
        )
        return "\n\n".join(t for t in texts if t)

    def clear(self) -> None:
        shown = self.rows()
        self._sel = None
        self._dragging = False
        self._scroller.stop()
        self._update(shown)

    def select_all(self, row: int) -> None:
        docs = _docs(self._layout_of(row))
        if docs:
            shown = self.rows()
            uid = self._uid_of(row)
            self._sel = _Selection(uid, (docs[0][0], 0), (docs[-1][0], _end(docs[-1][1])), uid)
            self._update(shown)
            self._update(range(row, row + 1))

    # -- commands

    def copy(self) -> None:
        """Ctrl+C: the selection, else the whole current (or hovered) message."""
        text = self.text()
        if not text:
            row = self._target_row()
            text = self._markdown_of(row) if row >= 0 else ""
        if text:
            self._copy(text)
            self.copied.emit(text)

    def _target_row(self) -> int:
        row = self.row()
        if row < 0:
            row = self._view.currentIndex().row()
        return row

    def _update(self, rows: range) -> None:
        model = self._view.model()
        if len(rows) > 1:
            self._view.viewport().update()
            return
        for row in rows:
            if 0 <= row < model.rowCount():
                self._view.update(model.index(row, 0))

    def _card_point(self, row: int, pos: QPoint) -> QPoint:
        model = self._view.model()
        return pos - self._view.visualRect(model.index(row, 0)).topLeft()

    # -- dragging

    def _drag_to(self, pos: QPoint) -> None:
        """Move the focus of a drag to the text nearest ``pos`` (viewport coordinates),
        in whichever card is there; above or below the view, its top or bottom row."""
        sel = self._sel
        view = self._view
        model = view.model()
        if sel is None or model.rowCount() == 0:
            return
        port = view.viewport().rect()
        probe = QPoint(
            min(max(pos.x(), 0), port.width() - 1), min(max(pos.y(), 0), port.height() - 1)
        )
        index = view.indexAt(probe)
        if index.isValid():
            row = index.row()
        elif probe.y() > view.visualRect(model.index(model.rowCount() - 1, 0)).bottom():
            row = model.rowCount() - 1
        else:
            return  # between cards: the focus stays
        point = self._card_point(row, QPoint(pos.x(), probe.y()))
        if pos.y() < 0 and view.visualRect(index).top() >= 0:
            point.setY(-1)  # above a view at the chat's top: the card's start
        spot = spot_at(self._layout_of(row), point, strict=False)
        if spot is None:
            return  # a card without text
        uid = self._uid_of(row)
        if (uid, spot) != (sel.focus_uid, sel.focus):
            shown = self.rows()
            sel.focus_uid, sel.focus = uid, spot
            self._update(range(min(shown.start, row), max(shown.stop, row + 1)))

    def _scroll_drag(self) -> None:
        """A drag held above or below the view: scroll it (the farther, the faster) and
        extend the selection to what comes in."""
        if not self._dragging:
            self._scroller.stop()
            return
        view = self._view
        y, height = self._drag_pos.y(), view.viewport().height()
        over = y if y < 0 else y - height + 1 if y >= height else 0
        if over == 0:
            self._scroller.stop()
            return
        step = max(4, min(abs(over), 80))
        bar = view.verticalScrollBar()
        bar.setValue(bar.value() + (step if over > 0 else -step))
        self._drag_to(self._drag_pos)

    # -- events

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        view = self._view
        if not isValid(view):  # events while the view is being destroyed
            return False
        kind = event.type()
        if kind not in _HANDLED:
            return False
        if watched is view and kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self._key(event)
        if watched is not view.viewport():
            return False
        if kind == QEvent.Type.ContextMenu and isinstance(event, QContextMenuEvent):
            self._context_menu(event.pos(), event.globalPos())
            return True
        if not isinstance(event, QMouseEvent):
            return False
        pos = event.position().toPoint()
        if kind == QEvent.Type.MouseMove and self._dragging and self._sel is not None:
            self._drag_pos = pos
            self._drag_to(pos)
            outside = not 0 <= pos.y() < view.viewport().height()
            if outside and not self._scroller.isActive():
                self._scroller.start()
            elif not outside:
                self._scroller.stop()
            return True
        if kind == QEvent.Type.MouseButtonRelease and self._dragging:
            self._dragging = False
            self._scroller.stop()
            return True
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        if kind not in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonDblClick):
            return False
        return self._press(pos, double=kind == QEvent.Type.MouseButtonDblClick)

    def _key(self, event: QKeyEvent) -> bool:
        view = self._view
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy()
            return True
        if event.matches(QKeySequence.StandardKey.SelectAll):
            row = view.currentIndex().row()
            if row >= 0:
                self.select_all(row)
            return True
        if event.key() == Qt.Key.Key_Escape and self._sel is not None:
            self.clear()
            return True
        shift = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        move = _MOVES.get(Qt.Key(event.key()))
        if shift and move is not None and self._sel is not None:
            word = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
            self._extend(move, word)
            return True
        return False

    def _press(self, pos: QPoint, *, double: bool) -> bool:
        view = self._view
        index = view.indexAt(pos)
        if not index.isValid():
            self.clear()
            return False
        row = index.row()
        layout = self._layout_of(row)
        local = self._card_point(row, pos)
        if layout.hit_at(local.x(), local.y()) is not None:
            return False  # a button: the delegate's
        spot = spot_at(layout, local, strict=True)
        if spot is None:
            self.clear()
            return False
        shown = self.rows()
        uid = self._uid_of(row)
        if double:
            part = layout.parts[spot[0]]
            assert isinstance(part, DocPart)
            cursor = QTextCursor(part.doc)
            cursor.setPosition(spot[1])
            cursor.select(QTextCursor.SelectionType.WordUnderCursor)
            self._sel = _Selection(
                uid, (spot[0], cursor.selectionStart()), (spot[0], cursor.selectionEnd()), uid
            )
        else:
            self._sel = _Selection(uid, spot, spot, uid)
            self._dragging = True
            self._drag_pos = pos
        self._update(shown)
        self._update(range(row, row + 1))
        view.setFocus(Qt.FocusReason.MouseFocusReason)
        if view.currentIndex().row() != row:
            view.setCurrentIndex(index)
        return True

    def _extend(self, move: QTextCursor.MoveOperation, word: bool) -> None:
        """Shift+arrows (Ctrl: by word), Shift+Home/End: move the selection's focus end
        as a text field does; at a document's edge it goes on into the card's next or
        previous text (FIRST_HOUR.md M6)."""
        sel = self._sel
        row = self.row()
        if sel is None or row < 0:
            return
        layout = self._layout_of(row)
        docs = _docs(layout)
        index = next((n for n, (i, _p) in enumerate(docs) if i == sel.focus[0]), -1)
        if index < 0:
            return
        part = docs[index][1]
        cursor = QTextCursor(part.doc)
        cursor.setPosition(min(sel.focus[1], _end(part)))
        if word and move in _WORD_MOVES:
            move = _WORD_MOVES[move]
        before = cursor.position()
        moved = cursor.movePosition(move) and cursor.position() != before
        spot: Spot = (sel.focus[0], cursor.position())
        backwards = move in _BACKWARDS
        if not moved and backwards and index > 0:
            spot = (docs[index - 1][0], _end(docs[index - 1][1]))
        elif not moved and not backwards and index + 1 < len(docs):
            spot = (docs[index + 1][0], 0)
        sel.focus = spot
        self._update(range(row, row + 1))

    def _context_menu(self, pos: QPoint, global_pos: QPoint) -> None:
        index = self._view.indexAt(pos)
        if not index.isValid():
            return
        row = index.row()
        if row not in self.rows():
            self.clear()
        menu = self.menu_for(row)
        menu.popup(global_pos)

    def menu_for(self, row: int) -> QMenu:
        """The right-click menu of card ``row`` (built, not shown)."""
        menu = QMenu(self._view)
        menu.setObjectName("chatContextMenu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        selected = self.text() if row in self.rows() else ""
        markdown = self._markdown_of(row)

        def put(text: str) -> None:
            self._copy(text)
            self.copied.emit(text)

        copy = menu.addAction(_tr("Copy"))
        copy.setObjectName("chatCopy")
        copy.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
        copy.triggered.connect(lambda: put(selected or markdown))
        as_md = menu.addAction(_tr("Copy as Markdown"))
        as_md.setObjectName("chatCopyMarkdown")
        as_md.setEnabled(bool(markdown))
        as_md.triggered.connect(lambda: put(markdown))
        select_all = menu.addAction(_tr("Select all"))
        select_all.setObjectName("chatSelectAll")
        select_all.setShortcut(QKeySequence(QKeySequence.StandardKey.SelectAll))
        select_all.triggered.connect(lambda: self.select_all(row))
        menu.addSeparator()
        quote = menu.addAction(_tr("Quote in reply"))
        quote.setObjectName("chatQuote")
        quote.triggered.connect(lambda: self.quote_requested.emit(selected or markdown))
        return menu
