"""Approval policy: defaults, "always allow" memory, fail-closed behaviour, records."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from desktop_agent.tools import (
    APPROVAL_CUSTOM_TYPE,
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    BashTool,
    EditTool,
    Tool,
    built_in_tools,
)
from tests.helpers.sandbox import Sandbox


def _tools() -> dict[str, Tool[Any]]:
    return {t.name: t for t in built_in_tools()}


ARGS: dict[str, dict[str, Any]] = {
    "read": {"path": "src/ok.txt"},
    "ls": {},
    "grep": {"pattern": "x"},
    "find": {"pattern": "*"},
    "bash": {"command": "echo hi"},
    "write": {"path": "new.txt", "content": "x\n"},
    "edit": {"path": "src/ok.txt", "old_text": "world", "new_text": "there"},
}


class Asker:
    def __init__(self, answer: ApprovalDecision | BaseException | None) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision | None:
        self.requests.append(request)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


@pytest.mark.asyncio
async def test_default_rules_ask_for_bash_write_edit_and_allow_reading(sandbox: Sandbox) -> None:
    asker = Asker(ApprovalDecision.ALLOW_ONCE)
    policy = ApprovalPolicy(asker)
    tools = _tools()
    asked = []
    for name, args in ARGS.items():
        outcome = await policy.check(tools[name], name, f"id-{name}", args, sandbox.ctx())
        assert outcome.allowed
        if outcome.asked:
            asked.append(name)
    assert asked == ["bash", "write", "edit"]
    assert [r.tool_name for r in asker.requests] == ["bash", "write", "edit"]


@pytest.mark.asyncio
async def test_requests_show_argv_diff_and_cwd(sandbox: Sandbox) -> None:
    asker = Asker(ApprovalDecision.DENY)
    policy = ApprovalPolicy(asker)
    await policy.check(BashTool(), "bash", "b1", ARGS["bash"], sandbox.ctx())
    await policy.check(EditTool(), "edit", "e1", ARGS["edit"], sandbox.ctx())
    bash, edit = asker.requests
    assert bash.command is not None and bash.command[-2:] == ("-c", "echo hi")
    assert bash.cwd == str(sandbox.root)
    assert bash.call_id == "b1"
    assert edit.diff is not None and "-world\n+there\n" in edit.diff
    assert edit.summary == "edit src/ok.txt"


@pytest.mark.asyncio
async def test_preview_of_a_refused_path_still_asks_and_says_why(sandbox: Sandbox) -> None:
    asker = Asker(ApprovalDecision.DENY)
    policy = ApprovalPolicy(asker)
    args = {"path": "../outside/secret.txt", "content": "x"}
    outcome = await policy.check(_tools()["write"], "write", "w", args, sandbox.ctx())
    assert not outcome.allowed
    assert "Path refused" in asker.requests[0].summary


@pytest.mark.asyncio
async def test_allow_always_is_remembered_for_the_session(sandbox: Sandbox) -> None:
    asker = Asker(ApprovalDecision.ALLOW_ALWAYS)
    policy = ApprovalPolicy(asker)
    first = await policy.check(BashTool(), "bash", "1", ARGS["bash"], sandbox.ctx())
    assert first.allowed and first.asked
    assert first.record.decision == "allow_always"
    second = await policy.check(BashTool(), "bash", "2", ARGS["bash"], sandbox.ctx())
    assert second.allowed and not second.asked
    assert second.record.reason == "always allowed in this session"
    assert len(asker.requests) == 1
    assert policy.always_allowed == {"bash"}
    other = await policy.check(EditTool(), "edit", "3", ARGS["edit"], sandbox.ctx())
    assert other.asked
    policy.forget("bash")
    await policy.check(BashTool(), "bash", "4", ARGS["bash"], sandbox.ctx())
    assert len(asker.requests) == 3


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (ApprovalDecision.DENY, "denied by the user"),
        (None, "approval prompt dismissed"),
        (RuntimeError("dialog crashed"), "approval failed: RuntimeError"),
    ],
)
async def test_deny_dismiss_and_errors_deny(
    sandbox: Sandbox, answer: ApprovalDecision | BaseException | None, reason: str
) -> None:
    policy = ApprovalPolicy(Asker(answer))
    outcome = await policy.check(BashTool(), "bash", "x", ARGS["bash"], sandbox.ctx())
    assert not outcome.allowed
    assert outcome.record.decision == "deny"
    assert outcome.record.reason == reason
    assert "did not approve" in outcome.message
    assert policy.always_allowed == frozenset()


@pytest.mark.asyncio
async def test_unknown_answer_and_timeout_deny(sandbox: Sandbox) -> None:
    async def weird(request: ApprovalRequest) -> Any:
        return "yes please"

    policy = ApprovalPolicy(weird)
    outcome = await policy.check(BashTool(), "bash", "x", ARGS["bash"], sandbox.ctx())
    assert not outcome.allowed

    async def never(request: ApprovalRequest) -> ApprovalDecision:
        await asyncio.sleep(10)
        return ApprovalDecision.ALLOW_ONCE

    slow = ApprovalPolicy(never, timeout=0.05)
    timed = await slow.check(BashTool(), "bash", "y", ARGS["bash"], sandbox.ctx())
    assert not timed.allowed
    assert timed.record.reason == "approval timed out"


@pytest.mark.asyncio
async def test_no_callback_unknown_tools_and_explicit_rules(sandbox: Sandbox) -> None:
    no_gui = ApprovalPolicy()
    outcome = await no_gui.check(BashTool(), "bash", "x", ARGS["bash"], sandbox.ctx())
    assert not outcome.allowed and outcome.record.reason == "no one to ask for approval"
    read = await no_gui.check(_tools()["read"], "read", "r", ARGS["read"], sandbox.ctx())
    assert read.allowed and read.record.decision == "allow"
    unknown = await no_gui.check(None, "mystery", "m", {}, sandbox.ctx())
    assert not unknown.allowed
    assert no_gui.rule_for("mystery") == "ask"
    strict = ApprovalPolicy(Asker(ApprovalDecision.ALLOW_ONCE), rules={"read": "deny"})
    denied = await strict.check(_tools()["read"], "read", "r", ARGS["read"], sandbox.ctx())
    assert not denied.allowed and denied.record.reason == "denied by policy"
    relaxed = ApprovalPolicy(rules={"bash": "allow"})
    allowed = await relaxed.check(BashTool(), "bash", "b", ARGS["bash"], sandbox.ctx())
    assert allowed.allowed


@pytest.mark.asyncio
async def test_records_are_json_for_a_custom_entry(sandbox: Sandbox) -> None:
    policy = ApprovalPolicy(Asker(ApprovalDecision.ALLOW_ONCE))
    outcome = await policy.check(BashTool(), "bash", "call_7", ARGS["bash"], sandbox.ctx())
    record = outcome.record
    assert record.custom_type == APPROVAL_CUSTOM_TYPE == "desktop-agent.approval"
    data = record.to_data()
    assert json.loads(json.dumps(data)) == {
        "tool": "bash",
        "callId": "call_7",
        "decision": "allow_once",
        "reason": "approved by the user",
    }


@pytest.mark.asyncio
async def test_a_denial_with_words_gives_them_to_the_model_and_records_them(
    sandbox: Sandbox,
) -> None:
    from desktop_agent.tools import ApprovalAnswer

    async def deny_saying(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(ApprovalDecision.DENY, "  write src/ops.py instead ")

    policy = ApprovalPolicy(deny_saying)
    tools = _tools()
    outcome = await policy.check(tools["write"], "write", "c1", ARGS["write"], sandbox.ctx())
    assert not outcome.allowed and outcome.asked
    assert outcome.message == (
        "The user did not approve this write call. They said: write src/ops.py instead"
    )
    assert outcome.record.decision == "deny"
    assert outcome.record.reason == "denied by the user: write src/ops.py instead"

    # an answer without words is the plain denial
    async def deny_silently(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(ApprovalDecision.DENY, "   ")

    plain = await ApprovalPolicy(deny_silently).check(
        tools["write"], "write", "c2", ARGS["write"], sandbox.ctx()
    )
    assert plain.message == "The user did not approve this write call (denied by the user)."
