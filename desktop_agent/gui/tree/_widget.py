"""`BranchTree`: the session tree view with a user-messages filter and a context menu."""

from __future__ import annotations

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QColor, QFont, QFontMetrics, QKeyEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QHBoxLayout,
    QInputDialog,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui.tree._model import SessionTreeModel, TreeRole
from desktop_agent.session import TreeRow, order_rows

Index = QModelIndex | QPersistentModelIndex

_TAG_PAD = 6  # horizontal padding inside a label tag
_TAG_GAP = 8  # gap between the text and the tag
_TAG_MAX = 160  # widest tag in pixels


def _tag_font() -> QFont:
    font = QApplication.font()
    font.setPointSizeF(max(font.pointSizeF() * 0.9, 6.0))
    return font


class LabelTagDelegate(QStyledItemDelegate):
    """Draws the item as usual, then its label (if any) as a rounded tag after the text."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        label = index.data(TreeRole.LABEL)
        if not label:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget else QApplication.style()  # type: ignore[truthy-bool]
        fm = opt.fontMetrics
        tag_font = _tag_font()
        tag_fm = QFontMetrics(tag_font, widget)
        tag_w = min(tag_fm.horizontalAdvance(label) + 2 * _TAG_PAD + 4, _TAG_MAX)
        text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
        room = max(text_rect.width() - tag_w - _TAG_GAP, 24)
        text = str(opt.text)
        opt.text = fm.elidedText(text, Qt.TextElideMode.ElideRight, room)
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        x = text_rect.left() + fm.horizontalAdvance(opt.text) + _TAG_GAP
        h = tag_fm.height() + 2
        rect = QRect(x, text_rect.center().y() - h // 2 + 1, tag_w, h)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        accent = QColor(opt.palette.color(QPalette.ColorRole.Accent))
        fill = QColor(accent)
        fill.setAlpha(40)
        painter.setPen(accent)
        painter.setBrush(fill)
        painter.drawRoundedRect(rect.adjusted(0, 0, -1, -1), h / 2, h / 2)
        painter.setFont(tag_font)
        painter.setPen(opt.palette.color(QPalette.ColorRole.Text))
        painter.drawText(
            rect.adjusted(_TAG_PAD, 0, -_TAG_PAD, 0),
            Qt.AlignmentFlag.AlignCenter,
            tag_fm.elidedText(label, Qt.TextElideMode.ElideRight, tag_w - 2 * _TAG_PAD + 2),
        )
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        size = super().sizeHint(option, index)
        label = index.data(TreeRole.LABEL)
        if label:
            fm = QFontMetrics(_tag_font())
            extra = min(fm.horizontalAdvance(label) + 2 * _TAG_PAD + 4, _TAG_MAX) + _TAG_GAP
            size.setWidth(size.width() + extra)
        return size


class BranchTree(QWidget):
    """The whole session tree: current path in bold accent, labels, foldable branches.

    Clicking a node (or Enter on it) emits `node_activated` with its entry id, except for
    the current leaf (already there). The context menu offers "Go here", "Go here and
    summarize the branch I am leaving", and setting or removing a label; the label text
    comes from `ask_label`, which tests replace.
    """

    node_activated = Signal(str)
    label_requested = Signal(str, str)
    summarize_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("branchTree")
        self._model = SessionTreeModel(self)
        self._collapsed: set[str] = set()  # ids the user folded
        self._restoring = False
        self._path: list[str] = []

        self.user_only_box = QCheckBox("User messages only")
        self.user_only_box.setToolTip("Show only your messages")
        self.user_only_box.setObjectName("branchTreeUserOnly")
        self.user_only_box.toggled.connect(self._on_user_only)
        self.expand_button = QToolButton()
        self.expand_button.setObjectName("branchTreeExpandAll")
        self.expand_button.setText("⊞")
        self.expand_button.setToolTip("Expand all")
        self.expand_button.setAutoRaise(True)
        self.expand_button.clicked.connect(self.expand_all)
        self.collapse_button = QToolButton()
        self.collapse_button.setObjectName("branchTreeCollapseAll")
        self.collapse_button.setText("⊟")
        self.collapse_button.setToolTip("Collapse all")
        self.collapse_button.setAutoRaise(True)
        self.collapse_button.clicked.connect(self.collapse_all)

        self.view = QTreeView()
        self.view.setObjectName("branchTreeView")
        self.view.setModel(self._model)
        self.view.setItemDelegate(LabelTagDelegate(self.view))
        self.view.setHeaderHidden(True)
        self.view.setUniformRowHeights(True)
        self.view.setAnimated(False)
        self.view.setIndentation(14)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._on_context_menu)
        self.view.clicked.connect(self._on_clicked)
        self.view.expanded.connect(self._on_expanded)
        self.view.collapsed.connect(self._on_collapsed)
        self.view.installEventFilter(self)

        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self.user_only_box)
        bar.addStretch(1)
        bar.addWidget(self.expand_button)
        bar.addWidget(self.collapse_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.view)

    # ------------------------------------------------------------------ public API

    def model(self) -> SessionTreeModel:
        return self._model

    def set_rows(self, rows: list[TreeRow], current_path: list[str]) -> None:
        """Show new rows (one model reset); folded nodes that still exist stay folded."""
        self._model.set_rows(rows)
        existing = {r.id for r in rows}
        self._collapsed &= existing
        self._path = list(current_path)
        self._model.set_current_path(current_path)
        self._restore_expansion()
        self._reveal_leaf()

    def append_rows(self, rows: list[TreeRow], current_path: list[str]) -> None:
        """Add the rows of new entries (no reset when they fit at the end), then mark the
        path; updated rows of known entries (labels) are redrawn in place."""
        model = self._model
        new = [r for r in rows if not model.has(r.id)]
        for row in rows:
            if model.has(row.id):
                model.update_row(row)
        if new and not model.append_rows(new):
            self.set_rows(order_rows([*model.rows(), *new]), current_path)
            return
        self._restoring = True
        try:
            for row in new:
                parent = model.display_parent_of(row.id)
                if parent.isValid() and str(parent.data(TreeRole.ID)) not in self._collapsed:
                    self.view.setExpanded(parent, True)
        finally:
            self._restoring = False
        self.set_current_path(current_path)

    def set_current_path(self, ids: list[str]) -> None:
        """Highlight the root→leaf path (bold, accent) and scroll the leaf into view."""
        self._path = list(ids)
        self._model.set_current_path(ids)
        self._reveal_leaf()

    def set_user_only(self, on: bool) -> None:
        self.user_only_box.setChecked(on)

    def expand_all(self) -> None:
        self._collapsed.clear()
        self._restoring = True
        try:
            self.view.expandAll()
        finally:
            self._restoring = False

    def collapse_all(self) -> None:
        self._restoring = True
        try:
            self.view.collapseAll()
        finally:
            self._restoring = False
        self._collapsed = {r.id for r in self._model.rows()}

    @staticmethod
    def ask_label(parent: QWidget, current: str | None) -> str | None:
        """Ask for a label ("" removes it); None when cancelled. Tests replace this."""
        text, ok = QInputDialog.getText(
            parent, "Label", "Label for this entry (empty removes it):", text=current or ""
        )
        return text.strip() if ok else None

    def context_menu_for(self, entry_id: str) -> QMenu | None:
        """The context menu of a shown node (built, not shown), or None."""
        index = self._model.index_for_id(entry_id)
        return self._build_menu(index) if index.isValid() else None

    # ------------------------------------------------------------------ internals

    def _reveal_leaf(self) -> None:
        index = self._model.nearest_shown(self._path)
        if not index.isValid():
            self.view.clearSelection()
            return
        parent = index.parent()
        self._restoring = True
        try:
            while parent.isValid():
                if not self.view.isExpanded(parent):
                    self.view.expand(parent)
                self._collapsed.discard(str(parent.data(TreeRole.ID)))
                parent = parent.parent()
        finally:
            self._restoring = False
        self.view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        self.view.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)

    def _restore_expansion(self) -> None:
        """Open every node with children except the ones the user folded.

        Opens just the parents the model names instead of ``expandAll()``, which asks the
        (Python) model about every one of thousands of rows on the UI thread.
        """
        self._restoring = True
        try:
            collapsed = self._collapsed
            for index in self._model.parent_indexes():
                if str(index.data(TreeRole.ID)) not in collapsed:
                    self.view.setExpanded(index, True)
        finally:
            self._restoring = False

    def _on_user_only(self, on: bool) -> None:
        self._model.set_user_only(on)
        self._restore_expansion()
        self._reveal_leaf()

    def _on_expanded(self, index: QModelIndex) -> None:
        if not self._restoring:
            self._collapsed.discard(str(index.data(TreeRole.ID)))

    def _on_collapsed(self, index: QModelIndex) -> None:
        if not self._restoring:
            self._collapsed.add(str(index.data(TreeRole.ID)))

    def _activate(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        entry_id = str(index.data(TreeRole.ID))
        if entry_id != self._model.current_leaf():
            self.node_activated.emit(entry_id)

    def _on_clicked(self, index: QModelIndex) -> None:
        self._activate(index)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.view
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and self.view.state() != QAbstractItemView.State.EditingState
        ):
            self._activate(self.view.currentIndex())
            return True
        return super().eventFilter(watched, event)

    def _build_menu(self, index: Index) -> QMenu:
        entry_id = str(index.data(TreeRole.ID))
        label = index.data(TreeRole.LABEL)
        is_leaf = entry_id == self._model.current_leaf()
        menu = QMenu(self)
        go: QAction = menu.addAction("Go here")
        go.setObjectName("goHere")
        go.setEnabled(not is_leaf)
        go.triggered.connect(lambda: self.node_activated.emit(entry_id))
        summarize = menu.addAction("Go here and summarize the branch I am leaving")
        summarize.setObjectName("goHereAndSummarize")
        summarize.setEnabled(not is_leaf)
        summarize.triggered.connect(lambda: self.summarize_requested.emit(entry_id))
        menu.addSeparator()
        set_label = menu.addAction("Edit label…" if label else "Set label…")
        set_label.setObjectName("setLabel")
        set_label.triggered.connect(lambda: self._ask_and_label(entry_id, label))
        if label:
            remove = menu.addAction("Remove label")
            remove.setObjectName("removeLabel")
            remove.triggered.connect(lambda: self.label_requested.emit(entry_id, ""))
        return menu

    def _ask_and_label(self, entry_id: str, current: str | None) -> None:
        text = type(self).ask_label(self, current)
        if text is None or text == (current or ""):
            return
        self.label_requested.emit(entry_id, text)

    def _on_context_menu(self, pos: QPoint) -> None:
        index = self.view.indexAt(pos)
        if not index.isValid():
            return
        menu = self._build_menu(index)
        menu.exec(self.view.viewport().mapToGlobal(pos))
        menu.deleteLater()
