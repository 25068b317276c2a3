"""The system prompt of a turn (issue 19): assembling it from unchanged files.

A folder 20 levels deep with an ``AGENTS.md`` in each level (20 context files of ~2 KB)
and 50 skills in ``.pi/skills``: the prompt of a turn, with every file unchanged (each is
only stat'ed, `FileCache` keeps what it read), against reading and parsing them all once
(a new `ProjectPrompt`, the first turn of a session). The target: <= 5 ms a turn.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from typing import TYPE_CHECKING

from desktop_agent.prompt import ProjectPrompt, ToolLine

if TYPE_CHECKING:
    from benchmarks._report import Report

TARGET_MS = 5.0
CONTEXT_FILES = 20
SKILLS = 50
TURNS = 200
TOOLS = [
    ToolLine(name, f"The {name} tool.")
    for name in ("read", "write", "edit", "bash", "ls", "grep", "find")
]


def build_folder(root: str) -> str:
    """The folder of the benchmark under ``root``; returns the working folder."""
    folder = root
    rule = "- Keep functions short and typed; run the tests before committing.\n" * 30
    for level in range(CONTEXT_FILES):
        folder = os.path.join(folder, f"level{level:02d}")
        os.makedirs(folder)
        with open(os.path.join(folder, "AGENTS.md"), "w", encoding="utf-8") as f:
            f.write(f"# Rules of level {level}\n\n{rule}")
    for i in range(SKILLS):
        skill = os.path.join(folder, ".pi", "skills", f"skill-{i:02d}")
        os.makedirs(skill)
        with open(os.path.join(skill, "SKILL.md"), "w", encoding="utf-8") as f:
            f.write(
                f"---\nname: skill-{i:02d}\ndescription: Does task number {i} the way the "
                f"team wants it done.\n---\n# Skill {i}\n\n" + "Step.\n" * 40
            )
    return folder


def bench_prompt(report: Report) -> None:
    report.section(
        f"system prompt of a turn ({CONTEXT_FILES} context files, {SKILLS} skills, unchanged)"
    )
    with tempfile.TemporaryDirectory(prefix="bench-prompt-") as root:
        cwd = build_folder(root)
        colds = []
        for _ in range(5):
            start = time.perf_counter()
            prompt = ProjectPrompt(cwd)
            text = prompt.system_prompt(TOOLS)
            colds.append(time.perf_counter() - start)
        reads = prompt.cache.reads
        warm = []
        for _ in range(TURNS):
            start = time.perf_counter()
            again = prompt.system_prompt(TOOLS)
            warm.append(time.perf_counter() - start)
        assert again == text and prompt.cache.reads == reads, "an unchanged file was read again"
        report.note(
            f"prompt: {len(text):,} characters; {reads} files read once, none again in "
            f"{TURNS} turns"
        )
        report.line(
            "prompt of a turn, files unchanged (median)",
            statistics.median(warm) * 1000,
            "ms",
            baselines=[("reading and parsing them all once", statistics.median(colds) * 1000)],
            target=TARGET_MS,
        )
