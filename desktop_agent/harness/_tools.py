"""Built-in tools as the agent loop drives them: workspace, approval, recorded decisions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from desktop_agent.agent import AgentToolResult, ToolUpdate
from desktop_agent.ai import ToolDefinition
from desktop_agent.harness._redaction import SessionRedaction
from desktop_agent.tools import (
    ApprovalPolicy,
    Tool,
    ToolContext,
    ToolResult,
    Workspace,
    run_tool,
)

Recorder = Callable[[str, dict[str, Any]], Awaitable[None]]


class WorkspaceTool:
    """One `desktop_agent.tools.Tool` bound to a workspace and an approval policy.

    Every approval decision is handed to ``record`` (the harness writes it to the session
    as a custom entry); a denied call becomes an error result the model can read.
    """

    def __init__(
        self,
        tool: Tool[Any],
        *,
        workspace: Workspace,
        policy: ApprovalPolicy | None,
        record: Recorder,
        output_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        redaction: SessionRedaction | None = None,
    ) -> None:
        self.tool = tool
        self._definition = tool.definition()
        self._workspace = workspace
        self._policy = policy
        self._record = record
        self._output_dir = output_dir
        self._env = env
        self._redaction = redaction

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def execution_mode(self) -> Literal["parallel", "sequential"]:
        return self.tool.execution_mode

    def _context(self, on_update: ToolUpdate | None) -> ToolContext:
        def forward(partial: ToolResult) -> None:
            if on_update is not None:
                on_update(AgentToolResult(list(partial.content), partial.details, partial.is_error))

        ctx = ToolContext(workspace=self._workspace, on_update=forward, env=self._env)
        if self._output_dir is not None:
            ctx.output_dir = self._output_dir
        if self._redaction is not None:
            ctx.redactor = self._redaction.redactor
            ctx.redact_shapes = self._redaction.enabled
        return ctx

    async def execute(
        self, call_id: str, arguments: dict[str, Any], on_update: ToolUpdate
    ) -> AgentToolResult:
        ctx = self._context(on_update)
        if self._policy is not None:
            outcome = await self._policy.check(self.tool, self.tool.name, call_id, arguments, ctx)
            await self._record(outcome.record.custom_type, outcome.record.to_data())
            if not outcome.allowed:
                return AgentToolResult(
                    [*ToolResult.error(outcome.message).content], {"approval": "denied"}, True
                )
        result = await run_tool(self.tool, call_id, arguments, ctx)
        blocked = (result.details or {}).get("sandboxBlocked")
        if blocked and self._policy is not None:
            again = await self._policy.check_outside_sandbox(
                self.tool, call_id, arguments, ctx, result.text_content()
            )
            if again is not None:
                await self._record(again.record.custom_type, again.record.to_data())
                if again.allowed:
                    ctx.outside_sandbox = True
                    result = await run_tool(self.tool, call_id, arguments, ctx)
                elif again.said:  # the person's words, after what the sandbox said
                    said = f"The user kept it in the sandbox. They said: {again.said}"
                    result = ToolResult(
                        [*result.content, *ToolResult.text(said).content],
                        result.details,
                        result.is_error,
                    )
        return AgentToolResult(list(result.content), result.details, result.is_error)
