"""Exporting a session's current branch as Markdown or HTML.

Markdown: one ``##`` heading per message (who, model, time); the messages' own headings
are moved two levels down (outside code fences), so they never read as message
headings; tool calls and their output are in code fences long enough for what they hold.
Texts follow `desktop_agent.utils.text` (what Copy copies).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.session import Session
from desktop_agent.utils.text import content_text, message_text

_HEADING = re.compile(r"^(#{1,6})(\s)")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`{3,}")

EXPORT_SUFFIX = {"markdown": "md", "html": "html", "jsonl": "jsonl"}
EXPORT_FILTERS = {
    "markdown": "Markdown (*.md)",
    "html": "HTML (*.html)",
    "jsonl": "JSONL (*.jsonl)",
}


def export_file_name(title: str, fmt: str) -> str:
    """A file name for an export: the session's title, safe for any file system (p11:
    it was "session.md")."""
    name = re.sub(r"[^\w\- ]+", "", " ".join(title.split()))[:60].strip(" -") or "session"
    return f"{name}.{EXPORT_SUFFIX.get(fmt, 'txt')}"


@dataclass(frozen=True)
class _Part:
    kind: str  # "text" | "code" | "note"
    text: str
    lang: str = ""


@dataclass(frozen=True)
class _Section:
    title: str
    parts: tuple[_Part, ...]


def demote_headings(text: str, levels: int = 2) -> str:
    """``text`` with every Markdown heading ``levels`` deeper (at most ``######``);
    lines inside code fences are left alone."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if m is not None:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
            elif line.strip().startswith(fence) and set(line.strip()) == {fence[0]}:
                fence = None
            out.append(line)
            continue
        if fence is None:
            h = _HEADING.match(line)
            if h is not None:
                depth = min(6, len(h.group(1)) + levels)
                line = "#" * depth + line[len(h.group(1)) :]
        out.append(line)
    return "\n".join(out)


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run inside ``text``."""
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=2)
    return "`" * max(3, longest + 1)


def _when(timestamp: object) -> str:
    if isinstance(timestamp, int | float) and timestamp > 0:
        return datetime.fromtimestamp(timestamp / 1000).strftime("%Y-%m-%d %H:%M")
    return ""


def _sections(messages: Iterable[AgentMessage]) -> Iterator[_Section]:
    for message in messages:
        when = _when(getattr(message, "timestamp", 0))
        suffix = f" · {when}" if when else ""
        if isinstance(message, UserMessage):
            parts = [_Part("text", content_text(message.content))]
            images = [b for b in message.content if isinstance(b, ImageContent)]
            parts += [_Part("note", f"[image {b.mime_type}]") for b in images]
            yield _Section(f"You{suffix}", tuple(parts))
        elif isinstance(message, AssistantMessage):
            assistant: list[_Part] = []
            for block in message.content:
                if isinstance(block, ToolCall):
                    args = json.dumps(block.arguments, indent=2, ensure_ascii=False)
                    assistant.append(_Part("note", f"Tool call: `{block.name}`"))
                    assistant.append(_Part("code", args, "json"))
                elif isinstance(block, ThinkingContent):
                    continue
                else:
                    text = content_text([block])
                    if text:
                        assistant.append(_Part("text", text))
            if message.stop_reason in ("error", "aborted"):
                what = "Error" if message.stop_reason == "error" else "Stopped"
                assistant.append(_Part("note", f"{what}: {message.error_message or ''}".strip()))
            title = f"Assistant ({message.provider}/{message.model}){suffix}"
            yield _Section(title, tuple(assistant))
        elif isinstance(message, ToolResultMessage):
            mark = " (error)" if message.is_error else ""
            output = content_text(message.content) or "(no output)"
            yield _Section(
                f"Tool result: {message.tool_name}{mark}{suffix}", (_Part("code", output, "text"),)
            )
        elif isinstance(message, BranchSummaryMessage | CompactionSummaryMessage):
            kind = "Branch summary" if isinstance(message, BranchSummaryMessage) else "Summary"
            yield _Section(kind, (_Part("text", message.summary),))
        elif isinstance(message, CustomMessage):
            yield _Section(message.custom_type, (_Part("text", message_text(message)),))


def _branch_messages(session: Session) -> Iterator[AgentMessage]:
    """Every message of the current branch, oldest first (compacted ones included), each
    read from the file only when it is reached."""
    for entry_id in session.branch_ids(lenient=True):
        kind, _role = session.entry_kind(entry_id)
        if kind in ("message", "custom_message", "branch_summary"):
            message = session.get_message(entry_id)
            if message is not None:
                yield message


def to_markdown(session: Session, title: str, *, limit: int | None = None) -> str:
    """The branch as Markdown; ``limit``: stop after the section that passes this many
    characters (a preview reads only the messages it shows, not a 100 MB session's all)."""
    lines = [f"# {title}", ""]
    cwd = session.metadata.cwd
    if cwd:
        lines += [f"Workspace: `{cwd}`", ""]
    for section in _sections(_branch_messages(session)):
        if limit is not None and sum(map(len, lines)) + len(lines) > limit:
            break
        lines += [f"## {section.title}", ""]
        for part in section.parts:
            if part.kind == "code":
                fence = fence_for(part.text)
                lines += [f"{fence}{part.lang}", part.text, fence, ""]
            elif part.kind == "note":
                lines += [f"*{part.text}*", ""]
            elif part.text:
                lines += [demote_headings(part.text), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def to_html(session: Session, title: str) -> str:
    body: list[str] = [f"<h1>{html.escape(title)}</h1>"]
    for section in _sections(_branch_messages(session)):
        body.append(f"<h2>{html.escape(section.title)}</h2>")
        for part in section.parts:
            if part.kind == "note":
                body.append(f"<p><em>{html.escape(part.text)}</em></p>")
            else:
                body.append(f"<pre>{html.escape(part.text)}</pre>")
    return (
        "<!doctype html>\n<html><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;max-width:50em;margin:auto}"
        "pre{white-space:pre-wrap;background:#f4f4f4;padding:.5em}</style>"
        "</head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
