"""R2/R3: simulated power loss under the real JSONL store (tests/session/_simfs.py).

The realistic workload runs on `SimFS`; after every operation, every disk a power cut
may leave is materialised in a real folder and opened with the real loader. In every
state: opening raises nothing but a documented `SessionError` (and refuses only a file
whose header was never acknowledged); every acknowledged entry is there, in order, byte
for byte; nothing is duplicated or invented; the file is unchanged except for a torn
tail that moved byte-exact into a sidecar; strict ``build_context`` works; a writable
session takes the next append and reopens cleanly. Plus every byte prefix of a session.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from desktop_agent.session import JsonlSessionRepo, Session, SessionError
from desktop_agent.session._jsonl import JsonlStorage
from tests.helpers import figures
from tests.session._faults import NO_SYNC
from tests.session._simfs import CrashState, SimFS, crash_states
from tests.session._workload import CWD, LONG, is_subsequence, lines_by_id, run_workload

pytestmark = pytest.mark.slow

SIM_ROOT = "/sim"


@dataclass
class Recording:
    sim: SimFS
    path: str  # the session file's simulated path
    lines: dict[str, bytes]
    order: list[str]


@dataclass
class Tally:
    tried: int = 0
    passed: int = 0
    failures: list[str] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)

    def note(self, outcome: str) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1


async def _record(*, turns: int, big: int, fail_fsync_at: int | None = None) -> Recording:
    sim = SimFS(fail_fsync_at=fail_fsync_at)
    repo = JsonlSessionRepo(f"{SIM_ROOT}/sessions", file_ops=sim)
    session = await repo.create(cwd=CWD)
    sim.header_acked = True

    def on_ack(ids: Sequence[str]) -> None:
        sim.acked = tuple(ids)

    out = await run_workload(session, turns=turns, big=big, on_ack=on_ack)
    lines = lines_by_id(session)
    path = session.metadata.path or ""
    await session.close()
    return Recording(sim, path, lines, out.ids)


def _materialize(state: CrashState, root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
    for folder, files in state.tree.items():
        real = root / os.path.relpath(folder, SIM_ROOT)
        real.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            (real / name).write_bytes(content)


async def _check(
    state: CrashState, rec: Recording, root: Path, *, acked: Sequence[str], header_acked: bool
) -> str:
    """Open one crash state with the real loader; returns the outcome (raises on a miss)."""
    _materialize(state, root)
    path = root / os.path.relpath(rec.path, SIM_ROOT)
    if not path.exists():
        assert not header_acked, "an acknowledged session file vanished"
        return "file missing (never acknowledged)"
    before = path.read_bytes()
    try:
        storage = JsonlStorage.open(str(path), ops=NO_SYNC)
    except SessionError as exc:
        assert not header_acked, f"acknowledged session refused: {exc!r}"  # noqa: PT017 - one allowed outcome
        assert exc.code == "invalid_session", exc  # noqa: PT017 - one allowed outcome
        assert path.read_bytes() == before
        return "refused (header never acknowledged)"
    session = Session(storage)
    try:
        ids = [r.id for r in storage.tree.rows]
        assert len(ids) == len(set(ids)), "duplicated entries"
        assert is_subsequence(ids, rec.order), "entries out of order or invented"
        for row in storage.tree.rows:
            assert row.raw == rec.lines[row.id], f"entry {row.id} changed"
        assert ids[: len(acked)] == list(acked), (
            f"acknowledged entries lost: {len(set(acked) - set(ids))}"
        )
        after = path.read_bytes()
        report = storage.recovery
        if report is not None and report.quarantine_path is not None:
            assert after == before[: len(after)], "the file changed beyond the torn tail"
            assert Path(report.quarantine_path).read_bytes() == before[len(after) :]
        else:
            assert after == before, "opening changed the file"
        await session.build_context()  # strict
        # A power cut leaves a torn tail, never mid-file damage: reordered pages too
        # (issue 11 item 5), so the session is always writable again.
        assert not storage.read_only, storage.read_only_reason
        await session.append_message(
            {"role": "user", "content": [{"type": "text", "text": "next"}], "timestamp": 1}
        )
        await session.close()
        again = JsonlStorage.open(str(path), ops=NO_SYNC)
        try:
            assert again.recovery is None, again.recovery
            assert [r.id for r in again.tree.rows][:-1] == ids
        finally:
            again.force_close()
        return "recovered" if report is not None else "clean"
    finally:
        storage.force_close()


async def _sweep(rec: Recording, root: Path, tally: Tally) -> None:
    for snapshot in rec.sim.snapshots:
        for state in crash_states(snapshot):
            tally.tried += 1
            try:
                outcome = await _check(
                    state,
                    rec,
                    root,
                    acked=snapshot.acked,
                    header_acked=snapshot.header_acked,
                )
            except AssertionError as exc:
                tally.failures.append(f"step {snapshot.step} ({snapshot.op}), {state.mode}: {exc}")
                continue
            tally.passed += 1
            tally.note(outcome)


@pytest.mark.asyncio
async def test_every_power_cut_of_a_realistic_workload(tmp_path: Path) -> None:
    tally = Tally()
    rec = await _record(turns=6, big=9_000)
    # The same workload with one failed fsync: the retry rewrites the file (temp file,
    # rename, directory fsync), and every state of that must hold too.
    failing = await _record(turns=6, big=9_000, fail_fsync_at=4)
    assert failing.sim.failed_fsyncs == 1
    assert any(s.op == "rename" for s in failing.sim.snapshots)
    for recording in (rec, failing):
        await _sweep(recording, tmp_path / "state", tally)
    figures.add("crash states tried", tally.tried)
    figures.add("crash states passed", tally.passed)
    assert not tally.failures, "\n".join(tally.failures[:20])
    assert tally.tried >= 1000, tally.tried
    # The sweep really reached the interesting states.
    assert tally.outcomes.get("recovered", 0) > 100, tally.outcomes
    assert tally.outcomes.get("file missing (never acknowledged)", 0) >= 1, tally.outcomes


@pytest.mark.asyncio
async def test_every_byte_prefix_of_a_session(tmp_path: Path) -> None:
    rec = await _record(turns=4 if LONG else 1, big=9_000 if LONG else 0)
    content = rec.sim.snapshots[-1].files
    final = max(content.values(), key=lambda pair: len(pair[1]))[1]
    header_end = final.index(b"\n") + 1
    ends: list[tuple[int, str]] = []
    offset = header_end
    for entry_id in rec.order:
        offset += len(rec.lines[entry_id]) + 1
        ends.append((offset, entry_id))
    assert offset == len(final)
    root = tmp_path / "prefix"
    folder = root / "s"
    tally = Tally()
    for k in range(len(final) + 1):
        tally.tried += 1
        shutil.rmtree(root, ignore_errors=True)
        folder.mkdir(parents=True)
        path = folder / "s.jsonl"
        path.write_bytes(final[:k])
        whole = [entry_id for end, entry_id in ends if end <= k]
        try:
            try:
                storage = JsonlStorage.open(str(path), ops=NO_SYNC)
            except SessionError as exc:
                assert k < header_end and exc.code == "invalid_session", (k, exc)  # noqa: PT017 - one allowed outcome
                assert path.read_bytes() == final[:k]
                tally.passed += 1
                continue
            try:
                assert [r.id for r in storage.tree.rows] == whole, k
                kept = path.read_bytes()
                assert final[:k] == kept + _sidecar(storage), k
                assert not storage.read_only, (k, storage.read_only_reason)
            finally:
                storage.force_close()
        except AssertionError as exc:
            tally.failures.append(f"prefix {k}: {exc}")
            continue
        tally.passed += 1
    figures.add("crash states tried", tally.tried)
    figures.add("crash states passed", tally.passed)
    assert not tally.failures, "\n".join(tally.failures[:20])


def _sidecar(storage: JsonlStorage) -> bytes:
    report = storage.recovery
    if report is None or report.quarantine_path is None:
        return b""
    return Path(report.quarantine_path).read_bytes()
