"""`Presenter`: the workbench's events, drawn on the window's widgets.

Each `Changes` redraws only what it names: a branch switch rebuilds the chat and lays
the branch map out again, appended entries become new rows of the map (no relayout), a
list change refills the sidebar. Streaming events go straight to the chat pane. Redraws
run in one task at a time; `settled` waits for it. Each window has its presenter, which
reads its own view's session (`Workbench.viewing`) and draws its own view's map.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import QCoreApplication

from desktop_agent.ai import AssistantMessage, ToolResultMessage, UserMessage
from desktop_agent.gui._heap import renew_heap
from desktop_agent.gui._ports import Ops, PresenterView
from desktop_agent.gui.chat import ChatItem
from desktop_agent.utils.text import content_text, short_title
from desktop_agent.workbench import (
    ApprovalWaitEvent,
    BranchItem,
    BranchReader,
    Changes,
    Event,
    MapUpdate,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    PersistenceErrorEvent,
    RaiseViewEvent,
    RunEndedEvent,
    TailReader,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    Workbench,
    fill,
)

log = logging.getLogger("desktop_agent.gui")


def chat_item(item: BranchItem) -> ChatItem:
    return ChatItem(
        entry_id=item.entry_id,
        message=item.message,
        sibling_index=item.sibling_index,
        sibling_count=item.sibling_count,
        tool_results=item.tool_results(),
        label=item.label,
        attempts=item.attempts(),
        interrupted=frozenset(item.interrupted),
    )


class Presenter:
    """Applies workbench events to the window's panes (see the module docstring)."""

    def __init__(
        self, view: PresenterView, workbench: Workbench, ops: Ops, *, view_id: int = 0
    ) -> None:
        self.view = view
        self.view_id = view_id
        """The window's view of the workbench (`Workbench.viewing`)."""
        self.wb = workbench
        self.ops = ops
        self.messages_shown = 0
        self._branch = False
        self._map_full = False
        self._map_new: list[str] = []
        self._task: asyncio.Task[None] | None = None
        self._shown = False
        self._was_running = False
        self._reader: BranchReader | TailReader | None = None
        self._older = False  # the chat asked for older messages
        self._renew = False  # another session: renew the frozen heap once it is shown
        self._seen = False  # a session was shown (the first restore renews nothing)
        view.chat.older_wanted.connect(self._on_older_wanted)

    # ------------------------------------------------------------ entry points

    def on_event(self, event: Event) -> None:
        with self.wb.viewing(self.view_id):
            self._on_event(event)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, RaiseViewEvent):
            self.view.bring_forward()  # its session was asked for in another window
        elif isinstance(event, Changes):
            self.apply(event)
        elif isinstance(event, ApprovalWaitEvent):
            if event.ref == self.wb.ref:
                self.view.chat.tool_waiting(event.tool_call_id, event.waiting)
        elif isinstance(event, RunEndedEvent):
            self._tell_elsewhere(event)
        else:
            self._stream(event)

    def _tell_elsewhere(self, event: RunEndedEvent) -> None:
        """A session not shown finished, failed or asks for an approval: a desktop
        notification (its row says so too)."""
        # (translate() spelt out: pyside6-lupdate reads a call of an alias named `tr`
        # as tr(text, comment), and the template got "Presenter" as the text)
        if event.waiting:
            text = QCoreApplication.translate("Presenter", "The agent waits for your approval.")
        elif event.failed:
            text = QCoreApplication.translate("Presenter", "The agent's run failed.")
        else:
            text = QCoreApplication.translate("Presenter", "The agent finished.")
        self.view.notifier.notify(short_title(event.title), text)

    def _on_older_wanted(self) -> None:
        self._older = True
        self._schedule()

    def shown(self) -> None:
        """After the first paint: the map (which the first paint does not wait for)."""
        self._shown = True
        self._map_full = True
        self._schedule()

    async def settled(self) -> None:
        """Wait until every scheduled redraw is done."""
        while self._task is not None and not self._task.done():
            await asyncio.wait([self._task])

    # ------------------------------------------------------------ changes

    def apply(self, changes: Changes) -> None:
        w, wb = self.view, self.wb
        if changes.session:
            self._renew = self._renew or self._seen
            w.show_session(wb.session is not None or wb.opening is not None)
            w.composer.set_read_only(self._read_only_shown())
            w.map_pane.clear()
            self._report_recovery()
        if changes.session or changes.sessions:
            w.setWindowTitle(self._title())
        if changes.session or changes.branch:
            self._branch = True
        if changes.session or changes.map:
            self._map_full = True
            self._map_new.clear()
        elif changes.appended:
            self._map_new.extend(changes.appended)
        for item in changes.saved_items:
            w.chat.saved(item.entry_id, item.role, item.sibling_index, item.sibling_count)
        if changes.sessions:
            w.sidebar.set_sessions(wb.rows, wb.ref)
            w.sidebar.set_trash(wb.trash_rows)
        if changes.usage:
            w.status.show_usage(wb.usage, wb.session is not None)
        if changes.save_state:
            w.status.show_save(wb.save)
            w.dialogs.set_pending(wb.save.pending)
        if changes.notices:
            w.notices.set_notices(wb.notices.shown())
        if changes.models:
            choices = wb.model_choices()
            w.composer.set_models(list(choices.models), choices.current, choices.pending)
            w.composer.set_thinking_levels(list(choices.levels), choices.level)
        if changes.draft and not wb.running:
            w.set_composer_text(wb.draft())
        if changes.running:
            self._running_changed()
        if changes.session and wb.session is not None:
            w.focus_composer()
        self._schedule()

    def _running_changed(self) -> None:
        w, wb = self.view, self.wb
        w.composer.set_running(wb.running)
        progress = QCoreApplication.translate("notices", wb.progress)
        w.status.progress.setText(fill(progress, wb.progress_args))
        if wb.running and not self._was_running:
            w.chat.follow_bottom()  # the new message is shown even when scrolled up
        self._was_running = wb.running

    def _read_only_shown(self) -> str | None:
        """Why the session cannot be continued, translated (the read-only notice's text)."""
        english = self.wb.read_only_text()
        notice = self.wb.notices.get("read_only")
        if english is None or notice is None:
            return english
        return fill(QCoreApplication.translate("notices", notice.text), notice.args)

    def _title(self) -> str:
        row = self.wb.row_for(self.wb.ref or "")
        app = QCoreApplication.translate("MainWindow", "Desktop Agent")
        if row is None:
            return app
        return QCoreApplication.translate("MainWindow", "{title} — {app}").format(
            title=short_title(row.title), app=app
        )

    def _report_recovery(self) -> None:
        ref = self.wb.ref
        report = self.wb.take_recovery()
        if report is None or ref is None:
            return
        ops = self.ops
        self.view.dialogs.damaged_session(
            ref, report, lambda: ops.spawn(ops.do(self.wb.repair(ref)))
        )

    # ------------------------------------------------------------ redraws off the loop

    def _map_due(self) -> bool:
        """Map work waits for the first paint; a full redraw also for the end of a run
        (appended entries add rows at the end, cheap while a reply streams)."""
        if not self._shown:
            return False
        with self.wb.viewing(self.view_id):
            return bool(self._map_new) or (self._map_full and not self.wb.running)

    def _schedule(self) -> None:
        idle = self._task is None or self._task.done()
        if idle and (self._branch or self._older or self._map_due()):
            self._task = asyncio.ensure_future(self._redraw())

    async def _redraw(self) -> None:
        w, wb = self.view, self.wb
        while self._branch or self._older or self._map_due():
            if self._branch:
                self._branch = False
                self._older = False
                with wb.viewing(self.view_id):
                    reader = self._reader = wb.branch_reader()
                items = await reader.older() if reader is not None else []
                if self._branch:
                    continue  # the branch moved again meanwhile
                w.chat.set_items(
                    [chat_item(i) for i in items],
                    has_more=bool(reader and reader.has_more),
                    project=wb.session.metadata.cwd if wb.session is not None else None,
                )
                self.messages_shown = w.chat.item_count()
                if self._shown:
                    update = await wb.update_map(self.view_id)
                    w.map_pane.apply(wb.map_of(self.view_id), update)
                if self._renew and not self._branch:
                    self._renew = False
                    renew_heap()  # the closed session's objects are freed (`gui._heap`)
                with wb.viewing(self.view_id):
                    self._seen = self._seen or wb.session is not None
                continue
            if self._older:
                self._older = False
                reader = self._reader
                if reader is None or not reader.has_more:
                    continue
                items = await reader.older()
                if reader is self._reader and not self._branch:
                    w.chat.prepend_items([chat_item(i) for i in items], has_more=reader.has_more)
                    self.messages_shown = w.chat.item_count()
                continue
            with wb.viewing(self.view_id):
                full = self._map_full and not wb.running
            if full:
                self._map_full = False
            self._map_new.clear()
            update = await wb.update_map(self.view_id)
            w.map_pane.apply(wb.map_of(self.view_id), MapUpdate(reset=True) if full else update)

    # ------------------------------------------------------------ streaming

    def _stream(self, event: Any) -> None:
        chat = self.view.chat
        if isinstance(event, MessageStartEvent):
            if isinstance(event.message, AssistantMessage):
                chat.begin_stream(event.message)
            elif isinstance(event.message, UserMessage):
                chat.append_item(ChatItem(entry_id=None, message=event.message))
        elif isinstance(event, MessageUpdateEvent):
            chat.update_stream(event.message)
        elif isinstance(event, MessageEndEvent):
            entry_id = getattr(event, "entry_id", None)
            if isinstance(event.message, AssistantMessage):
                chat.end_stream(event.message, entry_id)
            elif isinstance(event.message, ToolResultMessage):
                chat.tool_finished(event.message.tool_call_id, event.message)
        elif isinstance(event, ToolExecutionStartEvent):
            chat.tool_started(event.tool_call_id, event.tool_name, event.args)
        elif isinstance(event, ToolExecutionUpdateEvent):
            chat.tool_output(event.tool_call_id, content_text(event.partial_result.content))
        elif isinstance(event, PersistenceErrorEvent):
            ops = self.ops
            self.view.dialogs.persistence_error(
                event,
                lambda: ops.spawn(ops.do(self.wb.retry_saving())),
                lambda: ops.spawn(self.view.save_copy()),
                lambda: ops.spawn(ops.do(self.wb.reload_from_disk())),
                on_server=self.wb.saves_to_server,
            )
