"""The text of a message: one rule for Copy, export, edit, search and tree previews;
and one rule for matching the words of a query (`query_words`, `text_matches`: the
sidebar, the stores' title search, the branch map's search and filter).

Works on anything shaped like a Pi message or content block, typed or not: pydantic
messages, msgspec structs and plain JSON dicts. The text of a content is the string
itself, or its ``text`` blocks joined by a blank line (thinking, images and tool calls
are not text); a summary message's text is its summary.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

BLOCK_SEPARATOR = "\n\n"


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def text_blocks(content: Any) -> list[str]:
    """The texts of the ``text`` blocks of a content (a string is one block)."""
    if isinstance(content, str):
        return [content]
    if content is None or isinstance(content, bytes | Mapping) or not isinstance(content, Iterable):
        return []
    out: list[str] = []
    for block in content:
        if _field(block, "type") == "text":
            text = _field(block, "text")
            if isinstance(text, str):
                out.append(text)
    return out


def content_text(content: Any) -> str:
    """The text of a message content (see the module docstring)."""
    return BLOCK_SEPARATOR.join(t for t in text_blocks(content) if t)


def message_text(message: Any) -> str:
    """The text of a message: its content's text, or its summary."""
    content = _field(message, "content")
    if content is not None:
        return content_text(content)
    summary = _field(message, "summary")
    return summary if isinstance(summary, str) else ""


TITLE_CHARS = 80


def short_title(prompt: str) -> str:
    """A window title from a session title: cut at a word near `TITLE_CHARS`
    (FIRST_HOUR.md m14: an 8-line first prompt overflowed the title bar)."""
    line = " ".join(prompt.split())
    if len(line) <= TITLE_CHARS:
        return line
    cut = line[:TITLE_CHARS]
    space = cut.rfind(" ")
    if space >= TITLE_CHARS * 2 // 3:  # at a word, unless that loses too much
        cut = cut[:space]
    return cut.rstrip(" ,.;:") + "…"


def fold(text: str) -> str:
    """The case- and accent-insensitive form of ``text`` (as the session index's
    full-text search, ``remove_diacritics``)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def query_words(query: str) -> list[str]:
    """The words of a query, folded (none: the query matches nothing)."""
    return [w for w in fold(query).split() if w]


def text_matches(words: Sequence[str], text: str) -> bool:
    """Every word of the query occurs in ``text`` (case and accents ignored)."""
    if not words:
        return False
    folded = fold(text)
    return all(w in folded for w in words)
