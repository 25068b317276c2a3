"""Skills in the Agent Skills format, found and listed as the Pi CLI does.

A skill is a folder with a ``SKILL.md`` whose front matter has ``name`` (else the folder's
name) and ``description``. In a skills folder, a folder holding ``SKILL.md`` is a skill
(nothing below it is searched); otherwise its sub-folders are searched. In Pi's own
``skills`` folders (mode ``"pi"``) a ``.md`` file at the top is a skill too; in
``.agents/skills`` folders (mode ``"agents"``) only ``SKILL.md``. Hidden entries and
``node_modules`` are skipped. A skill without a description is skipped (and named); a
name outside the spec (lowercase letters, digits, single hyphens, 64 characters) is
loaded with a warning. The first skill of a name wins; the same file reached twice (a
symlink) counts once.

The system prompt lists each skill's name, description and file so the model reads the
file when a task matches; ``/skill:name args`` sends the file's body in a ``<skill>``
block (`expand_skill_command`).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from desktop_agent.prompt._files import (
    FileCache,
    FileText,
    ParsedFiles,
    Problem,
    keep_first,
)
from desktop_agent.prompt._frontmatter import (
    FrontMatterError,
    read_front_matter,
    split_front_matter,
)
from desktop_agent.prompt._ignore import IgnoreRules

SkillMode = Literal["pi", "agents"]
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
_NAME = re.compile(r"[a-z0-9-]+")


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    file_path: str
    base_dir: str
    disable_model_invocation: bool = False
    real_path: str = field(default="", compare=False, repr=False)
    """The file with symlinks resolved (a skill reached twice counts once); found when
    the file is parsed, so a turn with unchanged skills resolves nothing."""


def skill_files(
    cache: FileCache,
    folder: str,
    mode: SkillMode,
    problems: list[Problem],
    rules: IgnoreRules | None = None,
) -> list[str]:
    """The skill files in ``folder``: its ``SKILL.md`` (nothing below is searched), else
    those of its sub-folders and, at the top in mode ``pi``, its ``.md`` files; what the
    ignore files on the way exclude is left out, as Pi leaves it out."""
    top = rules is None
    entries = cache.entries(folder, problems)
    rules = (rules or IgnoreRules(folder)).inside(cache, folder, [e[0] for e in entries], problems)
    for name, _is_dir, is_file in entries:
        path = os.path.join(folder, name)
        if name == "SKILL.md" and is_file and not rules.ignores(path):
            return [path]
    found: list[str] = []
    for name, is_dir, is_file in entries:
        if name.startswith(".") or name == "node_modules":
            continue
        path = os.path.join(folder, name)
        if mode == "pi" and top and is_file and name.endswith(".md"):
            if not rules.ignores(path):
                found.append(path)
        elif is_dir and not rules.ignores(path, folder=True):
            found.extend(skill_files(cache, path, mode, problems, rules))
    return found


def _name_warnings(name: str) -> list[str]:
    warnings = []
    if len(name) > MAX_NAME_LENGTH:
        warnings.append(f"the name is longer than {MAX_NAME_LENGTH} characters")
    if not _NAME.fullmatch(name):
        warnings.append("the name has characters other than a-z, 0-9 and hyphens")
    if name.startswith("-") or name.endswith("-") or "--" in name:
        warnings.append("the name starts or ends with a hyphen or has two in a row")
    return warnings


def _parse_skill(read: FileText) -> tuple[Skill | None, tuple[Problem, ...]]:
    path = read.path
    found = read_front_matter(read, "skill")
    if isinstance(found, Problem):
        return None, (found,)
    front = found[0]
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        return None, (Problem(path, "skill without a description: skipped"),)
    problems = []
    if len(description) > MAX_DESCRIPTION_LENGTH:
        problems.append(
            Problem(path, f"skill description is over {MAX_DESCRIPTION_LENGTH} characters")
        )
    folder = os.path.dirname(path)
    raw_name = front.get("name")
    name = str(raw_name) if raw_name else os.path.basename(folder)
    problems.extend(Problem(path, f"skill loaded, but {w}") for w in _name_warnings(name))
    skill = Skill(
        name=name,
        description=description,
        file_path=path,
        base_dir=folder,
        disable_model_invocation=front.get("disable-model-invocation") is True,
        real_path=os.path.realpath(path),
    )
    return skill, tuple(problems)


class SkillLoader:
    """Parsed skills, re-parsed only when their file changed."""

    def __init__(self, cache: FileCache) -> None:
        self.cache = cache
        self._parsed = ParsedFiles(cache, _parse_skill)

    def discover(self, files: Iterable[str]) -> tuple[list[Skill], list[Problem]]:
        """The skills of ``files`` in order (the first of a name wins)."""
        problems: list[Problem] = []
        by_name: dict[str, Skill] = {}
        real_paths: set[str] = set()
        for path in files:
            skill, found = self._parsed.get(path)
            problems.extend(found)
            if skill is None:
                continue
            real = skill.real_path
            if real in real_paths:
                continue
            problem = keep_first(by_name, skill.name, skill, f"skill named {skill.name!r}")
            if problem is not None:
                problems.append(problem)
                continue
            real_paths.add(real)
        return list(by_name.values()), problems


def _escape_xml(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def format_skills(skills: Sequence[Skill]) -> str:
    """The skills section of the system prompt (Pi's wording and XML shape), or ""."""
    return _format_skills(tuple(skills))


@functools.lru_cache(maxsize=8)
def _format_skills(skills: tuple[Skill, ...]) -> str:
    shown = [s for s in skills if not s.disable_model_invocation]
    if not shown:
        return ""
    lines = [
        "\n\nThe following skills provide specialized instructions for specific tasks.",
        "Use the read tool to load a skill's file when the task matches its description.",
        "When a skill file references a relative path, resolve it against the skill "
        "directory (parent of SKILL.md / dirname of the path) and use that absolute path "
        "in tool commands.",
        "",
        "<available_skills>",
    ]
    for skill in shown:
        lines += [
            "  <skill>",
            f"    <name>{_escape_xml(skill.name)}</name>",
            f"    <description>{_escape_xml(skill.description)}</description>",
            f"    <location>{_escape_xml(skill.file_path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def expand_skill_command(
    text: str, skills: Sequence[Skill], cache: FileCache
) -> tuple[str, Problem | None]:
    """``/skill:name args`` as the skill's body in a ``<skill>`` block followed by the
    args; other text, or an unknown skill, unchanged. A skill file that cannot be read
    any more leaves the text unchanged and is named."""
    if not text.startswith("/skill:"):
        return text, None
    space = text.find(" ")
    name = text[7:] if space == -1 else text[7:space]
    args = "" if space == -1 else text[space + 1 :].strip()
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return text, None
    read = cache.read(skill.file_path)
    if read.text is None:
        return text, Problem(skill.file_path, f"skill {read.problem}")
    try:
        _front, body = split_front_matter(read.text)
    except FrontMatterError as exc:
        return text, Problem(skill.file_path, f"skill with {exc}: not sent")
    block = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body.strip()}\n</skill>"
    )
    return (f"{block}\n\n{args}" if args else block), None
