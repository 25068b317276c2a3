"""Snapshots of a project folder in a shadow git store, diffs between them, and restores.

The store of a folder is ``<checkpoints dir>/<hash of the folder's path>/`` holding a git
object store (``git/``) and an index of its own (``index``); the user's ``.git`` is never
read for writing, so their HEAD, index, refs, config, hooks and stash stay byte-identical.
A snapshot is a git tree id: ``git add`` of only the paths git sees changed since the last
snapshot (the index's stat cache), then ``git write-tree``. ``.gitignore`` files (and the
folder's ``.git/info/exclude``) are respected; files over `MAX_FILE_BYTES` and nested git
repositories are left out and named in `Snapshot.skipped`.

A restore first snapshots the folder as it is (`RestoreResult.undo`), then writes only the
files that differ, each atomically (a temporary file renamed over it), and deletes only the
files it is told it may delete (those a tool of the session created or deleted); every file it could
not write or delete is named with the reason, so a folder is never half-restored silently.

Everything here blocks; the async methods run it in a worker thread, one operation at a
time per folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import logging
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from desktop_agent.checkpoints._git import CheckpointError, Git
from desktop_agent.utils.atomic import atomic_write

_log = logging.getLogger("desktop_agent.checkpoints")

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are not snapshotted (and never overwritten by a restore)."""

WRITERS = 4
"""Threads that write a restore's files."""

PATHSPEC_LIMIT = 200
"""Above this many changed paths (and none to leave out) a snapshot adds everything."""

LOG_NAME = "snapshots.log"

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

ChangeKind = Literal["added", "modified", "deleted"]
_KINDS: dict[str, ChangeKind] = {"A": "added", "M": "modified", "T": "modified", "D": "deleted"}


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True)
class Snapshot:
    """A folder state: ``tree`` is the git tree id; ``skipped`` what it leaves out;
    ``added`` how many paths git had to read again (new or changed since the snapshot
    before: the work a snapshot did beyond checking every file's stat data)."""

    tree: str
    skipped: tuple[Skipped, ...] = ()
    added: int = 0


@dataclass(frozen=True)
class FileChange:
    path: str
    kind: ChangeKind
    old_mode: str = ""
    new_mode: str = ""
    old_blob: str = ""
    new_blob: str = ""


@dataclass(frozen=True)
class FileProblem:
    path: str
    message: str


@dataclass
class RestoreResult:
    """What a restore did. ``undo`` is the folder as it was just before; restoring it with
    ``deletable=created`` brings the folder back exactly."""

    undo: Snapshot
    target: str
    written: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.problems


def folder_key(folder: Path) -> str:
    return hashlib.sha256(str(folder).encode("utf-8", "surrogateescape")).hexdigest()[:20]


class CheckpointStore:
    """Every folder's shadow store under one directory of the app-data folder."""

    def __init__(self, root: Path, *, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.root = root
        self.max_file_bytes = max_file_bytes
        self._folders: dict[Path, FolderCheckpoints] = {}
        self._lock = threading.Lock()

    def folder(self, folder: Path | str) -> FolderCheckpoints:
        """The store of ``folder`` (one object per folder, shared by every caller)."""
        path = Path(os.path.abspath(folder))
        with self._lock:
            found = self._folders.get(path)
            if found is None:
                found = FolderCheckpoints(
                    path, self.root / folder_key(path), max_file_bytes=self.max_file_bytes
                )
                self._folders[path] = found
            return found

    def stop(self) -> None:
        """End every git process of the store and refuse new ones (the app quits)."""
        with self._lock:
            folders = list(self._folders.values())
        for folder in folders:
            folder.stop()

    def size_bytes(self) -> int:
        """Bytes the store takes on disk (for Settings)."""
        return _size(self.root)

    async def size(self) -> int:
        return await asyncio.to_thread(self.size_bytes)

    def prune_sync(self, days: float) -> int:
        """Remove every folder's snapshots older than ``days``; returns the bytes freed."""
        freed = 0
        for folder_file in sorted(self.root.glob("*/folder.txt")):
            try:
                path = folder_file.read_text(encoding="utf-8").rstrip("\n")
            except OSError:
                continue
            folder = self.folder(path)
            if folder.store == folder_file.parent:
                freed += folder.prune_sync(days * 86400)
        return freed

    async def prune(self, days: float) -> int:
        return await asyncio.to_thread(self.prune_sync, days)


class FolderCheckpoints:
    """Snapshots, diffs and restores of one folder."""

    def __init__(self, folder: Path, store: Path, *, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.folder = folder
        self.store = store
        self.max_file_bytes = max_file_bytes
        self._git = Git(store / "git", folder, store / "index")
        self._lock = threading.Lock()
        self._touched: dict[tuple[str, str], frozenset[str]] = {}
        self.active_runs = 0
        """Runs of the agent in this folder now (a restore is refused meanwhile)."""

    def stop(self) -> None:
        self._git.stop()

    def run_started(self) -> None:
        self.active_runs += 1

    def run_ended(self) -> None:
        self.active_runs = max(0, self.active_runs - 1)

    # ------------------------------------------------------------------ async API

    async def snapshot(self) -> Snapshot:
        return await asyncio.to_thread(self.snapshot_sync)

    async def warm(self) -> Snapshot | None:
        return await asyncio.to_thread(self.warm_sync)

    async def diff(self, old: str, new: str) -> list[FileChange]:
        return await asyncio.to_thread(self.diff_sync, old, new)

    async def compare(self, target: str, deletable: Collection[str] = ()) -> list[FileChange]:
        return await asyncio.to_thread(self.compare_sync, target, deletable)

    async def restore(
        self, target: str, deletable: Collection[str] = (), only: Collection[str] | None = None
    ) -> RestoreResult:
        return await asyncio.to_thread(self.restore_sync, target, deletable, only)

    async def deletable(self, pairs: Iterable[tuple[str, str]]) -> set[str]:
        return await asyncio.to_thread(self.deletable_sync, list(pairs))

    async def read(self, tree: str, path: str) -> bytes | None:
        return await asyncio.to_thread(self.read_sync, tree, path)

    async def forget(self, trees: Collection[str]) -> int:
        return await asyncio.to_thread(self.forget_sync, trees)

    # ------------------------------------------------------------------ set-up

    def _ensure(self) -> None:
        if not self.folder.is_dir():
            raise CheckpointError("no_folder", f"The folder {self.folder} is not there any more")
        git_dir = self.store / "git"
        named = self.store / "folder.txt"
        if (git_dir / "HEAD").is_file() and named.is_file():
            return
        # folder.txt is written last: a store set up halfway (the app quit, git killed
        # inside `init` or `config` with its lock file left) is set up again from nothing.
        # No snapshot can be in it: snapshots are taken only once the set-up is complete.
        try:
            self.store.mkdir(parents=True, exist_ok=True)
            if git_dir.exists():
                shutil.rmtree(git_dir)
            for leftover in (self.store / "index", self.store / "index.lock"):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()
        except OSError as exc:
            raise self._unwritable(exc) from exc
        self._git.run(["init", "--quiet", "--template=", str(git_dir)])
        for key, value in (
            ("core.autocrlf", "false"),
            ("core.safecrlf", "false"),
            ("core.symlinks", "true"),
            ("core.fsmonitor", "false"),
            ("core.untrackedCache", "true"),
            ("core.quotePath", "false"),
            ("gc.auto", "0"),
            ("maintenance.auto", "false"),
        ):
            self._git.run(["config", key, value])
        exclude = self.folder / ".git" / "info" / "exclude"
        if exclude.is_file():
            self._git.run(["config", "core.excludesFile", str(exclude)])
        try:
            named.write_text(str(self.folder) + "\n", encoding="utf-8")
        except OSError as exc:
            raise self._unwritable(exc) from exc

    def _unwritable(self, exc: OSError) -> CheckpointError:
        return CheckpointError(
            "store_failed", f"The checkpoint store {self.store} cannot be written: {exc}"
        )

    # ------------------------------------------------------------------ snapshot

    def snapshot_sync(self) -> Snapshot:
        with self._lock:
            return self._snapshot()

    def warm_sync(self) -> Snapshot | None:
        """The folder's first snapshot, taken ahead (when a session opens in the folder):
        git reads every file once, which takes long for a big folder, so the first tool
        call then waits only for what is left of it (a snapshot waits for this one and
        finds only the files changed since). None: the store has a snapshot already."""
        with self._lock:
            if (self.store / "index").is_file():
                return None
            return self._snapshot()

    def _snapshot(self) -> Snapshot:
        self._ensure()
        listed = self._git.run(["ls-files", "-z", "-o", "-m", "-d", "--exclude-standard"])
        paths = sorted({p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p})
        skipped: list[Skipped] = []
        add: list[str] = []
        drop: list[str] = []
        gone: list[str] = []
        root = os.path.realpath(self.folder)
        for path in paths:
            if path.endswith("/"):
                skipped.append(Skipped(path.rstrip("/"), "another git repository"))
                continue
            parent = os.path.dirname(path)
            if parent and os.path.realpath(os.path.join(root, parent)) != os.path.join(
                root, parent
            ):
                gone.append(path)  # its folder is a link now: not this file any more
                continue
            try:
                info = os.lstat(self.folder / path)
            except OSError:
                gone.append(path)
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > self.max_file_bytes:
                mb = info.st_size / (1024 * 1024)
                skipped.append(Skipped(path, f"larger than 10 MB ({mb:.0f} MB)"))
                drop.append(path)
            elif stat.S_ISREG(info.st_mode) and not os.access(self.folder / path, os.R_OK):
                skipped.append(Skipped(path, "cannot be read"))
                drop.append(path)
            else:
                add.append(path)
        if gone:
            self._git.run(["update-index", "--force-remove", "-z", "--stdin"], input=_nul(gone))
        if drop:
            self._git.run(
                [
                    "rm",
                    "--cached",
                    "-q",
                    "-f",
                    "--ignore-unmatch",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ],
                input=_nul(drop),
            )
        if add and not skipped and len(add) > PATHSPEC_LIMIT:
            # Nothing to leave out: one plain `add -A` (git matches thousands of pathspecs
            # against every path, which costs more than it saves).
            self._git.run(["add", "-A"])
        elif add:
            self._git.run(
                ["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], input=_nul(add)
            )
        tree = self._git.run(["write-tree"]).decode().strip()
        self._log(tree)
        _log.debug("snapshot %s of %s: %d paths read again", tree, self.folder, len(add))
        return Snapshot(tree, tuple(skipped), added=len(add))

    def _log(self, tree: str) -> None:
        """When each tree was last snapshotted (`prune_sync` keeps the recent ones)."""
        try:
            with open(self.store / LOG_NAME, "a", encoding="ascii") as fh:
                fh.write(f"{int(time.time())} {tree}\n")
        except OSError as exc:
            raise CheckpointError(
                "store_failed", f"The checkpoint store {self.store} cannot be written: {exc}"
            ) from exc

    def prune_sync(self, older_than_s: float) -> int:
        """Remove the snapshots not taken again in the last ``older_than_s`` seconds (their
        files stay wherever a newer snapshot has them); returns the bytes freed. A session
        pointing at a removed snapshot says so when its files are compared."""
        cutoff = time.time() - older_than_s
        with self._lock:
            return self._prune(lambda tree, when: when >= cutoff)

    def forget_sync(self, trees: Collection[str]) -> int:
        """Remove the snapshots ``trees`` (those only sessions deleted for good used: the
        caller leaves out every tree another session still points at); the objects no
        kept snapshot and not the shadow index hold are pruned. Returns the bytes freed."""
        gone = set(trees)
        if not gone:
            return 0
        with self._lock:
            return self._prune(lambda tree, when: tree not in gone)

    def _prune(self, keeps: Callable[[str, int], bool]) -> int:
        log = self.store / LOG_NAME
        if not (self.store / "git" / "HEAD").is_file() or not log.is_file():
            return 0
        newest: dict[str, int] = {}
        for line in log.read_text(encoding="ascii", errors="replace").splitlines():
            stamp, _, tree = line.partition(" ")
            if stamp.isdigit() and len(tree) in (40, 64):
                newest[tree] = max(newest.get(tree, 0), int(stamp))
        keep = sorted(t for t, when in newest.items() if keeps(t, when))
        before = _size(self.store / "git")
        # The kept snapshots as refs for the prune (thousands of them do not fit in
        # a command line); the store has no refs of its own.
        refs = self.store / "git" / "packed-refs"
        lines = "".join(f"{t} refs/keep/{t}\n" for t in keep)
        refs.write_text("# pack-refs with: peeled fully-peeled sorted \n" + lines)
        try:
            self._git.run(["prune", "--expire=now"])
        finally:
            refs.unlink()
        atomic_write(log, "".join(f"{newest[t]} {t}\n" for t in keep).encode("ascii"), mode=0o644)
        self._touched = {k: v for k, v in self._touched.items() if set(k) <= set(keep)}
        return max(0, before - _size(self.store / "git"))

    # ------------------------------------------------------------------ diffs

    def diff_sync(self, old: str, new: str) -> list[FileChange]:
        if old == new:
            return []
        self._ensure()
        return list(_parse_raw(self._diff_raw(old, new)))

    def _diff_raw(self, old: str, new: str) -> bytes:
        try:
            return self._git.run(["diff-tree", "-r", "-z", "--no-renames", old, new])
        except CheckpointError:
            for tree in (old, new):
                if not self._has(tree):
                    raise CheckpointError(
                        "removed",
                        "The checkpoint of these files was removed (Settings: remove"
                        " checkpoints older than…)",
                    ) from None
            raise

    def _has(self, tree: str) -> bool:
        """Whether the store holds ``tree`` (a pruned snapshot is gone)."""
        done = subprocess.run(
            ["git", "cat-file", "-e", tree],
            env=self._git.env,
            cwd=self.folder,
            check=False,
            capture_output=True,
        )
        return done.returncode == 0

    def compare_sync(self, target: str, deletable: Collection[str] = ()) -> list[FileChange]:
        """What a restore to ``target`` would change: files to write, and files to delete
        among ``deletable``."""
        now = self.snapshot_sync()
        return _actionable(self.diff_sync(now.tree, target), deletable)

    def deletable_sync(self, pairs: list[tuple[str, str]]) -> set[str]:
        """The paths a restore may delete: those a turn's tools created or deleted
        (``pairs`` are the before/after snapshots of the session's turns). A file no tool of
        the session created or removed (the person's own, untracked or not) is never
        deleted by a restore."""
        out: set[str] = set()
        for pair in pairs:
            found = self._touched.get(pair)
            if found is None:
                found = frozenset(
                    c.path for c in self.diff_sync(*pair) if c.kind in ("added", "deleted")
                )
                self._touched[pair] = found
            out |= found
        return out

    def read_sync(self, tree: str, path: str) -> bytes | None:
        """A file's content in a snapshot (None when it is not there)."""
        self._ensure()
        listed = self._git.run(["ls-tree", "-z", tree, "--", path])
        if not listed:
            return None
        blob = listed.split(b"\t", 1)[0].split()[2].decode()
        return self._git.run(["cat-file", "blob", blob])

    # ------------------------------------------------------------------ restore

    def restore_sync(
        self, target: str, deletable: Collection[str] = (), only: Collection[str] | None = None
    ) -> RestoreResult:
        """Bring the folder to ``target`` (``only``: just these paths, e.g. the files of
        one turn reverted)."""
        if self.active_runs:
            raise CheckpointError(
                "busy",
                "The agent is working in this folder: stop it (or wait until it finishes)"
                " before restoring files",
            )
        with self._lock:
            undo = self._snapshot()
            result = RestoreResult(undo=undo, target=target)
            if undo.tree == target:
                return result
            changes = list(_parse_raw(self._diff_raw(undo.tree, target)))
            if only is not None:
                wanted = set(only)
                changes = [c for c in changes if c.path in wanted]
            skipped = {s.path for s in undo.skipped}
            allowed = set(deletable)
            writes: list[FileChange] = []
            for change in changes:
                if change.kind == "deleted":
                    if change.path in allowed:
                        self._delete(change.path, result)
                    else:
                        result.kept.append(change.path)
                elif change.path in skipped or _under_skipped(change.path, skipped):
                    result.problems.append(
                        FileProblem(
                            change.path,
                            "not restored: the file in the folder was left"
                            " out of the checkpoint taken before the restore",
                        )
                    )
                else:
                    writes.append(change)
            inside = _Inside(self.folder)
            slots = threading.BoundedSemaphore(WRITERS * 4)  # blobs read ahead, at most

            def write(change: FileChange, data: bytes) -> FileProblem | bool:
                try:
                    return self._write(change, data, inside)
                finally:
                    slots.release()

            # The files are written by a few threads while git reads the next blobs (the
            # system calls of one file's write and rename, and git's inflating, overlap).
            with ThreadPoolExecutor(WRITERS, thread_name_prefix="restore") as pool:
                done = []
                for change, data in self._blobs(writes):
                    slots.acquire()
                    done.append((change.path, pool.submit(write, change, data)))
                for path, future in done:
                    outcome = future.result()
                    if isinstance(outcome, FileProblem):
                        result.problems.append(outcome)
                        continue
                    result.written.append(path)
                    if outcome:
                        result.created.append(path)
            return result

    def _blobs(self, changes: list[FileChange]) -> Iterator[tuple[FileChange, bytes]]:
        """The new content of each change, read from one ``git cat-file --batch``."""
        if not changes:
            return
        proc = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self._git.env,
            cwd=self.folder,
        )
        assert proc.stdin is not None and proc.stdout is not None
        stdin = proc.stdin

        def feed() -> None:
            try:
                for change in changes:
                    stdin.write(change.new_blob.encode() + b"\n")
                stdin.close()
            except OSError:
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for change in changes:
                header = proc.stdout.readline().split()
                if len(header) != 3:
                    raise CheckpointError(
                        "git_failed", f"git cat-file: no object for {change.path}"
                    )
                data = proc.stdout.read(int(header[2]))
                proc.stdout.read(1)
                yield change, data
        finally:
            proc.stdout.close()
            writer.join()
            proc.wait()

    def _write(self, change: FileChange, data: bytes, inside: _Inside) -> FileProblem | bool:
        """Write one file atomically (a temporary file renamed over it); returns whether
        it is new, or the problem."""
        dest = os.path.join(inside.folder, change.path)
        existed = os.path.lexists(dest)
        parent, name = os.path.split(dest)
        tmp = os.path.join(parent, f".{name}.restore-{os.getpid()}")
        try:
            inside.check(parent)  # before any folder is made on the way
            os.makedirs(parent, exist_ok=True)
            if os.path.isdir(dest) and not os.path.islink(dest):
                raise IsADirectoryError(errno.EISDIR, "a folder is in its place", dest)
            if change.new_mode == "120000":
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
                os.symlink(os.fsdecode(data), tmp)
            elif change.new_mode == "160000":
                raise OSError(errno.EINVAL, "a nested repository is not restored")
            else:
                mode = 0o755 if change.new_mode == "100755" else 0o644
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fchmod(fd, mode)
                finally:
                    os.close(fd)
            os.replace(tmp, dest)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return FileProblem(change.path, _reason(exc))
        return not existed

    def _inside(self, path: Path) -> None:
        """Refuse a path whose folder leads out of the project folder (a link made since
        the snapshot): a restore never writes or deletes outside it."""
        _Inside(self.folder).check(str(path.parent))

    def _delete(self, path: str, result: RestoreResult) -> None:
        target = self.folder / path
        try:
            self._inside(target)
            os.unlink(target)
        except FileNotFoundError:
            pass
        except OSError as exc:
            result.problems.append(FileProblem(path, _reason(exc)))
            return
        result.deleted.append(path)
        parent = target.parent
        while parent != self.folder and self.folder in parent.parents:
            try:
                os.rmdir(parent)
            except OSError:
                break
            parent = parent.parent


class _Inside:
    """Whether a folder is inside the project folder after following links (one restore's
    answers kept: its files share a few hundred folders)."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)
        self.root = os.path.realpath(folder)
        self._known: set[str] = set()

    def check(self, parent: str) -> None:
        if parent in self._known:
            return
        real = os.path.realpath(parent)
        if real != self.root and not real.startswith(self.root + os.sep):
            raise OSError(errno.EXDEV, "a folder on its way is a link out of the project folder")
        self._known.add(parent)


def _size(root: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def _nul(paths: list[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def _under_skipped(path: str, skipped: set[str]) -> bool:
    return any(path.startswith(s + "/") for s in skipped)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _actionable(changes: list[FileChange], deletable: Collection[str]) -> list[FileChange]:
    allowed = set(deletable)
    return [c for c in changes if c.kind != "deleted" or c.path in allowed]


def _parse_raw(raw: bytes) -> Iterator[FileChange]:
    """``git diff-tree -r -z`` raw output: ``:old new oldsha newsha X\\0path\\0``."""
    parts = raw.split(b"\0")
    i = 0
    while i + 1 < len(parts):
        meta = parts[i]
        if not meta.startswith(b":"):
            i += 1
            continue
        old_mode, new_mode, old_blob, new_blob, status = meta[1:].decode().split()
        path = parts[i + 1].decode("utf-8", "surrogateescape")
        i += 2
        kind = _KINDS.get(status[0])
        if kind is None:
            continue
        yield FileChange(path, kind, old_mode, new_mode, old_blob, new_blob)
