"""``openai-completions``: Chat Completions through the ``openai`` SDK.

Works with OpenAI and with OpenAI-compatible local servers (Ollama, LM Studio, llama.cpp,
vLLM): tool calls may arrive in pieces (name and id late, arguments split anywhere, several
calls interleaved), usage may be missing, and reasoning may come as ``reasoning_content``,
``reasoning`` or ``reasoning_text`` in the deltas.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator
from typing import Any

from desktop_agent.ai._errors import ErrorInfo, ProviderError, info_from_error_body
from desktop_agent.ai._events import AssistantMessageEvent, LlmContext, StreamOptions
from desktop_agent.ai._messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.ai._models import Model, ModelCompat
from desktop_agent.ai._providers._base import FinalReason, MessageBuilder, settle
from desktop_agent.ai._providers._common import (
    client_kwargs,
    images_of,
    int_or_none,
    text_of,
)
from desktop_agent.ai._providers._merge import COMPLETIONS
from desktop_agent.ai._providers._worker import sdk_events, start_sdk_stream
from desktop_agent.ai._thinking import thinking_value
from desktop_agent.ai._transform import transform_messages

_FINISH: dict[str, FinalReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}
_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"},
    }


def _user_content(content: list[Any] | str) -> list[dict[str, Any]] | str:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            parts.append(_image_part(block))
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def convert_messages(
    messages: list[Message], model: Model, system_prompt: str | None
) -> list[dict[str, Any]]:
    compat = model.compat or ModelCompat()
    out: list[dict[str, Any]] = []
    if system_prompt:
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        out.append({"role": role, "content": system_prompt})
    pending_images: list[ImageContent] = []
    for message in transform_messages(messages, model):
        if not isinstance(message, ToolResultMessage) and pending_images:
            out.append(
                {"role": "user", "content": [_tool_image_note(), *map(_image_part, pending_images)]}
            )
            pending_images = []
        if isinstance(message, UserMessage):
            content = _user_content(message.content)
            if content:
                out.append({"role": "user", "content": content})
        elif isinstance(message, AssistantMessage):
            text = "".join(b.text for b in message.content if isinstance(b, TextContent))
            calls = [b for b in message.content if isinstance(b, ToolCall)]
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in calls
                ]
            if text or calls:
                out.append(entry)
        elif isinstance(message, ToolResultMessage):
            text = text_of(message.content)
            images = images_of(message.content)
            if images and model.supports_images:
                pending_images.extend(images)
                text = text or "(see the image(s) in the next message)"
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id,
                    "content": text or "(no output)",
                }
            )
    if pending_images:
        out.append(
            {"role": "user", "content": [_tool_image_note(), *map(_image_part, pending_images)]}
        )
    return out


def _tool_image_note() -> dict[str, Any]:
    return {"type": "text", "text": "Image(s) returned by the tool:"}


def build_params(model: Model, context: LlmContext, options: StreamOptions) -> dict[str, Any]:
    compat = model.compat or ModelCompat()
    params: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(list(context.messages), model, context.system_prompt),
        "stream": True,
    }
    extra: dict[str, Any] = {}
    if compat.supports_usage_in_streaming:
        params["stream_options"] = {"include_usage": True}
    max_tokens = options.max_tokens
    if max_tokens:
        if compat.max_tokens_field == "max_tokens":
            params["max_tokens"] = max_tokens
        else:
            params["max_completion_tokens"] = max_tokens
    if context.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.json_schema(),
                },
            }
            for t in context.tools
        ]
    effort = thinking_value(model, options.thinking_level) if model.reasoning else None
    if effort is not None and compat.supports_reasoning_effort:
        params["reasoning_effort"] = str(effort)
    if options.temperature is not None and effort is None:
        params["temperature"] = options.temperature
    if extra:
        params["extra_body"] = extra
    return params


class _State:
    def __init__(self) -> None:
        self.text_index: int | None = None
        self.thinking_index: int | None = None
        self.calls: dict[Any, int] = {}  # tool-call key -> content index
        self.call_order: list[int] = []
        self.last_call_key: Any = None
        self.finish: str | None = None


async def stream_openai_completions(
    model: Model, context: LlmContext, options: StreamOptions, builder: MessageBuilder
) -> AsyncGenerator[AssistantMessageEvent, None]:
    start = await start_sdk_stream(
        "openai",
        lambda: build_params(model, context, options),
        lambda sdk: sdk.AsyncOpenAI(base_url=model.base_url, **client_kwargs(model, options, sdk)),
        lambda client, params: client.chat.completions.create(**params),
    )

    events: Any = None
    state = _State()
    try:
        events = sdk_events(start, COMPLETIONS)
        async for chunk in events:
            if chunk.get("error"):
                raise ProviderError(_chunk_error(chunk["error"]))
            if chunk.get("id") and not builder.message.response_id:
                builder.message.response_id = str(chunk["id"])
            if chunk.get("model") and not builder.message.response_model:
                builder.message.response_model = str(chunk["model"])
            if chunk.get("usage"):
                _usage(builder, chunk["usage"])
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                for event in _apply_delta(builder, state, delta):
                    yield event
                if choice.get("finish_reason"):
                    state.finish = str(choice["finish_reason"])
        for event in _close_text_and_thinking(builder, state):
            yield event
        for index in state.call_order:
            yield builder.toolcall_end(index)
        if state.finish is not None:
            if state.finish == "content_filter":
                raise ProviderError(
                    ErrorInfo(
                        kind="refusal",
                        message="The provider's content filter stopped the response",
                        error_type="content_filter",
                    )
                )
            builder.stop_reason = _FINISH.get(state.finish, "stop")
            builder.completed = True
    finally:
        if events is not None:
            await events.aclose()
        await settle()


def _close_text_and_thinking(builder: MessageBuilder, state: _State) -> list[AssistantMessageEvent]:
    events: list[AssistantMessageEvent] = []
    if state.thinking_index is not None:
        events.append(builder.thinking_end(state.thinking_index))
        state.thinking_index = None
    if state.text_index is not None:
        events.append(builder.text_end(state.text_index))
        state.text_index = None
    return events


def _apply_delta(
    builder: MessageBuilder, state: _State, delta: dict[str, Any]
) -> list[AssistantMessageEvent]:
    events: list[AssistantMessageEvent] = []
    ev: AssistantMessageEvent
    reasoning = next(
        (delta[f] for f in _REASONING_FIELDS if isinstance(delta.get(f), str) and delta[f]), None
    )
    if reasoning:
        if state.text_index is not None:
            events.append(builder.text_end(state.text_index))
            state.text_index = None
        if state.thinking_index is None:
            state.thinking_index, ev = builder.thinking_start()
            events.append(ev)
        events.append(builder.thinking_delta(state.thinking_index, reasoning))
    content = delta.get("content")
    if isinstance(content, str) and content:
        if state.thinking_index is not None:
            events.append(builder.thinking_end(state.thinking_index))
            state.thinking_index = None
        if state.text_index is None:
            state.text_index, ev = builder.text_start()
            events.append(ev)
        events.append(builder.text_delta(state.text_index, content))
    for piece in delta.get("tool_calls") or []:
        events.extend(_apply_tool_piece(builder, state, piece))
    return events


def _apply_tool_piece(
    builder: MessageBuilder, state: _State, piece: dict[str, Any]
) -> list[AssistantMessageEvent]:
    events: list[AssistantMessageEvent] = []
    function = piece.get("function") or {}
    call_id = piece.get("id")
    name = function.get("name")
    key: Any = piece.get("index")
    if key is None:
        key = call_id if call_id and call_id not in state.calls else state.last_call_key
    if key is None or key not in state.calls:
        events.extend(_close_text_and_thinking(builder, state))
        index, ev = builder.toolcall_start(
            str(call_id or f"call_{uuid.uuid4().hex[:24]}"), str(name or "")
        )
        state.calls[key if key is not None else index] = index
        state.call_order.append(index)
        key = key if key is not None else index
        events.append(ev)
    else:
        index = state.calls[key]
        call = builder.tool_call(index)
        if call_id and call.id.startswith("call_") and call_id != call.id and not call.arguments:
            call.id = str(call_id)
        if name and name != call.name:
            call.name = name if not call.name else call.name + name
    state.last_call_key = key
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments)
    if isinstance(arguments, str) and arguments:
        events.append(builder.toolcall_delta(index, arguments))
    return events


def _usage(builder: MessageBuilder, usage: dict[str, Any]) -> None:
    prompt = int_or_none(usage.get("prompt_tokens")) or 0
    completion = int_or_none(usage.get("completion_tokens")) or 0
    details = usage.get("prompt_tokens_details") or {}
    cached = int_or_none(details.get("cached_tokens") if isinstance(details, dict) else None) or 0
    builder.set_usage(input=max(0, prompt - cached), output=completion, cache_read=cached)


def _chunk_error(error: Any) -> ErrorInfo:
    return info_from_error_body({"error": error}, "The provider reported an error in the stream")
