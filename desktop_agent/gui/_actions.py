"""What a person can do in the main window: its menus, toolbar, shortcuts and widget
signals, each bound to one workbench operation (one route per action). The commands come
from the one table, `gui._action_table.ACTIONS`.

`install_actions` is the window's binding root (as qutebrowser's ``_init_modules``): it
takes the window as `WindowApi`, the surface the window declares.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QSizePolicy, QToolBar, QToolButton, QWidget

from desktop_agent.gui._action_table import ACTIONS, MENUS, tr
from desktop_agent.gui._commands import command_or, fill_completions, show_context
from desktop_agent.gui._icons import ICON_SIZE, icon, palette_of
from desktop_agent.gui._window_api import WindowApi
from desktop_agent.gui.sidebar import EXPORT_FORMATS
from desktop_agent.workbench import SHOW_CHANGES, Changes


def _bind_signals(w: WindowApi) -> None:
    wb = w.wb
    run = w.spawn

    def op(make: Callable[..., Coroutine[Any, Any, Changes]]) -> Callable[..., object]:
        # typed: a workbench operation that is not a coroutine is a mypy error here
        return lambda *args: run(w.do(make(*args)))

    composer, chat, map_pane, sidebar = w.composer, w.chat, w.map_pane, w.sidebar
    composer.send_requested.connect(lambda text, atts: run(w.send(text, atts)))

    def steer(text: str) -> Coroutine[Any, Any, Changes]:
        w.chat_actions.queued(text, steer=True)  # it says where the message went (m8)
        return wb.steer(text)

    def follow_up(text: str) -> Coroutine[Any, Any, Changes]:
        w.chat_actions.queued(text, steer=False)
        return wb.follow_up(text)

    composer.steer_requested.connect(lambda text: run(command_or(w, text, steer)))
    composer.follow_up_requested.connect(lambda text: run(command_or(w, text, follow_up)))
    composer.stop_requested.connect(op(wb.stop))
    composer.model_chosen.connect(op(wb.choose_model))
    composer.thinking_chosen.connect(op(wb.choose_thinking))
    composer.draft_changed.connect(w.on_draft)
    composer.commands.needed.connect(lambda: run(fill_completions(w)))
    chat.sibling_requested.connect(op(wb.switch_sibling))
    map_pane.sibling_requested.connect(op(wb.switch_sibling))
    chat.edit_resend_requested.connect(lambda e, t: run(w.edit_resend(e, t)))
    chat.retry_requested.connect(op(wb.retry))
    chat.regenerate_requested.connect(op(wb.regenerate))
    chat.copy_requested.connect(lambda _text: w.chat_actions.copied())
    chat.quote_requested.connect(lambda text: w.chat_actions.quote(text))
    map_pane.node_activated.connect(op(wb.navigate))
    map_pane.summarize_requested.connect(op(lambda e: wb.navigate(e, summarize=True)))
    map_pane.label_requested.connect(op(wb.set_label))
    map_pane.fork_requested.connect(lambda e: run(w.do(wb.fork(wb.ref, e))) if wb.ref else None)
    map_pane.changes_requested.connect(lambda e: run(w.show_file_changes(e)))
    map_pane.filter_changed.connect(op(wb.set_map_filter))
    sidebar.session_activated.connect(lambda ref: run(w.hits.open_from_list(ref)))
    sidebar.new_session_requested.connect(lambda: run(w.new_session()))
    sidebar.search_changed.connect(lambda query: run(w.hits.search(query)))
    sidebar.rename_requested.connect(op(wb.rename))
    sidebar.fork_requested.connect(op(wb.fork))
    sidebar.delete_requested.connect(op(wb.trash))
    sidebar.restore_requested.connect(op(wb.restore_from_trash))

    async def preview(ref: str) -> None:
        sidebar.show_preview(ref, await wb.preview_trashed(ref))

    sidebar.preview_requested.connect(lambda ref: run(preview(ref)))
    sidebar.purge_requested.connect(
        lambda ref: run(w.do(wb.delete_for_good([ref] if ref else None)))
    )
    sidebar.export_requested.connect(lambda ref, fmt: run(w.export(ref, fmt)))
    sidebar.reveal_requested.connect(w.reveal)
    sidebar.open_in_window_requested.connect(lambda ref: run(w.windows.open_new(w.view, ref)))
    sidebar.backup_requested.connect(lambda: run(w.backup()))
    sidebar.copy_requested.connect(op(wb.copy_into_ours))
    w.notices.action_requested.connect(
        lambda key: run(
            w.show_branch_changes()
            if key == SHOW_CHANGES  # the Changes view, not only a list
            else w.do(wb.notice_action(key))
        )
    )
    w.notices.dismissed.connect(op(wb.dismiss))
    w.notices.settings_requested.connect(lambda: run(w.settings()))
    w.start_page.choose_workspace.connect(lambda: run(w.choose_workspace()))
    w.start_page.open_settings.connect(lambda: run(w.settings()))


def _slots(w: WindowApi) -> dict[str, Callable[[], Any]]:
    wb = w.wb
    run = w.spawn

    def current(fn: Callable[[str], Any]) -> Callable[[], None]:
        return lambda: fn(wb.ref) if wb.ref else None

    return {
        "newSessionAction": lambda: run(w.new_session()),
        "newWindowAction": lambda: run(w.windows.open_new(w.view, None)),
        "openInWindowAction": current(lambda ref: run(w.windows.open_new(w.view, ref))),
        "chooseFolderAction": lambda: run(w.choose_workspace()),
        "backupAction": lambda: run(w.backup()),
        "settingsAction": lambda: run(w.settings()),
        "quitAction": w.request_quit,
        "renameAction": current(w.sidebar.rename_session),
        "forkAction": current(lambda ref: run(w.do(wb.fork(ref)))),
        "trashAction": current(lambda ref: run(w.do(wb.trash(ref)))),
        "copyIntoOursAction": current(lambda ref: run(w.do(wb.copy_into_ours(ref)))),
        "convertAction": current(lambda ref: run(w.do(wb.convert(ref)))),
        "compactAction": lambda: run(w.do(wb.compact())),
        "contextAction": lambda: run(show_context(w)),
        "refreshModelsAction": lambda: run(w.do(wb.refresh_models())),
        "editLastAction": w.chat_actions.edit,
        "retryAction": lambda: run(w.do(wb.regenerate())),
        "copyMessageAction": w.chat_actions.copy,
        "previousVersionAction": w.chat_actions.previous_version,
        "nextVersionAction": w.chat_actions.next_version,
        "sidebarAction": w.toggle_sidebar,
        "mapAction": w.toggle_map,
        "searchAction": w.focus_search,
        "findAction": w.chat.finder.open_bar,
        "zoomInAction": lambda: w.zoom.step(1),
        "zoomOutAction": lambda: w.zoom.step(-1),
        "zoomResetAction": lambda: w.zoom.step(0),
        "composerAction": w.focus_composer_now,
        "nextPaneAction": lambda: w.panes.cycle(1),
        "previousPaneAction": lambda: w.panes.cycle(-1),
        "shortcutsAction": w.dialogs.shortcuts,
        "aboutAction": w.dialogs.about,
        "mapPreviousVersionAction": lambda: w.map_pane.step_version(-1),
        "mapNextVersionAction": lambda: w.map_pane.step_version(1),
        "mapPreviousForkAction": lambda: w.map_pane.step_fork(-1),
        "mapNextForkAction": lambda: w.map_pane.step_fork(1),
        "mapLabelAction": w.map_pane.label_selected,
    }


def install_actions(w: WindowApi) -> dict[str, QAction]:
    """Bind every widget signal, menu entry, toolbar button and shortcut of ``w``."""
    _bind_signals(w)
    slots = _slots(w)
    bar = w.menuBar()
    bar.setObjectName("menuBar")
    menus: dict[str, QMenu] = {}
    for key, title in MENUS:
        menu = bar.addMenu(tr(title))
        menu.setObjectName(f"{key}Menu")
        menus[key] = menu
    actions: dict[str, QAction] = {}
    for spec in ACTIONS:
        action = QAction(tr(spec.text), w.window())
        action.setObjectName(spec.name)
        action.setToolTip(tr(spec.tip))
        action.setStatusTip(tr(spec.tip))
        if spec.shortcuts:
            action.setShortcuts([QKeySequence(k) for k in spec.shortcuts])
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.setCheckable(spec.checkable)
        slot = slots[spec.name]
        action.triggered.connect(lambda _checked=False, slot=slot: slot())
        if spec.menu == "map":  # the map's own keys (F2 there labels, elsewhere renames)
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            w.map_pane.view.addAction(action)
        else:
            w.addAction(action)  # shortcuts work even when the menu bar is hidden
        actions[spec.name] = action
    _fill_menus(w, menus, actions)
    w.addToolBar(_toolbar(w, actions))
    refresh_icons(w, actions)
    return actions


def _fill_menus(w: WindowApi, menus: dict[str, QMenu], actions: dict[str, QAction]) -> None:
    groups = {
        "file": ["newSessionAction", "newWindowAction", "chooseFolderAction", "", "backupAction",
                 "settingsAction", "refreshModelsAction", "", "quitAction"],
        "session": ["openInWindowAction", "", "renameAction", "forkAction", "export",
                    "copyIntoOursAction", "convertAction", "compactAction", "", "trashAction", "",
                    "editLastAction", "retryAction", "copyMessageAction", "",
                    "previousVersionAction", "nextVersionAction"],
        "view": ["sidebarAction", "mapAction", "contextAction", "", "zoomInAction",
                 "zoomOutAction", "zoomResetAction", "", "findAction",
                 "searchAction", "composerAction",
                 "nextPaneAction", "previousPaneAction"],
        "help": ["shortcutsAction", "", "aboutAction"],
    }  # fmt: skip
    for key, names in groups.items():
        menu = menus[key]
        for name in names:
            if not name:
                menu.addSeparator()
            elif name == "export":
                menu.addMenu(_export_menu(w, menu))
            else:
                menu.addAction(actions[name])
    view = menus["view"]
    view.aboutToShow.connect(lambda: sync_toggles(w, actions))
    menus["session"].aboutToShow.connect(lambda: sync_session_actions(w, actions))
    sync_session_actions(w, actions)


def _export_menu(w: WindowApi, parent: QWidget) -> QMenu:
    menu = QMenu(QCoreApplication.translate("Actions", "&Export"), parent)
    menu.setObjectName("exportSessionMenu")
    for fmt, text in EXPORT_FORMATS:
        action = menu.addAction(QCoreApplication.translate("SessionSidebar", text))
        action.setObjectName(f"exportAction_{fmt}")
        action.triggered.connect(
            lambda _c=False, fmt=fmt: w.spawn(w.export(w.wb.ref, fmt)) if w.wb.ref else None
        )
    return menu


def _toolbar(w: WindowApi, actions: dict[str, QAction]) -> QToolBar:
    bar = QToolBar(QCoreApplication.translate("Actions", "Toolbar"), w.window())
    bar.setObjectName("mainToolBar")
    bar.setMovable(False)
    bar.setFloatable(False)
    bar.setIconSize(ICON_SIZE)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
    bar.toggleViewAction().setVisible(False)
    for name in ("sidebarAction", "newSessionAction", "searchAction"):
        bar.addAction(actions[name])
    spacer = QWidget(bar)
    spacer.setObjectName("toolBarSpacer")
    spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    bar.addWidget(spacer)
    export = QToolButton(bar)
    export.setObjectName("exportButton")
    export.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    export.setMenu(_export_menu(w, export))
    export.setToolTip(QCoreApplication.translate("Actions", "Export the open session"))
    export.setAccessibleName(QCoreApplication.translate("Actions", "Export"))
    export.setAccessibleDescription(
        QCoreApplication.translate("Actions", "Export the open session")
    )
    bar.addWidget(export)
    for name in ("contextAction", "settingsAction", "shortcutsAction", "mapAction"):
        bar.addAction(actions[name])
    for action in bar.actions():
        button = bar.widgetForAction(action)
        if isinstance(button, QToolButton) and action.objectName():
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # in the Tab order (issue 9)
            button.setObjectName(action.objectName().replace("Action", "ToolButton"))
            button.setAccessibleName(action.text().replace("&", ""))
            button.setAccessibleDescription(action.toolTip())
    export.setFocusPolicy(Qt.FocusPolicy.TabFocus)
    w.export_button = export
    return bar


def sync_toggles(w: WindowApi, actions: dict[str, QAction]) -> None:
    """The checked state of the pane toggles is whether the pane is shown."""
    actions["sidebarAction"].setChecked(not w.sidebar.isHidden())
    actions["mapAction"].setChecked(not w.map_pane.isHidden())


def sync_session_actions(w: WindowApi, actions: dict[str, QAction]) -> None:
    """Copy-in is for a Pi session, Convert for a file of an old format version."""
    wb = w.wb
    pi = wb.is_pi(wb.ref)
    old = wb.session is not None and wb.session.metadata.format_version < 3
    for name, applies in (("copyIntoOursAction", pi), ("convertAction", old)):
        actions[name].setEnabled(applies)
        actions[name].setVisible(applies)  # not shown where it never applies (p10)


def refresh_icons(w: WindowApi, actions: dict[str, QAction]) -> None:
    """(Re)tint every icon for the current palette (after a theme switch)."""
    palette = palette_of(w.window())
    for spec in ACTIONS:
        if spec.icon:
            actions[spec.name].setIcon(icon(spec.icon, palette))
    w.export_button.setIcon(icon("export", palette))
    sync_toggles(w, actions)
