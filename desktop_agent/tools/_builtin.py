"""The list of built-in tools."""

from __future__ import annotations

from typing import Any

from desktop_agent.tools._base import Tool
from desktop_agent.tools._bash import BashTool
from desktop_agent.tools._file_tools import EditTool, ReadTool, WriteTool
from desktop_agent.tools._search_tools import FindTool, GrepTool, LsTool

BUILT_IN_TOOL_NAMES = ("read", "write", "edit", "bash", "ls", "grep", "find")


def built_in_tools(*, bash: BashTool | None = None) -> list[Tool[Any]]:
    """Fresh instances of the built-in tools, in `BUILT_IN_TOOL_NAMES` order.

    Tools hold no workspace: it comes with each call's `ToolContext`.
    """
    return [
        ReadTool(),
        WriteTool(),
        EditTool(),
        bash or BashTool(),
        LsTool(),
        GrepTool(),
        FindTool(),
    ]
