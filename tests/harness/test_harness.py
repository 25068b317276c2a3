"""AgentHarness against the scripted provider server (issue 4 acceptance)."""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
import pytest_asyncio
from pydantic import BaseModel

from desktop_agent.agent import AgentToolResult, ToolUpdate
from desktop_agent.ai import (
    AssistantMessage,
    Model,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.harness import (
    AgentHarness,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    HarnessError,
    HarnessEvent,
    HarnessSettings,
    PersistenceErrorEvent,
)
from desktop_agent.session import CompactionEntry, JsonlSessionRepo, MessageEntry, Session
from desktop_agent.session._platform import OS_FILE_OPS
from tests.helpers.pi import Pi
from tests.helpers.provider_server import HttpError, ProviderServer, Reply, ToolCallSpec

KEY = "sk-test-harness"


class EchoArgs(BaseModel):
    text: str


class EchoTool:
    """Echoes its argument after an optional delay, streaming one update."""

    def __init__(self, name: str = "echo", delay: float = 0.0) -> None:
        self._definition = ToolDefinition(name=name, description="Echo text", parameters=EchoArgs)
        self.delay = delay
        self.started = asyncio.Event()
        self.cancelled = False

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def execution_mode(self) -> Literal["parallel", "sequential"]:
        return "parallel"

    async def execute(
        self, call_id: str, arguments: dict[str, Any], on_update: ToolUpdate
    ) -> AgentToolResult:
        self.started.set()
        on_update(AgentToolResult([TextContent(text="working")]))
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return AgentToolResult([TextContent(text=f"echo: {arguments['text']}")], {"n": 1})


class FakeClock:
    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def now(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture(scope="module")
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as s:
        yield s


@pytest_asyncio.fixture
async def session(tmp_path: Path) -> AsyncIterator[Session]:
    repo = JsonlSessionRepo(tmp_path / "sessions")
    s = await repo.create(cwd=str(tmp_path / "project"))
    yield s
    if not s.closed:
        s.get_storage().force_close()


def make_harness(
    session: Session,
    model: Model,
    tools: list[Any] | None = None,
    clock: FakeClock | None = None,
    settings: HarnessSettings | None = None,
) -> tuple[AgentHarness, list[HarnessEvent]]:
    harness = AgentHarness(
        session=session,
        model=model,
        tools=tools if tools is not None else [EchoTool()],
        get_api_key=lambda m: KEY,
        clock=clock or FakeClock(),
        settings=settings,
    )
    events: list[HarnessEvent] = []
    harness.subscribe(events.append)
    return harness, events


def roles(entries: list[Any]) -> list[str]:
    out = []
    for e in entries:
        if isinstance(e, MessageEntry):
            m = e.message
            out.append(f"assistant({m.stop_reason})" if isinstance(m, AssistantMessage) else m.role)
        else:
            out.append(e.type)
    return out


def collapse(types: list[str]) -> list[str]:
    out: list[str] = []
    for t in types:
        if t == "message_update" and out and out[-1] == "message_update*":
            continue
        out.append("message_update*" if t == "message_update" else t)
    return out


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-responses", "openai-completions"])
@pytest.mark.asyncio
async def test_two_parallel_tool_calls_event_sequence_and_entries(
    server: ProviderServer, session: Session, api: str
) -> None:
    server.script(
        Reply(
            text="Let me check.",
            tool_calls=[
                ToolCallSpec("call_1", "echo", {"text": "a"}),
                ToolCallSpec("call_2", "echo", {"text": "b"}),
            ],
        ),
        Reply(text="Both done."),
    )
    harness, events = make_harness(session, server.model(api))
    final = await harness.prompt("run both")
    assert final is not None and final.stop_reason == "stop"
    types = collapse([e.type for e in events])
    assert types == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update*",
        "message_end",
        "tool_execution_start",
        "tool_execution_start",
        *(
            ["tool_execution_update", "tool_execution_update"]
            if types[9] == "tool_execution_update"
            else types[9:11]
        ),
        *types[11:13],
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "save_point",
        "turn_start",
        "message_start",
        "message_update*",
        "message_end",
        "turn_end",
        "save_point",
        "agent_end",
        "settled",
    ]
    assert sorted(types[9:13]) == sorted(["tool_execution_update"] * 2 + ["tool_execution_end"] * 2)
    assert roles(await session.get_entries()) == [
        "user",
        "assistant(toolUse)",
        "toolResult",
        "toolResult",
        "assistant(stop)",
    ]
    results = [
        e.message
        for e in await session.get_entries()
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
    ]
    call_entry = (await session.get_entries())[1]
    assert isinstance(call_entry, MessageEntry)
    assert isinstance(call_entry.message, AssistantMessage)
    calls = [c.id for c in call_entry.message.content if isinstance(c, ToolCall)]
    assert [r.tool_call_id for r in results] == calls
    assert server.validation_errors == []


@pytest.mark.slow
@pytest.mark.asyncio
async def test_file_opens_in_pi_with_the_same_context(
    server: ProviderServer, session: Session, pi: Pi
) -> None:
    server.script(
        Reply(
            tool_calls=[
                ToolCallSpec("call_1", "echo", {"text": "a"}),
                ToolCallSpec("call_2", "echo", {"text": "b"}),
            ]
        ),
        Reply(text="done"),
    )
    harness, _ = make_harness(session, server.model("anthropic-messages"))
    await harness.prompt("go")
    ours = await session.build_context()
    path = session.metadata.path or ""
    await session.close()
    report = await pi.arun("context", path)
    assert "error" not in report
    assert report["context"]["messages"] == [m.to_json_dict() for m in ours.messages]


@pytest.mark.asyncio
async def test_abort_mid_stream_keeps_partial_aborted_message(
    server: ProviderServer, session: Session
) -> None:
    server.script(Reply(text=["Hello ", "there ", "friend"], hold_after=4))
    harness, events = make_harness(session, server.model("anthropic-messages"))
    run = asyncio.ensure_future(harness.prompt("talk"))
    while not any(e.type == "message_update" for e in events):
        await asyncio.sleep(0.01)
    await harness.abort()
    final = await run
    assert final is not None and final.stop_reason == "aborted"
    assert roles(await session.get_entries()) == ["user", "assistant(aborted)"]
    types = [e.type for e in events]
    assert types[-4:] == ["save_point", "agent_end", "settled", "abort"]
    assert harness.is_idle


@pytest.mark.asyncio
async def test_abort_mid_tool(server: ProviderServer, session: Session) -> None:
    slow = EchoTool("echo", delay=30)
    server.script(Reply(tool_calls=[ToolCallSpec("call_1", "echo", {"text": "a"})]))
    harness, _ = make_harness(session, server.model("openai-completions"), tools=[slow])
    run = asyncio.ensure_future(harness.prompt("slow please"))
    await slow.started.wait()
    await harness.abort()
    final = await run
    assert slow.cancelled
    assert final is not None and final.stop_reason == "aborted"
    entries = await session.get_entries()
    assert roles(entries) == ["user", "assistant(toolUse)", "toolResult", "assistant(aborted)"]
    result = entries[2].message  # type: ignore[union-attr]
    assert isinstance(result, ToolResultMessage) and result.is_error


@pytest.mark.asyncio
async def test_two_429s_then_success_retries_visibly(
    server: ProviderServer, session: Session
) -> None:
    clock = FakeClock()
    server.script(
        HttpError(429, "slow down", headers={"retry-after": "1"}),
        HttpError(429, "slow down"),
        Reply(text="finally"),
    )
    harness, events = make_harness(session, server.model("openai-responses"), clock=clock)
    final = await harness.prompt("hi")
    assert final is not None and final.stop_reason == "stop"
    starts = [e for e in events if isinstance(e, AutoRetryStartEvent)]
    assert [e.attempt for e in starts] == [1, 2]
    ends = [e for e in events if isinstance(e, AutoRetryEndEvent)]
    assert len(ends) == 1 and ends[0].success
    assert clock.sleeps == [2.0, 4.0]
    stops = [m for m in roles(await session.get_entries()) if m.startswith("assistant")]
    assert stops == ["assistant(error)", "assistant(error)", "assistant(stop)"]
    assert [m.role for m in (await session.build_context()).messages][-1] == "assistant"


@pytest.mark.asyncio
async def test_non_retryable_error_is_not_retried(server: ProviderServer, session: Session) -> None:
    server.script(HttpError(401, "bad key"))
    harness, events = make_harness(session, server.model("anthropic-messages"))
    final = await harness.prompt("hi")
    assert final is not None and final.stop_reason == "error"
    assert not any(e.type == "auto_retry_start" for e in events)


@pytest.mark.asyncio
async def test_threshold_compaction_then_next_request_holds_summary_and_kept(
    server: ProviderServer, session: Session
) -> None:
    model = server.model("anthropic-messages", context_window=40_000)
    settings = HarnessSettings(reserve_tokens=10_000, keep_recent_tokens=30)
    harness, events = make_harness(session, model, settings=settings)
    server.script(Reply(text="first answer " * 10, input_tokens=100))
    await harness.prompt("first question " * 10)
    server.script(
        Reply(text="second answer", input_tokens=35_000),  # above 40k - 10k
        Reply(text="## Goal\nSUMMARY-TEXT"),  # the summary call
    )
    await harness.prompt("second question")
    assert any(e.type == "session_compact" for e in events)
    compactions = [e for e in await session.get_entries() if isinstance(e, CompactionEntry)]
    assert len(compactions) == 1 and "SUMMARY-TEXT" in compactions[0].summary
    server.script(Reply(text="third answer"))
    await harness.prompt("third question")
    body = server.last_body()
    texts = [
        block["text"]
        for message in body["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "text"
    ]
    assert "SUMMARY-TEXT" in texts[0]
    assert not any("first question" in t for t in texts)
    assert texts[-1] == "third question"


@pytest.mark.asyncio
async def test_manual_compaction_and_nothing_to_compact(
    server: ProviderServer, session: Session
) -> None:
    harness, _ = make_harness(
        session, server.model("openai-completions"), settings=HarnessSettings(keep_recent_tokens=1)
    )
    with pytest.raises(HarnessError) as err:
        await harness.compact()
    assert err.value.code == "compaction"
    server.script(Reply(text="a1"), Reply(text="a2"))
    await harness.prompt("q1")
    await harness.prompt("q2")
    server.default_reply = Reply(text="SUMMARY")  # one or two summary calls (split turn)
    try:
        await harness.compact("focus on tests")
    finally:
        server.default_reply = None
    bodies = [str(r.body) for r in server.requests[-2:]]
    assert any("Additional focus: focus on tests" in b for b in bodies)
    context = await session.build_context()
    assert context.messages[0].role == "compactionSummary"


class FailingWrites:
    """Fault layer: the JSONL store's writes fail with EACCES while ``active``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.active = False
        real = OS_FILE_OPS.write_all

        def write_all(fd: int, data: bytes) -> None:
            if self.active:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            real(fd, data)

        monkeypatch.setattr(OS_FILE_OPS, "write_all", write_all)


@pytest.mark.asyncio
async def test_saving_fails_mid_run_then_retry_writes_everything_once(
    server: ProviderServer, session: Session, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    faults = FailingWrites(monkeypatch)
    server.script(
        Reply(tool_calls=[ToolCallSpec("call_1", "echo", {"text": "a"})]),
        Reply(text="all good"),
    )
    harness, events = make_harness(session, server.model("anthropic-messages"))

    def break_disk(event: HarnessEvent) -> None:
        if event.type == "message_start" and isinstance(
            getattr(event, "message", None), AssistantMessage
        ):
            faults.active = True

    harness.subscribe(break_disk)
    final = await harness.prompt("do it")
    assert final is not None and final.stop_reason == "stop"
    errors = [e for e in events if isinstance(e, PersistenceErrorEvent)]
    assert len(errors) == 1 and errors[0].errno == errno.EACCES
    assert session.pending_count == 3
    in_memory = [e.id for e in await session.get_entries()]
    faults.active = False
    assert await harness.retry_persistence() == 3
    path = session.metadata.path or ""
    await session.close()
    reopened = await JsonlSessionRepo(tmp_path / "sessions").open(path)
    assert [e.id for e in await reopened.get_entries()] == in_memory
    assert roles(await reopened.get_entries()) == [
        "user",
        "assistant(toolUse)",
        "toolResult",
        "assistant(stop)",
    ]
    await reopened.close()


@pytest.mark.asyncio
async def test_settings_changes_during_run_are_written_at_turn_end(
    server: ProviderServer, session: Session
) -> None:
    slow = EchoTool("echo", delay=0.2)
    model = server.model("anthropic-messages")
    other = server.model("anthropic-messages", model_id="claude-other")
    server.script(
        Reply(tool_calls=[ToolCallSpec("call_1", "echo", {"text": "a"})]), Reply(text="done")
    )
    harness, _ = make_harness(session, model, tools=[slow])
    run = asyncio.ensure_future(harness.prompt("go"))
    await slow.started.wait()
    await harness.set_model(other)
    await harness.set_thinking_level("high")
    await run
    assert roles(await session.get_entries()) == [
        "user",
        "assistant(toolUse)",
        "toolResult",
        "model_change",
        "thinking_level_change",
        "assistant(stop)",
    ]
    last = (await session.get_entries())[-1]
    assert isinstance(last, MessageEntry) and isinstance(last.message, AssistantMessage)
    assert last.message.model == "claude-other"
    context = await session.build_context()
    assert context.thinking_level == "high"


@pytest.mark.asyncio
async def test_steer_and_follow_up(server: ProviderServer, session: Session) -> None:
    slow = EchoTool("echo", delay=0.2)
    server.script(
        Reply(tool_calls=[ToolCallSpec("call_1", "echo", {"text": "a"})]),
        Reply(text="after steer"),
        Reply(text="after follow-up"),
    )
    harness, _ = make_harness(session, server.model("openai-completions"), tools=[slow])
    with pytest.raises(HarnessError):
        await harness.steer("too early")
    run = asyncio.ensure_future(harness.prompt("go"))
    await slow.started.wait()
    await harness.steer("also do this")
    await harness.follow_up("and then this")
    with pytest.raises(HarnessError) as err:
        await harness.prompt("busy?")
    assert err.value.code == "busy"
    await run
    assert roles(await session.get_entries()) == [
        "user",
        "assistant(toolUse)",
        "toolResult",
        "user",
        "assistant(stop)",
        "user",
        "assistant(stop)",
    ]


@pytest.mark.asyncio
async def test_failing_listener_does_not_kill_the_run(
    server: ProviderServer, session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    server.script(Reply(text="fine"))
    harness, _ = make_harness(session, server.model("anthropic-messages"))

    def broken(event: HarnessEvent) -> None:
        raise RuntimeError("listener bug")

    harness.subscribe(broken)
    final = await harness.prompt("hi")
    assert final is not None and final.stop_reason == "stop"
    assert "listener bug" in caplog.text


@pytest.mark.asyncio
async def test_navigate_tree_with_summary(server: ProviderServer, session: Session) -> None:
    harness, events = make_harness(session, server.model("anthropic-messages"))
    server.script(Reply(text="a1"), Reply(text="a2"))
    await harness.prompt("q1")
    await harness.prompt("q2")
    entries = await session.get_entries()
    q2 = entries[2]
    server.script(Reply(text="BRANCH-SUMMARY"))
    result = await harness.navigate_tree(q2.id, summarize=True)
    assert result.editor_text == "q2"
    assert result.summary_entry_id is not None
    context = await session.build_context()
    assert [m.role for m in context.messages] == ["user", "assistant", "branchSummary"]
    assert "BRANCH-SUMMARY" in context.messages[-1].summary  # type: ignore[union-attr]
    assert events[-1].type == "session_tree"
    same = await harness.navigate_tree(await session.get_leaf_id())
    assert not same.cancelled


def test_user_message_type() -> None:
    assert UserMessage(content="x", timestamp=1).role == "user"
