"""The system prompt from its parts, in the Pi CLI's order and shape.

1. the base: ``SYSTEM.md`` when there is one, else the built-in prompt naming the tools
   that are on (one line each) and guidelines that depend on them;
2. ``APPEND_SYSTEM.md``'s text;
3. ``# Project Context``: every context file under its path (global first, then from the
   filesystem root down to the working folder), then the app's per-folder instructions;
4. the skills (only when the read tool is on);
5. today's date and the working directory, last.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from desktop_agent.prompt._skills import Skill, format_skills


@dataclass(frozen=True, slots=True)
class ToolLine:
    """A tool that is on, as the prompt names it (any tool: built-in, MCP, …)."""

    name: str
    description: str


PromptSource: TypeAlias = Callable[[Sequence[ToolLine]], str]
"""What a harness asks at every turn for its system prompt, given the tools that are on."""


@dataclass(frozen=True, slots=True)
class ContextText:
    """A context file (or the app's instructions) under the heading ``label``."""

    label: str
    text: str


_BUILT_IN_LINES = {
    "read": "Read a file's contents (text or image)",
    "bash": "Run a shell command in the project folder",
    "edit": "Change a file by replacing exact pieces of its text",
    "write": "Create a file or replace all of it",
    "grep": "Search the contents of files for a pattern",
    "find": "Find files by glob pattern",
    "ls": "List a folder's contents",
}
"""One line for each built-in tool; any other tool is named by its description's first
line."""

_TOOL_GUIDELINES = {
    "read": ("Read files with the read tool rather than with cat or sed.",),
    "edit": (
        "Use edit for targeted changes: the old text must match the file exactly, once.",
        "Several changes to one file go in one edit call, as several replacements.",
    ),
    "write": ("Use write only for new files or to replace a whole file.",),
}

_LINE_LIMIT = 200


def tool_line(tool: ToolLine) -> str:
    """``- name: one line`` for the tool list."""
    line = _BUILT_IN_LINES.get(tool.name)
    if line is None:
        first = next((x for x in tool.description.splitlines() if x.strip()), "")
        line = " ".join(first.split())
        if len(line) > _LINE_LIMIT:
            line = line[: _LINE_LIMIT - 1].rstrip() + "…"
    return f"- {tool.name}: {line}" if line else f"- {tool.name}"


def _guidelines(names: Sequence[str]) -> list[str]:
    on = set(names)
    found: list[str] = []
    exploring = on & {"grep", "find", "ls"}
    if "bash" in on and not exploring:
        found.append("Use bash to look around the project (ls, rg, find).")
    elif "bash" in on:
        found.append("Explore with the grep, find and ls tools rather than through bash.")
    for name in names:
        found.extend(g for g in _TOOL_GUIDELINES.get(name, ()) if g not in found)
    found += [
        "Keep answers short and to the point.",
        "Name the files you read or change by their paths.",
    ]
    return found


def base_prompt(tools: Sequence[ToolLine]) -> str:
    """The built-in base prompt for the tools that are on."""
    listed = "\n".join(tool_line(t) for t in tools) or "(none)"
    guidelines = "\n".join(f"- {g}" for g in _guidelines([t.name for t in tools]))
    return (
        "You are a coding agent working in the user's project folder through Desktop "
        "Agent. You help by reading files, running commands, changing code and writing "
        "new files with the tools below.\n\n"
        f"Available tools:\n{listed}\n\n"
        f"Guidelines:\n{guidelines}"
    )


def assemble(
    *,
    tools: Sequence[ToolLine],
    custom_base: str | None,
    append: str | None,
    context: Sequence[ContextText],
    skills: Sequence[Skill],
    cwd: str,
    today: _dt.date,
) -> str:
    """The whole system prompt (see the module doc)."""
    prompt = custom_base if custom_base else base_prompt(tools)
    if append:
        prompt += f"\n\n{append}"
    if context:
        prompt += "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n"
        prompt += "".join(f"## {c.label}\n\n{c.text}\n\n" for c in context)
    if skills and any(t.name == "read" for t in tools):
        prompt += format_skills(skills)
    prompt += f"\nCurrent date: {today.isoformat()}"
    prompt += f"\nCurrent working directory: {cwd.replace(chr(92), '/')}"
    return prompt
