"""``openai-responses``: the OpenAI Responses API through the ``openai`` SDK.

Requests are stateless (``store: false``); reasoning items come back encrypted
(``include: ["reasoning.encrypted_content"]``) and are kept whole, as JSON, in the thinking
block's ``thinkingSignature`` so the same model gets them back. Tool-call ids are stored as
``<call_id>|<item id>``; text blocks keep the message item id in ``textSignature``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from desktop_agent.ai._errors import ErrorInfo, ProviderError, info_from_error_body
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
from desktop_agent.ai._providers._base import MessageBuilder, settle
from desktop_agent.ai._providers._common import (
    client_kwargs,
    images_of,
    int_or_none,
    text_of,
)
from desktop_agent.ai._providers._merge import RESPONSES
from desktop_agent.ai._providers._worker import sdk_events, start_sdk_stream
from desktop_agent.ai._thinking import thinking_value
from desktop_agent.ai._transform import is_same_model, transform_messages


def _input_image(image: ImageContent) -> dict[str, Any]:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{image.mime_type};base64,{image.data}",
    }


def _user_parts(content: list[Any] | str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent) and block.text:
            parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, ImageContent):
            parts.append(_input_image(block))
    return parts


def _assistant_items(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    same = is_same_model(message, model)
    items: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if same and block.thinking_signature:
                try:
                    item = json.loads(block.thinking_signature)
                except ValueError:
                    item = None
                if isinstance(item, dict) and item.get("type") == "reasoning":
                    items.append(item)
        elif isinstance(block, TextContent):
            if not block.text:
                continue
            item = {
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": block.text, "annotations": []}],
            }
            if same and block.text_signature:
                item["id"] = block.text_signature
            items.append(item)
        elif isinstance(block, ToolCall):
            call_id, _, item_id = block.id.partition("|")
            item = {
                "type": "function_call",
                "call_id": call_id,
                "name": block.name,
                "arguments": json.dumps(block.arguments),
            }
            if same and item_id:
                item["id"] = item_id
            items.append(item)
    return items


def convert_input(messages: list[Message], model: Model) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pending_images: list[ImageContent] = []
    for message in transform_messages(messages, model):
        if not isinstance(message, ToolResultMessage) and pending_images:
            out.append(_image_message(pending_images))
            pending_images = []
        if isinstance(message, UserMessage):
            parts = _user_parts(message.content)
            if parts:
                out.append({"role": "user", "content": parts})
        elif isinstance(message, AssistantMessage):
            out.extend(_assistant_items(message, model))
        elif isinstance(message, ToolResultMessage):
            images = images_of(message.content)
            text = text_of(message.content)
            if images and model.supports_images:
                pending_images.extend(images)
                text = text or "(see the image(s) in the next message)"
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id.partition("|")[0],
                    "output": text or "(no output)",
                }
            )
    if pending_images:
        out.append(_image_message(pending_images))
    return out


def _image_message(images: list[ImageContent]) -> dict[str, Any]:
    parts = [{"type": "input_text", "text": "Image(s) returned by the tool:"}]
    return {"role": "user", "content": parts + [_input_image(i) for i in images]}


def build_params(model: Model, context: LlmContext, options: StreamOptions) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": model.id,
        "input": convert_input(list(context.messages), model),
        "stream": True,
        "store": False,
    }
    if context.system_prompt:
        params["instructions"] = context.system_prompt
    if options.max_tokens:
        params["max_output_tokens"] = options.max_tokens
    if options.session_id:
        params["prompt_cache_key"] = options.session_id
    if context.tools:
        params["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.json_schema(),
                "strict": False,
            }
            for t in context.tools
        ]
    effort = thinking_value(model, options.thinking_level) if model.reasoning else None
    if effort is not None:
        params["reasoning"] = {"effort": str(effort), "summary": "auto"}
    if model.reasoning:
        params["include"] = ["reasoning.encrypted_content"]
    if options.temperature is not None and not model.reasoning:
        params["temperature"] = options.temperature
    return params


async def stream_openai_responses(
    model: Model, context: LlmContext, options: StreamOptions, builder: MessageBuilder
) -> AsyncGenerator[AssistantMessageEvent, None]:
    start = await start_sdk_stream(
        "openai",
        lambda: build_params(model, context, options),
        lambda sdk: sdk.AsyncOpenAI(base_url=model.base_url, **client_kwargs(model, options, sdk)),
        lambda client, params: client.responses.create(**params),
    )

    events: Any = None
    items: dict[str, int] = {}  # output item id -> content index
    summary_parts: dict[int, int] = {}
    ev: AssistantMessageEvent
    try:
        events = sdk_events(start, RESPONSES)
        async for event in events:
            kind = event.get("type")
            if kind in ("response.created", "response.in_progress"):
                response = event.get("response") or {}
                if response.get("id"):
                    builder.message.response_id = str(response["id"])
                if response.get("model"):
                    builder.message.response_model = str(response["model"])
            elif kind == "response.output_item.added":
                item = event.get("item") or {}
                itype = item.get("type")
                item_id = str(item.get("id", ""))
                if itype == "reasoning":
                    index, ev = builder.thinking_start()
                    items[item_id] = index
                    yield ev
                elif itype == "message":
                    index, ev = builder.text_start()
                    items[item_id] = index
                    yield ev
                elif itype == "function_call":
                    call_id = f"{item.get('call_id')}|{item_id}"
                    index, ev = builder.toolcall_start(call_id, str(item.get("name", "")))
                    items[item_id] = index
                    yield ev
                    if item.get("arguments"):
                        yield builder.toolcall_delta(index, str(item["arguments"]))
            elif kind == "response.reasoning_summary_part.added":
                index = items.get(str(event.get("item_id")), -1)
                if index >= 0:
                    seen = summary_parts.get(index, 0)
                    summary_parts[index] = seen + 1
                    if seen:
                        yield builder.thinking_delta(index, "\n\n")
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                index = items.get(str(event.get("item_id")), -1)
                if index >= 0:
                    yield builder.thinking_delta(index, str(event.get("delta", "")))
            elif kind in ("response.output_text.delta", "response.refusal.delta"):
                index = items.get(str(event.get("item_id")), -1)
                if index >= 0:
                    yield builder.text_delta(index, str(event.get("delta", "")))
            elif kind == "response.function_call_arguments.delta":
                index = items.get(str(event.get("item_id")), -1)
                if index >= 0:
                    yield builder.toolcall_delta(index, str(event.get("delta", "")))
            elif kind == "response.output_item.done":
                item = event.get("item") or {}
                item_id = str(item.get("id", ""))
                if item_id not in items:
                    continue
                index = items.pop(item_id)
                itype = item.get("type")
                if itype == "reasoning":
                    builder.thinking_signature(
                        index, json.dumps(_reasoning_item(item)), append=False
                    )
                    yield builder.thinking_end(index)
                elif itype == "message":
                    yield builder.text_end(index, signature=item_id or None)
                elif itype == "function_call":
                    arguments = item.get("arguments")
                    yield builder.toolcall_end(
                        index, arguments if isinstance(arguments, str) else None
                    )
            elif kind in ("response.completed", "response.incomplete"):
                response = event.get("response") or {}
                _usage(builder, response.get("usage") or {})
                if kind == "response.incomplete":
                    details = response.get("incomplete_details") or {}
                    if details.get("reason") == "content_filter":
                        raise ProviderError(
                            ErrorInfo(
                                kind="refusal",
                                message="The provider's content filter stopped the response",
                                error_type="content_filter",
                            )
                        )
                    builder.stop_reason = "length"
                builder.completed = True
            elif kind == "response.failed":
                response = event.get("response") or {}
                _usage(builder, response.get("usage") or {})
                raise ProviderError(
                    info_from_error_body(
                        {"error": response.get("error") or {}}, "The response failed"
                    )
                )
            elif kind == "error":
                raise ProviderError(info_from_error_body({"error": event}, "Stream error"))
    finally:
        if events is not None:
            await events.aclose()
        await settle()


def _reasoning_item(item: dict[str, Any]) -> dict[str, Any]:
    """The reasoning item as it can be sent back (no output-only fields)."""
    kept = {k: v for k, v in item.items() if k in ("type", "id", "summary", "encrypted_content")}
    kept.setdefault("summary", [])
    return kept


def _usage(builder: MessageBuilder, usage: dict[str, Any]) -> None:
    if not usage:
        return
    total_input = int_or_none(usage.get("input_tokens")) or 0
    details = usage.get("input_tokens_details") or {}
    cached = int_or_none(details.get("cached_tokens") if isinstance(details, dict) else None) or 0
    builder.set_usage(
        input=max(0, total_input - cached),
        output=int_or_none(usage.get("output_tokens")) or 0,
        cache_read=cached,
    )
