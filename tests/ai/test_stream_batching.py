"""Streamed deltas reach the caller's loop in batches, merged while it was busy.

A 1 MB tool-call argument arrives as ~150,000 seven-byte pieces; handling each on the
window's loop (a wake-up, a message update, a snapshot, a chat update) stalled the window
for seconds. The worker thread buffers what the caller has not taken yet and merges
consecutive pieces of one block, so the caller's work follows its own pace, not the
number of pieces.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from desktop_agent.ai import LlmContext, ToolCall
from desktop_agent.ai._providers._merge import ANTHROPIC, COMPLETIONS, RESPONSES
from desktop_agent.ai._providers._worker import sdk_events
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec, run_stream, user

pytestmark = pytest.mark.asyncio


class _Client:
    async def close(self) -> None:
        pass


def _start(events: list[dict[str, Any]]) -> Any:
    async def start() -> tuple[Any, AsyncIterator[Any]]:
        async def gen() -> AsyncIterator[Any]:
            for event in events:
                yield event

        return _Client(), gen()

    return start


def _anthropic_pieces(text: str, size: int = 7) -> list[dict[str, Any]]:
    return [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": text[i : i + size]},
        }
        for i in range(0, len(text), size)
    ]


async def test_pieces_buffered_while_the_caller_is_busy_arrive_as_one() -> None:
    text = json.dumps({"path": "big.py", "content": "x = 1\n" * 20_000})
    head = {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use"}}
    stop = {"type": "content_block_stop", "index": 0}
    pieces = _anthropic_pieces(text)
    stats: dict[str, int] = {}
    got: list[dict[str, Any]] = []
    async for event in sdk_events(_start([head, *pieces, stop]), ANTHROPIC, stats=stats):
        if not got:
            time.sleep(0.3)  # the window is busy painting: the worker sends everything
        got.append(event)
    assert stats["received"] == len(pieces) + 2
    assert stats["handed"] == len(got) <= 10  # not 17,000
    assert got[0] == head and got[-1] == stop  # other events stay in their place
    merged = "".join(e["delta"]["partial_json"] for e in got[1:-1])
    assert merged == text


async def test_a_caller_that_keeps_up_gets_every_piece() -> None:
    pieces = _anthropic_pieces("abcdefghij" * 10, size=10)
    got = [e async for e in sdk_events(_start(pieces), ANTHROPIC) if await _pause()]
    assert "".join(e["delta"]["partial_json"] for e in got) == "abcdefghij" * 10


async def _pause() -> bool:
    await asyncio.sleep(0)
    return True


async def test_a_big_write_through_the_sdk_costs_the_loop_few_updates(
    provider_server: ProviderServer,
) -> None:
    """The real Anthropic SDK against the test server (7-byte pieces); the consumer is
    slow (2 ms per event, like a window painting): far fewer deltas than pieces, the
    same arguments."""
    content = "    value = compute(index, offset)\n" * 1_200  # 42 KB
    call = ToolCallSpec("call-big", "write", {"path": "big.py", "content": content})
    provider_server.script(Reply(tool_calls=[call]))
    model = provider_server.model("anthropic-messages")
    pieces = len(call.argument_text) // 7

    deltas = 0
    from desktop_agent.ai import StreamOptions, stream

    async with stream(
        model, LlmContext(system_prompt="", messages=[user("write it")]), StreamOptions(api_key="k")
    ) as events:
        async for event in events:
            if event.type == "toolcall_delta":
                deltas += 1
                time.sleep(0.002)
    final = events.final_message
    assert final is not None and final.stop_reason == "toolUse"
    (block,) = [b for b in final.content if isinstance(b, ToolCall)]
    assert block.arguments == {"path": "big.py", "content": content}
    assert deltas < pieces // 10, (deltas, pieces)


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses"])
async def test_openai_dialects_merge_too(provider_server: ProviderServer, api: str) -> None:
    provider_server.script(Reply(text=["piece "] * 100))
    events, final = await run_stream(
        provider_server.model(api, reasoning=False),
        LlmContext(system_prompt="", messages=[user("hi")]),
    )
    assert "".join(b.text for b in final.content if hasattr(b, "text")) == "piece " * 100
    assert [e for e in events if e.type == "text_delta"]


async def test_what_merges_in_each_dialect() -> None:
    text = {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "a"}}
    other = {**text, "index": 2}
    assert ANTHROPIC.split(text) == (("anthropic", 1, "text"), "a")
    assert ANTHROPIC.split(text)[0] != ANTHROPIC.split(other)[0]  # type: ignore[index]
    assert ANTHROPIC.join(text, "abc")["delta"] == {"type": "text_delta", "text": "abc"}
    assert ANTHROPIC.split({"type": "content_block_stop", "index": 1}) is None
    assert ANTHROPIC.split({**text, "delta": {"type": "signature_delta", "signature": "s"}}) is None

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "c", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    content = chunk({"content": "hi", "role": None})
    assert COMPLETIONS.split(content) == (("completions", 0, "content"), "hi")
    assert COMPLETIONS.join(content, "hi there")["choices"][0]["delta"]["content"] == "hi there"
    assert COMPLETIONS.split(chunk({"content": "hi", "role": "assistant"})) is None
    assert COMPLETIONS.split(chunk({"content": "hi"}, "stop")) is None
    assert COMPLETIONS.split({**content, "usage": {"prompt_tokens": 1}}) is None
    piece = chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"a'}}]})
    assert COMPLETIONS.split(piece) == (("completions", 0, "tool", 1), '{"a')
    joined = COMPLETIONS.join(piece, '{"a": 1}')
    assert joined["choices"][0]["delta"]["tool_calls"][0] == {
        "index": 1,
        "function": {"arguments": '{"a": 1}'},
    }
    head = chunk({"tool_calls": [{"index": 1, "id": "x", "function": {"name": "f"}}]})
    assert COMPLETIONS.split(head) is None

    delta = {"type": "response.function_call_arguments.delta", "item_id": "i", "delta": "{"}
    assert RESPONSES.split(delta) is not None
    assert RESPONSES.join(delta, "{}")["delta"] == "{}"
    assert RESPONSES.split({"type": "response.output_item.done", "item": {}}) is None


async def test_streams_at_once_share_one_thread_off_the_callers() -> None:
    """Five replies streaming at once are parsed on one thread (not five taking turns at
    the GIL before the window's thread gets it back: issue 22's benchmark), never on the
    caller's; a stream that fails to start, or is left early, does not stop it."""
    threads: list[int] = []

    def start(count: int, fail: bool = False) -> Any:
        async def begin() -> tuple[Any, AsyncIterator[Any]]:
            threads.append(threading.get_ident())
            if fail:
                raise ConnectionError("refused")

            async def gen() -> AsyncIterator[Any]:
                for piece in _anthropic_pieces("x" * count, size=1):
                    await asyncio.sleep(0.001)  # the others' pieces come in between
                    yield piece

            return _Client(), gen()

        return begin

    async def read(count: int) -> str:
        events = [e async for e in sdk_events(start(count), None) if await _pause()]
        return "".join(e["delta"]["partial_json"] for e in events)

    with pytest.raises(ConnectionError):
        async for _ in sdk_events(start(1, fail=True), None):
            pass
    early = sdk_events(start(50), None)
    await anext(early)
    await early.aclose()
    texts = await asyncio.gather(*(read(40 + i) for i in range(5)))
    assert texts == ["x" * (40 + i) for i in range(5)]
    assert len(threads) == 7 and len(set(threads)) == 1
    assert threads[0] != threading.get_ident()
