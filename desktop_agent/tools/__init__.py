"""Built-in tools (read, write, edit, bash, ls, grep, find), workspace confinement, approval.

Imports only `desktop_agent.ai` (ARCHITECTURE.md §1). The agent loop drives a `Tool`:
`tool.definition()` for the model, `run_tool(tool, call_id, arguments, ctx)` to validate
and execute (failures become error results; cancellation propagates after clean-up),
and `ApprovalPolicy.check(...)` before running it.
"""

from desktop_agent.tools._approval import (
    APPROVAL_CUSTOM_TYPE,
    DEFAULT_RULES,
    MCP_PREFIX,
    ApprovalAnswer,
    ApprovalCallback,
    ApprovalDecision,
    ApprovalOutcome,
    ApprovalPolicy,
    ApprovalRecord,
    ApprovalRequest,
    Rule,
    build_request,
    server_rule,
)
from desktop_agent.tools._base import (
    CallPreview,
    ExecutionMode,
    ResultBlock,
    Tool,
    ToolContext,
    ToolParams,
    ToolResult,
    UpdateCallback,
    run_tool,
)
from desktop_agent.tools._bash import BashParams, BashTool, default_shell_argv
from desktop_agent.tools._builtin import BUILT_IN_TOOL_NAMES, built_in_tools
from desktop_agent.tools._env import is_secret_variable, scrub_environment
from desktop_agent.tools._errors import PathRefused, ToolError
from desktop_agent.tools._file_tools import (
    EditParams,
    EditTool,
    ReadParams,
    ReadTool,
    WriteParams,
    WriteTool,
    image_mime_type,
)
from desktop_agent.tools._sandbox import (
    Sandbox,
    default_sandbox,
    detect_sandbox,
    seatbelt_profile,
)
from desktop_agent.tools._search_tools import (
    FindParams,
    FindTool,
    GrepParams,
    GrepTool,
    LsParams,
    LsTool,
    glob_to_regex,
)
from desktop_agent.tools._workspace import Workspace

__all__ = [
    "APPROVAL_CUSTOM_TYPE",
    "BUILT_IN_TOOL_NAMES",
    "DEFAULT_RULES",
    "MCP_PREFIX",
    "ApprovalAnswer",
    "ApprovalCallback",
    "ApprovalDecision",
    "ApprovalOutcome",
    "ApprovalPolicy",
    "ApprovalRecord",
    "ApprovalRequest",
    "BashParams",
    "BashTool",
    "CallPreview",
    "EditParams",
    "EditTool",
    "ExecutionMode",
    "FindParams",
    "FindTool",
    "GrepParams",
    "GrepTool",
    "LsParams",
    "LsTool",
    "PathRefused",
    "ReadParams",
    "ReadTool",
    "ResultBlock",
    "Rule",
    "Sandbox",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolParams",
    "ToolResult",
    "UpdateCallback",
    "Workspace",
    "WriteParams",
    "WriteTool",
    "build_request",
    "built_in_tools",
    "default_sandbox",
    "default_shell_argv",
    "detect_sandbox",
    "glob_to_regex",
    "image_mime_type",
    "is_secret_variable",
    "run_tool",
    "scrub_environment",
    "seatbelt_profile",
    "server_rule",
]
