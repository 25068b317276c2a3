"""Helpers shared by the adapters: SDK clients, keys, and reading SDK objects."""

from __future__ import annotations

import os
import sys
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


def client_kwargs(model: Model, options: StreamOptions) -> dict[str, Any]:
    httpx2 = sys.modules["httpx2"]  # imported by both SDKs
    headers = {**(model.headers or {}), **(options.headers or {})}
    return {
        "api_key": api_key_for(model, options),
        "max_retries": options.max_retries,
        "timeout": httpx2.Timeout(options.timeout_s, connect=options.connect_timeout_s),
        "default_headers": headers or None,
    }


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
