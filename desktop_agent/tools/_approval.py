"""Approval policy: per call, allow, ask the user, or deny; fail closed.

The policy never touches the session: `ApprovalPolicy.check` returns an
`ApprovalOutcome` whose `record` the harness appends as a custom entry of type
`APPROVAL_CUSTOM_TYPE`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypeAlias

from desktop_agent.tools._base import CallPreview, Tool, ToolContext
from desktop_agent.tools._errors import ToolError

_log = logging.getLogger(__name__)

APPROVAL_CUSTOM_TYPE = "desktop-agent.approval"
"""`customType` of the session entries that record approval decisions."""

Rule: TypeAlias = Literal["allow", "ask", "deny"]


class ApprovalDecision(StrEnum):
    """What the user chose in the approval prompt."""

    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the approval prompt shows: the tool, a summary, argv or diff, the cwd."""

    tool_name: str
    call_id: str
    summary: str
    cwd: str
    command: tuple[str, ...] | None = None
    diff: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)


ApprovalCallback: TypeAlias = Callable[[ApprovalRequest], Awaitable[ApprovalDecision | None]]


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """One decision, as recorded in the session."""

    tool: str
    call_id: str
    decision: str
    """``allow`` (by policy or remembered), ``allow_once``, ``allow_always`` or ``deny``."""
    reason: str

    custom_type: str = APPROVAL_CUSTOM_TYPE

    def to_data(self) -> dict[str, Any]:
        """The JSON ``data`` of the custom entry."""
        return {
            "tool": self.tool,
            "callId": self.call_id,
            "decision": self.decision,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class ApprovalOutcome:
    allowed: bool
    record: ApprovalRecord
    asked: bool
    """Whether the user was asked (the harness may record only those, or every call)."""

    @property
    def message(self) -> str:
        """The error text of a denied call, for the tool result the model sees."""
        if self.allowed:
            return ""
        return f"The user did not approve this {self.record.tool} call ({self.record.reason})."


DEFAULT_RULES: Mapping[str, Rule] = {
    "read": "allow",
    "ls": "allow",
    "grep": "allow",
    "find": "allow",
    "bash": "ask",
    "write": "ask",
    "edit": "ask",
}


class ApprovalPolicy:
    """Decides per call; remembers "always allow" per tool for this session.

    The rule of a tool is, in order: an explicit rule given to the constructor, the
    built-in default (ask before ``bash``, ``write``, ``edit``; allow the read-only
    tools), ``ask`` if the tool says it `needs_approval`, else ``ask`` for unknown tools
    and ``allow`` for known read-only ones. "Ask" without a callback, a dismissed prompt
    (``None``), an unknown answer, a timeout or an exception in the callback all deny.
    """

    def __init__(
        self,
        ask: ApprovalCallback | None = None,
        rules: Mapping[str, Rule] | None = None,
        *,
        timeout: float | None = None,
        always_allowed: Iterable[str] = (),
    ) -> None:
        self.ask = ask
        self.rules: dict[str, Rule] = dict(rules or {})
        self.timeout = timeout
        self._always: set[str] = set(always_allowed)

    @property
    def always_allowed(self) -> frozenset[str]:
        return frozenset(self._always)

    def allow_always(self, tool_name: str) -> None:
        self._always.add(tool_name)

    def forget(self, tool_name: str | None = None) -> None:
        """Forget "always allow" for one tool, or for all."""
        if tool_name is None:
            self._always.clear()
        else:
            self._always.discard(tool_name)

    def rule_for(self, tool_name: str, tool: Tool[Any] | None = None) -> Rule:
        if tool_name in self.rules:
            return self.rules[tool_name]
        if tool is not None and tool.needs_approval:
            return "ask"
        if tool_name in DEFAULT_RULES:
            return DEFAULT_RULES[tool_name]
        return "allow" if tool is not None else "ask"

    async def check(
        self,
        tool: Tool[Any] | None,
        tool_name: str,
        call_id: str,
        arguments: Mapping[str, Any],
        ctx: ToolContext,
    ) -> ApprovalOutcome:
        """The decision for one call (asking the user through the callback if needed)."""
        rule = self.rule_for(tool_name, tool)

        def outcome(allowed: bool, decision: str, reason: str, asked: bool) -> ApprovalOutcome:
            record = ApprovalRecord(tool_name, call_id, decision, reason)
            return ApprovalOutcome(allowed, record, asked)

        if rule == "deny":
            return outcome(False, "deny", "denied by policy", False)
        if rule == "allow":
            return outcome(True, "allow", "allowed by policy", False)
        if tool_name in self._always:
            return outcome(True, "allow", "always allowed in this session", False)
        if self.ask is None:
            return outcome(False, "deny", "no one to ask for approval", False)
        request = build_request(tool, tool_name, call_id, arguments, ctx)
        try:
            if self.timeout is None:
                answer = await self.ask(request)
            else:
                async with asyncio.timeout(self.timeout):
                    answer = await self.ask(request)
        except TimeoutError:
            return outcome(False, "deny", "approval timed out", True)
        except Exception as exc:  # noqa: BLE001 - any failure of the prompt denies
            _log.warning("approval callback failed: %s: %s", type(exc).__name__, exc)
            return outcome(False, "deny", f"approval failed: {type(exc).__name__}", True)
        if answer == ApprovalDecision.ALLOW_ONCE:
            return outcome(True, "allow_once", "approved by the user", True)
        if answer == ApprovalDecision.ALLOW_ALWAYS:
            self._always.add(tool_name)
            return outcome(True, "allow_always", "approved by the user for this session", True)
        if answer == ApprovalDecision.DENY:
            return outcome(False, "deny", "denied by the user", True)
        return outcome(False, "deny", "approval prompt dismissed", True)


def build_request(
    tool: Tool[Any] | None,
    tool_name: str,
    call_id: str,
    arguments: Mapping[str, Any],
    ctx: ToolContext,
) -> ApprovalRequest:
    """The prompt for one call; a preview that fails still yields a request (args only)."""
    preview = CallPreview(summary=f"{tool_name} {dict(arguments)!r}"[:500])
    if tool is not None:
        try:
            preview = tool.preview(tool.parse_arguments(arguments), ctx)
        except ToolError as exc:
            preview = CallPreview(summary=f"{preview.summary}\n(preview failed: {exc})")
        except Exception as exc:  # noqa: BLE001 - a broken preview still asks
            _log.warning("preview of %s failed: %s", tool_name, exc)
    return ApprovalRequest(
        tool_name=tool_name,
        call_id=call_id,
        summary=preview.summary,
        cwd=str(ctx.workspace.root),
        command=preview.command,
        diff=preview.diff,
        arguments=dict(arguments),
    )
