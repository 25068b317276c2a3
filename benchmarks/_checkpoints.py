"""Workspace checkpoints (issue 21 item 5): snapshot and restore of a folder of 20,000 files
/ 1 GB, unchanged, with 10 files changed and with 1,000 changed, each beside the same-run
baseline ``git add -A && git commit`` of the same folder (a plain git repository in it:
what a person's own repository costs for the same change).

The same snapshots (first, unchanged, 10 and 1,000 changed) are also taken with the two
git libraries the issue names, each in a shadow store of its own over the same folder, when
it is installed (neither is a dependency: ``pip install pygit2 dulwich`` to measure them):
pygit2 (libgit2: ``Index.add_all`` + ``write_tree``) and dulwich (pure Python:
``porcelain.add`` + ``Index.commit``).

The data are generated quickly: compressible text files (a unique header, then a repeated
block), 50 KB on average, in 200 folders; they are removed at the end. ``python -m
benchmarks._checkpoints --scale 0.05`` runs on a twentieth of the files and bytes (for
trying a change; the figures to report are at full size).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_agent.checkpoints import CheckpointStore

if TYPE_CHECKING:
    from benchmarks._report import Report

FILES = 20_000
TOTAL_BYTES = 1_000_000_000
TARGET_UNCHANGED_MS = 200.0
RUNS = 5


def _generate(root: Path, files: int, total: int) -> None:
    size = total // files
    block = b"".join(b"line %05d of a source file, some words to compress\n" % i for i in range(64))
    body = (block * (size // len(block) + 1))[:size]
    for i in range(files):
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


def _change(root: Path, count: int, tag: bytes, files: int) -> None:
    for i in range(count):
        index = (i * (files // count)) % files
        with open(root / f"pkg{index % 200:03d}" / f"file{index:05d}.txt", "ab") as fh:
            fh.write(b"changed " + tag + b"\n")


class _Library:
    """The same snapshot done by a git library, in a shadow store of its own."""

    def __init__(self, name: str, snapshot: Callable[[], object]) -> None:
        self.name = name
        self.snapshot = snapshot


def _pygit2(store: Path, root: Path) -> _Library | None:
    try:
        pygit2: Any = importlib.import_module("pygit2")
    except ImportError:
        return None
    init = pygit2.init_repository(str(store), bare=True)
    init.config["core.bare"] = False
    init.config["core.worktree"] = str(root)  # no gitlink is written into the folder
    repo = pygit2.Repository(str(store))

    def snapshot() -> str:
        index = repo.index
        index.read()
        index.add_all()
        index.write()
        return str(index.write_tree())

    return _Library(f"pygit2 {pygit2.__version__} (libgit2 {pygit2.LIBGIT2_VERSION})", snapshot)


def _dulwich(store: Path, root: Path) -> _Library | None:
    try:
        dulwich: Any = importlib.import_module("dulwich")
        repo_mod: Any = importlib.import_module("dulwich.repo")
        porcelain: Any = importlib.import_module("dulwich.porcelain")
    except ImportError:
        return None
    repo_mod.Repo.init_bare(str(store), mkdir=True)
    repo = repo_mod.Repo(controldir=str(store), worktree=str(root), index_file=str(store / "idx"))

    def snapshot() -> str:
        porcelain.add(repo)
        return str(repo.open_index().commit(repo.object_store))

    version = ".".join(str(n) for n in dulwich.__version__)
    return _Library(f"dulwich {version}", snapshot)


def bench_checkpoints(report: Report, scale: float = 1.0) -> None:
    files = max(200, int(FILES * scale))
    total = int(TOTAL_BYTES * scale)
    report.section(f"workspace checkpoints: {files:,} files / {total / 1e9:.2f} GB (issue 21)")
    base = Path(tempfile.mkdtemp(prefix="desktop-agent-bench-checkpoints-"))
    try:
        root = base / "project"
        root.mkdir()
        took = _timed(lambda: _generate(root, files, total))
        report.note(f"generated {files:,} files, {total / 1e9:.2f} GB in {took:.1f} s")
        folder = CheckpointStore(base / "checkpoints").folder(root)
        _git(root, "init", "-q")
        libraries = [
            lib
            for lib in (_pygit2(base / "pygit2.git", root), _dulwich(base / "dulwich.git", root))
            if lib is not None
        ]
        if not libraries:
            report.note("pygit2 and dulwich are not installed: the git program alone")
        first_git = _baseline(root)
        first_ours = _timed(folder.snapshot_sync)
        report.line(
            "first snapshot (everything new)",
            first_ours,
            "s",
            baselines=[
                ("git add -A && git commit", first_git),
                *((lib.name, _timed(lib.snapshot)) for lib in libraries),
            ],
        )

        unchanged = [_timed(folder.snapshot_sync) for _ in range(RUNS)]
        unchanged_git = [_baseline(root) for _ in range(3)]
        unchanged_libs = [
            (lib.name, statistics.median(_timed(lib.snapshot) for _ in range(3)) * 1000)
            for lib in libraries
        ]
        report.line(
            "snapshot, unchanged (median)",
            statistics.median(unchanged) * 1000,
            "ms",
            baselines=[
                ("git add -A && git commit", statistics.median(unchanged_git) * 1000),
                *unchanged_libs,
            ],
            target=TARGET_UNCHANGED_MS,
            digits=1,
        )
        for count in (10, min(1_000, files // 2)):
            before = folder.snapshot_sync()
            for lib in libraries:
                lib.snapshot()  # takes in the files the last restore wrote
            _change(root, count, b"a", files)
            ours = _timed(folder.snapshot_sync)
            git = _baseline(root)
            report.line(
                f"snapshot, {count:,} files changed",
                ours * 1000,
                "ms",
                baselines=[
                    ("git add -A && git commit", git * 1000),
                    *((lib.name, _timed(lib.snapshot) * 1000) for lib in libraries),
                ],
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
        report.note(f"checkpoint store: {size / 1e6:.1f} MB for {total / 1e9:.2f} GB of files")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    from benchmarks._report import Report

    parser = argparse.ArgumentParser(prog="python -m benchmarks._checkpoints")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="fraction of the 20,000 files / 1 GB"
    )
    bench_checkpoints(Report(), parser.parse_args().scale)
