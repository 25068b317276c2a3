"""``mcp.json``: the servers a person configured, in the common ``mcpServers`` format.

The format of Claude Desktop, Cursor and Pi, so a block can be pasted from any of them::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "pkg"], "env": {"TOKEN": "..."}},
        "tracker": {"url": "https://host/mcp", "headers": {"Authorization": "Bearer ..."}}
    }}

A server with ``command`` runs over stdio; one with ``url`` over Streamable HTTP, or over
the legacy SSE transport with ``"type": "sse"`` (or a URL ending in ``/sse``). Our own
keys beside them: ``disabled`` (Cursor's and Cline's spelling), ``initTimeout`` (seconds
to finish ``initialize``, 30), ``timeout`` (seconds a call may take, 600) and
``allowedTools`` (only these tools are offered: for servers with hundreds of tools).

A file that cannot be read or parsed gives `McpConfigError` with a sentence saying what
and where; one bad server is left out with a problem line, the others still load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from desktop_agent.utils import is_secret_variable
from desktop_agent.utils.atomic import atomic_write

Transport = Literal["stdio", "http", "sse"]
DEFAULT_INIT_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 600.0
KEYCHAIN = "${keychain}"
"""A value of ``env`` or ``headers`` kept in the system keychain instead of the file."""
_SECRET_HEADERS = frozenset(
    ("authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-auth-token")
)


class McpConfigError(Exception):
    """``mcp.json`` (or an imported file) could not be read: the message says why."""


class McpServerConfig(BaseModel):
    """One entry of ``mcpServers``. Unknown keys are kept (other apps' settings)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    type: str | None = None
    disabled: bool = False
    init_timeout: float = Field(DEFAULT_INIT_TIMEOUT, alias="initTimeout", gt=0)
    timeout: float = Field(DEFAULT_CALL_TIMEOUT, gt=0)
    allowed_tools: list[str] | None = Field(None, alias="allowedTools")

    @model_validator(mode="after")
    def _command_or_url(self) -> McpServerConfig:
        if not self.command and not self.url:
            raise ValueError("needs a 'command' (stdio) or a 'url' (HTTP)")
        if self.command and self.url:
            raise ValueError("has both 'command' and 'url'; keep one")
        return self

    @property
    def transport(self) -> Transport:
        if self.command:
            return "stdio"
        kind = (self.type or "").lower()
        if kind == "sse" or (not kind and (self.url or "").rstrip("/").endswith("/sse")):
            return "sse"
        return "http"

    def secrets(self) -> list[str]:
        """The secret values of ``env`` and ``headers`` (keys, tokens, passwords, any
        ``Authorization``); plain settings such as a log level or a folder are left out."""
        values = [v for _where, _name, v in self.secret_fields()]
        for name, value in self.headers.items():
            if self.is_secret("headers", name, value):
                # "Bearer abc": the token alone is the secret too.
                scheme, _, token = value.strip().partition(" ")
                if token and scheme.isalpha():
                    values.append(token.strip())
        return [v for v in values if v and KEYCHAIN not in v]

    @staticmethod
    def is_secret(where: Literal["env", "headers"], name: str, value: str) -> bool:
        if where == "headers" and name.lower() in _SECRET_HEADERS:
            return True
        return is_secret_variable(name, value)

    def secret_fields(self) -> list[tuple[Literal["env", "headers"], str, str]]:
        """(``env`` or ``headers``, name, value) of every secret value."""
        fields: list[tuple[Literal["env", "headers"], str, str]] = [
            ("env", n, v) for n, v in self.env.items() if self.is_secret("env", n, v)
        ]
        fields += [
            ("headers", n, v) for n, v in self.headers.items() if self.is_secret("headers", n, v)
        ]
        return fields

    def to_json(self) -> dict[str, Any]:
        """The entry as written to ``mcp.json`` (defaults left out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=True)


class McpConfig(BaseModel):
    """The whole file: servers by name, and the lines about entries left out."""

    servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    problems: list[str] = Field(default_factory=list)

    def enabled(self) -> dict[str, McpServerConfig]:
        return {name: s for name, s in self.servers.items() if not s.disabled}

    def secrets(self) -> list[str]:
        return [v for s in self.servers.values() for v in s.secrets()]

    def to_json(self) -> dict[str, Any]:
        return {"mcpServers": {name: s.to_json() for name, s in self.servers.items()}}


def parse_mcp_config(data: Any, where: str) -> McpConfig:
    """The servers of a parsed ``mcp.json`` (or Claude Desktop / Claude Code file)."""
    if not isinstance(data, dict):
        raise McpConfigError(f"{where} is not a JSON object.")
    servers = data.get("mcpServers", data.get("servers"))
    if servers is None:
        raise McpConfigError(f'{where} has no "mcpServers" object.')
    if not isinstance(servers, dict):
        raise McpConfigError(f'"mcpServers" in {where} is not an object of servers by name.')
    config = McpConfig()
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            config.problems.append(f"{name}: not an object; left out")
            continue
        try:
            config.servers[str(name)] = McpServerConfig.model_validate(entry)
        except ValidationError as exc:
            reasons = "; ".join(_reason(e) for e in exc.errors())
            config.problems.append(f"{name}: {reasons}; left out")
    return config


def _reason(error: Any) -> str:
    where = ".".join(str(p) for p in error.get("loc", ()))
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def load_mcp_config(path: Path) -> McpConfig:
    """The servers of ``path``; a missing file is no servers. Raises `McpConfigError`."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return McpConfig()
    except OSError as exc:
        raise McpConfigError(f"Could not read {path}: {exc.strerror or exc}.") from exc
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise McpConfigError(f"{path} is not valid JSON ({exc}).") from exc
    return parse_mcp_config(data, str(path))


def save_mcp_config(path: Path, config: McpConfig) -> None:
    """Write ``config`` to ``path`` atomically (the old file survives a failure)."""
    text = json.dumps(config.to_json(), indent=2, ensure_ascii=False) + "\n"
    atomic_write(Path(path), text.encode("utf-8"))
