"""`ProjectPrompt`: what the agent is told about a project folder, re-read when it changes.

Folders read, as the Pi CLI reads them (``.pi`` is Pi's project folder):

* global folders, in order: Pi's agent folder (``~/.pi/agent`` or ``PI_CODING_AGENT_DIR``)
  and the app's own config folder, each with ``AGENTS.md``/``CLAUDE.md``, ``SYSTEM.md``,
  ``APPEND_SYSTEM.md``, ``skills/`` and ``prompts/``; plus ``~/.agents/skills``;
* the project: ``.pi/SYSTEM.md`` and ``.pi/APPEND_SYSTEM.md`` (before the global ones),
  ``.pi/skills``, ``.pi/prompts``, ``.agents/skills`` in the working folder and each
  parent up to the git repository's root, and in every folder from the filesystem root
  down to the working folder the first of ``AGENTS.md``, ``AGENTS.MD``, ``CLAUDE.md``,
  ``CLAUDE.MD``.

Every turn stats these files; only a changed one is read again (`FileCache`).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop_agent.prompt._assemble import ContextText, ToolLine, assemble
from desktop_agent.prompt._files import (
    MAX_CONTEXT_BYTES,
    FileCache,
    FileText,
    ParsedFiles,
    Problem,
    describe_os_error,
)
from desktop_agent.prompt._skills import (
    Skill,
    SkillLoader,
    SkillMode,
    expand_skill_command,
    skill_files,
)
from desktop_agent.prompt._templates import (
    Template,
    TemplateLoader,
    expand_template,
    template_files,
)

PROJECT_FOLDER = ".pi"
CONTEXT_NAMES = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
INSTRUCTIONS_LABEL = "Instructions for this folder (kept by Desktop Agent)"
Scope = Literal["project", "global"]
SCOPES: tuple[Scope, ...] = ("project", "global")
"""Pi reads the project's skills and templates first: the first of a name wins."""


def estimate_tokens(text: str) -> int:
    """About four characters a token (the estimate Pi uses too)."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True, slots=True)
class Source:
    """A file the prompt holds (or the app's instructions, ``path`` "")."""

    kind: str
    """``system`` (SYSTEM.md), ``append``, ``context``, ``instructions`` or ``skill``."""
    path: str
    tokens: int


@dataclass(frozen=True, slots=True)
class Parts:
    """Everything read for a prompt, before it is assembled."""

    custom_base: str | None
    append: str | None
    context: tuple[ContextText, ...]
    skills: tuple[Skill, ...]
    templates: tuple[Template, ...]
    sources: tuple[Source, ...]
    problems: tuple[Problem, ...]


@dataclass(frozen=True, slots=True)
class PromptReport:
    """What the Context view shows: the prompt, its sources and what was skipped."""

    text: str
    tokens: int
    sources: tuple[Source, ...]
    problems: tuple[Problem, ...]
    templates: tuple[Template, ...] = field(default=())
    skills: tuple[Skill, ...] = field(default=())


def _parse_settings(read: FileText) -> tuple[dict[str, Any] | None, tuple[Problem, ...]]:
    """Pi's ``settings.json`` (only its ``skills`` and ``prompts`` are used here)."""
    if read.text is None:
        return None, (Problem(read.path, str(read.problem)),)
    try:
        data = json.loads(read.text)
    except ValueError as exc:
        return None, (
            Problem(read.path, f"is not valid JSON ({exc}): its skills and prompts are not read"),
        )
    if not isinstance(data, dict):
        return None, (
            Problem(read.path, "is not a JSON object: its skills and prompts are not read"),
        )
    return data, ()


def _git_root(start: str) -> str | None:
    folder = start
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _ancestors(cwd: str) -> list[str]:
    """``cwd`` and its parents up to the filesystem root, deepest first."""
    folders = [cwd]
    while (parent := os.path.dirname(folders[-1])) != folders[-1]:
        folders.append(parent)
    return folders


class ProjectPrompt:
    """The system prompt of a project folder (a harness's prompt source).

    ``global_dirs``: Pi's agent folder and the app's config folder (either may be
    missing). ``home``: for ``~/.agents/skills`` (None: not read). ``instructions``: the
    app's per-folder text, asked for at every turn. Safe to call from worker threads.
    """

    def __init__(
        self,
        cwd: str,
        *,
        global_dirs: Sequence[str] = (),
        home: str | None = None,
        instructions: Callable[[], str] = lambda: "",
        today: Callable[[], _dt.date] = _dt.date.today,
        cache: FileCache | None = None,
    ) -> None:
        self.cwd = os.path.abspath(cwd)
        self._project_dir = os.path.join(self.cwd, PROJECT_FOLDER)
        self.global_dirs = [os.path.abspath(d) for d in global_dirs]
        self.home = os.path.abspath(home) if home else None
        self.instructions = instructions
        self.today = today
        self.cache = cache or FileCache()
        self._skills = SkillLoader(self.cache)
        self._templates = TemplateLoader(self.cache)
        self._settings = ParsedFiles(self.cache, _parse_settings)
        self._lock = threading.Lock()
        self._last: Parts | None = None

    # ------------------------------------------------------------- reading

    def _first_file(self, paths: Sequence[str], problems: list[Problem]) -> str | None:
        for path in paths:
            found = self.cache.stat(path)
            if isinstance(found, OSError):
                problems.append(Problem(path, describe_os_error(found)))
            elif found is not None:
                return path
        return None

    def _context_files(self, problems: list[Problem]) -> list[tuple[str, str]]:
        """``(path, text)`` of the context files in order (read failures named)."""
        folders = [*self.global_dirs, *reversed(_ancestors(self.cwd))]
        files: list[tuple[str, str]] = []
        seen: set[str] = set()
        for folder in folders:
            for name in CONTEXT_NAMES:
                path = os.path.join(folder, name)
                found = self.cache.stat(path)
                if found is None:
                    continue
                if isinstance(found, OSError):
                    problems.append(Problem(path, describe_os_error(found)))
                    continue
                read = self.cache.read(path, limit=MAX_CONTEXT_BYTES, found=found)
                if read.problem is not None:
                    problems.append(Problem(path, read.problem))
                if read.text is None:
                    continue  # Pi goes on to the next name in this folder
                if path not in seen:
                    seen.add(path)
                    files.append((path, read.text))
                break
        return files

    def _prompt_file(self, name: str, problems: list[Problem]) -> tuple[str, str] | None:
        """``(path, text)`` of the project's or else the first global ``name``."""
        candidates = [
            os.path.join(self.cwd, PROJECT_FOLDER, name),
            *(os.path.join(d, name) for d in self.global_dirs),
        ]
        path = self._first_file(candidates, problems)
        if path is None:
            return None
        read = self.cache.read(path, limit=MAX_CONTEXT_BYTES)
        if read.problem is not None:
            problems.append(Problem(path, read.problem))
        return None if read.text is None else (path, read.text)

    def skill_folders(self, scope: Scope) -> list[tuple[str, SkillMode]]:
        """Where the project's (or the global) skills are looked for, in Pi's order."""
        user_agents = os.path.join(self.home, ".agents", "skills") if self.home else None
        if scope == "global":
            folders: list[tuple[str, SkillMode]] = [
                (os.path.join(d, "skills"), "pi") for d in self.global_dirs
            ]
            return folders + ([(user_agents, "agents")] if user_agents is not None else [])
        folders = [(os.path.join(self._project_dir, "skills"), "pi")]
        root = _git_root(self.cwd)
        for folder in _ancestors(self.cwd):
            path = os.path.join(folder, ".agents", "skills")
            if path != user_agents:
                folders.append((path, "agents"))
            if folder == root:
                break
        return folders

    def template_folders(self, scope: Scope) -> list[str]:
        if scope == "global":
            return [os.path.join(d, "prompts") for d in self.global_dirs]
        return [os.path.join(self._project_dir, "prompts")]

    def _settings_base(self, scope: Scope) -> str | None:
        """The folder of Pi's ``settings.json`` of ``scope``: the project's ``.pi``, or
        the first global folder (Pi's agent folder; the app's own settings differ)."""
        if scope == "project":
            return self._project_dir
        return self.global_dirs[0] if self.global_dirs else None

    def _settings_paths(
        self, kind: str, scope: Scope, problems: list[Problem]
    ) -> list[tuple[str, str]]:
        """``(path, settings file)`` of the ``kind`` ("skills", "prompts") entries of Pi's
        settings of ``scope``, resolved as Pi resolves them: ``~`` is the home, anything
        else relative to the folder of the settings file."""
        base = self._settings_base(scope)
        if base is None:
            return []
        path = os.path.join(base, "settings.json")
        if self.cache.stat(path) is None:
            return []
        settings, read_problems = self._settings.get(path)
        problems.extend(read_problems)
        entries = (settings or {}).get(kind, [])
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            problems.append(Problem(path, f'"{kind}" is not a list of paths: ignored'))
            return []
        found: list[tuple[str, str]] = []
        for entry in entries:
            if entry.startswith(("!", "+", "-")) or "*" in entry or "?" in entry:
                problems.append(
                    Problem(path, f'the pattern "{entry}" in "{kind}" is not supported: ignored')
                )
                continue
            found.append((self._resolve(entry, base), path))
        return found

    def _resolve(self, entry: str, base: str) -> str:
        entry = entry.strip()
        home = self.home or os.path.expanduser("~")
        if entry == "~":
            return home
        if entry.startswith("~"):
            return os.path.join(home, entry[2:] if entry.startswith("~/") else entry[1:])
        return os.path.normpath(os.path.join(base, entry))

    def _listed(
        self,
        kind: str,
        scope: Scope,
        problems: list[Problem],
        folder: Callable[[str], list[str]],
    ) -> list[str]:
        """The files of the ``kind`` entries of Pi's settings (a folder's through
        ``folder``, a ``.md`` file itself); an entry that is neither is named."""
        files: list[str] = []
        for path, settings in self._settings_paths(kind, scope, problems):
            found = self.cache.stat(path)
            if found is None or isinstance(found, OSError):
                why = "does not exist" if found is None else describe_os_error(found)
                problems.append(Problem(path, f"is listed in {settings} but {why}: skipped"))
            elif stat.S_ISDIR(found.st_mode):
                files += folder(path)
            elif path.endswith(".md"):
                files.append(path)
            else:
                problems.append(
                    Problem(path, f"is listed in {settings} but is not a .md file: skipped")
                )
        return files

    def _skill_files(self, problems: list[Problem]) -> list[str]:
        """Every skill file in Pi's order: the project's (named in its settings, then in
        the folders Pi reads), then the global ones the same way."""
        files: list[str] = []
        for scope in SCOPES:
            files += self._listed(
                "skills", scope, problems, lambda f: skill_files(self.cache, f, "pi", problems)
            )
            for folder, mode in self.skill_folders(scope):
                files += skill_files(self.cache, folder, mode, problems)
        return list(dict.fromkeys(files))

    def _template_files(self, problems: list[Problem]) -> list[str]:
        """Every template file in Pi's order, as `_skill_files` (a folder named in the
        settings with its sub-folders; a ``prompts`` folder without)."""
        files: list[str] = []
        for scope in SCOPES:
            files += self._listed(
                "prompts",
                scope,
                problems,
                lambda f: template_files(self.cache, f, problems, tree=True),
            )
            for folder in self.template_folders(scope):
                files += template_files(self.cache, folder, problems)
        return list(dict.fromkeys(files))

    def parts(self) -> Parts:
        """Everything the prompt is made of, as the files are now."""
        with self._lock:
            self._last = self._parts()
            return self._last

    def skill_roots(self) -> list[str]:
        """What the read tool may read outside the workspace so the model can follow the
        prompt's skills: each listed skill's folder (a ``SKILL.md`` skill) or file (a
        ``.md`` file skill), as of the last prompt; nothing is read here."""
        last = self._last
        if last is None:
            return []
        return [
            s.base_dir if os.path.basename(s.file_path) == "SKILL.md" else s.file_path
            for s in last.skills
        ]

    def _parts(self) -> Parts:
        problems: list[Problem] = []
        sources: list[Source] = []
        custom_base = None
        system = self._prompt_file("SYSTEM.md", problems)
        if system is not None:
            if system[1].strip():
                custom_base = system[1]
                sources.append(Source("system", system[0], estimate_tokens(system[1])))
            else:
                problems.append(
                    Problem(system[0], "is empty: the built-in base prompt is used instead")
                )
        append = self._prompt_file("APPEND_SYSTEM.md", problems)
        if append is not None:
            sources.append(Source("append", append[0], estimate_tokens(append[1])))
        context = [ContextText(p, t) for p, t in self._context_files(problems)]
        sources += [Source("context", c.label, estimate_tokens(c.text)) for c in context]
        instructions = self.instructions().strip()
        if instructions:
            context.append(ContextText(INSTRUCTIONS_LABEL, instructions))
            sources.append(Source("instructions", "", estimate_tokens(instructions)))
        skills, skill_problems = self._skills.discover(self._skill_files(problems))
        problems += skill_problems
        templates, template_problems = self._templates.discover(self._template_files(problems))
        problems += template_problems
        return Parts(
            custom_base=custom_base,
            append=append[1] if append is not None and append[1] else None,
            context=tuple(context),
            skills=tuple(skills),
            templates=tuple(templates),
            sources=tuple(sources),
            problems=tuple(dict.fromkeys(problems)),  # a file read for two reasons: once
        )

    # ------------------------------------------------------------- the prompt

    def _assemble(self, parts: Parts, tools: Sequence[ToolLine]) -> str:
        return assemble(
            tools=tools,
            custom_base=parts.custom_base,
            append=parts.append,
            context=parts.context,
            skills=parts.skills,
            cwd=self.cwd,
            today=self.today(),
        )

    def system_prompt(self, tools: Sequence[ToolLine]) -> str:
        """The system prompt of the next turn, for the tools that are on."""
        return self._assemble(self.parts(), tools)

    def report(self, tools: Sequence[ToolLine]) -> PromptReport:
        """The prompt with where it came from (the Context view)."""
        parts = self.parts()
        text = self._assemble(parts, tools)
        skills = tuple(
            Source("skill", s.file_path, estimate_tokens(s.name + s.description + s.file_path))
            for s in parts.skills
            if any(t.name == "read" for t in tools)
        )
        return PromptReport(
            text=text,
            tokens=estimate_tokens(text),
            sources=parts.sources + skills,
            problems=parts.problems,
            templates=parts.templates,
            skills=parts.skills,
        )

    def expand(self, text: str) -> tuple[str, Problem | None]:
        """What is sent for ``text``: ``/skill:name`` and ``/template`` expanded."""
        if not text.startswith("/"):
            return text, None
        parts = self.parts()
        expanded, problem = expand_skill_command(text, parts.skills, self.cache)
        return expand_template(expanded, parts.templates), problem
