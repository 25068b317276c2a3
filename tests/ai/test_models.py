"""Registry, catalogue, discovery, thinking levels, tool JSON, error classification."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_agent.ai import (
    CATALOGUE_PATH,
    AssistantMessage,
    LlmContext,
    Model,
    ModelRegistry,
    PartialJson,
    StreamOptions,
    clamp_thinking_level,
    classify_error,
    load_catalogue,
    parse_partial_json,
    parse_retry_after,
    supported_thinking_levels,
    thinking_value,
)
from tests.helpers.provider_server import ProviderServer, Reply, run_stream, user

# ---------------------------------------------------------------------------- catalogue


def test_catalogue_has_current_openai_and_anthropic_models() -> None:
    models = load_catalogue(CATALOGUE_PATH)
    providers = {m.provider for m in models}
    assert {"openai", "anthropic"} <= providers
    for model in models:
        assert model.context_window > 0 and 0 < model.max_tokens <= model.context_window
        assert model.cost.input > 0 and model.cost.output > 0
        assert model.api in ("anthropic-messages", "openai-responses", "openai-completions")
        assert "text" in model.input
        assert clamp_thinking_level(model, "medium") in supported_thinking_levels(model)
    registry = ModelRegistry()
    sonnet = registry.find("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None and sonnet.supports_images and sonnet.reasoning
    assert registry.get("openai/gpt-4.1") is not None
    # JSON uses Pi's camelCase names
    assert "contextWindow" in sonnet.to_json_dict() and "baseUrl" in sonnet.to_json_dict()


def test_user_defined_models_win_and_can_be_removed() -> None:
    registry = ModelRegistry(catalogue=[])
    model = registry.add_openai_compatible(
        "qwen3:8b", "http://gpu-box:11434/v1/", provider="ollama-remote", reasoning=True
    )
    assert model.base_url == "http://gpu-box:11434/v1"
    assert registry.find("ollama-remote", "qwen3:8b") == model
    registry.add({**model.to_json_dict(), "name": "Qwen renamed"})
    assert registry.get("ollama-remote/qwen3:8b").name == "Qwen renamed"  # type: ignore[union-attr]
    assert registry.remove("ollama-remote", "qwen3:8b")
    assert registry.all() == []


@pytest.mark.asyncio
async def test_discovery_of_local_servers(provider_server: ProviderServer) -> None:
    provider_server.models = ["llama3.2:3b", "qwen3:8b"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]
    registry = ModelRegistry(catalogue=[])
    started = time.monotonic()
    found = await registry.discover_local(
        servers={"ollama": provider_server.port, "lmstudio": closed_port}, timeout_s=0.5
    )
    assert time.monotonic() - started < 1.0
    assert [m.id for m in found] == ["llama3.2:3b", "qwen3:8b"]
    model = registry.find("ollama", "qwen3:8b")
    assert model is not None and model.api == "openai-completions"
    assert model.base_url == f"{provider_server.url}/v1"
    # and the discovered model streams through the same server
    provider_server.script(Reply(text="local hello"))
    _, message = await run_stream(model, LlmContext(messages=[user("hi")]))
    assert message.stop_reason == "stop" and message.usage.cost.total == 0
    body = provider_server.last_body()
    assert body["messages"][0]["role"] == "user"


@pytest.mark.asyncio
async def test_discovery_with_nothing_running(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing listens: found by a plain connect, without making an HTTP client (that
    took ~0.1 s of every launch)."""
    from desktop_agent.ai import _registry

    async def no_client(*args: Any) -> Any:
        raise AssertionError("no HTTP client when no server is running")

    monkeypatch.setattr(_registry, "_client", no_client)
    ports = []
    for _ in range(4):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
    registry = ModelRegistry(catalogue=[])
    found = await registry.discover_local(servers=dict(zip("abcd", ports, strict=True)))
    assert found == [] and registry.all() == []


# ------------------------------------------------------------------------------ thinking


def _model(**overrides: Any) -> Model:
    values: dict[str, Any] = {
        "id": "m",
        "name": "m",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "base_url": "http://x",
        "reasoning": True,
    }
    values.update(overrides)
    return Model(**values)


def test_supported_levels_and_clamping() -> None:
    assert supported_thinking_levels(None) == ["off"]
    assert clamp_thinking_level(None, "high") == "off"
    plain = _model(reasoning=False)
    assert supported_thinking_levels(plain) == ["off"]
    assert clamp_thinking_level(plain, "xhigh") == "off"
    default = _model()
    assert supported_thinking_levels(default) == ["off", "minimal", "low", "medium", "high"]
    assert clamp_thinking_level(default, "xhigh") == "high"  # no higher one: down
    always_on = _model(
        thinking_level_map={"off": None, "minimal": None, "low": "low", "xhigh": "max"}
    )
    assert supported_thinking_levels(always_on) == ["low", "medium", "high", "xhigh"]
    assert clamp_thinking_level(always_on, "off") == "low"  # up to the nearest higher
    assert clamp_thinking_level(always_on, "minimal") == "low"
    assert clamp_thinking_level(always_on, "xhigh") == "xhigh"
    gap = _model(thinking_level_map={"medium": None})
    assert clamp_thinking_level(gap, "medium") == "high"


def test_thinking_values() -> None:
    anthropic = _model()
    assert thinking_value(anthropic, "off") is None
    assert thinking_value(anthropic, "high") == 16384
    openai = _model(api="openai-responses", provider="openai")
    assert thinking_value(openai, "low") == "low"
    adaptive = _model(thinking_level_map={"off": "disabled", "high": "high"})
    assert thinking_value(adaptive, "off") == "disabled"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("api", "level_map", "level", "expected"),
    [
        (
            "anthropic-messages",
            None,
            "medium",
            {"thinking": {"type": "enabled", "budget_tokens": 8192}},
        ),
        (
            "anthropic-messages",
            {"off": None, "minimal": None, "low": "low", "medium": "medium"},
            "off",
            {"thinking": {"type": "adaptive"}, "output_config": {"effort": "low"}},
        ),
        ("anthropic-messages", None, "off", {}),
        ("openai-responses", None, "high", {"reasoning": {"effort": "high", "summary": "auto"}}),
        (
            "openai-responses",
            {"xhigh": "xhigh"},
            "xhigh",
            {"reasoning": {"effort": "xhigh", "summary": "auto"}},
        ),
        ("openai-completions", None, "minimal", {"reasoning_effort": "minimal"}),
    ],
)
async def test_thinking_level_reaches_the_request(
    provider_server: ProviderServer,
    api: str,
    level_map: dict[str, Any] | None,
    level: str,
    expected: dict[str, Any],
) -> None:
    from desktop_agent.ai import ModelCompat

    overrides: dict[str, Any] = {"reasoning": True, "thinking_level_map": level_map}
    if api == "openai-completions":
        overrides["compat"] = ModelCompat()
    model = provider_server.model(api, **overrides)
    provider_server.script(Reply(text="ok"))
    options = StreamOptions(api_key="k", thinking_level=level, max_tokens=4000, temperature=0.5)  # type: ignore[arg-type]
    _, message = await run_stream(model, LlmContext(messages=[user("q")]), options)
    assert message.stop_reason == "stop", message.error_message
    body = provider_server.last_body()
    for key, value in expected.items():
        assert body[key] == value
    if not expected:
        assert "thinking" not in body and body["temperature"] == 0.5
    if api == "anthropic-messages" and "budget_tokens" in json.dumps(expected):
        assert body["max_tokens"] > 8192 and "temperature" not in body


# ---------------------------------------------------------------------- partial JSON


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(value=st.dictionaries(st.text(max_size=6), json_values, max_size=5), data=st.data())
def test_partial_json_any_split(value: dict[str, Any], data: st.DataObject) -> None:
    text = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    parser = PartialJson()
    last = 0
    for cut in [*cuts, len(text)]:
        parser.feed(text[last:cut])
        last = cut
        partial = parser.value()
        assert partial is None or isinstance(partial, dict)
    assert parser.value() == value


def test_partial_json_examples() -> None:
    assert parse_partial_json('{"path": "a.txt", "content": "hel') == {
        "path": "a.txt",
        "content": "hel",
    }
    assert parse_partial_json('{"a": [1, 2, {"b": tr') == {"a": [1, 2, {}]}
    assert parse_partial_json('{"a": 12') == {"a": 12}
    assert parse_partial_json('{"a": "x\\') == {"a": "x"}
    assert parse_partial_json('{"a": "\\u00') == {"a": ""}
    assert parse_partial_json('{"ke') == {}
    assert parse_partial_json("") is None


# ------------------------------------------------------------------------------ errors


def _message(stop: str, error: str | None = None, **usage: int) -> AssistantMessage:
    message = AssistantMessage(
        api="openai-completions", provider="x", model="m", stop_reason=stop, timestamp=1
    )
    message.error_message = error
    for key, value in usage.items():
        setattr(message.usage, key, value)
    return message


@pytest.mark.parametrize(
    ("text", "kind", "retryable", "overflow"),
    [
        ("prompt is too long: 210000 tokens > 200000 maximum", "context_overflow", False, True),
        ("429 Too Many Requests", "rate_limit", True, False),
        ("Overloaded", "overloaded", True, False),
        ("503 Service Unavailable", "server", True, False),
        ("socket hang up", "server", True, False),
        ("Request timed out", "timeout", True, False),
        ("401 invalid x-api-key", "authentication", False, False),
        ("something odd", "unknown", False, False),
    ],
)
def test_classify_messages_from_elsewhere(
    text: str, kind: str, retryable: bool, overflow: bool
) -> None:
    info = classify_error(_message("error", text))
    assert (info.kind, info.retryable, info.overflow) == (kind, retryable, overflow)


def test_classify_ok_aborted_and_silent_overflow() -> None:
    assert classify_error(_message("stop")).kind == "none"
    assert classify_error(_message("aborted", "Request was aborted")).kind == "aborted"
    silent = classify_error(_message("stop", input=250_000), context_window=200_000)
    assert silent.overflow and silent.kind == "context_overflow"


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2000
    assert parse_retry_after({"retry-after-ms": "150"}) == 150
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25_000 <= (parse_retry_after({"retry-after": future}) or 0) <= 31_000


def test_partial_json_big_text_is_reparsed_at_most_every_interval() -> None:
    """A 1 MB argument streamed in 100-character pieces is not re-parsed per piece
    (that was quadratic: 8.6 s for 560 KB); the value still arrives, and is exact at the end."""
    now = [0.0]
    parser = PartialJson(clock=lambda: now[0])
    content = "".join(f"line {i}: x = f({i})\n" for i in range(50_000))
    text = json.dumps({"path": "big.py", "content": content})
    assert len(text) > 1_000_000
    pieces = [text[i : i + 100] for i in range(0, len(text), 100)]
    for n, piece in enumerate(pieces):
        parser.feed(piece)
        now[0] += 0.001  # a piece per millisecond: ~10 s of streaming
        partial = parser.maybe_value()
        if n > 10:
            assert isinstance(partial, dict)
            assert partial["path"] == "big.py"
    small_phase = PartialJson.SMALL // 100 + 1
    assert parser.parse_count <= small_phase + len(pieces) * 0.001 / PartialJson.INTERVAL + 2
    assert parser.value() == {"path": "big.py", "content": content}


def test_partial_json_small_text_is_parsed_on_every_piece() -> None:
    parser = PartialJson(clock=lambda: 0.0)
    seen = []
    for piece in ['{"a": "x', "y", "z", '"}']:
        parser.feed(piece)
        seen.append(parser.maybe_value())
    assert seen == [{"a": "x"}, {"a": "xy"}, {"a": "xyz"}, {"a": "xyz"}]
