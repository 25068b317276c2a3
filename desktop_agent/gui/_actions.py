"""What a person can do in the main window: its menus, shortcuts and widget signals, each
bound to one workbench operation (one route per action)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from desktop_agent.gui.sidebar import EXPORT_FORMATS

if TYPE_CHECKING:
    from desktop_agent.gui._main_window import MainWindow


def _action(
    window: MainWindow,
    menu: QMenu,
    text: str,
    name: str,
    slot: Callable[[], Any],
    shortcut: str | None = None,
) -> QAction:
    action = menu.addAction(text)
    action.setObjectName(name)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(lambda _checked=False: slot())
    window.addAction(action)  # shortcuts work even when the menu bar is hidden
    return action


def install_actions(w: MainWindow) -> None:
    """Bind every widget signal, menu entry and shortcut of ``w`` to the workbench."""
    wb = w.wb
    run = w.spawn
    do = w.do

    def op(make: Callable[..., Any]) -> Callable[..., object]:
        return lambda *args: run(do(make(*args)))

    composer, chat, tree, sidebar = w.composer, w.chat, w.tree, w.sidebar
    composer.send_requested.connect(lambda text, atts: run(w.send(text, atts)))
    composer.steer_requested.connect(op(wb.steer))
    composer.follow_up_requested.connect(op(wb.follow_up))
    composer.stop_requested.connect(op(wb.stop))
    composer.model_chosen.connect(op(wb.choose_model))
    composer.thinking_chosen.connect(op(wb.choose_thinking))
    composer.draft_changed.connect(w.on_draft)
    chat.sibling_requested.connect(op(wb.switch_sibling))
    chat.edit_resend_requested.connect(lambda e, t: run(w.edit_resend(e, t)))
    chat.retry_requested.connect(op(wb.retry))
    tree.node_activated.connect(op(wb.navigate))
    tree.summarize_requested.connect(op(lambda e: wb.navigate(e, summarize=True)))
    tree.label_requested.connect(op(wb.set_label))
    sidebar.session_activated.connect(op(wb.open))
    sidebar.new_session_requested.connect(lambda: run(w.new_session()))
    sidebar.search_changed.connect(op(wb.refresh_sessions))
    sidebar.rename_requested.connect(op(wb.rename))
    sidebar.fork_requested.connect(op(wb.fork))
    sidebar.delete_requested.connect(op(wb.trash))
    sidebar.restore_requested.connect(op(wb.restore_from_trash))
    sidebar.export_requested.connect(lambda ref, fmt: run(w.export(ref, fmt)))
    sidebar.reveal_requested.connect(w.reveal)
    sidebar.backup_requested.connect(lambda: run(w.backup()))
    sidebar.copy_requested.connect(op(wb.copy_into_ours))
    w.notices.action_requested.connect(op(wb.notice_action))
    w.notices.dismissed.connect(op(wb.dismiss))
    w.start_page.choose_workspace.connect(lambda: run(w.choose_workspace()))
    w.start_page.open_settings.connect(lambda: run(w.settings()))

    bar = w.menuBar()
    bar.setObjectName("menuBar")
    file = bar.addMenu("&File")
    file.setObjectName("fileMenu")
    _action(w, file, "&New session", "newSessionAction", lambda: run(w.new_session()), "Ctrl+N")
    _action(
        w, file, "New session in another &folder…", "chooseFolderAction",
        lambda: run(w.choose_workspace()),
    )  # fmt: skip
    file.addSeparator()
    _action(w, file, "&Back up all sessions…", "backupAction", lambda: run(w.backup()))
    _action(w, file, "&Settings…", "settingsAction", lambda: run(w.settings()), "Ctrl+,")
    file.addSeparator()
    _action(w, file, "&Quit", "quitAction", w.request_quit, "Ctrl+Q")

    session = bar.addMenu("&Session")
    session.setObjectName("sessionMenu")

    def current(fn: Callable[[str], Any]) -> Callable[[], None]:
        return lambda: fn(wb.ref) if wb.ref else None

    _action(w, session, "&Rename…", "renameAction", current(sidebar.rename_session))
    _action(w, session, "&Fork into a new session", "forkAction", current(op(wb.fork)))
    export = session.addMenu("&Export")
    for fmt, text in EXPORT_FORMATS:

        def export_as(ref: str, fmt: str = fmt) -> object:
            return run(w.export(ref, fmt))

        _action(w, export, text, f"exportAction_{fmt}", current(export_as))
    tr = QCoreApplication.translate
    copy_in = _action(
        w, session, tr("MainWindow", "&Copy into Desktop Agent"), "copyIntoOursAction",
        current(op(wb.copy_into_ours)),
    )  # fmt: skip
    convert = _action(
        w, session, tr("MainWindow", "Con&vert to the current format"), "convertAction",
        current(op(wb.convert)),
    )  # fmt: skip

    def session_menu_shown() -> None:
        copy_in.setEnabled(wb.is_pi(wb.ref))
        convert.setEnabled(wb.session is not None and wb.session.metadata.format_version < 3)

    session.aboutToShow.connect(session_menu_shown)
    session_menu_shown()
    session.addSeparator()
    _action(w, session, "&Move to trash", "trashAction", current(op(wb.trash)))
    session.addSeparator()
    _action(w, session, "Previous version", "previousVersionAction",
            op(lambda: wb.switch_sibling_at_end(-1)), "Alt+Left")  # fmt: skip
    _action(w, session, "Next version", "nextVersionAction",
            op(lambda: wb.switch_sibling_at_end(1)), "Alt+Right")  # fmt: skip

    view = bar.addMenu("&View")
    view.setObjectName("viewMenu")
    _action(w, view, "Search sessions", "searchAction", sidebar.focus_search, "Ctrl+K")
    _action(w, view, "Write a message", "composerAction", w.focus_composer_now, "Ctrl+L")
    toggle = _action(w, view, "Branch tree", "treeAction", w.toggle_tree, "Ctrl+T")
    toggle.setCheckable(True)
    toggle.setChecked(True)
    view.aboutToShow.connect(lambda: toggle.setChecked(not w.tree.isHidden()))
