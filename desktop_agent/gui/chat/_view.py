"""The chat's list view: banded relayout (only the rows around the viewport are laid
out), anchoring (what the user looks at stays in place), following the bottom, and the
text an empty chat shows."""

from __future__ import annotations

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QFrame,
    QListView,
    QWidget,
)

from desktop_agent.gui.chat._delegate import CardListView, ChatDelegate
from desktop_agent.gui.chat._hover import CardFocus

_Index = QModelIndex | QPersistentModelIndex


class ChatView(CardListView):
    """The list of cards; follows the bottom while the user is there. ``near_top`` is
    emitted when the top of the list comes within a screen of the viewport (the pane
    then loads older messages)."""

    near_top = Signal()
    column_changed = Signal()
    """The viewport's width changed, and so the cards' column (`ChatPane.card_column`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setUniformItemSizes(False)
        # Lay rows out in batches across event-loop turns: adding a row to a long chat
        # otherwise re-lays out every row at once, in C++, on the UI thread (~100 ms at
        # 4,000 rows, measured while a reply starts streaming).
        self.setLayoutMode(QListView.LayoutMode.Batched)
        self.setBatchSize(250)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Always on: a bar that comes and goes would change the width, and so every height.
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().setBackgroundRole(QPalette.ColorRole.Window)
        self.verticalScrollBar().setSingleStep(24)
        self.stick_to_bottom = True
        self._changed: set[int] = set()
        self._keep_row = -1
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.relayout_now)
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range)
        self.relayouts = 0
        self.cards = CardFocus(self)
        self.paint_rect: QRect | None = None
        """While painting: the part of the viewport being painted."""

    empty_text = ""
    """What an empty chat says (a new session: its folder and how to start, p16)."""
    painted_empty = ""
    """The empty chat's text as last painted ("" once there are cards; tests read it)."""

    def paintEvent(self, event: QPaintEvent) -> None:
        self.paint_rect = event.rect()
        try:
            super().paintEvent(event)
        finally:
            self.paint_rect = None
        self.painted_empty = ""
        if self.model().rowCount() == 0 and self.empty_text:
            painter = QPainter(self.viewport())
            color = self.palette().color(QPalette.ColorRole.PlaceholderText)
            painter.setPen(color)
            area = self.viewport().rect().adjusted(24, 24, -24, -24)
            flags = Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap
            painter.drawText(area, int(flags), self.empty_text)
            painter.end()
            self.painted_empty = self.empty_text

    def _on_scrolled(self, value: int) -> None:
        self.stick_to_bottom = value >= self.verticalScrollBar().maximum() - 2
        if value < self.viewport().height():
            self.near_top.emit()

    def _on_range(self, _lo: int, hi: int) -> None:
        if self.stick_to_bottom:
            self.verticalScrollBar().setValue(hi)

    def schedule_relayout(self, row: int, *, keep: bool = False) -> None:
        self._changed.add(row)
        if keep:
            self._keep_row = row
        if not self._timer.isActive():
            self._timer.start()

    def relayout_now(self) -> None:
        """Re-run the item layout, keeping the bottom or an anchor row in place.

        Rows around the viewport (one screen each way) are laid out first, so that small
        scrolls after this find exact heights and need no further relayout.
        """
        self._timer.stop()
        changed, self._changed = self._changed, set()
        keep, self._keep_row = self._keep_row, -1
        model = self.model()
        delegate = self.itemDelegate()
        bar = self.verticalScrollBar()
        stick = self.stick_to_bottom and keep < 0
        if isinstance(delegate, ChatDelegate) and model.rowCount() > 0:
            delegate.resync_heights()
            n = model.rowCount()
            changed = {i for i in changed if 0 <= i < n and delegate.measure(i)}
            changed |= self._measure_band(delegate, stick)
        anchor = self._anchor_row(changed, keep) if not stick else -1
        old_top = self.visualRect(model.index(anchor, 0)).top() if anchor >= 0 else 0
        self.relayouts += 1
        self.scheduleDelayedItemsLayout()
        self.executeDelayedItemsLayout()
        if stick:
            bar.setValue(bar.maximum())
        elif anchor >= 0:
            new_top = self.visualRect(model.index(anchor, 0)).top()
            bar.setValue(bar.value() + new_top - old_top)
        self.viewport().update()

    def _measure_band(self, delegate: ChatDelegate, stick: bool) -> set[int]:
        n = self.model().rowCount()
        vh = max(200, self.viewport().height())
        changed: set[int] = set()
        if stick:
            first = last = n - 1
        else:
            top = self.indexAt(QPoint(4, 1))
            bottom = self.indexAt(QPoint(4, vh - 1))
            first = top.row() if top.isValid() else n - 1
            last = bottom.row() if bottom.isValid() else min(n - 1, first + 20)
        for i in range(first, last + 1):
            if delegate.measure(i):
                changed.add(i)
        room = vh if not stick else 2 * vh
        i = first - 1
        while i >= 0 and room > 0:
            if delegate.measure(i):
                changed.add(i)
            room -= delegate.height_of(i)
            i -= 1
        room = vh
        i = last + 1
        while i < n and room > 0:
            if delegate.measure(i):
                changed.add(i)
            room -= delegate.height_of(i)
            i += 1
        return changed

    def show_row_at(self, row: int, top: int) -> None:
        """Scroll so that ``row``'s card starts ``top`` pixels below the view's top
        (rows measured later keep it there: `relayout_now` anchors the first row shown)."""
        bar = self.verticalScrollBar()
        self.stick_to_bottom = False
        bar.setValue(bar.value() + self.visualRect(self.model().index(row, 0)).top() - top)
        self.stick_to_bottom = bar.value() >= bar.maximum()
        self.viewport().update()

    def _anchor_row(self, changed: set[int], keep: int) -> int:
        model = self.model()
        height = self.viewport().height()
        if keep >= 0 and self.visualRect(model.index(keep, 0)).intersects(self.viewport().rect()):
            return keep
        first = self.indexAt(QPoint(4, 1))
        if not first.isValid():
            return -1
        i = first.row()
        while i < model.rowCount():
            if i not in changed:
                return i
            if self.visualRect(model.index(i, 0)).bottom() > height:
                break
            i += 1
        return first.row()

    def scrollTo(
        self,
        index: QModelIndex | QPersistentModelIndex,
        hint: QAbstractItemView.ScrollHint = QAbstractItemView.ScrollHint.EnsureVisible,
    ) -> None:
        """No jump to a card already on screen when a click makes it current, or when it is
        taller than the view (FIRST_HOUR.md M7: the view jumped to a long reply's top, so
        its Copy button moved from under the pointer); explicit positions still scroll."""
        if hint == QAbstractItemView.ScrollHint.EnsureVisible and index.isValid():
            rect = self.visualRect(self.model().index(index.row(), 0))
            shown = self.viewport().rect()
            clicked = QApplication.mouseButtons() != Qt.MouseButton.NoButton
            if rect.intersects(shown) and (clicked or rect.height() > shown.height()):
                return
        super().scrollTo(index, hint)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Home and End go to the top and the end of the chat (the cards are not
        selectable, so moving a current row would not always scroll)."""
        if event.key() == Qt.Key.Key_Home and not event.modifiers():
            self.scrollToTop()
            return
        if event.key() == Qt.Key.Key_End and not event.modifiers():
            self.stick_to_bottom = True
            self.scrollToBottom()
            return
        super().keyPressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        super().mouseMoveEvent(event)
        pos = event.position().toPoint()
        index = self.indexAt(pos)
        delegate = self.itemDelegate()
        hit = None
        if index.isValid() and isinstance(delegate, ChatDelegate):
            local = pos - self.visualRect(index).topLeft()
            hit = delegate.layout_for(index.row()).hit_at(local.x(), local.y())
        shape = Qt.CursorShape.PointingHandCursor if hit else Qt.CursorShape.ArrowCursor
        self.viewport().setCursor(shape)

    def resizeEvent(self, event: QResizeEvent) -> None:
        delegate = self.itemDelegate()
        if isinstance(delegate, ChatDelegate):
            delegate.set_width(self.viewport().width())
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.schedule_relayout(-1)
            self.column_changed.emit()
