"""The main window: sidebar | chat + composer | branch map. It lays out and binds.

Every action goes to the `Workbench` (built by the composition root, app.py), whose
`Changes` the `Presenter` draws; the window keeps only what is Qt's: geometry, focus,
dialogs and the quit sequence.
"""

from __future__ import annotations

import asyncio
import base64
import linecache
import logging
import os
import sys
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._actions import install_actions, refresh_icons
from desktop_agent.gui._commands import run_command
from desktop_agent.gui._composer import Composer
from desktop_agent.gui._dialogs import Dialogs
from desktop_agent.gui._file_changes import FileChangesDialog
from desktop_agent.gui._keyboard import ChatActions, PaneCycler, set_tab_order
from desktop_agent.gui._mcp import install_mcp_menu
from desktop_agent.gui._notify import DesktopNotifier
from desktop_agent.gui._panels import NoticeBar, StartPage, StatusBar, name_widgets
from desktop_agent.gui._presenter import Presenter
from desktop_agent.gui._search import HitNavigator
from desktop_agent.gui._theme import FocusRing, ThemeManager
from desktop_agent.gui.chat import ChatPane
from desktop_agent.gui.map import MapPane
from desktop_agent.gui.sidebar import SessionSidebar
from desktop_agent.session import SessionError
from desktop_agent.workbench import (
    EXPORT_FILTERS,
    SHOW_CHANGES,
    Attachment,
    Changes,
    HarnessError,
    Workbench,
    WorkbenchError,
    export_file_name,
)

log = logging.getLogger("desktop_agent.gui")


class MainWindow(QMainWindow):
    """Sessions | chat + composer | branch map; menus, toolbar, status bar, notices."""

    export_button: QToolButton
    """The toolbar's Export button (set by `install_actions`)."""
    shown = Signal()
    closed = Signal()
    """Emitted once the window has really closed (after everything was saved)."""

    def __init__(
        self, workbench: Workbench, *, no_err_windows: bool = False, warm_up: bool = True
    ) -> None:
        super().__init__()
        self.wb = workbench
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
        self.sidebar = SessionSidebar(self)
        self.chat = ChatPane(self)
        self.composer = Composer(self)
        self.composer.set_send_key(workbench.settings.send_key)
        self.chat.delegate.send_key = workbench.settings.send_key
        self.map_pane = MapPane(self)
        self.start_page = StartPage(self)
        self.notices = NoticeBar(self)
        self.status = StatusBar(self)
        self.status_save = self.status.save
        self.center = QStackedWidget(self)
        self.chat_box = QWidget(self)
        chat_layout = QVBoxLayout(self.chat_box)
        chat_layout.setContentsMargins(0, 0, 0, 0)
        chat_layout.addWidget(self.chat, 1)
        chat_layout.addWidget(self.composer)
        self.center.addWidget(self.start_page)
        self.center.addWidget(self.chat_box)
        middle = QWidget(self)
        middle_layout = QVBoxLayout(middle)
        middle_layout.setContentsMargins(0, 0, 0, 0)
        middle_layout.addWidget(self.notices)
        middle_layout.addWidget(self.center, 1)
        self.splitter = QSplitter(self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(middle)
        self.splitter.addWidget(self.map_pane)
        self.splitter.setSizes([260, 760, 260])
        self.setCentralWidget(self.splitter)
        self.setStatusBar(self.status)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._shown_once = False
        self._quitting = False
        self._closed_ok = False
        self._setting_text = False
        self.last_refusal = ""
        """Why the last operation could not be done (what Send says when it cannot send)."""
        self.warm_up: asyncio.Task[Any] | None = None
        self._warm_up_waiter: asyncio.Task[None] | None = None
        self._warm_up_enabled = warm_up
        self.presenter = Presenter(self, workbench)
        self.hits = HitNavigator(self)
        self.panes = PaneCycler(self)
        self.chat_actions = ChatActions(self)
        self.actions_by_name = install_actions(self)
        install_mcp_menu(self)
        set_tab_order(self)
        name_widgets(self)
        self.focus_ring = FocusRing(self)
        self._restore_geometry()
        workbench.approver = self.dialogs.approve
        self.dialogs.test_server = workbench.test_server
        self._unsubscribe = workbench.subscribe(self.presenter.on_event)

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

    async def settle_tasks(self, *, but_warm_up: bool = False) -> None:
        """Wait for the window's other tasks and redraws (``but_warm_up``: not for the
        SDK imports after the first paint, which run on a thread)."""
        me = asyncio.current_task()
        skip = {me, self.warm_up if but_warm_up else None}
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
        self.wb.start_mcp()  # servers start in the background, after the first paint
        linecache.clearcache()  # see _warm_up_when_settled
        if self._warm_up_enabled:
            # Not one of the window's tasks while it waits: `settle_tasks` does not wait
            # for a big session's first read through it; `_quit` cancels it.
            self._warm_up_waiter = asyncio.ensure_future(self._warm_up_when_settled())
            self._warm_up_waiter.add_done_callback(self._waiter_done)
        self.shown.emit()

    def _waiter_done(self, task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("the SDK warm-up could not start", exc_info=exc)

    async def _warm_up_when_settled(self) -> None:
        """The first request's one-off work (importing the SDKs: seconds of CPU on a
        thread) once the restored session is settled, not during it: on the GIL it
        stretched the settling of a 100 MB session by a second.

        Sources read meanwhile (by tracebacks, warnings or an import hook; PySide6's own
        read every module imported after Qt until `gui._pyside_hook` made it cheap) are
        dropped from `linecache` once the SDKs are in: a traceback reads a file again when
        it needs it."""
        await self.restored()
        if not self._quitting:
            self.warm_up = self.spawn(self._warm_up())

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
        """Once the start-up warm-up is over: its wait for the settle, then the SDK
        imports (at once when the window has none; a failure is logged, not raised)."""
        if self._warm_up_waiter is not None:
            await asyncio.wait([self._warm_up_waiter])
        if self.warm_up is not None:
            await asyncio.wait([self.warm_up])

    async def _warm_up(self) -> None:
        try:
            await self.wb.warm_up()
        finally:
            linecache.clearcache()

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

    def _restore_geometry(self) -> None:
        state = self.wb.state
        self.map_pane.setVisible(state.map_visible)
        self.sidebar.setVisible(state.sidebar_visible)
        if state.splitter_state:
            self.splitter.restoreState(QByteArray(base64.b64decode(state.splitter_state)))
        if state.window_geometry:
            self.restoreGeometry(QByteArray(base64.b64decode(state.window_geometry)))

    def _remember_geometry(self) -> None:
        def b64(data: QByteArray) -> str:
            return base64.b64encode(bytes(data.data())).decode("ascii")

        self.wb.remember(
            window_geometry=b64(self.saveGeometry()),
            splitter_state=b64(self.splitter.saveState()),
            map_visible=not self.map_pane.isHidden(),
            sidebar_visible=not self.sidebar.isHidden(),
        )

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch reaches every widget as a PaletteChange (after the application
        palette changed, on a later turn of the loop): the icons are tinted again then."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "actions_by_name"):
            refresh_icons(self, self.actions_by_name)

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
        self._remember_geometry()

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
        """The Changes view of the turn a map row stands for (non-modal)."""
        changes = await self.wb.turn_changes(entry_id)
        if changes is not None:
            revert = self.wb.revert_changes
            self.dialogs.keep(
                FileChangesDialog(self, changes, lambda p: self.spawn(self.do(revert(changes, p))))
            )

    async def show_branch_changes(self) -> None:
        """The files bar's "Show changes": the files that differ from the branch, with
        their diffs (non-modal), besides the list in the bar."""
        await self.do(self.wb.notice_action(SHOW_CHANGES))
        changes = await self.wb.branch_changes()
        if changes is not None:
            restore = self.wb.restore_branch_files
            self.dialogs.keep(
                FileChangesDialog(
                    self, changes, lambda p: self.spawn(self.do(restore(p))), branch=True
                )
            )

    async def settings(self) -> None:
        form = await self.dialogs.settings(await self.wb.settings_form_sized())
        if form is not None:
            self.composer.set_send_key(form.send_key)
            self.chat.delegate.send_key = form.send_key
            self.theme.set_mode(form.theme)
            await self.do(self.wb.apply_settings(form))

    async def export(self, ref: str, fmt: str) -> None:
        row = self.wb.row_for(ref)  # named after the session, in its project folder (p11)
        name = export_file_name(row.title if row else "", fmt)
        there = row is not None and await asyncio.to_thread(os.path.isdir, row.cwd)
        suggested = os.path.join(row.cwd, name) if row is not None and there else name
        filters = EXPORT_FILTERS.get(fmt, "")
        dest = await self.dialogs.ask_save_path(self.tr("Export session"), suggested, filters)
        if dest:
            await self.do(self.wb.export(ref, fmt, dest))

    async def backup(self) -> None:
        dest = await self.dialogs.ask_save_path(
            self.tr("Back up all sessions"), "sessions-backup.zip", ""
        )
        if dest:
            await self.do(self.wb.backup(dest))

    async def save_copy(self) -> bool:
        dest = await self.dialogs.ask_save_path(
            self.tr("Save a copy of the session"), "", self.tr("JSONL (*.jsonl)")
        )
        if dest:
            await self.do(self.wb.save_copy(dest))
        return bool(dest)

    def reveal(self, path: str) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(os.path.dirname(path)))

    # ------------------------------------------------------------------ quitting

    def ask_stop_or_wait(self) -> str:
        """Entry point tests replace: "stop", "wait" or "cancel"."""
        return self.dialogs.stop_or_wait()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closed_ok:
            event.accept()
            self._unsubscribe()
            self.closed.emit()
            return
        event.ignore()
        self.request_quit()

    def request_quit(self, *, ask: bool = True) -> None:
        """Quit as closing the window does; ``ask=False`` (SIGTERM, --smoke) stops a run
        instead of asking, and keeps unsaved entries in a recovery file."""
        if self._quitting:
            return
        stop = not ask
        if ask and self.wb.runs_active:  # one question for every session's run
            choice = self.ask_stop_or_wait()
            if choice == "cancel":
                return
            stop = choice == "stop"
        self._quitting = True
        self.spawn(self._quit(stop=stop, ask=ask))

    async def _quit(self, *, stop: bool, ask: bool) -> None:
        """Settle the run, write and sync everything, save the state, then close."""
        if self._warm_up_waiter is not None:
            self._warm_up_waiter.cancel()
        self._remember_geometry()
        unsaved = await self.wb.shutdown(stop=stop)
        while unsaved:
            if not ask or self.no_err_windows:
                self._write_recovery(unsaved)
                break
            choice = await self.dialogs.quit_unsaved(unsaved)
            if choice == "retry":
                await self.do(self.wb.retry_saving())
            elif (choice == "copy" and await self.save_copy()) or choice == "quit":
                self.wb.abandon()
                break
            elif choice == "cancel":
                self._quitting = False
                return
            unsaved = await self.wb.shutdown(stop=True)
        self._closed_ok = True
        self.close()

    def _write_recovery(self, unsaved: int) -> None:
        try:
            path = self.wb.write_recovery()
        except OSError as exc:
            path = None
            sys.stderr.write(f"desktop-agent: the recovery file failed too: {exc}\n")
        if path:
            sys.stderr.write(f"desktop-agent: {unsaved} unsaved entries were written to {path}\n")
        self.exit_code = 1
        self.wb.abandon()
