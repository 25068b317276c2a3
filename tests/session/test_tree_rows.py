"""One-line rows of every entry (`rows_from_session`), kept from the old tree pane's tests."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from desktop_agent.ai import AssistantMessage, ContentBlock, TextContent, ToolCall, UserMessage
from desktop_agent.session import (
    BranchSummary,
    InMemorySessionRepo,
    TreeRow,
    preview,
    rows_from_session,
)


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def assistant(text: str, *tools: str) -> AssistantMessage:
    content: list[ContentBlock] = [TextContent(text=text)] if text else []
    content += [ToolCall(id=f"c{i}", name=name) for i, name in enumerate(tools)]
    return AssistantMessage(
        content=content,
        api="openai-completions",
        provider="local",
        model="m",
        stop_reason="stop",
        timestamp=2,
    )


@dataclass
class Sample:
    """A session with two branch points, a label, a compaction and a branch summary.

    u1 → a1 ┬ u2 ┬ a2 ─(label u2)─ u2b
            │    └ bs (summary of the B branch) → u4   ← leaf
            └ u3 → comp → a3
    """

    rows: list[TreeRow]
    path: list[str]
    ids: dict[str, str]


async def _build_sample() -> Sample:
    repo = InMemorySessionRepo()
    s = await repo.create(cwd="/work/project")
    ids: dict[str, str] = {}
    ids["u1"] = await s.append_message(user("fix the tests\nplease, they fail on CI"))
    ids["a1"] = await s.append_message(assistant("Which approach do you want?", "read"))
    ids["u2"] = await s.append_message(user("try approach A"))
    ids["a2"] = await s.append_message(assistant("Approach A is done."))
    ids["label"] = await s.append_label(ids["u2"], "approach-a")
    ids["u2b"] = await s.append_message(user("and then?"))  # parent: the label entry
    await s.move_to(ids["a1"])
    ids["u3"] = await s.append_message(user("try approach B"))
    ids["comp"] = await s.append_compaction("Tried B; tests pass.", ids["u3"], 12000)
    ids["a3"] = await s.append_message(assistant("Approach B is done."))
    bs = await s.move_to(ids["u2"], BranchSummary("B worked but was slow"))
    assert bs is not None
    ids["bs"] = bs
    ids["u4"] = await s.append_message(user("continue with A"))
    rows = await rows_from_session(s)
    return Sample(rows, s.branch_ids(), ids)


@pytest.fixture
def sample() -> Sample:
    return asyncio.run(_build_sample())


def names(sample: Sample, ids: list[str]) -> list[str]:
    back = {v: k for k, v in sample.ids.items()}
    return [back.get(i, i) for i in ids]


# ---------------------------------------------------------------- rows_from_session


def test_rows_from_session_structure_and_order(sample: Sample) -> None:
    rows = {r.id: r for r in sample.rows}
    ids = sample.ids
    # leaf and label entries are bookkeeping, not nodes
    assert ids["label"] not in rows
    assert all(r.type not in ("leaf", "label") for r in sample.rows)
    assert len(sample.rows) == 10
    # pre-order, siblings oldest first
    assert names(sample, [r.id for r in sample.rows]) == [
        "u1", "a1", "u2", "a2", "u2b", "bs", "u4", "u3", "comp", "a3",
    ]  # fmt: skip
    parent = {
        k: names(sample, [rows[ids[k]].parent_id or "-"])[0]
        for k in rows and ids
        if k in ids and ids[k] in rows
    }
    assert parent == {
        "u1": "-", "a1": "u1", "u2": "a1", "a2": "u2", "u2b": "a2",  # through the label
        "u3": "a1", "comp": "u3", "a3": "comp", "bs": "u2", "u4": "bs",
    }  # fmt: skip
    assert rows[ids["u2"]].label == "approach-a"
    assert rows[ids["u1"]].label is None
    assert rows[ids["u1"]].text == "You: fix the tests please, they fail on CI"
    assert rows[ids["u1"]].role == "user" and rows[ids["u1"]].type == "message"
    assert rows[ids["a1"]].text == "Assistant: Which approach do you want? → read"
    assert rows[ids["comp"]].type == "compaction"
    assert rows[ids["comp"]].text == "Compaction: Tried B; tests pass."
    assert rows[ids["bs"]].type == "branch_summary"
    assert rows[ids["bs"]].text == "Branch summary: B worked but was slow"
    assert names(sample, sample.path) == ["u1", "a1", "u2", "bs", "u4"]


def test_preview_is_one_bounded_line() -> None:
    text = preview("word " * 100)
    assert len(text) == 80 and text.endswith("…") and "\n" not in text
    assert preview("a\n\n  b\tc") == "a b c"


# ---------------------------------------------------------------- model
