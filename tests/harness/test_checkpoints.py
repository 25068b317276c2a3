"""Checkpoints through the harness: a "before" snapshot ahead of a turn's first tool that
may change files, an "after" at its end, both as custom entries at the points they
describe; Pi 0.74.2 opens such a session and sends the model the same messages."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from desktop_agent.agent import AgentToolResult, ToolUpdate
from desktop_agent.ai import TextContent, ToolDefinition
from desktop_agent.checkpoints import (
    CHECKPOINT_CUSTOM_TYPE,
    CheckpointError,
    CheckpointStore,
    parse_record,
    state_of,
    turn_pairs,
)
from desktop_agent.harness import AgentHarness
from desktop_agent.session import CustomEntry, JsonlSessionRepo, MessageEntry, Session, SessionEntry
from desktop_agent.tools import (
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    Workspace,
    built_in_tools,
)
from tests.helpers.git_repo import dot_git_fingerprint, make_user_repo
from tests.helpers.pi import Pi
from tests.helpers.pi_cli import MODEL, PROVIDER, PiCli, encode
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec


@pytest.fixture(scope="module")
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as s:
        yield s


@pytest_asyncio.fixture
async def project(tmp_path: Path) -> Path:
    return make_user_repo(tmp_path / "project")


@pytest_asyncio.fixture
async def session(tmp_path: Path, project: Path) -> AsyncIterator[Session]:
    s = await JsonlSessionRepo(tmp_path / "data" / "sessions").create(cwd=str(project))
    yield s
    if not s.closed:
        await s.close()


async def allow(_request: ApprovalRequest) -> ApprovalDecision:
    return ApprovalDecision.ALLOW_ONCE


class McpLikeTool:
    """A tool the app does not know (as an MCP server's): it counts as changing files."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(
            name="mcp__fs__touch",
            description="touch a file",
            parameters={"type": "object", "properties": {"name": {"type": "string"}}},
        )

    @property
    def execution_mode(self) -> Any:
        return "parallel"

    async def execute(
        self, call_id: str, arguments: dict[str, Any], on_update: ToolUpdate
    ) -> AgentToolResult:
        (self.folder / arguments["name"]).write_text("touched\n")
        return AgentToolResult([TextContent(text="ok")])


def make_harness(
    session: Session, server: ProviderServer, project: Path, store: CheckpointStore, model: Any
) -> AgentHarness:
    return AgentHarness(
        session=session,
        model=model,
        tools=[*built_in_tools(), McpLikeTool(project)],
        workspace=Workspace(project, forbidden_roots=[store.root.parent]),
        approval_policy=ApprovalPolicy(allow),
        get_api_key=lambda m: "sk-test",
        checkpoints=store.folder(project),
    )


def kinds(entries: list[SessionEntry]) -> list[str]:
    out = []
    for e in entries:
        if isinstance(e, MessageEntry):
            out.append(e.message.role)
        elif isinstance(e, CustomEntry) and e.custom_type == CHECKPOINT_CUSTOM_TYPE:
            out.append(f"checkpoint:{e.data['kind']}")
    return out


def records(entries: list[SessionEntry]) -> list[Any]:
    return [
        parse_record(e.custom_type, e.data) if isinstance(e, CustomEntry) else None for e in entries
    ]


@pytest.mark.asyncio
async def test_a_turn_that_changes_files_is_snapshotted_before_and_after(
    server: ProviderServer, session: Session, project: Path, tmp_path: Path
) -> None:
    store = CheckpointStore(tmp_path / "data" / "checkpoints")
    git_before = dot_git_fingerprint(project)
    harness = make_harness(session, server, project, store, server.model("openai-completions"))
    server.script(
        Reply(tool_calls=[ToolCallSpec("r1", "read", {"path": "keep.txt"})]),
        Reply(
            tool_calls=[
                ToolCallSpec("w1", "write", {"path": "notes.txt", "content": "version one\n"}),
                ToolCallSpec("w2", "mcp__fs__touch", {"name": "touched.txt"}),
            ]
        ),
        Reply(text="done"),
    )
    await harness.prompt("Write version one")
    entries = await session.get_branch()
    assert kinds(entries) == [
        "user",
        "assistant",  # read only: no checkpoint
        "toolResult",
        "assistant",
        "checkpoint:before",
        "toolResult",
        "toolResult",
        "checkpoint:after",
        "assistant",
    ]
    recs = [r for r in records(entries) if r is not None]
    before, after = recs
    assert after.before == before.tree
    assert list(after.changed) == ["notes.txt", "touched.txt"] and after.changed_count == 2
    cp = store.folder(project)
    assert cp.read_sync(after.tree, "notes.txt") == b"version one\n"
    assert cp.read_sync(before.tree, "notes.txt") is None
    assert state_of(records(entries)) == after.tree
    assert turn_pairs(records(entries)) == [(before.tree, after.tree)]

    # A change by hand between turns is in the next "before" snapshot.
    (project / "by-hand.txt").write_text("mine\n")
    server.script(
        Reply(tool_calls=[ToolCallSpec("b1", "bash", {"command": "echo extra > extra.txt"})]),
        Reply(text="ok"),
    )
    await harness.prompt("more")
    recs2 = [r for r in records(await session.get_branch()) if r is not None]
    assert cp.read_sync(recs2[2].tree, "by-hand.txt") == b"mine\n"
    assert list(recs2[3].changed) == ["extra.txt"]
    assert dot_git_fingerprint(project) == git_before


@pytest.mark.asyncio
async def test_a_failed_snapshot_is_a_notice_and_the_run_goes_on(
    server: ProviderServer, session: Session, project: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "data" / "file-not-dir"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("")
    store = CheckpointStore(blocker / "checkpoints")  # cannot be created
    harness = make_harness(session, server, project, store, server.model("openai-completions"))
    notices: list[str] = []
    harness.subscribe(lambda e: notices.append(e.message) if e.type == "notice" else None)
    server.script(
        Reply(tool_calls=[ToolCallSpec("w1", "write", {"path": "a.txt", "content": "a"})]),
        Reply(text="done"),
    )
    final = await harness.prompt("go")
    assert final is not None and final.stop_reason == "stop"
    assert (project / "a.txt").read_text() == "a"
    assert len(notices) == 1 and notices[0].startswith("No checkpoint of the folder:")
    assert "checkpoint:before" not in kinds(await session.get_branch())


@pytest.mark.asyncio
async def test_big_files_are_named_once_in_a_notice(
    server: ProviderServer, session: Session, project: Path, tmp_path: Path
) -> None:
    store = CheckpointStore(tmp_path / "data" / "checkpoints")
    with open(project / "video.mp4", "wb") as fh:
        fh.truncate(12 * 1024 * 1024)
    harness = make_harness(session, server, project, store, server.model("openai-completions"))
    notices: list[str] = []
    harness.subscribe(lambda e: notices.append(e.message) if e.type == "notice" else None)
    for _ in range(2):
        server.script(
            Reply(tool_calls=[ToolCallSpec("w1", "write", {"path": "a.txt", "content": "a"})]),
            Reply(text="done"),
        )
        await harness.prompt("go")
    assert notices == [
        "Not in the checkpoint, so a restore will not bring them back: video.mp4 (larger than"
        " 10 MB (12 MB))"
    ]
    recs = [r for r in records(await session.get_branch()) if r is not None]
    assert [s.path for s in recs[0].skipped] == ["video.mp4"]


@pytest.mark.slow
@pytest.mark.asyncio
async def test_pi_opens_a_session_with_checkpoints_and_sends_the_same_messages(
    server: ProviderServer, pi: Pi, tmp_path: Path
) -> None:
    cli = PiCli(pi, server, tmp_path / "pi")
    project = make_user_repo(tmp_path / "project")
    store = CheckpointStore(tmp_path / "data" / "checkpoints")
    model = server.model("openai-completions", MODEL, provider=PROVIDER)
    session = await JsonlSessionRepo(cli.sessions_dir).create(cwd=str(project))
    harness = make_harness(session, server, project, store, model)
    server.script(
        Reply(
            tool_calls=[
                ToolCallSpec("w1", "write", {"path": "notes.txt", "content": "version one\n"})
            ]
        ),
        Reply(text="written"),
    )
    await harness.prompt("Write version one")
    path = Path(session.metadata.path or "")
    assert CHECKPOINT_CUSTOM_TYPE in path.read_text()
    # The same file continued by the Pi CLI (a copy in a folder of its own) and by us.
    twin = tmp_path / "twin"
    twin.mkdir()
    (cli.sessions_dir / encode(twin)).mkdir(parents=True)
    shutil.copyfile(path, cli.sessions_dir / encode(twin) / path.name)
    server.script(Reply(text="next from pi"))
    cli.print("And now?", cwd=twin, args=("--continue",))
    pi_body = server.last_body()
    server.script(Reply(text="next from us"))
    await harness.prompt("And now?")
    our_body = server.last_body()
    await session.close()

    def sent(body: Any) -> list[Any]:
        """The messages of a request, as the model reads them (Pi sends a user text as a
        list of one text part, and tool arguments without spaces)."""
        out = []
        for m in body["messages"]:
            if m["role"] == "system":
                continue
            if m["role"] == "user" and isinstance(m["content"], str):
                m = {**m, "content": [{"type": "text", "text": m["content"]}]}
            if m.get("tool_calls"):
                calls = [
                    {
                        **c,
                        "function": {
                            **c["function"],
                            "arguments": json.loads(c["function"]["arguments"]),
                        },
                    }
                    for c in m["tool_calls"]
                ]
                m = {**m, "tool_calls": calls}
            out.append(m)
        return out

    assert sent(pi_body) == sent(our_body)
    assert [m["role"] for m in sent(our_body)] == ["user", "assistant", "tool", "assistant", "user"]


class GateTool(McpLikeTool):
    """A file-changing tool that waits until the test lets it finish."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def execute(
        self, call_id: str, arguments: dict[str, Any], on_update: ToolUpdate
    ) -> AgentToolResult:
        self.started.set()
        await self.release.wait()
        return await super().execute(call_id, arguments, on_update)


@pytest.mark.asyncio
async def test_a_restore_is_refused_while_a_run_in_the_folder_is_active(
    server: ProviderServer, session: Session, project: Path, tmp_path: Path
) -> None:
    store = CheckpointStore(tmp_path / "data" / "checkpoints")
    gate = GateTool(project)
    harness = AgentHarness(
        session=session,
        model=server.model("openai-completions"),
        tools=[gate],
        get_api_key=lambda m: "sk-test",
        checkpoints=store.folder(project),
    )
    earlier = store.folder(project).snapshot_sync()
    (project / "later.txt").write_text("later\n")
    server.script(
        Reply(tool_calls=[ToolCallSpec("t1", "mcp__fs__touch", {"name": "t.txt"})]),
        Reply(text="done"),
    )
    run = asyncio.ensure_future(harness.prompt("go"))
    await gate.started.wait()
    with pytest.raises(CheckpointError) as refused:
        await store.folder(project).restore(earlier.tree, {"later.txt"})
    assert refused.value.code == "busy"
    assert "stop it" in refused.value.message
    assert (project / "later.txt").exists()
    gate.release.set()
    await run
    result = await store.folder(project).restore(earlier.tree, {"later.txt", "t.txt"})
    assert sorted(result.deleted) == ["later.txt", "t.txt"]
