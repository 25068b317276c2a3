"""What a person can do in the main window: its menus, toolbar, shortcuts and widget
signals, each bound to one workbench operation (one route per action).

`ACTIONS` is the one table of the window's commands: menus, toolbar buttons and the
Help -> Keyboard shortcuts sheet are all made from it (`KEYS` adds the keys widgets handle
themselves, such as Enter in the composer).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QSizePolicy, QToolBar, QToolButton, QWidget

from desktop_agent.gui._commands import command_or, fill_completions, show_context
from desktop_agent.gui._icons import ICON_SIZE, icon, palette_of
from desktop_agent.gui._tr import QT_TRANSLATE_NOOP
from desktop_agent.gui.sidebar import EXPORT_FORMATS
from desktop_agent.workbench import SHOW_CHANGES

if TYPE_CHECKING:
    from desktop_agent.gui._main_window import MainWindow
    from desktop_agent.workbench import Changes

CONTEXT = "Actions"


def tr(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


@dataclass(frozen=True)
class ActionSpec:
    """One command of the window. ``text`` and ``tip`` are marked for translation."""

    name: str
    menu: str  # "file" | "session" | "view" | "help"; "map": keys of the branch map
    text: str
    tip: str
    shortcuts: tuple[str, ...] = ()
    icon: str = ""
    checkable: bool = False


def _spec(
    name: str, menu: str, text: str, tip: str, *keys: str, icon: str = "", check: bool = False
) -> ActionSpec:
    return ActionSpec(name, menu, text, tip, keys, icon, check)


ACTIONS: tuple[ActionSpec, ...] = (
    _spec(
        "newSessionAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "&New session"),
        QT_TRANSLATE_NOOP("Actions", "Start a new session in the project folder"),
        "Ctrl+N",
        icon="new-session",
    ),
    _spec(
        "chooseFolderAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "New session in another &folder…"),
        QT_TRANSLATE_NOOP("Actions", "Choose a project folder and start a session there"),
    ),
    _spec(
        "backupAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "&Back up all sessions…"),
        QT_TRANSLATE_NOOP("Actions", "Write every session into one archive"),
    ),
    _spec(
        "settingsAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "&Settings…"),
        QT_TRANSLATE_NOOP("Actions", "Providers, keys, models, approvals, theme"),
        "Ctrl+,",
        icon="settings",
    ),
    _spec(
        "quitAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "&Quit"),
        QT_TRANSLATE_NOOP("Actions", "Save everything and quit"),
        "Ctrl+Q",
    ),
    _spec(
        "renameAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Rename…"),
        QT_TRANSLATE_NOOP("Actions", "Rename the open session"),
        "F2",
    ),
    _spec(
        "forkAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Fork into a new session"),
        QT_TRANSLATE_NOOP("Actions", "Copy the current branch into a new session"),
    ),
    _spec(
        "copyIntoOursAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Copy into Desktop Agent"),
        QT_TRANSLATE_NOOP("Actions", "Make your own copy of this Pi session and open it"),
    ),
    _spec(
        "convertAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Con&vert to the current format"),
        QT_TRANSLATE_NOOP(
            "Actions", "Write a new file in the current format beside this old one, and open it"
        ),
    ),
    _spec(
        "compactAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Co&mpact now"),
        QT_TRANSLATE_NOOP(
            "Actions", "Summarise the conversation so far to free context (/compact)"
        ),
    ),
    _spec(
        "trashAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Move to trash"),
        QT_TRANSLATE_NOOP("Actions", "Move the open session to the trash (restorable)"),
    ),
    _spec(
        "refreshModelsAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "Refresh &models"),
        QT_TRANSLATE_NOOP(
            "Actions", "List the models of your servers again (one started after the app)"
        ),
    ),
    _spec(
        "editLastAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Edit message"),
        QT_TRANSLATE_NOOP("Actions", "Edit the focused prompt (or the last one) and send it again"),
        "Ctrl+E",
        icon="edit",
    ),
    _spec(
        "retryAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Re&generate"),
        QT_TRANSLATE_NOOP(
            "Actions", "A new version of the last answer (a failed request is sent again)"
        ),
        "Ctrl+R",
        icon="retry",
    ),
    _spec(
        "copyMessageAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Copy message"),
        QT_TRANSLATE_NOOP("Actions", "Copy the focused message (or the last reply)"),
        "Ctrl+Shift+C",
        icon="copy",
    ),
    _spec(
        "previousVersionAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Previous version"),
        QT_TRANSLATE_NOOP("Actions", "Show the previous version of the message (sibling branch)"),
        "Alt+Left",
        icon="previous",
    ),
    _spec(
        "nextVersionAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Next version"),
        QT_TRANSLATE_NOOP("Actions", "Show the next version of the message (sibling branch)"),
        "Alt+Right",
        icon="next",
    ),
    _spec(
        "mapPreviousVersionAction",
        "map",
        QT_TRANSLATE_NOOP("Actions", "Previous version at the fork (branch map)"),
        QT_TRANSLATE_NOOP(
            "Actions", "Switch to the previous version at the selected row's fork, as ‹ does"
        ),
        "[",
    ),
    _spec(
        "mapNextVersionAction",
        "map",
        QT_TRANSLATE_NOOP("Actions", "Next version at the fork (branch map)"),
        QT_TRANSLATE_NOOP(
            "Actions", "Switch to the next version at the selected row's fork, as › does"
        ),
        "]",
    ),
    _spec(
        "mapPreviousForkAction",
        "map",
        QT_TRANSLATE_NOOP("Actions", "Previous fork point (branch map)"),
        QT_TRANSLATE_NOOP("Actions", "Select the fork above the selected row, along its line"),
        "Alt+Up",
    ),
    _spec(
        "mapNextForkAction",
        "map",
        QT_TRANSLATE_NOOP("Actions", "Next fork point (branch map)"),
        QT_TRANSLATE_NOOP("Actions", "Select the fork below the selected row, along its line"),
        "Alt+Down",
    ),
    _spec(
        "mapLabelAction",
        "map",
        QT_TRANSLATE_NOOP("Actions", "Label the selected entry (branch map)"),
        QT_TRANSLATE_NOOP("Actions", "Set, edit or remove the label of the selected row"),
        "F2",
    ),
    _spec(
        "sidebarAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Session &list"),
        QT_TRANSLATE_NOOP("Actions", "Show or hide the session list"),
        "Ctrl+B",
        icon="sidebar",
        check=True,
    ),
    _spec(
        "mapAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Branch &map"),
        QT_TRANSLATE_NOOP("Actions", "Show or hide the branch map"),
        "Ctrl+T",
        icon="map",
        check=True,
    ),
    _spec(
        "contextAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "&Context"),
        QT_TRANSLATE_NOOP(
            "Actions", "What the model is told: the system prompt and its files (/context)"
        ),
        icon="context",
    ),
    _spec(
        "searchAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Search sessions"),
        QT_TRANSLATE_NOOP("Actions", "Search the titles and contents of all sessions"),
        "Ctrl+K",
        icon="search",
    ),
    _spec(
        "findAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "&Find in conversation"),
        QT_TRANSLATE_NOOP("Actions", "Find text in this conversation, each hit marked"),
        "Ctrl+F",
    ),
    _spec(
        "composerAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Write a message"),
        QT_TRANSLATE_NOOP("Actions", "Move the keyboard focus to the message box"),
        "Ctrl+L",
    ),
    _spec(
        "nextPaneAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Next pane"),
        QT_TRANSLATE_NOOP("Actions", "Sessions, conversation, message box, branch map"),
        "F6",
        "Ctrl+Tab",
    ),
    _spec(
        "previousPaneAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Previous pane"),
        QT_TRANSLATE_NOOP("Actions", "The same panes, backwards"),
        "Shift+F6",
        "Ctrl+Shift+Tab",
    ),
    _spec(
        "shortcutsAction",
        "help",
        QT_TRANSLATE_NOOP("Actions", "&Keyboard shortcuts"),
        QT_TRANSLATE_NOOP("Actions", "Every key of the window"),
        "F1",
        "Ctrl+/",
        icon="help",
    ),
    _spec(
        "aboutAction",
        "help",
        QT_TRANSLATE_NOOP("Actions", "&About Desktop Agent"),
        QT_TRANSLATE_NOOP("Actions", "The version of the app"),
    ),
)

KEYS: tuple[tuple[str, str], ...] = (
    (
        QT_TRANSLATE_NOOP("Actions", "Enter (or Ctrl+Enter, see Settings)"),
        QT_TRANSLATE_NOOP("Actions", "Send the message"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Shift+Enter"),
        QT_TRANSLATE_NOOP("Actions", "New line in the message"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Esc"),
        QT_TRANSLATE_NOOP("Actions", "Stop the agent while it runs"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Tab / Shift+Tab"),
        QT_TRANSLATE_NOOP("Actions", "Next / previous control"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Up / Down"),
        QT_TRANSLATE_NOOP("Actions", "Move through sessions, messages, the map"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Enter (in a list or the map)"),
        QT_TRANSLATE_NOOP("Actions", "Open / go to that point"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Ctrl+Enter (editing)"),
        QT_TRANSLATE_NOOP("Actions", "Send the edited message"),
    ),
)
"""Keys handled by the widgets themselves, listed on the shortcuts sheet too."""

MENUS: tuple[tuple[str, str], ...] = (
    ("file", QT_TRANSLATE_NOOP("Actions", "&File")),
    ("session", QT_TRANSLATE_NOOP("Actions", "&Session")),
    ("view", QT_TRANSLATE_NOOP("Actions", "&View")),
    ("help", QT_TRANSLATE_NOOP("Actions", "&Help")),
)


def shortcut_rows() -> list[tuple[str, str]]:
    """(keys, what they do) of the shortcuts sheet, translated, from the one table."""
    rows = []
    for spec in ACTIONS:
        if spec.shortcuts:
            keys = " / ".join(
                QKeySequence(k).toString(QKeySequence.SequenceFormat.NativeText)
                for k in spec.shortcuts
            )
            rows.append((keys, tr(spec.text).replace("&", "").rstrip("…")))
    rows.extend((tr(keys), tr(what)) for keys, what in KEYS)
    return rows


def _bind_signals(w: MainWindow) -> None:
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
    map_pane.previews_needed.connect(lambda ids: run(w.hits.load_previews(ids)))
    map_pane.model().tooltip_source = wb.map_tooltip
    sidebar.session_activated.connect(lambda ref: run(w.hits.open_from_list(ref)))
    sidebar.new_session_requested.connect(lambda: run(w.new_session()))
    sidebar.search_changed.connect(lambda query: run(w.hits.search(query)))
    sidebar.rename_requested.connect(op(wb.rename))
    sidebar.fork_requested.connect(op(wb.fork))
    sidebar.delete_requested.connect(op(wb.trash))
    sidebar.restore_requested.connect(op(wb.restore_from_trash))
    sidebar.purge_requested.connect(
        lambda ref: run(w.do(wb.delete_for_good([ref] if ref else None)))
    )
    sidebar.export_requested.connect(lambda ref, fmt: run(w.export(ref, fmt)))
    sidebar.reveal_requested.connect(w.reveal)
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


def _slots(w: MainWindow) -> dict[str, Callable[[], Any]]:
    wb = w.wb
    run = w.spawn

    def current(fn: Callable[[str], Any]) -> Callable[[], None]:
        return lambda: fn(wb.ref) if wb.ref else None

    return {
        "newSessionAction": lambda: run(w.new_session()),
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


def install_actions(w: MainWindow) -> dict[str, QAction]:
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
        action = QAction(tr(spec.text), w)
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


def _fill_menus(w: MainWindow, menus: dict[str, QMenu], actions: dict[str, QAction]) -> None:
    groups = {
        "file": ["newSessionAction", "chooseFolderAction", "", "backupAction",
                 "settingsAction", "refreshModelsAction", "", "quitAction"],
        "session": ["renameAction", "forkAction", "export", "copyIntoOursAction",
                    "convertAction", "compactAction", "", "trashAction", "",
                    "editLastAction", "retryAction", "copyMessageAction", "",
                    "previousVersionAction", "nextVersionAction"],
        "view": ["sidebarAction", "mapAction", "contextAction", "", "findAction",
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


def _export_menu(w: MainWindow, parent: QWidget) -> QMenu:
    menu = QMenu(QCoreApplication.translate("Actions", "&Export"), parent)
    menu.setObjectName("exportSessionMenu")
    for fmt, text in EXPORT_FORMATS:
        action = menu.addAction(QCoreApplication.translate("SessionSidebar", text))
        action.setObjectName(f"exportAction_{fmt}")
        action.triggered.connect(
            lambda _c=False, fmt=fmt: w.spawn(w.export(w.wb.ref, fmt)) if w.wb.ref else None
        )
    return menu


def _toolbar(w: MainWindow, actions: dict[str, QAction]) -> QToolBar:
    bar = QToolBar(QCoreApplication.translate("Actions", "Toolbar"), w)
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


def sync_toggles(w: MainWindow, actions: dict[str, QAction]) -> None:
    """The checked state of the pane toggles is whether the pane is shown."""
    actions["sidebarAction"].setChecked(not w.sidebar.isHidden())
    actions["mapAction"].setChecked(not w.map_pane.isHidden())


def sync_session_actions(w: MainWindow, actions: dict[str, QAction]) -> None:
    """Copy-in is for a Pi session, Convert for a file of an old format version."""
    wb = w.wb
    pi = wb.is_pi(wb.ref)
    old = wb.session is not None and wb.session.metadata.format_version < 3
    for name, applies in (("copyIntoOursAction", pi), ("convertAction", old)):
        actions[name].setEnabled(applies)
        actions[name].setVisible(applies)  # not shown where it never applies (p10)


def refresh_icons(w: MainWindow, actions: dict[str, QAction]) -> None:
    """(Re)tint every icon for the current palette (after a theme switch)."""
    palette = palette_of(w)
    for spec in ACTIONS:
        if spec.icon:
            actions[spec.name].setIcon(icon(spec.icon, palette))
    w.export_button.setIcon(icon("export", palette))
    sync_toggles(w, actions)
