"""One text of a message for Copy, export, edit, search and tree previews."""

from __future__ import annotations

import msgspec

from desktop_agent.ai import (
    AssistantMessage,
    BranchSummaryMessage,
    ContentBlock,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)
from desktop_agent.utils.text import content_text, message_text


def test_typed_messages_dicts_and_structs_agree() -> None:
    blocks: list[ContentBlock] = [
        TextContent(text="first"),
        ThinkingContent(thinking="hidden"),
        ToolCall(id="c1", name="read", arguments={}),
        TextContent(text=""),
        TextContent(text="second"),
    ]
    message = AssistantMessage(
        content=blocks,
        api="anthropic-messages",
        provider="anthropic",
        model="m",
        stop_reason="stop",
        timestamp=1,
    )
    as_dicts = [b.to_json_dict() for b in blocks]

    class Block(msgspec.Struct):
        type: str
        text: str | None = None

    structs = msgspec.json.decode(msgspec.json.encode(as_dicts), type=list[Block])
    assert message_text(message) == "first\n\nsecond"
    assert content_text(as_dicts) == content_text(structs) == "first\n\nsecond"
    assert message_text({"role": "user", "content": as_dicts}) == "first\n\nsecond"


def test_strings_images_and_summaries() -> None:
    user = UserMessage(
        content=[TextContent(text="look"), ImageContent(data="", mime_type="image/png")],
        timestamp=1,
    )
    assert message_text(user) == "look"
    assert content_text("plain") == "plain"
    assert content_text(None) == "" and content_text(42) == ""
    summary = BranchSummaryMessage(summary="what happened", from_id="x", timestamp=1)
    assert message_text(summary) == "what happened"
