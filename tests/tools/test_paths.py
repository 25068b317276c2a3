"""Workspace confinement: hostile paths are refused by every file tool (R16)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.tools import (
    EditTool,
    FindTool,
    GrepTool,
    LsTool,
    PathRefused,
    ReadTool,
    Tool,
    ToolError,
    Workspace,
    WriteTool,
    run_tool,
)
from tests.helpers.sandbox import Sandbox, tree_hash

# Paths relative to the workspace root, or "{outside}"/"{config}" placeholders.
HOSTILE_PATHS = [
    "..",
    "../outside/secret.txt",
    "../../etc/passwd",
    "src/../../outside/secret.txt",
    "src/missing/../../../outside/new.txt",
    "/etc/passwd",
    "/",
    "{outside}/secret.txt",
    "{config}/settings.json",
    "{config}",
    "link_file",
    "link_dir",
    "link_dir/secret.txt",
    "link_dir/new.txt",
    "chain1",
    "loop1",
    "loop1/x",
    "abs_link/passwd",
    ".desktop-agent-data",
    ".desktop-agent-data/sessions/s.jsonl",
    "data_link/sessions/s.jsonl",
    "{data}/sessions/s.jsonl",
    ".git/hooks/pre-commit",
    ".git/hooks",
    "src/../.git/hooks/new-hook",
    "src/ok.txt\x00.png",
    "~",
    "~/.bashrc",
    "a/" * 2100 + "x",
    "x" * 300,
]


def _expand(sb: Sandbox, path: str) -> str:
    return path.format(outside=sb.outside, config=sb.config_dir, data=sb.data_dir)


def _arguments(tool: Tool[Any], path: str) -> dict[str, Any]:
    if tool.name == "write":
        return {"path": path, "content": "pwned\n"}
    if tool.name == "edit":
        return {"path": path, "old_text": "canary", "new_text": "pwned"}
    if tool.name == "grep":
        return {"pattern": "canary", "path": path}
    if tool.name == "find":
        return {"pattern": "*", "path": path}
    return {"path": path}


def test_there_are_at_least_twenty_hostile_paths() -> None:
    assert len(HOSTILE_PATHS) >= 20


@pytest.mark.parametrize("raw", HOSTILE_PATHS, ids=[repr(p)[:40] for p in HOSTILE_PATHS])
def test_workspace_resolve_refuses_hostile_path(sandbox: Sandbox, raw: str) -> None:
    path = _expand(sandbox, raw)
    with pytest.raises(PathRefused) as info:
        sandbox.workspace.resolve(path)
    assert str(info.value).startswith("Path refused: ")
    assert info.value.reason


@pytest.mark.asyncio
@pytest.mark.parametrize("raw", HOSTILE_PATHS, ids=[repr(p)[:40] for p in HOSTILE_PATHS])
async def test_every_file_tool_refuses_hostile_path(sandbox: Sandbox, raw: str) -> None:
    path = _expand(sandbox, raw)
    before = tree_hash(sandbox.outside, sandbox.config_dir, sandbox.data_dir, sandbox.root / ".git")
    tools: list[Tool[Any]] = [ReadTool(), WriteTool(), EditTool(), LsTool(), GrepTool(), FindTool()]
    for tool in tools:
        result = await run_tool(tool, "call-1", _arguments(tool, path), sandbox.ctx())
        text = result.text_content()
        assert result.is_error, (tool.name, text)
        assert text.startswith("Path refused: "), (tool.name, text)
        assert "canary" not in text
    after = tree_hash(sandbox.outside, sandbox.config_dir, sandbox.data_dir, sandbox.root / ".git")
    assert after == before
    assert not (sandbox.outside / "new.txt").exists()


@pytest.mark.parametrize(
    "path", ["src/ok.txt", "./src/ok.txt", "src/../src/ok.txt", "inner_link", "{root}/src/ok.txt"]
)
def test_paths_inside_are_accepted(sandbox: Sandbox, path: str) -> None:
    real = sandbox.workspace.resolve(path.format(root=sandbox.root))
    assert real == sandbox.root / "src" / "ok.txt"
    assert sandbox.workspace.display(real) == "src/ok.txt"


def test_new_file_inside_is_accepted(sandbox: Sandbox) -> None:
    real = sandbox.workspace.resolve("new/dir/file.txt", for_write=True)
    assert real == sandbox.root / "new" / "dir" / "file.txt"


def test_writes_inside_dot_git_are_refused_but_reads_are_not(sandbox: Sandbox) -> None:
    ws = sandbox.workspace
    assert ws.resolve(".git/config") == sandbox.root / ".git" / "config"
    with pytest.raises(PathRefused, match=r"inside a \.git directory"):
        ws.resolve(".git/config", for_write=True)


def test_workspace_inside_a_forbidden_root_refuses_everything(sandbox: Sandbox) -> None:
    ws = Workspace(sandbox.root / "src", forbidden_roots=[sandbox.root])
    with pytest.raises(PathRefused, match="protected"):
        ws.resolve("ok.txt")


def test_symlink_swapped_in_after_the_check_is_not_followed(sandbox: Sandbox) -> None:
    """The check passes, then a directory on the way becomes a symlink out: refused."""
    ws = sandbox.workspace
    (sandbox.root / "d").mkdir()
    (sandbox.root / "d" / "secret.txt").write_text("inside\n")
    real_read = ws.resolve("d/secret.txt")
    real_write = ws.resolve("d/secret.txt", for_write=True)
    before = tree_hash(sandbox.outside)
    shutil.rmtree(sandbox.root / "d")
    os.symlink(sandbox.outside, sandbox.root / "d")
    with pytest.raises(PathRefused, match="symbolic link"):
        ws.open_file(real_read)
    with pytest.raises(PathRefused, match="symbolic link"):
        ws.atomic_write(real_write, b"pwned\n")
    assert tree_hash(sandbox.outside) == before


def test_final_component_swapped_to_symlink_is_not_followed(sandbox: Sandbox) -> None:
    ws = sandbox.workspace
    target = sandbox.root / "f.txt"
    target.write_text("inside\n")
    real = ws.resolve("f.txt", for_write=True)
    target.unlink()
    os.symlink(sandbox.outside / "secret.txt", target)
    before = tree_hash(sandbox.outside)
    with pytest.raises(PathRefused):
        ws.open_file(real)
    with pytest.raises(PathRefused):
        ws.atomic_write(real, b"pwned\n")
    assert tree_hash(sandbox.outside) == before


@pytest.mark.asyncio
async def test_a_hard_link_is_neither_read_nor_written(sandbox: Sandbox) -> None:
    os.link(sandbox.outside / "secret.txt", sandbox.root / "hard.txt")
    before = tree_hash(sandbox.outside)
    cases: list[tuple[Tool[Any], dict[str, Any]]] = [
        (WriteTool(), {"path": "hard.txt", "content": "new\n"}),
        (ReadTool(), {"path": "hard.txt"}),
        (EditTool(), {"path": "hard.txt", "old_text": "canary", "new_text": "x"}),
    ]
    for tool, args in cases:
        result = await run_tool(tool, "c", args, sandbox.ctx())
        assert result.is_error and "hard links" in result.text_content(), tool.name
        assert "canary" not in result.text_content()
    result = await run_tool(GrepTool(), "c", {"pattern": "canary"}, sandbox.ctx())
    assert result.text_content() == "(no matches)"
    assert tree_hash(sandbox.outside) == before
    assert (sandbox.root / "hard.txt").read_text() == "canary secret\n"


@pytest.mark.asyncio
async def test_fifo_and_device_are_not_read(sandbox: Sandbox) -> None:
    os.mkfifo(sandbox.root / "pipe")
    result = await run_tool(ReadTool(), "c", {"path": "pipe"}, sandbox.ctx())
    assert result.is_error
    assert "not a regular file" in result.text_content()
    result = await run_tool(ReadTool(), "c", {"path": "/dev/zero"}, sandbox.ctx())
    assert result.text_content().startswith("Path refused")


def test_path_refused_is_a_tool_error_with_path_and_reason() -> None:
    err = PathRefused("../x", "it escapes the workspace /w")
    assert isinstance(err, ToolError)
    assert err.path == "../x"
    assert str(err) == "Path refused: '../x': it escapes the workspace /w"


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a directory"):
        Workspace(tmp_path / "missing")
