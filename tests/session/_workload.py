"""A realistic session workload for the reliability suites, and what to check after it.

`run_workload` drives the real `Session` API the way the harness does: a turn of
appends (user prompt, assistant with thinking and a tool call, tool results from a few
bytes to more than a 4 KiB page), then a save point (``sync``); model and thinking
changes, a label, a name, a branch switch with a summary, a compaction, extension
entries. Write failures are tolerated as the harness tolerates them (the entries stay
queued in memory), and every successful save point is reported as an acknowledgement.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop_agent.ai import AgentMessage, parse_message
from desktop_agent.session import Session, SessionError

LONG = os.environ.get("DESKTOP_AGENT_LONG_TESTS") == "1"
"""Long mode (nightly): more kills, more fuzz files, every byte of the big workload."""

CWD = "/home/demo/project"


def _user(text: str, ts: int) -> AgentMessage:
    return parse_message(
        {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}
    )


def _assistant(ts: int, text: str, tool: tuple[str, str, dict[str, Any]] | None) -> AgentMessage:
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": "Let me think about it.", "thinkingSignature": "c2ln"},
        {"type": "text", "text": text},
    ]
    if tool is not None:
        call_id, name, args = tool
        content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
    return parse_message(
        {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {
                "input": 1200,
                "output": 80,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 1280,
                "cost": {
                    "input": 0.0036,
                    "output": 0.0012,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "total": 0.0048,
                },
            },
            "stopReason": "toolUse" if tool is not None else "stop",
            "timestamp": ts,
        }
    )


def _tool_result(ts: int, call_id: str, size: int) -> AgentMessage:
    body = "".join(f"line {i}: ok ü\n" for i in range(size // 14 + 1))[:size]
    return parse_message(
        {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "bash",
            "content": [{"type": "text", "text": body}],
            "isError": False,
            "timestamp": ts,
        }
    )


@dataclass
class Outcome:
    """What the workload did: acknowledged ids, all ids in memory, the lines written."""

    acked: list[str] = field(default_factory=list)
    """Ids of entries that a save point (``sync``) acknowledged, in append order."""
    ids: list[str] = field(default_factory=list)
    """Every entry the session holds in memory, in append order."""
    failures: int = 0


async def run_workload(
    session: Session,
    *,
    turns: int = 4,
    big: int = 9_000,
    on_ack: Callable[[Sequence[str]], None] | None = None,
    on_failure: Callable[[], None] | None = None,
) -> Outcome:
    """Run the workload; never raises for a failing disk (the harness does not either)."""
    out = Outcome()
    ts = 1_790_000_000_000

    def failed() -> None:
        out.failures += 1
        if on_failure is not None:
            on_failure()

    async def step(action: Awaitable[Any]) -> None:
        try:
            await action
        except SessionError:
            failed()

    async def save_point() -> None:
        try:
            await session.sync()
        except SessionError:
            failed()
            return
        if session.pending_count == 0:
            out.acked = [r.id for r in session.get_storage().tree.rows]
            if on_ack is not None:
                on_ack(out.acked)

    tree = session.get_storage().tree
    await step(session.append_model_change("anthropic", "claude-sonnet-4-5"))
    await step(session.append_thinking_level_change("medium"))
    await save_point()
    first_user: str | None = None
    for turn in range(turns):
        ts += 60_000
        await step(session.append_message(_user(f"turn {turn}: fix the tests", ts)))
        first_user = first_user or tree.leaf_id
        call = (f"toolu_{turn:02}", "bash", {"command": "pytest -q"})
        await step(session.append_message(_assistant(ts + 1, "Running them.", call)))
        size = big if turn % 2 else 300
        await step(session.append_message(_tool_result(ts + 2, call[0], size)))
        await step(session.append_message(_assistant(ts + 3, "Fixed.", None)))
        await save_point()
        if turn == 1 and tree.leaf_id is not None:
            await step(session.append_label(tree.leaf_id, "checkpoint"))
            await step(session.append_session_name("Fixing the tests"))
            await save_point()
        if turn == 2 and first_user is not None:
            await step(session.move_to(first_user, "Tried a first approach."))
            await save_point()
    if tree.leaf_id is not None:
        details: dict[str, list[str]] = {"readFiles": [], "modifiedFiles": []}
        await step(
            session.append_compaction("## Goal\nFix the tests.", tree.leaf_id, 42_000, details)
        )
    await step(session.append_active_tools_change(["read", "bash"]))
    await step(session.append_custom_entry("demo-state", {"n": 1}))
    await step(session.append_custom_message_entry("demo-note", "Remember.", True))
    await step(session.append_message(_user("and the docs?", ts + 10)))
    await save_point()
    out.ids = [r.id for r in session.get_storage().tree.rows]
    return out


def lines_by_id(session: Session) -> dict[str, bytes]:
    """The exact JSON line of every entry the session holds."""
    return {r.id: r.raw for r in session.get_storage().tree.rows}


def is_subsequence(found: Sequence[str], written: Sequence[str]) -> bool:
    it = iter(written)
    return all(any(x == y for y in it) for x in found)
