"""`MapPane`: the branch map pane (replaces the tree pane): the lane view and the
Branches list in two tabs, a filter, and the context menu of a row.

The pane only shows and asks: activating a row emits `node_activated` with the entry
the leaf should move to, and the window binds it to the workbench's one route
(`Workbench.navigate`). Its two sources are given at construction: ``previews`` reads the
one-line previews of the rows shown (off the loop; `Workbench.map_previews`) and
``tooltip`` the whole message of a row (`Workbench.map_tooltip`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QModelIndex, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListView,
    QMenu,
    QStackedWidget,
    QTabBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._titles import fit_title
from desktop_agent.gui.map._model import BranchesModel, MapModel, MapRole, Previews
from desktop_agent.gui.map._view import BranchDelegate, MapView
from desktop_agent.workbench import (
    MAP_FILTERS,
    BranchMap,
    MapFilter,
    MapUpdate,
    query_words,
    text_matches,
)

log = logging.getLogger("desktop_agent.gui")


class MapPane(QWidget):
    """The branch map pane (objectName ``branchPane``; see the module docstring)."""

    node_activated = Signal(str)
    sibling_requested = Signal(str, int)
    """(entry, -1 or +1): show its previous / next version (the chat's ``‹ n/m ›``)."""
    summarize_requested = Signal(str)
    label_requested = Signal(str, str)
    fork_requested = Signal(str)
    changes_requested = Signal(str)
    """"Show file changes…" of a row whose turns changed files."""
    filter_changed = Signal(str)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        previews: Callable[[list[str]], Awaitable[dict[str, str]]] | None = None,
        tooltip: Callable[[str], str] | None = None,
        spawn: Callable[[Coroutine[Any, Any, None]], object] | None = None,
    ) -> None:
        """``previews(ids)`` reads previews by entry id, run through ``spawn`` (the
        window's task route; by default a task of the pane's own); ``tooltip(id)``
        gives the whole message of a row."""
        super().__init__(parent)
        self.setObjectName("branchPane")
        self.previews = Previews(self)
        self._leaf_shown = -1
        self._select_after = ""  # the version `step_version` asked for, once drawn
        self._read_previews = previews
        self._spawn = spawn or self._own_task
        self._tasks: set[asyncio.Task[None]] = set()
        self._shown_map = 0  # counts `clear`: previews read for a map no longer shown are dropped
        self.previews.needed.connect(self._load_previews)
        self._model = MapModel(self.previews, self, tooltip=tooltip)
        self.branches = BranchesModel(self.previews, self, text=self._model.entry_text)

        self.tabs = QTabBar(self)
        self.tabs.setObjectName("branchTabs")
        self.tabs.setAccessibleName(self.tr("Branch map or branch list"))
        self.tabs.addTab(self.tr("Map"))
        self.tabs.addTab(self.tr("Branches"))
        self.tabs.setDrawBase(False)
        self.tabs.setExpanding(False)
        self.tabs.setUsesScrollButtons(False)  # two tabs
        for arrow in self.tabs.findChildren(QToolButton):  # Qt makes them anyway (hidden)
            left = arrow.objectName() == "ScrollLeftButton"
            arrow.setAccessibleName(self.tr("Previous tab") if left else self.tr("Next tab"))
            arrow.setAccessibleDescription(self.tr("Scroll the tabs of the branch pane"))
        self.filter = QComboBox(self)
        self.filter.setObjectName("branchFilter")
        self.filter.setAccessibleName(self.tr("Entries shown on the map"))
        texts = {
            "conversation": self.tr("Messages"),
            "user": self.tr("Prompts"),
            "labeled": self.tr("Labelled"),
            "all": self.tr("All entries"),
        }
        for name in MAP_FILTERS:
            self.filter.addItem(texts[name], name)
        self.filter.setToolTip(
            self.tr(
                "Messages: your prompts, answers, compactions and summaries (tool results, "
                "settings and model changes hidden). Prompts: yours only. Labelled: labelled "
                "entries. All entries: everything."
            )
        )
        self.filter.activated.connect(self._on_filter)
        self.filter.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.filter.setMinimumContentsLength(6)
        self.tabs.setUsesScrollButtons(True)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)

        self.view = MapView(self._model, self)
        self.view.setAccessibleName(self.tr("Branch map"))
        self.view.setAccessibleDescription(
            self.tr(
                "Up and Down move along a branch, Left and Right across versions, "
                "Enter switches to the selected message"
            )
        )
        self.view.clicked.connect(self._on_map_clicked)
        self.view.activated.connect(self._on_map_activated)
        self.view.customContextMenuRequested.connect(self._on_context_menu)
        self.view.installEventFilter(self)

        self.branch_list = QListView(self)
        self.branch_list.setObjectName("branchList")
        self.branch_list.setAccessibleName(self.tr("Branches, newest first"))
        self.branch_list.setModel(self.branches)
        self.branch_list.setItemDelegate(BranchDelegate(self.branch_list))
        self.branch_list.setUniformItemSizes(True)
        self.branch_list.setMouseTracking(True)
        self.branch_list.viewport().setAttribute(Qt.WidgetAttribute.WA_Hover, True)
        self.branch_list.clicked.connect(self._on_branch_clicked)
        self.branch_list.activated.connect(self._on_branch_clicked)
        self.branch_list.installEventFilter(self)

        self.branch_filter = QLineEdit(self)
        self.branch_filter.setObjectName("branchListFilter")
        self.branch_filter.setPlaceholderText(self.tr("Filter branches"))
        self.branch_filter.setClearButtonEnabled(True)
        self.branch_filter.setAccessibleName(self.tr("Filter branches"))
        self.branch_filter.setAccessibleDescription(
            self.tr(
                "Shows the branches whose last message or label has every word typed; "
                "Esc clears, Down moves into the list"
            )
        )
        self.branch_filter.setVisible(False)
        self.branch_filter.textChanged.connect(self._filter_branches)
        self.branch_filter.installEventFilter(self)
        self.branches.modelReset.connect(self._filter_branches)
        self.previews.arrived.connect(self._filter_branches)

        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.branch_list)
        self.tabs.currentChanged.connect(self.show_tab)

        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self.tabs)
        bar.addStretch(1)
        bar.addWidget(self.filter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.branch_filter)
        layout.addWidget(self.stack, 1)

    # ------------------------------------------------------------------ public API

    def model(self) -> MapModel:
        return self._model

    @property
    def bmap(self) -> BranchMap:
        return self._model.bmap

    def apply(self, bmap: BranchMap, update: MapUpdate) -> None:
        """Show the map after ``update``; the current leaf's row is selected."""
        if update.empty and bmap is self._model.bmap:
            return
        keep = self.view.verticalScrollBar().value()
        was_at_leaf = self.view.currentIndex().row() in (-1, self._leaf_shown)
        self._model.apply(bmap, update)
        self.branches.set_tips(bmap.tips())
        self.set_filter_shown(bmap.filter)
        leaf = self._leaf_shown = bmap.leaf_row
        if update.reset:  # the view stays where it was (m12), then shows the leaf if need be
            self.view.verticalScrollBar().setValue(keep)
        wanted = (
            bmap.row_of(self._select_after)
            if (update.reset or update.path) and self._select_after
            else -1
        )
        if wanted >= 0:
            self._select_after = ""
            self.view.select_row(wanted)
        elif leaf >= 0 and (update.reset or was_at_leaf):
            self.view.select_row(leaf)

    def clear(self) -> None:
        """Show no map (another session is opened): known previews are forgotten and
        the ones still being read are dropped when they arrive."""
        self._shown_map += 1
        self.previews.forget()
        self.apply(BranchMap(self.bmap.filter), MapUpdate(reset=True))

    def _load_previews(self, entry_ids: list[str]) -> None:
        if self._read_previews is not None:
            self._spawn(self._read(self._read_previews, entry_ids, self._shown_map))

    async def _read(
        self,
        read: Callable[[list[str]], Awaitable[dict[str, str]]],
        entry_ids: list[str],
        shown_map: int,
    ) -> None:
        texts = await read(entry_ids)
        if shown_map == self._shown_map:
            self.previews.set(texts)

    def _own_task(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("the branch map's previews could not be read", exc_info=exc)

    def set_filter_shown(self, name: str) -> None:
        i = self.filter.findData(name)
        if i >= 0 and i != self.filter.currentIndex():
            self.filter.setCurrentIndex(i)

    def show_tab(self, i: int) -> None:
        self.tabs.setCurrentIndex(i)
        self.stack.setCurrentIndex(i)
        self.branch_filter.setVisible(i == 1)
        if i == 1:
            row = self.branches.row_of_leaf(self._current_leaf_id())
            if row >= 0 and not self.branch_list.currentIndex().isValid():
                self.branch_list.setCurrentIndex(self.branches.index(row))

    def reveal(self, entry_id: str) -> bool:
        """Select and centre the row that shows ``entry_id`` (or its nearest shown
        ancestor, e.g. the compaction that folded it); False if none."""
        r = self.bmap.row_of(entry_id)
        if r < 0:
            return False
        self.show_tab(0)
        self.view.select_row(r, center=True)
        return True

    def step_version(self, step: int) -> None:
        """``[`` / ``]``: switch to the previous (-1) or next (+1) version at the fork of
        the selected row (the row itself if it has versions, else the nearest above it)."""
        bmap = self.bmap
        r = self.view.currentIndex().row()
        while 0 <= r < len(bmap) and len(bmap.siblings(r)) < 2:
            r = bmap.rows[r].parent
        if not 0 <= r < len(bmap):
            return
        siblings = bmap.siblings(r)
        self._select_after = bmap.rows[
            siblings[(siblings.index(r) + step) % len(siblings)]
        ].entry_id
        self.sibling_requested.emit(bmap.rows[r].entry_id, step)

    def step_fork(self, step: int) -> None:
        """Alt+Up / Alt+Down: select the previous / next fork point (a row with more than
        one child) along the selected row's line."""
        bmap = self.bmap
        r = self.view.currentIndex().row()
        if not 0 <= r < len(bmap):
            return

        def next_row(r: int) -> int:
            if step < 0:
                return bmap.rows[r].parent
            down = bmap.continuation(r)
            kids = bmap.children(r)
            return down if down >= 0 else (kids[0] if kids else -1)

        r = next_row(r)
        while r >= 0 and len(bmap.children(r)) < 2:
            r = next_row(r)
        if r >= 0:
            self.view.select_row(r, center=True)

    def label_selected(self) -> None:
        """F2 in the map: ask for the selected row's label (the context menu's route)."""
        r = self.view.currentIndex().row()
        if 0 <= r < len(self.bmap):
            self._ask_and_label(self.bmap.rows[r].entry_id, self.bmap.label(r))

    @staticmethod
    def ask_label(parent: QWidget, current: str | None) -> str | None:
        """Ask for a label ("" removes it); None when cancelled. Tests replace this."""
        dialog = QInputDialog(parent)
        dialog.setWindowTitle(QCoreApplication.translate("MapPane", "Label"))
        dialog.setLabelText(
            QCoreApplication.translate("MapPane", "Label for this entry (empty removes it):")
        )
        dialog.setTextValue(current or "")
        dialog.setMinimumWidth(420)
        fit_title(dialog)
        ok = dialog.exec() == QDialog.DialogCode.Accepted
        text = dialog.textValue()
        dialog.deleteLater()
        return text.strip() if ok else None

    def context_menu_for(self, entry_id: str) -> QMenu | None:
        """The context menu of the row showing ``entry_id`` (built, not shown)."""
        r = self.bmap.row_of(entry_id)
        if r < 0 or self.bmap.rows[r].entry_id != entry_id:
            return None
        return self._build_menu(r)

    # ------------------------------------------------------------------ internals

    def _current_leaf_id(self) -> str:
        shape = self.bmap.shape
        return shape.ids[shape.path[-1]] if shape is not None and shape.path else ""

    def _activate_row(self, r: int) -> None:
        if r < 0 or r >= len(self.bmap) or r == self.bmap.leaf_row:
            return
        self.node_activated.emit(self._model.target(r))

    def _on_map_clicked(self, index: QModelIndex) -> None:
        self._activate_row(index.row())

    def _on_map_activated(self, index: QModelIndex) -> None:
        # Enter (or a platform's activation); clicks already switched.
        if index.isValid() and not self.view.underMouse():
            self._activate_row(index.row())

    def _on_branch_clicked(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        tip = self.branches.tips[index.row()]
        if not tip.current:
            self.node_activated.emit(tip.leaf_id)

    def _on_filter(self, i: int) -> None:
        name = self.filter.itemData(i)
        if isinstance(name, str) and name != self.bmap.filter:
            self.filter_changed.emit(name)

    def _filter_branches(self) -> None:
        """Hide the branches whose label or last message lacks a word of the filter
        (previews not read yet are asked for and shown until they arrive)."""
        words = query_words(self.branch_filter.text())
        for row, tip in enumerate(self.branches.tips):
            hide = False
            if words:
                text = tip.label or self.branches.text_source(tip.entry_id)
                hide = text is not None and not text_matches(words, text)
            if self.branch_list.isRowHidden(row) != hide:  # (each set relays the list out)
                self.branch_list.setRowHidden(row, hide)

    def branches_shown(self) -> list[str]:
        """The texts of the Branches list's rows shown (what it reads, top down)."""
        return [str(self.branches.index(r).data()) for r in self._shown_branches()]

    def _shown_branches(self) -> list[int]:
        return [r for r in range(len(self.branches.tips)) if not self.branch_list.isRowHidden(r)]

    def _filter_key(self, event: QKeyEvent) -> bool:
        """Esc clears the filter, Down moves into the list, Enter switches to the first
        branch shown."""
        key = event.key()
        if key == Qt.Key.Key_Escape and self.branch_filter.text():
            self.branch_filter.clear()
            return True
        shown = self._shown_branches()
        if key == Qt.Key.Key_Down and shown:
            self.branch_list.setCurrentIndex(self.branches.index(shown[0]))
            self.branch_list.setFocus(Qt.FocusReason.TabFocusReason)
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and shown:
            self._on_branch_clicked(self.branches.index(shown[0]))
            return True
        return False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.branch_filter
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and self._filter_key(event)
        ):
            return True
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            if watched is self.view:
                self._activate_row(self.view.currentIndex().row())
                return True
            if watched is self.branch_list:
                self._on_branch_clicked(self.branch_list.currentIndex())
                return True
        return super().eventFilter(watched, event)

    def _build_menu(self, r: int) -> QMenu:
        row = self.bmap.rows[r]
        entry_id = row.entry_id
        target = self._model.target(r)
        label = self.bmap.label(r)
        here = r == self.bmap.leaf_row
        menu = QMenu(self)
        go: QAction = menu.addAction(self.tr("Go here"))
        go.setObjectName("goHere")
        go.setEnabled(not here)
        go.triggered.connect(lambda: self.node_activated.emit(target))
        summarize = menu.addAction(self.tr("Go here and summarize the branch I am leaving"))
        summarize.setObjectName("goHereAndSummarize")
        summarize.setEnabled(not here)
        summarize.triggered.connect(lambda: self.summarize_requested.emit(target))
        fork = menu.addAction(self.tr("Fork from here into a new session"))
        fork.setObjectName("forkFromHere")
        fork.triggered.connect(lambda: self.fork_requested.emit(entry_id))
        if r in self.bmap.file_marks:
            files = menu.addAction(self.tr("Show file changes…"))
            files.setObjectName("showFileChanges")
            files.triggered.connect(lambda: self.changes_requested.emit(entry_id))
        menu.addSeparator()
        set_label = menu.addAction(self.tr("Edit label…") if label else self.tr("Set label…"))
        set_label.setObjectName("setLabel")
        set_label.triggered.connect(lambda: self._ask_and_label(entry_id, label))
        if label:
            remove = menu.addAction(self.tr("Remove label"))
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
        menu = self._build_menu(index.row())
        menu.exec(self.view.viewport().mapToGlobal(pos))
        menu.deleteLater()

    def filter_name(self) -> MapFilter:
        return self.bmap.filter

    def entry_at_row(self, r: int) -> str:
        return str(self._model.index(r, 0).data(MapRole.ID))
