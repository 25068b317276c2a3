"""The chat pane: a QListView of cards painted by a delegate from cached layouts.

Only visible rows are laid out (QTextDocument); every other row keeps its last measured
height or a cheap estimate as its item's size hint. When painting finds a row's real
height different from what the view has, one coalesced relayout runs on the next turn of
the event loop: it lays out the rows within a screen of the viewport, updates their size
hints, and keeps either the bottom (when the user is at the bottom) or the first visible
unchanged row in place, so nothing jumps.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QGuiApplication,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QAbstractItemView,
    QApplication,
    QFrame,
    QHBoxLayout,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.ai import (
    AssistantMessage,
    BashExecutionMessage,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.gui.chat._find import FindBar
from desktop_agent.gui.chat._hover import CardFocus
from desktop_agent.gui.chat._items import ChatItem
from desktop_agent.gui.chat._model import ChatModel, Row, tooltip
from desktop_agent.gui.chat._parts import SELECTED, Mark, changed_from
from desktop_agent.gui.chat._render import (
    CardLayout,
    DocCache,
    ImageCache,
    LiveTool,
    RowState,
    Theme,
    bash_text,
    build_card,
    estimate_height,
    message_text,
)
from desktop_agent.gui.chat._select import TextSelection

_Index = QModelIndex | QPersistentModelIndex

STREAM_REPAINT_MS = 40
SWITCH_ANCHOR_S = 5.0
"""A branch shown this soon after a click on ‹ or › is shown at the clicked card."""
STREAM_HEIGHT_STEP = 96  # px; a streaming row's height is rounded up to this


class _InlineEditor(QFrame):
    """Edit-and-resend editor: a text box with Send and Cancel."""

    submitted = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QWidget | None, send_key: str = "enter") -> None:
        super().__init__(parent)
        self.setObjectName("chatEditEditor")
        self.send_key = send_key
        """As the message box's: "enter" (Enter sends, Shift+Enter a new line) or
        "ctrl+enter" (FIRST_HOUR.md m18: the edit box needed Ctrl+Enter, the composer not)."""
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("chatEditText")
        send = QPushButton(self.tr("Send"), self)
        send.setObjectName("chatEditSend")
        send.setToolTip(
            self.tr("Send as a new version of this message (Enter; Shift+Enter for a new line)")
            if send_key == "enter"
            else self.tr("Send as a new version of this message (Ctrl+Enter)")
        )
        cancel = QPushButton(self.tr("Cancel"), self)
        cancel.setToolTip(self.tr("Keep the message as it is (Esc)"))
        cancel.setObjectName("chatEditCancel")
        send.clicked.connect(self._submit)
        cancel.clicked.connect(self.cancelled)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(cancel)
        buttons.addWidget(send)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(4)
        box.addWidget(self.text, 1)
        box.addLayout(buttons)
        self.setFocusProxy(self.text)
        self.text.installEventFilter(self)

    def _submit(self) -> None:
        self.submitted.emit(self.text.toPlainText())

    def eventFilter(self, obj: Any, event: QEvent) -> bool:
        if obj is self.text and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            mods = event.modifiers()
            ctrl = mods & Qt.KeyboardModifier.ControlModifier
            plain = not mods & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.AltModifier)
            sends = ctrl or (self.send_key == "enter" and plain)
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and sends:
                self._submit()
                return True
            if event.key() == Qt.Key.Key_Escape:
                self.cancelled.emit()
                return True
        return super().eventFilter(obj, event)


class ChatDelegate(QStyledItemDelegate):
    """Paints cards from cached layouts and turns clicks on their buttons into actions."""

    action = Signal(int, str, object)  # row, action, argument
    edit_submitted = Signal(object, str)  # Row, new text

    def __init__(self, view: ChatView, model: ChatModel) -> None:
        super().__init__(view)
        self._view = view
        self._model = model
        self.send_key = "enter"
        """The send key of the inline edit box (the message box's setting)."""
        self._layouts: OrderedDict[tuple[Any, ...], CardLayout] = OrderedDict()
        self.docs = DocCache()
        self.docs.colorizer.setParent(self)
        self.docs.colorizer.recolored.connect(view.viewport().update)
        self.images = ImageCache()
        self._theme: Theme | None = None
        self._width = 600
        self._resync = False
        model.height_fn = self.initial_size
        self.layouts_built = 0
        self.painted: dict[int, tuple[int, CardLayout]] = {}
        """Row uid -> (row version, layout) of what was last painted (for tests: what
        is on screen, not only what the model holds)."""

    # -- caches

    def theme(self) -> Theme:
        view = self._view
        key = (view.palette().cacheKey(), view.font().key())
        if self._theme is None or self._theme.key != key:
            font_changed = self._theme is None or self._theme.key[1] != key[1]
            self._theme = Theme.from_palette(view.palette(), view.font())
            self._layouts.clear()  # cards hold colours; their documents are kept
            if font_changed:  # a palette switch keeps every size (painting corrects any)
                self.docs.clear()
                for row in self._model.rows():
                    row.measured = row.estimate = None
                self._resync = True
                self._view.schedule_relayout(-1)
        return self._theme

    def width(self) -> int:
        return self._width

    def set_width(self, width: int) -> None:
        width = max(120, width)
        if width != self._width:
            self._width = width
            self._resync = True

    def layout_for(self, i: int) -> CardLayout:
        """The card of row ``i`` at the current width (built if not cached)."""
        row = self._model.row_at(i)
        theme = self.theme()
        width = self._width
        is_last = i == self._model.last_row()
        key = (row.uid, row.version, width, row.expanded, is_last, row.editing, theme.key)
        layout = self._layouts.get(key)
        if layout is not None:
            self._layouts.move_to_end(key)
            return layout
        state = RowState(row.item, row.expanded, row.streaming, is_last, row.editing)
        layout = build_card(state, width, theme, self.docs, self.images, self._model.live.get)
        self.layouts_built += 1
        self._layouts[key] = layout
        while len(self._layouts) > 400:
            self._layouts.popitem(last=False)
        row.measured = (row.version, width, layout.height)
        return layout

    @staticmethod
    def hint_height(row: Row, height: int) -> int:
        """The height the view gets: a streaming row grows in steps, not line by line."""
        if row.streaming:
            return -(-height // STREAM_HEIGHT_STEP) * STREAM_HEIGHT_STEP
        return height

    def row_height(self, row: Row) -> int:
        width = self._width
        m = row.measured
        if m is not None and m[1] == width:
            return m[2]  # possibly of an older version; painting corrects it
        e = row.estimate
        if e is None or e[0] != row.version or e[1] != width:
            theme = self._theme if self._theme is not None else self.theme()
            h = estimate_height(row.item, width, theme, row.expanded)
            row.estimate = e = (row.version, width, h)
        return e[2]

    def height_of(self, i: int) -> int:
        return self.row_height(self._model.row_at(i))

    def measure(self, i: int) -> bool:
        """Lay out row ``i`` now; return whether the height the view has for it changed."""
        row = self._model.row_at(i)
        height = self.hint_height(row, self.layout_for(i).height)
        return self._model.set_height(i, self._width, height)

    def initial_size(self, row: Row) -> QSize:
        return QSize(self._width, self.hint_height(row, self.row_height(row)))

    def resync_heights(self) -> bool:
        """After a width or theme change: give the view every row's (estimated) height."""
        if not self._resync:
            return False
        self._resync = False
        model = self._model
        blocked = model.blockSignals(True)  # one relayout follows; no per-row signals
        try:
            for i, row in enumerate(model.rows()):
                model.set_height(i, self._width, self.hint_height(row, self.row_height(row)))
        finally:
            model.blockSignals(blocked)
        return True

    # -- QStyledItemDelegate (no sizeHint override: the view reads the items' size hints)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        i = index.row()
        layout = self.layout_for(i)
        rect = option.rect
        painter.save()
        dirty = self._view.paint_rect  # documents draw only the lines in it
        if dirty is not None:
            painter.setClipRect(dirty.intersected(rect))
        painter.translate(rect.topLeft())
        self._view.cards.paint(painter, layout, self.theme(), i)  # hover actions, focus
        painter.restore()
        row = self._model.row_at(i)
        self.painted[row.uid] = (row.version, layout)
        if len(self.painted) > 512:
            self.painted.pop(next(iter(self.painted)))
        if self.hint_height(self._model.row_at(i), layout.height) != rect.height():
            self._view.schedule_relayout(i)

    def editorEvent(
        self,
        event: QEvent,
        model: QAbstractItemModel,
        option: QStyleOptionViewItem,
        index: _Index,
    ) -> bool:
        kind = event.type()
        if kind not in (
            QEvent.Type.MouseButtonPress,
            QEvent.Type.MouseButtonRelease,
            QEvent.Type.MouseButtonDblClick,
            QEvent.Type.MouseMove,
        ):
            return False
        assert isinstance(event, QMouseEvent)
        rect = option.rect
        pos = event.position().toPoint() - rect.topLeft()
        hit = self.layout_for(index.row()).hit_at(pos.x(), pos.y())
        if kind == QEvent.Type.MouseMove:
            return False
        if hit is None or event.button() != Qt.MouseButton.LeftButton:
            return False
        if kind == QEvent.Type.MouseButtonRelease:
            self.action.emit(index.row(), hit.action, hit.arg)
        return True

    def helpEvent(
        self,
        event: QHelpEvent,
        view: QAbstractItemView,
        option: QStyleOptionViewItem,
        index: _Index,
    ) -> bool:
        if event.type() == QEvent.Type.ToolTip and index.isValid():
            pos = event.pos() - option.rect.topLeft()
            hit = self.layout_for(index.row()).hit_at(pos.x(), pos.y())
            tip = hit.tip if hit is not None and hit.tip else ""
            tip = tip or tooltip(self._model.row_at(index.row()).item)
            if tip:
                QToolTip.showText(event.globalPos(), tip, view)
                return True
        return super().helpEvent(event, view, option, index)

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: _Index) -> QWidget:
        editor = _InlineEditor(parent, self.send_key)
        row = self._model.row_at(index.row())

        def submit(text: str) -> None:
            self.edit_submitted.emit(row, text)
            self.closeEditor.emit(editor, QAbstractItemDelegate.EndEditHint.NoHint)

        editor.submitted.connect(submit)
        editor.cancelled.connect(
            lambda: self.closeEditor.emit(editor, QAbstractItemDelegate.EndEditHint.NoHint)
        )
        return editor

    def setEditorData(self, editor: QWidget, index: _Index) -> None:
        if isinstance(editor, _InlineEditor):
            editor.text.setPlainText(message_text(self._model.row_at(index.row()).item.message))
            editor.text.selectAll()

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: _Index) -> None:
        """Nothing: the new text goes out through ``edit_submitted``, not into the model."""

    def updateEditorGeometry(
        self, editor: QWidget, option: QStyleOptionViewItem, index: _Index
    ) -> None:
        layout = self.layout_for(index.row())
        if layout.editor_rect is not None:
            rect = option.rect
            editor.setGeometry(layout.editor_rect.translated(rect.topLeft()))

    def destroyEditor(self, editor: QWidget, index: _Index) -> None:
        super().destroyEditor(editor, index)
        if index.isValid() and index.row() < self._model.rowCount():
            row = self._model.row_at(index.row())
            if row.editing:
                row.editing = False
                self._model.changed(index.row())


class ChatView(QListView):
    """The list of cards; follows the bottom while the user is there. ``near_top`` is
    emitted when the top of the list comes within a screen of the viewport (the pane
    then loads older messages)."""

    near_top = Signal()

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


class ChatPane(QWidget):
    """The messages of the current branch as cards (see module docstring)."""

    sibling_requested = Signal(str, int)
    edit_resend_requested = Signal(str, str)
    retry_requested = Signal()
    regenerate_requested = Signal(str)
    """A new version of the answer of this entry id (a reply's Regenerate button)."""
    copy_requested = Signal(str)
    quote_requested = Signal(str)
    """Quote this text in the reply being written (the right-click menu)."""
    older_wanted = Signal()
    """The user scrolled near the top and older messages exist: `prepend_items` them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatPane")
        self.model = ChatModel(self)
        self.view = ChatView(self)
        self.delegate = ChatDelegate(self.view, self.model)
        self.delegate.set_width(self.view.viewport().width())
        self.view.setItemDelegate(self.delegate)
        self.view.setModel(self.model)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.view)
        self.delegate.action.connect(self._on_action)
        self.selection = TextSelection(
            self.view,
            self.delegate.layout_for,
            lambda i: self.model.row_at(i).uid,
            self._row_of_uid,
            lambda i: (
                self._copy_text(self.model.row_at(i).item) if 0 <= i < self.model.rowCount() else ""
            ),
            QGuiApplication.clipboard().setText,
        )
        self.finder = FindBar(self, self.view, self.delegate.layout_for, self.model.rowCount)
        box.insertWidget(0, self.finder)
        self.view.cards.marks_of = self._marks
        self.selection.copied.connect(self.copy_requested)
        self.selection.quote_requested.connect(self.quote_requested)
        self.delegate.edit_submitted.connect(self._on_edit_submitted)
        self.view.near_top.connect(self._maybe_older)
        self.has_more = False
        """Older messages of the branch exist above the first row."""
        self._asked_older = False  # older_wanted was emitted; prepend_items answers it
        self._switch_anchor: tuple[str | None, int, float] | None = None
        """(entry before the card, its top) of a click on ‹ or ›, for the next branch."""
        self._fill_timer = QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(0)
        self._fill_timer.timeout.connect(self._fill)
        self._stream: Row | None = None
        self._pending: AssistantMessage | None = None
        self._dirty: set[int] = set()  # uids of rows to repaint on the next flush
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(STREAM_REPAINT_MS)
        self._flush_timer.timeout.connect(self._flush)
        self.last_set_items_ms = 0.0
        self.stream_repaints = 0  # partial repaints of the streaming card (tests)

    # -- whole branch

    def set_items(
        self, items: list[ChatItem], *, has_more: bool = False, project: str | None = None
    ) -> None:
        """Replace everything (a branch switch) and show the bottom. ``has_more``: the
        branch goes on above ``items`` (the end of a long branch is shown first; older
        pages come through `older_wanted` / `prepend_items` as the user scrolls up).
        ``project``: the session's folder, which an empty chat names."""
        start = time.perf_counter()
        self.view.empty_text = (
            self.tr(
                "A new session in {folder}\n\nAsk the agent below: Enter sends, Shift+Enter"
                " starts a new line, / lists the commands."
            ).format(folder=project)
            if project
            else ""
        )
        self._flush_timer.stop()
        self._stream = None
        self._pending = None
        self._dirty.clear()
        self.delegate.painted.clear()
        self.selection.clear()
        self.model.reset(items)
        self.finder.refresh()
        self.has_more = has_more
        self._asked_older = False
        anchor, self._switch_anchor = self._switch_anchor, None
        row = self._anchor_row(anchor, items) if anchor is not None else -1
        self.view.stick_to_bottom = row < 0
        self.view.relayout_now()
        if row >= 0 and anchor is not None:
            self.view.show_row_at(row, anchor[1])
        self._fill_timer.start()
        self.last_set_items_ms = (time.perf_counter() - start) * 1000

    @staticmethod
    def _anchor_row(anchor: tuple[str | None, int, float], items: list[ChatItem]) -> int:
        """The row of the version a click on ‹ or › asked for (the one after the message
        before it), if that click was just now; else -1 (the branch's end is shown)."""
        before, _top, when = anchor
        if time.monotonic() - when > SWITCH_ANCHOR_S:
            return -1
        if before is None:
            return 0 if items else -1
        for i, item in enumerate(items):
            if item.entry_id == before:
                return i + 1 if i + 1 < len(items) else -1
        return -1

    def prepend_items(self, items: list[ChatItem], *, has_more: bool) -> None:
        """Older messages above the first row; what the user looks at stays in place."""
        self._asked_older = False
        self.has_more = has_more
        view = self.view
        bar = view.verticalScrollBar()
        stick = view.stick_to_bottom
        before = bar.value()
        added = self.model.prepend(items)
        if added:
            height = sum(self.model.row_at(i).hint[1] for i in range(added))
            view.scheduleDelayedItemsLayout()
            view.executeDelayedItemsLayout()
            if stick:
                bar.setValue(bar.maximum())
            else:
                view.stick_to_bottom = False
                bar.setValue(before + height)
            view.schedule_relayout(-1)
        self._fill_timer.start()

    def _maybe_older(self) -> None:
        if self.has_more and not self._asked_older:
            self._asked_older = True
            self.older_wanted.emit()

    def _fill(self) -> None:
        """Rows that do not fill the viewport (or a top within a screen): load more."""
        bar = self.view.verticalScrollBar()
        if bar.value() < self.view.viewport().height():
            self._maybe_older()

    def append_item(self, item: ChatItem) -> None:
        """Append a finished message; tool results join their assistant message's card."""
        self._flush()
        self.model.append(item)

    def item_count(self) -> int:
        return self.model.rowCount()

    def visible_widget_count(self) -> int:
        """Widgets that exist for rows (inline editors); cards themselves are painted."""
        return sum(1 for c in self.view.viewport().children() if isinstance(c, QWidget))

    # -- streaming

    def begin_stream(self, partial: AssistantMessage) -> None:
        self._flush()
        if self._stream is not None:
            self._stream.streaming = False
        self.model.append(ChatItem(None, partial), streaming=True)
        self._stream = self.model.row_at(self.model.last_row())

    def update_stream(self, partial: AssistantMessage) -> None:
        """A new snapshot; painted at most every STREAM_REPAINT_MS milliseconds."""
        if self._stream is None:
            self.begin_stream(partial)
            return
        self._pending = partial
        self._dirty.add(self._stream.uid)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def end_stream(self, final: AssistantMessage, entry_id: str | None) -> None:
        row = self._stream
        self._pending = None
        self._flush()
        if row is None:
            self.model.append(ChatItem(entry_id, final))
            return
        self._stream = None
        row.item.message = final
        row.item.entry_id = entry_id
        row.streaming = False
        i = self._index_of(row)
        self.model.changed(i)
        # The finished card is usually taller or shorter than the streaming one: lay it
        # out now and repaint, so its end is drawn when the run ends (not at the next
        # mouse move over it).
        self.view.schedule_relayout(i)
        self.view.relayout_now()

    def saved(self, entry_id: str, role: str | None, index: int, count: int) -> None:
        """A message of this sitting got its entry: its card gets Edit and ``‹ n/m ›``."""
        rows = self.model.rows()
        found = -1
        for i in range(len(rows) - 1, -1, -1):
            item = rows[i].item
            if item.entry_id == entry_id:
                found = i
                break
            if item.entry_id is None and getattr(item.message, "role", None) == role:
                found = i
                break
        if found < 0:
            return
        item = rows[found].item
        item.entry_id = entry_id
        item.sibling_index, item.sibling_count = index, count
        self.model.changed(found)

    def follow_bottom(self) -> None:
        """Scroll to the end and stay there while a reply streams (on send)."""
        self.view.stick_to_bottom = True
        self.view.scrollToBottom()

    # -- tools

    def tool_waiting(self, call_id: str, waiting: bool) -> None:
        """The tool call waits for the user's approval (or no longer does)."""
        live = self.model.live.get(call_id)
        if live is None:
            return
        live.waiting = waiting
        self.model.changed(self.model.row_of_tool(call_id))

    def tool_started(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self._flush()
        self.model.live[call_id] = LiveTool(name, dict(args))
        self.model.changed(self.model.row_of_tool(call_id))

    def tool_output(self, call_id: str, text: str) -> None:
        live = self.model.live.get(call_id)
        if live is None:
            return
        live.output = text
        i = self.model.row_of_tool(call_id)
        if i >= 0:
            self._dirty.add(self.model.row_at(i).uid)
            if not self._flush_timer.isActive():
                self._flush_timer.start()

    def tool_finished(self, call_id: str, result: ToolResultMessage) -> None:
        self._flush()
        live = self.model.live.get(call_id)
        if live is not None:
            live.result = result
        i = self.model.row_of_tool(call_id)
        if i >= 0:
            self.model.row_at(i).item.tool_results[call_id] = result
            self.model.changed(i)
        else:
            self.model.append(ChatItem(None, result))

    # -- internals

    def _flush(self) -> None:
        self._flush_timer.stop()
        if self._pending is not None and self._stream is not None:
            self._stream.item.message = self._pending
            self._pending = None
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        rows = self.model.rows()
        # Dirty rows are the streaming row or rows with running tools: near the end.
        for i in range(len(rows) - 1, -1, -1):
            if rows[i].uid in dirty:
                if rows[i] is self._stream:
                    self._repaint_stream(i)
                else:
                    self.model.changed(i)
                dirty.discard(rows[i].uid)
                if not dirty:
                    break

    def _repaint_stream(self, i: int) -> None:
        """The streaming row has a new snapshot: repaint only what changed in its card
        (its end, as the reply grows), not the whole card again."""
        row = self.model.row_at(i)
        shown = self.delegate.painted.get(row.uid)
        if shown is None or shown[0] != row.version or not self.model.touch_quietly(i):
            self.model.changed(i)  # its last version is not painted yet, or its summary changed
            return
        view = self.view
        rect = view.visualRect(self.model.index(i, 0))
        if not rect.intersects(view.viewport().rect()):
            return  # scrolled away: painted when it comes back into view
        y = changed_from(shown[1], self.delegate.layout_for(i))
        if y is None:
            self.delegate.painted[row.uid] = (row.version, shown[1])
            return
        self.stream_repaints += 1
        view.viewport().update(rect.adjusted(0, y, 0, 0))

    def _marks(self, row: int) -> dict[int, list[Mark]]:
        """Text marked in card ``row``: what is found (Ctrl+F), then the selection."""
        marks = self.finder.marks_for(row)
        for part, (start, end) in self.selection.ranges_for(row).items():
            marks.setdefault(part, []).append((start, end, SELECTED))
        return marks

    @staticmethod
    def _copy_text(item: ChatItem) -> str:
        """A message as copied: its Markdown (a command with its output)."""
        if isinstance(item.message, BashExecutionMessage):
            return bash_text(item.message)
        return message_text(item.message)

    def _row_of_uid(self, uid: int) -> int:
        rows = self.model.rows()
        return next((i for i in range(len(rows) - 1, -1, -1) if rows[i].uid == uid), -1)

    def _index_of(self, row: Row) -> int:
        rows = self.model.rows()
        for i in range(len(rows) - 1, -1, -1):
            if rows[i] is row:
                return i
        return -1

    def _on_action(self, i: int, action: str, arg: object) -> None:
        if not 0 <= i < self.model.rowCount():
            return
        row = self.model.row_at(i)
        item = row.item
        if action == "copy":
            text = arg if isinstance(arg, str) else self._copy_text(item)
            QGuiApplication.clipboard().setText(text)
            self.copy_requested.emit(text)
        elif action == "sibling" and isinstance(arg, int) and item.entry_id is not None:
            target = item.sibling_index + arg
            if 0 <= target < item.sibling_count:
                # The other version comes as a new branch (`set_items`): it is shown
                # where this card is, not at the branch's end, so the arrows stay under
                # the pointer (FIRST_HOUR.md m12).
                before = self.model.row_at(i - 1).item.entry_id if i > 0 else None
                top = self.view.visualRect(self.model.index(i, 0)).top()
                self._switch_anchor = (before, top, time.monotonic())
                self.sibling_requested.emit(item.entry_id, arg)
        elif action == "retry":
            self.retry_requested.emit()
        elif action == "regenerate" and item.entry_id is not None:
            self.regenerate_requested.emit(item.entry_id)
        elif action == "toggle" and isinstance(arg, str):
            self.model.toggle(i, arg)
            self.view.schedule_relayout(i, keep=True)
        elif action == "edit" and isinstance(item.message, UserMessage):
            self.start_edit(i)

    def start_edit(self, i: int) -> None:
        """Open the inline edit-and-resend editor on user row ``i``."""
        row = self.model.row_at(i)
        row.editing = True
        self.model.changed(i)
        self.view.schedule_relayout(i, keep=True)
        self.view.relayout_now()
        index = self.model.index(i, 0)
        # the edit box in full view (m17: it opened above the top, under the notices)
        box = self.delegate.layout_for(i).editor_rect
        if box is not None:
            top = self.view.visualRect(index).top() + box.top() - 8
            shown = self.view.viewport().rect()
            bar = self.view.verticalScrollBar()
            if top < 0 or top + box.height() + 16 > shown.height():
                self.view.stick_to_bottom = False
                bar.setValue(bar.value() + top)
        self.view.edit(index)

    def _on_edit_submitted(self, row: object, text: str) -> None:
        if isinstance(row, Row) and row.item.entry_id is not None and text.strip():
            self.edit_resend_requested.emit(row.item.entry_id, text)
