"""Every scripted scenario on every API it applies to: events and final message."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from pydantic import BaseModel, Field

from desktop_agent.ai import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    ImageContent,
    LlmContext,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolCallEndEvent,
    ToolDefinition,
    UserMessage,
    classify_error,
    stream,
)
from tests.helpers.provider_server import (
    HttpError,
    ProviderServer,
    Reply,
    ToolCallSpec,
    run_stream,
    user,
)

APIS = ["anthropic-messages", "openai-responses", "openai-completions"]
pytestmark = pytest.mark.asyncio


class Weather(BaseModel):
    city: str = Field(description="City name")
    days: int = 1


WEATHER = ToolDefinition("get_weather", "Weather forecast for a city.", Weather)


def ctx(*texts: str, tools: tuple[ToolDefinition, ...] = ()) -> LlmContext:
    return LlmContext(
        system_prompt="You are terse.", messages=[user(t) for t in texts or ("hi",)], tools=tools
    )


def kinds(events: list[Any]) -> list[str]:
    """Event types with consecutive deltas of one kind collapsed."""
    out: list[str] = []
    for event in events:
        if event.type.endswith("_delta") and out and out[-1] == event.type:
            continue
        out.append(event.type)
    return out


def assert_one_terminal(events: list[Any], message: AssistantMessage) -> None:
    terminal = [e for e in events if isinstance(e, DoneEvent | ErrorEvent)]
    assert len(terminal) == 1
    assert events[-1] is terminal[0]
    assert events[0].type == "start"
    assert terminal[0].message is message


@pytest.mark.parametrize("api", APIS)
async def test_text_thinking_and_tool_call(provider_server: ProviderServer, api: str) -> None:
    provider_server.script(
        Reply(
            thinking="I should call the tool.",
            text="Checking.",
            tool_calls=[ToolCallSpec("call_1", "get_weather", {"city": "Paris", "days": 2})],
        )
    )
    model = provider_server.model(api)
    options = StreamOptions(api_key="sk-test", thinking_level="high")
    events, message = await run_stream(model, ctx("weather?", tools=(WEATHER,)), options)
    assert_one_terminal(events, message)
    assert kinds(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    assert message.stop_reason == "toolUse"
    assert isinstance(events[-1], DoneEvent) and events[-1].reason == "toolUse"
    thinking, text, call = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "I should call the tool."
    assert isinstance(text, TextContent) and text.text == "Checking."
    assert isinstance(call, ToolCall) and call.name == "get_weather"
    assert call.arguments == {"city": "Paris", "days": 2}
    assert call.id.split("|")[0] == "call_1"
    if api != "openai-completions":
        assert thinking.thinking_signature  # round-tripped to the same model later
    end = next(e for e in events if isinstance(e, ToolCallEndEvent))
    assert end.validation_error is None
    assert message.response_id
    assert provider_server.validation_errors == []
    # the JSON of the final message parses back to an equal message
    again = AssistantMessage.model_validate(message.to_json_dict())
    assert again.to_json_dict() == message.to_json_dict()


@pytest.mark.parametrize("api", APIS)
async def test_plain_text_stop(provider_server: ProviderServer, api: str) -> None:
    provider_server.script(Reply(text=["Hel", "lo", " world"]))
    events, message = await run_stream(provider_server.model(api, reasoning=False), ctx())
    deltas = [e.delta for e in events if e.type == "text_delta"]
    # Pieces that arrive while the caller is busy are merged (gui streaming budget).
    assert "".join(deltas) == "Hello world" and all(deltas) and 1 <= len(deltas) <= 3
    assert message.stop_reason == "stop"
    assert message.error_message is None
    assert kinds(events) == ["start", "text_start", "text_delta", "text_end", "done"]


@pytest.mark.parametrize("api", APIS)
async def test_parallel_tool_calls(provider_server: ProviderServer, api: str) -> None:
    calls = [
        ToolCallSpec("call_a", "get_weather", {"city": "Oslo"}),
        ToolCallSpec("call_b", "get_weather", {"city": "Rome", "days": 3}),
    ]
    provider_server.script(Reply(tool_calls=calls))
    events, message = await run_stream(provider_server.model(api), ctx(tools=(WEATHER,)))
    got = [b for b in message.content if isinstance(b, ToolCall)]
    assert [c.arguments for c in got] == [{"city": "Oslo"}, {"city": "Rome", "days": 3}]
    assert message.stop_reason == "toolUse"
    assert len([e for e in events if e.type == "toolcall_end"]) == 2


@pytest.mark.parametrize("style", ["interleaved", "single", "no_index", "standard"])
async def test_completions_tool_calls_in_pieces(
    provider_server: ProviderServer, style: str
) -> None:
    calls = [
        ToolCallSpec("call_a", "get_weather", {"city": "Oslo", "note": "x" * 30}),
        ToolCallSpec("call_b", "get_weather", {"city": "Rome"}),
    ]
    provider_server.script(Reply(tool_calls=calls, tool_call_style=style))  # type: ignore[arg-type]
    _, message = await run_stream(
        provider_server.model("openai-completions"), ctx(tools=(WEATHER,))
    )
    got = [b for b in message.content if isinstance(b, ToolCall)]
    if style == "no_index":
        # Without an index pieces belong to the call that was started last.
        assert [c.id for c in got] == ["call_a", "call_b"]
    assert {c.id: c.arguments for c in got} == {
        "call_a": {"city": "Oslo", "note": "x" * 30},
        "call_b": {"city": "Rome"},
    }
    assert message.stop_reason == "toolUse"  # also when the server says "stop" (single)


async def test_completions_arguments_grow_while_streaming(provider_server: ProviderServer) -> None:
    # Deltas that arrive while the loop is busy are merged (ai/_providers/_merge.py): the
    # pause between events keeps them apart, so each partial argument is seen.
    provider_server.script(
        Reply(
            tool_calls=[ToolCallSpec("c1", "write", {"path": "a.txt", "content": "z" * 40})],
            delay_s=0.02,
        )
    )
    seen: list[dict[str, Any]] = []
    async with stream(provider_server.model("openai-completions"), ctx()) as events:
        async for event in events:
            if event.type == "toolcall_delta":
                block = event.partial.content[event.content_index]
                assert isinstance(block, ToolCall)
                seen.append(dict(block.arguments))
    assert seen[-1] == {"path": "a.txt", "content": "z" * 40}
    partial_contents = [s.get("content") for s in seen if "content" in s]
    assert len(set(partial_contents)) > 3  # the content string grew delta by delta


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "reasoning_text"])
async def test_completions_reasoning_fields(provider_server: ProviderServer, field: str) -> None:
    provider_server.script(Reply(thinking="Hmm, let me see.", text="42", reasoning_field=field))
    _, message = await run_stream(provider_server.model("openai-completions"), ctx())
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert isinstance(message.content[0], ThinkingContent)
    assert message.content[0].thinking == "Hmm, let me see."


async def test_completions_without_usage(provider_server: ProviderServer) -> None:
    provider_server.script(Reply(text="ok", include_usage=False))
    _, message = await run_stream(provider_server.model("openai-completions"), ctx())
    assert message.stop_reason == "stop"
    assert message.usage.total_tokens == 0
    assert message.usage.cost.total == 0


@pytest.mark.parametrize("api", APIS)
async def test_usage_and_cost(provider_server: ProviderServer, api: str) -> None:
    provider_server.script(
        Reply(
            text="cached",
            input_tokens=1000,
            output_tokens=500,
            cache_read_tokens=4000,
            cache_write_tokens=2000 if api == "anthropic-messages" else 0,
        )
    )
    _, message = await run_stream(provider_server.model(api), ctx())
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read) == (1000, 500, 4000)
    write = 2000 if api == "anthropic-messages" else 0
    assert usage.cache_write == write
    assert usage.total_tokens == 1000 + 500 + 4000 + write
    # prices: 3 / 15 / 0.3 / 3.75 per million
    assert usage.cost.input == pytest.approx(0.003)
    assert usage.cost.output == pytest.approx(0.0075)
    assert usage.cost.cache_read == pytest.approx(0.0012)
    assert usage.cost.cache_write == pytest.approx(write * 3.75 / 1e6)
    assert usage.cost.total == pytest.approx(0.003 + 0.0075 + 0.0012 + write * 3.75 / 1e6)


@pytest.mark.parametrize("api", APIS)
async def test_stop_reason_length(provider_server: ProviderServer, api: str) -> None:
    provider_server.script(Reply(text="cut", stop="length"))
    events, message = await run_stream(provider_server.model(api), ctx())
    assert message.stop_reason == "length"
    assert isinstance(events[-1], DoneEvent) and events[-1].reason == "length"


# --------------------------------------------------------------------------- failures


async def _error_of(
    server: ProviderServer, api: str, reply: Reply | HttpError, **options: Any
) -> tuple[list[Any], AssistantMessage]:
    server.script(reply)
    events, message = await run_stream(
        server.model(api), ctx(), StreamOptions(api_key="sk-test", **options)
    )
    assert_one_terminal(events, message)
    assert isinstance(events[-1], ErrorEvent) and events[-1].reason == "error"
    assert message.stop_reason == "error"
    assert message.error_message
    assert message.diagnostics and message.diagnostics[-1]["type"] == "provider_error"
    return events, message


@pytest.mark.parametrize("api", APIS)
async def test_authentication_error(provider_server: ProviderServer, api: str) -> None:
    events, message = await _error_of(provider_server, api, HttpError(401, "invalid x-api-key"))
    info = classify_error(message)
    assert (info.kind, info.retryable, info.overflow, info.status) == (
        "authentication",
        False,
        False,
        401,
    )
    assert "invalid x-api-key" in (message.error_message or "")
    assert [e.type for e in events] == ["start", "error"]


@pytest.mark.parametrize("api", APIS)
async def test_rate_limit_with_retry_after(provider_server: ProviderServer, api: str) -> None:
    reply = HttpError(429, "Too many requests", headers={"retry-after": "7"})
    _, message = await _error_of(provider_server, api, reply)
    info = classify_error(message)
    assert (info.kind, info.retryable, info.retry_after_ms, info.status) == (
        "rate_limit",
        True,
        7000,
        429,
    )
    details = message.diagnostics[-1]["details"]  # type: ignore[index]
    assert details["retryAfterMs"] == 7000 and details["retryable"] is True


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("status", "kind"), [(500, "server"), (503, "server"), (529, "overloaded")]
)
async def test_server_errors(
    provider_server: ProviderServer, api: str, status: int, kind: str
) -> None:
    reply = HttpError(status, "Internal trouble", headers={"retry-after-ms": "250"})
    _, message = await _error_of(provider_server, api, reply)
    info = classify_error(message)
    if status == 503 and api == "anthropic-messages":
        kind = "overloaded"  # its body says overloaded_error
    assert (info.kind, info.retryable, info.status) == (kind, True, status)
    assert info.retry_after_ms == 250


@pytest.mark.parametrize("api", APIS)
async def test_context_overflow(provider_server: ProviderServer, api: str) -> None:
    text = {
        "anthropic-messages": "prompt is too long: 250000 tokens > 200000 maximum",
        "openai-responses": "Your input exceeds the context window of this model.",
        "openai-completions": "This model's maximum context length is 8192 tokens.",
    }[api]
    _, message = await _error_of(provider_server, api, HttpError(400, text))
    info = classify_error(message)
    assert (info.kind, info.overflow, info.retryable) == ("context_overflow", True, False)


@pytest.mark.parametrize("api", APIS)
async def test_overloaded_error_event_mid_stream(provider_server: ProviderServer, api: str) -> None:
    reply = Reply(text="partial answer that goes on", error_event_after=5)
    events, message = await _error_of(provider_server, api, reply)
    info = classify_error(message)
    assert (info.kind, info.retryable, info.overflow) == ("overloaded", True, False)
    assert any(e.type == "text_delta" for e in events)
    assert isinstance(message.content[0], TextContent) and message.content[0].text  # kept


@pytest.mark.parametrize("api", APIS)
async def test_disconnect_halfway(provider_server: ProviderServer, api: str) -> None:
    reply = Reply(text="a longer answer that is cut off", disconnect_after=6)
    _, message = await _error_of(provider_server, api, reply)
    info = classify_error(message)
    assert (info.kind, info.retryable) == ("disconnected", True)
    assert message.content and isinstance(message.content[0], TextContent)
    assert message.content[0].text  # partial content kept


@pytest.mark.parametrize("api", APIS)
async def test_stream_ends_early_without_error(provider_server: ProviderServer, api: str) -> None:
    reply = Reply(text="a longer answer that stops", end_after=6)
    _, message = await _error_of(provider_server, api, reply)
    info = classify_error(message)
    assert (info.kind, info.retryable) == ("disconnected", True)


@pytest.mark.parametrize("api", APIS)
async def test_garbage_line_is_malformed_stream(provider_server: ProviderServer, api: str) -> None:
    _, message = await _error_of(provider_server, api, Reply(text="some text", garbage_after=4))
    info = classify_error(message)
    assert (info.kind, info.retryable) == ("malformed_stream", True)


@pytest.mark.parametrize("api", APIS)
async def test_noise_lines_are_ignored(provider_server: ProviderServer, api: str) -> None:
    provider_server.script(Reply(text="fine", noise=True))
    _, message = await run_stream(provider_server.model(api), ctx())
    assert message.stop_reason == "stop"
    assert message.content == [TextContent(text="fine")] or message.content[0].text == "fine"  # type: ignore[union-attr]


@pytest.mark.parametrize("api", APIS)
async def test_slow_stream_is_streamed(provider_server: ProviderServer, api: str) -> None:
    import time

    provider_server.script(Reply(text=["a", "b", "c", "d"], delay_s=0.03))
    stamps: list[float] = []

    async with stream(provider_server.model(api), ctx(), StreamOptions(api_key="k")) as events:
        async for event in events:
            if event.type == "text_delta":
                stamps.append(time.monotonic())
    assert events.final_message is not None
    assert events.final_message.stop_reason == "stop"
    assert stamps[-1] - stamps[0] >= 0.06  # deltas arrived as they were sent, not at the end


@pytest.mark.parametrize("api", APIS)
async def test_stalled_stream_times_out(provider_server: ProviderServer, api: str) -> None:
    reply = Reply(text="never finishes", stall_after=4, stall_s=5)
    _, message = await _error_of(provider_server, api, reply, timeout_s=0.3)
    info = classify_error(message)
    assert (info.kind, info.retryable) == ("timeout", True)


@pytest.mark.parametrize("api", APIS)
async def test_network_error(provider_server: ProviderServer, api: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}" + ("" if api == "anthropic-messages" else "/v1")
    model = provider_server.model(api, base_url=base)
    _, message = await run_stream(model, ctx())
    info = classify_error(message)
    assert (info.kind, info.retryable) == ("network", True)
    assert message.stop_reason == "error"


# ---------------------------------------------------------------- requests on the wire


@pytest.mark.parametrize("api", APIS)
async def test_images_and_tools_in_request(provider_server: ProviderServer, api: str) -> None:
    provider_server.script(Reply(text="a red dot"))
    image = ImageContent(data="aGVsbG8=", mime_type="image/png")
    message = UserMessage(content=[TextContent(text="what is this?"), image], timestamp=1)
    context = LlmContext(system_prompt="sys", messages=[message], tools=[WEATHER])
    await run_stream(provider_server.model(api), context)
    body = provider_server.last_body()
    dumped = json.dumps(body)
    assert "aGVsbG8=" in dumped
    if api == "anthropic-messages":
        block = body["messages"][0]["content"][1]
        assert block["source"] == {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="}
        schema = body["tools"][0]["input_schema"]
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    elif api == "openai-responses":
        assert body["input"][0]["content"][1]["image_url"] == "data:image/png;base64,aGVsbG8="
        schema = body["tools"][0]["parameters"]
        assert body["instructions"] == "sys" and body["store"] is False
    else:
        part = body["messages"][1]["content"][1]
        assert part["image_url"]["url"] == "data:image/png;base64,aGVsbG8="
        schema = body["tools"][0]["function"]["parameters"]
        assert body["stream_options"] == {"include_usage": True}
    assert schema["type"] == "object"
    assert schema["properties"]["city"]["description"] == "City name"
    assert schema["required"] == ["city"]


@pytest.mark.parametrize("api", APIS)
async def test_images_replaced_for_text_only_models(
    provider_server: ProviderServer, api: str
) -> None:
    provider_server.script(Reply(text="ok"))
    image = ImageContent(data="aGVsbG8=", mime_type="image/png")
    message = UserMessage(content=[TextContent(text="look"), image], timestamp=1)
    model = provider_server.model(api, input=("text",))
    await run_stream(model, LlmContext(messages=[message]))
    dumped = json.dumps(provider_server.last_body())
    assert "aGVsbG8=" not in dumped and "image omitted" in dumped


@pytest.mark.parametrize("api", APIS)
async def test_invalid_tool_arguments_are_reported(
    provider_server: ProviderServer, api: str
) -> None:
    calls = [
        ToolCallSpec("c1", "get_weather", {"days": "many"}),
        ToolCallSpec("c2", "get_weather", '{"city": "Paris", '),
        ToolCallSpec("c3", "no_such_tool", {}),
    ]
    provider_server.script(Reply(tool_calls=calls))
    events, message = await run_stream(provider_server.model(api), ctx(tools=(WEATHER,)))
    ends = [e for e in events if isinstance(e, ToolCallEndEvent)]
    assert [e.tool_call.id.split("|")[0] for e in ends] == ["c1", "c2", "c3"]
    assert ends[0].validation_error and "city" in ends[0].validation_error
    assert ends[1].validation_error == "arguments are not valid JSON"
    assert ends[1].tool_call.arguments == {"city": "Paris"}  # best effort
    assert ends[2].validation_error == "unknown tool 'no_such_tool'"
    assert message.stop_reason == "toolUse"


async def test_anthropic_redacted_thinking_round_trip(provider_server: ProviderServer) -> None:
    provider_server.script(Reply(thinking="visible", redacted_thinking=True, text="done"))
    model = provider_server.model("anthropic-messages")
    _, first = await run_stream(model, ctx("q"))
    redacted = first.content[1]
    assert isinstance(redacted, ThinkingContent) and redacted.redacted
    assert redacted.thinking_signature
    provider_server.script(Reply(text="again"))
    history = LlmContext(messages=[user("q"), first, user("more")])
    _, second = await run_stream(model, history)
    assert second.stop_reason == "stop", second.error_message
    sent = provider_server.last_body()["messages"][1]["content"]
    assert [b["type"] for b in sent] == ["thinking", "redacted_thinking", "text"]
    assert provider_server.validation_errors == []
