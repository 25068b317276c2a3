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

    def tobytes(self) -> bytes:
        return bytes(self.inner.tobytes())


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


@pytest.mark.parametrize("seed", range(6))
def test_children_of_is_the_children_map_without_building_it(seed: int) -> None:
    """`Tree.children_of` searches the parent index (a launch looks up the children of
    the entries it shows, not of all 100,000): the same lists as `children_map` on odd
    trees too (parents further down the file, duplicate ids, missing and own parents),
    also after entries are appended."""
    import random

    from desktop_agent.session._tree import Tree

    rng = random.Random(seed)
    tree = Tree()
    ids = [f"e{i}" for i in range(400)]

    def add(i: int) -> None:
        roll = rng.random()
        if roll < 0.05:
            parent = None
        elif roll < 0.1:
            parent = "missing"
        elif roll < 0.12:
            parent = ids[i]  # its own
        elif roll < 0.2 and seed % 2:
            parent = rng.choice(ids)  # maybe further down the file
        else:
            parent = ids[rng.randrange(max(1, i))] if i else None
        entry_id = ids[i] if rng.random() > 0.03 or not i else ids[rng.randrange(i)]  # dup
        tree.add_line(_line(entry_id, parent, i % 3000).encode())

    def check() -> None:
        built = tree.children_map()
        tree._children = None  # children_of searches the parent index
        for key in [None, "missing", *ids]:
            assert tree.children_of(key) == built.get(key, []), key
            built_by_it = getattr(tree, "_children")  # noqa: B009 - (not narrowed to None)
            assert built_by_it is None or key not in tree.by_id  # (unknown ids: the map)
            tree._children = None

    for i in range(300):
        add(i)
    check()
    for i in range(300, 400):
        add(i)
    check()
