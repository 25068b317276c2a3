"""Message models round-trip what Pi writes: values, unknown fields and key order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from desktop_agent.ai import (
    AssistantMessage,
    MessageFormatError,
    TextContent,
    UnknownMessage,
    parse_content_block,
    parse_message,
)

PI_ASSISTANT: dict[str, Any] = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig", "redacted": False},
        {"type": "text", "text": "hello ü", "futureField": {"x": 1}},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}},
        {"type": "someNewBlock", "payload": [1, 2]},
    ],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude",
    "usage": {
        "input": 1,
        "output": 2,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 3,
        "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3},
    },
    "stopReason": "toolUse",
    "timestamp": 1795000000000,
    "unknownTopLevel": True,
}


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def test_round_trip_is_byte_for_byte() -> None:
    message = parse_message(PI_ASSISTANT)
    assert isinstance(message, AssistantMessage)
    assert dumps(message.to_json_dict()) == dumps(PI_ASSISTANT)


def test_round_trip_keeps_an_unusual_key_order() -> None:
    reordered = {"timestamp": 5, "content": [{"text": "t", "type": "text"}], "role": "user"}
    assert dumps(parse_message(reordered).to_json_dict()) == dumps(reordered)


def test_unknown_role_is_kept() -> None:
    obj = {"role": "someFutureRole", "command": "ls", "output": "a\nb", "exitCode": 0}
    message = parse_message(obj)
    assert isinstance(message, UnknownMessage)
    assert message.to_json_dict() == obj


def test_an_odd_bash_execution_is_kept_as_read() -> None:
    obj = {"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 0}  # no time
    message = parse_message(obj)
    assert isinstance(message, UnknownMessage)
    assert message.to_json_dict() == obj


def test_constructed_messages_use_pi_field_order_and_omit_unset() -> None:
    message = AssistantMessage(
        content=[TextContent(text="x")],
        api="openai-responses",
        provider="openai",
        model="gpt",
        stop_reason="stop",
        timestamp=1,
    )
    data = message.to_json_dict()
    assert list(data) == [
        "role",
        "content",
        "api",
        "provider",
        "model",
        "usage",
        "stopReason",
        "timestamp",
    ]
    assert "errorMessage" not in data and data["content"] == [{"type": "text", "text": "x"}]


def test_fast_parse_without_key_order_gives_equal_values() -> None:
    fast = parse_message(PI_ASSISTANT, keep_key_order=False)
    assert fast.to_json_dict() == PI_ASSISTANT  # same values, canonical key order


@pytest.mark.parametrize("bad", [{"role": "assistant", "content": None}, {"content": []}, []])
def test_invalid_messages_raise_format_error(bad: Any) -> None:
    with pytest.raises(MessageFormatError):
        parse_message(bad)


def test_content_block_round_trip() -> None:
    block = {"type": "image", "mimeType": "image/png", "data": "AAAA"}
    assert dumps(parse_content_block(block).to_json_dict()) == dumps(block)
