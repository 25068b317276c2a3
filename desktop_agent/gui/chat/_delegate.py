"""The chat's delegate: paints cards from cached layouts (`build_card`), keeps their
heights, turns clicks on their buttons into `CardAction`s, and hosts the inline edit box
of a prompt (edit and send again)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
)
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QAbstractItemView,
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

from desktop_agent.gui.chat._builder import RowState
from desktop_agent.gui.chat._cards import build_card, estimate_height
from desktop_agent.gui.chat._hover import CardFocus
from desktop_agent.gui.chat._model import ChatModel, Row, tooltip
from desktop_agent.gui.chat._parts import (
    CardLayout,
    DocCache,
    ImageCache,
    Theme,
)
from desktop_agent.utils.text import message_text

_Index = QModelIndex | QPersistentModelIndex

STREAM_HEIGHT_STEP = 96  # px; a streaming row's height is rounded up to this


class CardListView(QListView):
    """What the delegate needs of its view (`ChatView` is one): the part being painted,
    the hover actions' painter and a coalesced relayout."""

    paint_rect: QRect | None = None
    cards: CardFocus

    def schedule_relayout(self, row: int, *, keep: bool = False) -> None:
        raise NotImplementedError


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

    action = Signal(int, object, object)  # row, CardAction, argument
    edit_submitted = Signal(object, str)  # Row, new text

    def __init__(self, view: CardListView, model: ChatModel) -> None:
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
