"""`AgentHarness`: state, queues, abort, retries, compaction, persistence timing, events.

The session is the only transcript: every turn's context is rebuilt from
``session.build_context()``. Messages are appended at ``message_end`` before listeners
hear of it; model / thinking / tool changes made during a run are queued and written at
``turn_end``, then the session is synced and ``save_point`` is emitted. Saving failures
never stop a run: the session keeps what it could not write, ``persistence_error`` is
emitted once per failure burst, and `retry_persistence` writes exactly what is missing.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from desktop_agent.agent import (
    AgentEvent,
    AgentTool,
    LoopConfig,
    MessageEndEvent,
    MessageStartEvent,
    StreamFn,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnSetup,
    run_agent_loop,
)
from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    LlmContext,
    Model,
    StreamOptions,
    TextContent,
    UserMessage,
    classify_error,
    stream,
)
from desktop_agent.checkpoints import CHECKPOINT_CUSTOM_TYPE, FolderCheckpoints
from desktop_agent.harness._checkpointing import READ_ONLY_TOOLS, CheckpointedTool, TurnCheckpoints
from desktop_agent.harness._compaction import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_RESERVE_TOKENS,
    CompactionError,
    estimate_context_tokens,
    prepare_compaction,
    run_compaction,
    should_compact,
)
from desktop_agent.harness._events import (
    AbortEvent,
    ActiveToolsSelectEvent,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    HarnessEvent,
    MessageSavedEvent,
    ModelSelectEvent,
    NoticeEvent,
    QueueUpdateEvent,
    SavePointEvent,
    SessionCompactEvent,
    SessionTreeEvent,
    SettledEvent,
    ThinkingLevelSelectEvent,
)
from desktop_agent.harness._interrupted import with_interrupted_results
from desktop_agent.harness._navigation import landing, summarize_abandoned
from desktop_agent.harness._persistence import Persister
from desktop_agent.harness._redaction import REDACTION_CUSTOM_TYPE, SessionRedaction
from desktop_agent.harness._restore import NO_MODEL
from desktop_agent.harness._retry import RetryPolicy
from desktop_agent.harness._tools import WorkspaceTool
from desktop_agent.prompt import PromptSource, ToolLine
from desktop_agent.session import (
    ReloadLeaf,
    ReloadReport,
    Session,
    SessionError,
    SessionWriteError,
)
from desktop_agent.tools import ApprovalPolicy, Tool, Workspace
from desktop_agent.utils import Redactor
from desktop_agent.utils.text import content_text as _content_text

_log = logging.getLogger("desktop_agent.harness")

Phase = Literal["idle", "turn", "compaction", "branch_summary", "retry"]
Listener = Callable[[HarnessEvent], Awaitable[None] | None]
DEFAULT_SYSTEM_PROMPT = (
    "You are a careful coding agent working in the user's project folder. Use the tools to "
    "read, search, edit and run things; explain what you do briefly."
)


_CARRIES_CONTENT = (
    MessageStartEvent,
    MessageEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolExecutionEndEvent,
    TurnEndEvent,
)
"""Loop events whose messages or tool data are redacted before listeners see them."""


class HarnessError(Exception):
    """A harness call was not possible now (``busy``, ``invalid_state``, ``auth``...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Clock(Protocol):
    """Time for retry back-off; tests inject a fake one."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@dataclass
class HarnessSettings:
    retry_enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60_000
    compaction_enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    steering_mode: Literal["one-at-a-time", "all"] = "one-at-a-time"
    follow_up_mode: Literal["one-at-a-time", "all"] = "one-at-a-time"

    @property
    def retry(self) -> RetryPolicy:
        return RetryPolicy(
            self.retry_enabled, self.max_retries, self.base_delay_ms, self.max_delay_ms
        )


@dataclass
class NavigateResult:
    cancelled: bool
    editor_text: str | None = None
    summary_entry_id: str | None = None


def _now_ms() -> int:
    return int(time.time() * 1000)


def _texts(messages: list[AgentMessage]) -> list[str]:
    """The texts of queued messages (for queue_update / abort events)."""
    return [_content_text(getattr(m, "content", "")) for m in messages]


def _user(text: str, images: Sequence[ImageContent] = ()) -> UserMessage:
    return UserMessage(content=[TextContent(text=text), *images], timestamp=_now_ms())


class AgentHarness:
    """Runs prompts against a session; the GUI only calls this and listens to its events."""

    def __init__(
        self,
        *,
        session: Session,
        model: Model | None,
        tools: Sequence[AgentTool | Tool[Any]] = (),
        system_prompt: str | PromptSource | None = None,
        thinking_level: str = "off",
        active_tool_names: Sequence[str] | None = None,
        get_api_key: Callable[[Model], str | None] | None = None,
        settings: HarnessSettings | None = None,
        stream_fn: StreamFn = stream,
        clock: Clock | None = None,
        workspace: Workspace | None = None,
        approval_policy: ApprovalPolicy | None = None,
        tool_output_dir: Path | None = None,
        redactor: Redactor | None = None,
        checkpoints: FolderCheckpoints | None = None,
        more_tools: Callable[[], Sequence[Tool[Any]]] | None = None,
    ) -> None:
        """``tools`` may be loop tools or `desktop_agent.tools.Tool`s; the latter run in
        ``workspace`` under ``approval_policy`` (decisions are recorded in the session).
        ``more_tools`` is asked before every request for tools that come and go (the
        MCP servers' tools): they are offered while it lists them, beside the active ones.

        ``model`` may be None (no usable model yet, as Pi allows): the harness then
        navigates, labels and records settings, and `prompt` raises ``no_model``.
        ``redactor`` (shared with the app's log filter, holding its API keys) redacts
        secrets in everything written to the session and to tool-output files.

        ``system_prompt``: a fixed text, or a source asked at the start of every turn
        with the tools that are on (`desktop_agent.prompt.ProjectPrompt.system_prompt`:
        the project's context files, skills and the tools, re-read when they changed).
        ``checkpoints`` (the workspace's store) snapshots the folder around every turn
        whose tools may change files, recorded as custom entries."""
        self.session = session
        self.redaction = SessionRedaction(session, redactor)
        self._model = model
        self.workspace = workspace
        self.approval_policy = approval_policy
        self._tool_output_dir = tool_output_dir
        wrapped: list[AgentTool] = []
        for tool in tools:
            if isinstance(tool, Tool):
                if workspace is None:
                    raise HarnessError("invalid_argument", "Built-in tools need a workspace")
                wrapped.append(self._wrap(tool, workspace))
            else:
                wrapped.append(tool)
        self.checkpoints: TurnCheckpoints | None = None
        if checkpoints is not None:
            turns = TurnCheckpoints(checkpoints, self._append_checkpoint, self._checkpoint_notice)
            self.checkpoints = turns
            wrapped = [
                t if t.definition.name in READ_ONLY_TOOLS else CheckpointedTool(t, turns)
                for t in wrapped
            ]
        self._tools = {t.definition.name: t for t in wrapped}
        self._more_tools = more_tools
        self._more_wrapped: dict[int, tuple[Tool[Any], AgentTool]] = {}
        self._system_prompt: str | PromptSource = system_prompt or DEFAULT_SYSTEM_PROMPT
        self._thinking_level = thinking_level
        self._active: list[str] = (
            [n for n in active_tool_names if n in self._tools]
            if active_tool_names is not None
            else list(self._tools)
        )
        self._get_api_key = get_api_key or (lambda _m: None)
        self.settings = settings or HarnessSettings()
        self._stream_fn = stream_fn
        self._clock: Clock = clock or RealClock()
        self.phase: Phase = "idle"
        self._listeners: list[Listener] = []
        self._steer: list[AgentMessage] = []
        self._follow_up: list[AgentMessage] = []
        self._next_turn: list[AgentMessage] = []
        self._writes = Persister(session, self._emit)
        self._abort = asyncio.Event()
        self._run_task: asyncio.Task[AssistantMessage | None] | None = None
        self._overflow_recovered = False

    def _wrap(self, tool: Tool[Any], workspace: Workspace) -> AgentTool:
        return WorkspaceTool(
            tool,
            workspace=workspace,
            policy=self.approval_policy,
            record=self.record,
            output_dir=self._tool_output_dir,
            redaction=self.redaction,
        )

    def _wrap_more(self, tool: Tool[Any], workspace: Workspace) -> AgentTool:
        """A tool of `more_tools`: it may change the folder (an MCP server's tool), so
        with checkpoints on the folder is snapshotted before it runs, as before ``write``."""
        agent_tool = self._wrap(tool, workspace)
        if self.checkpoints is None:
            return agent_tool
        return CheckpointedTool(agent_tool, self.checkpoints)

    def turn_tools(self) -> list[AgentTool]:
        """The tools of the next request: the active ones, then those `more_tools` lists
        now (not the ones whose name an active tool has; none without a workspace)."""
        tools = [self._tools[n] for n in self._active if n in self._tools]
        if self._more_tools is None or self.workspace is None:
            return tools
        taken = {t.definition.name for t in tools}
        wrapped: dict[int, tuple[Tool[Any], AgentTool]] = {}
        for tool in self._more_tools():
            if tool.name in taken:
                continue
            taken.add(tool.name)
            known = self._more_wrapped.get(id(tool))
            pair = known if known is not None and known[0] is tool else None
            wrapped[id(tool)] = pair or (tool, self._wrap_more(tool, self.workspace))
            tools.append(wrapped[id(tool)][1])
        self._more_wrapped = wrapped
        return tools

    # ------------------------------------------------------------- properties

    @property
    def model(self) -> Model | None:
        return self._model

    def _require_model(self) -> Model:
        if self._model is None:
            raise HarnessError("no_model", NO_MODEL)
        return self._model

    @property
    def thinking_level(self) -> str:
        return self._thinking_level

    @property
    def active_tool_names(self) -> list[str]:
        return list(self._active)

    @property
    def is_idle(self) -> bool:
        return self.phase == "idle"

    @property
    def unsaved_count(self) -> int:
        return self.session.pending_count

    @property
    def redaction_enabled(self) -> bool:
        """Whether secrets are redacted before they reach the session (per session)."""
        return self.redaction.enabled

    # ------------------------------------------------------------- listeners

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Hear every event (sync or async listener); returns an unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def _emit(self, event: HarnessEvent) -> None:
        for listener in list(self._listeners):
            try:
                outcome = listener(event)
                if inspect.isawaitable(outcome):
                    await outcome
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a failing listener must not kill the run
                _log.exception("listener failed on %s", event.type)

    # ------------------------------------------------------------- persistence

    async def retry_persistence(self) -> int:
        """Write exactly the entries that are not on disk yet; returns how many."""
        return await self._writes.retry()

    async def reload_from_disk(self, leaf: ReloadLeaf = "theirs") -> ReloadReport:
        """Another program wrote to the session file (``persistence_error`` with code
        ``changed_on_disk``): take in its entries and keep ours as a branch
        (`Session.reload_from_disk`). Only while idle, so no run appends meanwhile."""
        if self.phase != "idle":
            raise HarnessError("busy", "Stop the agent before reloading the session")
        report = await self.session.reload_from_disk(leaf)
        await self._writes.reloaded(report)
        return report

    async def _save_point(self) -> None:
        if self.checkpoints is not None:
            await self.checkpoints.turn_end()
        had = await self._writes.flush()
        await self._writes.persist(self.session.sync)
        await self._emit(
            SavePointEvent(had_pending_mutations=had, saved=self.session.pending_count == 0)
        )

    async def _write_or_queue(self, write: Callable[[], Awaitable[Any]]) -> None:
        if self.phase == "idle":
            await self._writes.persist_and_sync(write)
        else:
            self._writes.queue(write)

    # ------------------------------------------------------------- settings

    async def set_model(self, model: Model) -> None:
        previous = self._model
        self._model = model
        await self._write_or_queue(
            lambda: self.session.append_model_change(model.provider, model.id)
        )
        await self._emit(ModelSelectEvent(model=model, previous_model=previous))

    async def set_thinking_level(self, level: str) -> None:
        previous = self._thinking_level
        self._thinking_level = level
        await self._write_or_queue(lambda: self.session.append_thinking_level_change(level))
        await self._emit(ThinkingLevelSelectEvent(level=level, previous_level=previous))

    async def set_active_tools(self, names: Sequence[str]) -> None:
        unknown = [n for n in names if n not in self._tools]
        if unknown:
            raise HarnessError("invalid_argument", f"Unknown tool(s): {', '.join(unknown)}")
        self._active = list(names)
        chosen = list(names)
        await self._write_or_queue(lambda: self.session.append_active_tools_change(chosen))
        await self._emit(ActiveToolsSelectEvent(names=chosen))

    async def set_redaction(self, enabled: bool) -> None:
        """Turn secret redaction on or off for this session, from the next write on; the
        choice is recorded in the session (a `REDACTION_CUSTOM_TYPE` custom entry)."""
        self.redaction.set_enabled(enabled)
        await self._write_or_queue(
            lambda: self.session.append_custom_entry(REDACTION_CUSTOM_TYPE, {"enabled": enabled})
        )

    async def append_message(self, message: AgentMessage) -> None:
        redacted = self.redaction.message(message)
        await self._write_or_queue(lambda: self.session.append_message(redacted))

    async def record(self, custom_type: str, data: Any) -> None:
        """Record a custom entry (e.g. an approval decision), queued during a run."""
        redacted = self.redaction.data(data)
        await self._write_or_queue(lambda: self.session.append_custom_entry(custom_type, redacted))

    async def _append_checkpoint(self, data: dict[str, Any]) -> None:
        """A checkpoint is written where it happens (after the answer that called the
        tools, or after the turn's tool results), not queued to the turn's end."""
        await self._writes.persist(
            lambda: self.session.append_custom_entry(CHECKPOINT_CUSTOM_TYPE, data)
        )

    async def _checkpoint_notice(self, message: str) -> None:
        await self._emit(NoticeEvent(message=message))

    # ------------------------------------------------------------- queues

    async def _queue_changed(self) -> None:
        await self._emit(
            QueueUpdateEvent(
                steer=_texts(self._steer),
                follow_up=_texts(self._follow_up),
                next_turn=_texts(self._next_turn),
            )
        )

    async def steer(self, text: str, images: Sequence[ImageContent] = ()) -> None:
        if self.phase == "idle":
            raise HarnessError("invalid_state", "Cannot steer while idle")
        self._steer.append(_user(text, images))
        await self._queue_changed()

    async def follow_up(self, text: str, images: Sequence[ImageContent] = ()) -> None:
        if self.phase == "idle":
            raise HarnessError("invalid_state", "Cannot follow up while idle")
        self._follow_up.append(_user(text, images))
        await self._queue_changed()

    async def next_turn(self, text: str) -> None:
        self._next_turn.append(_user(text))
        await self._queue_changed()

    def _take(self, queue: list[AgentMessage], mode: str) -> list[AgentMessage]:
        if not queue:
            return []
        if mode == "all":
            taken = list(queue)
            queue.clear()
        else:
            taken = [queue.pop(0)]
        asyncio.get_running_loop().create_task(self._queue_changed())
        return taken

    # ------------------------------------------------------------- runs

    def tool_lines(self) -> list[ToolLine]:
        """The tools that are on (the MCP servers' too), as the system prompt names them."""
        return [ToolLine(t.definition.name, t.definition.description) for t in self.turn_tools()]

    async def system_prompt(self) -> str:
        """The system prompt the next turn sends (a source is asked off the loop: it
        stats, and when they changed reads, the project's files)."""
        source = self._system_prompt
        if isinstance(source, str):
            return source
        return await asyncio.to_thread(source, self.tool_lines())

    async def _prepare_turn(self) -> TurnSetup:
        context = await self.session.build_context()
        model = self._require_model()
        return TurnSetup(
            model=model,
            # A tool call cut off by a crash gets an "interrupted" result (context only).
            messages=with_interrupted_results(await _decoded(context.messages)),
            system_prompt=await self.system_prompt(),
            tools=self.turn_tools(),
            options=StreamOptions(
                api_key=self._get_api_key(model),
                thinking_level=self._thinking_level,  # type: ignore[arg-type]
                session_id=self.session.metadata.id,
            ),
        )

    async def _on_loop_event(self, event: AgentEvent) -> None:
        if isinstance(event, _CARRIES_CONTENT):
            # Off the loop: a big tool result or file content takes tens of ms to scan.
            _ = self.redaction.enabled  # the session's choice is read here, on the loop
            event = await asyncio.to_thread(self.redaction.event, event)
        if isinstance(event, MessageEndEvent):
            message = event.message
            entry_id: str | None = None

            async def append() -> None:
                nonlocal entry_id
                try:
                    entry_id = await self.session.append_message(message)
                except SessionWriteError:
                    entry_id = self.session.leaf_id()  # in memory, queued for writing
                    raise

            await self._writes.persist(append)
            if isinstance(message, UserMessage):
                # The prompt is durable before the provider is called.
                await self._writes.persist(self.session.sync)
            event = MessageSavedEvent(message=message, entry_id=entry_id)
        await self._emit(event)

    def _loop_config(self) -> LoopConfig:
        return LoopConfig(
            prepare_turn=self._prepare_turn,
            emit=self._on_loop_event,
            abort=self._abort,
            get_steering=lambda: self._take(self._steer, self.settings.steering_mode),
            get_follow_up=lambda: self._take(self._follow_up, self.settings.follow_up_mode),
            stream_fn=self._stream_fn,
            after_turn=self._save_point,
        )

    async def prompt(
        self, text: str, images: Sequence[ImageContent] = ()
    ) -> AssistantMessage | None:
        """Run one prompt to the end; returns the run's last assistant message."""
        if self.phase != "idle":
            raise HarnessError("busy", "The agent is already running")
        prompts = [*self._next_turn, _user(text, images)]
        if self._next_turn:
            self._next_turn.clear()
            await self._queue_changed()
        return await self._start_run(prompts)

    async def continue_run(self) -> AssistantMessage | None:
        """Run again from the current context (e.g. "Retry" after an error)."""
        if self.phase != "idle":
            raise HarnessError("busy", "The agent is already running")
        return await self._start_run([])

    async def _start_run(self, prompts: list[AgentMessage]) -> AssistantMessage | None:
        self._require_model()
        self.phase = "turn"
        self._abort = asyncio.Event()
        if self.checkpoints is not None:
            self.checkpoints.folder.run_started()
        task = asyncio.ensure_future(self._run(prompts))
        self._run_task = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            self._abort.set()
            await asyncio.wait([task])
            raise

    async def _run(self, prompts: list[AgentMessage]) -> AssistantMessage | None:
        last: AssistantMessage | None = None
        attempt = 0
        try:
            messages = await run_agent_loop(prompts, self._loop_config())
            while True:
                last = next(
                    (m for m in reversed(messages) if isinstance(m, AssistantMessage)), None
                )
                if last is None or last.stop_reason == "aborted" or self._abort.is_set():
                    break
                if last.stop_reason == "error":
                    model = self._require_model()
                    info = classify_error(last, context_window=model.context_window)
                    if info.overflow and self.settings.compaction_enabled:
                        if self._overflow_recovered:
                            await self._emit(
                                CompactionEndEvent(
                                    reason="overflow",
                                    success=False,
                                    error_message=(
                                        "The context is still too long after compacting once"
                                    ),
                                )
                            )
                            break
                        self._overflow_recovered = True
                        if await self._compact("overflow", None):
                            messages = await run_agent_loop([], self._loop_config())
                            continue
                        break
                    delay_ms = self.settings.retry.delay_ms(info, attempt + 1)
                    if delay_ms is not None:
                        attempt += 1
                        self.phase = "retry"
                        await self._emit(
                            AutoRetryStartEvent(
                                attempt=attempt,
                                max_attempts=self.settings.max_retries,
                                delay_ms=delay_ms,
                                error_message=last.error_message or "",
                            )
                        )
                        if not await self._sleep_unless_aborted(delay_ms / 1000):
                            await self._emit(
                                AutoRetryEndEvent(
                                    success=False, attempt=attempt, final_error="Aborted"
                                )
                            )
                            break
                        self.phase = "turn"
                        messages = await run_agent_loop([], self._loop_config())
                        continue
                    if attempt:
                        await self._emit(
                            AutoRetryEndEvent(
                                success=False, attempt=attempt, final_error=last.error_message
                            )
                        )
                    break
                # A successful answer.
                if attempt:
                    await self._emit(AutoRetryEndEvent(success=True, attempt=attempt))
                    attempt = 0
                self._overflow_recovered = False
                if self.settings.compaction_enabled and should_compact(
                    last.usage.context_tokens(),
                    self._require_model().context_window,
                    self.settings.reserve_tokens,
                ):
                    await self._compact("threshold", None)
                    if self._follow_up:
                        messages = await run_agent_loop([], self._loop_config())
                        continue
                break
        finally:
            if self.checkpoints is not None:
                try:
                    await self.checkpoints.turn_end()
                finally:
                    self.checkpoints.folder.run_ended()
            await self._writes.flush()
            await self._writes.persist(self.session.sync)
            self.phase = "idle"
            self._run_task = None
            await self._emit(SettledEvent(next_turn_count=len(self._next_turn)))
        return last

    async def _sleep_unless_aborted(self, seconds: float) -> bool:
        sleeper = asyncio.ensure_future(self._clock.sleep(seconds))
        aborter = asyncio.ensure_future(self._abort.wait())
        done, pending = await asyncio.wait({sleeper, aborter}, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.wait(pending | done)
        return sleeper in done and not self._abort.is_set()

    async def abort(self) -> tuple[list[str], list[str]]:
        """Stop the run (mid-stream or mid-tool) and wait until it has settled."""

        cleared_steer, cleared_follow = _texts(self._steer), _texts(self._follow_up)
        self._steer.clear()
        self._follow_up.clear()
        self._abort.set()
        await self._queue_changed()
        task = self._run_task
        if task is not None:
            await asyncio.wait([task])
        await self._emit(AbortEvent(cleared_steer=cleared_steer, cleared_follow_up=cleared_follow))
        return cleared_steer, cleared_follow

    async def wait_for_idle(self) -> None:
        task = self._run_task
        if task is not None:
            await asyncio.wait([task])

    # ------------------------------------------------------------- compaction

    async def _complete(self, model: Model, context: LlmContext, options: StreamOptions) -> Any:
        async with self._stream_fn(model, context, options) as events:
            async for _event in events:
                pass
            return events.final_message

    async def _compact(
        self, reason: Literal["manual", "threshold", "overflow"], instructions: str | None
    ) -> bool:
        model = self._require_model()
        previous_phase = self.phase
        self.phase = "compaction"
        await self._emit(CompactionStartEvent(reason=reason))
        try:
            path = await self.session.get_branch()
            context = await self.session.build_context()
            preparation = prepare_compaction(
                path, await _decoded(context.messages), self.settings.keep_recent_tokens
            )
            if preparation is None:
                raise CompactionError("nothing_to_compact", "Nothing to compact")
            result = await run_compaction(
                preparation,
                model=model,
                options=StreamOptions(
                    api_key=self._get_api_key(model),
                    thinking_level=self._thinking_level,  # type: ignore[arg-type]
                    abort=self._abort,
                ),
                complete=self._complete,
                reserve_tokens=self.settings.reserve_tokens,
                custom_instructions=instructions,
            )
            entry_id = ""
            result.summary = self.redaction.text(result.summary)
            result.details = self.redaction.data(result.details)

            async def write() -> None:
                nonlocal entry_id
                entry_id = await self.session.append_compaction(
                    result.summary,
                    result.first_kept_entry_id,
                    result.tokens_before,
                    result.details,
                    False,
                )

            await self._writes.persist(write)
            await self._writes.persist(self.session.sync)
        except CompactionError as exc:
            await self._emit(
                CompactionEndEvent(reason=reason, success=False, error_message=str(exc))
            )
            if reason == "manual":
                raise HarnessError("compaction", str(exc)) from exc
            return False
        finally:
            self.phase = previous_phase
        await self._emit(
            SessionCompactEvent(
                compaction_entry_id=entry_id,
                summary=result.summary,
                first_kept_entry_id=result.first_kept_entry_id,
                tokens_before=result.tokens_before,
                reason=reason,
            )
        )
        await self._emit(CompactionEndEvent(reason=reason, success=True))
        return True

    async def compact(self, instructions: str | None = None) -> None:
        """Summarize older history now (``busy`` while a run is active)."""
        if self.phase != "idle":
            raise HarnessError("busy", "The agent is running")
        self._abort = asyncio.Event()
        try:
            await self._compact("manual", instructions)
        finally:
            self.phase = "idle"

    def context_usage(self, messages: Sequence[AgentMessage]) -> int:
        """Estimated tokens of a context (usage of the last answer plus estimates after it)."""
        return estimate_context_tokens(messages)

    # ------------------------------------------------------------- tree navigation

    async def navigate_tree(
        self,
        target_id: str | None,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        exact: bool = False,
    ) -> NavigateResult:
        """Move the leaf to ``target_id`` (a ``leaf`` entry is written), optionally leaving a
        summary of the abandoned branch. A user message target moves to its parent and
        returns its text for editing (Pi's rule), unless ``exact``: then the leaf lands on
        the target itself (switching to a branch that ends in a prompt)."""
        if self.phase != "idle":
            raise HarnessError("busy", "The agent is running")
        model = self._require_model() if summarize else None
        old_leaf = await self.session.get_leaf_id()
        target = await self.session.get_entry(target_id) if target_id is not None else None
        if target_id is not None and target is None:
            raise HarnessError("invalid_argument", f"Entry {target_id} not found")
        new_leaf, editor_text = landing(target, target_id, exact=exact)
        if new_leaf == old_leaf:
            # Already there (a prompt that is the leaf still goes back to the editor).
            return NavigateResult(cancelled=False, editor_text=editor_text)
        summary: dict[str, Any] | None = None
        if model is not None and old_leaf is not None:
            self.phase = "branch_summary"
            self._abort = asyncio.Event()
            try:
                summary = await summarize_abandoned(
                    self.session,
                    old_leaf,
                    new_leaf,
                    model=model,
                    options=StreamOptions(api_key=self._get_api_key(model), abort=self._abort),
                    complete=self._complete,
                    reserve_tokens=self.settings.reserve_tokens,
                    custom_instructions=custom_instructions,
                    redaction=self.redaction,
                )
            except CompactionError as exc:
                if exc.code == "aborted":
                    return NavigateResult(cancelled=True)
                raise HarnessError("branch_summary", str(exc)) from exc
            finally:
                self.phase = "idle"
        summary_id: str | None = None

        async def move() -> None:
            nonlocal summary_id
            summary_id = await self.session.move_to(new_leaf, summary)

        try:
            await self._writes.persist(move)
        except SessionError as exc:
            raise HarnessError("invalid_argument", exc.message) from exc
        await self._writes.persist(self.session.sync)
        await self._emit(
            SessionTreeEvent(
                new_leaf_id=await self.session.get_leaf_id(),
                old_leaf_id=old_leaf,
                summary_entry_id=summary_id,
            )
        )
        return NavigateResult(cancelled=False, editor_text=editor_text, summary_entry_id=summary_id)

    async def abort_navigation(self) -> None:
        """Cancel a branch summary in progress (the move does not happen)."""
        self._abort.set()


_DECODE_IN_THREAD = 2_000


async def _decoded(messages: Sequence[AgentMessage]) -> list[AgentMessage]:
    """Every message of a context (a session decodes them when read): a long branch is
    decoded in a worker thread, so the first turn after restoring a huge session does
    not stall the event loop."""
    if len(messages) > _DECODE_IN_THREAD:
        return await asyncio.to_thread(list, messages)
    return list(messages)
