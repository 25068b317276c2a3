"""Replaying a history to a (possibly different) model without breaking the request.

Rules (issue 3 item 6, RELIABILITY.md A4/A15):
- assistant messages that ended in ``error`` or ``aborted`` are incomplete turns: dropped;
- thinking: kept with its signature only for the model that produced it; redacted thinking
  of another model is dropped; readable thinking of another model becomes plain text;
- provider-specific ids and signatures (text signatures, thought signatures, Responses item
  ids) are dropped for another model, and tool-call ids are rewritten to what the target
  accepts (tool results follow the same mapping);
- every tool call gets a result (a synthetic error result "No result provided" when the
  history has none) and tool results without their call are dropped;
- images go to models that accept images only; otherwise a text placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from desktop_agent.ai._messages import (
    AssistantMessage,
    ContentBlock,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.ai._models import Model

IMAGE_PLACEHOLDER = "(image omitted: this model does not accept images)"
NO_RESULT_TEXT = "No result provided"


def is_same_model(message: AssistantMessage, model: Model) -> bool:
    return (
        message.provider == model.provider
        and message.api == model.api
        and message.model == model.id
    )


def anthropic_tool_id(call_id: str) -> str:
    """Anthropic accepts ``^[a-zA-Z0-9_-]{1,64}$``."""
    base = call_id.split("|", 1)[0]
    return (re.sub(r"[^a-zA-Z0-9_-]", "_", base) or "call")[:64]


def openai_tool_id(call_id: str) -> str:
    """OpenAI chat accepts ids of at most 40 characters; Responses ids are ``call|item``."""
    base = call_id.split("|", 1)[0]
    return (re.sub(r"[^a-zA-Z0-9_.:-]", "_", base) or "call")[:40]


def tool_id_normalizer(model: Model) -> Callable[[str], str]:
    return anthropic_tool_id if model.api == "anthropic-messages" else openai_tool_id


def _images_ok(blocks: Sequence[ContentBlock], model: Model) -> list[ContentBlock]:
    if model.supports_images:
        return list(blocks)
    out: list[ContentBlock] = []
    for block in blocks:
        if isinstance(block, ImageContent):
            if not (out and isinstance(out[-1], TextContent) and out[-1].text == IMAGE_PLACEHOLDER):
                out.append(TextContent(text=IMAGE_PLACEHOLDER))
        else:
            out.append(block)
    return out


def _convert_assistant(
    message: AssistantMessage, model: Model, id_map: dict[str, str]
) -> AssistantMessage:
    if is_same_model(message, model):
        return message
    normalize = tool_id_normalizer(model)
    blocks: list[ContentBlock] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.redacted or not block.thinking.strip():
                continue
            blocks.append(TextContent(text=block.thinking))
        elif isinstance(block, TextContent):
            if block.text:
                blocks.append(TextContent(text=block.text))
        elif isinstance(block, ToolCall):
            new_id = normalize(block.id)
            id_map[block.id] = new_id
            blocks.append(ToolCall(id=new_id, name=block.name, arguments=dict(block.arguments)))
        else:
            blocks.append(block)
    copy = message.model_copy()
    copy.content = blocks
    return copy


def _synthetic_result(call: ToolCall, timestamp: float) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=NO_RESULT_TEXT)],
        is_error=True,
        timestamp=timestamp,
    )


def transform_messages(messages: Sequence[Message], model: Model) -> list[Message]:
    """The history as it can be sent to ``model`` (see the module docstring)."""
    out: list[Message] = []
    id_map: dict[str, str] = {}
    pending: list[ToolCall] = []  # calls of the last assistant message still without result
    pending_ts: float = 0

    def flush_pending() -> None:
        for call in pending:
            out.append(_synthetic_result(call, pending_ts))
        pending.clear()

    for message in messages:
        if isinstance(message, AssistantMessage):
            flush_pending()
            if message.stop_reason in ("error", "aborted"):
                continue
            converted = _convert_assistant(message, model, id_map)
            if not converted.content:
                continue
            out.append(converted)
            pending = [b for b in converted.content if isinstance(b, ToolCall)]
            pending_ts = message.timestamp
        elif isinstance(message, ToolResultMessage):
            call_id = id_map.get(message.tool_call_id, message.tool_call_id)
            match = next((c for c in pending if c.id == call_id), None)
            if match is None:
                continue  # a result whose call is not in the preceding assistant message
            pending.remove(match)
            result = message.model_copy()
            result.tool_call_id = call_id
            result.content = _images_ok(message.content, model)
            out.append(result)
        elif isinstance(message, UserMessage):
            flush_pending()
            if isinstance(message.content, list):
                user = message.model_copy()
                user.content = _images_ok(message.content, model)
                out.append(user)
            else:
                out.append(message)
    flush_pending()
    return out
