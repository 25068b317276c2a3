"""The pure agent loop: context -> stream -> tool calls -> results -> again.

No I/O of its own and no printing: the loop asks its caller for the turn's context
(`TurnSetup`), streams through an injectable stream function, runs tools, and reports
everything as events through ``emit`` (awaited, in order). The caller persists, shows
and decides; the loop only sequences (SESSION_FORMAT.md §9.4).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageEvent,
    ContentBlock,
    LlmContext,
    Model,
    StreamOptions,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    convert_to_llm,
    stream,
)

# ----------------------------------------------------------------------------- tools


ABORTED_DETAILS = {"aborted": True}
"""The details of a tool result the user stopped (Stop, Esc): the window shows it as
stopped, not as an error (FIRST_HOUR.md p14); the model reads "Aborted"."""


@dataclass
class AgentToolResult:
    """What a tool returns (also used for streamed partial results)."""

    content: list[ContentBlock]
    details: Any = None
    is_error: bool = False


ToolUpdate: TypeAlias = Callable[[AgentToolResult], None]


class AgentTool(Protocol):
    """A tool as the loop drives it."""

    @property
    def definition(self) -> ToolDefinition: ...

    @property
    def execution_mode(self) -> Literal["parallel", "sequential"]: ...

    async def execute(
        self, call_id: str, arguments: dict[str, Any], on_update: ToolUpdate
    ) -> AgentToolResult:
        """Run the call; cancellation means the run was aborted."""
        ...


# ----------------------------------------------------------------------------- events


@dataclass(kw_only=True)
class AgentStartEvent:
    type: Literal["agent_start"] = field(default="agent_start", init=False)


@dataclass(kw_only=True)
class TurnStartEvent:
    type: Literal["turn_start"] = field(default="turn_start", init=False)


@dataclass(kw_only=True)
class MessageStartEvent:
    message: AgentMessage
    type: Literal["message_start"] = field(default="message_start", init=False)


@dataclass(kw_only=True)
class MessageUpdateEvent:
    """A streamed change; ``message`` is a snapshot of the partial assistant message."""

    message: AssistantMessage
    assistant_message_event: AssistantMessageEvent
    type: Literal["message_update"] = field(default="message_update", init=False)


@dataclass(kw_only=True)
class MessageEndEvent:
    message: AgentMessage
    type: Literal["message_end"] = field(default="message_end", init=False)


@dataclass(kw_only=True)
class ToolExecutionStartEvent:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    type: Literal["tool_execution_start"] = field(default="tool_execution_start", init=False)


@dataclass(kw_only=True)
class ToolExecutionUpdateEvent:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: AgentToolResult
    type: Literal["tool_execution_update"] = field(default="tool_execution_update", init=False)


@dataclass(kw_only=True)
class ToolExecutionEndEvent:
    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool
    type: Literal["tool_execution_end"] = field(default="tool_execution_end", init=False)


@dataclass(kw_only=True)
class TurnEndEvent:
    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    type: Literal["turn_end"] = field(default="turn_end", init=False)


@dataclass(kw_only=True)
class AgentEndEvent:
    messages: list[AgentMessage]
    type: Literal["agent_end"] = field(default="agent_end", init=False)


AgentEvent: TypeAlias = (
    AgentStartEvent
    | TurnStartEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | TurnEndEvent
    | AgentEndEvent
)

# ----------------------------------------------------------------------------- config


@dataclass
class TurnSetup:
    """Everything one provider call needs, rebuilt by the caller before every call."""

    model: Model
    messages: Sequence[AgentMessage]
    system_prompt: str | None
    tools: Sequence[AgentTool]
    options: StreamOptions


StreamFn: TypeAlias = Callable[[Model, LlmContext, StreamOptions], Any]


@dataclass
class LoopConfig:
    """The loop's collaborators (all supplied by the harness)."""

    prepare_turn: Callable[[], Awaitable[TurnSetup]]
    emit: Callable[[AgentEvent], Awaitable[None]]
    abort: asyncio.Event
    get_steering: Callable[[], list[AgentMessage]] = list
    get_follow_up: Callable[[], list[AgentMessage]] = list
    stream_fn: StreamFn = stream
    after_turn: Callable[[], Awaitable[None]] | None = None
    """Awaited after every ``turn_end`` (the harness flushes queued writes there)."""


def _now_ms() -> int:
    return int(time.time() * 1000)


def _aborted_tool_result(call: ToolCall, text: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=text)],
        is_error=True,
        timestamp=_now_ms(),
    )


# ----------------------------------------------------------------------------- the loop


async def run_agent_loop(prompts: Sequence[AgentMessage], config: LoopConfig) -> list[AgentMessage]:
    """Run until the model stops (no tool calls, no queued messages) or fails/aborts.

    Returns every message the run produced, prompts included, in order.
    """
    new_messages: list[AgentMessage] = []
    emit = config.emit
    await emit(AgentStartEvent())
    await emit(TurnStartEvent())
    for prompt in prompts:
        await emit(MessageStartEvent(message=prompt))
        await emit(MessageEndEvent(message=prompt))
        new_messages.append(prompt)

    pending: list[AgentMessage] = config.get_steering()
    first_turn = True
    while True:
        has_tool_calls = True
        while has_tool_calls or pending:
            if not first_turn:
                await emit(TurnStartEvent())
            first_turn = False
            for message in pending:
                await emit(MessageStartEvent(message=message))
                await emit(MessageEndEvent(message=message))
                new_messages.append(message)
            pending = []

            setup = await config.prepare_turn()
            assistant = await _stream_assistant(setup, config)
            new_messages.append(assistant)
            if assistant.stop_reason in ("error", "aborted"):
                await emit(TurnEndEvent(message=assistant, tool_results=[]))
                if config.after_turn is not None:
                    await config.after_turn()
                await emit(AgentEndEvent(messages=new_messages))
                return new_messages

            calls = [b for b in assistant.content if isinstance(b, ToolCall)]
            has_tool_calls = bool(calls)
            results: list[ToolResultMessage] = []
            if calls:
                results = await _execute_tool_calls(calls, setup.tools, config)
                new_messages.extend(results)
            await emit(TurnEndEvent(message=assistant, tool_results=results))
            if config.after_turn is not None:
                await config.after_turn()
            pending = config.get_steering()

        follow_ups = config.get_follow_up()
        if not follow_ups:
            break
        pending = follow_ups
    await emit(AgentEndEvent(messages=new_messages))
    return new_messages


async def _stream_assistant(setup: TurnSetup, config: LoopConfig) -> AssistantMessage:
    """One provider call; every provider event becomes a ``message_update``."""
    context = LlmContext(
        system_prompt=setup.system_prompt,
        messages=convert_to_llm(list(setup.messages)),
        tools=tuple(t.definition for t in setup.tools),
    )
    setup.options.abort = config.abort
    events = config.stream_fn(setup.model, context, setup.options)
    started = False
    final: AssistantMessage | None = None
    async with events:
        async for event in events:
            kind = event.type
            if kind == "start":
                started = True
                await config.emit(MessageStartEvent(message=event.partial.model_copy(deep=True)))
            elif kind in ("done", "error"):
                final = event.message
            else:
                partial = snapshot(event.partial)
                await config.emit(
                    MessageUpdateEvent(message=partial, assistant_message_event=event)
                )
        if final is None:
            final = events.final_message
    assert final is not None, "a stream always ends with a final message"
    if not started:
        await config.emit(MessageStartEvent(message=final))
    await config.emit(MessageEndEvent(message=final))
    return final


async def _execute_tool_calls(
    calls: list[ToolCall], tools: Sequence[AgentTool], config: LoopConfig
) -> list[ToolResultMessage]:
    """Run the calls (in parallel unless a called tool is sequential); results in call order."""
    by_name = {t.definition.name: t for t in tools}
    sequential = any(
        by_name[c.name].execution_mode == "sequential" for c in calls if c.name in by_name
    )
    results: dict[str, ToolResultMessage] = {}

    async def run_one(call: ToolCall) -> None:
        tool = by_name.get(call.name)
        if tool is None:
            result = AgentToolResult([TextContent(text=f"Tool {call.name} not found")], None, True)
        elif (problem := tool.definition.validate(call.arguments)) is not None:
            result = AgentToolResult(
                [TextContent(text=f"Invalid arguments for {call.name}: {problem}")], None, True
            )
        elif config.abort.is_set():
            result = AgentToolResult(
                [TextContent(text="Aborted before it ran")],
                {**ABORTED_DETAILS, "notRun": True},
                True,
            )
        else:
            updates: asyncio.Queue[AgentToolResult] = asyncio.Queue()
            task = asyncio.ensure_future(
                tool.execute(call.id, dict(call.arguments), updates.put_nowait)
            )
            abort_wait = asyncio.ensure_future(config.abort.wait())
            try:
                while True:
                    getter = asyncio.ensure_future(updates.get())
                    done, _ = await asyncio.wait(
                        {task, getter, abort_wait}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if getter in done:
                        await config.emit(
                            ToolExecutionUpdateEvent(
                                tool_call_id=call.id,
                                tool_name=call.name,
                                args=call.arguments,
                                partial_result=getter.result(),
                            )
                        )
                        continue
                    getter.cancel()
                    await asyncio.wait([getter])
                    if task in done:
                        break
                    # Aborted: cancel the tool and wait for its clean-up.
                    task.cancel()
                    await asyncio.wait([task])
                    break
                while not updates.empty():
                    await config.emit(
                        ToolExecutionUpdateEvent(
                            tool_call_id=call.id,
                            tool_name=call.name,
                            args=call.arguments,
                            partial_result=updates.get_nowait(),
                        )
                    )
                if task.cancelled():
                    result = AgentToolResult(
                        [TextContent(text="Aborted")], dict(ABORTED_DETAILS), True
                    )
                elif (exc := task.exception()) is not None:
                    result = AgentToolResult(
                        [TextContent(text=f"{type(exc).__name__}: {exc}")], None, True
                    )
                else:
                    result = task.result()
            finally:
                for pending in (task, abort_wait):
                    if not pending.done():
                        pending.cancel()
                await asyncio.wait([task, abort_wait])
        await config.emit(
            ToolExecutionEndEvent(
                tool_call_id=call.id, tool_name=call.name, result=result, is_error=result.is_error
            )
        )
        results[call.id] = ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=result.content,
            details=result.details,
            is_error=result.is_error,
            timestamp=_now_ms(),
        )

    for call in calls:
        await config.emit(
            ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments)
        )
        if sequential:
            await run_one(call)
    if not sequential:
        await asyncio.gather(*(run_one(call) for call in calls))

    ordered: list[ToolResultMessage] = []
    for call in calls:
        message = results.get(call.id) or _aborted_tool_result(call, "No result")
        await config.emit(MessageStartEvent(message=message))
        await config.emit(MessageEndEvent(message=message))
        ordered.append(message)
    return ordered


def snapshot(message: AssistantMessage) -> AssistantMessage:
    """A copy of a streaming message that later deltas leave as it is.

    The message builder appends blocks, reassigns their fields (text grows by ``+=``, tool
    arguments are replaced whole) and updates the usage and its cost in place; it never
    changes a nested value inside a block. So copying the list, each block and the usage is
    enough: a deep copy on every delta walks the whole argument (a 1 MB ``write``)
    thousands of times.
    """
    usage = message.usage.model_copy(update={"cost": message.usage.cost.model_copy()})
    content = [block.model_copy() for block in message.content]
    return message.model_copy(update={"content": content, "usage": usage})
