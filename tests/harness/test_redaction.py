"""The harness redacts secrets before the session sees them (issue 11 item 6)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from desktop_agent.ai import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)
from desktop_agent.harness import (
    REDACTION_CUSTOM_TYPE,
    AgentHarness,
    HarnessEvent,
)
from desktop_agent.session import JsonlSessionRepo, MessageEntry, Session
from desktop_agent.tools import ApprovalPolicy, Workspace, built_in_tools
from desktop_agent.utils import Redactor, marker
from tests.helpers.canaries import make_canaries, scan_bytes
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec

CANARIES = make_canaries()
BY_NAME = {c.name: c for c in CANARIES}
OPENAI = BY_NAME["openai"].value
ANTHROPIC = BY_NAME["anthropic"].value


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as s:
        yield s


@pytest_asyncio.fixture
async def session(tmp_path: Path) -> AsyncIterator[Session]:
    s = await JsonlSessionRepo(tmp_path / "sessions").create(cwd=str(tmp_path / "ws"))
    yield s
    if not s.closed:
        await s.close()


def harness_for(
    session: Session, server: ProviderServer, tmp_path: Path, thinking_level: str = "off"
) -> AgentHarness:
    (tmp_path / "ws").mkdir(exist_ok=True)
    return AgentHarness(
        session=session,
        model=server.model("anthropic-messages"),
        thinking_level=thinking_level,
        tools=built_in_tools(),
        workspace=Workspace(tmp_path / "ws"),
        approval_policy=ApprovalPolicy(rules={"bash": "allow", "write": "allow"}),
        get_api_key=lambda m: "sk-test",
        tool_output_dir=tmp_path / "out",
    )


def file_bytes(session: Session) -> bytes:
    assert session.metadata.path is not None
    return Path(session.metadata.path).read_bytes()


@pytest.mark.asyncio
async def test_tools_run_with_the_real_arguments_the_session_keeps_markers(
    server: ProviderServer, session: Session, tmp_path: Path
) -> None:
    harness = harness_for(session, server, tmp_path)
    events: list[HarnessEvent] = []
    harness.subscribe(events.append)
    server.script(
        Reply(
            text=f"I will write {OPENAI} to .env",
            tool_calls=[
                ToolCallSpec("toolu_1", "write", {"path": ".env", "content": f"KEY={OPENAI}\n"}),
                ToolCallSpec("toolu_2", "bash", {"command": "cat .env"}),
            ],
        ),
        Reply(text="done"),
    )
    await harness.prompt(f"my key is {ANTHROPIC}")
    # the tool got the real content: the user's file is theirs
    assert (tmp_path / "ws" / ".env").read_text() == f"KEY={OPENAI}\n"
    data = file_bytes(session)
    assert scan_bytes(data, CANARIES) == []
    assert marker("openai key").encode() in data and marker("anthropic key").encode() in data
    # listeners saw what the session keeps
    ends = [e for e in events if e.type == "message_end"]
    assert all(OPENAI not in json.dumps(e.message.to_json_dict()) for e in ends)
    tool_ends = [e for e in events if e.type == "tool_execution_end"]
    assert tool_ends and all(OPENAI not in repr(e) for e in tool_ends)
    # the second request was built from the session: the model never saw the key
    second = json.dumps(server.last_body())
    assert OPENAI not in second and ANTHROPIC not in second
    assert server.validation_errors == []


@pytest.mark.asyncio
async def test_ids_and_signatures_stay_byte_exact(
    server: ProviderServer, session: Session, tmp_path: Path
) -> None:
    harness = harness_for(session, server, tmp_path, thinking_level="high")
    server.script(
        Reply(
            thinking="I think about sk-proj-thinkingIsSignedAndMustNotChange0001",
            text=f"key: {OPENAI}",
            tool_calls=[ToolCallSpec("toolu_sk-ant-" + "x" * 20, "bash", {"command": "true"})],
        ),
        Reply(text="ok"),
    )
    await harness.prompt("go")
    entries = [e for e in await session.get_entries() if isinstance(e, MessageEntry)]
    assistant = next(e.message for e in entries if isinstance(e.message, AssistantMessage))
    thinking = next(b for b in assistant.content if isinstance(b, ThinkingContent))
    assert thinking.thinking == "I think about sk-proj-thinkingIsSignedAndMustNotChange0001"
    assert thinking.thinking_signature  # kept with its text, so the replay validates
    call = next(b for b in assistant.content if isinstance(b, ToolCall))
    assert call.id == "toolu_sk-ant-" + "x" * 20
    result = next(e.message for e in entries if isinstance(e.message, ToolResultMessage))
    assert result.tool_call_id == call.id
    text = next(b for b in assistant.content if isinstance(b, TextContent))
    assert text.text == "key: [redacted: openai key]"
    assert server.validation_errors == []  # the signed thinking replayed fine


@pytest.mark.asyncio
async def test_redaction_off_for_a_session_survives_a_restart(
    server: ProviderServer, session: Session, tmp_path: Path
) -> None:
    harness = harness_for(session, server, tmp_path)
    assert harness.redaction_enabled
    await harness.set_redaction(False)
    server.script(Reply(text="noted"))
    await harness.prompt(f"keep this one: {OPENAI}")
    assert OPENAI.encode() in file_bytes(session)
    path = session.metadata.path
    assert path is not None
    await session.close()

    reopened = await JsonlSessionRepo(tmp_path / "sessions").open(path)
    try:
        again = harness_for(reopened, server, tmp_path)
        assert not again.redaction_enabled
        await again.set_redaction(True)
        server.script(Reply(text="hidden"))
        await again.prompt(f"but not this one: {ANTHROPIC}")
        data = file_bytes(reopened)
        assert ANTHROPIC.encode() not in data
        choices = [
            json.loads(line)["data"]
            for line in data.splitlines()
            if REDACTION_CUSTOM_TYPE.encode() in line
        ]
        assert choices == [{"enabled": False}, {"enabled": True}]
    finally:
        await reopened.close()
    third = await JsonlSessionRepo(tmp_path / "sessions").open(path)
    assert harness_for(third, server, tmp_path).redaction_enabled
    await third.close()


@pytest.mark.asyncio
async def test_the_apps_own_keys_are_removed_even_with_redaction_off(
    server: ProviderServer, session: Session, tmp_path: Path
) -> None:
    own = "local-server-key-b7c1f09d"
    redactor = Redactor()
    redactor.add_secret(own, "local key")
    (tmp_path / "ws").mkdir()
    harness = AgentHarness(
        session=session,
        model=server.model("anthropic-messages"),
        get_api_key=lambda m: own,
        redactor=redactor,
    )
    await harness.set_redaction(False)
    server.script(Reply(text=f"your key is {own}"))
    await harness.prompt(f"what is {own}?")
    data = file_bytes(session)
    assert own.encode() not in data and b"[redacted: local key]" in data


@pytest.mark.asyncio
async def test_approval_records_and_tool_output_files_are_redacted(
    server: ProviderServer, session: Session, tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    harness = AgentHarness(
        session=session,
        model=server.model("openai-completions"),
        tools=built_in_tools(),
        workspace=Workspace(tmp_path / "ws"),
        approval_policy=ApprovalPolicy(rules={"bash": "allow"}),
        get_api_key=lambda m: "sk-test",
        tool_output_dir=tmp_path / "out",
    )
    command = f"for i in $(seq 1 3000); do echo line $i {OPENAI}; done; echo {ANTHROPIC}"
    server.script(
        Reply(tool_calls=[ToolCallSpec("call_1", "bash", {"command": command})]),
        Reply(text="done"),
    )
    await harness.prompt("print a lot")
    outputs = list((tmp_path / "out").iterdir())
    assert len(outputs) == 1  # the output was long enough to spill to a file
    spilled = outputs[0].read_bytes()
    assert spilled.count(b"[redacted: openai key]") == 3000
    assert scan_bytes(spilled, CANARIES) == []
    assert scan_bytes(file_bytes(session), CANARIES) == []
