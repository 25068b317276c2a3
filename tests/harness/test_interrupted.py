"""Restore after a crash in the middle of a tool call (issue 11 item 8).

The app killed while a tool runs leaves an assistant tool call without its result. The
next request must still be valid for every wire API: the harness answers such a call in
the context with a synthetic "interrupted" result, never written to the file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.harness import (
    INTERRUPTED_TEXT,
    AgentHarness,
    interrupted_tool_calls,
    with_interrupted_results,
)
from desktop_agent.session import JsonlSessionRepo, MessageEntry
from desktop_agent.tools import ApprovalPolicy, Workspace, built_in_tools
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec

APIS = ["anthropic-messages", "openai-responses", "openai-completions"]
CALL_IDS = {
    "anthropic-messages": "toolu_01crash",
    "openai-responses": "call_crash|fc_crash",
    "openai-completions": "call_crash",
}


@pytest.fixture
def provider_server() -> Iterator[ProviderServer]:
    with ProviderServer() as server:
        yield server


# ------------------------------------------------------------------ the server validates


def _post(server: ProviderServer, path: str, body: dict[str, Any]) -> int:
    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer t"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as exc:
        exc.read()
        return int(exc.code)


ORPHANS: dict[str, tuple[str, dict[str, Any]]] = {
    "anthropic-messages": (
        "/v1/messages",
        {
            "model": "claude-test",
            "max_tokens": 100,
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "c1", "name": "bash", "input": {}}],
                },
                {"role": "user", "content": "go on"},
            ],
        },
    ),
    "openai-completions": (
        "/v1/chat/completions",
        {
            "model": "local-test",
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "bash", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "user", "content": "go on"},
            ],
        },
    ),
    "openai-responses": (
        "/v1/responses",
        {
            "model": "gpt-test",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"},
                {"role": "user", "content": [{"type": "input_text", "text": "go on"}]},
            ],
        },
    ),
}


@pytest.mark.parametrize("api", APIS)
def test_the_test_server_rejects_a_tool_call_without_result(
    provider_server: ProviderServer, api: str
) -> None:
    path, body = ORPHANS[api]
    provider_server.script(Reply(text="never"))
    assert _post(provider_server, path, body) == 400
    assert provider_server.validation_errors, "the server accepted an unanswered tool call"


# ------------------------------------------------------------------ the context


def test_synthetic_results_go_right_after_the_calls_own_results() -> None:
    calls = [ToolCall(id=f"c{i}", name="bash", arguments={"command": "x"}) for i in range(3)]
    assistant = AssistantMessage(
        content=[TextContent(text="running"), *calls],
        api="anthropic-messages",
        provider="anthropic",
        model="m",
        stop_reason="toolUse",
        timestamp=5,
    )
    done = ToolResultMessage(tool_call_id="c1", tool_name="bash", content=[], timestamp=6)
    later = UserMessage(content="and now?", timestamp=7)
    aborted = assistant.model_copy(update={"stop_reason": "aborted"})
    messages: list[AgentMessage] = [
        UserMessage(content="go", timestamp=1),
        assistant,
        done,
        later,
        aborted,
    ]
    assert [c.id for c in interrupted_tool_calls(messages)] == ["c0", "c2"]
    context = with_interrupted_results(messages)
    assert [type(m).__name__ for m in context] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "UserMessage",
        "AssistantMessage",
    ]
    synthetic = [m for m in context[3:5] if isinstance(m, ToolResultMessage)]
    assert [m.tool_call_id for m in synthetic] == ["c0", "c2"]
    assert all(m.is_error and m.content[0].text == INTERRUPTED_TEXT for m in synthetic)  # type: ignore[union-attr]
    assert with_interrupted_results(context) == context  # nothing left to answer
    assert messages[2] is done and len(messages) == 5  # the input is not modified


# ------------------------------------------------------------------ through the harness


async def _crashed_session(tmp_path: Path, model: Model) -> str:
    """A session as a crash mid-tool leaves it: the call is written, its result is not."""
    repo = JsonlSessionRepo(tmp_path / "sessions")
    session = await repo.create(cwd=str(tmp_path / "ws"))
    await session.append_message(UserMessage(content=[TextContent(text="build it")], timestamp=1))
    call = ToolCall(id=CALL_IDS[model.api], name="bash", arguments={"command": "make"})
    await session.append_message(
        AssistantMessage(
            content=[TextContent(text="Running make."), call],
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="toolUse",
            timestamp=2,
        )
    )
    await session.close()
    path = session.metadata.path
    assert path is not None
    return path


@pytest.mark.asyncio
@pytest.mark.parametrize("api", APIS)
async def test_next_request_after_a_crash_is_valid_for_every_api(
    provider_server: ProviderServer, tmp_path: Path, api: str
) -> None:
    model = provider_server.model(api)
    path = await _crashed_session(tmp_path, model)
    before = Path(path).read_bytes()
    session = await JsonlSessionRepo(tmp_path / "sessions").open(path)
    context = await session.build_context()
    assert [c.name for c in interrupted_tool_calls(context.messages)] == ["bash"]
    harness = AgentHarness(session=session, model=model, get_api_key=lambda m: "sk-test")
    provider_server.script(Reply(text="The build was interrupted; starting again."))
    final = await harness.prompt("what happened?")
    assert isinstance(final, AssistantMessage) and final.stop_reason == "stop", (
        provider_server.validation_errors
    )
    assert provider_server.validation_errors == []
    body = json.dumps(provider_server.last_body())
    assert INTERRUPTED_TEXT in body
    assert "No result provided" not in body  # the harness answered, not the fallback
    await session.close()
    after = Path(path).read_bytes()
    assert after.startswith(before)
    assert INTERRUPTED_TEXT.encode() not in after  # context only, never written


CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from desktop_agent.harness import AgentHarness
    from desktop_agent.session import JsonlSessionRepo
    from desktop_agent.tools import ApprovalPolicy, Workspace, built_in_tools
    from desktop_agent.ai import Model, ModelCost

    root, port = sys.argv[1], int(sys.argv[2])

    async def main():
        repo = JsonlSessionRepo(root + "/sessions")
        session = await repo.create(cwd=root + "/ws")
        print(session.metadata.path, flush=True)
        model = Model(id="claude-test", name="t", api="anthropic-messages",
                      provider="anthropic", base_url=f"http://127.0.0.1:{port}",
                      reasoning=False, input=("text",), cost=ModelCost(),
                      context_window=200000, max_tokens=32000)
        harness = AgentHarness(
            session=session, model=model, tools=built_in_tools(),
            workspace=Workspace(root + "/ws"),
            approval_policy=ApprovalPolicy(rules={"bash": "allow"}),
            get_api_key=lambda m: "sk-test", tool_output_dir=root + "/out")
        await harness.prompt("run the long job")

    asyncio.run(main())
    """
)


@pytest.mark.slow
@pytest.mark.asyncio
async def test_sigkill_while_a_tool_runs_then_continue(
    provider_server: ProviderServer, tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    started = tmp_path / "ws" / "started"
    command = f"touch {started}; sleep 60"
    provider_server.script(
        Reply(tool_calls=[ToolCallSpec("toolu_long", "bash", {"command": command})])
    )
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path), str(provider_server.port)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None
        path = child.stdout.readline().strip()
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert started.exists(), "the tool never started"
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the app and the tool's process group
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    session = await JsonlSessionRepo(tmp_path / "sessions").open(path)
    entries = [e for e in await session.get_entries() if isinstance(e, MessageEntry)]
    assert [e.message.role for e in entries] == ["user", "assistant"]
    context = await session.build_context()
    assert [c.id for c in interrupted_tool_calls(context.messages)] == ["toolu_long"]
    harness = AgentHarness(
        session=session,
        model=provider_server.model("anthropic-messages"),
        tools=built_in_tools(),
        workspace=Workspace(tmp_path / "ws"),
        approval_policy=ApprovalPolicy(rules={"bash": "allow"}),
        get_api_key=lambda m: "sk-test",
        tool_output_dir=tmp_path / "out",
    )
    provider_server.script(Reply(text="It was interrupted."))
    final = await harness.prompt("did it finish?")
    assert isinstance(final, AssistantMessage) and final.stop_reason == "stop"
    assert provider_server.validation_errors == []
    assert INTERRUPTED_TEXT in json.dumps(provider_server.last_body())
    await session.close()
