"""The read tool may read the folders of the project's skills outside the workspace
(issue 19: the system prompt tells the model to read them), and nothing else there:
no other tool, no write, no path that leaves the root through a link or ``..``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop_agent.tools import (
    EditTool,
    LsTool,
    ReadTool,
    ToolContext,
    Workspace,
    WriteTool,
    run_tool,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.asyncio
async def test_only_the_read_tool_reads_only_the_roots(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    skill_dir = tmp_path / "home" / ".pi" / "agent" / "skills" / "deploy"
    skill = write(skill_dir / "SKILL.md", "Deploy with care.")
    script = write(skill_dir / "scripts" / "run.md", "Step one.")
    sibling = write(tmp_path / "home" / ".pi" / "agent" / "skills" / "other" / "SKILL.md", "x")
    single = write(tmp_path / "notes" / "notes.md", "A file skill.")
    beside = write(tmp_path / "notes" / "private.md", "Not a skill.")
    secret = write(tmp_path / "secret.txt", "password=hunter2")
    os.symlink(secret, skill_dir / "link.md")
    roots = [str(skill_dir), str(single)]
    ctx = ToolContext(workspace=Workspace(root, read_only_roots=lambda: roots))

    async def read(path: Path | str) -> tuple[bool, str]:
        result = await run_tool(ReadTool(), "c", {"path": str(path)}, ctx)
        return result.is_error, result.text_content()

    assert await read(skill) == (False, "Deploy with care.")
    assert await read(script) == (False, "Step one.")
    assert await read(single) == (False, "A file skill.")
    for refused in (sibling, beside, secret, skill_dir / "link.md"):
        is_error, text = await read(refused)
        assert is_error and "outside" in text, (refused, text)
    # Through "..": only absolute paths reach a root (as the prompt gives them).
    is_error, _ = await read(os.path.relpath(skill, root))
    assert is_error
    for tool, args in (
        (WriteTool(), {"path": str(skill), "content": "changed"}),
        (EditTool(), {"path": str(skill), "old_text": "care", "new_text": "x"}),
        (LsTool(), {"path": str(skill_dir)}),
    ):
        result = await run_tool(tool, "c", args, ctx)
        assert result.is_error and "outside the workspace" in result.text_content(), (
            tool.name,
            result.text_content(),
        )
    assert skill.read_text(encoding="utf-8") == "Deploy with care."
    roots.clear()  # asked at every read: a skill that went away is not readable any more
    assert (await read(skill))[0]
