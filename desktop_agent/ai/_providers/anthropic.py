"""``anthropic-messages``: the Anthropic Messages API through the ``anthropic`` SDK."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from desktop_agent.ai._errors import ErrorInfo, ProviderError
from desktop_agent.ai._events import AssistantMessageEvent, LlmContext, StreamOptions
from desktop_agent.ai._messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.ai._models import Model
from desktop_agent.ai._providers._base import FinalReason, MessageBuilder, settle
from desktop_agent.ai._providers._common import client_kwargs, int_or_none
from desktop_agent.ai._providers._merge import ANTHROPIC
from desktop_agent.ai._providers._worker import sdk_events, start_sdk_stream
from desktop_agent.ai._thinking import thinking_value
from desktop_agent.ai._transform import transform_messages

_STOP_REASONS: dict[str, FinalReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}


def anthropic_base_url(base_url: str | None) -> str | None:
    """The SDK adds ``/v1/messages`` itself: an Anthropic-compatible server's URL works
    with or without a trailing ``/v1`` (as people copy it from their server's docs)."""
    if base_url is None:
        return None
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _user_blocks(content: list[Any] | str) -> list[dict[str, Any]] | str:
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            blocks.append(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": block.mime_type, "data": block.data},
                }
            )
    return blocks


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                if block.thinking_signature:
                    blocks.append({"type": "redacted_thinking", "data": block.thinking_signature})
            elif block.thinking_signature:
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": block.thinking,
                        "signature": block.thinking_signature,
                    }
                )
            elif block.thinking.strip():
                # Unsigned thinking (e.g. an interrupted block) cannot be sent as thinking.
                blocks.append({"type": "text", "text": block.thinking})
        elif isinstance(block, ToolCall):
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments}
            )
    return blocks


def _tool_result_block(message: ToolResultMessage) -> dict[str, Any]:
    content = _user_blocks(message.content)
    if not content:
        content = [{"type": "text", "text": "(no output)"}]
    return {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "content": content,
        "is_error": message.is_error,
    }


def convert_messages(messages: list[Message], model: Model, *, cache: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in transform_messages(messages, model):
        if isinstance(message, UserMessage):
            content = _user_blocks(message.content)
            if content:
                out.append({"role": "user", "content": content})
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolResultMessage):
            block = _tool_result_block(message)
            last = out[-1] if out else None
            if (
                last is not None
                and last["role"] == "user"
                and isinstance(last["content"], list)
                and last["content"]
                and last["content"][0].get("type") == "tool_result"
            ):
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    if cache and out and out[-1]["role"] == "user":
        content = out[-1]["content"]
        if isinstance(content, str):
            out[-1]["content"] = [
                {"type": "text", "text": content, "cache_control": {"type": "ephemeral"}}
            ]
        elif content:
            content[-1] = {**content[-1], "cache_control": {"type": "ephemeral"}}
    return out


def build_params(model: Model, context: LlmContext, options: StreamOptions) -> dict[str, Any]:
    max_tokens = min(options.max_tokens or model.max_tokens, model.max_tokens)
    params: dict[str, Any] = {
        "model": model.id,
        "max_tokens": max_tokens,
        "messages": convert_messages(list(context.messages), model, cache=options.cache),
        "stream": True,
    }
    if context.system_prompt:
        system: dict[str, Any] = {"type": "text", "text": context.system_prompt}
        if options.cache:
            system["cache_control"] = {"type": "ephemeral"}
        params["system"] = [system]
    if context.tools:
        params["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.json_schema()}
            for t in context.tools
        ]
    thinking = thinking_value(model, options.thinking_level) if model.reasoning else None
    if isinstance(thinking, int):
        budget = max(1024, thinking)
        if budget >= max_tokens:
            max_tokens = min(model.max_tokens, budget + 4096)
            budget = min(budget, max(1024, max_tokens - 1024))
        params["max_tokens"] = max_tokens
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif thinking == "disabled":
        params["thinking"] = {"type": "disabled"}
        if options.temperature is not None:
            params["extra_body"] = {"temperature": options.temperature}
    elif isinstance(thinking, str):
        params["thinking"] = {"type": "adaptive"}
        if thinking != "adaptive":
            params["output_config"] = {"effort": thinking}
    elif options.temperature is not None:
        # Newer SDKs dropped the keyword (newer models reject sampling parameters);
        # models that accept it still read it from the body.
        params["extra_body"] = {"temperature": options.temperature}
    return params


async def stream_anthropic(
    model: Model, context: LlmContext, options: StreamOptions, builder: MessageBuilder
) -> AsyncGenerator[AssistantMessageEvent, None]:
    start = await start_sdk_stream(
        "anthropic",
        lambda: build_params(model, context, options),
        lambda sdk: sdk.AsyncAnthropic(
            base_url=anthropic_base_url(model.base_url), **client_kwargs(model, options, sdk)
        ),
        lambda client, params: client.messages.create(**params),
    )

    events: Any = None
    try:
        events = sdk_events(start, ANTHROPIC)
        index_map: dict[int, int] = {}
        ev: AssistantMessageEvent
        async for event in events:
            kind = event.get("type")
            if kind == "message_start":
                message = event.get("message") or {}
                builder.message.response_id = message.get("id")
                if message.get("model"):
                    builder.message.response_model = message.get("model")
                _usage(builder, message.get("usage") or {})
            elif kind == "content_block_start":
                block = event.get("content_block") or {}
                btype = block.get("type")
                position = int(event.get("index", len(index_map)))
                if btype == "text":
                    index, ev = builder.text_start()
                    index_map[position] = index
                    yield ev
                    if block.get("text"):
                        yield builder.text_delta(index, block["text"])
                elif btype == "thinking":
                    index, ev = builder.thinking_start()
                    index_map[position] = index
                    yield ev
                    if block.get("thinking"):
                        yield builder.thinking_delta(index, block["thinking"])
                    if block.get("signature"):
                        builder.thinking_signature(index, block["signature"])
                elif btype == "redacted_thinking":
                    index, ev = builder.thinking_start(redacted=True)
                    index_map[position] = index
                    yield ev
                    yield builder.thinking_delta(index, "[Reasoning redacted]")
                    builder.thinking_signature(index, str(block.get("data", "")), append=False)
                elif btype == "tool_use":
                    index, ev = builder.toolcall_start(str(block.get("id")), str(block.get("name")))
                    index_map[position] = index
                    yield ev
                    initial = block.get("input")
                    if isinstance(initial, dict) and initial:
                        yield builder.toolcall_delta(index, json.dumps(initial))
            elif kind == "content_block_delta":
                position = int(event.get("index", -1))
                if position not in index_map:
                    continue
                index = index_map[position]
                delta = event.get("delta") or {}
                dtype = delta.get("type")
                if dtype == "text_delta":
                    yield builder.text_delta(index, str(delta.get("text", "")))
                elif dtype == "thinking_delta":
                    yield builder.thinking_delta(index, str(delta.get("thinking", "")))
                elif dtype == "signature_delta":
                    builder.thinking_signature(index, str(delta.get("signature", "")))
                elif dtype == "input_json_delta":
                    yield builder.toolcall_delta(index, str(delta.get("partial_json", "")))
            elif kind == "content_block_stop":
                position = int(event.get("index", -1))
                if position not in index_map:
                    continue
                index = index_map.pop(position)
                block_obj = builder.message.content[index]
                if isinstance(block_obj, TextContent):
                    yield builder.text_end(index)
                elif isinstance(block_obj, ThinkingContent):
                    yield builder.thinking_end(index)
                elif isinstance(block_obj, ToolCall):
                    yield builder.toolcall_end(index)
            elif kind == "message_delta":
                delta = event.get("delta") or {}
                reason = delta.get("stop_reason")
                if reason == "refusal":
                    raise ProviderError(
                        ErrorInfo(
                            kind="refusal",
                            message="The model refused to answer (stop_reason: refusal)",
                            error_type="refusal",
                        )
                    )
                if reason:
                    builder.stop_reason = _STOP_REASONS.get(str(reason), "stop")
                _usage(builder, event.get("usage") or {})
            elif kind == "message_stop":
                builder.completed = True
    finally:
        if events is not None:
            await events.aclose()
        await settle()


def _usage(builder: MessageBuilder, usage: dict[str, Any]) -> None:
    builder.set_usage(
        input=int_or_none(usage.get("input_tokens")),
        output=int_or_none(usage.get("output_tokens")),
        cache_read=int_or_none(usage.get("cache_read_input_tokens")),
        cache_write=int_or_none(usage.get("cache_creation_input_tokens")),
    )
