"""Issue 12 item 1: the persisted entry index (session/_entryindex.py).

Reopening an unchanged session reads a few KiB of the file (and, for the context, the
lines of the active path after the last compaction); a grown file is read only from
where it grew; an edit in the middle, a deleted or damaged index is a full scan that
gives exactly what a scan without an index gives. Bytes are counted at the file layer.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.session import JsonlSessionRepo, Session
from desktop_agent.session._platform import FileOps
from tests.session._faults import CountingOps
from tests.session._workload import CWD, run_workload

EDGES = 2 * 4096 + 1
"""What validating an index reads: the first and last 4 KiB, and the last byte."""
SEED = Path(__file__).resolve().parent.parent / "corpus" / "seeds" / "pi-core-fixture.jsonl"


def _repo(tmp_path: Path, ops: FileOps | None = None, index: bool = True) -> JsonlSessionRepo:
    return JsonlSessionRepo(
        tmp_path / "sessions",
        entry_index_dir=tmp_path / "cache" / "entries" if index else None,
        file_ops=ops or FileOps(),
    )


async def _snapshot(session: Session) -> dict[str, Any]:
    """Everything a reader can see, to compare an indexed open with a scan."""
    tree = session.get_storage().tree
    context = await session.build_context()
    return {
        "ids": list(tree.ids),
        "parents": list(tree.parents),
        "types": list(tree.types),
        "roles": list(tree.roles),
        "timestamps": list(tree.timestamps),
        "offsets": list(tree.offsets),
        "lengths": list(tree.lengths),
        "labels": dict(tree.labels),
        "name": tree.name,
        "leaf": tree.leaf_id,
        "context": [m.model_dump(by_alias=True) for m in context.messages],
        "settings": (context.thinking_level, context.model, context.active_tool_names),
        "children": session.child_ids(None),
        "recovery": session.recovery.describe() if session.recovery else None,
        "read_only": session.read_only_reason,
    }


async def _written_session(tmp_path: Path) -> Path:
    s = await _repo(tmp_path, index=False).create(cwd=CWD)
    await run_workload(s, turns=6, big=20_000)
    await s.close()
    return Path(s.metadata.path or "")


async def _open_snapshot(repo: JsonlSessionRepo, path: Path) -> dict[str, Any]:
    s = await repo.open(str(path))
    try:
        return await _snapshot(s)
    finally:
        await s.close()


@pytest.mark.asyncio
async def test_unchanged_reopen_reads_only_edges_and_the_context(tmp_path: Path) -> None:
    path = await _written_session(tmp_path)
    size = path.stat().st_size
    scanned = await _open_snapshot(_repo(tmp_path, index=False), path)
    ops = CountingOps()
    repo = _repo(tmp_path, ops)
    first = await _open_snapshot(repo, path)  # writes the index
    assert ops.read >= size
    index_files = list((tmp_path / "cache" / "entries").iterdir())
    assert len(index_files) == 1 and index_files[0].suffix == ".idx"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no sidecar
    ops.read = 0
    s = await repo.open(str(path))
    opened = ops.read
    assert opened <= EDGES  # the head and tail it checks
    tree = s.get_storage().tree
    assert tree.lines_read == 0
    context = await s.build_context()
    # Only the lines of the context (after the last compaction), the compaction's own
    # line and the one that says which model was used: never every message.
    assert 0 < tree.lines_read <= len(context.messages) + 2
    assert len(context.messages) < s.entry_count / 2
    assert ops.read < size / 2
    again = await _snapshot(s)
    await s.close()
    assert first == scanned and again == scanned


@pytest.mark.asyncio
async def test_grown_file_reads_only_the_new_bytes(tmp_path: Path) -> None:
    path = await _written_session(tmp_path)
    ops = CountingOps()
    repo = _repo(tmp_path, ops)
    await _open_snapshot(repo, path)
    before = path.stat().st_size
    # Another program appends 1,000 entries.
    lines = path.read_bytes().splitlines()
    last = json.loads(lines[-1])["id"]
    extra = []
    for i in range(1000):
        entry = {
            "type": "message",
            "id": f"x{i:04}",
            "parentId": last,
            "timestamp": "2026-01-02T00:00:00.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": f"n{i}"}],
                "timestamp": i,
            },
        }
        last = entry["id"]
        extra.append(json.dumps(entry, separators=(",", ":")).encode() + b"\n")
    with path.open("ab") as fh:
        fh.write(b"".join(extra))
    grown = path.stat().st_size - before
    ops.read = 0
    s = await repo.open(str(path))
    assert ops.read <= grown + 2 * EDGES  # and the edges again, for the updated index
    assert s.entry_count == len(lines) - 1 + 1000
    # The new lines went to the tails of the packed columns: none was unpacked for them
    # (a 1,000,000-entry session's took 0.75 s and 350 MB).
    assert _packed(s.get_storage().tree)
    await s.close()
    assert await _open_snapshot(repo, path) == await _open_snapshot(
        _repo(tmp_path, index=False), path
    )


@pytest.mark.parametrize("edit", ["same length", "longer", "shorter", "same length, old mtime"])
@pytest.mark.asyncio
async def test_edit_in_the_middle_is_a_full_scan(tmp_path: Path, edit: str) -> None:
    path = await _written_session(tmp_path)
    ops = CountingOps()
    repo = _repo(tmp_path, ops)
    await _open_snapshot(repo, path)
    data = path.read_bytes()
    st = path.stat()
    middle = data.index(b"turn 3: fix the tests")
    new = {
        "same length": b"TURN 3: fix the tests",
        "longer": b"turn 3: fix the tests, please",
        "shorter": b"turn 3: fix",
        "same length, old mtime": b"TURN 3: fix the tests",
    }[edit]
    path.write_bytes(data[:middle] + new + data[middle + len(b"turn 3: fix the tests") :])
    if edit.endswith("old mtime"):
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    ops.read = 0
    indexed = await _open_snapshot(repo, path)
    scanned = await _open_snapshot(_repo(tmp_path, index=False), path)
    if edit.endswith("old mtime"):
        # Size, mtime and both ends unchanged: the index is trusted (the documented
        # limit), and the edited line reads back checked against its entry id.
        assert ops.read < len(data) / 2
        assert indexed["ids"] == scanned["ids"]
    else:
        assert ops.read >= len(data) - 100  # read again in full
        assert indexed == scanned
    s = await repo.open(str(path))
    texts = [json.dumps(e.model_dump(by_alias=True)) for e in await s.get_entries()]
    await s.close()
    assert sum(new.decode() in t for t in texts) == 1  # the edit is what is read


@pytest.mark.parametrize("damage", ["deleted", "garbage", "flipped", "truncated", "other file"])
@pytest.mark.asyncio
async def test_missing_or_damaged_index_is_rebuilt(tmp_path: Path, damage: str) -> None:
    path = await _written_session(tmp_path)
    repo = _repo(tmp_path)
    scanned = await _open_snapshot(repo, path)
    assert repo.entry_index is not None
    index_file = Path(repo.entry_index.file_for(str(path)))
    good = index_file.read_bytes()
    if damage == "deleted":
        index_file.unlink()
    elif damage == "garbage":
        index_file.write_bytes(os.urandom(len(good)))
    elif damage == "flipped":
        index_file.write_bytes(good[:200] + bytes([good[200] ^ 1]) + good[201:])
    elif damage == "truncated":
        index_file.write_bytes(good[: len(good) // 2])
    else:  # the index of another session under this name
        other = await _written_session(tmp_path / "other")
        other_repo = _repo(tmp_path / "other")
        await _open_snapshot(other_repo, other)
        assert other_repo.entry_index is not None
        shutil.copy(other_repo.entry_index.file_for(str(other)), index_file)
    ops = CountingOps()
    repo = _repo(tmp_path, ops)
    assert await _open_snapshot(repo, path) == scanned
    assert ops.read >= path.stat().st_size  # a full scan
    assert index_file.read_bytes() == good or damage != "deleted"
    ops.read = 0
    assert await _open_snapshot(repo, path) == scanned
    assert ops.read <= EDGES + path.stat().st_size / 2  # the rebuilt index is used


@pytest.mark.asyncio
async def test_pi_file_damaged_file_and_appends_through_the_index(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "--pi--"
    folder.mkdir(parents=True)
    pi = folder / "pi.jsonl"
    shutil.copy(SEED, pi)
    damaged = folder / "damaged.jsonl"
    lines = SEED.read_bytes().split(b"\n")
    lines[5] = b"#" + lines[5][1:]
    damaged.write_bytes(b"\n".join(lines))
    repo = _repo(tmp_path)
    for path in (pi, damaged):
        scanned = await _open_snapshot(_repo(tmp_path, index=False), path)
        assert await _open_snapshot(repo, path) == scanned
        assert await _open_snapshot(repo, path) == scanned  # from the index
    snap = await _open_snapshot(repo, damaged)
    assert snap["recovery"] is not None and "damaged" in snap["recovery"]
    # Our own appends are indexed when the session closes.
    s = await repo.open(str(pi))
    for i in range(3):
        await s.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"more {i}"}], "timestamp": i}
        )
    await s.close()
    ops = CountingOps()
    s = await _repo(tmp_path, ops).open(str(pi))
    assert ops.read <= EDGES  # opened from the index
    indexed = await _snapshot(s)
    await s.close()
    assert indexed == await _open_snapshot(_repo(tmp_path, index=False), pi)


def _packed(tree: Any) -> bool:
    """The timestamps and parents columns are still the packed ones the entry index
    restored."""
    return tree._timestamps is None and tree._parents is None


@pytest.mark.asyncio
async def test_an_indexed_open_keeps_the_timestamps_packed_for_the_map(tmp_path: Path) -> None:
    """`Session.shape` (the branch map's input) and the sorted children read the
    timestamps an indexed open restored without unpacking the column; the values and
    the map's CRC of them are those of the list; the view is live, like the lists, so
    an entry appended after it was taken is in it, and an append leaves the columns
    packed (it goes to their tails)."""
    from desktop_agent.session import timestamps_crc
    from tests.helpers.workbench import user

    path = await _written_session(tmp_path)
    repo = _repo(tmp_path)
    scanned = await _open_snapshot(repo, path)  # writes the index
    listed: list[str] = scanned["timestamps"]
    s = await repo.open(str(path))
    try:
        tree = s.get_storage().tree
        shape = s.shape()
        roots = s.child_ids(None)
        crcs = [timestamps_crc(shape.timestamps, n, 7) for n in (0, 1, len(listed))]
        assert _packed(tree)
        assert list(shape.timestamps) == listed and shape.timestamps[-1] == listed[-1]
        assert shape.timestamps[2:5] == listed[2:5] and roots == scanned["children"]
        assert crcs == [timestamps_crc(listed, n, 7) for n in (0, 1, len(listed))]
        leaf = tree.leaf_id
        await s.append_message(user("one more"))
        await s.append_message(user("and another"))
        assert _packed(tree)  # the appends went to the tails
        n = len(listed)
        assert len(shape.timestamps) == n + 2 and shape.timestamps[-1] != ""
        assert tree.parent_at(n) == leaf and tree.parent_at(-1) == tree.ids[n]
        whole = [*listed, shape.timestamps[n], shape.timestamps[n + 1]]
        assert shape.timestamps[n - 1 :] == whole[n - 1 :]
        assert [timestamps_crc(shape.timestamps, k, 7) for k in (n, n + 1, n + 2)] == [
            timestamps_crc(whole, k, 7) for k in (n, n + 1, n + 2)
        ]
        parents = [tree.parent_at(i) for i in range(n + 2)]
        assert tree.column("parents") == parents and _packed(tree)  # a copy, not kept
        assert tree.timestamps == whole and tree.parents == parents  # unpacked now
        assert not _packed(tree)
        await s.append_message(user("after unpacking"))
        assert tree.timestamps[-1] == shape.timestamps[n + 2] and len(tree.parents) == n + 3
    finally:
        await s.close()
    assert timestamps_crc(["ab", "c"], 2) != timestamps_crc(["a", "bc"], 2)
    assert timestamps_crc(["a", ""], 2) != timestamps_crc(["a"], 1)


@pytest.mark.asyncio
async def test_the_columns_crc_is_kept_in_the_index_and_equals_a_scans(tmp_path: Path) -> None:
    """`Tree.columns_crc` (what the branch map's saved layout is checked against) comes
    back with an indexed open without being computed again, equal to what a scan of the
    file gives; it is not kept for another number of entries, and an entry whose id is
    taken already (parent rows of earlier entries may change) drops it."""
    from tests.helpers.workbench import user

    path = await _written_session(tmp_path)
    scanned = await _repo(tmp_path, index=False).open(str(path))
    tree = scanned.get_storage().tree
    n = len(tree.ids)
    expected = tree.columns_crc(n)
    assert expected != tree.columns_crc(n - 1)
    await scanned.close()

    repo = _repo(tmp_path)
    await _open_snapshot(repo, path)  # writes the index (with the CRC of its n entries)
    s = await repo.open(str(path))
    try:
        indexed = s.get_storage().tree
        assert indexed._columns_crc == (n, expected)  # kept, not computed
        assert s.shape().columns_crc(n) == expected
        await s.append_message(user("one more"))
        assert indexed.columns_crc(n) == expected  # (the first n entries are as they were)
        assert indexed.columns_crc(n + 1) != expected
    finally:
        await s.close()

    # An entry with an id already taken, appended by another program.
    lines = path.read_bytes().splitlines()
    twin = json.loads(lines[3])
    twin["parentId"] = json.loads(lines[-1])["id"]
    with path.open("ab") as fh:
        fh.write(json.dumps(twin, separators=(",", ":")).encode() + b"\n")
    s = await repo.open(str(path))
    try:
        grown = s.get_storage().tree
        assert grown._columns_crc is None  # dropped: computed again when asked
        fresh = await _repo(tmp_path, index=False).open(str(path))
        try:
            k = len(fresh.get_storage().tree.ids)
            assert grown.columns_crc(k) == fresh.get_storage().tree.columns_crc(k)
        finally:
            await fresh.close()
    finally:
        await s.close()


@pytest.mark.asyncio
async def test_an_index_written_before_the_columns_crc_is_written_again_with_it(
    tmp_path: Path,
) -> None:
    """An index of an earlier version (no columns CRC: the field did not exist) is used
    as it is, and written again when the session closes, with the CRC."""
    import msgspec

    from desktop_agent.session import _entryindex as ei

    path = await _written_session(tmp_path)
    repo = _repo(tmp_path)
    await _open_snapshot(repo, path)
    (index_file,) = (tmp_path / "cache" / "entries").iterdir()
    payload = ei._DECODE(index_file.read_bytes()[8:])
    assert payload.columns_crc[0] == len(payload.ids) > 0
    # The array of fields as written before, without the last one.
    old = msgspec.msgpack.encode(list(msgspec.structs.astuple(payload))[:-1])
    assert ei._DECODE(old).columns_crc == (0, 0)
    index_file.write_bytes(ei.MAGIC + ei._crc(old) + old)

    ops = CountingOps()
    s = await _repo(tmp_path, ops).open(str(path))
    assert ops.read <= EDGES  # still opened from the index
    assert s.get_storage().tree._columns_crc is None
    await s.close()
    assert ei._DECODE(index_file.read_bytes()[8:]).columns_crc == payload.columns_crc
