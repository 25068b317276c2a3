"""`Session.child_ids(None)`: the roots, orphans (parent missing) and self-parented
entries included, without a scan of every entry per call (issue 9: a branch switch
looked the roots up through an O(entries) scan each time)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import UserMessage
from desktop_agent.session import JsonlSessionRepo

ENTRIES = 3_000


def _line(entry_id: str, parent: str | None, second: int) -> str:
    return json.dumps(
        {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": f"2026-12-01T10:{second // 60:02d}:{second % 60:02d}.000Z",
            "message": {"role": "user", "content": "hello", "timestamp": 1},
        }
    )


def _write(path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-12-01T10:00:00Z",
              "cwd": "/tmp"}  # fmt: skip
    lines = [json.dumps(header), _line("e0", None, 5)]
    lines += [_line(f"e{i}", f"e{i - 1}", 10 + i % 3000) for i in range(1, ENTRIES)]
    lines.append(_line("lost1", "nowhere", 3))  # a missing parent: a root, older than e0
    lines.append(_line("self1", "self1", 1))  # its own parent: a root, the oldest
    lines.append(_line("lost2", "gone", 7))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


class _CountingIndex:
    """A `Tree` parent index (``array('i')``) that counts the rows looked up one by one."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.reads = 0

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, int):
            self.reads += 1
        return self.inner[i]

    def __iter__(self) -> Any:
        return iter(self.inner)

    def extend(self, values: Any) -> None:
        self.inner.extend(values)


@pytest.mark.asyncio
async def test_roots_include_orphans_and_are_not_a_scan_per_call(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "p"
    folder.mkdir(parents=True)
    path = folder / "s.jsonl"
    _write(path)
    repo = JsonlSessionRepo(tmp_path / "sessions", entry_index_dir=None)
    session = await repo.open(str(path))
    try:
        tree = session.get_storage().tree
        counting = _CountingIndex(tree.parent_index())
        tree._pidx = counting  # type: ignore[assignment]
        tree._lost = None

        def roots() -> tuple[list[str], int]:
            before = counting.reads
            ids = session.child_ids(None)
            return ids, counting.reads - before

        first, reads = roots()
        assert first == ["self1", "lost1", "e0", "lost2"]  # every root, oldest first
        assert ENTRIES <= reads <= 2 * (ENTRIES + 3)  # the first call reads each row once
        for _ in range(5):
            assert roots() == (first, 0)  # later calls read no row again
        await session.append_message(UserMessage(content="more", timestamp=2))
        again, reads = roots()
        assert again == first and reads <= 2  # only the new row
    finally:
        await session.close()
