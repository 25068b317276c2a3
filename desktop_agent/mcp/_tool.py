"""A tool of an MCP server as an ordinary `desktop_agent.tools.Tool`.

The model sees ``mcp__<server>__<tool>`` with the server's own description and its raw
JSON input schema (the server validates the arguments). Approval asks by default
(``needs_approval``); the prompt names the server and the tool and shows the arguments.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

from pydantic import BaseModel, Field

from desktop_agent.ai import ToolDefinition
from desktop_agent.mcp._status import ProgressSink
from desktop_agent.tools import CallPreview, Tool, ToolContext, ToolResult

CallFn: TypeAlias = Callable[[str, str, dict[str, Any], ProgressSink], Awaitable[ToolResult]]
"""(server, tool, arguments, progress) -> result: the manager's call on its worker loop."""

MAX_DESCRIPTION = 2000


class McpArguments(BaseModel):
    """The arguments as given (the server checks them against its schema)."""

    values: dict[str, Any] = Field(default_factory=dict)


def _schema(raw: Mapping[str, Any]) -> dict[str, Any]:
    schema = {k: v for k, v in raw.items() if k not in ("$schema", "title")}
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def progress_text(done: float, total: float | None, message: str | None) -> str:
    amount = f"{done:g}/{total:g}" if total else f"{done:g}"
    return f"{amount} {message}".strip() if message else amount


class McpTool(Tool[McpArguments]):
    """One tool of one server."""

    parameters = McpArguments
    needs_approval = True

    def __init__(
        self,
        *,
        name: str,
        server: str,
        tool: str,
        description: str,
        input_schema: Mapping[str, Any],
        call: CallFn,
    ) -> None:
        self.name = name
        self.server = server
        self.tool = tool
        self.label = f"{server} › {tool}"
        text = " ".join(description.split()) if description else ""
        if len(text) > MAX_DESCRIPTION:
            text = text[: MAX_DESCRIPTION - 1] + "…"
        self.description = text or f"The tool '{tool}' of the MCP server '{server}'."
        self.input_schema = _schema(input_schema)
        self._call = call

    def __repr__(self) -> str:
        return f"McpTool({self.name!r})"

    def definition(self) -> ToolDefinition:
        return ToolDefinition(
            name=self.name, description=self.description, parameters=self.input_schema
        )

    def parse_arguments(self, arguments: Mapping[str, Any]) -> McpArguments:
        return McpArguments(values=dict(arguments))

    def preview(self, args: McpArguments, ctx: ToolContext) -> CallPreview:
        shown = json.dumps(args.values, ensure_ascii=False, indent=2)
        if len(shown) > 4000:
            shown = shown[:3999] + "…"
        return CallPreview(summary=f"MCP server '{self.server}', tool '{self.tool}'\n{shown}")

    async def execute(self, call_id: str, args: McpArguments, ctx: ToolContext) -> ToolResult:
        pending: list[asyncio.Future[Any]] = []

        def progress(done: float, total: float | None, message: str | None) -> None:
            if ctx.on_update is None:
                return
            outcome = ctx.on_update(ToolResult.text(progress_text(done, total, message)))
            if inspect.isawaitable(outcome):
                pending.append(asyncio.ensure_future(outcome))

        try:
            return await self._call(self.server, self.tool, args.values, progress)
        finally:
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
