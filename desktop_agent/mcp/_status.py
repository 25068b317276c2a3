"""What the caller's loop knows of a server (no MCP SDK here: it loads on the MCP thread)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

State: TypeAlias = Literal["starting", "ready", "failed", "stopped"]
ProgressSink: TypeAlias = Callable[[float, float | None, str | None], None]


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What Settings and the servers menu show for one server."""

    name: str
    state: State
    tools: int = 0
    detail: str = ""
    """Why it failed (the error and the last lines of its stderr), or ``disabled``."""
    transport: str = "stdio"


@dataclass(frozen=True, slots=True)
class ServerTool:
    """One tool as the server listed it."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)


class ServerGone(Exception):
    """The server is not connected, or its connection ended during the call."""


class ServerRefused(Exception):
    """The server answered the call with an MCP error (its message is ``str()``)."""
