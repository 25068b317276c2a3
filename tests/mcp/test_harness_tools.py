"""The harness offers the MCP tools of ready servers at every request, names them in the
system prompt like the built-in ones, runs them under the approval rules, and stops
offering them when their server stops."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from desktop_agent.ai import ToolResultMessage
from desktop_agent.checkpoints import CHECKPOINT_CUSTOM_TYPE, CheckpointStore
from desktop_agent.harness import AgentHarness
from desktop_agent.mcp import McpConfig, McpManager
from desktop_agent.prompt import ProjectPrompt
from desktop_agent.session import CustomEntry, InMemorySessionRepo, JsonlSessionRepo, MessageEntry
from desktop_agent.tools import ApprovalPolicy, Workspace
from tests.helpers.git_repo import make_user_repo
from tests.helpers.mcp_servers import stdio_server, until
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec
from tests.helpers.wire import system_text

pytestmark = pytest.mark.slow


def tool_names(body: dict[str, object]) -> list[str]:
    tools = body.get("tools") or []
    assert isinstance(tools, list)
    return [t["function"]["name"] for t in tools]


@pytest_asyncio.fixture
async def manager() -> AsyncIterator[McpManager]:
    """The test server as ``srv``, only its ``echo`` offered, ready."""
    manager = McpManager(McpConfig(servers={"srv": stdio_server(allowedTools=["echo"])}))
    manager.start()
    try:
        await until(manager, "srv", "ready")
        yield manager
    finally:
        await manager.close()


@pytest.mark.asyncio
async def test_mcp_tools_reach_the_request_and_the_prompt_while_their_server_is_ready(
    tmp_path: Path, manager: McpManager
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    session = await InMemorySessionRepo().create(cwd=str(folder))
    with ProviderServer() as server:
        harness = AgentHarness(
            session=session,
            model=server.model("openai-completions"),
            system_prompt=ProjectPrompt(str(folder)).system_prompt,
            get_api_key=lambda _m: "local",
            workspace=Workspace(folder),
            approval_policy=ApprovalPolicy(rules={"mcp__srv": "allow"}),
            more_tools=manager.tools,
        )
        server.script(
            Reply(tool_calls=[ToolCallSpec("c1", "mcp__srv__echo", {"text": "hi"})]),
            Reply(text="done"),
        )
        await harness.prompt("use it")
        await manager.close()  # the server stops: its tools are not offered any more
        server.script(Reply(text="without"))
        await harness.prompt("again")
        first, second, third = (r.body for r in server.requests if r.method == "POST")
    assert tool_names(first) == ["mcp__srv__echo"]
    assert "- mcp__srv__echo: Echo the text back." in system_text(first)
    assert "echo: hi" in json.dumps(second["messages"])
    assert tool_names(third) == []
    assert "mcp__srv__echo" not in system_text(third)
    context = await session.build_context()
    results = [m for m in context.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_name, r.is_error) for r in results] == [("mcp__srv__echo", False)]


@pytest.mark.asyncio
async def test_with_checkpoints_on_the_folder_is_snapshotted_before_an_mcp_tool_runs(
    tmp_path: Path, manager: McpManager
) -> None:
    project = make_user_repo(tmp_path / "project")
    store = CheckpointStore(tmp_path / "data" / "checkpoints")
    session = await JsonlSessionRepo(tmp_path / "data" / "sessions").create(cwd=str(project))
    try:
        with ProviderServer() as server:
            harness = AgentHarness(
                session=session,
                model=server.model("openai-completions"),
                get_api_key=lambda _m: "local",
                workspace=Workspace(project, forbidden_roots=[store.root.parent]),
                approval_policy=ApprovalPolicy(rules={"mcp__srv": "allow"}),
                checkpoints=store.folder(project),
                more_tools=manager.tools,
            )
            server.script(
                Reply(tool_calls=[ToolCallSpec("c1", "mcp__srv__echo", {"text": "hi"})]),
                Reply(text="done"),
            )
            await harness.prompt("use it")
        shape = []
        for e in await session.get_branch():
            if isinstance(e, MessageEntry):
                shape.append(e.message.role)
            elif isinstance(e, CustomEntry) and e.custom_type == CHECKPOINT_CUSTOM_TYPE:
                shape.append(f"checkpoint:{e.data['kind']}")
        assert shape == [
            "user",
            "assistant",
            "checkpoint:before",  # taken before the MCP tool ran
            "toolResult",
            "checkpoint:after",
            "assistant",
        ]
    finally:
        await session.close()
