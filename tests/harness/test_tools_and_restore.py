"""Built-in tools through the harness (approvals recorded, abort kills process trees) and
the restore rules (SESSION_FORMAT.md §10.5)."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

import pytest
import pytest_asyncio

from desktop_agent.ai import AssistantMessage, Model, ModelRegistry, ToolResultMessage
from desktop_agent.harness import AgentHarness, restore_settings
from desktop_agent.session import (
    CustomEntry,
    InMemorySessionRepo,
    JsonlSessionRepo,
    MessageEntry,
    ModelRef,
    Session,
    SessionContext,
)
from desktop_agent.tools import (
    APPROVAL_CUSTOM_TYPE,
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    Workspace,
    built_in_tools,
)
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec


@pytest.fixture(scope="module")
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as s:
        yield s


@pytest_asyncio.fixture
async def session(tmp_path: Path) -> AsyncIterator[Session]:
    s = await JsonlSessionRepo(tmp_path / "data" / "sessions").create(cwd=str(tmp_path / "ws"))
    yield s
    if not s.closed:
        await s.close()


def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    return Workspace(root, forbidden_roots=[tmp_path / "data"])


def tool_results(entries: Sequence[object]) -> list[ToolResultMessage]:
    return [
        e.message
        for e in entries
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
    ]


@pytest.mark.asyncio
async def test_approval_asked_recorded_and_denial_reaches_the_model(
    server: ProviderServer, session: Session, tmp_path: Path
) -> None:
    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return (
            ApprovalDecision.ALLOW_ONCE if request.tool_name == "write" else ApprovalDecision.DENY
        )

    ws = workspace(tmp_path)
    harness = AgentHarness(
        session=session,
        model=server.model("anthropic-messages"),
        tools=built_in_tools(),
        workspace=ws,
        approval_policy=ApprovalPolicy(ask),
        get_api_key=lambda m: "sk-test",
        tool_output_dir=tmp_path / "out",
    )
    server.script(
        Reply(
            tool_calls=[
                ToolCallSpec("c1", "write", {"path": "hello.txt", "content": "hi\n"}),
                ToolCallSpec("c2", "bash", {"command": "echo should-not-run > ran.txt"}),
                ToolCallSpec("c3", "read", {"path": "../data/sessions"}),
            ]
        ),
        Reply(text="done"),
    )
    await harness.prompt("write a file")
    assert (ws.root / "hello.txt").read_text() == "hi\n"
    assert not (ws.root / "ran.txt").exists()
    assert sorted(r.tool_name for r in asked) == ["bash", "write"]
    entries = await session.get_entries()
    results = {r.tool_call_id: r for r in tool_results(entries)}
    assert not results["c1"].is_error
    assert results["c2"].is_error and "did not approve" in results["c2"].content[0].text  # type: ignore[union-attr]
    assert results["c3"].is_error  # a path outside the workspace is refused
    records = [
        e for e in entries if isinstance(e, CustomEntry) and e.custom_type == APPROVAL_CUSTOM_TYPE
    ]
    decisions = sorted((r.data["tool"], r.data["decision"]) for r in records)
    assert decisions == [("bash", "deny"), ("read", "allow"), ("write", "allow_once")]
    assert (await session.build_context()).messages[-1].role == "assistant"


@pytest.mark.asyncio
async def test_abort_during_bash_leaves_no_process_behind(
    server: ProviderServer, session: Session, tmp_path: Path
) -> None:
    ws = workspace(tmp_path)
    harness = AgentHarness(
        session=session,
        model=server.model("openai-completions"),
        tools=built_in_tools(),
        workspace=ws,
        approval_policy=ApprovalPolicy(rules={"bash": "allow"}),
        get_api_key=lambda m: "sk-test",
        tool_output_dir=tmp_path / "out",
    )
    command = "sleep 300 & sleep 300 & echo $$ > pid.txt; wait"
    server.script(Reply(tool_calls=[ToolCallSpec("c1", "bash", {"command": command})]))
    run = asyncio.ensure_future(harness.prompt("start servers"))
    pid_file = ws.root / "pid.txt"
    for _ in range(500):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    # The shell runs in the sandbox's PID namespace ($$ is not a host pid): the group is
    # led by the bwrap this process started.
    pgid = next(
        pid
        for pid, ppid, comm in _children()
        if ppid == os.getpid() and comm == "bwrap" and os.getpgid(pid) == pid
    )
    await harness.abort()
    final = await run
    assert isinstance(final, AssistantMessage) and final.stop_reason == "aborted"
    for _ in range(200):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.01)
    else:
        os.killpg(pgid, signal.SIGKILL)
        pytest.fail("processes of the aborted bash command survived")
    entries = await session.get_entries()
    assert [type(e).__name__ for e in entries if isinstance(e, MessageEntry)] == [
        "MessageEntry"
    ] * 4


def _children() -> list[tuple[int, int, str]]:
    """(pid, parent pid, command name) of every process (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path("/proc", entry, "stat").read_text()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            found.append((int(entry), int(stat[stat.rindex(")") + 2 :].split()[1]), comm))
    return found


# ------------------------------------------------------------------ restore


def registry(server: ProviderServer) -> ModelRegistry:
    return ModelRegistry(
        catalogue=[
            server.model("anthropic-messages", model_id="claude-a"),
            server.model("openai-responses", model_id="gpt-b", reasoning=False),
        ]
    )


def keyed(*providers: str) -> object:
    return lambda m: m.provider in providers


def test_restore_saved_model_with_key(server: ProviderServer) -> None:
    ctx = SessionContext([], "high", ModelRef("anthropic", "claude-a"), ["read", "nope"])
    restored = restore_settings(
        ctx,
        registry(server),
        has_key=lambda m: True,
        available_tools=["read", "bash"],
        has_thinking_entry=True,
    )
    assert restored.model is not None and restored.model.id == "claude-a"
    assert restored.thinking_level == "high"
    assert restored.active_tool_names == ["read"]
    assert restored.notice is None


def test_restore_never_moves_to_another_provider(server: ProviderServer) -> None:
    """FIRST_HOUR.md L1: a session whose model has no key keeps it (no model in the
    harness) rather than sending its conversation and key to another provider."""
    ctx = SessionContext([], "high", ModelRef("anthropic", "claude-a"), None)
    restored = restore_settings(
        ctx,
        registry(server),
        has_key=lambda m: m.provider == "openai",
        available_tools=["read"],
        has_thinking_entry=True,
        default_model="openai/gpt-b",
    )
    assert restored.model is None
    assert restored.thinking_level == "off"
    # One whole sentence to translate; the model name is a value filled in after it.
    assert restored.notice_template == (
        "Model {saved} cannot be used: no API key is set for it. The session keeps it and"
        " sends nothing until you add the key in Settings or choose another model."
    )
    assert restored.notice_args == {"saved": "anthropic/claude-a"}
    assert restored.active_tool_names is None
    # A local server that did not answer: said so, still no other provider.
    local = SessionContext([], "off", ModelRef("local", "qwen"), None)
    down = restore_settings(
        local,
        registry(server),
        has_key=lambda m: True,
        available_tools=[],
        has_thinking_entry=False,
        server_problem={"local": "Could not reach http://127.0.0.1:9/v1."}.get,
    )
    assert down.model is None
    assert down.notice == (
        "Model local/qwen cannot be used now: Could not reach http://127.0.0.1:9/v1. The"
        " session keeps it and sends nothing until its server answers (Try again) or you"
        " choose another model."
    )
    # A new session, no default model, the local server set up but its listing failed
    # (a LiteLLM proxy without a database answers 400): that reason, not "add a server".
    fresh = SessionContext([], "off", None, None)
    listing = "Could not list the models of http://h:4000: it answered 400 (No connected db.)."
    unlisted = restore_settings(
        fresh,
        ModelRegistry(),
        has_key=lambda m: False,  # no key for any provider's model; the server lists none
        available_tools=[],
        has_thinking_entry=False,
        server_problem={"local": listing}.get,
    )
    assert unlisted.model is None
    assert unlisted.notice == (
        "No model is available: Could not list the models of http://h:4000: it answered 400"
        " (No connected db.). Nothing is sent until the server lists its models (Try again)"
        " or you set up another model in Settings."
    )


def test_restore_falls_back_within_the_provider_and_clamps(server: ProviderServer) -> None:
    ctx = SessionContext([], "high", ModelRef("openai", "gpt-retired"), None)
    restored = restore_settings(
        ctx,
        registry(server),
        has_key=lambda m: True,
        available_tools=["read"],
        has_thinking_entry=True,
        default_model="anthropic/claude-a",
    )
    assert restored.model is not None and restored.model.id == "gpt-b"
    assert restored.thinking_level == "off"  # gpt-b does not reason
    assert restored.notice_template == (
        "Could not restore model {saved} (it is no longer available). Using {model} instead."
    )
    assert restored.notice_args == {"saved": "openai/gpt-retired", "model": "openai/gpt-b"}


def test_restore_unknown_model_and_no_keys(server: ProviderServer) -> None:
    ctx = SessionContext([], "off", ModelRef("gone", "old-model"), None)
    restored = restore_settings(
        ctx, registry(server), has_key=lambda m: False, available_tools=[], has_thinking_entry=False
    )
    assert restored.model is None and restored.thinking_level == "off"
    assert restored.notice is not None and "no longer available" in restored.notice


def test_restore_default_thinking_when_branch_has_none(server: ProviderServer) -> None:
    restored = restore_settings(
        SessionContext([]),
        registry(server),
        has_key=lambda m: True,
        available_tools=[],
        has_thinking_entry=False,
        default_model="anthropic/claude-a",
    )
    assert restored.model is not None and restored.model.id == "claude-a"
    assert restored.thinking_level == "medium"


@pytest.mark.asyncio
async def test_restore_from_a_real_session(server: ProviderServer) -> None:
    repo = InMemorySessionRepo()
    s = await repo.create(cwd="/x")
    await s.append_model_change("openai", "gpt-b")
    await s.append_thinking_level_change("minimal")
    await s.append_active_tools_change(["read", "grep"])
    ctx = await s.build_context()
    restored = restore_settings(
        ctx,
        registry(server),
        has_key=lambda m: True,
        available_tools=["read", "grep", "bash"],
        has_thinking_entry=True,
    )
    assert restored.model is not None and restored.model.key == "openai/gpt-b"
    assert restored.active_tool_names == ["read", "grep"]
    model: Model = restored.model
    assert model.reasoning is False and restored.thinking_level == "off"
