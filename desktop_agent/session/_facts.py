"""Cheap per-entry facts for views that show many entries (issue 12 item 2).

A view of a long session (the chat pane's rows, the branch tree) needs, per entry, only
its type, role, parent, children, label, timestamp and a short preview, and the decoded
message only for what is on screen. `EntryFacts` is that record, made from the tree's
columns without reading the entry's line; the preview is made once from the line (off
the event loop, `Session.previews`) and then kept, also in the entry index, so the next
launch has it without reading the file. `BranchPage` is one page of a branch with the
messages decoded, and `BranchTail` is what `JsonlSessionRepo.open_progressive` knows of
the current branch before the whole file is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from desktop_agent.ai import AgentMessage

PREVIEW_CHARS = 120
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class EntryFacts:
    """What a row of a view needs about one entry, without its message body."""

    id: str
    parent_id: str | None
    type: str
    role: str | None
    timestamp: str
    label: str | None = None
    children: int = 0
    preview: str | None = None
    """A short one-line text; None until `Session.previews` made it."""
    offset: int = -1
    """Byte offset of the entry's line in the file (-1: in memory only)."""


@dataclass(frozen=True)
class BranchPage:
    """Consecutive entries of one branch, root-first, with their context messages."""

    entries: list[EntryFacts]
    messages: dict[str, AgentMessage] = field(default_factory=dict)
    """The message each entry contributes to the context (entries that add none, such as
    labels or model changes, have none)."""
    has_more: bool = False
    """There are older entries on the branch before the first one."""


@dataclass(frozen=True)
class BranchTail(BranchPage):
    """The end of the current branch, known before the whole file is read."""

    leaf_id: str | None = None
    complete: bool = False
    """The session is fully open (the tail came from the finished tree)."""


_MARKUP = [
    (re.compile(r"^```.*$|^~~~.*$", re.MULTILINE), ""),  # fence lines
    (re.compile(r"^ {0,3}(?:#{1,6}\s+|>\s?)", re.MULTILINE), ""),  # headings, quotes
    (re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)"), r"\1"),  # links and images: their text
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # bold
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), r"\1"),  # italic
    (re.compile(r"`+([^`\n]+)`+"), r"\1"),  # code spans
]


def plain_markdown(text: str) -> str:
    """Markdown ``text`` without its markup, for one-line previews (a map node read
    "## Project overview This is a **tin…": FIRST_HOUR.md p2)."""
    if not any(c in text for c in "#*_`[>~"):
        return text
    for pattern, repl in _MARKUP:
        text = pattern.sub(repl, text)
    return text


def _collapse(text: str) -> str:
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1].rstrip() + "…"


def _blocks(content: Any) -> tuple[list[str], list[str], int]:
    """(texts, tool call names, images) of a content value."""
    if isinstance(content, str):
        return [content], [], 0
    texts: list[str] = []
    tools: list[str] = []
    images = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "toolCall":
                tools.append(str(block.get("name")))
            elif kind == "image":
                images += 1
    return texts, tools, images


_FAILED_PREVIEW = ("Failed: ", "Error: ")


def failed_preview(text: str) -> bool:
    """Whether ``text`` is the preview of a failed reply (`preview_of`: L6)."""
    return text.startswith(_FAILED_PREVIEW)


def failure_reason(text: str) -> str | None:
    """The reason of a failed reply that wrote nothing, from its preview ("Error: <reason>");
    None for any other preview."""
    prefix = _FAILED_PREVIEW[1]
    return text[len(prefix) :] if text.startswith(prefix) else None


def _message_preview(message: Any) -> str:
    if not isinstance(message, dict):
        return "message"
    role = message.get("role")
    texts, tools, images = _blocks(message.get("content"))
    text = " ".join(t for t in texts if t.strip())
    if role == "toolResult":
        name = message.get("toolName")
        return f"{name}: {text}" if text else f"{name}: (no output)"
    if role == "bashExecution":
        return f"$ {message.get('command')}"
    if role == "branchSummary" or role == "compactionSummary":
        return plain_markdown(str(message.get("summary")))
    if not text and tools:
        return "→ " + ", ".join(tools)
    if not text and images:
        return f"[{images} image{'s' if images > 1 else ''}]"
    if role == "assistant" and message.get("stopReason") in ("error", "aborted"):
        # A failed or stopped request says so: never an "(empty reply)" (L6).
        if message.get("stopReason") == "aborted":
            return f"Stopped: {plain_markdown(text)}" if text else "Stopped"
        reason = _collapse(str(message.get("errorMessage") or "")) or "the request failed"
        return f"Failed: {plain_markdown(text)}" if text else f"Error: {reason}"
    if not text and role == "assistant":
        return "(thinking)" if message.get("content") else "(empty reply)"
    return plain_markdown(text) if role == "assistant" else text


PREVIEWS_VERSION = 2
"""Raise it with any change to what `preview_of` makes: the entry index keeps previews
with the version that made them and drops those of another (2: a stopped or failed
reply's text without its markdown; L6's "Error: …" for an empty failed reply)."""


def preview_of(kind: str, obj: dict[str, Any]) -> str:
    """A short one-line text for an entry (its JSON object)."""
    if kind == "message":
        text = _message_preview(obj.get("message"))
    elif kind == "compaction":
        text = f"Compaction: {obj.get('summary')}"
    elif kind == "branch_summary":
        summary = obj.get("summary")
        text = f"Branch summary: {summary}" if summary else "Branch summary"
    elif kind == "model_change":
        text = f"Model: {obj.get('provider')}/{obj.get('modelId')}"
    elif kind == "thinking_level_change":
        text = f"Thinking level: {obj.get('thinkingLevel')}"
    elif kind == "session_info":
        name = obj.get("name")
        text = f"Session name: {name}" if name else "Session name cleared"
    elif kind == "label":
        label = obj.get("label")
        text = f"Label: {label}" if label else "Label cleared"
    elif kind == "leaf":
        text = f"Moved to {obj.get('targetId')}"
    elif kind == "active_tools_change":
        names = obj.get("activeToolNames")
        listed = ", ".join(str(n) for n in names) if isinstance(names, list) else ""
        text = "Tools: " + (listed or "none")
    elif kind == "custom_message":
        texts, _tools, _images = _blocks(obj.get("content"))
        body = " ".join(texts)
        text = f"{obj.get('customType')}: {body}" if body else str(obj.get("customType"))
    elif kind == "custom":
        text = f"Extension data: {obj.get('customType')}"
    else:
        text = kind
    return _collapse(text)
