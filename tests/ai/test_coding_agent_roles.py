"""What the Pi CLI sends for its own roles (``convertToLlm`` of pi-coding-agent 0.74.2,
``dist/core/messages.js``), and ``usage.totalTokens`` of older files.

The interop suite checks the same conversion against the real CLI on the files it writes
(tests/interop/test_pi_cli.py); these cases pin the corners with exact strings.
"""

from __future__ import annotations

from typing import Any

import pytest

from desktop_agent.ai import (
    AssistantMessage,
    BashExecutionMessage,
    TextContent,
    Usage,
    UserMessage,
    convert_to_llm,
    parse_message,
)


def bash(**fields: Any) -> dict[str, Any]:
    return {
        "role": "bashExecution",
        "command": "ls src",
        "output": "a.py\nb.py\n",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 1790000000000,
        **fields,
    }


def sent(*objs: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text of all text blocks) of what reaches the model."""
    out: list[tuple[str, str]] = []
    for message in convert_to_llm([parse_message(o) for o in objs]):
        content = message.content
        text = (
            content
            if isinstance(content, str)
            else "".join(b.text for b in content if isinstance(b, TextContent))
        )
        out.append((message.role, text))
    return out


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({}, "Ran `ls src`\n```\na.py\nb.py\n\n```"),
        ({"output": ""}, "Ran `ls src`\n(no output)"),
        ({"exitCode": 2}, "Ran `ls src`\n```\na.py\nb.py\n\n```\n\nCommand exited with code 2"),
        ({"exitCode": None}, "Ran `ls src`\n```\na.py\nb.py\n\n```"),
        (
            {"cancelled": True, "exitCode": 130},
            "Ran `ls src`\n```\na.py\nb.py\n\n```\n\n(command cancelled)",
        ),
        (
            {"truncated": True, "fullOutputPath": "/tmp/pi-bash-1.log"},
            "Ran `ls src`\n```\na.py\nb.py\n\n```\n\n[Output truncated. Full output: "
            "/tmp/pi-bash-1.log]",
        ),
        ({"truncated": True}, "Ran `ls src`\n```\na.py\nb.py\n\n```"),
        ({"excludeFromContext": False}, "Ran `ls src`\n```\na.py\nb.py\n\n```"),
    ],
)
def test_bash_execution_reaches_the_model_as_pi_sends_it(fields: dict[str, Any], text: str) -> None:
    assert sent(bash(**fields)) == [("user", text)]


def test_bash_execution_excluded_from_context_is_not_sent() -> None:
    assert sent(bash(excludeFromContext=True)) == []


def test_odd_bash_execution_is_converted_with_javascript_rules() -> None:
    # No timestamp (so it is kept as read, not typed), no output, a non-numeric exit code.
    odd = {"role": "bashExecution", "command": "x", "exitCode": False}
    assert sent(odd) == [("user", "Ran `x`\n(no output)\n\nCommand exited with code false")]
    assert sent({"role": "bashExecution"}) == [("user", "Ran `undefined`\n(no output)")]


def test_bash_execution_round_trips_and_keeps_its_place() -> None:
    obj = bash(exitCode=1, fullOutputPath="/tmp/x.log", truncated=True)
    message = parse_message(obj)
    assert isinstance(message, BashExecutionMessage)
    assert message.to_json_dict() == obj
    assert list(message.to_json_dict()) == list(obj)
    user = {"role": "user", "content": "hi", "timestamp": 1}
    roles = [m.role for m in convert_to_llm([parse_message(user), message])]
    assert roles == ["user", "user"]


def test_custom_and_summary_roles_are_converted() -> None:
    assert sent(
        {"role": "custom", "customType": "n", "content": "note", "display": True, "timestamp": 1},
        {"role": "branchSummary", "summary": "B", "fromId": "x", "timestamp": 2},
        {"role": "compactionSummary", "summary": "C", "tokensBefore": 9, "timestamp": 3},
        {"role": "hookMessage", "content": "dropped", "timestamp": 4},
    ) == [
        ("user", "note"),
        (
            "user",
            "The following is a summary of a branch that this conversation came back from:"
            "\n\n<summary>\nB</summary>",
        ),
        (
            "user",
            "The conversation history before this point was compacted into the following "
            "summary:\n\n<summary>\nC\n</summary>",
        ),
    ]


def test_missing_total_tokens_is_computed_and_not_written_back() -> None:
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    old = {"input": 100, "output": 20, "cacheRead": 300, "cacheWrite": 4, "cost": cost}
    usage = Usage.from_json_dict(old)
    assert usage.total_tokens == 424
    assert usage.context_tokens() == 424
    assert usage.to_json_dict() == old  # the file's message is kept exactly
    message = parse_message(
        {
            "role": "assistant",
            "content": [],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "m",
            "usage": old,
            "stopReason": "stop",
            "timestamp": 1,
        }
    )
    assert isinstance(message, AssistantMessage)
    assert message.usage.total_tokens == 424


def test_present_total_tokens_is_kept_even_when_it_differs() -> None:
    usage = Usage.from_json_dict({"input": 1, "output": 2, "totalTokens": 7})
    assert usage.total_tokens == 7
    assert usage.to_json_dict()["totalTokens"] == 7


def test_new_usage_writes_its_total() -> None:
    usage = Usage(input=3, output=4)
    assert usage.total_tokens == 7
    assert usage.to_json_dict()["totalTokens"] == 7
    assert UserMessage(content="x", timestamp=1).to_json_dict()["role"] == "user"
