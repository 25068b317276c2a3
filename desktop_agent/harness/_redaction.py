"""Secret redaction of what the harness writes to a session (issue 11 item 6).

Every message, custom entry and summary passes `SessionRedaction` before it is appended,
so the session file, the index built from it and every export see ``[redacted: <kind>]``
markers instead of keys. Identity and signature fields stay byte-exact (ids, tool-call
ids, thinking/text/thought signatures, image data, signed thinking text), so a redacted
history still replays to the provider that signed it.

The choice is per session: `REDACTION_CUSTOM_TYPE` custom entries record it (the last
one in the file wins), so it survives a restart. With redaction off, the app's own API
keys (registered in the shared `Redactor`) are still removed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from desktop_agent.agent import (
    AgentEvent,
    AgentToolResult,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
)
from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    ToolResultMessage,
    parse_content_block,
    parse_message,
)
from desktop_agent.session import Session
from desktop_agent.utils import Redactor

REDACTION_CUSTOM_TYPE = "desktop-agent.redaction"
"""Custom entry ``{"enabled": bool}``: secret redaction turned on or off for a session."""

KEEP_FIELDS = frozenset(
    {
        "id",
        "toolCallId",
        "thinkingSignature",
        "textSignature",
        "thoughtSignature",
        "signature",
        "responseId",
        "responseModel",
        "api",
        "provider",
        "model",
        "role",
        "type",
        "mimeType",
        "stopReason",
        "customType",
        "timestamp",
        "fromId",
        "parentId",
        "firstKeptEntryId",
    }
)
"""Fields never redacted: ids, signatures and names the format and providers match on."""


def _keep(key: str, parent: Mapping[str, Any]) -> bool:
    if key in KEEP_FIELDS:
        return True
    kind = parent.get("type")
    if kind == "image" and key == "data":
        return True  # base64 image bytes
    # Signed or encrypted thinking must be sent back exactly as the provider issued it.
    return (
        kind == "thinking"
        and key == "thinking"
        and bool(parent.get("thinkingSignature") or parent.get("redacted"))
    )


class SessionRedaction:
    """The redaction a harness applies to one session: on by default, off when the
    session's last `REDACTION_CUSTOM_TYPE` entry says so."""

    def __init__(self, session: Session, redactor: Redactor | None = None) -> None:
        self.redactor = redactor if redactor is not None else Redactor()
        self._session = session
        self._enabled: bool | None = None

    @property
    def enabled(self) -> bool:
        """Whether secret shapes are redacted (read from the session once, then kept)."""
        if self._enabled is None:
            self._enabled = _recorded_choice(self._session)
        return self._enabled

    def set_enabled(self, enabled: bool) -> None:
        self._enabled = enabled

    def text(self, text: str) -> str:
        return self.redactor.redact(text, shapes=self.enabled)

    def data(self, value: Any) -> Any:
        """A JSON value with its strings redacted (ids and signatures kept)."""
        return self.redactor.redact_json(value, skip=_keep, shapes=self.enabled)

    def message(self, message: AgentMessage) -> AgentMessage:
        """``message`` itself when it holds no secret, else a redacted copy."""
        obj = message.to_json_dict()
        redacted = self.data(obj)
        if redacted is obj:
            return message
        return parse_message(redacted)

    def event(self, event: AgentEvent) -> AgentEvent:
        """The event as listeners see it: secrets redacted the way the session keeps them
        (the loop itself goes on with the original: tools run with the real arguments).
        Streaming deltas are shown as they come; their ``message_end`` is redacted."""
        redact = self
        if isinstance(event, MessageEndEvent):
            message = redact.message(event.message)
            return event if message is event.message else MessageEndEvent(message=message)
        if isinstance(event, MessageStartEvent) and not isinstance(event.message, AssistantMessage):
            message = redact.message(event.message)
            return event if message is event.message else MessageStartEvent(message=message)
        if isinstance(event, ToolExecutionStartEvent):
            args = redact.data(event.args)
            return event if args is event.args else dataclasses.replace(event, args=args)
        if isinstance(event, ToolExecutionUpdateEvent):
            partial = self.tool_result(event.partial_result)
            args = redact.data(event.args)
            if partial is event.partial_result and args is event.args:
                return event
            return dataclasses.replace(event, args=args, partial_result=partial)
        if isinstance(event, ToolExecutionEndEvent):
            result = self.tool_result(event.result)
            return event if result is event.result else dataclasses.replace(event, result=result)
        if isinstance(event, TurnEndEvent):
            assistant = redact.message(event.message)
            results = [redact.message(r) for r in event.tool_results]
            if assistant is event.message and all(
                a is b for a, b in zip(results, event.tool_results, strict=True)
            ):
                return event
            assert isinstance(assistant, AssistantMessage)
            return TurnEndEvent(
                message=assistant,
                tool_results=[r for r in results if isinstance(r, ToolResultMessage)],
            )
        return event

    def tool_result(self, result: AgentToolResult) -> AgentToolResult:
        """A tool's result with its content and details redacted (itself if clean)."""
        blocks = [b.to_json_dict() for b in result.content]
        content = self.data(blocks)
        details = self.data(result.details)
        if content is blocks and details is result.details:
            return result
        return AgentToolResult([parse_content_block(b) for b in content], details, result.is_error)


def _recorded_choice(session: Session) -> bool:
    needle = json.dumps(REDACTION_CUSTOM_TYPE).encode()
    enabled = True
    for _id, _parent, kind, _ts, raw in session.raw_entries():
        if kind != "custom" or needle not in raw:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        data = obj.get("data")
        if obj.get("customType") == REDACTION_CUSTOM_TYPE and isinstance(data, dict):
            value = data.get("enabled")
            if isinstance(value, bool):
                enabled = value
    return enabled
