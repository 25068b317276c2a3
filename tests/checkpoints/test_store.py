"""The shadow git store with real git, in a folder that is the user's own repository."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from desktop_agent.checkpoints import (
    EMPTY_TREE,
    PATHSPEC_LIMIT,
    CheckpointError,
    CheckpointStore,
    FolderCheckpoints,
    Snapshot,
)
from tests.helpers.git_repo import dot_git_fingerprint, folder_files, git, make_user_repo
from tests.helpers.real_fs import mounted


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_user_repo(tmp_path / "project")


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "data" / "checkpoints")


def _paths(folder: FolderCheckpoints, tree: str) -> set[str]:
    return {c.path for c in folder.diff_sync(EMPTY_TREE, tree)}


def test_the_version_flow_restores_each_branch_and_leaves_the_users_git_alone(
    repo: Path, store: CheckpointStore
) -> None:
    before_git = dot_git_fingerprint(repo)
    status_before = git(repo, "status", "--porcelain=v2", "--branch", "--untracked-files=all")
    cp = store.folder(repo)

    start = cp.snapshot_sync()
    (repo / "notes.txt").write_text("version one\n")
    one = cp.snapshot_sync()
    assert [c.path for c in cp.diff_sync(start.tree, one.tree)] == ["notes.txt"]

    # Edit and resend: version two from the state before version one.
    back = cp.restore_sync(start.tree, cp.deletable_sync([(start.tree, one.tree)]))
    assert back.deleted == ["notes.txt"] and back.complete
    start2 = cp.snapshot_sync()
    assert start2.tree == start.tree
    (repo / "notes.txt").write_text("version two\n")
    (repo / "extra.txt").write_text("extra\n")
    (repo / "keep.txt").unlink()
    two = cp.snapshot_sync()
    pairs = [(start.tree, one.tree), (start2.tree, two.tree)]

    # Alt+Left: version one's files, extra.txt gone, keep.txt back.
    result = cp.restore_sync(one.tree, cp.deletable_sync(pairs))
    assert result.complete, result.problems
    assert sorted(result.written) == ["keep.txt", "notes.txt"]
    assert result.deleted == ["extra.txt"]
    assert (repo / "notes.txt").read_text() == "version one\n"
    assert (repo / "keep.txt").read_text() == "keep me\n"
    assert not (repo / "extra.txt").exists()

    # Alt+Right: version two's.
    cp.restore_sync(two.tree, cp.deletable_sync(pairs))
    assert (repo / "notes.txt").read_text() == "version two\n"
    assert (repo / "extra.txt").read_text() == "extra\n"
    assert not (repo / "keep.txt").exists()

    # The user's repository: untracked, ignored and uncommitted files kept; .git intact.
    assert (repo / "mine.txt").read_text() == "my untracked notes\n"
    assert (repo / "build" / "out.bin").read_bytes() == b"\0" * 100
    assert (repo / "readme.md").read_text() == "# project\nuncommitted edit\n"
    assert dot_git_fingerprint(repo) == before_git
    cp.restore_sync(start.tree, cp.deletable_sync(pairs))
    assert dot_git_fingerprint(repo) == before_git
    assert (
        git(repo, "status", "--porcelain=v2", "--branch", "--untracked-files=all") == status_before
    )
    assert git(repo, "stash", "list").count("\n") == 1


def test_gitignore_and_dot_git_are_not_snapshotted(repo: Path, store: CheckpointStore) -> None:
    cp = store.folder(repo)
    paths = _paths(cp, cp.snapshot_sync().tree)
    assert paths == {".gitignore", "keep.txt", "readme.md", "src/app.py", "staged.txt", "mine.txt"}
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("private.txt\n")
    (repo / "private.txt").write_text("x")
    other = CheckpointStore(store.root.parent / "other").folder(repo)
    assert "private.txt" not in _paths(other, other.snapshot_sync().tree)


def test_a_restore_writes_only_the_files_that_differ(repo: Path, store: CheckpointStore) -> None:
    cp = store.folder(repo)
    for i in range(20):
        (repo / f"f{i}.txt").write_text(f"{i}\n")
    first = cp.snapshot_sync()
    (repo / "f3.txt").write_text("changed\n")
    inodes = {p: os.stat(repo / p).st_ino for p in folder_files(repo)}
    result = cp.restore_sync(first.tree)
    assert result.written == ["f3.txt"]
    after = {p: os.stat(repo / p).st_ino for p in folder_files(repo)}
    assert {p for p in inodes if inodes[p] != after[p]} == {"f3.txt"}


def test_undo_restore_brings_the_folder_back_exactly(repo: Path, store: CheckpointStore) -> None:
    cp = store.folder(repo)
    (repo / "a.txt").write_text("a1")
    (repo / "tool.sh").write_text("#!/bin/sh\n")
    os.chmod(repo / "tool.sh", 0o755)
    os.symlink("a.txt", repo / "link")
    target = cp.snapshot_sync()
    (repo / "a.txt").write_text("a2")
    (repo / "tool.sh").unlink()
    (repo / "link").unlink()
    (repo / "new.txt").write_text("by the tool")
    os.chmod(repo / "keep.txt", 0o755)
    created = cp.deletable_sync([(target.tree, cp.snapshot_sync().tree)])
    assert created == {"new.txt", "tool.sh", "link"}
    before = folder_files(repo)
    modes_before = {p: os.lstat(repo / p).st_mode for p in before}

    result = cp.restore_sync(target.tree, created)
    assert result.complete
    assert (repo / "a.txt").read_text() == "a1"
    assert os.stat(repo / "tool.sh").st_mode & 0o111
    assert os.readlink(repo / "link") == "a.txt"
    assert not (repo / "new.txt").exists()
    assert not os.stat(repo / "keep.txt").st_mode & 0o100

    undo = cp.restore_sync(result.undo.tree, result.created)
    assert undo.complete
    assert folder_files(repo) == before
    assert {p: os.lstat(repo / p).st_mode for p in before} == modes_before


def test_files_a_tool_did_not_create_are_never_deleted(repo: Path, store: CheckpointStore) -> None:
    cp = store.folder(repo)
    target = cp.snapshot_sync()
    (repo / "by-hand.txt").write_text("typed by the person")
    (repo / "mine.txt").unlink()
    (repo / "by-tool.txt").write_text("x")
    result = cp.restore_sync(target.tree, {"by-tool.txt"})
    assert result.kept == ["by-hand.txt"]
    assert result.deleted == ["by-tool.txt"]
    assert result.written == ["mine.txt"]
    assert cp.compare_sync(target.tree, {"by-tool.txt"}) == []


def test_big_files_are_skipped_named_and_never_overwritten(
    repo: Path, store: CheckpointStore
) -> None:
    cp = store.folder(repo)
    with open(repo / "big.bin", "wb") as fh:
        fh.truncate(10 * 1024 * 1024 + 1)
    (repo / "grows.bin").write_bytes(b"small")
    first = cp.snapshot_sync()
    assert [(s.path, s.reason) for s in first.skipped] == [("big.bin", "larger than 10 MB (10 MB)")]
    assert "big.bin" not in _paths(cp, first.tree)
    assert "grows.bin" in _paths(cp, first.tree)
    with open(repo / "grows.bin", "r+b") as fh:
        fh.truncate(11 * 1024 * 1024)
    second = cp.snapshot_sync()
    assert {s.path for s in second.skipped} == {"big.bin", "grows.bin"}
    assert "grows.bin" not in _paths(cp, second.tree)
    result = cp.restore_sync(first.tree)
    assert [p.path for p in result.problems] == ["grows.bin"]
    assert os.path.getsize(repo / "grows.bin") == 11 * 1024 * 1024


def test_nested_repositories_and_odd_names(repo: Path, store: CheckpointStore) -> None:
    cp = store.folder(repo)
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "x.c").write_text("int x;\n")
    odd = ["*", ":(glob)x", "spa ce.txt", "ünï.txt", "-dash", "new\nline"]
    for name in odd:
        (repo / name).write_text(name)
    first = cp.snapshot_sync()
    assert [(s.path, s.reason) for s in first.skipped] == [("vendor/lib", "another git repository")]
    assert set(odd) <= _paths(cp, first.tree)
    for name in odd:
        (repo / name).write_text("changed")
    result = cp.restore_sync(first.tree)
    assert sorted(result.written) == sorted(odd)
    assert all((repo / name).read_text() == name for name in odd)
    assert (nested / "x.c").read_text() == "int x;\n"


def test_a_file_that_cannot_be_written_is_named_and_the_rest_restored(
    repo: Path, store: CheckpointStore
) -> None:
    cp = store.folder(repo)
    (repo / "ro").mkdir()
    (repo / "ro" / "locked.txt").write_text("one")
    (repo / "a.txt").write_text("one")
    (repo / "b.txt").write_text("one")
    first = cp.snapshot_sync()
    for name in ("ro/locked.txt", "a.txt"):
        (repo / name).write_text("two")
    (repo / "b.txt").unlink()
    (repo / "b.txt").mkdir()  # a folder where the file was
    with mounted(repo / "ro", ["--bind", "-o", "ro", str(repo / "ro")]):
        result = cp.restore_sync(first.tree)
        assert result.written == ["a.txt"]
        problems = {p.path: p.message for p in result.problems}
        assert problems == {
            "b.txt": "a folder is in its place",
            "ro/locked.txt": "Read-only file system",
        }
        assert not result.complete
        assert (repo / "ro" / "locked.txt").read_text() == "two"
    assert (repo / "a.txt").read_text() == "one"
    assert not any(p.name.startswith(".") and "restore" in p.name for p in repo.rglob("*"))


def test_a_full_file_system_is_reported_per_file(repo: Path, store: CheckpointStore) -> None:
    cp = store.folder(repo)
    small = repo / "small"
    with mounted(small, ["-t", "tmpfs", "-o", "size=64k", "tmpfs"]):
        (small / "f.bin").write_bytes(b"x" * 40_000)
        first = cp.snapshot_sync()
        (small / "f.bin").write_bytes(b"y" * 40_000)
        result = cp.restore_sync(first.tree)
        assert [(p.path, p.message) for p in result.problems] == [
            ("small/f.bin", "No space left on device")
        ]
        assert (small / "f.bin").read_bytes() == b"y" * 40_000
        assert os.listdir(small) == ["f.bin"]


def test_a_folder_that_is_gone_is_a_clear_error(tmp_path: Path, store: CheckpointStore) -> None:
    folder = tmp_path / "gone"
    folder.mkdir()
    cp = store.folder(folder)
    first = cp.snapshot_sync()
    folder.rmdir()
    with pytest.raises(CheckpointError) as caught:
        cp.restore_sync(first.tree)
    assert caught.value.code == "no_folder"
    assert str(folder) in caught.value.message


def test_the_store_is_shared_per_folder_and_written_off_the_calling_thread(
    repo: Path, store: CheckpointStore
) -> None:
    assert store.folder(repo) is store.folder(str(repo / "." / ""))
    threads: list[str] = []
    cp = store.folder(repo)
    original = cp.snapshot_sync

    def spy() -> Snapshot:
        threads.append(threading.current_thread().name)
        return original()

    cp.snapshot_sync = spy  # type: ignore[method-assign]

    async def main() -> None:
        snap = await cp.snapshot()
        await asyncio.gather(cp.snapshot(), cp.snapshot())
        assert await cp.read(snap.tree, "keep.txt") == b"keep me\n"
        assert await cp.read(snap.tree, "nope") is None

    asyncio.run(main())
    assert threads and threading.main_thread().name not in threads
    assert store.size_bytes() > 0
    assert (store.root / os.listdir(store.root)[0] / "folder.txt").read_text() == f"{repo}\n"


@pytest.mark.parametrize("nested", [False, True])
def test_many_changes_at_once_with_and_without_paths_to_leave_out(
    repo: Path, store: CheckpointStore, nested: bool
) -> None:
    cp = store.folder(repo)
    first = cp.snapshot_sync()
    if nested:  # a repository inside: left out by name, the rest added by pathspecs
        (repo / "vendor").mkdir()
        git(repo / "vendor", "init", "-q")
        (repo / "vendor" / "lib.c").write_text("int x;\n")
    for i in range(PATHSPEC_LIMIT + 50):
        (repo / "many" / f"d{i % 7}").mkdir(parents=True, exist_ok=True)
        (repo / "many" / f"d{i % 7}" / f"f{i}.txt").write_text(str(i))
    (repo / "keep.txt").unlink()
    second = cp.snapshot_sync()
    changes = cp.diff_sync(first.tree, second.tree)
    added = {c.path for c in changes if c.kind == "added"}
    assert len(added) == PATHSPEC_LIMIT + 50
    assert {c.path for c in changes if c.kind == "deleted"} == {"keep.txt"}
    assert [s.path for s in second.skipped] == (["vendor"] if nested else [])


def test_pruning_keeps_recent_snapshots_and_frees_the_rest(
    repo: Path, store: CheckpointStore
) -> None:
    cp = store.folder(repo)
    (repo / "old.bin").write_bytes(os.urandom(200_000))
    old = cp.snapshot_sync()
    (repo / "old.bin").unlink()
    recent = cp.snapshot_sync()
    # The first snapshot was taken 40 days ago.
    log = cp.store / "snapshots.log"
    lines = log.read_text().splitlines()
    stamp = int(lines[0].split()[0]) - 40 * 86400
    log.write_text(f"{stamp} {old.tree}\n" + "\n".join(lines[1:]) + "\n")
    size = store.size_bytes()
    freed = store.prune_sync(30)
    assert freed > 150_000 and store.size_bytes() < size
    assert cp.read_sync(recent.tree, "keep.txt") == b"keep me\n"
    assert cp.compare_sync(recent.tree) == []
    with pytest.raises(CheckpointError):
        cp.read_sync(old.tree, "old.bin")
    with pytest.raises(CheckpointError) as removed:
        cp.restore_sync(old.tree)
    assert removed.value.code == "removed" and "was removed" in removed.value.message
    assert not (cp.store / "git" / "packed-refs").exists()
    assert store.prune_sync(30) == 0  # nothing more to free


@pytest.mark.slow
def test_an_unreadable_file_is_named_and_the_rest_snapshotted(
    repo: Path, store: CheckpointStore
) -> None:
    """Root reads everything, so the snapshot runs in a process of root without the
    capabilities that override file permissions (as a normal user would be)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:  # the suite runs as root (CI, ./run-tests)
        pytest.fail("needs root and setpriv (util-linux) to drop the file-permission override")
    (repo / "secret.txt").write_text("no")
    os.chmod(repo / "secret.txt", 0)
    (repo / "fine.txt").write_text("yes")
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from desktop_agent.checkpoints import CheckpointStore, EMPTY_TREE\n"
        "cp = CheckpointStore(Path(sys.argv[1])).folder(sys.argv[2])\n"
        "snap = cp.snapshot_sync()\n"
        "paths = [c.path for c in cp.diff_sync(EMPTY_TREE, snap.tree)]\n"
        "print(json.dumps({'skipped': [[s.path, s.reason] for s in snap.skipped],"
        " 'paths': paths}))\n"
    )
    done = subprocess.run(
        [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--", sys.executable, "-c",
         script, str(store.root), str(repo)],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["skipped"] == [["secret.txt", "cannot be read"]]
    assert "fine.txt" in report["paths"] and "secret.txt" not in report["paths"]


def test_a_restore_never_writes_through_a_link_out_of_the_folder(
    repo: Path, store: CheckpointStore, tmp_path: Path
) -> None:
    cp = store.folder(repo)
    (repo / "conf").mkdir()
    (repo / "conf" / "keys").write_text("project keys\n")
    (repo / "conf" / "made.txt").write_text("x\n")
    (repo / "conf" / "deep").mkdir()
    (repo / "conf" / "deep" / "x.txt").write_text("x\n")
    first = cp.snapshot_sync()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "made.txt").write_text("not the project's\n")
    shutil.rmtree(repo / "conf")
    os.symlink(outside, repo / "conf")  # e.g. a tool replaced the folder by a link
    second = cp.snapshot_sync()
    result = cp.restore_sync(first.tree)
    assert {p.path for p in result.problems} == {"conf/keys", "conf/made.txt", "conf/deep/x.txt"}
    assert all("link out of the project folder" in p.message for p in result.problems)
    assert sorted(os.listdir(outside)) == ["made.txt"]
    assert (outside / "made.txt").read_text() == "not the project's\n"
    assert second.tree != first.tree


def test_the_first_snapshot_is_taken_ahead_once_and_stopping_ends_it(
    repo: Path, tmp_path: Path
) -> None:
    src = repo / "src"
    for i in range(500):
        (src / f"m{i}.py").write_text(f"VALUE = {i}\n")
    store = CheckpointStore(tmp_path / "data" / "checkpoints")
    cp = store.folder(repo)
    outcome: list[Snapshot | CheckpointError | None] = []

    def warm() -> None:
        try:
            outcome.append(cp.warm_sync())
        except CheckpointError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=warm)
    worker.start()
    while not cp._git._running and worker.is_alive():  # a git of the snapshot has started
        threading.Event().wait(0.001)
    store.stop()  # the app quits while the first snapshot runs
    worker.join()
    assert len(outcome) == 1
    if isinstance(outcome[0], CheckpointError):
        assert outcome[0].code == "stopped"
    with pytest.raises(CheckpointError) as refused:
        cp.snapshot_sync()
    assert refused.value.code == "stopped"
    assert not (cp.store / "index.lock").exists()

    again = CheckpointStore(tmp_path / "data" / "checkpoints").folder(repo)  # next launch
    first = again.warm_sync()
    assert first is not None and "src/m499.py" in _paths(again, first.tree)
    assert again.warm_sync() is None  # taken once: the store has it
    assert again.snapshot_sync() == Snapshot(first.tree, first.skipped, added=0)
