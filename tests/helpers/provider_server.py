"""A scripted fake of the three provider wire APIs, on a real socket (PLATFORM.md §5).

`ProviderServer` is a `ThreadingHTTPServer` on 127.0.0.1 that answers

- ``POST /v1/messages`` like the Anthropic Messages API (``event:`` line on every event),
- ``POST /v1/chat/completions`` like OpenAI Chat Completions (``data:`` only, ``[DONE]``),
- ``POST /v1/responses`` like the OpenAI Responses API,
- ``GET /v1/models`` with `ProviderServer.models`,

streaming Server-Sent Events with ``Transfer-Encoding: chunked``, one event per chunk.
Each POST takes the next scripted `Reply` or `HttpError` (see `ProviderServer.script`);
the same `Reply` renders in each API's dialect, so one scenario runs on every API.

Requests are validated the way the real APIs would reject them (tool calls paired with
results, tool-call id formats, thinking signatures and encrypted reasoning only accepted
when this server issued them for that exact content, no foreign fields); a request that
fails gets the provider's 400 error and the reason lands in `validation_errors`.

Usable from any test directory::

    from tests.helpers.provider_server import ProviderServer, Reply
    with ProviderServer() as server:
        server.script(Reply(text="Hello"))
        model = server.model("anthropic-messages")
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self

from desktop_agent.ai import (
    AssistantMessage,
    AssistantMessageEvent,
    LlmContext,
    Model,
    ModelCost,
    StreamOptions,
    TextContent,
    UserMessage,
    stream,
)

_SECRET = b"provider-server-secret"
_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def sse(data: Any, event: str | None = None) -> str:
    prefix = f"event: {event}\n" if event else ""
    return prefix + f"data: {json.dumps(data)}\n\n"


def sign(kind: str, text: str) -> str:
    return kind + "_" + hmac.new(_SECRET, text.encode(), hashlib.sha256).hexdigest()[:32]


@dataclass
class ToolCallSpec:
    id: str
    name: str
    arguments: dict[str, Any] | str
    """A dict, or raw argument text (to send broken JSON)."""

    @property
    def argument_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted model answer, rendered in the dialect of the API that was called."""

    text: str | list[str] = ""
    """The answer text; a list gives the deltas exactly."""
    thinking: str | list[str] = ""
    redacted_thinking: bool = False
    """Anthropic: add a redacted_thinking block."""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    tool_call_style: Literal["standard", "interleaved", "single", "no_index"] = "standard"
    """Chat Completions only: how tool-call pieces are sent."""
    reasoning_field: str = "reasoning_content"
    """Chat Completions only: delta field carrying reasoning."""
    stop: Literal["stop", "length"] | None = None
    input_tokens: int = 20
    output_tokens: int = 10
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    include_usage: bool = True
    response_model: str | None = None
    # faults
    delay_s: float = 0.0
    """Pause before every event."""
    stall_after: int | None = None
    stall_s: float = 0.0
    hold_after: int | None = None
    """Send this many events, then keep the connection open, silent, until released."""
    disconnect_after: int | None = None
    """Send this many events, then drop the connection (no final chunk)."""
    end_after: int | None = None
    """Send this many events, then end the body cleanly (a truncated but well-formed stream)."""
    garbage_after: int | None = None
    """Insert a ``data:`` line that is not JSON after this many events."""
    noise: bool = False
    """Add harmless noise: comment lines, blank keep-alives, unknown event types."""
    error_event_after: int | None = None
    """After this many events, send the API's in-stream "overloaded" error and stop."""
    whole_json: bool = False
    """Chat Completions: answer a streaming request with one JSON completion (status 200),
    as a proxy with streaming turned off does."""


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> Reply:
    """A scripted reply that calls one tool."""
    return Reply(tool_calls=[ToolCallSpec(call_id, name, arguments)])


@dataclass
class HttpError:
    status: int
    message: str = "error"
    error_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    as_events: bool = False
    """Send the error body as an event stream ("data: {…}", then "data: [DONE]"), as
    LiteLLM does for an error of a streaming request."""


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


_DEFAULT_ERROR_TYPES = {
    400: ("invalid_request_error", "invalid_request_error"),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "permission_denied"),
    404: ("not_found_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("api_error", "server_error"),
    503: ("overloaded_error", "server_error"),
    529: ("overloaded_error", "overloaded"),
}


class ProviderServer:
    def __init__(self, port: int = 0) -> None:
        self._queue: deque[Reply | HttpError] = deque()
        self._keyed: dict[str, deque[Reply | HttpError]] = {}
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.validation_errors: list[str] = []
        self.models: list[str] = ["local-model"]
        self.models_error: HttpError | None = None
        """When set, ``GET /v1/models`` answers this error (a proxy without its database)."""
        self.model_info: dict[str, dict[str, Any]] = {}
        """Extra fields of a model's entry in ``GET /v1/models`` (e.g. its context)."""
        self.prefix = ""
        """A path prefix the server also answers under (a proxy such as ``/litellm``)."""
        self.default_reply: Reply | HttpError | None = None
        self.release = threading.Event()
        self._stopping = threading.Event()
        self._counter = itertools.count(1)
        self.connections_closed = 0
        server = self

        class Handler(_Handler):
            provider = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._started = False

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> Self:
        if not self._started:
            self._thread.start()
            self._started = True
        return self

    def stop(self) -> None:
        self._stopping.set()
        self.release.set()
        if self._started:
            self._httpd.shutdown()
            self._thread.join(5)
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- scripting -------------------------------------------------------------------

    def script(self, *replies: Reply | HttpError) -> None:
        """Queue answers for the next POST requests, in order."""
        with self._lock:
            self._queue.extend(replies)

    def script_for(self, key: str, *replies: Reply | HttpError) -> None:
        """Queue answers for the POST requests whose body holds ``key`` (e.g. a prompt of
        one session: several sessions then run at once, each on its own script)."""
        with self._lock:
            self._keyed.setdefault(key, deque()).extend(replies)

    def clear_script(self) -> None:
        """Forget replies that were scripted but never asked for."""
        with self._lock:
            self._queue.clear()
            self._keyed.clear()

    def next_reply(self, raw: str = "") -> Reply | HttpError:
        """The answer to a request whose body is ``raw``: the next of a `script_for` key
        it holds, else the next of `script`."""
        with self._lock:
            for key, replies in self._keyed.items():
                if replies and key in raw:
                    return replies.popleft()
            if self._queue:
                return self._queue.popleft()
        return self.default_reply or HttpError(500, "no reply scripted", "api_error")

    def next_id(self) -> int:
        return next(self._counter)

    def model(self, api: str, model_id: str | None = None, **overrides: Any) -> Model:
        """A model of ``api`` whose base URL points at this server."""
        defaults: dict[str, Any] = {
            "anthropic-messages": {
                "id": "claude-test",
                "provider": "anthropic",
                "base_url": self.url,
                "reasoning": True,
            },
            "openai-responses": {
                "id": "gpt-test",
                "provider": "openai",
                "base_url": f"{self.url}/v1",
                "reasoning": True,
            },
            "openai-completions": {
                "id": "local-test",
                "provider": "local",
                "base_url": f"{self.url}/v1",
                "reasoning": False,
            },
        }[api]
        values: dict[str, Any] = {
            **defaults,
            "api": api,
            "name": "test model",
            "input": ("text", "image"),
            "cost": ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
            "context_window": 200_000,
            "max_tokens": 32_000,
        }
        if model_id is not None:
            values["id"] = model_id
        values.update(overrides)
        return Model(**values)

    def last_body(self) -> Any:
        posts = [r for r in self.requests if r.method == "POST"]
        return posts[-1].body if posts else None


# ================================================================== request validation


class ValidationFailure(Exception):
    pass


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValidationFailure(message)


def _valid_redacted(data: Any) -> bool:
    if not isinstance(data, str) or ":" not in data:
        return False
    signature, payload = data.split(":", 1)
    return signature == sign("redacted", payload)


def validate_anthropic(body: dict[str, Any]) -> None:
    _check(isinstance(body.get("model"), str), "model: field required")
    _check(isinstance(body.get("max_tokens"), int), "max_tokens: field required")
    messages = body.get("messages")
    _check(isinstance(messages, list) and len(messages) > 0, "messages: at least one message")
    assert isinstance(messages, list)
    _check(messages[0].get("role") == "user", "messages: first message must use the user role")
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        _check(isinstance(budget, int) and budget >= 1024, "thinking.budget_tokens: >= 1024")
        _check(budget < body["max_tokens"], "max_tokens must be greater than budget_tokens")
        _check("temperature" not in body, "temperature may only be set to 1 with thinking")
    for tool in body.get("tools") or []:
        _check(
            set(tool) <= {"name", "description", "input_schema", "cache_control"}, "tools: extra"
        )
        _check(tool.get("input_schema", {}).get("type") == "object", "tools: input_schema.type")
    allowed = {
        "user": {"text", "image", "tool_result", "document"},
        "assistant": {"text", "thinking", "redacted_thinking", "tool_use"},
    }
    block_keys = {
        "text": {"type", "text", "cache_control", "citations"},
        "image": {"type", "source", "cache_control"},
        "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control"},
        "thinking": {"type", "thinking", "signature"},
        "redacted_thinking": {"type", "data"},
        "tool_use": {"type", "id", "name", "input", "cache_control"},
        "document": {"type", "source", "cache_control"},
    }
    previous_tool_ids: list[str] = []
    for n, message in enumerate(messages):
        role = message.get("role")
        _check(role in allowed, f"messages.{n}.role: unexpected role {role!r}")
        _check(set(message) <= {"role", "content"}, f"messages.{n}: extra inputs are not permitted")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        _check(isinstance(blocks, list) and len(blocks) > 0, f"messages.{n}: content empty")
        tool_uses: list[str] = []
        results: list[str] = []
        for m, block in enumerate(blocks):
            btype = block.get("type")
            where = f"messages.{n}.content.{m}"
            _check(btype in allowed[role], f"{where}: type {btype!r} not allowed for {role}")
            extra = set(block) - block_keys[btype]
            _check(not extra, f"{where}: extra inputs are not permitted: {sorted(extra)}")
            if btype == "text":
                _check(bool(block.get("text")), f"{where}: text content blocks must be non-empty")
            elif btype == "thinking":
                sig = block.get("signature")
                _check(
                    isinstance(sig, str) and sig == sign("sig", block.get("thinking", "")),
                    f"{where}: Invalid `signature` in `thinking` block",
                )
            elif btype == "redacted_thinking":
                _check(
                    _valid_redacted(block.get("data")),
                    f"{where}: Invalid `data` in `redacted_thinking` block",
                )
            elif btype == "tool_use":
                _check(bool(_ANTHROPIC_ID.match(str(block.get("id")))), f"{where}.id: bad pattern")
                _check(isinstance(block.get("input"), dict), f"{where}.input: must be an object")
                tool_uses.append(block["id"])
            elif btype == "tool_result":
                _check(bool(_ANTHROPIC_ID.match(str(block.get("tool_use_id")))), f"{where}: id")
                results.append(block["tool_use_id"])
            elif btype == "image":
                source = block.get("source") or {}
                _check(
                    source.get("type") == "base64" and "media_type" in source, f"{where}: source"
                )
        if role == "user":
            for rid in results:
                _check(
                    rid in previous_tool_ids,
                    f"messages.{n}: unexpected `tool_use_id` found in `tool_result` blocks: {rid}. "
                    "Each `tool_result` block must have a corresponding `tool_use` block in the "
                    "previous message.",
                )
            missing = [tid for tid in previous_tool_ids if tid not in results]
            _check(
                not missing,
                f"messages.{n}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}",
            )
            if results:
                _check(
                    all(b.get("type") == "tool_result" for b in blocks[: len(results)]),
                    f"messages.{n}: tool_result blocks must come first",
                )
            previous_tool_ids = []
        else:
            _check(
                not previous_tool_ids,
                f"messages.{n}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(previous_tool_ids)}",
            )
            previous_tool_ids = tool_uses
    _check(not previous_tool_ids, "the last message has tool_use blocks without results")


def validate_completions(body: dict[str, Any]) -> None:
    _check(isinstance(body.get("model"), str), "you must provide a model parameter")
    messages = body.get("messages")
    _check(isinstance(messages, list) and len(messages) > 0, "messages: must be non-empty")
    assert isinstance(messages, list)
    if "stream_options" in body:
        _check(body.get("stream") is True, "stream_options is only allowed with stream=true")
    keys = {
        "system": {"role", "content", "name"},
        "developer": {"role", "content", "name"},
        "user": {"role", "content", "name"},
        "assistant": {"role", "content", "tool_calls", "name", "refusal"},
        "tool": {"role", "content", "tool_call_id"},
    }
    open_calls: list[str] = []
    for n, message in enumerate(messages):
        role = message.get("role")
        _check(role in keys, f"messages[{n}].role: invalid value {role!r}")
        extra = set(message) - keys[role]
        _check(not extra, f"messages[{n}]: unrecognized argument(s) {sorted(extra)}")
        if role == "tool":
            call_id = message.get("tool_call_id")
            _check(
                call_id in open_calls,
                "Invalid parameter: messages with role 'tool' must be a response to a preceding "
                f"message with 'tool_calls' ({call_id})",
            )
            open_calls.remove(call_id)
            continue
        _check(
            not open_calls,
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            f"to each 'tool_call_id'. The following tool_call_ids did not have response "
            f"messages: {', '.join(open_calls)}",
        )
        content = message.get("content")
        if role == "user" and isinstance(content, list):
            for part in content:
                _check(part.get("type") in ("text", "image_url"), f"messages[{n}]: part type")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            _check(content is not None or bool(calls), f"messages[{n}]: content or tool_calls")
            for call in calls:
                _check(set(call) <= {"id", "type", "function"}, f"messages[{n}].tool_calls: extra")
                _check(len(call["id"]) <= 40, f"messages[{n}].tool_calls: id longer than 40")
                json.loads(call["function"]["arguments"])
                open_calls.append(call["id"])
    _check(not open_calls, f"tool_call_ids without response messages: {', '.join(open_calls)}")


def validate_responses(body: dict[str, Any]) -> None:
    _check(isinstance(body.get("model"), str), "Missing required parameter: 'model'")
    items = body.get("input")
    _check(isinstance(items, list) and len(items) > 0, "input: must be non-empty")
    assert isinstance(items, list)
    calls: list[str] = []
    outputs: list[str] = []
    for n, item in enumerate(items):
        itype = item.get("type", "message")
        where = f"input[{n}]"
        if itype == "message":
            role = item.get("role")
            _check(role in ("user", "assistant", "system", "developer"), f"{where}.role")
            _check(set(item) <= {"type", "role", "content", "id", "status"}, f"{where}: extra")
            if "id" in item:
                _check(
                    str(item["id"]).startswith("msg"), f"{where}.id: Invalid 'id' {item['id']!r}"
                )
            allowed = (
                ("output_text", "refusal") if role == "assistant" else ("input_text", "input_image")
            )
            for part in item.get("content") or []:
                _check(part.get("type") in allowed, f"{where}.content: invalid part type")
        elif itype == "function_call":
            _check(set(item) <= {"type", "call_id", "name", "arguments", "id", "status"}, where)
            if "id" in item:
                _check(str(item["id"]).startswith("fc"), f"{where}.id: Invalid 'id' {item['id']!r}")
            json.loads(item["arguments"])
            calls.append(item["call_id"])
        elif itype == "function_call_output":
            _check(
                item.get("call_id") in calls,
                f"No tool call found for function call output with call_id {item.get('call_id')}",
            )
            outputs.append(item["call_id"])
        elif itype == "reasoning":
            _check(str(item.get("id", "")).startswith("rs_"), f"{where}.id: Invalid reasoning id")
            summary = item.get("summary")
            _check(isinstance(summary, list), f"{where}.summary: required")
            text = "".join(part.get("text", "") for part in summary or [])
            _check(
                item.get("encrypted_content") == sign("enc", f"{item.get('id')}:{text}"),
                f"{where}: The encrypted content for item {item.get('id')} could not be verified",
            )
        else:
            raise ValidationFailure(f"{where}.type: invalid value {itype!r}")
    missing = [c for c in calls if c not in outputs]
    _check(not missing, f"No tool output found for function call {', '.join(missing)}")


# ======================================================================= rendering


def _split(text: str | list[str], size: int = 4) -> list[str]:
    if isinstance(text, list):
        return text
    return [text[i : i + size] for i in range(0, len(text), size)] if text else []


def _join(text: str | list[str]) -> str:
    return "".join(text) if isinstance(text, list) else text


def render_anthropic(server: ProviderServer, reply: Reply, body: dict[str, Any]) -> list[str]:
    n = server.next_id()
    out = [
        sse(
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{n:04d}",
                    "type": "message",
                    "role": "assistant",
                    "model": reply.response_model or body.get("model"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": reply.input_tokens,
                        "output_tokens": 1,
                        "cache_read_input_tokens": reply.cache_read_tokens,
                        "cache_creation_input_tokens": reply.cache_write_tokens,
                    },
                },
            },
            "message_start",
        ),
        sse({"type": "ping"}, "ping"),
    ]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        out.append(
            sse(
                {"type": "content_block_start", "index": index, "content_block": start},
                "content_block_start",
            )
        )
        for delta in deltas:
            out.append(
                sse(
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    "content_block_delta",
                )
            )
        out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1

    if reply.thinking:
        thinking = _join(reply.thinking)
        deltas: list[dict[str, Any]] = [
            {"type": "thinking_delta", "thinking": piece} for piece in _split(reply.thinking)
        ]
        deltas.append({"type": "signature_delta", "signature": sign("sig", thinking)})
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if reply.redacted_thinking:
        payload = f"blob{n}"
        block({"type": "redacted_thinking", "data": sign("redacted", payload) + ":" + payload}, [])
    if reply.text:
        block(
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": piece} for piece in _split(reply.text)],
        )
    for call in reply.tool_calls:
        text = call.argument_text
        pieces = [""] + [text[i : i + 7] for i in range(0, len(text), 7)]
        block(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
            [{"type": "input_json_delta", "partial_json": p} for p in pieces],
        )
    wire_stop: str = reply.stop or ("tool_use" if reply.tool_calls else "end_turn")
    wire_stop = {"length": "max_tokens", "stop": "end_turn"}.get(wire_stop, wire_stop)
    out.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": wire_stop, "stop_sequence": None},
                "usage": {"output_tokens": reply.output_tokens},
            },
            "message_delta",
        )
    )
    out.append(sse({"type": "message_stop"}, "message_stop"))
    return out


def render_completions(server: ProviderServer, reply: Reply, body: dict[str, Any]) -> list[str]:
    n = server.next_id()
    model = reply.response_model or body.get("model")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return sse(
            {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    out = [chunk({"role": "assistant", "content": ""})]
    for piece in _split(reply.thinking):
        out.append(chunk({reply.reasoning_field: piece}))
    for piece in _split(reply.text):
        out.append(chunk({"content": piece}))
    calls = reply.tool_calls
    style = reply.tool_call_style
    if style == "single":
        for i, call in enumerate(calls):
            out.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": call.argument_text},
                            }
                        ]
                    }
                )
            )
    else:
        heads: list[dict[str, Any]] = []
        tails: list[list[dict[str, Any]]] = []
        for i, call in enumerate(calls):
            head: dict[str, Any] = {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            if style != "no_index":
                head["index"] = i
            heads.append(head)
            text = call.argument_text
            fragments: list[dict[str, Any]] = []
            for j in range(0, len(text), 5):
                fragment: dict[str, Any] = {"function": {"arguments": text[j : j + 5]}}
                if style != "no_index":
                    fragment["index"] = i
                fragments.append(fragment)
            tails.append(fragments)
        if style == "interleaved":
            for head in heads:
                out.append(chunk({"tool_calls": [head]}))
            for group in itertools.zip_longest(*tails):
                for fragment in group:
                    if fragment is not None:
                        out.append(chunk({"tool_calls": [fragment]}))
        else:
            for head, fragments in zip(heads, tails, strict=True):
                out.append(chunk({"tool_calls": [head]}))
                for fragment in fragments:
                    out.append(chunk({"tool_calls": [fragment]}))
    finish = reply.stop or ("tool_calls" if calls and style != "single" else "stop")
    out.append(chunk({}, finish))
    wants_usage = (body.get("stream_options") or {}).get("include_usage")
    if wants_usage and reply.include_usage:
        prompt = reply.input_tokens + reply.cache_read_tokens
        out.append(
            sse(
                {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": reply.output_tokens,
                        "total_tokens": prompt + reply.output_tokens,
                        "prompt_tokens_details": {"cached_tokens": reply.cache_read_tokens},
                    },
                }
            )
        )
    out.append("data: [DONE]\n\n")
    return out


def render_responses(server: ProviderServer, reply: Reply, body: dict[str, Any]) -> list[str]:
    n = server.next_id()
    seq = itertools.count()
    out: list[str] = []
    model = reply.response_model or body.get("model")

    def ev(kind: str, **data: Any) -> None:
        out.append(sse({"type": kind, "sequence_number": next(seq), **data}, kind))

    response: dict[str, Any] = {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "in_progress",
        "output": [],
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "text": {"format": {"type": "text"}},
        "usage": None,
    }
    ev("response.created", response=response)
    ev("response.in_progress", response=response)
    output: list[dict[str, Any]] = []
    index = 0
    if reply.thinking:
        rid = f"rs_{n}"
        text = _join(reply.thinking)
        item: dict[str, Any] = {"id": rid, "type": "reasoning", "summary": []}
        ev("response.output_item.added", output_index=index, item=item)
        part = {"type": "summary_text", "text": ""}
        ev(
            "response.reasoning_summary_part.added",
            item_id=rid,
            output_index=index,
            summary_index=0,
            part=part,
        )
        for piece in _split(reply.thinking):
            ev(
                "response.reasoning_summary_text.delta",
                item_id=rid,
                output_index=index,
                summary_index=0,
                delta=piece,
            )
        ev(
            "response.reasoning_summary_text.done",
            item_id=rid,
            output_index=index,
            summary_index=0,
            text=text,
        )
        ev(
            "response.reasoning_summary_part.done",
            item_id=rid,
            output_index=index,
            summary_index=0,
            part={"type": "summary_text", "text": text},
        )
        done = {
            "id": rid,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": text}],
            "encrypted_content": sign("enc", f"{rid}:{text}"),
        }
        ev("response.output_item.done", output_index=index, item=done)
        output.append(done)
        index += 1
    if reply.text:
        mid = f"msg_{n}"
        text = _join(reply.text)
        item = {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        ev("response.output_item.added", output_index=index, item=item)
        ev(
            "response.content_part.added",
            item_id=mid,
            output_index=index,
            content_index=0,
            part={"type": "output_text", "text": "", "annotations": []},
        )
        for piece in _split(reply.text):
            ev(
                "response.output_text.delta",
                item_id=mid,
                output_index=index,
                content_index=0,
                delta=piece,
                logprobs=[],
            )
        ev(
            "response.output_text.done",
            item_id=mid,
            output_index=index,
            content_index=0,
            text=text,
            logprobs=[],
        )
        final_part = {"type": "output_text", "text": text, "annotations": []}
        ev(
            "response.content_part.done",
            item_id=mid,
            output_index=index,
            content_index=0,
            part=final_part,
        )
        done = {**item, "status": "completed", "content": [final_part]}
        ev("response.output_item.done", output_index=index, item=done)
        output.append(done)
        index += 1
    for k, call in enumerate(reply.tool_calls):
        fid = f"fc_{n}_{k}"
        text = call.argument_text
        item = {
            "id": fid,
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": "",
            "status": "in_progress",
        }
        ev("response.output_item.added", output_index=index, item=item)
        for j in range(0, len(text), 6):
            ev(
                "response.function_call_arguments.delta",
                item_id=fid,
                output_index=index,
                delta=text[j : j + 6],
            )
        ev("response.function_call_arguments.done", item_id=fid, output_index=index, arguments=text)
        done = {**item, "arguments": text, "status": "completed"}
        ev("response.output_item.done", output_index=index, item=done)
        output.append(done)
        index += 1
    usage = {
        "input_tokens": reply.input_tokens + reply.cache_read_tokens,
        "input_tokens_details": {"cached_tokens": reply.cache_read_tokens},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.cache_read_tokens + reply.output_tokens,
    }
    final = {**response, "output": output, "usage": usage}
    if reply.stop == "length":
        final.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
        ev("response.incomplete", response=final)
    else:
        final["status"] = "completed"
        ev("response.completed", response=final)
    return out


def error_event(path: str) -> str:
    if path.endswith("/messages"):
        return sse(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "error",
        )
    if path.endswith("/responses"):
        return sse(
            {
                "type": "error",
                "code": "server_is_overloaded",
                "message": "The server is overloaded",
                "param": None,
                "sequence_number": 999,
            },
            "error",
        )
    return sse(
        {
            "error": {
                "message": "The server is overloaded",
                "type": "server_error",
                "code": "overloaded",
                "param": None,
            }
        }
    )


def error_body(path: str, error: HttpError) -> dict[str, Any]:
    anthropic_type, openai_code = _DEFAULT_ERROR_TYPES.get(
        error.status, ("api_error", "server_error")
    )
    if path.endswith("/messages"):
        return {
            "type": "error",
            "error": {"type": error.error_type or anthropic_type, "message": error.message},
        }
    return {
        "error": {
            "message": error.message,
            "type": error.error_type or "invalid_request_error",
            "code": openai_code if error.error_type is None else error.error_type,
            "param": None,
        }
    }


# ========================================================================= handler


class _Handler(BaseHTTPRequestHandler):
    provider: ProviderServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _record(self, body: Any) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.provider.requests.append(RecordedRequest(self.command, self.path, headers, body))

    def _route(self) -> str:
        path = self.path.split("?")[0]
        prefix = self.provider.prefix
        return path[len(prefix) :] if prefix and path.startswith(prefix + "/") else path

    def do_GET(self) -> None:
        self._record(None)
        failure = self.provider.models_error
        if self._route().rstrip("/") == "/v1/models" and failure is not None:
            self._send_json(failure.status, {"error": {"message": failure.message}})
        elif self._route().rstrip("/") == "/v1/models":
            info = self.provider.model_info
            payload = {
                "object": "list",
                "data": [
                    {"id": m, "object": "model", "owned_by": "me", **info.get(m, {})}
                    for m in self.provider.models
                ],
            }
            self._send_json(200, payload)
        else:
            self._send_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        self._record(body)
        path = self._route()
        validators = {
            "/v1/messages": validate_anthropic,
            "/v1/chat/completions": validate_completions,
            "/v1/responses": validate_responses,
        }
        validator = validators.get(path)
        if validator is None or not isinstance(body, dict):
            self._send_json(404, {"error": {"message": f"unknown path {path}"}})
            return
        try:
            validator(body)
        except (ValidationFailure, KeyError, TypeError, ValueError, AttributeError) as exc:
            message = (
                f"{type(exc).__name__}: {exc}"
                if not isinstance(exc, ValidationFailure)
                else str(exc)
            )
            self.provider.validation_errors.append(f"{path}: {message}")
            self._send_json(400, error_body(path, HttpError(400, message)))
            return
        reply = self.provider.next_reply(raw.decode("utf-8", "replace"))
        if isinstance(reply, HttpError) and reply.as_events:
            text = f"data: {json.dumps(error_body(path, reply))}\n\ndata: [DONE]\n\n"
            self._send_body(reply.status, text.encode(), "text/event-stream", reply.headers)
            return
        if isinstance(reply, HttpError):
            self._send_json(reply.status, error_body(path, reply), reply.headers)
            return
        if reply.whole_json and path == "/v1/chat/completions":
            answer = {"role": "assistant", "content": "".join(_split(reply.text))}
            choice = {"index": 0, "message": answer, "finish_reason": "stop"}
            self._send_json(200, {"object": "chat.completion", "choices": [choice]})
            return
        renderer = {
            "/v1/messages": render_anthropic,
            "/v1/chat/completions": render_completions,
            "/v1/responses": render_responses,
        }[path]
        self._stream(path, reply, renderer(self.provider, reply, body))

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_body(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_body(
        self, status: int, data: bytes, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _stream(self, path: str, reply: Reply, events: list[str]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        stopping = self.provider._stopping
        try:
            for count, event in enumerate(events):
                if count == reply.hold_after:
                    while not self.provider.release.wait(0.05):
                        pass
                    self._abort_connection()
                    return
                if count == reply.disconnect_after:
                    self._abort_connection()
                    return
                if count == reply.end_after:
                    break
                if count == reply.error_event_after:
                    self._chunk(error_event(path))
                    break
                if count == reply.garbage_after:
                    prefix = "event: content_block_delta\n" if path.endswith("/messages") else ""
                    self._chunk(prefix + "data: {this is not json\n\n")
                if count == reply.stall_after and stopping.wait(reply.stall_s):
                    return
                if reply.delay_s and stopping.wait(reply.delay_s):
                    return
                if reply.noise:
                    self._chunk(": keep-alive comment\n\n")
                    self._chunk(
                        sse({"type": "mystery"}, "mystery_event")
                        if path.endswith(("/messages", "/responses"))
                        else ": another comment\n\n"
                    )
                self._chunk(event)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.provider.connections_closed += 1
        self.close_connection = True

    def _abort_connection(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def wait_for(predicate: Any, timeout: float = 5.0) -> bool:
    """Poll ``predicate`` (for thread-side facts only; async code should await events)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return bool(predicate())


def user(text: str, timestamp: int = 1) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)


async def run_stream(
    model: Model, context: LlmContext, options: StreamOptions | None = None
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    """All events of one stream and its final message."""
    async with stream(model, context, options or StreamOptions(api_key="sk-test")) as events:
        collected = [event async for event in events]
    final = events.final_message
    assert final is not None
    return collected, final
