"""Replaying a history to another provider or model (issue 3 item 6)."""

from __future__ import annotations

import json

import pytest

from desktop_agent.ai import (
    AssistantMessage,
    LlmContext,
    Message,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    transform_messages,
)
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec, run_stream, user


def result(call: ToolCall, text: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id, tool_name=call.name, content=[TextContent(text=text)], timestamp=2
    )


def first_call(message: AssistantMessage) -> ToolCall:
    return next(b for b in message.content if isinstance(b, ToolCall))


@pytest.mark.asyncio
async def test_anthropic_history_continues_on_openai_and_back(
    provider_server: ProviderServer,
) -> None:
    server = provider_server
    claude = server.model("anthropic-messages", "claude-test")
    gpt = server.model("openai-responses", "gpt-test")
    local = server.model("openai-completions", "local-test")
    options = StreamOptions(api_key="k", thinking_level="medium")
    history: list[Message] = [user("Weather in Paris?")]

    async def turn(model_api: str, reply: Reply) -> AssistantMessage:
        model = {"anthropic-messages": claude, "openai-responses": gpt}.get(model_api, local)
        server.script(reply)
        _, message = await run_stream(model, LlmContext(messages=list(history)), options)
        assert message.stop_reason in ("stop", "toolUse"), message.error_message
        history.append(message)
        return message

    # 1. Anthropic with signed thinking and a tool call, then its answer
    m1 = await turn(
        "anthropic-messages",
        Reply(
            thinking="Need the weather tool.",
            redacted_thinking=True,
            tool_calls=[ToolCallSpec("toolu_01", "get_weather", {"city": "Paris"})],
        ),
    )
    history.append(result(first_call(m1), "18 C, sunny"))
    await turn("anthropic-messages", Reply(thinking="Answer now.", text="It is 18 C."))
    # 2. Continue on the OpenAI Responses API: reasoning + a tool call of its own
    history.append(user("And in Rome?"))
    m3 = await turn(
        "openai-responses",
        Reply(
            thinking="Call the tool again.",
            tool_calls=[ToolCallSpec("call_77", "get_weather", {"city": "Rome"})],
        ),
    )
    first_gpt_request = server.last_body()
    history.append(result(first_call(m3), "22 C"))
    await turn("openai-responses", Reply(thinking="Done.", text="22 C in Rome."))
    second_gpt_request = server.last_body()
    # 3. A local OpenAI-compatible model
    history.append(user("Summarise."))
    await turn("openai-completions", Reply(text="Paris 18, Rome 22."))
    # 4. And back to Anthropic
    history.append(user("Thanks!"))
    await turn("anthropic-messages", Reply(thinking="Polite reply.", text="You're welcome."))
    last_claude_request = server.last_body()

    assert server.validation_errors == []
    # Anthropic's signed thinking never went to OpenAI as anything signed
    assert "sig_" not in json.dumps(first_gpt_request)
    assert "redacted_" not in json.dumps(first_gpt_request)
    assert not [i for i in first_gpt_request["input"] if i.get("type") == "reasoning"]
    # ...but the same OpenAI model got its own reasoning item and item ids back
    kinds = [i.get("type") for i in second_gpt_request["input"]]
    assert "reasoning" in kinds
    call_items = [i for i in second_gpt_request["input"] if i.get("type") == "function_call"]
    assert [i.get("id", "") for i in call_items][-1].startswith("fc_")
    assert "id" not in call_items[0]  # toolu_01 came from Anthropic: no OpenAI item id
    # Back on Anthropic: its own thinking keeps signatures, OpenAI's became text
    blocks = [
        b for m in last_claude_request["messages"] for b in m["content"] if isinstance(b, dict)
    ]
    signed = [b for b in blocks if b["type"] == "thinking"]
    assert [b["thinking"] for b in signed] == ["Need the weather tool.", "Answer now."]
    assert any(b["type"] == "redacted_thinking" for b in blocks)
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    assert "Call the tool again." in texts
    ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    assert ids == ["toolu_01", "call_77"]


@pytest.mark.asyncio
async def test_foreign_signature_is_rejected_by_the_server(provider_server: ProviderServer) -> None:
    """The validation is real: a thinking block with a signature the server did not issue
    fails like on the real API (so the replay test above would catch a leak)."""
    claude = provider_server.model("anthropic-messages")
    forged = AssistantMessage(
        content=[
            ThinkingContent(thinking="x", thinking_signature="sig_forged"),
            TextContent(text="a"),
        ],
        api=claude.api,
        provider=claude.provider,
        model=claude.id,
        stop_reason="stop",
        timestamp=1,
    )
    provider_server.script(Reply(text="never"))
    _, message = await run_stream(claude, LlmContext(messages=[user("q"), forged, user("r")]))
    assert message.stop_reason == "error"
    assert "signature" in (message.error_message or "")
    assert provider_server.validation_errors


def _assistant(
    *blocks: object, stop: str = "toolUse", api: str = "anthropic-messages"
) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),  # type: ignore[arg-type]
        api=api,
        provider="anthropic" if api == "anthropic-messages" else "openai",
        model="claude-test" if api == "anthropic-messages" else "gpt-test",
        stop_reason=stop,
        timestamp=1,
    )


def test_transform_pairs_tool_calls_and_drops_broken_turns(provider_server: ProviderServer) -> None:
    model = provider_server.model("anthropic-messages")
    call = ToolCall(id="call_1|fc_9", name="read", arguments={"path": "a"})
    history: list[Message] = [
        user("q"),
        _assistant(call, api="openai-responses"),  # its result is missing
        user("next"),
        _assistant(TextContent(text="half"), stop="aborted"),
        _assistant(TextContent(text="oops"), stop="error"),
        ToolResultMessage(tool_call_id="ghost", tool_name="x", timestamp=1),  # no call
        user("again"),
    ]
    out = transform_messages(history, model)
    roles = [m.role for m in out]
    assert roles == ["user", "assistant", "toolResult", "user", "user"]
    converted = out[1]
    assert isinstance(converted, AssistantMessage)
    new_call = converted.content[0]
    assert isinstance(new_call, ToolCall) and new_call.id == "call_1"
    synthetic = out[2]
    assert isinstance(synthetic, ToolResultMessage)
    assert synthetic.tool_call_id == "call_1" and synthetic.is_error
    # the input history is not modified
    assert call.id == "call_1|fc_9"
