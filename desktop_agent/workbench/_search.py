"""Where the words of a query occur in a session: `search_entries` finds the entries of
a session (every branch) whose text holds every word of a query, reading the raw lines
off the loop; `tooltip_text` is an entry's whole message for the branch map's tooltip.
The words match by the one rule of every search (`utils.text.query_words` and
`text_matches`: case and accents ignored).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import msgspec

from desktop_agent.session import Session, SessionError
from desktop_agent.utils.text import content_text, query_words, text_matches

_SEARCHED_TYPES = frozenset({"message", "compaction", "branch_summary", "custom_message"})


def _entry_text(entry_type: str, obj: Any) -> str:
    """The searchable text of an entry's JSON object: message text and tool output,
    summaries, and tool-call arguments (what the chat shows)."""
    if not isinstance(obj, dict):
        return ""
    if entry_type in ("compaction", "branch_summary"):
        summary = obj.get("summary")
        return summary if isinstance(summary, str) else ""
    message = obj.get("message") if entry_type == "message" else obj
    if not isinstance(message, dict):
        return ""
    parts = [content_text(message.get("content"))]
    for key in ("summary", "command", "output"):
        value = message.get(key)
        if isinstance(value, str):
            parts.append(value)
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                args = block.get("arguments")
                shown = json.dumps(args, ensure_ascii=False) if args else ""
                parts.append(f"→ {block.get('name')} {shown}".rstrip())
    return "\n".join(p for p in parts if p)


def _scan(lines: Sequence[tuple[str, str, bytes]], words: Sequence[str]) -> list[str]:
    decode = msgspec.json.Decoder().decode
    hits: list[str] = []
    ascii_words = [w.encode() for w in words] if all(w.isascii() for w in words) else None
    for entry_id, entry_type, raw in lines:
        if ascii_words is not None and raw.isascii() and b"\\u" not in raw:
            # A line of plain ASCII holds every word of a match as it is: skip the rest.
            low = raw.lower()
            if not all(w in low for w in ascii_words):
                continue
        try:
            obj = decode(raw)
        except (msgspec.DecodeError, RecursionError):
            continue
        if text_matches(words, _entry_text(entry_type, obj)):
            hits.append(entry_id)
    return hits


async def search_entries(session: Session, query: str) -> list[str]:
    """Entries of every branch whose text holds every word of ``query`` (case and
    accents ignored), file order; the lines are decoded on a worker thread."""
    words = query_words(query)
    if not words:
        return []

    def scan() -> list[str]:
        raw = session.raw_entries()  # lines read in runs of the file, off the loop
        lines = [(e, kind, line) for e, _p, kind, _t, line in raw if kind in _SEARCHED_TYPES]
        return _scan(lines, words)

    try:
        return await asyncio.to_thread(scan)
    except ValueError:  # an entry was appended while the columns were read: again, here
        return _scan(
            [(e, k, line) for e, _p, k, _t, line in session.raw_entries() if k in _SEARCHED_TYPES],
            words,
        )


def tooltip_text(session: Session, entry_id: str, limit: int = 1200) -> str:
    """The whole message of an entry for a tooltip (cut at ``limit`` characters)."""
    try:
        kind, _role = session.entry_kind(entry_id)
        raw = session.raw_entry(entry_id)[4]
        obj = msgspec.json.decode(raw)
    except (SessionError, msgspec.DecodeError, RecursionError):
        return ""
    if kind in _SEARCHED_TYPES:
        text = _entry_text(kind, obj)
    else:
        text = session.entry_facts(entry_id).preview or kind
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
