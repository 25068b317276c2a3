"""The app tells the model what the real Pi CLI tells it (issue 19, acceptance).

One folder set up as Pi users have it: a global ``AGENTS.md`` in Pi's agent folder under
a temp HOME, the repository's ``AGENTS.md``, a ``CLAUDE.md`` in the sub-folder worked in,
``.pi/APPEND_SYSTEM.md``, a skill ``.pi/skills/deploy/SKILL.md`` and a prompt template
``.pi/prompts/review.md``. The Pi CLI 0.74.2 (``pi -p``, offline, against the suite's
scripted server) and the app's workbench (built as app.py builds it, Pi's agent folder as
a global folder) each send a first request from that folder; both system prompts hold
every context file under its path in Pi's order (global, then from the root down), the
appended text, the skill's name, description and file, today's date and the working
directory, in the same order; and
``/review src/app.py quickly`` reaches the model exactly as the CLI sends it. Template
expansion is also compared with the CLI's own ``expandPromptTemplate`` case by case.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pytest

from desktop_agent.prompt import ProjectPrompt, Template, ToolLine, expand_template
from tests.helpers.pi import NODE_MODULES, Pi
from tests.helpers.pi_cli import MODEL, PROVIDER, PiCli
from tests.helpers.prompt_folder import (
    APPEND,
    GLOBAL,
    REPO,
    SUB,
    TEMPLATE_PROMPT,
    build_folder,
)
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.wire import last_user_text, system_text
from tests.helpers.workbench import make_workbench

pytestmark = pytest.mark.interop


def positions(text: str, parts: list[str]) -> list[int]:
    found = [text.find(p) for p in parts]
    assert -1 not in found, [p for p, i in zip(parts, found, strict=True) if i == -1]
    return found


def after_base(prompt: str) -> str:
    """From the appended text on: the part that comes from the folder, not the base."""
    return prompt[prompt.index(APPEND) :]


@pytest.mark.asyncio
async def test_first_request_and_template_match_the_pi_cli(pi: Pi, tmp_path: Path) -> None:
    with ProviderServer() as server:
        cli = PiCli(pi, server, tmp_path / "cli")
        cwd = build_folder(tmp_path, cli.home)
        server.script(Reply(text="ok"), Reply(text="ok"))
        cli.print("hello", cwd=cwd, resources=True)
        cli.print(TEMPLATE_PROMPT, cwd=cwd, resources=True)
        theirs = [r.body for r in server.requests if r.method == "POST"]
        assert cli.network_attempts == []

        # The app: a workbench as app.py builds it, Pi's agent folder as a global folder.
        server.requests.clear()
        wb = make_workbench(
            tmp_path / "data",
            server.model("openai-completions", MODEL, provider=PROVIDER),
            prompt_dirs=[cli.agent_dir, tmp_path / "data" / "config"],
            home=cli.home,
        )
        await wb.start()
        try:
            await wb.new_session(str(cwd))
            server.script(Reply(text="ok"), Reply(text="ok"))
            await wb.send("hello")
            await wb.send(TEMPLATE_PROMPT)
            assert wb.notices == {}
        finally:
            await wb.shutdown(stop=True)
            await wb.aclose()
        ours = [r.body for r in server.requests if r.method == "POST"]

    pi_prompt, our_prompt = system_text(theirs[0]), system_text(ours[0])
    skill_file = str(cwd / ".pi" / "skills" / "deploy" / "SKILL.md")
    ordered = [
        APPEND,
        "# Project Context",
        f"## {cli.agent_dir / 'AGENTS.md'}\n\n{GLOBAL}",
        f"## {cwd.parent / 'AGENTS.md'}\n\n{REPO}",
        f"## {cwd / 'CLAUDE.md'}\n\n{SUB}",
        "<name>deploy</name>",
        "<description>Deploy the service to staging with the release script.</description>",
        f"<location>{skill_file}</location>",
        f"Current date: {dt.date.today().isoformat()}",
        f"Current working directory: {cwd}",
    ]
    for prompt in (pi_prompt, our_prompt):
        found = positions(prompt, ordered)
        assert found == sorted(found), prompt
        assert prompt.endswith(f"Current working directory: {cwd}")
    # Everything from the folder on is the same text, character for character.
    assert after_base(our_prompt) == after_base(pi_prompt)
    # The base names the tools that are on, one line each.
    for name in ("read", "bash", "edit", "write"):
        assert f"\n- {name}: " in our_prompt

    sent = "Review src/app.py and be quickly. All arguments: src/app.py quickly"
    assert last_user_text(theirs[1]) == sent
    assert last_user_text(ours[1]) == sent


EXPANSION_CASES = [
    ("Review $1 and be ${@:2}. All arguments: $@", "/t src/app.py quickly"),
    ("$1-$2-$3", "/t a 'b c' \"d e\""),
    ("[$0][$10][$2]", "/t one"),
    ("${@:2} | ${@:2:1} | ${@:0} | ${@:9}", "/t a b c"),
    ("$@ / $ARGUMENTS", "/t x   y"),
    ("$1 $@", "/t $2"),
    ("<$@>", "/t"),
    ("<$@>", "/t\nsecond line"),
    ("<$1>", "/t 'unclosed quote"),
    ("<$1> ${name}", "/t é ü"),
    ("no placeholders", "/other x"),
    ("no placeholders", "not a command"),
]


def test_template_expansion_matches_pis_own_function(pi: Pi) -> None:
    """Our `expand_template` against the CLI's ``expandPromptTemplate`` for each case."""
    module = NODE_MODULES / "@earendil-works/pi-coding-agent/dist/core/prompt-templates.js"
    script = (
        f"import {{ expandPromptTemplate }} from {json.dumps(module.as_uri())};\n"
        "const cases = JSON.parse(process.argv[1]);\n"
        "console.log(JSON.stringify(cases.map(([body, text]) =>\n"
        "  expandPromptTemplate(text, [{ name: 't', content: body }]))));\n"
    )
    assert pi.node is not None, pi.setup_error
    done = subprocess.run(
        [pi.node, "--input-type=module", "-e", script, json.dumps(EXPANSION_CASES)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    theirs = json.loads(done.stdout)
    ours = [
        expand_template(text, [Template("t", "", body, "t.md")]) for body, text in EXPANSION_CASES
    ]
    assert ours == theirs


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def skill(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"


@pytest.mark.asyncio
async def test_with_system_md_the_whole_prompt_is_pis(pi: Pi, tmp_path: Path) -> None:
    """With ``SYSTEM.md`` nothing of the base is ours: the whole system prompt is the
    CLI's, character for character, with skills in every folder Pi reads and those its
    settings name (in its order, a second skill of a name left out), context files with
    CRLF and Unicode, XML-escaped descriptions; ``/skill:name`` and a template from a
    folder of the settings send what the CLI sends."""
    with ProviderServer() as server:
        cli = PiCli(pi, server, tmp_path / "cli")
        home, agent = cli.home, cli.agent_dir
        repo = tmp_path / "repo"
        cwd = repo / "pkg" / "sub"
        cwd.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        write(cwd / ".pi" / "SYSTEM.md", "You are the project's own agent.\n\nBe terse.")
        write(agent / "APPEND_SYSTEM.md", "Global append (the project has none).")
        write(agent / "CLAUDE.md", "Global CLAUDE.md, used: no AGENTS.md there.")
        write(repo / "AGENTS.md", "Line one\r\nLine two — ünïcode ✓\r\n")
        write(repo / "pkg" / "CLAUDE.MD", "Upper-case name, found on Linux.")
        write(cwd / ".pi" / "skills" / "zeta" / "SKILL.md", skill("zeta", 'Last <by> name & "so"'))
        write(cwd / ".pi" / "skills" / "alpha" / "SKILL.md", skill("alpha", "First by name"))
        write(cwd / ".pi" / "skills" / "notes.md", skill("notes", "A top-level file skill"))
        write(
            repo / "pkg" / ".agents" / "skills" / "mid" / "SKILL.md", skill("mid", "From .agents")
        )
        write(repo / ".agents" / "skills" / "root" / "SKILL.md", skill("root", "At the git root"))
        write(agent / "skills" / "global" / "SKILL.md", skill("global", "Pi's global skill"))
        write(agent / "skills" / "alpha" / "SKILL.md", skill("alpha", "Shadowed by the project"))
        write(home / ".agents" / "skills" / "home" / "SKILL.md", skill("home", "~/.agents skill"))
        write(
            cwd / ".pi" / "skills" / "hidden" / "SKILL.md",
            "---\nname: hidden\ndescription: Only by command\ndisable-model-invocation: true\n"
            "---\nHidden body.\n",
        )
        # Skills and prompts named in Pi's settings (as a Claude Code user adds theirs).
        write(home / ".claude" / "skills" / "claude" / "SKILL.md", skill("claude", "From ~"))
        write(repo / "shared" / "lint" / "SKILL.md", skill("lint", "From the project settings"))
        write(home / "my-prompts" / "deep" / "nested.md", "A nested template: $1")
        write(cwd / ".pi" / "settings.json", json.dumps({"skills": ["../../../shared"]}))
        settings = json.loads((agent / "settings.json").read_text(encoding="utf-8"))
        settings.update(skills=["~/.claude/skills"], prompts=["~/my-prompts"])
        write(agent / "settings.json", json.dumps(settings))
        server.script(Reply(text="ok"), Reply(text="ok"), Reply(text="ok"))
        cli.print("hello", cwd=cwd, resources=True)
        cli.print("/skill:hidden  run it now ", cwd=cwd, resources=True)
        cli.print("/nested 'from settings'", cwd=cwd, resources=True)
        theirs = [r.body for r in server.requests if r.method == "POST"]

        project = ProjectPrompt(str(cwd), global_dirs=[str(agent)], home=str(home))
        report = project.report([ToolLine(n, "") for n in ("read", "bash", "edit", "write")])
        expanded, problem = project.expand("/skill:hidden  run it now ")
        nested, _ = project.expand("/nested 'from settings'")
    shadowed, used = agent / "skills" / "alpha" / "SKILL.md", cwd / ".pi/skills/alpha/SKILL.md"
    assert problem is None
    assert [str(p) for p in report.problems] == [
        f"{shadowed}: a second skill named 'alpha': skipped ({used} is used)"
    ]
    assert report.text == system_text(theirs[0])
    assert expanded == last_user_text(theirs[1])
    assert nested == last_user_text(theirs[2]) == "A nested template: from settings"
    assert "<name>claude</name>" in report.text and "<name>lint</name>" in report.text


@pytest.mark.asyncio
async def test_ignore_files_leave_out_what_pi_leaves_out(pi: Pi, tmp_path: Path) -> None:
    """``.gitignore``/``.ignore``/``.fdignore`` in skill and template folders: the skills
    listed and the templates expanded are the Pi CLI's (the whole prompt, with SYSTEM.md)."""
    with ProviderServer() as server:
        cli = PiCli(pi, server, tmp_path / "cli")
        cwd = tmp_path / "w"
        skills, prompts = cwd / ".pi" / "skills", cwd / ".pi" / "prompts"
        write(cwd / ".pi" / "SYSTEM.md", "System.")
        for name in ("kept", "drafts", "Wip", "deep-ok", "negated"):
            write(skills / name / "SKILL.md", skill(name.lower(), f"Skill {name}"))
        write(skills / "group" / "inner" / "SKILL.md", skill("inner", "Below a group"))
        write(skills / "group" / "old" / "SKILL.md", skill("old", "Ignored inside the group"))
        write(skills / "top.md", skill("top", "A top-level file"))
        write(skills / "scratch.md", skill("scratch", "Ignored top-level file"))
        write(skills / ".gitignore", "drafts/\n# a comment\nwip\nscratch.md\nneg*\n!negated\n")
        write(skills / ".fdignore", "/deep-ok/nothing\n")
        write(skills / "group" / ".ignore", "old/\n")
        write(prompts / "keep.md", "Kept template: $1")
        write(prompts / "private.md", "Private template")
        write(prompts / ".gitignore", "private.md\n")
        server.script(*(Reply(text="ok") for _ in range(3)))
        cli.print("hello", cwd=cwd, resources=True)
        cli.print("/keep it", cwd=cwd, resources=True)
        cli.print("/private x", cwd=cwd, resources=True)
        theirs = [r.body for r in server.requests if r.method == "POST"]

        project = ProjectPrompt(str(cwd), global_dirs=[str(cli.agent_dir)], home=str(cli.home))
        report = project.report([ToolLine("read", "")])
        sent = [project.expand(t)[0] for t in ("/keep it", "/private x")]
    assert report.text == system_text(theirs[0])
    assert [s.name for s in report.skills] == ["deep-ok", "inner", "kept", "negated", "top"]
    assert sent == [last_user_text(b) for b in theirs[1:]] == ["Kept template: it", "/private x"]
