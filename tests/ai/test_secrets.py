"""No API key in logs (any level, SDK DEBUG logging on), messages or reprs."""

from __future__ import annotations

import logging

import pytest

from desktop_agent.ai import LlmContext, StreamOptions, classify_error
from tests.helpers.provider_server import HttpError, ProviderServer, Reply, run_stream, user

CANARY = "sk-canary-7f3a9c1e5b2d4f608a1c3e5g7i9k"
APIS = ["anthropic-messages", "openai-responses", "openai-completions"]
LOGGERS = ["", "openai", "anthropic", "httpx", "httpx2", "httpcore", "httpcore2", "desktop_agent"]


@pytest.mark.asyncio
@pytest.mark.parametrize("api", APIS)
async def test_canary_key_never_logged(
    provider_server: ProviderServer, api: str, caplog: pytest.LogCaptureFixture
) -> None:
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    options = StreamOptions(api_key=CANARY)
    provider_server.script(
        Reply(text="ok"),
        # Real providers echo (parts of) a rejected key in the error text.
        HttpError(401, f"Incorrect API key provided: {CANARY}. Also {CANARY[3:20]}..."),
        Reply(text="cut", disconnect_after=4),
    )
    model = provider_server.model(api)
    context = LlmContext(messages=[user("hi")])
    messages = [(await run_stream(model, context, options))[1] for _ in range(3)]
    assert [m.stop_reason for m in messages] == ["stop", "error", "error"]
    assert classify_error(messages[1]).kind == "authentication"
    # the key did reach the server
    assert all(CANARY in r.headers.get("authorization", "") for r in provider_server.requests)
    assert caplog.records, "DEBUG logging produced nothing: the test would prove nothing"
    for record in caplog.records:
        text = f"{record.getMessage()} {record.args!r} {record.__dict__!r}"
        assert CANARY not in text, record.name
        assert CANARY[3:20] not in text, record.name
    for message in messages:
        dumped = str(message.to_json_dict())
        assert CANARY not in dumped
        assert CANARY[3:20] not in dumped
    assert CANARY not in repr(options)
