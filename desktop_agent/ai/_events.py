"""Stream context, options and the event protocol of SESSION_FORMAT.md §2.4.

Every event but the terminal ones carries ``partial``: the assistant message under
construction. It is one live object, updated in place by later events; copy it
(``model_copy(deep=True)``) to keep a snapshot. The terminal ``done``/``error`` event carries
the same object in its final state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from desktop_agent.ai._messages import (
    AssistantMessage,
    Message,
    ThinkingLevel,
    ToolCall,
)
from desktop_agent.ai._tools import ToolDefinition


@dataclass(slots=True)
class LlmContext:
    """What the model sees: system prompt, LLM messages (see `convert_to_llm`), tools."""

    system_prompt: str | None = None
    messages: Sequence[Message] = ()
    tools: Sequence[ToolDefinition] = ()


@dataclass(slots=True)
class StreamOptions:
    """Per-call options. ``api_key`` is never shown by ``repr`` and never logged.

    ``abort``: set this event to end the stream early; the stream then finishes promptly
    with an ``error`` event whose reason is ``aborted`` (partial content kept).
    """

    api_key: str | None = field(default=None, repr=False)
    thinking_level: ThinkingLevel = "off"
    max_tokens: int | None = None
    temperature: float | None = None
    headers: Mapping[str, str] | None = None
    timeout_s: float = 600.0
    connect_timeout_s: float = 10.0
    max_retries: int = 0
    """Retries done by the SDK itself; the harness does its own (visible) retries."""
    abort: asyncio.Event | None = None
    cache: bool = True
    """Ask for prompt caching where the API needs to be asked (Anthropic cache_control)."""
    session_id: str | None = None
    """Sent as ``prompt_cache_key`` to the OpenAI Responses API to help caching."""


# ------------------------------------------------------------------------------- events


@dataclass(slots=True, kw_only=True)
class StartEvent:
    partial: AssistantMessage
    type: Literal["start"] = field(default="start", init=False)


@dataclass(slots=True, kw_only=True)
class TextStartEvent:
    content_index: int
    partial: AssistantMessage
    type: Literal["text_start"] = field(default="text_start", init=False)


@dataclass(slots=True, kw_only=True)
class TextDeltaEvent:
    content_index: int
    delta: str
    partial: AssistantMessage
    type: Literal["text_delta"] = field(default="text_delta", init=False)


@dataclass(slots=True, kw_only=True)
class TextEndEvent:
    content_index: int
    content: str
    partial: AssistantMessage
    type: Literal["text_end"] = field(default="text_end", init=False)


@dataclass(slots=True, kw_only=True)
class ThinkingStartEvent:
    content_index: int
    partial: AssistantMessage
    type: Literal["thinking_start"] = field(default="thinking_start", init=False)


@dataclass(slots=True, kw_only=True)
class ThinkingDeltaEvent:
    content_index: int
    delta: str
    partial: AssistantMessage
    type: Literal["thinking_delta"] = field(default="thinking_delta", init=False)


@dataclass(slots=True, kw_only=True)
class ThinkingEndEvent:
    content_index: int
    content: str
    partial: AssistantMessage
    type: Literal["thinking_end"] = field(default="thinking_end", init=False)


@dataclass(slots=True, kw_only=True)
class ToolCallStartEvent:
    content_index: int
    partial: AssistantMessage
    type: Literal["toolcall_start"] = field(default="toolcall_start", init=False)


@dataclass(slots=True, kw_only=True)
class ToolCallDeltaEvent:
    """``delta``: the raw JSON fragment; ``partial``'s tool call has the arguments so far."""

    content_index: int
    delta: str
    partial: AssistantMessage
    type: Literal["toolcall_delta"] = field(default="toolcall_delta", init=False)


@dataclass(slots=True, kw_only=True)
class ToolCallEndEvent:
    """A finished tool call; ``validation_error`` says why its arguments do not fit the tool."""

    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage
    validation_error: str | None = None
    type: Literal["toolcall_end"] = field(default="toolcall_end", init=False)


@dataclass(slots=True, kw_only=True)
class DoneEvent:
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage
    type: Literal["done"] = field(default="done", init=False)


@dataclass(slots=True, kw_only=True)
class ErrorEvent:
    """Terminal failure: ``error`` is the final assistant message (with ``errorMessage``)."""

    reason: Literal["aborted", "error"]
    error: AssistantMessage
    type: Literal["error"] = field(default="error", init=False)

    @property
    def message(self) -> AssistantMessage:
        return self.error


AssistantMessageEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)
