"""The main window: sidebar | chat + composer | branch tree, and the controller that
connects them to the session, the harness and the dialogs.

Everything slow runs as asyncio tasks on the qasync loop (file reads and fsync go to
threads inside the session layer); widgets only render what the harness reports.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import html
import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QStatusBar,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.agent import (
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnStartEvent,
)
from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    Model,
    ModelRegistry,
    TextContent,
    ToolResultMessage,
    UserMessage,
    clamp_thinking_level,
    supported_thinking_levels,
    warm_up,
)
from desktop_agent.gui._branch import BranchItem, branch_items, is_visible, latest_leaf_under
from desktop_agent.gui._composer import Attachment, Composer
from desktop_agent.gui._dialogs import Dialogs
from desktop_agent.gui.chat import ChatItem, ChatPane
from desktop_agent.gui.sidebar import SessionRowData, SessionSidebar
from desktop_agent.gui.tree import BranchTree, rows_from_session
from desktop_agent.harness import (
    AgentHarness,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    HarnessError,
    HarnessEvent,
    PersistenceErrorEvent,
    PersistenceRestoredEvent,
    SavePointEvent,
    SessionCompactEvent,
    restore_settings,
)
from desktop_agent.session import (
    JsonlSessionRepo,
    Session,
    SessionError,
    SessionMetadata,
    SessionWriteError,
)
from desktop_agent.tools import ApprovalPolicy, Workspace, built_in_tools
from desktop_agent.utils import Redactor

log = logging.getLogger("desktop_agent.gui")


@dataclass
class AppServices:
    """Everything the window needs, built once by the composition root (app.py)."""

    repo: JsonlSessionRepo
    registry: ModelRegistry
    get_api_key: Callable[[Model], str | None]
    has_key: Callable[[Model], bool]
    forbidden_roots: list[Path]
    tool_output_dir: Path
    default_model: str | None = None
    default_thinking_level: str = "medium"
    approval_rules: dict[str, str] = field(default_factory=dict)
    send_key: str = "enter"
    index: Any = None
    """A `desktop_agent.session.SessionIndex` when available (sidebar titles, search)."""
    save_state: Callable[[dict[str, Any]], None] | None = None
    state: dict[str, Any] = field(default_factory=dict)
    open_settings: Callable[[MainWindow], Awaitable[None]] | None = None
    keystore_problem: str | None = None
    redactor: Redactor | None = None
    """Shared with the log filter: secrets (and the app's keys) redacted before saving."""


def _freeze_loaded_objects() -> None:
    """Collect once, then move everything alive out of the collector's generations."""
    gc.collect()
    gc.freeze()


def relative_title(meta: SessionMetadata) -> str:
    return Path(meta.cwd or "").name or (meta.cwd or "session")


class StartPage(QWidget):
    """First launch: how to add a provider or pick a local server, then a workspace."""

    choose_workspace = Signal()
    open_settings = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("startPage")
        text = QLabel(
            "<h2>Welcome to Desktop Agent</h2>"
            "<p>Work with an AI agent in a project folder: it reads, edits and runs things "
            "there, and every conversation is kept as a session you can branch and resume."
            "</p><p><b>1.</b> Add a provider: an OpenAI or Anthropic API key (kept in your "
            "system keychain), or a local OpenAI-compatible server such as Ollama or LM "
            "Studio.<br><b>2.</b> Choose the project folder the agent may work in.</p>"
        )
        text.setWordWrap(True)
        settings = QPushButton("Add a provider…", self)
        settings.setObjectName("startSettingsButton")
        settings.clicked.connect(self.open_settings.emit)
        folder = QPushButton("Choose a project folder…", self)
        folder.setObjectName("startWorkspaceButton")
        folder.clicked.connect(self.choose_workspace.emit)
        buttons = QHBoxLayout()
        buttons.addWidget(settings)
        buttons.addWidget(folder)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(text)
        layout.addLayout(buttons)
        layout.addStretch(2)


class MainWindow(QMainWindow):
    """Sidebar of sessions | chat pane + composer | branch tree; status bar."""

    shown = Signal()
    closed = Signal()
    """Emitted once the window has really closed (after everything was saved)."""

    def __init__(self, services: AppServices, *, no_err_windows: bool = False) -> None:
        super().__init__()
        # Provider requests, tree rows and index scans run on worker threads; a shorter
        # GIL switch interval (default 5 ms) hands the GIL back to this thread sooner, so
        # a busy worker delays a UI tick by ~1 ms per hand-off instead of 5 (measured:
        # 121 ms worst gap while a reply streamed into a 2,000-message session, 30 ms
        # with 1 ms).
        sys.setswitchinterval(0.001)
        self.services = services
        self.setWindowTitle("Desktop Agent")
        self.resize(1280, 800)
        self.dialogs = Dialogs(self, no_windows=no_err_windows)
        self.sidebar = SessionSidebar(self)
        self.chat = ChatPane(self)
        self.composer = Composer(self)
        self.composer.set_send_key(services.send_key)
        self.tree = BranchTree(self)
        self.start_page = StartPage(self)
        self.center = QStackedWidget(self)
        chat_box = QWidget(self)
        self.chat_box = chat_box
        chat_layout = QVBoxLayout(chat_box)
        chat_layout.setContentsMargins(0, 0, 0, 0)
        self.notice = QLabel(self)
        self.notice.setObjectName("noticeBar")
        self.notice.setWordWrap(True)
        self.notice.setVisible(False)
        self.undo_button = QPushButton("Undo", self)
        self.undo_button.setObjectName("undoButton")
        self.undo_button.setVisible(False)
        self.undo_button.clicked.connect(lambda: self.spawn(self.undo()))
        self._undo: Callable[[], Coroutine[Any, Any, None]] | None = None
        notice_row = QHBoxLayout()
        notice_row.addWidget(self.notice, 1)
        notice_row.addWidget(self.undo_button)

        chat_layout.addWidget(self.chat, 1)
        chat_layout.addWidget(self.composer)
        self.center.addWidget(self.start_page)
        self.center.addWidget(chat_box)
        self.splitter = QSplitter(self)
        self.splitter.addWidget(self.sidebar)
        middle = QWidget(self)
        middle_layout = QVBoxLayout(middle)
        middle_layout.setContentsMargins(0, 0, 0, 0)
        middle_layout.addLayout(notice_row)
        middle_layout.addWidget(self.center, 1)
        self.splitter.addWidget(middle)
        self.splitter.addWidget(self.tree)
        self.splitter.setSizes([260, 760, 260])
        self.setCentralWidget(self.splitter)

        status = QStatusBar(self)
        self.status_save = QLabel("", self)
        self.status_save.setObjectName("statusSave")
        self.status_usage = QLabel("", self)
        self.status_usage.setObjectName("statusUsage")
        self.status_context = QLabel("", self)
        self.status_context.setObjectName("statusContext")
        self.status_progress = QLabel("", self)
        self.status_progress.setObjectName("statusProgress")
        status.addWidget(self.status_progress, 1)
        status.addPermanentWidget(self.status_context)
        status.addPermanentWidget(self.status_usage)
        status.addPermanentWidget(self.status_save)
        self.setStatusBar(status)

        self.session: Session | None = None
        self.harness: AgentHarness | None = None
        self.messages_shown = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._run_task: asyncio.Task[Any] | None = None
        self._shown_once = False
        self._closing = False
        self._drafts: dict[str, str] = dict(services.state.get("drafts", {}))
        self._draft_key: str | None = None
        self._wire()

    # ----------------------------------------------------------------- wiring

    def _wire(self) -> None:
        self.shown.connect(lambda: self.spawn(self.render_tree()))
        self.shown.connect(lambda: self.spawn(self._warm_up()))
        self.composer.send_requested.connect(self._on_send)
        self.composer.steer_requested.connect(lambda t: self.spawn(self._steer(t)))
        self.composer.follow_up_requested.connect(lambda t: self.spawn(self._follow_up(t)))
        self.composer.stop_requested.connect(lambda: self.spawn(self.stop()))
        self.composer.model_chosen.connect(lambda k: self.spawn(self._choose_model(k)))
        self.composer.thinking_chosen.connect(lambda lv: self.spawn(self._choose_thinking(lv)))
        self.composer.draft_changed.connect(self._on_draft)
        self.chat.sibling_requested.connect(lambda e, d: self.spawn(self.switch_sibling(e, d)))
        self.chat.edit_resend_requested.connect(lambda e, t: self.spawn(self.edit_resend(e, t)))
        self.chat.retry_requested.connect(lambda: self.spawn(self.retry()))
        self.tree.node_activated.connect(lambda e: self.spawn(self.navigate(e)))
        self.tree.summarize_requested.connect(lambda e: self.spawn(self.navigate(e, True)))
        self.tree.label_requested.connect(lambda e, t: self.spawn(self.set_label(e, t)))
        self.sidebar.session_activated.connect(lambda p: self.spawn(self.open_session(p)))
        self.sidebar.new_session_requested.connect(lambda: self.spawn(self.new_session()))
        self.sidebar.search_changed.connect(lambda q: self.spawn(self.refresh_sessions(q)))
        self.sidebar.rename_requested.connect(lambda p, n: self.spawn(self.rename(p, n)))
        self.sidebar.fork_requested.connect(lambda p: self.spawn(self.fork(p)))
        self.sidebar.delete_requested.connect(lambda p: self.spawn(self.delete(p)))
        self.sidebar.restore_requested.connect(lambda p: self.spawn(self.restore_trash(p)))
        self.sidebar.export_requested.connect(lambda p, f: self.spawn(self.export(p, f)))
        self.sidebar.reveal_requested.connect(self._reveal)
        self.sidebar.backup_requested.connect(lambda: self.spawn(self.backup()))
        self.start_page.choose_workspace.connect(lambda: self.spawn(self.choose_workspace()))
        self.start_page.open_settings.connect(lambda: self.spawn(self.settings()))
        for keys, action in (
            ("Ctrl+N", lambda: self.spawn(self.new_session())),
            ("Ctrl+K", self.sidebar.focus_search),
            ("Ctrl+L", self.composer.input.setFocus),
            ("Alt+Left", lambda: self.spawn(self.switch_sibling_at_end(-1))),
            ("Alt+Right", lambda: self.spawn(self.switch_sibling_at_end(1))),
            ("Ctrl+T", lambda: self.tree.setVisible(not self.tree.isVisible())),
            ("Ctrl+,", lambda: self.spawn(self.settings())),
        ):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.activated.connect(action)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run a coroutine on the loop, keep it alive, and report its failure."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and (exc := t.exception()) is not None:
                if isinstance(exc, HarnessError | SessionError):
                    self.show_notice(str(exc))
                else:
                    log.error("background task failed", exc_info=exc)
                    self.dialogs.error("Something went wrong", f"{type(exc).__name__}: {exc}")

        task.add_done_callback(done)
        return task

    async def settle_tasks(self) -> None:
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            QTimer.singleShot(0, self, self.shown.emit)

    def show_notice(
        self, text: str | None, undo: Callable[[], Coroutine[Any, Any, None]] | None = None
    ) -> None:
        """A one-line notice above the chat, optionally with an Undo button."""
        self.notice.setText(text or "")
        self.notice.setVisible(bool(text))
        self._undo = undo
        self.undo_button.setVisible(undo is not None)

    async def undo(self) -> None:
        action, self._undo = self._undo, None
        self.show_notice(None)
        if action is not None:
            await action()

    # ----------------------------------------------------------------- sessions

    async def refresh_sessions(self, query: str | None = None) -> None:
        rows: list[SessionRowData] = []
        index = self.services.index
        if index is not None:
            try:
                for s in await index.sessions(query=query or None):
                    rows.append(
                        SessionRowData(
                            path=s.path,
                            id=s.id,
                            cwd=s.cwd or "",
                            title=s.title,
                            last_activity=s.last_activity or s.created_at,
                            problem=s.problem,
                        )
                    )
            except Exception:
                log.exception("session index failed; listing files instead")
                index = None
        if index is None:
            for meta in await self.services.repo.list():
                rows.append(
                    SessionRowData(
                        path=meta.path or "",
                        id=meta.id,
                        cwd=meta.cwd or "",
                        title=relative_title(meta),
                        last_activity=meta.created_at,
                    )
                )
        current = self.session.metadata.path if self.session else None
        self.sidebar.set_sessions(rows, current)

    async def restore_last(self, target: str | None) -> None:
        """Open ``target`` or the most recent session (of the last workspace if known)."""
        path = target
        if path is None:
            last = self.services.state.get("last_session_path")
            if isinstance(last, str) and await asyncio.to_thread(os.path.exists, last):
                path = last
        if path is None:
            index = self.services.index
            workspace = self.services.state.get("last_workspace")
            if index is not None:
                found = await index.sessions()
                if workspace:
                    found = [s for s in found if s.cwd == workspace] or found
                path = found[0].path if found else None
            else:
                listed = await self.services.repo.list(cwd=workspace) if workspace else []
                listed = listed or await self.services.repo.list()
                path = listed[0].path if listed else None
        if path is None:
            self.center.setCurrentWidget(self.start_page)
            return
        await self.open_session(path)

    async def open_session(self, target: str | SessionMetadata) -> None:
        path = target if isinstance(target, str) else (target.path or "")
        if self.session is not None and self.session.metadata.path == path:
            return
        if self.harness is not None and not self.harness.is_idle:
            self.show_notice("Stop the agent before switching sessions.")
            return
        await self.close_session()
        try:
            session = await self.services.repo.open(path)
        except SessionError as exc:
            self.dialogs.error("Could not open the session", exc.message)
            return
        self.session = session
        if session.recovery is not None:
            self.dialogs.damaged_session(
                path, session.recovery, lambda: self.spawn(self.repair(path))
            )
        await self._start_harness(session)
        await self.render_branch()
        self.center.setCurrentWidget(self.chat_box)
        self.status_save.setText("Read-only" if session.read_only else "Saved")
        self._remember(last_session_path=path, last_workspace=session.metadata.cwd)
        await self.refresh_sessions()
        # What a session load creates lives as long as the session: keep it out of later
        # full collections (which would pause the UI while replies stream). Done after
        # the next paint, so it never delays showing the session.
        QTimer.singleShot(0, self, _freeze_loaded_objects)

    async def _start_harness(self, session: Session) -> None:
        context = await session.build_context(lenient=True)
        has_thinking = any(
            session.entry_kind(i)[0] == "thinking_level_change"
            for i in session.branch_ids(lenient=True)
        )
        tool_names = [t.name for t in built_in_tools()]
        restored = restore_settings(
            context,
            self.services.registry,
            has_key=self.services.has_key,
            available_tools=tool_names,
            has_thinking_entry=has_thinking,
            default_model=self.services.default_model,
            default_thinking_level=self.services.default_thinking_level,
        )
        self.show_notice(restored.notice)
        self.harness = None
        model = restored.model
        if model is None:
            self._fill_pickers(None, "off")
            return
        cwd = session.metadata.cwd or os.getcwd()
        workspace: Workspace | None = None
        if await asyncio.to_thread(os.path.isdir, cwd):
            workspace = Workspace(cwd, forbidden_roots=self.services.forbidden_roots)
        policy = ApprovalPolicy(
            self.dialogs.approve,
            rules=dict(self.services.approval_rules),  # type: ignore[arg-type]
        )
        harness = AgentHarness(
            session=session,
            model=model,
            tools=built_in_tools() if workspace is not None else [],
            thinking_level=restored.thinking_level,
            active_tool_names=restored.active_tool_names,
            get_api_key=self.services.get_api_key,
            workspace=workspace,
            approval_policy=policy,
            tool_output_dir=self.services.tool_output_dir,
            redactor=self.services.redactor,
        )
        harness.subscribe(self._on_event)
        self.harness = harness
        if workspace is None:
            self.show_notice(
                f"The project folder {cwd} does not exist here: the agent can chat but "
                "not use its tools."
            )
        self._fill_pickers(model, restored.thinking_level)

    def _fill_pickers(self, model: Model | None, level: str) -> None:
        models = [
            (m.key, f"{m.name} ({m.provider})")
            for m in self.services.registry.all()
            if self.services.has_key(m)
        ]
        self.composer.set_models(models, model.key if model else None)
        self.composer.set_thinking_levels([str(x) for x in supported_thinking_levels(model)], level)

    async def close_session(self) -> None:
        self._save_draft()
        session, self.session, self.harness = self.session, None, None
        if session is None:
            return
        try:
            await session.close()
        except SessionWriteError as exc:
            self.dialogs.error("Unsaved entries", exc.message)
            session.get_storage().force_close()

    async def render_branch(self) -> None:
        """Show the current branch in the chat pane and the whole tree."""
        session = self.session
        if session is None:
            return
        items = await branch_items(session)
        self.chat.set_items([self._chat_item(i) for i in items])
        self.messages_shown = len((await session.build_context(lenient=True)).messages)
        if self._shown_once:
            await self.render_tree()
        # else: the chat is what the first paint must show; the tree fills in right
        # after it (see _wire: shown -> render_tree).
        self._restore_draft()
        self._update_usage()

    async def _warm_up(self) -> None:
        """After the first paint: import the provider SDKs (seconds of work, done on a
        thread) so the first reply does not pay for it."""
        apis = {m.api for m in self.services.registry.all() if self.services.has_key(m)}
        await warm_up(sorted(apis))

    async def render_tree(self) -> None:
        session = self.session
        if session is None:
            return
        rows = await rows_from_session(session)
        if self.session is session:
            self.tree.set_rows(rows, session.branch_ids(lenient=True))

    @staticmethod
    def _chat_item(item: BranchItem) -> ChatItem:
        return ChatItem(
            entry_id=item.entry_id,
            message=item.message,
            sibling_index=item.sibling_index,
            sibling_count=item.sibling_count,
            tool_results=dict(item.tool_results),
            label=item.label,
        )

    # ----------------------------------------------------------------- drafts

    def _current_draft_key(self) -> str | None:
        if self.session is None:
            return None
        return f"{self.session.metadata.path}#{self.session.leaf_id()}"

    def _on_draft(self, text: str) -> None:
        if self._draft_key is not None:
            if text:
                self._drafts[self._draft_key] = text
            else:
                self._drafts.pop(self._draft_key, None)

    def _save_draft(self) -> None:
        self._remember(drafts=self._drafts)

    def _restore_draft(self) -> None:
        self._draft_key = None
        key = self._current_draft_key()
        self.composer.set_text(self._drafts.get(key or "", ""))
        self._draft_key = key

    def _remember(self, **values: Any) -> None:
        self.services.state.update(values)
        if self.services.save_state is not None:
            try:
                self.services.save_state(dict(self.services.state))
            except OSError as exc:
                log.warning("could not save the window state: %s", exc)

    # ----------------------------------------------------------------- running

    def _on_send(self, text: str, attachments: list[Attachment]) -> None:
        self.spawn(self.send(text, attachments))

    async def send(self, text: str, attachments: list[Attachment] | None = None) -> None:
        harness = self.harness
        if harness is None:
            self.show_notice("No model is available: add an API key or a local server.")
            self.composer.set_text(text)
            return
        images: list[ImageContent] = []
        for att in attachments or []:
            if att.is_image:
                images.append(ImageContent(data=att.base64(), mime_type=att.mime_type))
            else:
                name = Path(att.path).name
                body = att.data.decode("utf-8", "replace")
                text += f"\n\n<file name={json.dumps(name)}>\n{body}\n</file>"
        self._drafts.pop(self._current_draft_key() or "", None)
        self.composer.set_running(True)
        self.show_notice(None)
        task = asyncio.ensure_future(harness.prompt(text, images))
        self._run_task = task
        try:
            await task
        finally:
            self._run_task = None
            self.composer.set_running(False)
            await self._after_run()

    async def _after_run(self) -> None:
        session = self.session
        if session is None:
            return
        rows = await rows_from_session(session)
        self.tree.set_rows(rows, session.branch_ids(lenient=True))
        self.messages_shown = len((await session.build_context(lenient=True)).messages)
        self._draft_key = self._current_draft_key()
        index = self.services.index
        if index is not None and session.metadata.path:
            try:
                await index.update_file(session.metadata.path)
            except Exception:
                log.exception("could not update the session index")
        await self.refresh_sessions()

    async def stop(self) -> None:
        if self.harness is not None and not self.harness.is_idle:
            await self.harness.abort()

    async def _steer(self, text: str) -> None:
        if self.harness is not None and not self.harness.is_idle:
            await self.harness.steer(text)
        else:
            await self.send(text)

    async def _follow_up(self, text: str) -> None:
        if self.harness is not None and not self.harness.is_idle:
            await self.harness.follow_up(text)
        else:
            await self.send(text)

    async def retry(self) -> None:
        harness = self.harness
        if harness is None or not harness.is_idle:
            return
        self.composer.set_running(True)
        try:
            await harness.continue_run()
        finally:
            self.composer.set_running(False)
            await self.render_branch()
            await self._after_run()

    async def _choose_model(self, key: str) -> None:
        model = self.services.registry.get(key)
        if model is None or self.harness is None:
            return
        await self.harness.set_model(model)
        levels = [str(x) for x in supported_thinking_levels(model)]
        level = self.harness.thinking_level
        if level not in levels:
            level = clamp_thinking_level(model, level)
            await self.harness.set_thinking_level(level)
        self.composer.set_thinking_levels(levels, level)

    async def _choose_thinking(self, level: str) -> None:
        if self.harness is not None:
            await self.harness.set_thinking_level(level)

    # ----------------------------------------------------------------- harness events

    def _on_event(self, event: HarnessEvent) -> None:
        if isinstance(event, MessageStartEvent):
            if isinstance(event.message, AssistantMessage):
                self.chat.begin_stream(event.message)
            elif isinstance(event.message, UserMessage):
                self.chat.append_item(ChatItem(entry_id=None, message=event.message))
        elif isinstance(event, MessageUpdateEvent):
            self.chat.update_stream(event.message)
        elif isinstance(event, MessageEndEvent):
            entry_id = self.session.leaf_id() if self.session else None
            if isinstance(event.message, AssistantMessage):
                self.chat.end_stream(event.message, entry_id)
                self._update_usage()
            elif isinstance(event.message, ToolResultMessage):
                self.chat.tool_finished(event.message.tool_call_id, event.message)
        elif isinstance(event, ToolExecutionStartEvent):
            self.chat.tool_started(event.tool_call_id, event.tool_name, event.args)
        elif isinstance(event, ToolExecutionUpdateEvent):
            partial = event.partial_result
            text = "".join(b.text for b in partial.content if isinstance(b, TextContent))
            self.chat.tool_output(event.tool_call_id, text)
        elif isinstance(event, TurnStartEvent):
            if self.status_save.text() != "Not saved":
                self.status_save.setText("Saving")
        elif isinstance(event, SavePointEvent):
            self.status_save.setText("Saved" if event.saved else "Not saved")
        elif isinstance(event, PersistenceErrorEvent):
            self.status_save.setText("Not saved")
            self.dialogs.persistence_error(
                event, lambda: self.spawn(self.retry_saving()), lambda: self.spawn(self.save_copy())
            )
        elif isinstance(event, PersistenceRestoredEvent):
            self.status_save.setText("Saved")
        elif isinstance(event, AutoRetryStartEvent):
            self.status_progress.setText(
                f"Provider error: retrying in {event.delay_ms / 1000:.0f} s "
                f"(attempt {event.attempt}/{event.max_attempts})"
            )
        elif isinstance(event, AutoRetryEndEvent | CompactionEndEvent):
            self.status_progress.setText("")
        elif isinstance(event, CompactionStartEvent):
            self.status_progress.setText("Compacting the conversation…")
        elif isinstance(event, SessionCompactEvent):
            self.spawn(self.render_branch())

    def _update_usage(self) -> None:
        session = self.session
        if session is None:
            return
        tokens = 0
        cost = 0.0
        last_context = 0
        for entry_id in session.branch_ids(lenient=True):
            message = (
                session.get_message(entry_id)
                if session.entry_kind(entry_id)[0] == "message"
                else None
            )
            if isinstance(message, AssistantMessage):
                tokens += int(message.usage.total_tokens or 0)
                cost += float(message.usage.cost.total or 0)
                if message.stop_reason not in ("error", "aborted"):
                    last_context = message.usage.context_tokens()
        self.status_usage.setText(f"{tokens:,} tokens · ${cost:.4f}")
        window = self.harness.model.context_window if self.harness else 0
        if window:
            self.status_context.setText(f"context {last_context:,}/{window:,}")

    async def retry_saving(self) -> None:
        if self.harness is None:
            return
        try:
            written = await self.harness.retry_persistence()
        except SessionWriteError as exc:
            self.status_save.setText("Not saved")
            log.warning("retry failed: %s", exc.message)
            return
        self.status_save.setText("Saved")
        self.show_notice(f"Saved {written} waiting entr{'y' if written == 1 else 'ies'}.")

    async def save_copy(self) -> None:
        if self.session is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Save a copy of the session", "", "JSONL (*.jsonl)"
        )
        if path:
            await self.session.save_copy(path)
            self.show_notice(f"A copy of the whole session was saved to {path}.")

    # ----------------------------------------------------------------- branches

    async def navigate(self, entry_id: str, summarize: bool = False) -> None:
        session = self.session
        if session is None:
            return
        if self.harness is not None and not self.harness.is_idle:
            self.show_notice("Stop the agent before switching branches.")
            return
        if self.harness is not None and summarize:
            self.status_progress.setText("Summarizing the branch you are leaving…")
            try:
                await self.harness.navigate_tree(entry_id, summarize=True)
            finally:
                self.status_progress.setText("")
        elif entry_id != session.leaf_id():
            await session.move_to(entry_id)
            await session.sync()
        await self.render_branch()

    async def switch_sibling(self, entry_id: str, direction: int) -> None:
        session = self.session
        if session is None:
            return
        parent = session.parent_of(entry_id)
        siblings = [c for c in session.child_ids(parent) if is_visible(session, c)]
        if entry_id not in siblings:
            return
        target = siblings[(siblings.index(entry_id) + direction) % len(siblings)]
        await self.navigate(latest_leaf_under(session, target))

    async def switch_sibling_at_end(self, direction: int) -> None:
        session = self.session
        if session is None:
            return
        items = await branch_items(session)
        for item in reversed(items):
            if item.sibling_count > 1:
                await self.switch_sibling(item.entry_id, direction)
                return

    async def edit_resend(self, entry_id: str, text: str) -> None:
        session = self.session
        if session is None or self.harness is None or not self.harness.is_idle:
            return
        parent = session.parent_of(entry_id)
        await session.move_to(parent)
        await self.render_branch()
        await self.send(text)

    async def set_label(self, entry_id: str, label: str) -> None:
        if self.session is None:
            return
        await self.session.append_label(entry_id, label or None)
        await self.session.sync()
        await self.render_branch()

    async def repair(self, path: str) -> None:
        meta = await self.services.repo.repair(SessionMetadata(id="", created_at="", path=path))
        await self.close_session()
        await self.open_session(meta.path or "")

    # ----------------------------------------------------------------- session actions

    async def new_session(self, cwd: str | None = None) -> None:
        workspace = cwd or self.services.state.get("last_workspace")
        if not workspace and self.session is not None:
            workspace = self.session.metadata.cwd
        if not workspace:
            await self.choose_workspace()
            return
        await self.close_session()
        session = await self.services.repo.create(cwd=str(workspace))
        await session.sync()
        self.session = session
        await self._start_harness(session)
        if self.harness is not None:
            await session.append_model_change(self.harness.model.provider, self.harness.model.id)
            await session.append_thinking_level_change(self.harness.thinking_level)
            await session.sync()
        await self.render_branch()
        self.center.setCurrentWidget(self.chat_box)
        self.status_save.setText("Saved")
        self._remember(last_session_path=session.metadata.path, last_workspace=str(workspace))
        await self._after_run()

    async def choose_workspace(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose the project folder")
        if folder:
            await self.new_session(folder)

    async def settings(self) -> None:
        if self.services.open_settings is not None:
            await self.services.open_settings(self)

    async def rename(self, path: str, name: str) -> None:
        session = self.session
        if session is not None and session.metadata.path == path:
            await session.append_session_name(name)
            await session.sync()
        else:
            other = await self.services.repo.open(path)
            try:
                await other.append_session_name(name)
            finally:
                await other.close()
        await self._reindex(path)

    async def fork(self, path: str) -> None:
        meta = SessionMetadata(id="", created_at="", path=path)
        if self.session is not None and self.session.metadata.path == path:
            await self.session.sync()
            meta = self.session.metadata
        source = await self.services.repo.open(path) if meta.cwd is None else None
        cwd = meta.cwd or (source.metadata.cwd if source else None) or os.getcwd()
        if source is not None:
            await source.close()
        forked = await self.services.repo.fork(meta, cwd=cwd)
        new_path = forked.metadata.path or ""
        await forked.close()
        await self._reindex(new_path)
        await self.open_session(new_path)

    async def delete(self, path: str) -> None:
        if self.session is not None and self.session.metadata.path == path:
            await self.close_session()
            self.chat.set_items([])
            self.center.setCurrentWidget(self.start_page)
        item = await self.services.repo.delete(SessionMetadata(id="", created_at="", path=path))
        index = self.services.index
        if index is not None:
            await index.forget(path)
        await self.refresh_sessions()
        if item is not None:

            async def undo_delete() -> None:
                meta = await self.services.repo.restore(item)
                await self._reindex(meta.path or "")
                await self.open_session(meta.path or "")

            self.show_notice("The session was moved to the trash.", undo=undo_delete)

    async def restore_trash(self, trash_path: str) -> None:
        for item in await self.services.repo.list_trash():
            if item.trash_path == trash_path:
                meta = await self.services.repo.restore(item)
                await self._reindex(meta.path or "")
                return

    async def export(self, path: str, fmt: str) -> None:
        suffix = {"markdown": "md", "html": "html", "jsonl": "jsonl"}.get(fmt, "txt")
        dest, _ = QFileDialog.getSaveFileName(self, "Export session", f"session.{suffix}")
        if dest:
            await export_session(self.services.repo, path, fmt, dest)

    async def backup(self) -> None:
        dest, _ = QFileDialog.getSaveFileName(self, "Back up all sessions", "sessions-backup.zip")
        if dest:
            await backup_sessions(self.services.repo.sessions_root, dest)
            self.show_notice(f"All sessions were backed up to {dest}.")

    def _reveal(self, path: str) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(path).parent)))

    async def _reindex(self, path: str) -> None:
        index = self.services.index
        if index is not None and path:
            await index.update_file(path)
        await self.refresh_sessions()

    # ----------------------------------------------------------------- quitting

    def ask_stop_or_wait(self) -> str:
        """Entry point tests replace: "stop", "wait" or "cancel"."""
        box = QMessageBox(self)
        box.setWindowTitle("The agent is still working")
        box.setText("Stop the agent now, or wait until it has finished?")
        stop = box.addButton("Stop and quit", QMessageBox.ButtonRole.DestructiveRole)
        wait = box.addButton("Wait, then quit", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        clicked = box.clickedButton()
        return "stop" if clicked is stop else "wait" if clicked is wait else "cancel"

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closing:
            event.accept()
            self.closed.emit()
            return
        if self.session is None and not self._tasks:
            self._closing = True
            event.accept()
            self.closed.emit()
            return
        event.ignore()
        running = self.harness is not None and not self.harness.is_idle
        choice = self.ask_stop_or_wait() if running else "quit"
        if choice == "cancel":
            return
        self.spawn(self._shutdown(stop=choice == "stop"))

    async def _shutdown(self, *, stop: bool) -> None:
        """Settle the run, write and sync everything, then close the window."""
        self._closing = True
        if self.harness is not None and not self.harness.is_idle:
            if stop:
                await self.harness.abort()
            else:
                await self.harness.wait_for_idle()
        if self._run_task is not None:
            await asyncio.wait([self._run_task])
        await self.close_session()
        self.close()


async def export_session(repo: JsonlSessionRepo, path: str, fmt: str, dest: str) -> None:
    """Markdown, HTML or a byte copy of the JSONL file."""
    if fmt == "jsonl":
        data = await asyncio.to_thread(Path(path).read_bytes)
        await asyncio.to_thread(Path(dest).write_bytes, data)
        return
    session = await repo.open(path)
    try:
        context = await session.build_context()
    finally:
        await session.close()
    parts: list[str] = []
    for message in context.messages:
        text = _plain_text(message)
        title = {"user": "You", "assistant": "Assistant", "toolResult": "Tool result"}.get(
            message.role, message.role
        )
        if fmt == "html":
            parts.append(f"<h3>{html.escape(title)}</h3><pre>{html.escape(text)}</pre>")
        else:
            parts.append(f"### {title}\n\n{text}\n")
    body = "\n".join(parts)
    if fmt == "html":
        body = f"<!doctype html><meta charset=utf-8><title>Session</title><body>{body}</body>"
    await asyncio.to_thread(Path(dest).write_text, body, "utf-8")


def _plain_text(message: AgentMessage) -> str:
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for block in content:
            if isinstance(block, TextContent):
                out.append(block.text)
            elif block.type == "toolCall":
                arguments = json.dumps(getattr(block, "arguments", {}))
                out.append(f"[tool call] {getattr(block, 'name', '')} {arguments}")
            elif isinstance(block, ImageContent):
                out.append(f"[image {block.mime_type}, {len(base64.b64decode(block.data))} bytes]")
        return "\n".join(out)
    return str(getattr(message, "summary", ""))


async def backup_sessions(root: str, dest: str) -> None:
    """Every session file into one zip archive (written via a temp file)."""
    import zipfile

    def run() -> None:
        tmp = f"{dest}.tmp-{os.getpid()}-{time.monotonic_ns()}"
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
            for file in sorted(Path(root).rglob("*.jsonl")):
                archive.write(file, file.relative_to(root))
        os.replace(tmp, dest)

    await asyncio.to_thread(run)
