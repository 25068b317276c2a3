"""The folder of issue 19, set up as Pi users have it: a global ``AGENTS.md`` in Pi's agent
folder under a temp home, the repository's ``AGENTS.md`` (a git repository), a
``CLAUDE.md`` in the sub-folder worked in, ``.pi/APPEND_SYSTEM.md``, one skill
``.pi/skills/deploy/SKILL.md`` and one prompt template ``.pi/prompts/review.md``."""

from __future__ import annotations

import subprocess
from pathlib import Path

GLOBAL = "Global rule: answer in English and keep a changelog."
REPO = "Repository rule: run `make check` before you commit."
SUB = "Sub-folder rule: this package is typed strictly."
APPEND = "Appended: never push to main."
SKILL = """---
name: deploy
description: Deploy the service to staging with the release script.
---
# Deploy

Run `scripts/release --staging` and watch the log.
"""
TEMPLATE = """---
description: Review a file
argument-hint: <file> [tone]
---
Review $1 and be ${@:2}. All arguments: $@
"""
TEMPLATE_PROMPT = "/review src/app.py quickly"


def build_folder(base: Path, home: Path) -> Path:
    """The folder of the issue; returns the working (sub-)folder."""
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "AGENTS.md").write_text(GLOBAL, encoding="utf-8")
    repo = base / "repo"
    sub = repo / "sub"
    (sub / ".pi" / "skills" / "deploy").mkdir(parents=True)
    (sub / ".pi" / "prompts").mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "AGENTS.md").write_text(REPO, encoding="utf-8")
    (sub / "CLAUDE.md").write_text(SUB, encoding="utf-8")
    (sub / ".pi" / "APPEND_SYSTEM.md").write_text(APPEND, encoding="utf-8")
    (sub / ".pi" / "skills" / "deploy" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (sub / ".pi" / "prompts" / "review.md").write_text(TEMPLATE, encoding="utf-8")
    return sub
