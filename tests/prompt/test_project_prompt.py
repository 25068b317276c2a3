"""`desktop_agent.prompt`: the system prompt of a folder, its files and their failures.

Real files in a temp folder (as root, permissions do not bind: an unreadable file is a
link to ``/proc/self/mem``, whose first page cannot be read; a loop is a link to itself).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from desktop_agent.prompt import (
    INSTRUCTIONS_LABEL,
    MAX_CONTEXT_BYTES,
    Problem,
    ProjectPrompt,
    Template,
    ToolLine,
    expand_template,
    parse_command_args,
    substitute_args,
    unknown_placeholders,
)
from desktop_agent.prompt._ignore import prefixed

TOOLS = [
    ToolLine("read", "Read a file."),
    ToolLine("bash", "Run a command."),
    ToolLine("mcp__docs__search", "Search the team's docs.\nSecond line is left out."),
]
TODAY = dt.date(2026, 5, 17)


def project(cwd: Path, *globals_: Path, instructions: str = "") -> ProjectPrompt:
    return ProjectPrompt(
        str(cwd),
        global_dirs=[str(g) for g in globals_],
        instructions=lambda: instructions,
        today=lambda: TODAY,
    )


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def messages(problems: tuple[Problem, ...] | list[Problem], path: Path) -> list[str]:
    return [p.message for p in problems if p.path == str(path)]


def test_parts_in_pi_order_with_tools_and_instructions(tmp_path: Path) -> None:
    pi_dir, app_dir = tmp_path / "pi", tmp_path / "app"
    cwd = tmp_path / "repo" / "a" / "b"
    cwd.mkdir(parents=True)
    write(pi_dir / "AGENTS.md", "pi global")
    write(app_dir / "CLAUDE.md", "app global")
    write(tmp_path / "repo" / "CLAUDE.md", "repo claude")
    write(tmp_path / "repo" / "AGENTS.md", "repo agents")  # AGENTS.md comes first
    write(cwd / "AGENTS.md", "deepest")
    write(app_dir / "APPEND_SYSTEM.md", "global append")
    prompt = project(cwd, pi_dir, app_dir, instructions="Use tabs.").system_prompt(TOOLS)
    order = [
        "- read: Read a file's contents",
        "- mcp__docs__search: Search the team's docs.\n",
        "global append",
        f"## {pi_dir / 'AGENTS.md'}\n\npi global",
        f"## {app_dir / 'CLAUDE.md'}\n\napp global",
        f"## {tmp_path / 'repo' / 'AGENTS.md'}\n\nrepo agents",
        f"## {cwd / 'AGENTS.md'}\n\ndeepest",
        f"## {INSTRUCTIONS_LABEL}\n\nUse tabs.",
        "Current date: 2026-05-17",
    ]
    found = [prompt.index(x) for x in order]
    assert found == sorted(found)
    assert "repo claude" not in prompt and "Second line" not in prompt
    assert prompt.endswith(f"\nCurrent working directory: {cwd}")
    # Without bash's exploring siblings, the bash guideline; with them, the other one.
    assert "Use bash to look around" in prompt
    with_grep = project(cwd).system_prompt([*TOOLS, ToolLine("grep", "")])
    assert "Explore with the grep, find and ls tools" in with_grep


def test_system_md_replaces_the_base_and_an_empty_one_is_named(tmp_path: Path) -> None:
    cwd = tmp_path / "w"
    system = write(cwd / ".pi" / "SYSTEM.md", "You are a poet.")
    p = project(cwd)
    assert p.system_prompt(TOOLS).startswith("You are a poet.\nCurrent date: ")
    system.write_text("  \n", encoding="utf-8")
    report = p.report(TOOLS)
    assert report.text.startswith("You are a coding agent")
    assert messages(report.problems, system) == [
        "is empty: the built-in base prompt is used instead"
    ]


def test_files_are_read_again_only_when_they_change(tmp_path: Path) -> None:
    cwd = tmp_path / "w"
    agents = write(cwd / "AGENTS.md", "one")
    write(cwd / ".pi" / "skills" / "s" / "SKILL.md", "---\ndescription: d\n---\nbody")
    p = project(cwd)
    assert "one" in p.system_prompt(TOOLS)
    reads = p.cache.reads
    for _ in range(3):
        p.system_prompt(TOOLS)
    assert p.cache.reads == reads
    agents.write_text("two, longer", encoding="utf-8")
    assert "two, longer" in p.system_prompt(TOOLS)
    assert p.cache.reads == reads + 1


def test_bad_context_files_are_named_never_dropped_silently(tmp_path: Path) -> None:
    cwd = tmp_path / "w"
    big = write(tmp_path / "AGENTS.md", "é" * MAX_CONTEXT_BYTES)  # 128 KB of 2-byte chars
    latin1 = write(cwd / "AGENTS.md", "caf\xe9".encode("latin-1"))
    write(cwd / "CLAUDE.md", "the next name is used")
    looped = tmp_path / "w" / "sub" / "AGENTS.md"
    looped.parent.mkdir(parents=True)
    os.symlink(looped, looped)
    unreadable = tmp_path / "w" / "sub" / "deeper" / "AGENTS.md"
    unreadable.parent.mkdir()
    os.symlink("/proc/self/mem", unreadable)
    report = project(unreadable.parent).report(TOOLS)
    assert messages(report.problems, big) == [
        f"is {2 * MAX_CONTEXT_BYTES:,} bytes, over the 64 KB limit: only its first "
        f"{MAX_CONTEXT_BYTES:,} bytes are used"
    ]
    assert "é" * (MAX_CONTEXT_BYTES // 2) + "\n" in report.text
    assert messages(report.problems, latin1) == ["is not UTF-8 text (byte 3): skipped"]
    assert "the next name is used" in report.text
    assert messages(report.problems, looped) == ["is a symlink loop: skipped"]
    [problem] = messages(report.problems, unreadable)
    assert problem.startswith("cannot be read (") and problem.endswith("): skipped")
    assert [s.path for s in report.sources if s.kind == "context"] == [
        str(big),
        str(cwd / "CLAUDE.md"),
    ]


def test_skills_found_named_and_bad_ones_skipped(tmp_path: Path) -> None:
    cwd = tmp_path / "w"
    home = tmp_path / "home"
    (cwd / ".git").mkdir(parents=True)
    skills = cwd / ".pi" / "skills"
    good = write(skills / "deploy" / "SKILL.md", "---\nname: deploy\ndescription: Ship <it>\n---\n")
    broken = write(skills / "broken" / "SKILL.md", "---\nname: [unclosed\ndescription: x\n---\n")
    bare = write(skills / "bare" / "SKILL.md", "---\nname: bare\n---\nNo description.")
    odd = write(skills / "Odd_Name" / "SKILL.md", "---\ndescription: kept\n---\n")
    top = write(skills / "notes.md", "---\nname: notes\ndescription: a top-level file\n---\n")
    write(skills / "deploy" / "nested" / "SKILL.md", "---\ndescription: never searched\n---\n")
    agents = write(cwd / ".agents" / "skills" / "x" / "SKILL.md", "---\ndescription: y\n---\n")
    shadow = write(home / ".agents" / "skills" / "deploy" / "SKILL.md", "---\ndescription: z\n---")
    p = ProjectPrompt(str(cwd), home=str(home), today=lambda: TODAY)
    report = p.report(TOOLS)
    assert [s.name for s in report.skills] == ["Odd_Name", "deploy", "notes", "x"]
    assert "<description>Ship &lt;it&gt;</description>" in report.text
    assert f"<location>{good}</location>" in report.text
    assert f"<location>{top}</location>" in report.text and str(agents) in report.text
    assert messages(report.problems, broken) == [
        "skill with broken front matter (line 3): did not find expected ',' or ']': skipped"
    ]
    assert messages(report.problems, bare) == ["skill without a description: skipped"]
    assert messages(report.problems, odd) == [
        "skill loaded, but the name has characters other than a-z, 0-9 and hyphens"
    ]
    assert messages(report.problems, shadow) == [
        f"a second skill named 'deploy': skipped ({good} is used)"
    ]
    # Without the read tool the model cannot open a skill: none is listed.
    assert "<available_skills>" not in p.system_prompt([ToolLine("bash", "")])


def test_skill_command_sends_the_body(tmp_path: Path) -> None:
    cwd = tmp_path / "w"
    skill = write(
        cwd / ".pi" / "skills" / "deploy" / "SKILL.md",
        "---\ndescription: d\n---\n\n# Deploy\nRun it.\n",
    )
    p = project(cwd)
    text, problem = p.expand("/skill:deploy to staging ")
    assert problem is None
    assert text == (
        f'<skill name="deploy" location="{skill}">\n'
        f"References are relative to {skill.parent}.\n\n# Deploy\nRun it.\n</skill>\n\n"
        "to staging"
    )
    assert p.expand("/skill:unknown x") == ("/skill:unknown x", None)


def test_templates_expand_and_bad_ones_are_named(tmp_path: Path) -> None:
    cwd, app_dir = tmp_path / "w", tmp_path / "app"
    write(cwd / ".pi" / "prompts" / "review.md", "---\ndescription: Review\n---\nLook at $1")
    write(app_dir / "prompts" / "review.md", "global one loses")
    odd = write(app_dir / "prompts" / "odd.md", "Hello ${name} and ${@:2}")
    broken = write(app_dir / "prompts" / "broken.md", "---\n: : :\n  - x\n---\nbody")
    p = project(cwd, app_dir)
    report = p.report(TOOLS)
    assert [(t.name, t.description) for t in report.templates] == [
        ("review", "Review"),
        ("odd", "Hello ${name} and ${@:2}"),
    ]
    assert messages(report.problems, odd) == [
        "prompt template has an unknown placeholder ${name}: it is sent as written"
    ]
    assert messages(report.problems, broken) == [
        "prompt template with broken front matter (line 2): did not find expected key: skipped"
    ]
    assert p.expand("/review a.py b") == ("Look at a.py", None)
    assert p.expand("/odd x y z") == ("Hello ${name} and y z", None)
    assert p.expand("/nothing here") == ("/nothing here", None)
    assert p.expand("review a") == ("review a", None)


@pytest.mark.parametrize(
    ("body", "args", "sent"),
    [
        ("$1-$2-$3", "a 'b c' \"d e\"", "a-b c-d e"),
        ("[$0][$10][$2]", "one", "[][][]"),
        ("${@:2} | ${@:2:1} | ${@:0}", "a b c", "b c | b | a b c"),
        ("$@ / $ARGUMENTS", "x  y", "x y / x y"),
        # Positionals first, then $@ over the result, as Pi does.
        ("$1 $@", "$2", "$2 $2"),
    ],
)
def test_argument_substitution(body: str, args: str, sent: str) -> None:
    assert substitute_args(body, parse_command_args(args)) == sent


def test_template_command_forms() -> None:
    templates = [Template("t", "", "<$@>", "t.md")]
    assert expand_template("/t", templates) == "<>"
    assert expand_template("/t\nline two", templates) == "<line two>"
    assert unknown_placeholders("${@:1} ${@:1:2} ${x} ${") == ["${x}", "${"]


def test_looping_links_among_skills_and_templates_are_named(tmp_path: Path) -> None:
    cwd = tmp_path / "w"
    skills = cwd / ".pi" / "skills"
    prompts = cwd / ".pi" / "prompts"
    skills.mkdir(parents=True)
    prompts.mkdir()
    os.symlink(skills / "loop", skills / "loop")
    os.symlink(prompts / "loop.md", prompts / "loop.md")
    os.symlink(tmp_path / "nowhere.md", prompts / "dangling.md")  # skipped, as Pi does
    write(prompts / "fine.md", "Fine.")
    report = project(cwd).report(TOOLS)
    assert messages(report.problems, skills / "loop") == ["is a symlink loop: skipped"]
    assert messages(report.problems, prompts / "loop.md") == ["is a symlink loop: skipped"]
    assert messages(report.problems, prompts / "dangling.md") == []
    assert [t.name for t in report.templates] == ["fine"]


def test_pi_settings_name_skills_and_prompts_and_bad_entries_are_named(tmp_path: Path) -> None:
    cwd, agent, home = tmp_path / "w", tmp_path / "agent", tmp_path / "home"
    write(home / "claude" / "x" / "SKILL.md", "---\ndescription: from the home\n---\n")
    write(cwd / "notes.txt", "not markdown")
    project_settings = write(
        cwd / ".pi" / "settings.json",
        '{"skills": ["~/claude", "missing", "!x", "../notes.txt"], "prompts": "p"}',
    )
    broken = write(agent / "settings.json", "{not json")
    p = ProjectPrompt(str(cwd), global_dirs=[str(agent)], home=str(home), today=lambda: TODAY)
    report = p.report(TOOLS)
    assert [s.name for s in report.skills] == ["x"]
    assert messages(report.problems, project_settings) == [
        'the pattern "!x" in "skills" is not supported: ignored',
        '"prompts" is not a list of paths: ignored',
    ]
    assert messages(report.problems, cwd / ".pi" / "missing") == [
        f"is listed in {project_settings} but does not exist: skipped"
    ]
    assert messages(report.problems, cwd / "notes.txt") == [
        f"is listed in {project_settings} but is not a .md file: skipped"
    ]
    [bad_json] = messages(report.problems, broken)
    assert (
        bad_json.startswith("is not valid JSON (") and "skills and prompts are not read" in bad_json
    )


def test_ignore_rules_are_pis_and_a_bad_ignore_file_is_named(tmp_path: Path) -> None:
    assert prefixed("  ", "a/") is None and prefixed("# note", "a/") is None
    assert prefixed("\\#hash", "") == "\\#hash"
    assert prefixed("!keep", "a/") == "!a/keep" and prefixed("\\!bang", "") == "!bang"
    assert prefixed("/rooted", "a/") == "a/rooted"
    cwd = tmp_path / "w"
    skills = cwd / ".pi" / "skills"
    write(skills / "one" / "SKILL.md", "---\ndescription: d\n---\n")
    bad = write(skills / ".ignore", b"\xff\xfe")
    report = project(cwd).report(TOOLS)
    assert [s.name for s in report.skills] == ["one"]
    assert messages(report.problems, bad) == ["ignore file is not UTF-8 text (byte 0): skipped"]
