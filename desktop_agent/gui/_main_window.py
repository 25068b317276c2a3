"""The main window: sidebar | chat + composer | branch map. It lays out and binds.

Every action goes to the `Workbench` (built by the composition root, app.py), whose
`Changes` the `Presenter` draws; the window keeps only what is Qt's: geometry, focus,
dialogs and the quit sequence.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QToolBar,
    QToolButton,
    QWidget,
)

from desktop_agent.gui._actions import install_actions, refresh_icons
from desktop_agent.gui._commands import run_command
from desktop_agent.gui._composer import Composer
from desktop_agent.gui._dialogs import Dialogs
from desktop_agent.gui._file_changes import show_branch_changes, show_turn_changes
from desktop_agent.gui._keyboard import ChatActions, PaneCycler, set_tab_order, tab_chain
from desktop_agent.gui._layout import build_panes, geometry, restore_geometry
from desktop_agent.gui._mcp import add_settings_row, install_mcp_menu
from desktop_agent.gui._notify import DesktopNotifier
from desktop_agent.gui._panels import NoticeBar, StartPage, StatusBar, name_widgets
from desktop_agent.gui._presenter import Presenter
from desktop_agent.gui._quit import shut_down
from desktop_agent.gui._save_as import back_up, export_session, save_copy
from desktop_agent.gui._search import HitNavigator
from desktop_agent.gui._theme import FocusRing, ThemeManager
from desktop_agent.gui._warm_up import WarmUp
from desktop_agent.gui._windows import Windows
from desktop_agent.gui._zoom import TextZoom
from desktop_agent.gui.chat import ChatPane
from desktop_agent.gui.map import MapPane
from desktop_agent.gui.sidebar import SessionSidebar
from desktop_agent.session import SessionError
from desktop_agent.workbench import Attachment, Changes, HarnessError, Workbench, WorkbenchError

log = logging.getLogger("desktop_agent.gui")


class MainWindow(QMainWindow):
    """Sessions | chat + composer | branch map; menus, toolbar, status bar, notices.

    Its helpers see it through declared surfaces only: `gui._ports` (`Ops`,
    `PresenterView`) and `gui._window_api.WindowApi` (the binding root's view)."""

    sidebar: SessionSidebar
    chat: ChatPane
    composer: Composer
    map_pane: MapPane
    """The branch map pane (objectName ``branchPane``)."""
    start_page: StartPage
    notices: NoticeBar
    status: StatusBar
    center: QStackedWidget
    chat_box: QWidget
    splitter: QSplitter
    export_button: QToolButton
    """The toolbar's Export button (set by `install_actions`)."""
    shown = Signal()
    closed = Signal()
    """Emitted once the window has really closed (after everything was saved)."""

    def __init__(
        self,
        workbench: Workbench,
        *,
        no_err_windows: bool = False,
        warm_up: bool = True,
        view: int = 0,
        windows: Windows | None = None,
    ) -> None:
        super().__init__()
        self.wb = workbench
        self.view = view  # its view of the workbench: its own session (`gui._windows`)
        self.windows = windows or Windows(
            workbench,
            lambda v, ws: MainWindow(
                workbench, view=v, windows=ws, warm_up=False, no_err_windows=no_err_windows
            ),
        )
        self.windows.add(self)
        self.no_err_windows = no_err_windows
        self.exit_code = 0
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        # Before any widget exists, so the first paint already has the chosen theme.
        self.theme = ThemeManager.of(app, workbench.settings.theme)
        self.setWindowTitle(self.tr("Desktop Agent"))
        self.resize(1280, 800)
        self.dialogs = Dialogs(self, no_windows=no_err_windows)
        self.notifier = DesktopNotifier(self)
        self._tasks: set[asyncio.Task[Any]] = set()
        p = build_panes(self, workbench, self.spawn)
        self.sidebar, self.chat, self.composer, self.map_pane = (
            p.sidebar, p.chat, p.composer, p.map_pane
        )  # fmt: skip
        self.start_page, self.notices, self.status = p.start_page, p.notices, p.status
        self.center, self.chat_box, self.splitter = p.center, p.chat_box, p.splitter
        self.status_save = self.status.save
        self._shown_once = False
        self._closed_ok = False
        self._setting_text = False
        self.last_refusal = ""
        """Why the last operation could not be done (what Send says when it cannot send)."""
        self._warm = WarmUp(workbench.warm_up, self.restored, self.spawn, enabled=warm_up)
        self.presenter = Presenter(self, workbench, self, view_id=view)
        self.hits = HitNavigator(
            workbench, self, self.chat, self.map_pane, self.dialogs.ask_switch_branch
        )
        self.panes = PaneCycler(self._pane_order)
        self.chat_actions = ChatActions(
            self.chat,
            self.composer,
            self.status.showMessage,
            lambda step: self.spawn(self.do(workbench.switch_sibling_at_end(step))),
        )
        self.zoom = TextZoom(self.chat, self.composer, self._zoomed, self.status.showMessage)
        self.zoom.apply(workbench.state.chat_zoom)
        self.actions_by_name = install_actions(self)
        install_mcp_menu(self.menuBar(), workbench, self)
        self.dialogs.settings_rows = lambda dialog: add_settings_row(dialog, workbench, self)
        toolbar = self.findChild(QToolBar, "mainToolBar")
        set_tab_order(tab_chain(self.composer, toolbar, self.sidebar, self.chat, self.map_pane))
        name_widgets(self)
        self.focus_ring = FocusRing(self)
        restore_geometry(self, self.splitter, self.sidebar, self.map_pane, workbench)
        workbench.approvers[view] = self.dialogs.approve
        self.dialogs.test_server = workbench.test_server
        self._unsubscribe = workbench.subscribe(self.presenter.on_event, view)

    # ------------------------------------------------------------------ tasks

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run a coroutine on the loop, keep it alive, and report its failure."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("background task failed", exc_info=exc)
            self.dialogs.error(self.tr("Something went wrong"), f"{type(exc).__name__}: {exc}")

    async def do(self, op: Coroutine[Any, Any, Changes]) -> Changes | None:
        """Run a workbench operation; what cannot be done now becomes a notice. Returns
        once the views show its result."""
        self.wb.activate_view(self.view)  # what the person does here is about this window's
        try:
            changes = await op
        except (WorkbenchError, HarnessError, SessionError) as exc:
            text = getattr(exc, "message", str(exc))
            if text not in self.wb.notice_texts():  # e.g. "no model", already said
                self.presenter.apply(self.wb.notify("error", text))
            self.last_refusal = text
            changes = None
        await self.presenter.settled()
        return changes

    async def drawn(self) -> None:
        """Once every redraw the workbench asked for so far is painted."""
        await self.presenter.settled()

    async def settle_tasks(self, *, but_warm_up: bool = False) -> None:
        """Wait for the window's other tasks and redraws (``but_warm_up``: not for the
        SDK imports after the first paint, which run on a thread)."""
        me = asyncio.current_task()
        skip = {me, self._warm.task if but_warm_up else None}
        while others := [t for t in self._tasks if t not in skip]:
            await asyncio.wait(others)
        await self.presenter.settled()

    @property
    def messages_shown(self) -> int:
        return self.presenter.messages_shown

    # ------------------------------------------------------------------ Qt bits

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            QTimer.singleShot(0, self, self._first_paint_done)

    def _first_paint_done(self) -> None:
        log.info("The window is shown")
        self.presenter.shown()
        if self.view == 0:
            self.wb.start_mcp()  # servers start in the background, after the first paint
        self._warm.start()  # the SDK imports, once the restored session is settled
        self.shown.emit()

    @property
    def warm_up(self) -> asyncio.Task[Any] | None:
        """The SDK imports (`gui._warm_up`), once started."""
        return self._warm.task

    async def restored(self) -> None:
        """Once the restored session is settled: the models listed (its model may come
        from a server still being listed), a big session never seen read (after the first
        paint), the workbench's work done (e.g. the harness restarted for the listed local
        model) and every redraw painted. Not the window's own tasks (`settle_tasks`)."""
        await self.wb.models.settled()
        await self.wb.opened()
        await self.wb.settled()
        await self.presenter.settled()

    async def warmed_up(self) -> None:
        """Once the start-up warm-up is over (`WarmUp.done`)."""
        await self._warm.done()

    def show_session(self, shown: bool) -> None:
        self.center.setCurrentWidget(self.chat_box if shown else self.start_page)

    def _pane_order(self) -> list[QWidget]:
        """F6 / Ctrl+Tab: sessions -> conversation -> message box -> branch map."""
        if self.center.currentWidget() is self.chat_box:
            return [self.sidebar, self.chat, self.composer, self.map_pane]
        return [self.sidebar, self.start_page, self.map_pane]

    def focus_composer(self) -> None:
        """Keyboard focus to the composer (unless the user is moving through the list)."""
        if not self.sidebar.view.hasFocus():
            self.focus_composer_now()

    def focus_composer_now(self) -> None:
        self.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)

    def set_composer_text(self, text: str) -> None:
        self._setting_text = True
        try:
            self.composer.set_text(text)
        finally:
            self._setting_text = False

    def on_draft(self, text: str) -> None:
        if not self._setting_text:
            self.wb.set_draft(text)

    def remember_geometry(self) -> None:
        """The first window's geometry is kept (others cascade from the last one)."""
        if self.view == 0:
            self.wb.remember(**geometry(self, self.splitter, self.sidebar, self.map_pane))

    def bring_forward(self) -> None:
        self.showNormal()
        self.raise_()
        self.activateWindow()

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch reaches every widget as a PaletteChange (after the application
        palette changed, on a later turn of the loop): the icons are tinted again then."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "actions_by_name"):
            refresh_icons(self, self.actions_by_name)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            self.wb.activate_view(self.view)  # operations act on this window's session

    def event(self, event: QEvent) -> bool:
        """On a screen with another device pixel ratio the icons are made again, with
        the pictures that screen needs (`_icons.sizes`: no 2x ones on 1x screens)."""
        if event.type() == QEvent.Type.DevicePixelRatioChange and hasattr(self, "actions_by_name"):
            refresh_icons(self, self.actions_by_name)
            self.composer.tint()
            self.sidebar.tint()
        return super().event(event)

    def _toggle(self, pane: QWidget) -> None:
        """Show or hide a side pane; focus leaves a pane that goes away; remembered."""
        show = pane.isHidden()
        focus = QApplication.focusWidget()
        had_focus = focus is not None and pane.isAncestorOf(focus)
        pane.setVisible(show)
        if had_focus:
            self.focus_composer_now()
        refresh_icons(self, self.actions_by_name)
        self.remember_geometry()

    def _zoomed(self, percent: int) -> None:
        """The text size changed here: kept, and the app's other windows follow (p15)."""
        self.wb.remember(chat_zoom=percent)
        for other in self.windows.windows:
            if other is not self and isinstance(other, MainWindow):
                other.zoom.apply(percent)

    def toggle_map(self) -> None:
        self._toggle(self.map_pane)

    def toggle_sidebar(self) -> None:
        self._toggle(self.sidebar)

    def focus_search(self) -> None:
        if self.sidebar.isHidden():
            self._toggle(self.sidebar)
        self.sidebar.focus_search()

    # ------------------------------------------------------------------ actions

    async def restore(
        self, target: str | None = None, *, new: bool = False, workspace: str | None = None
    ) -> None:
        await self.do(self.wb.restore(target, new=new, workspace=workspace))

    async def open_session(self, ref: str) -> None:
        await self.do(self.wb.open(ref))

    async def new_session(self, cwd: str | None = None) -> None:
        if cwd is None and self.wb.default_workspace() is None:
            cwd = await self.dialogs.ask_folder(self.tr("Choose the project folder"))
            if not cwd:
                return
        await self.do(self.wb.new_session(cwd))
        self.focus_composer()

    async def choose_workspace(self) -> None:
        folder = await self.dialogs.ask_folder(self.tr("Choose the project folder"))
        if folder:
            await self.new_session(folder)

    async def send(self, text: str, attachments: list[Attachment] | None = None) -> None:
        if not attachments and await run_command(self, text):
            return  # one of the app's commands (/new, /compact, /context, …)
        if await self.do(self.wb.send(text, attachments or [])) is None:
            if not self.composer.text():  # not sent (e.g. no model yet): nothing typed is lost
                self.set_composer_text(text)
            self.status.showMessage(self.tr("Not sent: %s") % self.last_refusal, 10_000)

    async def edit_resend(self, entry_id: str, text: str) -> None:
        self.focus_composer()
        if await self.do(self.wb.edit_resend(entry_id, text)) is None and not self.composer.text():
            self.set_composer_text(text)

    async def show_file_changes(self, entry_id: str) -> None:
        await show_turn_changes(self, self.wb, self, self.dialogs, entry_id)

    async def show_branch_changes(self) -> None:
        await show_branch_changes(self, self.wb, self, self.dialogs)

    async def settings(self) -> None:
        form = await self.dialogs.settings(await self.wb.settings_form_sized())
        if form is not None:
            self.composer.set_send_key(form.send_key)
            self.chat.delegate.send_key = form.send_key
            self.theme.set_mode(form.theme)
            await self.do(self.wb.apply_settings(form))

    async def export(self, ref: str, fmt: str) -> None:
        await export_session(self.wb, self, self.dialogs, ref, fmt)

    async def backup(self) -> None:
        await back_up(self.wb, self, self.dialogs)

    async def save_copy(self) -> bool:
        return await save_copy(self.wb, self, self.dialogs)

    def reveal(self, path: str) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(os.path.dirname(path)))

    # ------------------------------------------------------------------ quitting

    def ask_stop_or_wait(self) -> str:
        """Entry point tests replace: "stop", "wait" or "cancel" (for every run)."""
        return self.dialogs.stop_or_wait(self.wb.runs_active)

    def closeEvent(self, event: QCloseEvent) -> None:
        """A window closes alone while others are open (its run goes on); the last one
        quits the app."""
        alone = not self._closed_ok and self.windows.close_alone(self)
        if self._closed_ok or alone:
            event.accept()
            self._unsubscribe()
            self.wb.approvers.pop(self.view, None)
            self.closed.emit()
            return
        event.ignore()
        self.request_quit()

    def close_for_good(self) -> None:
        self._closed_ok = True
        self.close()

    def request_quit(self, *, ask: bool = True) -> None:
        """Quit (every window) as closing the last window does; ``ask=False`` (SIGTERM,
        --smoke) stops the runs instead of asking, and keeps unsaved entries in a
        recovery file."""
        self.windows.request_quit(ask=ask)

    async def shut_down(self, *, stop: bool, ask: bool) -> int | None:
        """Settle the runs, write and sync everything (`gui._quit`); None: the person
        keeps the app open. Run by `Windows.request_quit` in the window in use."""
        self._warm.cancel()
        ask = ask and not self.no_err_windows
        return await shut_down(self.wb, self, self.dialogs, self.save_copy, stop=stop, ask=ask)
