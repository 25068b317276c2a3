"""The harness after another program wrote to its session (issue 13 item 4): the failure
is reported with code ``changed_on_disk``, and `AgentHarness.reload_from_disk` takes the
other program's entries in, keeps the run's entries as a branch, and saving works again."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.harness import (
    AgentHarness,
    HarnessError,
    HarnessEvent,
    PersistenceErrorEvent,
    PersistenceRestoredEvent,
)
from desktop_agent.session import JsonlSessionRepo, Session
from tests.helpers.provider_server import ProviderServer, Reply


@pytest.fixture(scope="module")
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as s:
        yield s


@pytest_asyncio.fixture
async def session(tmp_path: Path) -> AsyncIterator[Session]:
    s = await JsonlSessionRepo(tmp_path / "sessions").create(cwd=str(tmp_path / "project"))
    yield s
    if not s.closed:
        s.get_storage().force_close()


@pytest.mark.asyncio
async def test_reload_after_another_program_appended(
    server: ProviderServer, session: Session
) -> None:
    harness = AgentHarness(
        session=session,
        model=server.model("openai-completions"),
        tools=[],
        get_api_key=lambda m: "local",
    )
    events: list[HarnessEvent] = []
    harness.subscribe(events.append)
    server.script(Reply(text="first answer"))
    await harness.prompt("first")
    leaf = await session.get_leaf_id()
    path = str(session.metadata.path)
    other = {
        "type": "message",
        "id": "pi000001",
        "parentId": leaf,
        "timestamp": "2026-12-01T10:00:00.000Z",
        "message": UserMessage(
            content=[TextContent(text="typed in Pi")], timestamp=5
        ).to_json_dict(),
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(other, separators=(",", ":")) + "\n")

    server.script(Reply(text="second answer"))
    await harness.prompt("second")
    errors = [e for e in events if isinstance(e, PersistenceErrorEvent)]
    assert [e.code for e in errors] == ["changed_on_disk"]
    assert errors[0].errno is None and "another program" in errors[0].message
    assert session.pending_count == 2

    report = await harness.reload_from_disk()
    assert report.taken_in == ("pi000001",) and len(report.kept) == 2
    assert report.branch_point == leaf and await session.get_leaf_id() == "pi000001"
    assert isinstance(events[-1], PersistenceRestoredEvent) and events[-1].written == 2
    assert session.pending_count == 0

    server.script(Reply(text="third answer"))
    await harness.prompt("third")
    sent = [m["content"] for m in server.last_body()["messages"] if m["role"] == "user"]
    assert sent == ["first", "typed in Pi", "third"]  # our "second" is on the other branch
    assert session.pending_count == 0


@pytest.mark.asyncio
async def test_reload_waits_for_the_run(server: ProviderServer, session: Session) -> None:
    harness = AgentHarness(
        session=session, model=server.model("openai-completions"), tools=[], get_api_key=str
    )
    harness.phase = "turn"
    with pytest.raises(HarnessError) as err:
        await harness.reload_from_disk()
    assert err.value.code == "busy"
    harness.phase = "idle"
