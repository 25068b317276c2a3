"""The texts a card shows of a tool call: output cut to a number of lines, a read's line
numbers, arguments summed up on one line or pretty-printed."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QCoreApplication

from desktop_agent.ai import ToolCall, ToolResultMessage
from desktop_agent.utils.text import content_text


def _tr(text: str) -> str:
    return QCoreApplication.translate("ChatCard", text)


def clip_lines(
    text: str, max_lines: int, max_chars: int, *, tail: bool = False, middle: bool = False
) -> str:
    """At most ``max_lines`` lines: the first ones, the last ones (``tail``), or both
    ends (``middle``: a command's output, whose end says how it went: m15)."""
    lines = text.split("\n")
    more = len(lines) - max_lines
    if more > 1:  # never "[... 1 more lines]" in place of the one line itself (p5)
        if middle:
            head = (max_lines + 1) // 2
            gap = _tr("[... {n} more lines]").format(n=more)
            lines = [*lines[:head], gap, *lines[len(lines) - (max_lines - head) :]]
        elif tail:
            lines = [_tr("[... {n} earlier lines]").format(n=more), *lines[-max_lines:]]
        else:
            lines = [*lines[:max_lines], _tr("[... {n} more lines]").format(n=more)]
    out = "\n".join(lines)
    if len(out) > max_chars:
        out = (
            out[:max_chars]
            + "\n"
            + _tr("[... {n} more characters]").format(n=f"{len(out) - max_chars:,}")
        )
    return out


def numbered_lines(
    text: str, shown: str, details: dict[str, Any], call: ToolCall | None
) -> tuple[int, int]:
    """(first, count) of the file lines a read's ``shown`` text starts with: from the
    read's ``startLine`` (else its ``offset``), up to its ``endLine``, and not the notes
    after them ("[Showing lines …]", "[... more lines]")."""
    start = details.get("startLine")
    if not isinstance(start, int):
        offset = call.arguments.get("offset") if call is not None else None
        start = offset if isinstance(offset, int) and offset > 0 else 1
    end = details.get("endLine")
    limit = end - start + 1 if isinstance(end, int) and end >= start else None
    count = 0
    for seen, line in zip(shown.split("\n"), text.split("\n"), strict=False):
        if limit is not None and count >= limit:
            break
        if seen != line and not (seen and line.startswith(seen)):
            break
        count += 1
    return start, count


def tool_args_summary(call: ToolCall) -> str:
    args = call.arguments
    for key in ("command", "path", "pattern", "file_path"):
        value = args.get(key)
        if isinstance(value, str):
            return ("$ " if key == "command" else "") + value
    try:
        return json.dumps(args, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(args)


_PRETTY_NESTED_CHARS = 20_000


def pretty_arguments(arguments: dict[str, Any], max_chars: int) -> str:
    """What ``json.dumps(arguments, indent=2)`` gives, at the C encoder's speed.

    With ``indent`` Python's json uses its pure-Python encoder: arguments of 5,000 small
    items took 27 ms of the GUI thread to show an expanded card. So the top level is
    laid out here and each value goes through the C encoder, indented as json would
    when it is small; a string longer than ``max_chars`` is cut to that first (only so
    much is shown), and a big list or mapping stays on one line.
    """
    lines = []
    for key, value in arguments.items():
        shown = value[:max_chars] if isinstance(value, str) else value
        text = json.dumps(shown, ensure_ascii=False)
        if isinstance(shown, dict | list) and len(text) <= _PRETTY_NESTED_CHARS:
            text = json.dumps(shown, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        lines.append(f"  {json.dumps(key, ensure_ascii=False)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}" if lines else "{}"


def result_text(result: ToolResultMessage) -> str:
    return content_text(result.content)
