"""Long Python work on the loop in slices (`workbench._slices`): the branch's usage after a
branch switch is counted there, not in a worker thread holding the GIL against the GUI."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

from desktop_agent.ai import AssistantMessage, Cost, TextContent, UserMessage
from desktop_agent.ai import Usage as MessageUsage
from desktop_agent.session import InMemorySessionRepo, Session
from desktop_agent.workbench import Usage, _slices, _views, count_branch_usage
from desktop_agent.workbench._views import count_branch_usage_sliced

T = TypeVar("T")


def branch_usage(session: Session, context_window: int) -> Usage:
    """The oracle: `Usage` of the current branch, its messages decoded (what
    `count_branch_usage` computes from the usage fields of the lines alone)."""
    usage = Usage(context_window=context_window)
    for entry_id in session.branch_ids(lenient=True):
        if session.entry_kind(entry_id) == ("message", "assistant"):
            message = session.get_message(entry_id)
            if isinstance(message, AssistantMessage):
                usage = usage.add(message)
    return usage


async def with_turns(work: Coroutine[Any, Any, T]) -> tuple[T, int]:
    """``work``'s result, and how many turns the loop gave other tasks meanwhile."""
    turns = 0
    done = False

    async def ticker() -> None:
        nonlocal turns
        while not done:
            turns += 1
            await asyncio.sleep(0)

    task = asyncio.ensure_future(ticker())
    try:
        return await work, turns
    finally:
        done = True
        await task


async def _turns(count: int, usage: Callable[[int], MessageUsage] | None = None) -> Session:
    """A session of ``count`` prompts and answers (``usage``: each answer's usage)."""
    s = await InMemorySessionRepo().create(cwd="/work/p")
    for i in range(count):
        await s.append_message(UserMessage(content=f"q{i}", timestamp=1))
        answer = AssistantMessage(
            content=[TextContent(text=f"a{i}")],
            api="anthropic-messages",
            provider="anthropic",
            model="m",
            stop_reason="stop",
            timestamp=2,
        )
        if usage is not None:
            answer.usage = usage(i)
        await s.append_message(answer)
    return s


def test_sliced_runs_steps_with_turns_of_the_loop_between_them() -> None:
    def steps() -> Generator[None, None, int]:
        for _ in range(10):
            yield
        return 42

    result, turns = asyncio.run(with_turns(_slices.sliced(steps(), 0.0)))  # a turn a step
    assert result == 42 and turns >= 10
    assert _slices.drain(steps()) == 42


def test_the_branch_usage_is_counted_in_slices_on_the_loops_thread() -> None:
    async def go() -> None:
        s = await _turns(
            600,
            lambda i: MessageUsage(input=10, output=i, total_tokens=10 + i, cost=Cost(total=0.01)),
        )
        threads: set[int] = set()
        real = _views._usage_steps

        def watched(*args: object) -> Generator[None, None, object]:
            threads.add(threading.get_ident())
            return (yield from real(*args))  # type: ignore[arg-type]

        _views._usage_steps = watched  # type: ignore[assignment]
        try:
            counted = await count_branch_usage_sliced(s, 200_000)
        finally:
            _views._usage_steps = real
        assert threads == {threading.get_ident()}
        assert counted == count_branch_usage(s, 200_000) == branch_usage(s, 200_000)
        assert counted.tokens == sum(10 + i for i in range(600))

    asyncio.run(go())


def test_a_long_branch_is_read_back_on_the_loops_thread_with_turns_between() -> None:
    """`BranchReader` decodes the messages of a long session on the loop in slices (not in
    a worker thread, which held the GIL against the chat's paint after a branch switch)."""
    from desktop_agent.workbench import BranchReader

    async def go() -> None:
        s = await _turns(_views.INLINE_ENTRIES // 2 + 50)  # more entries than read inline
        assert s.entry_count > _views.INLINE_ENTRIES
        threads: set[int] = set()
        real = s.get_messages

        def watched(ids: list[str]) -> list[object]:
            threads.add(threading.get_ident())
            return real(ids)  # type: ignore[return-value]

        s.get_messages = watched  # type: ignore[method-assign,assignment]
        budget = _slices.SLICE_S
        _slices.SLICE_S = 0.0  # a turn after every step
        try:
            items, turns = await with_turns(BranchReader(s).older(40))
        finally:
            _slices.SLICE_S = budget
        assert threads == {threading.get_ident()}
        assert turns >= 10  # (40 messages, a few at a time)
        last_question = items[-2].message
        assert isinstance(last_question, UserMessage)
        assert last_question.content == f"q{_views.INLINE_ENTRIES // 2 + 49}"

    asyncio.run(go())
