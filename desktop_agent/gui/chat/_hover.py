"""Which chat card shows its actions: the one under the mouse, or the current one while
the list has keyboard focus (the actions are not permanent buttons on every card).

`CardFocus` watches the chat view (an event filter: mouse moves, leaving, focus) and paints
a card with its hover actions when it is active, plus a focus ring in the palette's
highlight around the current card when the list has the keyboard focus.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, QRectF, Qt
from PySide6.QtGui import QMouseEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import QAbstractItemView
from shiboken6 import isValid

from desktop_agent.gui.chat._parts import BoxPart, CardLayout, Mark, Theme


class CardFocus(QObject):
    """See the module docstring; ``hover_row`` is the row under the mouse (or -1)."""

    def __init__(self, view: QAbstractItemView) -> None:
        super().__init__(view)
        self._view = view
        self._selection: QItemSelectionModel | None = None
        self.hover_row = -1
        self.marks_of: Callable[[int], dict[int, list[Mark]]] = lambda _row: {}
        """What text of card ``row`` is marked (set by the pane: selected, found)."""
        view.installEventFilter(self)
        view.viewport().installEventFilter(self)

    def is_active(self, row: int) -> bool:
        view = self._view
        return row == self.hover_row or (view.hasFocus() and row == view.currentIndex().row())

    def paint(self, painter: QPainter, layout: CardLayout, theme: Theme, row: int) -> None:
        """Paint card ``row`` (in card coordinates) with the chrome its state asks for."""
        view = self._view
        layout.paint(painter, theme, self.is_active(row), self.marks_of(row))
        box = layout.parts[0] if layout.parts else None
        if view.hasFocus() and row == view.currentIndex().row() and isinstance(box, BoxPart):
            painter.save()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(QPen(view.palette().color(QPalette.ColorRole.Highlight), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            rect = QRectF(box.rect).adjusted(1, 1, -1, -1)
            painter.drawRoundedRect(rect, box.radius, box.radius)
            painter.restore()

    def set_hover(self, row: int) -> None:
        if row != self.hover_row:
            old, self.hover_row = self.hover_row, row
            self._update(old)
            self._update(row)

    def _update(self, row: int) -> None:
        model = self._view.model()
        if 0 <= row < model.rowCount():
            self._view.update(model.index(row, 0))

    def _current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        self._update(previous.row())
        self._update(current.row())

    def _follow_selection(self) -> None:
        selection = self._view.selectionModel()
        if selection is not self._selection:
            self._selection = selection
            selection.currentChanged.connect(self._current_changed)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        view = self._view
        if not isValid(view):  # events while the view is being destroyed
            return False
        kind = event.type()
        if watched is view.viewport():
            if kind == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
                self._follow_selection()
                index = view.indexAt(event.position().toPoint())
                self.set_hover(index.row() if index.isValid() else -1)
            elif kind == QEvent.Type.Leave:
                self.set_hover(-1)
        elif watched is view and kind in (QEvent.Type.FocusIn, QEvent.Type.FocusOut):
            self._follow_selection()
            model = view.model()
            current = view.currentIndex()
            if kind == QEvent.Type.FocusIn and not current.isValid() and model.rowCount():
                view.setCurrentIndex(model.index(model.rowCount() - 1, 0))
            self._update(view.currentIndex().row())
        return False
