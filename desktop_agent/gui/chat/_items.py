"""What the chat pane shows: one `ChatItem` per message of the current branch."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop_agent.ai import AgentMessage, AssistantMessage, ToolResultMessage


@dataclass
class ChatItem:
    """One message of the branch, with where it sits among its siblings.

    ``tool_results`` holds, for an assistant item, the results of its tool calls by
    ``tool_call_id``; the pane merges appended tool-result items into it.
    """

    entry_id: str | None
    message: AgentMessage
    sibling_index: int = 0
    sibling_count: int = 1
    tool_results: dict[str, ToolResultMessage] = field(default_factory=dict)
    label: str | None = None
    attempts: list[AssistantMessage] = field(default_factory=list)
    """Earlier failed attempts of the same request, folded into this card."""
    interrupted: frozenset[str] = frozenset()
    """Its tool calls that never got a result: the app stopped while they ran."""
