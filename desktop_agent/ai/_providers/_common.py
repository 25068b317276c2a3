"""Helpers shared by the adapters: SDK clients, keys, and reading SDK objects."""

from __future__ import annotations

import os
import ssl
import sys
import threading
from collections.abc import Mapping
from typing import Any

from desktop_agent.ai._events import StreamOptions
from desktop_agent.ai._messages import ContentBlock, ImageContent, TextContent
from desktop_agent.ai._models import Model

_ENV_KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def api_key_for(model: Model, options: StreamOptions) -> str:
    """The key to send: the option, else the provider's environment variable, else a dummy
    (local servers need none; a real provider then answers 401)."""
    if options.api_key:
        return options.api_key
    env = _ENV_KEYS.get(model.provider)
    if env and os.environ.get(env):
        return os.environ[env]
    return "no-api-key"


_ssl_lock = threading.Lock()
_ssl_context: ssl.SSLContext | None = None


def shared_ssl_context() -> ssl.SSLContext:
    """One TLS context for every request: building one loads the CA bundle (~50 ms of C
    code holding the GIL), which each new SDK client would otherwise do again."""
    global _ssl_context
    with _ssl_lock:
        if _ssl_context is None:
            httpx2 = sys.modules["httpx2"]  # imported by both SDKs
            _ssl_context = httpx2.create_ssl_context()
        return _ssl_context


def client_kwargs(model: Model, options: StreamOptions, sdk: Any = None) -> dict[str, Any]:
    """Keyword arguments of an SDK client; with ``sdk``, an HTTP client that reuses the
    shared TLS context (the SDK's own defaults otherwise: limits, redirects, proxies)."""
    httpx2 = sys.modules["httpx2"]  # imported by both SDKs
    headers = {**(model.headers or {}), **(options.headers or {})}
    kwargs: dict[str, Any] = {
        "api_key": api_key_for(model, options),
        "max_retries": options.max_retries,
        "timeout": httpx2.Timeout(options.timeout_s, connect=options.connect_timeout_s),
        "default_headers": headers or None,
    }
    if sdk is not None:
        kwargs["http_client"] = sdk.DefaultAsyncHttpxClient(verify=shared_ssl_context())
    return kwargs


def as_dict(obj: Any) -> dict[str, Any]:
    """An SDK model (or dict) as a plain dict, extra fields included."""
    if isinstance(obj, Mapping):
        return dict(obj)
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        result = to_dict(mode="python", exclude_unset=False)
        if isinstance(result, dict):
            return result
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        result = dump()
        if isinstance(result, dict):
            return result
    return {}


def int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def text_of(blocks: list[ContentBlock] | str) -> str:
    if isinstance(blocks, str):
        return blocks
    return "\n".join(b.text for b in blocks if isinstance(b, TextContent))


def images_of(blocks: list[ContentBlock] | str) -> list[ImageContent]:
    if isinstance(blocks, str):
        return []
    return [b for b in blocks if isinstance(b, ImageContent)]
