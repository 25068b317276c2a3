"""`Session.move_to` writes ``leaf`` entries whose ``parentId`` is the target (issue 13
item 2): core reads ``targetId``, and a reader that knows no ``leaf`` entries (the Pi CLI:
the last entry is the leaf, then parents up to the root) lands on the same branch.

The real Pi CLI and pi-agent-core check it in tests/interop/test_pi_cli.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import JsonlSessionRepo


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def cli_branch(path: str) -> list[str]:
    """The Pi CLI's current branch of a file: from the last entry up its parents."""
    entries = [json.loads(x) for x in Path(path).read_text().splitlines()[1:]]
    by_id = {e["id"]: e for e in entries}
    out, current = [], entries[-1] if entries else None
    while current is not None:
        out.append(current["id"])
        current = by_id.get(current["parentId"]) if current["parentId"] else None
    return [i for i in reversed(out) if by_id[i]["type"] != "leaf"]


@pytest.mark.asyncio
async def test_a_move_is_the_pi_clis_leaf_too(tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path)
    s = await repo.create(cwd="/p")
    q1 = await s.append_message(user("q1"))
    q2 = await s.append_message(user("q2"))
    await s.append_message(user("q3"))
    await s.move_to(q2)
    path = str(s.metadata.path)
    leaf = json.loads(Path(path).read_text().splitlines()[-1])
    assert (leaf["type"], leaf["parentId"], leaf["targetId"]) == ("leaf", q2, q2)
    assert cli_branch(path) == [q1, q2] == s.branch_ids()
    # Moved to the root: the leaf entry is a root, and both readers see an empty branch.
    await s.move_to(None)
    assert json.loads(Path(path).read_text().splitlines()[-1])["parentId"] is None
    assert cli_branch(path) == [] == s.branch_ids()
    # A summary: the leaf entry and the branch_summary are both children of the target.
    summary = await s.move_to(q1, {"summary": "tried q2"})
    children = [e.id for e in await s.get_children(q1)]
    assert children[-2:] == [json.loads(Path(path).read_text().splitlines()[-2])["id"], summary]
    assert cli_branch(path) == [q1, str(summary)]
    await s.close()
    reopened = await repo.open(path)
    assert reopened.branch_ids() == [q1, str(summary)]
    await reopened.close()
