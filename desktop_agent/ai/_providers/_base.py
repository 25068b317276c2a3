"""Shared machinery of the provider adapters: the message builder and lazy SDK loading."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from types import ModuleType
from typing import Any, Literal, TypeAlias

from desktop_agent.ai._errors import ErrorInfo
from desktop_agent.ai._events import (
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    LlmContext,
    StartEvent,
    StreamOptions,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from desktop_agent.ai._messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from desktop_agent.ai._models import Model, calculate_cost
from desktop_agent.ai._tools import PartialJson, ToolDefinition, validate_tool_arguments

FinalReason: TypeAlias = Literal["stop", "length", "toolUse"]
Provider: TypeAlias = Callable[
    [Model, LlmContext, StreamOptions, "MessageBuilder"], AsyncIterator[AssistantMessageEvent]
]


def now_ms() -> int:
    return int(time.time() * 1000)


async def load_sdk(name: str) -> ModuleType:
    """Import an SDK off the event loop's thread (importing one takes a second or more).

    A module another thread is still importing (the start-up warm-up, when the first
    message is sent at once) is in ``sys.modules`` half initialized: that one is waited
    for (`importlib` blocks on the module's lock), never returned.
    """
    module = sys.modules.get(name)
    if module is not None and not getattr(
        getattr(module, "__spec__", None), "_initializing", False
    ):
        return module
    return await asyncio.to_thread(importlib.import_module, name)


async def settle() -> None:
    """Let the loop run the clean-up tasks of SDK generators dropped mid-iteration.

    The SDKs break out of their SSE generators at ``[DONE]``; asyncio then closes the
    abandoned generators (a chain of them, down to the connection pool) in tasks of their
    own. Waiting here until those are done means no such task outlives the stream.
    """
    quiet = 0
    for _ in range(100):
        await asyncio.sleep(0)
        current = asyncio.current_task()
        busy = any(
            not task.done() and type(task.get_coro()).__name__ == "async_generator_athrow"
            for task in asyncio.all_tasks()
            if task is not current
        )
        quiet = 0 if busy else quiet + 1
        if quiet >= 3:
            return


def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` (and of its long prefixes) hidden."""
    if not secret or len(secret) < 4:
        return text
    text = text.replace(secret, "***")
    if len(secret) >= 12:
        # Providers echo keys partly ("sk-abc…xyz"); hide any 8+ char piece of it too.
        for size in (len(secret) - 1, 16, 12, 8):
            if size < 8 or size >= len(secret):
                continue
            for start in range(len(secret) - size + 1):
                piece = secret[start : start + size]
                if piece in text:
                    text = text.replace(piece, "***")
    return text


class MessageBuilder:
    """Builds the assistant message of one stream and the events that describe it."""

    def __init__(self, model: Model, tools: Sequence[ToolDefinition] = ()) -> None:
        self.model = model
        self.tools = tuple(tools)
        self.message = AssistantMessage(
            content=[],
            api=model.api,
            provider=model.provider,
            model=model.id,
            usage=Usage(),
            stop_reason="stop",
            timestamp=now_ms(),
        )
        self.stop_reason: FinalReason = "stop"
        self.completed = False
        """Set by the adapter when the provider said the response is complete."""
        self.finished = False
        self._json: dict[int, PartialJson] = {}
        self._open: dict[int, str] = {}

    # -- blocks ----------------------------------------------------------------------

    def start(self) -> StartEvent:
        return StartEvent(partial=self.message)

    def _add(self, block: Any, kind: str) -> int:
        self.message.content.append(block)
        index = len(self.message.content) - 1
        self._open[index] = kind
        return index

    def text_start(self) -> tuple[int, TextStartEvent]:
        index = self._add(TextContent(text=""), "text")
        return index, TextStartEvent(content_index=index, partial=self.message)

    def text_delta(self, index: int, delta: str) -> TextDeltaEvent:
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        block.text += delta
        return TextDeltaEvent(content_index=index, delta=delta, partial=self.message)

    def text_end(self, index: int, signature: str | None = None) -> TextEndEvent:
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        if signature:
            block.text_signature = signature
        self._open.pop(index, None)
        return TextEndEvent(content_index=index, content=block.text, partial=self.message)

    def thinking_start(self, *, redacted: bool = False) -> tuple[int, ThinkingStartEvent]:
        block = ThinkingContent(thinking="")
        if redacted:
            block.redacted = True
        index = self._add(block, "thinking")
        return index, ThinkingStartEvent(content_index=index, partial=self.message)

    def thinking_delta(self, index: int, delta: str) -> ThinkingDeltaEvent:
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        block.thinking += delta
        return ThinkingDeltaEvent(content_index=index, delta=delta, partial=self.message)

    def thinking_signature(self, index: int, signature: str, *, append: bool = True) -> None:
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        block.thinking_signature = (
            (block.thinking_signature or "") + signature if append else signature
        )

    def thinking_end(self, index: int) -> ThinkingEndEvent:
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        self._open.pop(index, None)
        return ThinkingEndEvent(content_index=index, content=block.thinking, partial=self.message)

    def toolcall_start(self, call_id: str, name: str) -> tuple[int, ToolCallStartEvent]:
        index = self._add(ToolCall(id=call_id, name=name, arguments={}), "toolCall")
        self._json[index] = PartialJson()
        return index, ToolCallStartEvent(content_index=index, partial=self.message)

    def tool_call(self, index: int) -> ToolCall:
        block = self.message.content[index]
        assert isinstance(block, ToolCall)
        return block

    def toolcall_delta(self, index: int, fragment: str) -> ToolCallDeltaEvent:
        parser = self._json[index]
        parser.feed(fragment)
        value = parser.maybe_value()
        if isinstance(value, dict):
            self.tool_call(index).arguments = value
        return ToolCallDeltaEvent(content_index=index, delta=fragment, partial=self.message)

    def toolcall_end(self, index: int, full_json: str | None = None) -> ToolCallEndEvent:
        """Finish a tool call: parse the whole argument text and validate it."""
        call = self.tool_call(index)
        parser = self._json.get(index) or PartialJson()
        text = full_json if full_json is not None else parser.text
        error: str | None = None
        if text.strip():
            try:
                value = json.loads(text)
            except ValueError:
                value = parser.value() if full_json is None else _partial(text)
                error = "arguments are not valid JSON"
            if isinstance(value, dict):
                call.arguments = value
            else:
                call.arguments = {}
                error = error or "arguments are not a JSON object"
        else:
            call.arguments = {}
        if error is None and self.tools:
            error = validate_tool_arguments(self.tools, call.name, call.arguments)
        self._open.pop(index, None)
        return ToolCallEndEvent(
            content_index=index, tool_call=call, partial=self.message, validation_error=error
        )

    def open_blocks(self) -> list[tuple[int, str]]:
        return sorted(self._open.items())

    # -- usage and the end -----------------------------------------------------------

    def set_usage(
        self,
        *,
        input: int | None = None,
        output: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
    ) -> None:
        usage = self.message.usage
        if input is not None:
            usage.input = input
        if output is not None:
            usage.output = output
        if cache_read is not None:
            usage.cache_read = cache_read
        if cache_write is not None:
            usage.cache_write = cache_write
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        calculate_cost(self.model, usage)

    def _close_partial_tool_calls(self) -> None:
        for index, kind in self.open_blocks():
            if kind == "toolCall":
                value = self._json[index].value()
                self.tool_call(index).arguments = value if isinstance(value, dict) else {}

    def _seal(self) -> None:
        self.finished = True
        self.message._key_order = None  # canonical field order in to_json_dict()
        calculate_cost(self.model, self.message.usage)

    def finish(self) -> DoneEvent:
        if (
            any(isinstance(b, ToolCall) for b in self.message.content)
            and self.stop_reason == "stop"
        ):
            self.stop_reason = "toolUse"
        self.message.stop_reason = self.stop_reason
        self._seal()
        return DoneEvent(reason=self.stop_reason, message=self.message)

    def finish_error(self, info: ErrorInfo, *, api_key: str | None = None) -> ErrorEvent:
        self._close_partial_tool_calls()
        message = redact(info.message, api_key)
        self.message.stop_reason = "error"
        self.message.error_message = message
        diagnostic = info.to_diagnostic(now_ms())
        diagnostic["error"]["message"] = message
        self.message.diagnostics = [*(self.message.diagnostics or []), diagnostic]
        self._seal()
        return ErrorEvent(reason="error", error=self.message)

    def finish_aborted(self, reason: str = "Request was aborted") -> ErrorEvent:
        self._close_partial_tool_calls()
        self.message.stop_reason = "aborted"
        self.message.error_message = reason
        self._seal()
        return ErrorEvent(reason="aborted", error=self.message)


def _partial(text: str) -> Any:
    parser = PartialJson()
    parser.feed(text)
    return parser.value()
