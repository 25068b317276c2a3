"""ls, grep and find: limits, .git and protected directories skipped, binaries skipped."""

from __future__ import annotations

import pytest

from desktop_agent.tools import FindTool, GrepTool, LsTool, ReadTool, glob_to_regex, run_tool
from tests.helpers.sandbox import Sandbox


def _populate(sb: Sandbox) -> None:
    (sb.root / "pkg" / "sub").mkdir(parents=True)
    (sb.root / "pkg" / "a.py").write_text("import os\nNEEDLE = 1\n")
    (sb.root / "pkg" / "sub" / "b.py").write_text("needle lower\nNEEDLE again\n")
    (sb.root / "pkg" / "notes.md").write_text("NEEDLE in markdown\n")
    (sb.root / "pkg" / "blob.bin").write_bytes(b"NEEDLE\x00\x01")
    (sb.root / ".git" / "objects").mkdir()
    (sb.root / ".git" / "objects" / "NEEDLE.py").write_text("NEEDLE\n")
    (sb.data_dir / "NEEDLE.py").write_text("NEEDLE in the data dir\n")


@pytest.mark.asyncio
async def test_ls_lists_sorted_marks_dirs_and_links_hides_protected(sandbox: Sandbox) -> None:
    result = await run_tool(LsTool(), "c", {}, sandbox.ctx())
    lines = result.text_content().splitlines()
    assert ".git/" in lines and "src/" in lines and "link_dir@" in lines
    assert ".desktop-agent-data/" not in lines
    assert lines == sorted(lines, key=lambda n: (n.casefold(), n))
    sub = await run_tool(LsTool(), "c", {"path": "src"}, sandbox.ctx())
    assert sub.text_content() == "ok.txt"


@pytest.mark.asyncio
async def test_ls_limit_and_errors(sandbox: Sandbox) -> None:
    (sandbox.root / "many").mkdir()
    for i in range(30):
        (sandbox.root / "many" / f"f{i:02}").write_text("")
    result = await run_tool(LsTool(), "c", {"path": "many", "limit": 10}, sandbox.ctx())
    text = result.text_content()
    assert text.startswith("f00\nf01\n")
    assert text.endswith("[20 more entries; limit of 10 reached]")
    assert result.details == {"path": "many", "entries": 30, "truncated": True}
    missing = await run_tool(LsTool(), "c", {"path": "nope"}, sandbox.ctx())
    assert missing.is_error and "not found" in missing.text_content()
    afile = await run_tool(LsTool(), "c", {"path": "src/ok.txt"}, sandbox.ctx())
    assert afile.is_error and "not a directory" in afile.text_content()


@pytest.mark.asyncio
async def test_grep_finds_matches_and_skips_git_data_and_binaries(sandbox: Sandbox) -> None:
    _populate(sandbox)
    result = await run_tool(GrepTool(), "c", {"pattern": "NEEDLE"}, sandbox.ctx())
    assert result.text_content().splitlines() == [
        "pkg/a.py:2: NEEDLE = 1",
        "pkg/notes.md:1: NEEDLE in markdown",
        "pkg/sub/b.py:2: NEEDLE again",
    ]
    assert result.details is not None and result.details["truncated"] is False


@pytest.mark.asyncio
async def test_grep_options(sandbox: Sandbox) -> None:
    _populate(sandbox)
    ctx = sandbox.ctx()
    folded = await run_tool(
        GrepTool(), "c", {"pattern": "needle", "ignore_case": True, "glob": "*.py"}, ctx
    )
    assert folded.text_content().splitlines() == [
        "pkg/a.py:2: NEEDLE = 1",
        "pkg/sub/b.py:1: needle lower",
        "pkg/sub/b.py:2: NEEDLE again",
    ]
    literal = await run_tool(GrepTool(), "c", {"pattern": "a.py", "literal": True}, ctx)
    assert literal.text_content() == "(no matches)"
    one_file = await run_tool(GrepTool(), "c", {"pattern": "os", "path": "pkg/a.py"}, ctx)
    assert one_file.text_content() == "pkg/a.py:1: import os"
    bad = await run_tool(GrepTool(), "c", {"pattern": "("}, ctx)
    assert bad.is_error and "Invalid regular expression" in bad.text_content()


@pytest.mark.asyncio
async def test_grep_limit_and_long_lines(sandbox: Sandbox) -> None:
    (sandbox.root / "big.txt").write_text("hit\n" * 500 + "hit" + "x" * 2000 + "\n")
    result = await run_tool(GrepTool(), "c", {"pattern": "hit", "limit": 5}, sandbox.ctx())
    text = result.text_content()
    assert text.count("big.txt:") == 5
    assert text.endswith("[Match limit of 5 reached; narrow the pattern or path]")
    last = await run_tool(GrepTool(), "c", {"pattern": "hitx"}, sandbox.ctx())
    assert len(last.text_content()) < 600
    assert last.text_content().endswith("…")


@pytest.mark.asyncio
async def test_find_by_name_and_by_path_glob(sandbox: Sandbox) -> None:
    _populate(sandbox)
    ctx = sandbox.ctx()
    by_name = await run_tool(FindTool(), "c", {"pattern": "*.py"}, ctx)
    assert by_name.text_content().splitlines() == ["pkg/a.py", "pkg/sub/b.py"]
    by_path = await run_tool(FindTool(), "c", {"pattern": "pkg/**/*.py"}, ctx)
    assert by_path.text_content().splitlines() == ["pkg/a.py", "pkg/sub/b.py"]
    dirs = await run_tool(FindTool(), "c", {"pattern": "su?", "path": "pkg"}, ctx)
    assert dirs.text_content() == "pkg/sub/"
    braces = await run_tool(FindTool(), "c", {"pattern": "*.{md,bin}"}, ctx)
    assert braces.text_content().splitlines() == ["pkg/blob.bin", "pkg/notes.md"]
    none = await run_tool(FindTool(), "c", {"pattern": "*.rs"}, ctx)
    assert none.text_content() == "(no matches)"


@pytest.mark.asyncio
async def test_find_limit_and_symlinked_dirs_not_entered(sandbox: Sandbox) -> None:
    for i in range(20):
        (sandbox.root / f"n{i:02}.txt").write_text("")
    result = await run_tool(FindTool(), "c", {"pattern": "n*.txt", "limit": 7}, sandbox.ctx())
    lines = result.text_content().splitlines()
    assert len([ln for ln in lines if ln.endswith(".txt")]) == 7
    assert result.text_content().endswith("[Result limit of 7 reached; narrow the pattern or path]")
    secret = await run_tool(FindTool(), "c", {"pattern": "secret.txt"}, sandbox.ctx())
    assert secret.text_content() == "(no matches)"


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("*.py", "a.py", True),
        ("*.py", "dir/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("src/**", "src/a/b", True),
        ("[!a]*", "b", True),
        ("[!a]*", "a", False),
        ("?.txt", "ab.txt", False),
        ("{a,b}.c", "b.c", True),
        ("a[", "a[", True),
    ],
)
def test_glob_to_regex(pattern: str, path: str, hit: bool) -> None:
    assert (glob_to_regex(pattern).match(path) is not None) is hit


@pytest.mark.asyncio
async def test_one_git_rule_for_every_read_only_tool(sandbox: Sandbox) -> None:
    """A hook's text is refused by read, and by grep, find and ls aimed into .git; the
    rest of .git stays readable by all of them."""
    hook = ".git/hooks/pre-commit"
    (sandbox.workspace.root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    read = await run_tool(ReadTool(), "c", {"path": hook}, sandbox.ctx())
    assert read.is_error and "git hook directories are protected" in read.text_content()
    for tool, args in (
        (GrepTool(), {"pattern": "exit|refs", "path": ".git"}),
        (FindTool(), {"pattern": "*", "path": ".git"}),
        (LsTool(), {"path": ".git"}),
    ):
        result = await run_tool(tool, "c", args, sandbox.ctx())
        text = result.text_content()
        assert "exit 0" not in text and "pre-commit" not in text and "hooks" not in text, (
            tool.name,
            text,
        )
        assert "HEAD" in text or "refs/heads/main" in text, (tool.name, text)
    for tool, args in (
        (GrepTool(), {"pattern": "exit", "path": ".git/hooks"}),
        (FindTool(), {"pattern": "*", "path": ".git/hooks"}),
        (LsTool(), {"path": ".git/hooks"}),
    ):
        refused = await run_tool(tool, "c", args, sandbox.ctx())
        assert refused.is_error and "git hook directories are protected" in refused.text_content()
    head = await run_tool(ReadTool(), "c", {"path": ".git/HEAD"}, sandbox.ctx())
    assert not head.is_error and "refs/heads/main" in head.text_content()
