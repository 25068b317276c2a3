"""The public surface: exports, tool definitions, run_tool's error handling."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import desktop_agent.tools as tools_pkg
from desktop_agent.ai import ToolDefinition
from desktop_agent.tools import (
    BUILT_IN_TOOL_NAMES,
    Tool,
    ToolContext,
    ToolError,
    ToolParams,
    ToolResult,
    built_in_tools,
    run_tool,
    scrub_environment,
)
from tests.helpers.sandbox import Sandbox


def test_all_lists_exactly_the_public_names() -> None:
    public = {n for n in dir(tools_pkg) if not n.startswith("_")}
    assert set(tools_pkg.__all__) == public


def test_built_in_tools_have_definitions_and_modes() -> None:
    tools = built_in_tools()
    assert tuple(t.name for t in tools) == BUILT_IN_TOOL_NAMES
    for tool in tools:
        definition = tool.definition()
        assert isinstance(definition, ToolDefinition)
        schema = definition.json_schema()
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert tool.description
        assert tool.execution_mode in ("parallel", "sequential")
    needs = {t.name for t in tools if t.needs_approval}
    assert needs == {"bash", "write", "edit"}
    edit_schema = next(t for t in tools if t.name == "edit").json_schema()
    assert edit_schema["required"] == ["path", "old_text", "new_text"]


class _Params(ToolParams):
    mode: str


class _Boom(Tool[_Params]):
    name = "boom"
    label = "Boom"
    description = "fails in several ways"
    parameters = _Params

    async def execute(self, call_id: str, args: _Params, ctx: ToolContext) -> ToolResult:
        await ctx.update(ToolResult.text("partial"))
        if args.mode == "tool":
            raise ToolError("expected failure")
        if args.mode == "os":
            raise FileNotFoundError(2, "No such file or directory", "/x")
        if args.mode == "bug":
            raise KeyError("bug")
        if args.mode == "cancel":
            raise asyncio.CancelledError
        return ToolResult.text("fine")


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("mode", "text"),
    [
        ("tool", "expected failure"),
        ("os", "No such file or directory: /x"),
        ("bug", "boom failed: KeyError: 'bug'"),
    ],
)
async def test_run_tool_turns_failures_into_error_results(
    sandbox: Sandbox, mode: str, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    result = await run_tool(_Boom(), "c", {"mode": mode}, sandbox.ctx())
    assert result.is_error
    assert result.text_content() == text


@pytest.mark.asyncio
async def test_run_tool_lets_cancellation_through_and_survives_bad_listeners(
    sandbox: Sandbox,
) -> None:
    def broken(_: ToolResult) -> None:
        raise RuntimeError("listener bug")

    ctx = ToolContext(workspace=sandbox.workspace, on_update=broken)
    ok = await run_tool(_Boom(), "c", {"mode": "fine"}, ctx)
    assert ok.text_content() == "fine" and not ok.is_error
    with pytest.raises(asyncio.CancelledError):
        await run_tool(_Boom(), "c", {"mode": "cancel"}, ctx)
    invalid: dict[str, Any] = {"mode": 3, "extra": True}
    bad = await run_tool(_Boom(), "c", invalid, ctx)
    assert bad.is_error and bad.text_content().startswith("Invalid arguments: mode:")


def test_scrub_environment_rules() -> None:
    env = {
        "PATH": "/bin",
        "HOME": "/home/u",
        "OPENAI_API_KEY": "x",
        "SOME_TOKEN": "x",
        "db_password": "x",
        "AWS_ACCESS_KEY_ID_HOLDER": "AKIAABCDEFGHIJKLMNOP",
        "TOKENIZERS_PARALLELISM": "false",
    }
    clean = scrub_environment(env)
    assert clean["PATH"] == "/bin" and clean["HOME"] == "/home/u"
    assert clean["TOKENIZERS_PARALLELISM"] == "false"
    assert clean["PAGER"] == "cat"
    for gone in ("OPENAI_API_KEY", "SOME_TOKEN", "db_password", "AWS_ACCESS_KEY_ID_HOLDER"):
        assert gone not in clean
