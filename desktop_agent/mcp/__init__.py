"""MCP client: configured servers (stdio, Streamable HTTP, SSE), their lifetime and status,
their tools adapted to `desktop_agent.tools.Tool` as ``mcp__<server>__<tool>`` (no Qt).

See ARCHITECTURE.md §1 and issue 20.
"""

from desktop_agent.mcp._config import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_INIT_TIMEOUT,
    KEYCHAIN,
    McpConfig,
    McpConfigError,
    McpServerConfig,
    load_mcp_config,
    parse_mcp_config,
    save_mcp_config,
)
from desktop_agent.mcp._manager import McpManager
from desktop_agent.mcp._names import MAX_NAME, server_key, tool_name
from desktop_agent.mcp._status import ServerStatus, ServerTool
from desktop_agent.mcp._tool import McpArguments, McpTool, progress_text

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_INIT_TIMEOUT",
    "KEYCHAIN",
    "MAX_NAME",
    "McpArguments",
    "McpConfig",
    "McpConfigError",
    "McpManager",
    "McpServerConfig",
    "McpTool",
    "ServerStatus",
    "ServerTool",
    "load_mcp_config",
    "parse_mcp_config",
    "progress_text",
    "save_mcp_config",
    "server_key",
    "tool_name",
]
