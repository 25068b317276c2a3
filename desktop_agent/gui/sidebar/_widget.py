"""`SessionSidebar`: search, new session, sessions grouped by workspace, and the trash."""

from __future__ import annotations

from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QKeyEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTextBrowser,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._icons import icon, palette_of
from desktop_agent.gui._titles import fit_title
from desktop_agent.gui._tr import QT_TRANSLATE_NOOP
from desktop_agent.gui.sidebar._model import (
    PI_SOURCE,
    Clock,
    SessionListModel,
    SidebarRole,
    local_now,
    muted_text,
)
from desktop_agent.workbench import SidebarRow

Index = QModelIndex | QPersistentModelIndex

SEARCH_DEBOUNCE_MS = 150
TIME_REFRESH_MS = 60_000
RUNNING_REFRESH_MS = 1_000
"""A running session's row counts its seconds."""

EXPORT_FORMATS = (
    ("markdown", QT_TRANSLATE_NOOP("SessionSidebar", "Markdown…")),
    ("html", QT_TRANSLATE_NOOP("SessionSidebar", "HTML…")),
    ("jsonl", QT_TRANSLATE_NOOP("SessionSidebar", "Copy of the session file (JSONL)…")),
)


class _PaddedRows(QStyledItemDelegate):
    """Rows 6 px taller than the text: easier to read and to hit. A session a search
    found by its text has a second line: the words around the hit (m6), muted."""

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        size = super().sizeHint(option, index)
        extra = option.fontMetrics.height() + 2 if index.data(SidebarRole.SNIPPET) else 0
        return QSize(size.width(), size.height() + 6 + extra)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        snippet = index.data(SidebarRole.SNIPPET)
        if not snippet:
            super().paint(painter, option, index)
            return
        line = option.fontMetrics.height() + 2
        super().paint(painter, option, QModelIndex())  # the row's background, selection
        title = QStyleOptionViewItem(option)
        self.initStyleOption(title, index)
        title.rect = option.rect.adjusted(0, 0, 0, -line)
        title.state &= ~QStyle.StateFlag.State_HasFocus
        style = title.widget.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, title, painter, title.widget)
        text = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, title, title.widget)
        below = QRect(text.left(), option.rect.bottom() - line - 2, text.width(), line)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        words = " ".join(str(snippet).split())
        painter.save()
        painter.setPen(
            option.palette.color(QPalette.ColorRole.HighlightedText) if selected else muted_text()
        )
        painter.drawText(
            below,
            int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
            option.fontMetrics.elidedText(words, Qt.TextElideMode.ElideRight, below.width()),
        )
        painter.restore()


def _make_view(name: str, model: SessionListModel) -> QTreeView:
    view = QTreeView()
    view.setObjectName(name)
    view.setModel(model)
    view.setHeaderHidden(True)
    view.setUniformRowHeights(True)
    view.setAnimated(False)
    view.setIndentation(12)
    view.setAllColumnsShowFocus(True)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setTextElideMode(Qt.TextElideMode.ElideRight)
    view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    # Row padding from a delegate, not a style sheet: a style sheet freezes the palette the
    # view was polished with, and the list stayed light after a switch to the dark theme.
    view.setItemDelegate(_PaddedRows(view))
    header = view.header()
    header.setStretchLastSection(False)
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    header.setSectionResizeMode(1, QHeaderView.ResizeMode.Fixed)
    fm = view.fontMetrics()
    ago = QCoreApplication.translate("SessionListModel", "{n} min ago").format(n=59)
    yesterday = QCoreApplication.translate("SessionListModel", "yesterday")
    widest = max(fm.horizontalAdvance(s) for s in ("2026-12-31", ago, yesterday))
    header.resizeSection(1, widest + 14)
    return view


class SessionSidebar(QWidget):
    """All sessions, grouped by workspace, newest activity first; opening never reorders.

    Typing in the search box filters by title at once and, after a short pause, emits
    `search_changed`. With ``answers_searches`` (the window: its index search answers each
    one), the next `set_sessions` after a search is taken as its answer and shown as given
    (a full-text search may match sessions whose title does not); without, the title
    filter always applies.
    """

    session_activated = Signal(str)
    new_session_requested = Signal()
    search_changed = Signal(str)
    rename_requested = Signal(str, str)
    fork_requested = Signal(str)
    delete_requested = Signal(str)
    restore_requested = Signal(str)
    purge_requested = Signal(str)
    """ "Delete permanently" on a session in the trash ("" : "Empty trash", all of them)."""
    reveal_requested = Signal(str)
    open_in_window_requested = Signal(str)
    export_requested = Signal(str, str)
    backup_requested = Signal()
    copy_requested = Signal(str)
    """ "Copy into Desktop Agent" on a session of another program (the Pi CLI)."""
    preview_requested = Signal(str)
    """A session in the trash was selected: its start is wanted (`show_preview`, m11)."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        now: Clock = local_now,
        answers_searches: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("sessionSidebar")
        self._answers_searches = answers_searches
        self._model = SessionListModel(self, now=now)
        self._trash_model = SessionListModel(self, now=now)
        self._collapsed: set[str] = set()  # workspaces the user folded
        self._restoring = False
        self._searched = ""  # text of the last emitted search_changed

        self.search = QLineEdit()
        self.search.setObjectName("sessionSearch")
        self.search.setPlaceholderText(self.tr("Search sessions (Ctrl+K)"))
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._on_text_changed)
        self.search.installEventFilter(self)
        self.new_button = QPushButton()
        self.new_button.setObjectName("newSessionButton")
        self.new_button.setToolTip(self.tr("New session (Ctrl+N)"))
        self.new_button.setIcon(icon("new-session", palette_of(self)))
        self.new_button.clicked.connect(self.new_session_requested)

        self.view = _make_view("sessionList", self._model)
        self.trash_view = _make_view("trashList", self._trash_model)
        # Restored: back to the list, where the session is (it opens there; m11).
        self.restore_requested.connect(lambda _path: self.show_trash(False))
        for view in (self.view, self.trash_view):
            view.clicked.connect(self._on_clicked)
            view.customContextMenuRequested.connect(self._on_context_menu)
            view.expanded.connect(self._on_expanded)
            view.collapsed.connect(self._on_collapsed)
            view.installEventFilter(self)
        self.trash_header = QLabel(
            self.tr("Trash: select a session and press Enter (or right-click) to restore it")
        )
        self.trash_header.setObjectName("trashHeader")
        self.trash_header.setWordWrap(True)
        self.trash_header.setContentsMargins(8, 4, 8, 4)
        self.trash_header.setVisible(False)
        self.empty_label = QLabel()
        self.empty_label.setObjectName("sessionListEmpty")
        self.empty_label.setWordWrap(True)
        self.empty_label.setContentsMargins(8, 8, 8, 8)
        self.empty_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.empty_label.setVisible(False)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.trash_view)
        # The selected session of the trash, read before it is restored or deleted (m11).
        self.trash_preview = QTextBrowser()
        self.trash_preview.setObjectName("trashPreview")
        self.trash_preview.setAccessibleName(self.tr("Preview of the session in the trash"))
        self.trash_preview.setOpenLinks(False)
        self.trash_preview.setVisible(False)
        self._previewed = ""
        self.trash_view.selectionModel().currentChanged.connect(self._ask_preview)

        self.trash_toggle = QToolButton()
        self.trash_toggle.setObjectName("trashToggle")
        self.trash_toggle.setCheckable(True)
        self.trash_toggle.setAutoRaise(True)
        self.trash_toggle.setText(self.tr("Trash"))
        self.trash_toggle.setToolTip(self.tr("Show sessions moved to the trash"))
        self.trash_toggle.toggled.connect(self.show_trash)
        self.backup_button = QToolButton()
        self.backup_button.setObjectName("backupButton")
        self.backup_button.setAutoRaise(True)
        self.backup_button.setText(self.tr("Back up…"))
        self.backup_button.setToolTip(self.tr("Back up all sessions to one archive"))
        self.backup_button.clicked.connect(self.backup_requested)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(SEARCH_DEBOUNCE_MS)
        self._debounce.timeout.connect(self._emit_search)
        self._clock = QTimer(self)
        self._clock.setInterval(TIME_REFRESH_MS)
        self._clock.timeout.connect(self.refresh_times)
        self._clock.start()
        self._ticker = QTimer(self)  # only while a session's agent runs
        self._ticker.setInterval(RUNNING_REFRESH_MS)
        self._ticker.timeout.connect(self._model.refresh_running)

        top = QHBoxLayout()
        top.setContentsMargins(6, 6, 6, 4)
        top.setSpacing(6)
        top.addWidget(self.search, 1)
        top.addWidget(self.new_button)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(4, 2, 4, 4)
        bottom.addWidget(self.trash_toggle)
        bottom.addStretch(1)
        bottom.addWidget(self.backup_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.trash_header)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.trash_preview, 1)
        layout.addLayout(bottom)

    # ------------------------------------------------------------------ public API

    def model(self) -> SessionListModel:
        return self._model

    def trash_model(self) -> SessionListModel:
        return self._trash_model

    def set_sessions(self, rows: list[SidebarRow], current_path: str | None) -> None:
        """Show ``rows`` (rows that keep their places are repainted, otherwise one model
        reset), keeping the selection, folds and scroll."""
        scroll = self.view.verticalScrollBar().value()
        moved = current_path is not None and current_path != self._model.current()
        selected = current_path or self._selected_path(self.view)
        reset = self._model.set_rows(rows, self._local_query())
        # (rows of two heights while a search shows where it found its words)
        self.view.setUniformRowHeights(not self._model.has_snippets)
        self._model.set_current(current_path)
        if self._model.any_running != self._ticker.isActive():
            (self._ticker.start if self._model.any_running else self._ticker.stop)()
        # The highlight follows the open session; a newly opened one is scrolled to.
        if reset:
            self._after_reset(self.view, selected, None if moved else scroll)
        elif moved and current_path is not None:
            self.set_current(current_path)
        self._say_if_empty()

    def set_trash(self, rows: list[SidebarRow]) -> None:
        selected = self._selected_path(self.trash_view)
        scroll = self.trash_view.verticalScrollBar().value()
        if self._trash_model.set_rows(rows, self.search.text()):
            self._after_reset(self.trash_view, selected, scroll)
        trash = self.tr("Trash")
        self.trash_toggle.setText(
            self.tr("Trash ({count})").format(count=len(rows)) if rows else trash
        )
        if not rows and self.trash_toggle.isChecked():
            self.show_trash(False)  # the last one restored: back to the list, where it is
        self._say_if_empty()

    def _say_if_empty(self) -> None:
        """An empty list says why (FIRST_HOUR.md m6, m11)."""
        text = ""
        if self.trash_toggle.isChecked():
            if not self._trash_model.rows():
                text = self.tr("The trash is empty.")
        elif not self._model.rows() and self.search.text().strip():
            text = self.tr("No sessions match “{query}”.").format(query=self.search.text().strip())
        self.empty_label.setText(text)
        self.empty_label.setVisible(bool(text))

    def set_current(self, path: str | None) -> None:
        """Mark ``path`` as the open session (bold, selected); the order does not change."""
        self._model.set_current(path)
        index = self._model.index_for_path(path) if path else QModelIndex()
        if index.isValid():
            self._select(self.view, index)
            self.view.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def search_text(self) -> str:
        return self.search.text()

    def show_trash(self, on: bool) -> None:
        """Show the trash instead of the session list (or back)."""
        if self.trash_toggle.isChecked() != on:
            self.trash_toggle.setChecked(on)  # re-enters through toggled
            return
        self.stack.setCurrentWidget(self.trash_view if on else self.view)
        self.trash_header.setVisible(on)
        self.trash_preview.setVisible(on and bool(self._previewed))
        self._say_if_empty()
        if on:
            self._ask_preview(self.trash_view.currentIndex())

    def show_preview(self, path: str, text: str) -> None:
        """Show the start of the trashed session ``path`` (Markdown), if still selected."""
        if path != self._selected_path(self.trash_view):
            return
        self._previewed = path
        self.trash_preview.setMarkdown(text)
        self.trash_preview.setVisible(self.trash_toggle.isChecked())

    def _ask_preview(self, index: QModelIndex, _previous: QModelIndex | None = None) -> None:
        path = index.siblingAtColumn(0).data(SidebarRole.PATH) if index.isValid() else None
        if not path:
            self._previewed = ""
            self.trash_preview.clear()
            self.trash_preview.setVisible(False)
        elif str(path) != self._previewed and self.trash_toggle.isChecked():
            self.preview_requested.emit(str(path))

    def refresh_times(self) -> None:
        self._model.refresh_times()
        self._trash_model.refresh_times()

    @staticmethod
    def confirm(parent: QWidget, title: str, text: str) -> bool:
        """Ask yes or no (No is the default). Tests replace this."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            title,
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            parent,
        )
        box.setDefaultButton(QMessageBox.StandardButton.No)
        fit_title(box)
        return box.exec() == QMessageBox.StandardButton.Yes

    def purge(self, path: str) -> None:
        """Delete a session in the trash for good ("": every one), once confirmed."""
        text = (
            self.tr(
                "Delete every session in the trash for good (and the checkpoints only they use)?"
            )
            if not path
            else self.tr("Delete this session for good (and the checkpoints only it uses)?")
        )
        if type(self).confirm(self, self.tr("Delete permanently"), text):
            self.purge_requested.emit(path)

    @staticmethod
    def ask_text(parent: QWidget, title: str, label: str, text: str) -> str | None:
        """Ask for one line of text; None when cancelled. Tests replace this."""
        dialog = QInputDialog(parent)
        dialog.setWindowTitle(title)
        dialog.setLabelText(label)
        dialog.setTextValue(text)
        dialog.setMinimumWidth(420)  # a name is read whole (p9: the dialog was tiny)
        fit_title(dialog)
        ok = dialog.exec() == QDialog.DialogCode.Accepted
        value = dialog.textValue()
        dialog.deleteLater()
        return value if ok else None

    def context_menu_for(self, path: str, *, trash: bool = False) -> QMenu | None:
        """The context menu of a session row (built, not shown), or None if not listed."""
        model = self._trash_model if trash else self._model
        index = model.index_for_path(path)
        return self._build_menu(index) if index.isValid() else None

    # ------------------------------------------------------------------ actions

    def open_session(self, path: str) -> None:
        if path != self._model.current():
            self.session_activated.emit(path)

    def rename_session(self, path: str) -> None:
        index = self._model.index_for_path(path)
        row = self._model.row_data(index)
        if row is None:
            return
        name = type(self).ask_text(self, self.tr("Rename session"), self.tr("Name:"), row.title)
        if name is None:
            return
        name = name.strip()
        if name != row.title:
            self.rename_requested.emit(path, name)

    # ------------------------------------------------------------------ internals

    def _local_query(self) -> str:
        """The title filter for rows given to `set_sessions` now (see the class doc)."""
        text = self.search.text()
        answered = (
            self._answers_searches and not self._debounce.isActive() and self._searched == text
        )
        return "" if answered else text

    def _on_text_changed(self, text: str) -> None:
        for view, model in ((self.view, self._model), (self.trash_view, self._trash_model)):
            selected = self._selected_path(view)
            model.set_filter(text)
            self._after_reset(view, selected, None)
        self._debounce.start()

    def _emit_search(self) -> None:
        self._searched = self.search.text()
        self.search_changed.emit(self._searched)

    def _selected_path(self, view: QTreeView) -> str | None:
        index = view.currentIndex()
        path = index.siblingAtColumn(0).data(SidebarRole.PATH) if index.isValid() else None
        return str(path) if path else None

    def _select(self, view: QTreeView, index: QModelIndex) -> None:
        view.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )

    def _after_reset(self, view: QTreeView, selected: str | None, scroll: int | None) -> None:
        model = view.model()
        assert isinstance(model, SessionListModel)
        self._restoring = True
        try:
            view.expandAll()
            for cwd in self._collapsed:
                index = model.index_for_cwd(cwd)
                if index.isValid():
                    view.collapse(index)
        finally:
            self._restoring = False
        index = model.index_for_path(selected) if selected else QModelIndex()
        if index.isValid():
            self._select(view, index)
        if scroll is not None:
            view.verticalScrollBar().setValue(scroll)
        elif index.isValid():
            view.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)

    def _on_expanded(self, index: QModelIndex) -> None:
        if not self._restoring:
            self._collapsed.discard(str(index.data(SidebarRole.GROUP_KEY)))

    def _on_collapsed(self, index: QModelIndex) -> None:
        if not self._restoring:
            self._collapsed.add(str(index.data(SidebarRole.GROUP_KEY)))

    def _on_clicked(self, index: QModelIndex) -> None:
        view = self.sender()
        if index.data(SidebarRole.IS_GROUP):
            if isinstance(view, QTreeView) and index.column() == 0:
                group = index.siblingAtColumn(0)
                view.setExpanded(group, not view.isExpanded(group))
            return
        if view is self.view:
            self.open_session(str(index.data(SidebarRole.PATH)))

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch: the New session icon is tinted again, like the toolbar's."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.tint()

    def tint(self) -> None:
        self.new_button.setIcon(icon("new-session", palette_of(self)))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and watched is self.view
            and event.key() == Qt.Key.Key_F2
            and self.view.currentIndex().siblingAtColumn(0).data(SidebarRole.PATH)
        ):
            # F2 in the list renames the selected row, not the open session (the window's
            # F2, FIRST_HOUR.md p10): the list's key wins, as the map's does for its label.
            event.accept()
            return True
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return super().eventFilter(watched, event)
        key = event.key()
        if watched is self.search:
            if key == Qt.Key.Key_Down:
                view = self.trash_view if self.trash_toggle.isChecked() else self.view
                view.setFocus(Qt.FocusReason.OtherFocusReason)
                if not view.currentIndex().isValid():
                    first = view.model().index(0, 0)
                    child = view.model().index(0, 0, first)
                    if first.isValid():
                        self._select(view, child if child.isValid() else first)
                return True
            if key == Qt.Key.Key_Escape and self.search.text():
                self.search.clear()
                return True
            return super().eventFilter(watched, event)
        if watched in (self.view, self.trash_view):
            assert isinstance(watched, QTreeView)
            path = watched.currentIndex().siblingAtColumn(0).data(SidebarRole.PATH)
            in_trash = watched is self.trash_view
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                current = watched.currentIndex().siblingAtColumn(0)
                if path:
                    if in_trash:
                        self.restore_requested.emit(str(path))
                    else:
                        self.open_session(str(path))
                elif current.isValid():
                    watched.setExpanded(current, not watched.isExpanded(current))
                return True
            if key == Qt.Key.Key_F2 and path and not in_trash:
                self.rename_session(str(path))
                return True
            if key == Qt.Key.Key_Delete and path and not in_trash and not self._is_pi(str(path)):
                self.delete_requested.emit(str(path))
                return True
        return super().eventFilter(watched, event)

    def _build_menu(self, index: QModelIndex) -> QMenu:
        menu = QMenu(self)
        model = index.model()
        path = index.siblingAtColumn(0).data(SidebarRole.PATH)
        if path and model is self._trash_model:
            p = str(path)
            restore = menu.addAction(self.tr("Restore"))
            restore.setObjectName("restoreSession")
            restore.triggered.connect(lambda: self.restore_requested.emit(p))
            reveal = menu.addAction(self.tr("Reveal file"))
            reveal.setObjectName("revealSession")
            reveal.triggered.connect(lambda: self.reveal_requested.emit(p))
            menu.addSeparator()
            purge = menu.addAction(self.tr("Delete permanently…"))
            purge.setObjectName("purgeSession")
            purge.triggered.connect(lambda: self.purge(p))
            empty = menu.addAction(self.tr("Empty trash…"))
            empty.setObjectName("emptyTrash")
            empty.triggered.connect(lambda: self.purge(""))
            return menu
        if path:
            p = str(path)
            is_current = p == self._model.current()
            pi = self._is_pi(p)
            open_action = menu.addAction(self.tr("Open"))
            open_action.setObjectName("openSession")
            open_action.setEnabled(not is_current)
            open_action.triggered.connect(lambda: self.session_activated.emit(p))
            in_window = menu.addAction(self.tr("Open in new window"))
            in_window.setObjectName("openInWindowSession")
            in_window.triggered.connect(lambda: self.open_in_window_requested.emit(p))
            if pi:
                copy = menu.addAction(self.tr("Copy into Desktop Agent"))
                copy.setObjectName("copySession")
                copy.setToolTip(
                    self.tr(
                        "Make your own copy of this Pi session and open it; Pi's file stays"
                        " as it is"
                    )
                )
                copy.triggered.connect(lambda: self.copy_requested.emit(p))
            rename = menu.addAction(self.tr("Rename…"))
            rename.setObjectName("renameSession")
            rename.setShortcut("F2")
            rename.triggered.connect(lambda: self.rename_session(p))
            if not pi:  # for a Pi session, "Copy into Desktop Agent" is the new session
                fork = menu.addAction(self.tr("Fork into a new session"))
                fork.setObjectName("forkSession")
                fork.setToolTip(
                    self.tr("A new session that continues from this session's current position")
                )
                fork.triggered.connect(lambda: self.fork_requested.emit(p))
            export = menu.addMenu(self.tr("Export"))
            export.setObjectName("exportMenu")
            for fmt, text in EXPORT_FORMATS:
                action = export.addAction(self.tr(text))
                action.setObjectName(f"export_{fmt}")
                action.triggered.connect(lambda _=False, f=fmt: self.export_requested.emit(p, f))
            reveal = menu.addAction(self.tr("Reveal file"))
            reveal.setObjectName("revealSession")
            reveal.triggered.connect(lambda: self.reveal_requested.emit(p))
            menu.addSeparator()
            if not pi:  # Pi's folder is Pi's: deleting its sessions is done with Pi
                delete = menu.addAction(self.tr("Move to trash"))
                delete.setObjectName("deleteSession")
                delete.setShortcut("Del")
                delete.triggered.connect(lambda: self.delete_requested.emit(p))
                menu.addSeparator()
        else:
            new = menu.addAction(self.tr("New session"))
            new.setObjectName("newSession")
            new.triggered.connect(self.new_session_requested)
        backup = menu.addAction(self.tr("Back up all sessions…"))
        backup.setObjectName("backupSessions")
        backup.triggered.connect(self.backup_requested)
        return menu

    def _is_pi(self, path: str) -> bool:
        row = self._model.row_data(self._model.index_for_path(path))
        return row is not None and row.source == PI_SOURCE

    def _on_context_menu(self, pos: QPoint) -> None:
        view = self.sender()
        if not isinstance(view, QTreeView):
            return
        index = view.indexAt(pos)
        if not index.isValid():
            return
        menu = self._build_menu(index)
        menu.exec(view.viewport().mapToGlobal(pos))
        menu.deleteLater()
