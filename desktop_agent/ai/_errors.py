"""Machine-readable classification of provider failures.

Every failure of a stream ends as an assistant message with ``stopReason`` ``error`` (or
``aborted``). The classification is stored in the message's ``diagnostics`` list as an entry
``{"type": "provider_error", "timestamp", "error": {"name", "message", "code"?}, "details":
{"kind", "retryable", "overflow", "retryAfterMs", "status", "errorType", "provider", "api"}}``;
`classify_error` reads it back (or, for messages written by other programs, falls back to
matching the error text).
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias, cast

from desktop_agent.ai._messages import AssistantMessage

ErrorKind: TypeAlias = Literal[
    "none",
    "aborted",
    "authentication",
    "permission",
    "rate_limit",
    "overloaded",
    "server",
    "network",
    "timeout",
    "disconnected",
    "malformed_stream",
    "context_overflow",
    "invalid_request",
    "not_found",
    "refusal",
    "unknown",
]

DIAGNOSTIC_TYPE = "provider_error"

_RETRYABLE_KINDS: frozenset[str] = frozenset(
    {"rate_limit", "overloaded", "server", "network", "timeout", "disconnected", "malformed_stream"}
)

_OVERFLOW_PATTERNS = re.compile(
    r"prompt is too long|exceeds the context window|context[_ ]length[_ ]exceeded"
    r"|maximum context length|context window|too many tokens|request_too_large"
    r"|input is too long|reduce the length of the messages|exceeds the maximum",
    re.IGNORECASE,
)
_RATE_LIMIT_PATTERNS = re.compile(r"rate.?limit|too many requests|\b429\b", re.IGNORECASE)
_TRANSIENT_PATTERNS = re.compile(
    r"overloaded|service unavailable|server error|internal error|\b50[0234]\b|\b529\b"
    r"|network|connection|socket hang up|fetch failed|timed? ?out|timeout|terminated"
    r"|premature|ended before|incomplete|retry delay|disconnect",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """What went wrong, as data the harness can act on."""

    kind: ErrorKind
    message: str
    retryable: bool = False
    overflow: bool = False
    retry_after_ms: int | None = None
    status: int | None = None
    error_type: str | None = None
    """The provider's own error type or code (e.g. ``overloaded_error``)."""
    provider: str | None = None
    api: str | None = None
    name: str | None = None
    """Name of the exception class that reported the failure, if any."""
    url: str | None = None
    """The base URL of the server that failed (so a message can name it)."""

    def to_diagnostic(self, timestamp: int | None = None) -> dict[str, Any]:
        error: dict[str, Any] = {"name": self.name or "ProviderError", "message": self.message}
        if self.error_type:
            error["code"] = self.error_type
        return {
            "type": DIAGNOSTIC_TYPE,
            "timestamp": timestamp if timestamp is not None else int(time.time() * 1000),
            "error": error,
            "details": {
                "kind": self.kind,
                "retryable": self.retryable,
                "overflow": self.overflow,
                "retryAfterMs": self.retry_after_ms,
                "status": self.status,
                "errorType": self.error_type,
                "provider": self.provider,
                "api": self.api,
                "url": self.url,
            },
        }

    @classmethod
    def from_diagnostic(cls, entry: Mapping[str, Any]) -> ErrorInfo | None:
        details = entry.get("details")
        error = entry.get("error")
        if entry.get("type") != DIAGNOSTIC_TYPE or not isinstance(details, Mapping):
            return None
        message = error.get("message") if isinstance(error, Mapping) else None
        raw_kind = details.get("kind")
        kind = cast(ErrorKind, raw_kind if raw_kind in _ALL_KINDS else "unknown")
        retry_after = details.get("retryAfterMs")
        status = details.get("status")
        return cls(
            kind=kind,
            message=str(message or ""),
            retryable=bool(details.get("retryable")),
            overflow=bool(details.get("overflow")),
            retry_after_ms=int(retry_after) if isinstance(retry_after, int | float) else None,
            status=int(status) if isinstance(status, int) else None,
            error_type=_str_or_none(details.get("errorType")),
            provider=_str_or_none(details.get("provider")),
            api=_str_or_none(details.get("api")),
            url=_str_or_none(details.get("url")),
            name=_str_or_none(error.get("name")) if isinstance(error, Mapping) else None,
        )


_ALL_KINDS: frozenset[str] = frozenset(ErrorKind.__args__)  # type: ignore[attr-defined]


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class ProviderError(Exception):
    """Raised inside a provider adapter for a failure reported in the stream itself."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


def _kind_from_text(text: str) -> tuple[ErrorKind, bool]:
    """(kind, overflow) guessed from an error text."""
    if _OVERFLOW_PATTERNS.search(text) and not _RATE_LIMIT_PATTERNS.search(text):
        return "context_overflow", True
    if _RATE_LIMIT_PATTERNS.search(text):
        return "rate_limit", False
    if re.search(r"overloaded|\b529\b", text, re.IGNORECASE):
        return "overloaded", False
    if re.search(r"timed? ?out|timeout", text, re.IGNORECASE):
        return "timeout", False
    if re.search(r"\b401\b|unauthori[sz]ed|authentication|invalid.{0,10}api.?key", text, re.I):
        return "authentication", False
    if _TRANSIENT_PATTERNS.search(text):
        return "server", False
    return "unknown", False


def classify_error(message: AssistantMessage, *, context_window: int | None = None) -> ErrorInfo:
    """Classification of a finished assistant message.

    ``kind`` is ``none`` for a successful message (unless ``context_window`` is given and the
    reported input exceeds it: a silent overflow), ``aborted`` for an aborted one, else the
    classification `stream` stored in ``diagnostics`` or, for messages from elsewhere, one
    guessed from ``errorMessage`` with Pi's transient-error patterns.
    """
    base: dict[str, Any] = {"provider": message.provider, "api": message.api}
    if message.stop_reason == "aborted":
        return ErrorInfo(kind="aborted", message=message.error_message or "aborted", **base)
    if message.stop_reason != "error":
        if context_window and message.usage.input + message.usage.cache_read > context_window:
            return ErrorInfo(
                kind="context_overflow",
                message="the input exceeded the context window",
                overflow=True,
                **base,
            )
        return ErrorInfo(kind="none", message="", **base)
    for entry in reversed(message.diagnostics or []):
        if isinstance(entry, Mapping):
            info = ErrorInfo.from_diagnostic(entry)
            if info is not None:
                return info
    text = message.error_message or ""
    kind, overflow = _kind_from_text(text)
    return ErrorInfo(
        kind=kind,
        message=text,
        retryable=kind in _RETRYABLE_KINDS,
        overflow=overflow,
        **base,
    )


# ------------------------------------------------------------------- from exceptions


def parse_retry_after(headers: Mapping[str, str] | Any) -> int | None:
    """Milliseconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date)."""
    if headers is None:
        return None
    try:
        raw_ms = headers.get("retry-after-ms")
        if raw_ms:
            return max(0, int(float(raw_ms)))
        raw = headers.get("retry-after")
    except (AttributeError, ValueError):
        return None
    if not raw:
        return None
    try:
        return max(0, int(float(raw) * 1000))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0, int((when.timestamp() - time.time()) * 1000))


def _body_error(body: Any) -> tuple[str | None, str | None, int | None]:
    """(error type or code, message, HTTP status named by the body) of an error body."""
    if isinstance(body, bytes | bytearray):
        body = bytes(body).decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            body = json.loads(_first_event(body))
        except ValueError:
            text = body.strip()
            return None, (text[:_MAX_BODY_TEXT] or None), None
    if not isinstance(body, Mapping):
        return None, None, None
    err = body.get("error", body)
    if isinstance(err, str):
        return None, err, None
    if not isinstance(err, Mapping):
        return None, None, None
    etype = err.get("type") or err.get("code")
    code = err.get("code")
    status = _status_of(code) or _status_of(err.get("status")) or _status_of(body.get("status"))
    if (
        isinstance(code, str)
        and not code.isdigit()
        and etype in (None, "invalid_request_error", "server_error")
    ):
        etype = code
    if isinstance(etype, str) and etype.isdigit():
        etype = None
    msg = err.get("message")
    return (
        (etype if isinstance(etype, str) else None),
        (msg if isinstance(msg, str) else None),
        status,
    )


_MAX_BODY_TEXT = 500


def _answer_text(body: Any) -> str | None:
    """The text of a whole (not streamed) answer body of any of the three APIs."""
    if not isinstance(body, Mapping) or "error" in body:
        return None
    texts: list[str] = []
    for choice in body.get("choices") or []:  # Chat Completions
        content = choice.get("message", {}).get("content") if isinstance(choice, dict) else None
        if isinstance(content, str):
            texts.append(content)
    blocks = list(body.get("content") or [])  # Anthropic Messages
    for item in body.get("output") or []:  # Responses
        if isinstance(item, dict):
            blocks.extend(item.get("content") or [])
    texts.extend(
        b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
    )
    return "\n".join(texts) if texts else None


def _first_event(text: str) -> str:
    """The first ``data:`` payload of an error sent as an event stream (LiteLLM answers
    a failed streaming request so: "data: {…}", "data: [DONE]"), else ``text``."""
    if not text.lstrip().startswith(("data:", "event:")):
        return text
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            return line[5:].strip()
    return text


def _status_of(value: Any) -> int | None:
    """An HTTP error status given as a number or a numeric string (LiteLLM: "400")."""
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
        return value
    return None


_STATUS_ECHO = re.compile(r"^\s*(?:error code:\s*)?(\d{3})\b\s*[-:]?\s*", re.IGNORECASE)


def _without_status(text: str, status: int) -> str:
    """``text`` without a leading echo of ``status`` ("Error code: 400 - ", "400: ")."""
    while (m := _STATUS_ECHO.match(text)) and int(m.group(1)) == status:
        text = text[m.end() :]
    return text


def _kind_from_status(status: int) -> ErrorKind:
    if status == 401:
        return "authentication"
    if status == 403:
        return "permission"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status == 413:
        return "context_overflow"
    if status == 429:
        return "rate_limit"
    if status == 529:
        return "overloaded"
    if status >= 500:
        return "server"
    return "invalid_request"


_TYPE_KINDS: dict[str, ErrorKind] = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limit",
    "rate_limit_exceeded": "rate_limit",
    "insufficient_quota": "rate_limit",
    "api_error": "server",
    "server_error": "server",
    "authentication_error": "authentication",
    "invalid_api_key": "authentication",
    "permission_error": "permission",
    "not_found_error": "not_found",
    "model_not_found": "not_found",
    "request_too_large": "context_overflow",
    "context_length_exceeded": "context_overflow",
    "timeout_error": "timeout",
}


def _classify_status(
    status: int | None, error_type: str | None, body_message: str | None
) -> ErrorKind:
    """The kind of an HTTP error: by status first; the body's error type only refines it
    within the same class, so a 4xx is never retried (whatever its body says, e.g. a 401
    whose type is ``api_error``) and a 5xx always is."""
    by_type = _TYPE_KINDS.get(error_type or "")
    if status is None:
        if by_type is not None:
            return by_type
        return _kind_from_text(f"{error_type} {body_message}")[0]
    kind = _kind_from_status(status)
    if (
        kind in ("invalid_request", "server")
        and by_type is not None
        and (by_type in _RETRYABLE_KINDS) == (kind in _RETRYABLE_KINDS)
    ):
        return by_type
    return kind


def classify_exception(exc: BaseException, *, provider: str, api: str) -> ErrorInfo:
    """Classification of an exception raised by an SDK, the HTTP stack or a parser."""
    if isinstance(exc, ProviderError):
        return replace(exc.info, provider=exc.info.provider or provider, api=api)
    name = type(exc).__name__
    module = type(exc).__module__ or ""
    base: dict[str, Any] = {"provider": provider, "api": api, "name": name}
    raw_status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    error_type, body_message, body_status = _body_error(body)
    status = raw_status if isinstance(raw_status, int) and raw_status != 200 else body_status
    message = str(exc) or name
    whole = _answer_text(body) if raw_status == 200 else None
    if whole is not None:  # L7: it was shown as a cut Python dict, its text lost
        return ErrorInfo(
            kind="invalid_request",
            message=(
                "The server sent its whole answer at once instead of streaming it (is"
                f" streaming turned off for it?). Its answer: {whole[: _MAX_BODY_TEXT * 8]}"
            ),
            **base,
        )
    if status is not None or error_type is not None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        retry_after = parse_retry_after(headers) if headers is not None else None
        kind = _classify_status(status, error_type, body_message)
        text = f"{error_type or ''} {body_message or message}"
        overflow = kind == "context_overflow" or (
            kind == "invalid_request" and _kind_from_text(text)[1]
        )
        if overflow:
            kind = "context_overflow"
        readable = body_message or message
        if status is not None:
            readable = _without_status(readable, status)
        if error_type and error_type not in readable:
            readable = f"{error_type}: {readable}" if readable else error_type
        prefix = f"{status} " if status is not None else ""
        return ErrorInfo(
            kind=kind,
            message=f"{prefix}{readable}".strip(),
            retryable=kind in _RETRYABLE_KINDS,
            overflow=overflow,
            retry_after_ms=retry_after,
            status=status,
            error_type=error_type,
            **base,
        )
    chain: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and link not in chain and len(chain) < 8:
        chain.append(link)
        link = link.__cause__ or link.__context__
    lowered = " ".join(f"{type(e).__name__} {e}" for e in chain).lower()
    if isinstance(exc, TimeoutError) or "timeout" in lowered or "timed out" in lowered:
        return ErrorInfo(
            kind="timeout", message=f"Request timed out ({message})", retryable=True, **base
        )
    if isinstance(exc, ValueError) and not module.startswith(("httpx", "httpcore", "h11")):
        # json.JSONDecodeError and friends: the stream carried something that is not JSON.
        return ErrorInfo(
            kind="malformed_stream",
            message=f"Malformed response stream: {message}",
            retryable=True,
            **base,
        )
    if (
        "incomplete" in lowered
        or "peer closed" in lowered
        or "remoteprotocolerror" in lowered
        or "readerror" in lowered
        or "disconnect" in lowered
    ):
        return ErrorInfo(
            kind="disconnected",
            message=f"The connection closed before the response was complete ({message})",
            retryable=True,
            **base,
        )
    if (
        "connect" in lowered
        or isinstance(exc, OSError)
        or module.startswith(("httpx", "httpcore", "h11", "anyio"))
    ):
        cause = exc.__cause__ or exc.__context__
        detail = message.rstrip(". ")
        if cause is not None and str(cause) and str(cause) not in detail:
            detail = f"{detail} ({cause})"  # not "Connection error.: All connection…"
        return ErrorInfo(kind="network", message=f"Network error: {detail}", retryable=True, **base)
    return ErrorInfo(kind="unknown", message=f"{name}: {message}", **base)


def info_from_error_body(body: Any, default_message: str) -> ErrorInfo:
    """Classification of an error object sent inside a stream (no HTTP status)."""
    error_type, message, status = _body_error(body)
    kind: ErrorKind = "server"
    if status is not None:
        kind = _classify_status(status, error_type, message)
    elif error_type in _TYPE_KINDS:
        kind = _TYPE_KINDS[error_type]
    elif error_type or message:
        guessed = _kind_from_text(f"{error_type} {message}")[0]
        kind = guessed if guessed != "unknown" else "server"
    if message and status is not None:
        message = _without_status(message, status)
    return ErrorInfo(
        kind=kind,
        message=f"{error_type}: {message}"
        if error_type and message
        else message or default_message,
        retryable=kind in _RETRYABLE_KINDS,
        overflow=kind == "context_overflow",
        status=status,
        error_type=error_type,
    )
