"""``.gitignore``, ``.ignore`` and ``.fdignore`` in skill and template folders, as Pi
honours them while it looks for skills and templates.

Each such file in a folder being searched adds its lines, made relative to the folder the
search started in (Pi prefixes every pattern with the folder's path from there and drops
a leading ``/``), to the rules of that folder and the ones below it. Matching is
gitignore's (``pathspec``), without regard to case (Pi's ``ignore`` package ignores
case by default); a folder is tested with a trailing ``/``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_agent.prompt._files import FileCache, Problem

if TYPE_CHECKING:
    import pathspec

IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")


def prefixed(line: str, prefix: str) -> str | None:
    """One line of an ignore file as a rule relative to the search's start (None: a
    blank line or a comment)."""
    trimmed = line.strip()
    if not trimmed or (trimmed.startswith("#") and not trimmed.startswith("\\#")):
        return None
    pattern, negated = line, False
    if pattern.startswith("!"):
        pattern, negated = pattern[1:], True
    elif pattern.startswith("\\!"):
        pattern = pattern[1:]
    pattern = pattern.removeprefix("/")
    pattern = f"{prefix}{pattern}"
    return f"!{pattern}" if negated else pattern


@functools.lru_cache(maxsize=64)
def _spec(lines: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    import pathspec  # (when skills are looked for, not at start-up)

    return pathspec.GitIgnoreSpec.from_lines(line.lower() for line in lines)


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """The rules in effect in one folder of a search (none: nothing is ignored)."""

    root: str
    lines: tuple[str, ...] = ()

    def ignores(self, path: str, *, folder: bool = False) -> bool:
        """Whether ``path`` (absolute, under `root`) is ignored."""
        if not self.lines:
            return False
        relative = os.path.relpath(path, self.root).replace(os.sep, "/")
        return _spec(self.lines).match_file(relative.lower() + ("/" if folder else ""))

    def inside(
        self,
        cache: FileCache,
        folder: str,
        names: Sequence[str],
        problems: list[Problem],
    ) -> IgnoreRules:
        """The rules in ``folder`` (whose entries are ``names``): these and its own."""
        present = [n for n in IGNORE_FILES if n in names]
        if not present:
            return self
        relative = os.path.relpath(folder, self.root).replace(os.sep, "/")
        prefix = "" if relative == "." else f"{relative}/"
        lines = list(self.lines)
        for name in present:
            path = os.path.join(folder, name)
            read = cache.read(path)
            if read.text is None:
                problems.append(Problem(path, f"ignore file {read.problem}"))
                continue
            for line in read.text.replace("\r\n", "\n").split("\n"):
                rule = prefixed(line, prefix)
                if rule is not None:
                    lines.append(rule)
        return IgnoreRules(self.root, tuple(lines))
