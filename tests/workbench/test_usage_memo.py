"""The usage of a long branch is remembered with the app state: a restart reads only the
answers written after the remembered entry (issue 12: the second launch of a 100 MB
session read the usage of ~30,000 answers, a second, before the window was settled)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import AssistantMessage, Cost, TextContent
from desktop_agent.ai import Usage as AiUsage
from desktop_agent.session import JsonlSessionRepo, Session
from desktop_agent.workbench import INLINE_ENTRIES, count_branch_usage
from desktop_agent.workbench import _views as views_module
from tests.helpers.provider_server import ProviderServer
from tests.helpers.workbench import make_workbench, saved_state, seed_async, user

pytestmark = pytest.mark.asyncio

TURNS = INLINE_ENTRIES // 2 + 50  # counted off the loop, as a long session is


def priced(i: int) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=f"answer {i}")],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-test",
        stop_reason="stop",
        timestamp=2,
        usage=AiUsage(input=10, output=i % 7, cost=Cost(total=0.25)),
    )


async def add_turns(session: Session, first: int, count: int) -> None:
    for i in range(first, first + count):
        await session.append_message(user(f"question {i}"))
        await session.append_message(priced(i))


def append_lines(path: Path, parent: str, first: int, count: int) -> None:
    """Turns written to the file as another program (Pi) writes them."""
    lines = []
    for i in range(first, first + count):
        for role, message in (("u", user(f"question {i}")), ("a", priced(i))):
            entry_id = f"{role}{i:07d}"
            body = {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-12-01T00:00:00.000Z",
                "message": message.to_json_dict(),
            }
            lines.append(json.dumps(body) + "\n")
            parent = entry_id
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(lines))


def expected(turns: int) -> tuple[int, float, int]:
    tokens = sum(10 + i % 7 for i in range(turns))
    return tokens, 0.25 * turns, 10 + (turns - 1) % 7


async def test_a_restart_counts_only_the_answers_after_the_remembered_entry(
    tmp_path: Path, workspace: Path, provider: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"

    async def build(session: Session) -> None:
        await add_turns(session, 0, TURNS)

    ref = await seed_async(data, workspace, build)
    read: list[int] = []
    real = views_module._lines_in_runs

    def counting(session: Session, ids: list[str]) -> Any:
        read.append(len(ids))
        return real(session, ids)

    monkeypatch.setattr(views_module, "_lines_in_runs", counting)

    wb = make_workbench(data, provider.model("anthropic-messages"))
    await wb.start()
    await wb.restore()
    await wb.settled()
    assert wb.ref == ref and sum(read) == TURNS, "the first launch reads every answer"
    u = wb.usage
    assert (u.tokens, round(u.cost, 6), u.context_tokens) == expected(TURNS)
    memo = wb.state.branch_usage
    assert memo is not None and memo.ref == ref and wb.session is not None
    assert memo.leaf == wb.session.leaf_id()
    wb.remember()
    await wb.aclose()
    assert saved_state(data).branch_usage == memo

    # Another program appends 3 turns; the next launch reads those 3 answers only.
    append_lines(Path(ref), memo.leaf, TURNS, 3)
    read.clear()
    wb = make_workbench(data, provider.model("anthropic-messages"))
    await wb.start()
    await wb.restore()
    await wb.settled()
    assert sum(read) == 3
    u = wb.usage
    assert (u.tokens, round(u.cost, 6), u.context_tokens) == expected(TURNS + 3)
    assert wb.session is not None
    full = count_branch_usage(wb.session, u.context_window)
    assert (full.tokens, round(full.cost, 6), full.context_tokens) == expected(TURNS + 3)
    await wb.aclose()


async def test_a_remembered_entry_off_the_branch_is_not_used(
    tmp_path: Path, workspace: Path
) -> None:
    repo = JsonlSessionRepo(tmp_path / "sessions")
    session = await repo.create(cwd=str(workspace))
    await add_turns(session, 0, 4)
    fork_at = session.leaf_id()
    await add_turns(session, 4, 2)
    off_branch = session.leaf_id()
    assert fork_at is not None and off_branch is not None
    await session.move_to(fork_at)
    await add_turns(session, 10, 1)
    bogus = views_module.Usage(tokens=1_000_000, cost=99.0, context_tokens=5)
    kept = count_branch_usage(session, 100, (off_branch, bogus))
    assert kept == count_branch_usage(session, 100)
    on = count_branch_usage(session, 100, (fork_at, count_branch_usage(session, 100)))
    assert on.tokens > kept.tokens  # trusted: entries before it are not read again
    await session.close()
