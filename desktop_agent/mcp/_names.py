"""Tool names the providers accept: ``mcp__<server>__<tool>``, ``[A-Za-z0-9_-]``, 64 at most.

OpenAI and Anthropic both refuse tool names outside ``^[a-zA-Z0-9_-]{1,64}$``. A server or
tool name with other characters has them replaced by ``_``; ``__`` inside a server name
is folded to ``_`` so that the second ``__`` always ends the server part (approval rules
``mcp__<server>`` rely on it). A name longer than 64 is cut and ends with 8 hex digits of
a hash of the whole name, so two long names stay distinct.
"""

from __future__ import annotations

import hashlib
import re

from desktop_agent.tools import MCP_PREFIX as PREFIX

MAX_NAME = 64
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def server_key(server: str) -> str:
    """The server's part of its tool names (also the ``mcp__<server>`` approval rule)."""
    key = _BAD.sub("_", server)
    while "__" in key:
        key = key.replace("__", "_")
    return key.strip("_") or "server"


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, sanitized and at most `MAX_NAME` characters."""
    name = f"{PREFIX}{server_key(server)}__{_BAD.sub('_', tool) or 'tool'}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"
