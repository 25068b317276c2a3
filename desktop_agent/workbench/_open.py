"""`OpenSession`: one open session with its harness, its run and what the window shows
of it (usage, save state, progress, approvals waiting), and the translation of its
harness's events into `Changes`.

The workbench keeps one per open session (several can run at once, ARCHITECTURE §2.7):
it creates them on open (`Workbench._adopt`) and closes them with `close`. What they
report reaches the window through the workbench, which passes on the events of the
session it shows and turns the others' into the state of their rows.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from desktop_agent.agent import TurnStartEvent
from desktop_agent.ai import AgentMessage, AssistantMessage, Model, clamp_thinking_level
from desktop_agent.checkpoints import CheckpointError, FolderCheckpoints
from desktop_agent.config import BranchUsage, draft_key
from desktop_agent.harness import (
    AgentHarness,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    HarnessError,
    HarnessEvent,
    MessageSavedEvent,
    NoticeEvent,
    PersistenceErrorEvent,
    PersistenceRestoredEvent,
    SavePointEvent,
    SessionCompactEvent,
    restore_settings,
)
from desktop_agent.session import RecoveryReport, Session, SessionWriteError
from desktop_agent.tools import (
    ApprovalAnswer,
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    Workspace,
)
from desktop_agent.workbench._changes import NOTHING, Changes
from desktop_agent.workbench._follow import continue_here
from desktop_agent.workbench._notices import Action
from desktop_agent.workbench._views import (
    BranchItem,
    MessageLoader,
    SaveState,
    Usage,
    count_branch_usage,
    count_branch_usage_sliced,
    entries_phrase,
    is_visible,
    latest_leaf_under,
    visible_siblings,
)

if TYPE_CHECKING:
    from desktop_agent.workbench._workbench import Workbench

log = logging.getLogger("desktop_agent.workbench")

Activity = Literal["", "running", "waiting", "failed", "finished"]
"""A session's run as its row shows it: none, running, waiting for approval, failed or
finished (the last two until the person has seen the session)."""


class WorkbenchError(Exception):
    """An operation was not possible now; ``str()`` is a sentence for the user."""


def is_dir(path: str) -> bool:
    return bool(path) and os.path.isdir(path)


async def _warm_checkpoints(folder: FolderCheckpoints) -> None:
    """The folder's first snapshot, started when a session opens in it (in a worker
    thread), so that the first tool call waits only for what is left of it; a failure
    is said by that tool call's own snapshot."""
    try:
        await folder.warm()
    except CheckpointError as exc:
        log.info("no checkpoint ahead of the first tool call: %s", exc.message)


@dataclass(frozen=True)
class ApprovalWaitEvent:
    """A tool call waits for the user's approval (``waiting``), or no longer does;
    ``ref``: the session it belongs to."""

    tool_call_id: str
    waiting: bool
    ref: str | None = None
    type: str = "approval_wait"


class OpenSession:
    """One open session (see the module doc)."""

    def __init__(self, wb: Workbench, session: Session, ref: str) -> None:
        self.wb = wb
        self.session = session
        self.ref = ref
        self.recovery: RecoveryReport | None = session.recovery
        """What opening the session had to work around (shown once)."""
        self.loader = MessageLoader(session)
        self.entries_told = session.entry_count
        """Entries of the session that listeners know of (`Workbench._changed` adds the
        ids appended since to what it reports)."""
        self.kept_layout: bytes | None = None
        """The map layout from the session's last close (`Workbench.update_map` takes it)."""
        self.harness: AgentHarness | None = None
        self.ready = asyncio.Event()
        """Set once the session is open with its harness and its views are told (a prompt
        typed at once after Ctrl+N waits for it rather than finding no harness yet)."""
        self._unsubscribe: Callable[[], None] | None = None
        self.usage = Usage()
        self.save = SaveState("read_only" if session.read_only else "saved")
        self.waiting_for_model = False  # the saved model's server has not answered yet
        self.saved_model_key: str | None = None
        self.run: asyncio.Task[Any] | None = None
        self.running = False
        self.run_started: float | None = None
        """When the run started (``time.time()``; the sidebar paints the time since)."""
        self.progress = ""
        self.progress_args: tuple[tuple[str, str], ...] = ()
        """Values of ``progress``'s ``{name}`` placeholders (like `Notice.args`)."""
        self.waiting_approval: set[str] = set()
        self.ended: Literal["", "failed", "finished"] = ""
        """How the last run ended while the session was not shown (cleared when shown)."""
        self.notes: dict[str, tuple[str, tuple[str, Action] | None, dict[str, object]]] = {}
        """Its notices (key: text, action, values), shown again when it is shown again."""
        self.redraw_after_run = False
        """The run retries a failure, or failed again: the chat redraws the branch once it
        ends (failed attempts fold into one card)."""
        self.failures_this_run = 0
        self.last_stop = ""
        """The stop reason of the run's last answer ("error": the run failed)."""

    # ------------------------------------------------------------ what the row shows

    @property
    def shown(self) -> bool:
        return self.wb.shown is self

    @property
    def activity(self) -> Activity:
        if self.waiting_approval:
            return "waiting"
        if self.running:
            return "running"
        return self.ended

    @property
    def idle(self) -> bool:
        return self.harness is None or self.harness.is_idle

    @property
    def folder(self) -> str:
        return os.path.abspath(self.session.metadata.cwd) if self.session.metadata.cwd else ""

    # ------------------------------------------------------------ reporting

    def changed(self, changes: Changes) -> Changes:
        return self.wb._session_changed(self, changes)

    def emit(self, event: Any) -> None:
        self.wb._session_event(self, event)

    def notify(
        self, key: str, text: str | None, action: tuple[str, Action] | None = None, **args: object
    ) -> Changes:
        """A notice about this session: shown while the session is, kept for when it is
        shown again (e.g. why its run stopped)."""
        if text is None:
            self.notes.pop(key, None)
        else:
            self.notes[key] = (text, action, args)
        if not self.shown:
            return NOTHING
        return self.wb.notify(key, text, action, **args)

    # ------------------------------------------------------------ the harness

    async def start_harness(self) -> None:
        """Build the harness with the session's saved model, thinking level and tools.

        A saved model whose server is still being listed is waited for (no fallback, no
        notice yet): the harness then has no model until the server answers."""
        wb, session = self.wb, self.session
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        context = await session.build_context(lenient=True, messages=False)
        has_thinking = session.branch_has("thinking_level_change", lenient=True)
        tools = wb._tools()
        restored = restore_settings(
            context,
            wb.models.registry,
            has_key=wb.models.has_key,
            available_tools=[t.name for t in tools],
            has_thinking_entry=has_thinking,
            default_model=wb.settings.default_model,
            default_thinking_level=wb.settings.default_thinking_level,
            server_problem=wb.models.problems.get,
        )
        model: Model | None = restored.model
        notice, notice_args = restored.notice_template, dict(restored.notice_args)
        saved = context.model
        self.saved_model_key = f"{saved.provider}/{saved.model_id}" if saved else None
        self.waiting_for_model = False
        if saved is not None and notice is not None and wb.models.pending(saved.provider):
            url = wb.models.server_url(saved.provider) or saved.provider
            text = "Connecting to {url} for {saved}…"
            model, notice = None, text
            notice_args = {"url": url, "saved": self.saved_model_key or ""}
            self.waiting_for_model = True
        cwd = session.metadata.cwd or ""
        workspace: Workspace | None = None
        exists = await asyncio.to_thread(is_dir, cwd)
        if exists:
            workspace = Workspace(
                cwd,
                forbidden_roots=wb.forbidden_roots,
                read_only_roots=wb.project.prompt(cwd).skill_roots,
            )
        policy = ApprovalPolicy(self._approve, rules=dict(wb.settings.approval))
        harness = AgentHarness(
            session=session,
            model=model,
            tools=tools if workspace is not None else [],
            system_prompt=wb.project.prompt(cwd).system_prompt if cwd else None,
            thinking_level=restored.thinking_level,
            active_tool_names=restored.active_tool_names,
            get_api_key=wb.models.get_api_key,
            workspace=workspace,
            approval_policy=policy,
            tool_output_dir=wb.tool_output_dir,
            settings=wb.harness_settings,
            redactor=wb.redactor,
            checkpoints=wb.files.files.store.folder(cwd) if wb.files and workspace else None,
            more_tools=wb.mcp.tools,
        )
        self._unsubscribe = harness.subscribe(self._on_harness_event)
        self.harness = harness
        if self.waiting_for_model and saved is not None and not wb.models.pending(saved.provider):
            # The server answered while this harness was being built (the awaits above):
            # its models-changed call found no harness to restart, so restart it now.
            wb.spawn(self.restart_harness())
        if "problem" in notice_args:  # its server could not list it: offer to ask again
            self.notify("model", notice, ("Try again", wb.retry_servers), **notice_args)
        else:
            self.notify("model", notice, None, **notice_args)
        missing = None
        if workspace is None:
            missing = (
                "The project folder {folder} does not exist here: the agent can chat but not "
                "use its tools."
            )
        self.notify("workspace", missing, folder=cwd)
        if workspace is not None:  # its own MCP servers: used if allowed, offered once
            wb.spawn(wb._project_mcp(cwd))
        self.count_usage(model.context_window if model else 0, context.messages)
        if exists:
            wb.spawn(wb._check_project(cwd))
            if harness.checkpoints is not None:
                wb.spawn(_warm_checkpoints(harness.checkpoints.folder))

    async def restart_harness(self) -> None:
        if self.harness is not None and self.harness.is_idle and not self.session.closed:
            await self.start_harness()
        self.changed(Changes(models=True, notices=True, usage=True))

    def count_usage(self, context_window: int, context: Sequence[AgentMessage] = ()) -> None:
        """The usage of the current branch. A long branch is counted after the first
        paint, on the loop in slices (it reads the usage of every answer); until then the
        status bar has how full the context is, from the context just built."""
        session, wb = self.session, self.wb
        if session.entry_count <= wb.limits.inline_entries:
            self.usage = count_branch_usage(session, context_window)
            return
        last = next(
            (
                m
                for m in reversed(context)
                if isinstance(m, AssistantMessage) and m.stop_reason not in ("error", "aborted")
            ),
            None,
        )
        start = Usage(context_window=context_window)
        self.usage = start.add(last) if last is not None else start
        start = self.usage
        ref = self.ref
        memo = wb.state.branch_usage
        since = None
        if memo is not None and memo.ref == ref:
            counted = Usage(tokens=memo.tokens, cost=memo.cost, context_tokens=memo.context_tokens)
            since = (memo.leaf, counted)

        async def count() -> None:
            branch = session.branch_ids(lenient=True)
            counted = await count_branch_usage_sliced(session, context_window, since, branch)
            leaf = branch[-1] if branch else None
            if session.closed:
                return
            if leaf is not None:
                wb.state.branch_usage = BranchUsage(
                    ref=ref,
                    leaf=leaf,
                    tokens=counted.tokens,
                    cost=counted.cost,
                    context_tokens=counted.context_tokens,
                )
            now = self.usage  # plus what was answered meanwhile
            self.usage = Usage(
                tokens=counted.tokens + now.tokens - start.tokens,
                cost=counted.cost + now.cost - start.cost,
                context_tokens=(now.context_tokens if now != start else counted.context_tokens),
                context_window=now.context_window,
            )
            self.changed(Changes(usage=True))

        wb.spawn(count())

    # ------------------------------------------------------------ the harness's events

    def _on_harness_event(self, event: HarnessEvent) -> None:
        changes = NOTHING
        if isinstance(event, MessageSavedEvent):
            self.emit(event)
            message = event.message
            if isinstance(message, AssistantMessage):
                self.usage = self.usage.add(message)
                changes = Changes(usage=True)
                # Failed attempts fold into one card: the chat redraws the branch when a
                # failure was retried (a second failure, or an answer after one).
                failed = message.stop_reason == "error"
                self.last_stop = message.stop_reason
                self.redraw_after_run |= self.failures_this_run > 0
                self.failures_this_run += failed
            item = self.item_for(event.entry_id)
            if item is not None:
                changes = changes | Changes(saved_items=(item,))
            if self.save.status == "not_saved":
                self.save = replace(self.save, pending=self.session.pending_count)
                changes = changes | Changes(save_state=True)
            self.changed(changes)
            return
        if isinstance(event, TurnStartEvent) and self.save.status != "not_saved":
            self.save = SaveState("saving")
            changes = Changes(save_state=True)
        elif isinstance(event, SavePointEvent):
            pending = self.session.pending_count
            if event.saved:
                self.save = SaveState("saved")
            else:
                self.save = SaveState("not_saved", pending, self.save.detail, self.save.code)
            changes = Changes(save_state=True)
        elif isinstance(event, PersistenceErrorEvent):
            self.save = SaveState(
                "not_saved", self.session.pending_count, event.message, event.code
            )
            changes = Changes(save_state=True)
        elif isinstance(event, PersistenceRestoredEvent):
            self.save = SaveState("saved")
            changes = Changes(save_state=True)
        elif isinstance(event, AutoRetryStartEvent):
            self.progress = (
                "The request failed; retrying in {seconds} s (attempt {n} of {attempts})"
            )
            self.progress_args = (
                ("seconds", f"{event.delay_ms / 1000:.0f}"),
                ("n", str(event.attempt)),
                ("attempts", str(event.max_attempts)),
            )
            changes = Changes(running=True)
        elif isinstance(event, AutoRetryEndEvent | CompactionEndEvent):
            self.progress = ""
            changes = Changes(running=True)
        elif isinstance(event, CompactionStartEvent):
            self.progress = "Compacting the conversation…"
            changes = Changes(running=True)
        elif isinstance(event, SessionCompactEvent):
            changes = Changes(branch=True, usage=True)
        elif isinstance(event, NoticeEvent):  # e.g. files left out of a checkpoint
            changes = self.notify("checkpoint", "{message}", message=event.message)
        self.emit(event)
        self.changed(changes)

    def item_for(self, entry_id: str | None) -> BranchItem | None:
        """The branch item of a just-saved visible message (with its siblings)."""
        session = self.session
        if entry_id is None or not is_visible(session, entry_id):
            return None
        kind, role = session.entry_kind(entry_id)
        siblings = visible_siblings(session, entry_id)
        return BranchItem(
            entry_id=entry_id,
            kind=kind,
            role=role,
            load=self.loader,
            sibling_index=siblings.index(entry_id) if entry_id in siblings else 0,
            sibling_count=max(1, len(siblings)),
        )

    async def _approve(self, request: ApprovalRequest) -> ApprovalDecision | ApprovalAnswer | None:
        """A tool call asks: the person answers in the window (a session not shown waits
        until they open it; nothing is ever approved by itself)."""
        self.waiting_approval.add(request.call_id)
        self.emit(ApprovalWaitEvent(request.call_id, True, self.ref))
        self.wb._activity_changed(self)
        try:
            return await self.wb.sessions.ask_approval(self, request)
        finally:
            self.waiting_approval.discard(request.call_id)
            self.emit(ApprovalWaitEvent(request.call_id, False, self.ref))
            self.wb._activity_changed(self)

    # ------------------------------------------------------------ runs

    def check_idle(self, what: str) -> None:
        if not self.idle:
            raise WorkbenchError(f"Stop the agent before {what}.")

    async def run_with(self, start: Callable[[], Awaitable[Any]], *, fold: bool = False) -> Changes:
        """Run the harness; ``fold``: the branch ends in a failure that this run retries."""
        wb = self.wb
        self.running = True
        self.run_started = time.time()
        self.ended = ""
        self.redraw_after_run = fold
        self.failures_this_run = 0
        self.last_stop = ""
        self.notify("run", None)
        self.notify("error", None)
        wb.sessions.run_started(self)
        self.changed(Changes(running=True, draft=True, notices=True))
        task = asyncio.ensure_future(start())
        self.run = task
        failed = False
        try:
            await task
        except HarnessError as exc:
            failed = True
            self.notify("run", exc.message)
        finally:
            self.run = None
            self.running = False
            self.run_started = None
            self.progress = ""
            await wb.listing.store_for(self.ref).changed(self.ref)
            if self.shown:
                wb._follow_files()  # the turns' file marks; a bar the run made moot goes
        failed = failed or self.last_stop == "error"
        await wb.sessions.run_ended(self, failed)
        # Failed attempts fold into the answer once it came: then the chat redraws the
        # branch; otherwise what streamed in is what the branch is.
        return self.changed(
            Changes(running=True, branch=self.redraw_after_run, save_state=True, notices=True)
            | await wb.refresh_sessions()
        )

    # ------------------------------------------------------------ branches

    def need_harness(self) -> AgentHarness:
        if self.harness is None:
            raise WorkbenchError("No session is open.")
        self.check_idle("switching branches")
        return self.harness

    async def navigate(self, entry_id: str, *, summarize: bool = False) -> Changes:
        """Move the leaf onto ``entry_id`` (the one route of every leaf move)."""
        harness = self.need_harness()
        if entry_id == self.session.leaf_id():
            return NOTHING
        if summarize:
            self.progress = "Summarizing the branch you are leaving…"
            self.changed(Changes(running=True))
        try:
            await harness.navigate_tree(entry_id, summarize=summarize, exact=True)
        finally:
            self.progress = ""
        return await self.branch_moved()

    async def branch_moved(self) -> Changes:
        model = self.harness.model if self.harness else None
        self.count_usage(model.context_window if model else 0)
        self.wb._remember()
        self.wb._follow_files()
        return self.changed(Changes(branch=True, usage=True, draft=True, running=True))

    async def switch_sibling(self, entry_id: str, direction: int) -> Changes:
        """Show the previous (-1) or next (+1) version of a message (``‹ n/m ›``)."""
        session = self.session
        siblings = visible_siblings(session, entry_id)
        if entry_id not in siblings or len(siblings) < 2:
            return NOTHING
        target = siblings[(siblings.index(entry_id) + direction) % len(siblings)]
        return await self.navigate(latest_leaf_under(session, target))

    async def sync(self) -> None:
        try:
            await self.session.sync()
        except SessionWriteError as exc:
            self.save = SaveState("not_saved", self.session.pending_count, exc.message, exc.code)
            self.changed(Changes(save_state=True))

    # ------------------------------------------------------------ model and thinking

    async def choose_model(self, model: Model) -> Changes:
        harness = self.harness
        if harness is None:
            return NOTHING
        self.waiting_for_model = False
        await harness.set_model(model)
        level = harness.thinking_level
        clamped = clamp_thinking_level(model, level)
        if clamped != level:
            await harness.set_thinking_level(clamped)
        self.notify("model", None)
        self.usage = replace(self.usage, context_window=model.context_window)
        return self.changed(Changes(models=True, usage=True, notices=True))

    async def retry_saving(self) -> int | None:
        """Write what waits in memory: how many entries were written (None: the write
        failed again, `save` says why)."""
        session = self.session
        try:
            if self.harness is not None:
                written = await self.harness.retry_persistence()
            else:
                written = await session.retry_persistence()
        except SessionWriteError as exc:
            self.save = SaveState("not_saved", session.pending_count, exc.message, exc.code)
            return None
        self.save = SaveState("saved")
        return written

    def read_only_text(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """(English template, its values) of why the session is read-only."""
        session = self.session
        version = session.metadata.format_version
        if version < 3:
            text = (
                "This session is in an older Pi format (version {version}) and opens"
                " read-only. Convert it to continue it: a new file is written beside it,"
                " the original stays as it is."
            )
            return text, (("version", str(version)),)
        reason = session.read_only_reason or "it cannot be written"
        if session.written_by_newer_app:
            return "Read-only: {reason}.", (("reason", reason),)
        return "This session is read-only: {reason}.", (("reason", reason),)

    def notify_read_only(self) -> None:
        """The read-only notice, with what can be done about it (convert, continue here)."""
        session, wb, ref = self.session, self.wb, self.ref
        if not session.read_only:
            self.notify("read_only", None)
            return
        action: tuple[str, Action] | None = None
        if session.metadata.format_version < 3:
            action = ("Convert to the current format", lambda: wb.convert(ref))
        elif session.get_storage().read_only_code == "locked":
            action = ("Continue it here", lambda: continue_here(wb))
        text, values = self.read_only_text()
        self.notify("read_only", text, action, **dict(values))

    def draft_key(self) -> str:
        return draft_key(self.ref, self.session.leaf_id())

    # ------------------------------------------------------------ closing

    def is_empty(self) -> bool:
        """An empty "New session": no message in it."""
        session = self.session
        return not any(session.entry_kind(i)[0] == "message" for i in session.entry_ids())

    async def close(self) -> None:
        """Close the session's file (`WorkbenchError` when entries could not be saved:
        the session stays open)."""
        session = self.session
        try:
            await session.close()
        except SessionWriteError:
            pass
        if not session.closed:
            raise WorkbenchError(
                f"{entries_phrase(session.pending_count)} of this session could not be saved:"
                " retry saving, or save a copy, first."
            )
        self.detach()

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
