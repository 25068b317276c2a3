"""Prompt templates: ``prompts/*.md`` files whose body is sent for ``/name args``.

As the Pi CLI has them: the name is the file name without ``.md``; the description is
the front matter's ``description`` or the body's first non-empty line (60 characters);
``argument-hint`` is shown beside it. Arguments are split like a shell's (quotes group,
no escapes); in the body ``$1``…``$9`` (any number) is one argument, ``${@:N}`` the
arguments from the N-th, ``${@:N:L}`` L of them, ``$@`` and ``$ARGUMENTS`` all of them
(positional ones first, so an argument's own ``$@`` is not replaced twice). Any other
``${…}`` is an unknown placeholder: the template is kept (it is sent as written there)
and the file is named.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from desktop_agent.prompt._files import (
    FileCache,
    FileText,
    ParsedFiles,
    Problem,
    keep_first,
)
from desktop_agent.prompt._frontmatter import read_front_matter
from desktop_agent.prompt._ignore import IgnoreRules

_COMMAND = re.compile(r"/(\S+)(?:\s+([\s\S]*))?")
_POSITIONAL = re.compile(r"\$(\d+)")
_SLICE = re.compile(r"\$\{@:(\d+)(?::(\d+))?\}")
_BRACED = re.compile(r"\$\{[^}\n]*\}?")


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    description: str
    content: str
    file_path: str
    argument_hint: str = ""


def parse_command_args(text: str) -> list[str]:
    """Arguments split on whitespace; ``"…"`` and ``'…'`` group (quotes removed)."""
    args: list[str] = []
    current = ""
    quote: str | None = None
    for char in text:
        if quote is not None:
            if char == quote:
                quote = None
            else:
                current += char
        elif char in "\"'":
            quote = char
        elif char.isspace():
            if current:
                args.append(current)
                current = ""
        else:
            current += char
    if current:
        args.append(current)
    return args


def substitute_args(content: str, args: Sequence[str]) -> str:
    """The template body with its placeholders replaced by ``args``."""

    def positional(match: re.Match[str]) -> str:
        index = int(match.group(1)) - 1
        return args[index] if 0 <= index < len(args) else ""

    def sliced(match: re.Match[str]) -> str:
        start = max(int(match.group(1)) - 1, 0)
        if match.group(2) is not None:
            return " ".join(args[start : start + int(match.group(2))])
        return " ".join(args[start:])

    result = _POSITIONAL.sub(positional, content)
    result = _SLICE.sub(sliced, result)
    everything = " ".join(args)
    return result.replace("$ARGUMENTS", everything).replace("$@", everything)


def unknown_placeholders(content: str) -> list[str]:
    """``${…}`` forms that are not ``${@:N}`` or ``${@:N:L}``."""
    return [m.group(0) for m in _BRACED.finditer(content) if not _SLICE.fullmatch(m.group(0))]


def expand_template(text: str, templates: Sequence[Template]) -> str:
    """``/name args`` as the named template's expansion; any other text unchanged."""
    if not text.startswith("/"):
        return text
    match = _COMMAND.fullmatch(text)
    if match is None:
        return text
    template = next((t for t in templates if t.name == match.group(1)), None)
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args(match.group(2) or ""))


def _parse(read: FileText) -> tuple[Template | None, tuple[Problem, ...]]:
    path = read.path
    found = read_front_matter(read, "prompt template")
    if isinstance(found, Problem):
        return None, (found,)
    front, body = found
    description = front.get("description")
    text = str(description) if description else ""
    if not text:
        first = next((line for line in body.split("\n") if line.strip()), "")
        text = first[:60] + ("..." if len(first) > 60 else "")
    hint = front.get("argument-hint")
    template = Template(
        name=os.path.basename(path).removesuffix(".md"),
        description=text,
        content=body,
        file_path=path,
        argument_hint=str(hint) if hint else "",
    )
    problems = tuple(
        Problem(path, f"prompt template has an unknown placeholder {p}: it is sent as written")
        for p in dict.fromkeys(unknown_placeholders(body))
    )
    return template, problems


class TemplateLoader:
    """Parsed templates, re-parsed only when their file changed."""

    def __init__(self, cache: FileCache) -> None:
        self.cache = cache
        self._parsed = ParsedFiles(cache, _parse)

    def discover(self, files: Iterable[str]) -> tuple[list[Template], list[Problem]]:
        """The templates of ``files`` in order (the first of a name wins)."""
        problems: list[Problem] = []
        by_name: dict[str, Template] = {}
        for path in files:
            template, found = self._parsed.get(path)
            problems.extend(found)
            if template is None:
                continue
            what = f"prompt template named /{template.name}"
            problem = keep_first(by_name, template.name, template, what)
            if problem is not None:
                problems.append(problem)
        return list(by_name.values()), problems


def template_files(
    cache: FileCache,
    folder: str,
    problems: list[Problem],
    *,
    tree: bool = False,
    rules: IgnoreRules | None = None,
) -> list[str]:
    """The ``.md`` files in ``folder`` (``tree``: in its sub-folders too, as Pi reads a
    folder named in its settings); hidden entries, ``node_modules`` and what the ignore
    files on the way exclude are skipped."""
    entries = cache.entries(folder, problems)
    rules = (rules or IgnoreRules(folder)).inside(cache, folder, [e[0] for e in entries], problems)
    found: list[str] = []
    for name, is_dir, is_file in entries:
        if name.startswith(".") or name == "node_modules":
            continue
        path = os.path.join(folder, name)
        if rules.ignores(path, folder=is_dir and tree):
            continue
        if is_file and name.endswith(".md"):
            found.append(path)
        elif is_dir and tree:
            found.extend(template_files(cache, path, problems, tree=True, rules=rules))
    return found
