"""R5/R6: every disk operation of the JSONL store failing once or forever (SQLite's loop).

For each kind of operation (open, write, fsync, rename, truncate, directory fsync) and
each call of that kind in a realistic workload, the call fails with ENOSPC, EIO, EACCES,
EROFS or a short write, once or forever (the PR run gives each write call one error kind
in turn, ``DESKTOP_AGENT_LONG_TESTS=1`` every kind). Each time: nothing raises but `SessionError`;
the file on disk stays readable with every acknowledged entry and no damage; memory keeps
everything; once the disk is fine again, a retry writes exactly the missing entries (no
duplicate, no gap, no temp file or sidecar left), and the file reopens cleanly.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from desktop_agent.session import JsonlSessionRepo, Session, SessionError
from desktop_agent.session._jsonl import JsonlStorage
from desktop_agent.session._platform import OS_FILE_OPS
from tests.helpers import figures
from tests.session._faults import ERRORS, Fault, FaultyOps
from tests.session._workload import CWD, LONG, run_workload

pytestmark = pytest.mark.slow


async def _counts(tmp_path: Path) -> dict[str, int]:
    """How many calls of each kind the fault-free workload makes."""
    root = tmp_path / "count"
    ops = FaultyOps(only_under=str(root))
    session = await JsonlSessionRepo(root, file_ops=ops).create(cwd=CWD)
    await run_workload(session)
    await session.close()
    return dict(ops.calls)


def _on_disk(path: str) -> tuple[list[str], bool]:
    """Ids of the entries a fresh reader finds now, and whether any line is damaged."""
    storage = JsonlStorage.open(path, lock=False, ops=OS_FILE_OPS)
    try:
        damaged = storage.recovery is not None and storage.recovery.damaged
        return [r.id for r in storage.tree.rows], damaged
    finally:
        storage.force_close()


async def _run_case(root: Path, faults: list[Fault]) -> str:
    """One faulty run; returns what happened ("refused" when create failed)."""
    ops = FaultyOps(only_under=str(root), faults=faults)
    repo = JsonlSessionRepo(root, file_ops=ops)
    try:
        session = await repo.create(cwd=CWD)
    except SessionError as exc:
        assert exc.code == "storage", exc  # noqa: PT017 - one allowed outcome
        leftovers = [p for p in root.rglob("*") if p.is_file()]
        assert leftovers == [], f"create failed but left {leftovers}"
        return "refused"
    path = session.metadata.path or ""
    acked: list[str] = []
    checks = 0

    def on_ack(ids: Sequence[str]) -> None:
        acked[:] = ids

    def on_failure() -> None:
        nonlocal checks
        checks += 1
        found, damaged = _on_disk(path)
        assert not damaged, "a failure left a damaged line"
        memory = [r.id for r in session.get_storage().tree.rows]
        assert found == memory[: len(found)], "the file is not a prefix of memory"
        assert found[: len(acked)] == acked, "an acknowledged entry is missing on disk"

    out = await run_workload(session, on_ack=on_ack, on_failure=on_failure)
    ops.clear()
    await _settle(session)
    await session.close()
    reopened = await JsonlSessionRepo(root).open(path)
    try:
        assert reopened.recovery is None, reopened.recovery
        assert not reopened.read_only, reopened.read_only_reason
        assert [e.id for e in await reopened.get_entries()] == out.ids  # no gap, no duplicate
        await reopened.build_context()
    finally:
        await reopened.close()
    names = sorted(p.name for p in Path(path).parent.iterdir())
    assert names == [Path(path).name], f"left behind: {names}"
    return "failed" if out.failures else "unaffected"


async def _settle(session: Session) -> None:
    """Retry until everything is written (the disk is fine again)."""
    for _ in range(3):
        try:
            await session.retry_persistence()
            return
        except SessionError:
            continue
    await session.retry_persistence()


def _cases(counts: dict[str, int]) -> list[list[Fault]]:
    cases: list[list[Fault]] = []
    names = list(ERRORS)
    for kind in ("open", "write", "fsync", "fsync_dir"):
        errors = names if kind == "write" else [e for e in names if e != "short"]
        for nth in range(1, counts.get(kind, 0) + 1):
            for forever in (False, True):
                if LONG or kind != "write":
                    chosen = errors
                else:  # the PR run: every write call, each error kind in turn
                    chosen = [errors[(nth + 2 * forever) % len(errors)]]
                for error in chosen:
                    cases.append([Fault(kind, nth, error, forever)])
    # Operations that only happen after a failure: the cut after a failed write, and the
    # rewrite (temp file, rename, directory fsync) after a failed fsync.
    for error in ERRORS:
        if error == "short":
            continue
        for forever in (False, True):
            cases.append([Fault("write", 3, "short"), Fault("truncate", 1, error, forever, True)])
            for kind in ("open", "write", "fsync", "rename", "fsync_dir"):
                cases.append([Fault("fsync", 2, "EIO"), Fault(kind, 1, error, forever, True)])
    return cases


@pytest.mark.asyncio
async def test_every_disk_operation_failing_once_or_forever(tmp_path: Path) -> None:
    counts = await _counts(tmp_path)
    assert counts["write"] >= 20 and counts["fsync"] >= 5  # the workload is realistic
    cases = _cases(counts)
    outcomes: dict[str, int] = {}
    for i, faults in enumerate(cases):
        root = tmp_path / f"case{i}"
        try:
            outcome = await _run_case(root, faults)
        except AssertionError as exc:
            raise AssertionError(f"case {i} {faults}: {exc}") from exc
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        assert any(f.fired for f in faults) or outcome == "unaffected", faults
    figures.add("disk faults injected", len(cases))
    # Most cases really failed an operation the store had to survive.
    assert outcomes.get("failed", 0) + outcomes.get("refused", 0) > len(cases) * 0.8, outcomes
