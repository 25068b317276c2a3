"""Tool calls cut off by a crash: found on the path, answered in the context only.

When the app is killed while a tool runs, the session ends with an assistant message
whose tool call has no result. Both OpenAI and Anthropic refuse a request with such a
call, so every turn's context gets a synthetic error result for it (`INTERRUPTED_TEXT`),
placed right after the results that call's message did get. Nothing is written to the
session: the file keeps what really happened, and the GUI shows the call as interrupted
(`interrupted_tool_calls`).
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
)

INTERRUPTED_TEXT = "interrupted: the app stopped before this tool finished"
"""The text of the synthetic result of an interrupted tool call."""


def _unanswered(messages: Sequence[AgentMessage]) -> list[tuple[int, list[ToolCall]]]:
    """(index after the message's own results, calls without a result) per message."""
    found: list[tuple[int, list[ToolCall]]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, AssistantMessage) or message.stop_reason in (
            "error",
            "aborted",
        ):
            continue  # an incomplete answer never ran its calls (and is not replayed)
        calls = [b for b in message.content if isinstance(b, ToolCall)]
        if not calls:
            continue
        answered: set[str] = set()
        insert_at = i + 1
        for j in range(i + 1, len(messages)):
            later = messages[j]
            if isinstance(later, AssistantMessage):
                break
            if isinstance(later, ToolResultMessage):
                answered.add(later.tool_call_id)
                if insert_at == j:
                    insert_at = j + 1
        missing = [c for c in calls if c.id not in answered]
        if missing:
            found.append((insert_at, missing))
    return found


def interrupted_tool_calls(messages: Sequence[AgentMessage]) -> list[ToolCall]:
    """The tool calls of ``messages`` (a session's context at rest, not during a run)
    that never got a result: the app stopped while they ran. The GUI shows each as an
    interrupted tool card."""
    return [call for _at, calls in _unanswered(messages) for call in calls]


def interrupted_result(call: ToolCall, timestamp: float) -> ToolResultMessage:
    """The synthetic error result of an interrupted call (never written to a session)."""
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=INTERRUPTED_TEXT)],
        details={"interrupted": True},
        is_error=True,
        timestamp=timestamp,
    )


def with_interrupted_results(messages: Sequence[AgentMessage]) -> list[AgentMessage]:
    """``messages`` with a synthetic result after every interrupted tool call (a new
    list; the same messages otherwise)."""
    gaps = _unanswered(messages)
    if not gaps:
        return list(messages)
    out: list[AgentMessage] = []
    at = 0
    for insert_at, calls in gaps:
        out.extend(messages[at:insert_at])
        owner = messages[insert_at - 1]
        timestamp = getattr(owner, "timestamp", 0)
        out.extend(interrupted_result(call, timestamp) for call in calls)
        at = insert_at
    out.extend(messages[at:])
    return out
