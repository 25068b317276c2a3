"""Stopping a stream: task cancellation, the abort event, leaving early. Each keeps the
partial content and ends with ``stopReason: "aborted"`` within 100 ms."""

from __future__ import annotations

import asyncio
import time

import pytest

from desktop_agent.ai import (
    AssistantMessage,
    ErrorEvent,
    LlmContext,
    StreamOptions,
    TextContent,
    complete,
    stream,
)
from tests.helpers.provider_server import ProviderServer, Reply, user

APIS = ["anthropic-messages", "openai-responses", "openai-completions"]
pytestmark = pytest.mark.asyncio
CANCEL_LATENCIES: list[float] = []


def held_reply() -> Reply:
    """Streams some text, then goes silent until the server is stopped."""
    return Reply(text="one two three four five six seven eight", hold_after=7)


def assert_aborted_with_partial_text(message: AssistantMessage) -> None:
    assert message.stop_reason == "aborted"
    assert message.error_message
    text = message.content[0]
    assert isinstance(text, TextContent) and text.text.startswith("one")


@pytest.mark.parametrize("api", APIS)
async def test_cancelling_the_consuming_task(provider_server: ProviderServer, api: str) -> None:
    provider_server.script(held_reply())
    model = provider_server.model(api, reasoning=False)
    streaming = asyncio.Event()
    seen: list[str] = []
    final_at: list[float] = []

    async def consume() -> AssistantMessage:
        async with stream(model, LlmContext(messages=[user("go")])) as events:
            async for event in events:
                seen.append(event.type)
                if event.type == "text_delta":
                    streaming.set()
                if isinstance(event, ErrorEvent):
                    final_at.append(time.monotonic())
        assert events.final_message is not None
        return events.final_message

    task = asyncio.create_task(consume())
    await streaming.wait()
    await asyncio.sleep(0.05)  # the server is silent now: the consumer waits for an event
    cancelled_at = time.monotonic()
    task.cancel()
    message = await task
    latency = final_at[0] - cancelled_at
    CANCEL_LATENCIES.append(latency)
    assert latency < 0.1
    assert seen[-1] == "error" and seen.count("error") == 1
    assert_aborted_with_partial_text(message)


@pytest.mark.parametrize("api", APIS)
async def test_abort_event(provider_server: ProviderServer, api: str) -> None:
    provider_server.script(held_reply())
    abort = asyncio.Event()
    options = StreamOptions(api_key="k", abort=abort)
    events_seen: list[str] = []
    async with stream(provider_server.model(api), LlmContext(messages=[user("go")]), options) as s:
        async for event in s:
            events_seen.append(event.type)
            if event.type == "text_delta" and not abort.is_set():
                asyncio.get_running_loop().call_later(0.05, abort.set)
                set_at = time.monotonic()
    ended_at = time.monotonic()
    assert ended_at - set_at < 0.05 + 0.1
    current = asyncio.current_task()
    assert current is not None and current.cancelling() == 0  # nothing left over
    assert events_seen[-1] == "error"
    assert s.final_message is not None
    assert_aborted_with_partial_text(s.final_message)


async def test_abort_method_from_another_task(provider_server: ProviderServer) -> None:
    provider_server.script(held_reply())
    s = stream(provider_server.model("anthropic-messages"), LlmContext(messages=[user("go")]))
    first_delta = asyncio.Event()

    async def consume() -> list[str]:
        kinds: list[str] = []
        async with s:
            async for event in s:
                kinds.append(event.type)
                if event.type == "text_delta":
                    first_delta.set()
        return kinds

    task = asyncio.create_task(consume())
    await first_delta.wait()
    await asyncio.sleep(0.02)
    s.abort()
    kinds = await task
    assert kinds[-1] == "error"
    assert not task.cancelled()
    assert s.final_message is not None
    assert_aborted_with_partial_text(s.final_message)


async def test_abort_before_start(provider_server: ProviderServer) -> None:
    abort = asyncio.Event()
    abort.set()
    options = StreamOptions(api_key="k", abort=abort)
    async with stream(provider_server.model("openai-responses"), LlmContext(), options) as s:
        kinds = [event.type async for event in s]
    assert kinds == ["start", "error"]
    assert s.final_message is not None and s.final_message.stop_reason == "aborted"
    assert provider_server.requests == []


async def test_leaving_early_gives_aborted_message(provider_server: ProviderServer) -> None:
    provider_server.script(held_reply())
    context = LlmContext(messages=[user("go")])
    async with stream(provider_server.model("openai-completions"), context) as s:
        async for event in s:
            if event.type == "text_delta":
                break
    assert s.final_message is not None
    assert_aborted_with_partial_text(s.final_message)


async def test_cancelling_complete_returns_the_aborted_message(
    provider_server: ProviderServer,
) -> None:
    provider_server.script(held_reply())
    task = asyncio.create_task(
        complete(provider_server.model("anthropic-messages"), LlmContext(messages=[user("go")]))
    )
    while not provider_server.requests:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    task.cancel()
    message = await task
    assert_aborted_with_partial_text(message)


async def test_complete_returns_final_message(provider_server: ProviderServer) -> None:
    provider_server.script(Reply(text="fine"))
    message = await complete(
        provider_server.model("openai-responses"), LlmContext(messages=[user("go")])
    )
    assert message.stop_reason == "stop"
    block = message.content[0]
    assert isinstance(block, TextContent) and block.text == "fine" and block.text_signature
