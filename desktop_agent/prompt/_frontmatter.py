"""YAML front matter of skills and prompt templates, split as Pi splits it.

The text's line ends become ``\\n``; front matter is there when the text starts with
``---`` and a later line starts with ``---``: the YAML between is parsed (``safe_load``),
the body after is stripped. Without front matter the body is the whole (normalised) text.
"""

from __future__ import annotations

from typing import Any

from desktop_agent.prompt._files import FileText, Problem


class FrontMatterError(ValueError):
    """The front matter is not valid YAML, or not a mapping of keys."""


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)``; raises `FrontMatterError` for broken front matter."""
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    if not normalized.startswith("---"):
        return {}, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return {}, normalized
    source = normalized[4:end]
    body = normalized[end + 4 :].strip()
    if not source:
        return {}, body
    import yaml  # (when a session's prompt is built, not at start-up: ~50 ms)

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        parsed = yaml.load(source, Loader=loader)  # CSafeLoader or SafeLoader
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontMatterError(f"broken front matter{line}: {problem}") from exc
    if parsed is None:
        return {}, body
    if not isinstance(parsed, dict):
        raise FrontMatterError("broken front matter: it is not a list of `key: value` lines")
    return {str(k): v for k, v in parsed.items()}, body


def read_front_matter(read: FileText, what: str) -> tuple[dict[str, Any], str] | Problem:
    """The front matter and body of a file read for ``what`` ("skill", "prompt
    template"), or the `Problem` that makes it unusable (unreadable, broken YAML)."""
    if read.text is None:
        return Problem(read.path, f"{what} {read.problem}")
    try:
        return split_front_matter(read.text)
    except FrontMatterError as exc:
        return Problem(read.path, f"{what} with {exc}: skipped")
