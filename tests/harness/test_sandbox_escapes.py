"""Bash allowed without asking (what users do after the tenth prompt), through the real
harness and the real bubblewrap: the five ways out of the project a user saw are each
blocked, and the session's tool results say so in plain words."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop_agent.ai import ToolResultMessage
from desktop_agent.harness import AgentHarness, HarnessSettings
from desktop_agent.session import JsonlSessionRepo, MessageEntry
from desktop_agent.tools import ApprovalPolicy, BashTool, Workspace, detect_sandbox
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec
from tests.helpers.sandbox import tree_hash


@pytest.mark.asyncio
async def test_the_five_escapes_are_blocked_with_bash_always_allowed(tmp_path: Path) -> None:
    ws_root = tmp_path / "ws"
    ws_root.mkdir()
    outside = tmp_path / "elsewhere"
    home = outside / "home"
    home.mkdir(parents=True)
    (home / ".bashrc").write_text("# mine\n")
    before = tree_hash(outside)
    escapes = [
        f"mkdir -p {outside}/made && echo x > {outside}/made/f",
        f'echo "alias ls=evil" >> "{home}/.bashrc"',
        f"ln -s {outside} out && echo x > out/via-link",
        f"python3 -c \"open('{outside}/py.txt', 'w').write('x')\"",
        f'echo x > "$TMPDIR/t" && mv "$TMPDIR/t" {outside}/moved',
    ]
    repo = JsonlSessionRepo(tmp_path / "data" / "sessions")
    session = await repo.create(cwd=str(ws_root))
    with ProviderServer() as server:
        harness = AgentHarness(
            session=session,
            model=server.model("openai-completions"),
            tools=[BashTool(sandbox=detect_sandbox())],
            workspace=Workspace(ws_root, forbidden_roots=[tmp_path / "data"]),
            approval_policy=ApprovalPolicy(rules={"bash": "allow"}),
            get_api_key=lambda m: "k",
            tool_output_dir=tmp_path / "data" / "tool-output",
            settings=HarnessSettings(retry_enabled=False),
        )
        calls = [ToolCallSpec(f"c{i}", "bash", {"command": c}) for i, c in enumerate(escapes)]
        server.script(Reply(tool_calls=calls), Reply(text="I could not."))
        await harness.prompt("put my notes everywhere")
    entries = await session.get_entries()
    await session.close()
    results = [
        e.message
        for e in entries
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
    ]
    assert len(results) == 5
    for result in results:
        text = " ".join(getattr(b, "text", "") for b in result.content)
        assert result.is_error and "[Blocked by the sandbox:" in text, text
        assert result.details is not None and result.details["sandboxBlocked"] == "write"
    assert tree_hash(outside) == before
    assert not os.path.lexists(ws_root / "out" / "via-link")
