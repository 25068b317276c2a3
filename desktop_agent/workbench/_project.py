"""What the agent is told about its project, for the window (issue 19).

`ProjectContext` keeps one `desktop_agent.prompt.ProjectPrompt` per project folder (so
each file is read once and again only when it changed) and gives the window what it
needs of it: the composer's ``/`` completions (the app's commands, prompt templates and
skills, each with its description), the expansion of ``/template`` and ``/skill:name``
when sending, the Context view (the exact system prompt of the next request, its files
with token estimates, what was skipped and why) and the per-folder Instructions the app
keeps. Reading runs on a worker thread; nothing here imports Qt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from desktop_agent.config import Settings
from desktop_agent.prompt import Problem, ProjectPrompt, PromptReport, Template, ToolLine

CompletionKind = Literal["command", "template", "skill"]


@dataclass(frozen=True, slots=True)
class Completion:
    """One entry of the composer's ``/`` list."""

    name: str
    """Without the slash: ``compact``, ``review``, ``skill:deploy``."""
    hint: str
    description: str
    kind: CompletionKind

    @property
    def text(self) -> str:
        return f"/{self.name}"


APP_COMMANDS: tuple[Completion, ...] = (
    Completion("new", "", "Start a new session in this folder", "command"),
    Completion(
        "compact", "[instructions]", "Summarise the conversation so far to free context", "command"
    ),
    Completion("model", "[provider/id]", "Choose the model", "command"),
    Completion("name", "[name]", "Name this session", "command"),
    Completion("fork", "", "Copy the current branch into a new session", "command"),
    Completion("export", "[html|markdown|jsonl]", "Export this session to a file", "command"),
    Completion("copy", "", "Copy the last reply", "command"),
    Completion("settings", "", "Open the settings", "command"),
    Completion(
        "context", "", "Show what the model is told: the system prompt and its files", "command"
    ),
)
"""The app's own commands, typed in the composer (they are never sent to the model)."""

NO_SESSION = "Open a session first: the command works on the open session."

_APP_NAMES = frozenset(c.name for c in APP_COMMANDS)


def shadowed(templates: Sequence[Template]) -> list[Problem]:
    """Templates named like one of the app's commands: the command runs, never them."""
    return [
        Problem(t.file_path, f"prompt template /{t.name} has the name of an app command: skipped")
        for t in templates
        if t.name in _APP_NAMES
    ]


def _problems(prompt: ProjectPrompt) -> list[Problem]:
    parts = prompt.parts()
    return [*parts.problems, *shadowed(parts.templates)]


def parse_app_command(text: str) -> tuple[str, str] | None:
    """``(name, arguments)`` when ``text`` is one of the app's commands."""
    if not text.startswith("/"):
        return None
    name, _, args = text[1:].partition(" ")
    name, _, more = name.partition("\n")
    if name not in _APP_NAMES:
        return None
    return name, f"{more} {args}".strip()


@dataclass(frozen=True, slots=True)
class ContextView:
    """What the Context view shows for the open session's folder."""

    folder: str
    report: PromptReport
    instructions: str
    global_dirs: tuple[str, ...] = ()
    """Where global ``AGENTS.md``, ``skills/`` and ``prompts/`` are read from."""


def problems_notice(problems: Sequence[Problem]) -> tuple[str, str, str] | None:
    """``(path, problem, more)`` of the notice naming the project files that could not
    be used as they are (None: nothing to say)."""
    if not problems:
        return None
    more = "" if len(problems) == 1 else f" (and {len(problems) - 1} more: see View → Context)"
    return problems[0].path, problems[0].message, more


class ProjectContext:
    """The project prompts of the folders the app works in."""

    def __init__(
        self,
        *,
        settings: Callable[[], Settings],
        save_settings: Callable[[], None],
        global_dirs: Sequence[Path] = (),
        home: Path | None = None,
    ) -> None:
        self._settings = settings
        self._save_settings = save_settings
        self.global_dirs = [str(d) for d in global_dirs]
        self.home = str(home) if home is not None else None
        self._prompts: dict[str, ProjectPrompt] = {}

    def prompt(self, folder: str) -> ProjectPrompt:
        """The folder's prompt source (one per folder, kept with its file cache)."""
        found = self._prompts.get(folder)
        if found is None:
            found = ProjectPrompt(
                folder,
                global_dirs=self.global_dirs,
                home=self.home,
                instructions=lambda: self.instructions(folder),
            )
            self._prompts[folder] = found
        return found

    def instructions(self, folder: str) -> str:
        return self._settings().instructions.get(folder, "")

    def set_instructions(self, folder: str, text: str) -> None:
        """Keep (or with blank ``text`` drop) the folder's Instructions; next turn uses them."""
        settings = self._settings()
        kept = dict(settings.instructions)
        if text.strip():
            kept[folder] = text
        else:
            kept.pop(folder, None)
        settings.instructions = kept
        self._save_settings()

    async def completions(self, folder: str | None) -> list[Completion]:
        """The app's commands, then the folder's prompt templates and skills."""
        found = list(APP_COMMANDS)
        if folder is None:
            return found
        parts = await asyncio.to_thread(self.prompt(folder).parts)
        found += [
            Completion(t.name, t.argument_hint, t.description, "template")
            for t in parts.templates
            if t.name not in _APP_NAMES
        ]
        found += [Completion(f"skill:{s.name}", "", s.description, "skill") for s in parts.skills]
        return found

    async def expand(self, folder: str | None, text: str) -> tuple[str, list[Problem]]:
        """What is sent for ``text`` and the folder's files that could not be used."""
        if folder is None:
            return text, []
        prompt = self.prompt(folder)

        def work() -> tuple[str, list[Problem]]:
            expanded, problem = prompt.expand(text)
            problems = _problems(prompt)
            return expanded, problems + ([problem] if problem is not None else [])

        return await asyncio.to_thread(work)

    async def problems(self, folder: str) -> list[Problem]:
        """The folder's files that could not be used as they are."""
        return await asyncio.to_thread(_problems, self.prompt(folder))

    async def view(self, folder: str, tools: Sequence[ToolLine]) -> ContextView:
        report = await asyncio.to_thread(self.prompt(folder).report, tools)
        report = replace(report, problems=(*report.problems, *shadowed(report.templates)))
        return ContextView(folder, report, self.instructions(folder), tuple(self.global_dirs))
