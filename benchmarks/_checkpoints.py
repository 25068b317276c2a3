"""Workspace checkpoints (issue 21 item 5): snapshot and restore of a folder of 20,000 files
/ 1 GB, unchanged, with 10 files changed and with 1,000 changed, each beside the same-run
baseline ``git add -A && git commit`` of the same folder (a plain git repository in it:
what a person's own repository costs for the same change).

The data are generated quickly: compressible text files (a unique header, then a repeated
block), 50 KB on average, in 200 folders; they are removed at the end.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_agent.checkpoints import CheckpointStore

if TYPE_CHECKING:
    from benchmarks._run import Report

FILES = 20_000
TOTAL_BYTES = 1_000_000_000
TARGET_UNCHANGED_MS = 200.0
RUNS = 5


def _generate(root: Path) -> None:
    size = TOTAL_BYTES // FILES
    block = b"".join(b"line %05d of a source file, some words to compress\n" % i for i in range(64))
    body = (block * (size // len(block) + 1))[:size]
    for i in range(FILES):
        folder = root / f"pkg{i % 200:03d}"
        if i < 200:
            folder.mkdir()
        with open(folder / f"file{i:05d}.txt", "wb") as fh:
            fh.write(b"file %d\n" % i)
            fh.write(body)


def _git(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="b",
        GIT_AUTHOR_EMAIL="b@b.invalid",
        GIT_COMMITTER_NAME="b",
        GIT_COMMITTER_EMAIL="b@b.invalid",
    )
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _baseline(root: Path) -> float:
    start = time.perf_counter()
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--allow-empty", "-m", "x")
    return time.perf_counter() - start


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _change(root: Path, count: int, tag: bytes) -> None:
    for i in range(count):
        index = (i * (FILES // count)) % FILES
        with open(root / f"pkg{index % 200:03d}" / f"file{index:05d}.txt", "ab") as fh:
            fh.write(b"changed " + tag + b"\n")


def bench_checkpoints(report: Report) -> None:
    report.section("workspace checkpoints: 20,000 files / 1 GB (issue 21)")
    base = Path(tempfile.mkdtemp(prefix="desktop-agent-bench-checkpoints-"))
    try:
        root = base / "project"
        root.mkdir()
        took = _timed(lambda: _generate(root))
        report.note(f"generated {FILES:,} files, {TOTAL_BYTES / 1e9:.1f} GB in {took:.1f} s")
        folder = CheckpointStore(base / "checkpoints").folder(root)
        _git(root, "init", "-q")
        first_git = _baseline(root)
        first_ours = _timed(folder.snapshot_sync)
        report.line(
            "first snapshot (everything new)",
            first_ours,
            "s",
            baselines=[("git add -A && git commit", first_git)],
        )

        unchanged = [_timed(folder.snapshot_sync) for _ in range(RUNS)]
        unchanged_git = [_baseline(root) for _ in range(3)]
        report.line(
            "snapshot, unchanged (median)",
            statistics.median(unchanged) * 1000,
            "ms",
            baselines=[("git add -A && git commit", statistics.median(unchanged_git) * 1000)],
            target=TARGET_UNCHANGED_MS,
            digits=1,
        )
        for count in (10, 1_000):
            before = folder.snapshot_sync()
            _change(root, count, b"a")
            ours = _timed(folder.snapshot_sync)
            git = _baseline(root)
            report.line(
                f"snapshot, {count:,} files changed",
                ours * 1000,
                "ms",
                baselines=[("git add -A && git commit", git * 1000)],
                digits=1,
            )
            start = time.perf_counter()
            result = folder.restore_sync(before.tree)
            back = time.perf_counter() - start
            assert len(result.written) == count and result.complete
            git_back = _baseline(root)
            report.line(
                f"restore, {count:,} files differ (with its undo snapshot)",
                back * 1000,
                "ms",
                baselines=[("git add -A && git commit of them", git_back * 1000)],
                digits=1,
            )
        size = sum(f.stat().st_size for f in (base / "checkpoints").rglob("*") if f.is_file())
        report.note(
            f"checkpoint store: {size / 1e6:.1f} MB for {TOTAL_BYTES / 1e9:.1f} GB of files"
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    from benchmarks._run import Report

    bench_checkpoints(Report())
