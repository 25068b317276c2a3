"""Compaction and branch summaries (SESSION_FORMAT.md §8), with our own prompts."""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    LlmContext,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    convert_to_llm,
)
from desktop_agent.session import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
)

DEFAULT_RESERVE_TOKENS = 16_384
DEFAULT_KEEP_RECENT_TOKENS = 20_000


class CompactionError(Exception):
    """Compaction or a branch summary failed; ``code`` is ``aborted`` or ``summarization_failed``
    or ``nothing_to_compact``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


# ------------------------------------------------------------------------ token estimates


def _text_of(content: Any) -> tuple[int, int]:
    """(characters, images) of a content value."""
    if isinstance(content, str):
        return len(content), 0
    chars = images = 0
    for block in content or []:
        if isinstance(block, TextContent):
            chars += len(block.text)
        elif isinstance(block, ImageContent):
            images += 1
    return chars, images


def estimate_tokens(message: AgentMessage) -> int:
    """Characters / 4, the way Pi estimates (images in tool results count 4,800 chars)."""
    chars = 0
    if isinstance(message, UserMessage):
        chars = _text_of(message.content)[0]
    elif isinstance(message, AssistantMessage):
        for block in message.content:
            if isinstance(block, TextContent):
                chars += len(block.text)
            elif isinstance(block, ThinkingContent):
                chars += len(block.thinking)
            elif isinstance(block, ToolCall):
                chars += len(block.name) + len(json.dumps(block.arguments))
    elif isinstance(message, CustomMessage | ToolResultMessage):
        text, images = _text_of(message.content)
        chars = text + 4800 * images
    elif isinstance(message, BranchSummaryMessage | CompactionSummaryMessage):
        chars = len(message.summary)
    elif isinstance(message, BashExecutionMessage):
        chars = len(message.command) + len(message.output)
    return math.ceil(chars / 4)


def estimate_context_tokens(messages: Sequence[AgentMessage]) -> int:
    """Usage of the last successful assistant message plus estimates of what follows."""
    last_usage_index = -1
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, AssistantMessage) and m.stop_reason not in ("error", "aborted"):
            last_usage_index = i
            break
    if last_usage_index < 0:
        return sum(estimate_tokens(m) for m in messages)
    last = messages[last_usage_index]
    assert isinstance(last, AssistantMessage)
    trailing = sum(estimate_tokens(m) for m in messages[last_usage_index + 1 :])
    return last.usage.context_tokens() + trailing


def should_compact(context_tokens: int, context_window: int, reserve_tokens: int) -> bool:
    return context_tokens > context_window - reserve_tokens


# ------------------------------------------------------------------------ preparation


def _project(entry: SessionEntry) -> AgentMessage | None:
    if isinstance(entry, MessageEntry):
        return entry.message
    if isinstance(entry, CustomMessageEntry):
        return CustomMessage(
            custom_type=entry.custom_type, content=entry.content, display=entry.display, timestamp=0
        )
    if isinstance(entry, BranchSummaryEntry):
        return BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id, timestamp=0)
    return None


def _is_cut_point(entry: SessionEntry) -> bool:
    if isinstance(entry, MessageEntry):
        role = entry.message.role
        return role in (
            "user",
            "assistant",
            "custom",
            "bashExecution",
            "branchSummary",
            "compactionSummary",
        )
    return isinstance(entry, BranchSummaryEntry | CustomMessageEntry)


def _is_turn_start(entry: SessionEntry) -> bool:
    if isinstance(entry, BranchSummaryEntry | CustomMessageEntry):
        return True
    return isinstance(entry, MessageEntry) and entry.message.role in ("user", "bashExecution")


@dataclass
class FileOps:
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    failed: set[str] = field(default_factory=set)
    """Tool call ids whose result was an error (a denied or failed write changed nothing)."""
    _calls: dict[str, tuple[str, str]] = field(default_factory=dict)

    def add_from(self, message: AgentMessage) -> None:
        """Count the files ``message`` reads or changes; messages may come in either order
        (a failed call's result drops its path again, FIRST_HOUR.md m13)."""
        if isinstance(message, ToolResultMessage):
            if message.is_error:
                self.failed.add(message.tool_call_id)
                call = self._calls.pop(message.tool_call_id, None)
                if call is not None and call not in self._calls.values():
                    getattr(self, call[0]).discard(call[1])
            return
        if not isinstance(message, AssistantMessage):
            return
        for block in message.content:
            if isinstance(block, ToolCall) and block.id not in self.failed:
                path = block.arguments.get("path")
                kind = {"read": "read", "write": "written", "edit": "edited"}.get(block.name)
                if isinstance(path, str) and path and kind is not None:
                    getattr(self, kind).add(path)
                    self._calls[block.id] = (kind, path)

    def lists(self) -> tuple[list[str], list[str]]:
        modified = self.edited | self.written
        return sorted(self.read - modified), sorted(modified)


@dataclass
class CompactionPreparation:
    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps


def find_cut_point(path: Sequence[SessionEntry], start: int, keep_recent_tokens: int) -> int:
    """Index of the first kept entry (Pi's ``findCutPoint``)."""
    points = [i for i in range(start, len(path)) if _is_cut_point(path[i])]
    if not points:
        return start
    total = 0
    cut = points[0]
    for i in range(len(path) - 1, start - 1, -1):
        entry = path[i]
        if isinstance(entry, MessageEntry):
            total += estimate_tokens(entry.message)
        if total >= keep_recent_tokens:
            later = [p for p in points if p >= i]
            cut = later[0] if later else points[0]
            break
    while cut > start and not isinstance(path[cut - 1], MessageEntry | CompactionEntry):
        cut -= 1
    return cut


def prepare_compaction(
    path: Sequence[SessionEntry],
    context_messages: Sequence[AgentMessage],
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
) -> CompactionPreparation | None:
    if not path or isinstance(path[-1], CompactionEntry):
        return None
    prev_index = next(
        (i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], CompactionEntry)), None
    )
    start = 0
    previous_summary: str | None = None
    file_ops = FileOps()
    if prev_index is not None:
        prev = path[prev_index]
        assert isinstance(prev, CompactionEntry)
        ids = [e.id for e in path]
        start = (
            ids.index(prev.first_kept_entry_id)
            if prev.first_kept_entry_id in ids[:prev_index]
            else prev_index + 1
        )
        previous_summary = prev.summary
        if not prev.from_hook and isinstance(prev.details, dict):
            file_ops.read.update(p for p in prev.details.get("readFiles", []) if isinstance(p, str))
            file_ops.edited.update(
                p for p in prev.details.get("modifiedFiles", []) if isinstance(p, str)
            )
    tokens_before = estimate_context_tokens(context_messages)
    cut = find_cut_point(path, start, keep_recent_tokens)
    if cut >= len(path):
        return None
    split = False
    turn_start = cut
    if not (isinstance(path[cut], MessageEntry) and path[cut].message.role == "user"):  # type: ignore[union-attr]
        for i in range(cut, start - 1, -1):
            if _is_turn_start(path[i]):
                turn_start = i
                split = True
                break
    end = turn_start if split else cut
    to_summarize = [m for e in path[start:end] if (m := _project(e)) is not None]
    prefix = [m for e in path[turn_start:cut] if (m := _project(e)) is not None] if split else []
    for m in (*to_summarize, *prefix):
        file_ops.add_from(m)
    if not to_summarize and not prefix:
        return None
    return CompactionPreparation(
        first_kept_entry_id=path[cut].id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=split and bool(prefix),
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=file_ops,
    )


# ------------------------------------------------------------------------ prompts

SUMMARY_SYSTEM_PROMPT = (
    "You write checkpoint summaries of conversations between a user and a coding agent that "
    "works in their project folder. Output only the summary in the requested structure. Do "
    "not continue the conversation, do not answer questions asked in it, do not add advice."
)

_SKELETON = """## Goal
What the user is trying to achieve.

## Constraints & Preferences
Requirements, instructions and preferences the user stated (keep them verbatim when short).

## Progress
### Done
- [x] ...
### In Progress
- [ ] ...
### Blocked
- ...

## Key Decisions
- decision and the reason for it

## Next Steps
1. ...

## Critical Context
Exact file paths, function names, commands, error messages and values needed to continue."""

COMPACTION_INSTRUCTIONS = (
    "Summarize the conversation above as a checkpoint from which another model can continue "
    "the work without the original messages. Use exactly this structure:\n\n"
    + _SKELETON
    + "\n\nBe concise but never drop the user's instructions, workarounds that were found, or "
    "exact paths, names and error messages."
)

UPDATE_INSTRUCTIONS = (
    "The messages above are NEW since the previous summary. Produce an updated summary with "
    "the same structure:\n\n"
    + _SKELETON
    + "\n\nKeep everything still relevant from the previous summary, move finished items to "
    "Done, refresh Next Steps, and drop only what is obsolete."
)

TURN_PREFIX_INSTRUCTIONS = (
    "The messages above are the early part of one very long turn whose later part is kept "
    "verbatim. Summarize them with the headings ## Original Request, ## Early Progress and "
    "## Context for Suffix, keeping exact paths, names and errors."
)

BRANCH_SUMMARY_INSTRUCTIONS = (
    "The user explored the conversation branch above and is now going back to an earlier "
    "point. Summarize this branch so the work can use what was learned there, with the "
    "headings ## Goal, ## Constraints & Preferences, ## Progress (Done / In Progress / "
    "Blocked), ## Key Decisions and ## Next Steps. Keep exact paths, names and errors."
)

BRANCH_SUMMARY_PREAMBLE = (
    "The user explored a different branch of this conversation and came back here.\n"
    "Summary of that branch:\n\n"
)


def serialize_conversation(messages: Sequence[AgentMessage]) -> str:
    parts: list[str] = []
    for message in convert_to_llm(list(messages)):
        if isinstance(message, UserMessage):
            text = (
                message.content
                if isinstance(message.content, str)
                else "".join(b.text for b in message.content if isinstance(b, TextContent))
            )
            if text:
                parts.append(f"[User]: {text}")
        elif isinstance(message, AssistantMessage):
            thinking = "\n".join(
                b.thinking for b in message.content if isinstance(b, ThinkingContent)
            )
            text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            calls = "; ".join(
                f"{b.name}("
                + ", ".join(
                    f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in b.arguments.items()
                )
                + ")"
                for b in message.content
                if isinstance(b, ToolCall)
            )
            if thinking:
                parts.append(f"[Assistant thinking]: {thinking}")
            if text:
                parts.append(f"[Assistant]: {text}")
            if calls:
                parts.append(f"[Assistant tool calls]: {calls}")
        elif isinstance(message, ToolResultMessage):
            text = "".join(b.text for b in message.content if isinstance(b, TextContent))
            if len(text) > 2000:
                text = text[:2000] + f"\n\n[... {len(text) - 2000} more characters truncated]"
            parts.append(f"[Tool result]: {text}")
    return "\n\n".join(parts)


Completer = Callable[[Model, LlmContext, StreamOptions], Awaitable[AssistantMessage]]


def _file_tags(file_ops: FileOps) -> tuple[str, list[str], list[str]]:
    read, modified = file_ops.lists()
    tags = ""
    if read:
        tags += "\n\n<read-files>\n" + "\n".join(read) + "\n</read-files>"
    if modified:
        tags += "\n\n<modified-files>\n" + "\n".join(modified) + "\n</modified-files>"
    return tags, read, modified


async def _summarize(
    complete: Completer,
    model: Model,
    options: StreamOptions,
    conversation: str,
    instructions: str,
    previous: str | None,
    max_tokens: int,
) -> str:
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if previous:
        text += f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
    text += instructions
    opts = StreamOptions(
        api_key=options.api_key,
        thinking_level=options.thinking_level if model.reasoning else "off",
        max_tokens=max(256, min(max_tokens, model.max_tokens or max_tokens)),
        headers=options.headers,
        abort=options.abort,
    )
    context = LlmContext(
        system_prompt=SUMMARY_SYSTEM_PROMPT,
        messages=[UserMessage(content=[TextContent(text=text)], timestamp=0)],
    )
    result = await complete(model, context, opts)
    if result.stop_reason == "aborted":
        raise CompactionError("aborted", "Summarization was cancelled")
    if result.stop_reason == "error":
        raise CompactionError(
            "summarization_failed", f"Summarization failed: {result.error_message}"
        )
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent)).strip()


@dataclass
class CompactionResult:
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: dict[str, list[str]]


async def run_compaction(
    preparation: CompactionPreparation,
    *,
    model: Model,
    options: StreamOptions,
    complete: Completer,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    custom_instructions: str | None = None,
) -> CompactionResult:
    instructions = UPDATE_INSTRUCTIONS if preparation.previous_summary else COMPACTION_INSTRUCTIONS
    if custom_instructions:
        instructions += f"\n\nAdditional focus: {custom_instructions}"
    history_budget = int(0.8 * reserve_tokens)
    history = (
        await _summarize(
            complete,
            model,
            options,
            serialize_conversation(preparation.messages_to_summarize),
            instructions,
            preparation.previous_summary,
            history_budget,
        )
        if preparation.messages_to_summarize or preparation.previous_summary
        else "No prior history."
    )
    summary = history
    if preparation.is_split_turn:
        prefix = await _summarize(
            complete,
            model,
            options,
            serialize_conversation(preparation.turn_prefix_messages),
            TURN_PREFIX_INSTRUCTIONS,
            None,
            int(0.5 * reserve_tokens),
        )
        summary = f"{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix}"
    tags, read, modified = _file_tags(preparation.file_ops)
    return CompactionResult(
        summary=summary + tags,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details={"readFiles": read, "modifiedFiles": modified},
    )


# ------------------------------------------------------------------------ branch summaries


def collect_branch_entries(
    old_path: Sequence[SessionEntry], target_path: Sequence[SessionEntry]
) -> list[SessionEntry]:
    """Entries of the branch being left, oldest first (up to the common ancestor)."""
    target_ids = {e.id for e in target_path}
    out: list[SessionEntry] = []
    for entry in reversed(old_path):
        if entry.id in target_ids:
            break
        out.append(entry)
    out.reverse()
    return out


async def generate_branch_summary(
    entries: Sequence[SessionEntry],
    *,
    model: Model,
    options: StreamOptions,
    complete: Completer,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    custom_instructions: str | None = None,
) -> tuple[str, dict[str, list[str]]]:
    budget = (model.context_window or 128_000) - reserve_tokens
    file_ops = FileOps()
    chosen: list[AgentMessage] = []
    used = 0
    for entry in reversed(entries):
        if (
            isinstance(entry, BranchSummaryEntry)
            and not entry.from_hook
            and isinstance(entry.details, dict)
        ):
            file_ops.read.update(
                p for p in entry.details.get("readFiles", []) if isinstance(p, str)
            )
            file_ops.edited.update(
                p for p in entry.details.get("modifiedFiles", []) if isinstance(p, str)
            )
        if isinstance(entry, CompactionEntry):
            message: AgentMessage | None = CompactionSummaryMessage(
                summary=entry.summary, tokens_before=entry.tokens_before, timestamp=0
            )
        else:
            message = _project(entry)
        if isinstance(message, ToolResultMessage):
            file_ops.add_from(message)  # (a failed write is no modified file)
            continue
        if message is None:
            continue
        cost = estimate_tokens(message)
        if used + cost > budget:
            summary_like = isinstance(message, BranchSummaryMessage | CompactionSummaryMessage)
            if not (summary_like and used + cost < 0.9 * budget):
                break
        used += cost
        file_ops.add_from(message)
        chosen.append(message)
    chosen.reverse()
    if not chosen:
        return "No content to summarize", {"readFiles": [], "modifiedFiles": []}
    instructions = BRANCH_SUMMARY_INSTRUCTIONS
    if custom_instructions:
        instructions += f"\n\nAdditional focus: {custom_instructions}"
    text = await _summarize(
        complete, model, options, serialize_conversation(chosen), instructions, None, 2048
    )
    tags, read, modified = _file_tags(file_ops)
    return BRANCH_SUMMARY_PREAMBLE + text + tags, {"readFiles": read, "modifiedFiles": modified}
