"""Approval policy: per call, allow, ask the user, or deny; fail closed.

The policy never touches the session: `ApprovalPolicy.check` returns an
`ApprovalOutcome` whose `record` the harness appends as a custom entry of type
`APPROVAL_CUSTOM_TYPE`. A tool that runs unconfined (the shell where no OS sandbox works,
`Tool.always_ask`) is asked for every time, whatever the rules and "always" say. After the
sandbox blocked a call, `ApprovalPolicy.check_outside_sandbox` asks the second question:
run it outside the sandbox, this once (recorded the same way, never remembered).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
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
    RUN_OUTSIDE_SANDBOX_ONCE = "run_outside_sandbox_once"
    """Run a command the sandbox blocked once more, outside the sandbox (that call only)."""


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
    sandbox_blocked: str | None = None
    """Set when the command ran in the sandbox and was blocked (the words the model got):
    the prompt then offers `ApprovalDecision.RUN_OUTSIDE_SANDBOX_ONCE`."""
    unconfined: str | None = None
    """Why this call would run without a sandbox (no sandbox on this machine), if so."""


@dataclass(frozen=True, slots=True)
class ApprovalAnswer:
    """A decision with the words the person gave for it ("Deny and say why…"): the model
    reads them in the denied call's tool result."""

    decision: ApprovalDecision
    said: str = ""


ApprovalCallback: TypeAlias = Callable[
    [ApprovalRequest], Awaitable[ApprovalDecision | ApprovalAnswer | None]
]


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """One decision, as recorded in the session."""

    tool: str
    call_id: str
    decision: str
    """``allow`` (by policy or remembered), ``allow_once``, ``allow_always``, ``deny`` or
    ``run_outside_sandbox_once``."""
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
    said: str = ""
    """What the person told the agent with their denial, if anything."""

    @property
    def message(self) -> str:
        """The error text of a denied call, for the tool result the model sees."""
        if self.allowed:
            return ""
        if self.said:
            return f"The user did not approve this {self.record.tool} call. They said: {self.said}"
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


MCP_PREFIX = "mcp__"


def server_rule(tool_name: str) -> str | None:
    """``mcp__<server>`` for an MCP tool name ``mcp__<server>__<tool>``, else ``None``
    (the rule that covers every tool of that server)."""
    if not tool_name.startswith(MCP_PREFIX):
        return None
    server, sep, _tool = tool_name[len(MCP_PREFIX) :].partition("__")
    return f"{MCP_PREFIX}{server}" if sep and server else None


class ApprovalPolicy:
    """Decides per call; remembers "always allow" per tool for this session.

    The rule of a tool is, in order: an explicit rule given to the constructor (for an
    MCP tool ``mcp__<server>__<tool>``, then the rule ``mcp__<server>`` of its server), the
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
        server = server_rule(tool_name)
        if server is not None and server in self.rules:
            return self.rules[server]
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

        unconfined = tool.always_ask() if tool is not None else None
        if rule == "deny":
            return outcome(False, "deny", "denied by policy", False)
        if unconfined is None:
            if rule == "allow":
                return outcome(True, "allow", "allowed by policy", False)
            if tool_name in self._always:
                return outcome(True, "allow", "always allowed in this session", False)
        if self.ask is None:
            return outcome(False, "deny", "no one to ask for approval", False)
        request = build_request(tool, tool_name, call_id, arguments, ctx)
        if unconfined is not None:
            request = replace(request, unconfined=unconfined)
        answer, failed = await self._ask(request)
        if failed is not None:
            return outcome(False, "deny", failed, True)
        said = answer.said.strip() if isinstance(answer, ApprovalAnswer) else ""
        if isinstance(answer, ApprovalAnswer):
            answer = answer.decision
        if answer == ApprovalDecision.DENY and said:
            record = ApprovalRecord(tool_name, call_id, "deny", f"denied by the user: {said}")
            return ApprovalOutcome(False, record, True, said)
        if answer == ApprovalDecision.ALLOW_ONCE:
            return outcome(True, "allow_once", "approved by the user", True)
        if answer == ApprovalDecision.ALLOW_ALWAYS:
            self._always.add(tool_name)
            return outcome(True, "allow_always", "approved by the user for this session", True)
        if answer == ApprovalDecision.DENY:
            return outcome(False, "deny", "denied by the user", True)
        return outcome(False, "deny", "approval prompt dismissed", True)

    async def check_outside_sandbox(
        self,
        tool: Tool[Any],
        call_id: str,
        arguments: Mapping[str, Any],
        ctx: ToolContext,
        blocked: str,
    ) -> ApprovalOutcome | None:
        """After the sandbox blocked a call: ask whether to run it outside, this once.

        None when there is no one to ask (the blocked result stands, nothing recorded).
        Only `ApprovalDecision.RUN_OUTSIDE_SANDBOX_ONCE` allows; it is never remembered.
        Words given with "keep it blocked" are the outcome's ``said`` (for the model).
        """
        if self.ask is None:
            return None
        request = build_request(tool, tool.name, call_id, arguments, ctx)
        answer, failed = await self._ask(replace(request, sandbox_blocked=blocked))
        said = answer.said.strip() if isinstance(answer, ApprovalAnswer) else ""
        if isinstance(answer, ApprovalAnswer):
            answer = answer.decision
        decision, reason, allowed = "deny", failed or "kept in the sandbox by the user", False
        if failed is None and answer == ApprovalDecision.RUN_OUTSIDE_SANDBOX_ONCE:
            decision, reason = "run_outside_sandbox_once", "run outside the sandbox by the user"
            allowed, said = True, ""
        elif said:  # "Keep it blocked and say why…": the words go to the model and the record
            reason = f"{reason}: {said}"
        record = ApprovalRecord(tool.name, call_id, decision, reason)
        return ApprovalOutcome(allowed, record, True, said)

    async def _ask(
        self, request: ApprovalRequest
    ) -> tuple[ApprovalDecision | ApprovalAnswer | None, str | None]:
        """The user's answer, or a reason to deny (timeout, failed prompt)."""
        assert self.ask is not None
        try:
            if self.timeout is None:
                return await self.ask(request), None
            async with asyncio.timeout(self.timeout):
                return await self.ask(request), None
        except TimeoutError:
            return None, "approval timed out"
        except Exception as exc:  # noqa: BLE001 - any failure of the prompt denies
            _log.warning("approval callback failed: %s: %s", type(exc).__name__, exc)
            return None, f"approval failed: {type(exc).__name__}"


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
