"""The harness asks its prompt source at every turn, with the tools that are on."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_agent.harness import AgentHarness
from desktop_agent.harness._harness import DEFAULT_SYSTEM_PROMPT
from desktop_agent.prompt import ProjectPrompt
from desktop_agent.session import InMemorySessionRepo
from tests.harness.test_harness import EchoTool
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.wire import system_text


@pytest.mark.asyncio
async def test_every_turn_rebuilds_the_prompt_for_the_active_tools(tmp_path: Path) -> None:
    agents = tmp_path / "AGENTS.md"
    agents.write_text("First rules.", encoding="utf-8")
    project = ProjectPrompt(str(tmp_path))
    session = await InMemorySessionRepo().create(cwd=str(tmp_path))
    with ProviderServer() as server:
        harness = AgentHarness(
            session=session,
            model=server.model("openai-completions"),
            tools=[EchoTool("mcp__srv__echo"), EchoTool("other")],
            system_prompt=project.system_prompt,
            get_api_key=lambda _m: "local",
        )
        server.script(Reply(text="a"), Reply(text="b"))
        await harness.prompt("one")
        agents.write_text("Second rules, changed.", encoding="utf-8")
        await harness.set_active_tools(["mcp__srv__echo"])
        await harness.prompt("two")
        first, second = (system_text(r.body) for r in server.requests if r.method == "POST")
    assert "First rules." in first and "- mcp__srv__echo: Echo text" in first
    assert "- other: Echo text" in first
    assert "Second rules, changed." in second and "First rules." not in second
    assert "- mcp__srv__echo: Echo text" in second and "- other:" not in second
    assert await harness.system_prompt() == second


@pytest.mark.asyncio
async def test_a_fixed_prompt_still_works(tmp_path: Path) -> None:
    session = await InMemorySessionRepo().create(cwd=str(tmp_path))
    fixed = AgentHarness(session=session, model=None, system_prompt="Be brief.")
    assert await fixed.system_prompt() == "Be brief."
    default = AgentHarness(session=session, model=None)
    assert await default.system_prompt() == DEFAULT_SYSTEM_PROMPT
