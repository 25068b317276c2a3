"""What an OpenAI-compatible request body (the wire) carries: its system prompt and its
last user text."""

from __future__ import annotations

from typing import Any


def _text(content: Any) -> str:
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def system_text(body: dict[str, Any]) -> str:
    first = body["messages"][0]
    assert first["role"] in ("system", "developer"), first
    return _text(first["content"])


def last_user_text(body: dict[str, Any]) -> str:
    return _text([m for m in body["messages"] if m["role"] == "user"][-1]["content"])


def user_texts(body: dict[str, Any]) -> list[str]:
    """User-role texts of an OpenAI-compatible request body (the wire)."""
    texts = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.append("".join(p.get("text", "") for p in content if p.get("type") == "text"))
    return texts
