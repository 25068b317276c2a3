"""Local and custom servers as people run them, and provider errors by HTTP status first
(issue 8 items 5 and 6): keys sent when listing and asking, URLs kept as typed, an
Anthropic-compatible URL with or without ``/v1``, the context window from the model
list, one status in error texts, and a JSON error answer to a stream shown as itself."""

from __future__ import annotations

from typing import Any

import pytest

from desktop_agent.ai import (
    DiscoveryError,
    LlmContext,
    ModelRegistry,
    StreamOptions,
    classify_error,
)
from desktop_agent.ai._errors import classify_exception
from tests.helpers.provider_server import HttpError, ProviderServer, Reply, run_stream, user

APIS = ["anthropic-messages", "openai-responses", "openai-completions"]


def ctx() -> LlmContext:
    return LlmContext(messages=[user("hi")])


@pytest.mark.asyncio
async def test_listing_keeps_the_url_as_typed_and_sends_the_key(
    provider_server: ProviderServer,
) -> None:
    server = provider_server
    server.prefix = "/litellm"
    server.models = ["mock-gpt", "mock-claude"]
    server.model_info = {"mock-gpt": {"max_model_len": 65_536}}
    registry = ModelRegistry(catalogue=[])
    typed = f"{server.url}/litellm/v1"
    found = await registry.discover_server("local", typed, api_key="sk-local-secret")
    assert [m.key for m in found] == ["local/mock-gpt", "local/mock-claude"]
    assert {m.base_url for m in found} == {typed}  # no host:port rebuilt, prefix kept
    assert found[0].context_window == 65_536 and found[1].context_window == 32_768
    assert found[0].name == "mock-gpt"  # the picker adds "(local)" once
    listed = [r for r in server.requests if r.method == "GET"][-1]
    assert listed.path == "/litellm/v1/models"
    assert listed.headers["authorization"] == "Bearer sk-local-secret"
    server.script(Reply(text="through the prefix"))
    _, message = await run_stream(found[0], ctx(), StreamOptions(api_key="sk-local-secret"))
    assert message.stop_reason == "stop"
    post = server.requests[-1]
    assert post.path == "/litellm/v1/chat/completions"
    assert post.headers["authorization"] == "Bearer sk-local-secret"


@pytest.mark.asyncio
async def test_a_url_without_v1_is_tried_with_it(provider_server: ProviderServer) -> None:
    registry = ModelRegistry(catalogue=[])
    found = await registry.discover_server("local", provider_server.url)
    assert found and found[0].base_url == f"{provider_server.url}/v1"


@pytest.mark.parametrize("suffix", ["", "/v1", "/v1/"])
@pytest.mark.asyncio
async def test_anthropic_compatible_url_with_or_without_v1(
    provider_server: ProviderServer, suffix: str
) -> None:
    registry = ModelRegistry(catalogue=[])
    url = provider_server.url + suffix
    found = await registry.discover_server("proxy", url, api="anthropic-messages")
    assert found[0].api == "anthropic-messages"
    provider_server.script(Reply(text="hello from the proxy"))
    _, message = await run_stream(found[0], ctx())
    assert message.stop_reason == "stop", message.error_message
    assert provider_server.requests[-1].path == "/v1/messages"


@pytest.mark.asyncio
async def test_a_refused_listing_says_so(provider_server: ProviderServer) -> None:
    registry = ModelRegistry(catalogue=[])
    with pytest.raises(DiscoveryError, match="it answered 404"):
        await registry.discover_server("local", f"{provider_server.url}/nope")
    with pytest.raises(DiscoveryError, match="could not be reached"):
        await registry.discover_server("local", "http://127.0.0.1:9/v1", timeout_s=1)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.asyncio
async def test_a_json_error_answer_to_a_stream_is_that_error(
    provider_server: ProviderServer, api: str
) -> None:
    provider_server.script(HttpError(200, "the upstream model failed", error_type="upstream"))
    _, message = await run_stream(provider_server.model(api), ctx())
    info = classify_error(message)
    assert message.stop_reason == "error"
    assert "the upstream model failed" in (message.error_message or "")
    assert "ended before" not in (message.error_message or "")
    assert not info.retryable


@pytest.mark.parametrize("api", APIS)
@pytest.mark.asyncio
async def test_401_is_never_retried_whatever_the_body_says(
    provider_server: ProviderServer, api: str
) -> None:
    provider_server.script(HttpError(401, "bad key", error_type="api_error"))
    _, message = await run_stream(provider_server.model(api), ctx())
    info = classify_error(message)
    assert (info.status, info.kind, info.retryable) == (401, "authentication", False)
    assert info.url == provider_server.model(api).base_url  # the card can name the server


class _StatusError(Exception):
    def __init__(self, status: int, body: Any, text: str) -> None:
        super().__init__(text)
        self.status_code = status
        self.body = body


@pytest.mark.parametrize(
    ("status", "body", "text", "kind", "retryable", "message"),
    [
        (401, {"error": {"type": "api_error", "message": "x"}}, "", "authentication", False, "401 api_error: x"),  # noqa: E501
        (403, {"error": {"type": "overloaded_error", "message": "no"}}, "", "permission", False, None),  # noqa: E501
        (400, {"error": {"type": "api_error", "message": "bad"}}, "", "invalid_request", False, None),  # noqa: E501
        (500, {"error": {"type": "overloaded_error", "message": "busy"}}, "", "overloaded", True, None),  # noqa: E501
        (502, "<html>Bad gateway</html>", "", "server", True, "502 <html>Bad gateway</html>"),
        (400, None, "Error code: 400 - {'detail': 'x'}", "invalid_request", False, "400 {'detail': 'x'}"),  # noqa: E501
        (400, {"error": {"message": "400: model not loaded"}}, "", "invalid_request", False, "400 model not loaded"),  # noqa: E501
        (200, {"error": {"message": "quota", "code": "429"}}, "", "rate_limit", True, "429 quota"),
    ],
)  # fmt: skip
def test_status_comes_first_and_is_said_once(
    status: int, body: Any, text: str, kind: str, retryable: bool, message: str | None
) -> None:
    info = classify_exception(_StatusError(status, body, text), provider="p", api="a")
    assert (info.kind, info.retryable) == (kind, retryable)
    if message is not None:
        assert info.message == message
