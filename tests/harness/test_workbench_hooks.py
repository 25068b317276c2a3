"""What the workbench relies on in the harness: no model yet, exact leaf moves, and the
entry id of every saved message in its ``message_end`` event."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_agent.harness import AgentHarness, HarnessError, HarnessEvent, MessageSavedEvent
from desktop_agent.session import JsonlSessionRepo
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.workbench import answer, user

pytestmark = pytest.mark.asyncio


async def test_without_a_model_the_harness_navigates_but_does_not_prompt(tmp_path: Path) -> None:
    session = await JsonlSessionRepo(tmp_path).create(cwd=str(tmp_path))
    prompt = await session.append_message(user("question"))
    await session.append_message(answer("reply"))
    harness = AgentHarness(session=session, model=None)
    assert harness.model is None
    with pytest.raises(HarnessError) as failure:
        await harness.prompt("hello")
    assert failure.value.code == "no_model" and harness.is_idle
    with pytest.raises(HarnessError):
        await harness.navigate_tree(prompt, summarize=True)
    result = await harness.navigate_tree(prompt, exact=True)
    assert session.leaf_id() == prompt and result.editor_text is None
    await session.close()


async def test_a_prompt_target_moves_to_its_parent_unless_exact(tmp_path: Path) -> None:
    session = await JsonlSessionRepo(tmp_path).create(cwd=str(tmp_path))
    first = await session.append_message(user("first"))
    reply = await session.append_message(answer("reply"))
    second = await session.append_message(user("second"))
    harness = AgentHarness(session=session, model=None)
    result = await harness.navigate_tree(second)
    assert session.leaf_id() == reply and result.editor_text == "second"
    await harness.navigate_tree(first, exact=True)
    assert session.leaf_id() == first
    await session.close()


async def test_message_end_carries_the_entry_id(tmp_path: Path) -> None:
    with ProviderServer() as server:
        session = await JsonlSessionRepo(tmp_path).create(cwd=str(tmp_path))
        harness = AgentHarness(session=session, model=server.model("anthropic-messages"))
        saved: list[MessageSavedEvent] = []

        def listen(event: HarnessEvent) -> None:
            if isinstance(event, MessageSavedEvent):
                saved.append(event)

        harness.subscribe(listen)
        server.script(Reply(text="hi"))
        await harness.prompt("hello")
        assert [e.message.role for e in saved] == ["user", "assistant"]
        assert [e.entry_id for e in saved] == session.branch_ids()
        await session.close()
