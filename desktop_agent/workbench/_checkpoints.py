"""The files follow the branch: on every leaf change the folder is compared with the
state of the new point (the last checkpoint on its path), and restored, offered, or left
per the ``checkpoints.follow_branch`` setting (`FollowBranch`).

`BranchFiles` is the Qt-free logic; the workbench turns its `Outcome` into the bar "The
files in the folder are from another branch — Restore files / Keep / Show changes" and,
after a restore, "Undo restore".
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop_agent.checkpoints import (
    CheckpointError,
    CheckpointRecord,
    CheckpointStore,
    FileChange,
    FolderCheckpoints,
    RestoreResult,
    parse_record,
    state_of,
    turn_pairs,
)
from desktop_agent.config import FollowBranch
from desktop_agent.session import CustomEntry, Session
from desktop_agent.workbench._changes import NOTHING, Changes
from desktop_agent.workbench._map import BranchMap, FilesMark

OutcomeKind = Literal["none", "same", "differs", "restored", "failed"]


@dataclass(frozen=True)
class Target:
    """The folder state of the session's current point."""

    folder: FolderCheckpoints
    tree: str
    deletable: frozenset[str]


@dataclass
class Outcome:
    kind: OutcomeKind
    changes: list[FileChange] = field(default_factory=list)
    result: RestoreResult | None = None
    error: str | None = None


async def session_records(session: Session) -> dict[str, CheckpointRecord]:
    """The checkpoint records of a session by entry id, in file order."""
    out: dict[str, CheckpointRecord] = {}
    for entry in await session.find_entries("custom"):
        if isinstance(entry, CustomEntry):
            record = parse_record(entry.custom_type, entry.data)
            if record is not None:
                out[entry.id] = record
    return out


async def session_trees(session: Session) -> set[str]:
    """Every snapshot the session's checkpoint entries point at."""
    out: set[str] = set()
    for record in (await session_records(session)).values():
        out.add(record.tree)
        if record.before is not None:
            out.add(record.before)
    return out


async def target_of(session: Session, store: CheckpointStore) -> Target | None:
    """What the folder should hold at the session's leaf, or None when no turn on its
    path snapshotted the folder (nothing is known: the folder is left as it is)."""
    cwd = session.metadata.cwd
    if not cwd:
        return None
    records = await session_records(session)
    if not records:
        return None
    path = session.branch_ids(lenient=True)
    tree = state_of(records.get(i) for i in path) or _first_below(session, records, path)
    if tree is None:
        return None
    folder = store.folder(cwd)
    deletable = await folder.deletable(turn_pairs(records.values()))
    return Target(folder, tree, frozenset(deletable))


def _first_below(
    session: Session, records: dict[str, CheckpointRecord], path: list[str]
) -> str | None:
    """A point before any snapshot on its path (e.g. the prompt being edited goes from
    there): the folder as the first turn below it found it (its "before" snapshot)."""
    leaf = path[-1] if path else None
    for entry_id, record in records.items():  # file order: the earliest first
        if record.kind == "before" and (leaf is None or leaf in session.branch_ids(entry_id)):
            return record.tree
    return None


class BranchFiles:
    """The folder of the open session, kept in line with its leaf."""

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self.target: Target | None = None
        """The state the last comparison found the folder differing from."""
        self.last_restore: RestoreResult | None = None
        self.last_folder: FolderCheckpoints | None = None
        self._generation = 0

    async def follow(self, session: Session, mode: FollowBranch) -> Outcome:
        """Compare the folder with the leaf's state; restore it when ``mode`` is
        ``always``. A newer call makes an older one's outcome ``none``."""
        self._generation += 1
        generation = self._generation
        self.target = None
        if mode == "never":
            return Outcome("none")
        try:
            target = await target_of(session, self.store)
            if target is None or generation != self._generation:
                return Outcome("none")
            changes = await target.folder.compare(target.tree, target.deletable)
        except CheckpointError as exc:
            return Outcome("failed", error=exc.message)
        if generation != self._generation:
            return Outcome("none")
        if not changes:
            return Outcome("same")
        self.target = target
        if mode == "always":
            return await self.restore()
        return Outcome("differs", changes=changes)

    async def restore(self, only: Collection[str] | None = None) -> Outcome:
        """Bring the folder (or ``only`` these files of it) to the state the last
        comparison found (Restore files)."""
        target, self.target = self.target, None
        if target is None:
            return Outcome("none")
        try:
            result = await target.folder.restore(target.tree, target.deletable, only)
        except CheckpointError as exc:
            self.target = target
            return Outcome("failed", error=exc.message)
        self.last_restore = result
        self.last_folder = target.folder
        return Outcome("restored", result=result)

    async def undo(self) -> Outcome:
        """Bring the folder back to what it was just before the last restore."""
        last, folder = self.last_restore, self.last_folder
        self.last_restore = None
        if last is None or folder is None:
            return Outcome("none")
        try:
            result = await folder.restore(last.undo.tree, last.created)
        except CheckpointError as exc:
            self.last_restore = last
            return Outcome("failed", error=exc.message)
        return Outcome("restored", result=result)


def problems_text(result: RestoreResult) -> str:
    """The files a restore could not bring back, one per line part."""
    return "; ".join(f"{p.path}: {p.message}" for p in result.problems)


Action = Callable[[], Coroutine[Any, Any, Changes]]
Notify = Callable[..., Changes]
"""`Workbench.notify`: (key, text, action=(label, coroutine function) or None, **args);
`Workbench.notify_choices`: (key, text, action, more=[(label, coroutine function)], **args)."""

NOTICE_KEY = "files"
SHOW_CHANGES = f"{NOTICE_KEY}/Show changes"
"""The files bar's "Show changes" (`Workbench.notice_action` key): the GUI also opens the
Changes view of what differs (`Workbench.branch_changes`)."""
MAX_SHOWN = 30


class FilesNotices:
    """`BranchFiles` outcomes as the bar above the chat (notice key ``files``)."""

    def __init__(self, files: BranchFiles, notify: Notify, notify_choices: Notify) -> None:
        self.files = files
        self.notify = notify
        self.notify_choices = notify_choices

    async def follow(self, session: Session, mode: FollowBranch) -> Changes:
        return self._show(await self.files.follow(session, mode))

    async def restore(self, only: Collection[str] | None = None) -> Changes:
        return self._show(await self.files.restore(only))

    async def differing(self) -> TurnChanges | None:
        """The files that differ between the folder and the branch's state the last
        comparison found (the bar's "Show changes"), each with its diff from the folder
        to the branch: what "Restore files" would do. None: nothing differs now."""
        target = self.files.target
        if target is None:
            return None
        folder = target.folder
        now = await folder.snapshot()
        changes = [
            c
            for c in await folder.diff(now.tree, target.tree)
            if c.kind != "deleted" or c.path in target.deletable
        ]
        if not changes:
            return None
        files = await file_diffs(folder, now.tree, target.tree, changes)
        return TurnChanges(folder, ((now.tree, target.tree),), tuple(files))

    async def undo(self) -> Changes:
        outcome = await self.files.undo()
        if outcome.kind == "restored" and outcome.result is not None and outcome.result.complete:
            return self.notify(NOTICE_KEY, "The files are back as they were before the restore.")
        return self._show(outcome, undoing=True)

    async def changes_at(
        self, session: Session, bmap: BranchMap, entry_id: str
    ) -> TurnChanges | None:
        """What the turns a map row stands for did to the files (None: nothing)."""
        row = bmap.row_of(entry_id)
        if row < 0:
            return None
        ids = [i for i in await session_records(session) if bmap.row_of(i) == row]
        return await turn_changes(session, self.files.store, ids)

    async def revert(self, changes: TurnChanges, paths: Collection[str] | None) -> Changes:
        """Revert a turn's files (or some of them); "Undo restore" brings them back."""
        try:
            result = await revert(changes, paths)
        except CheckpointError as exc:
            return self._show(Outcome("failed", error=exc.message))
        self.files.last_restore, self.files.last_folder = result, changes.folder
        return self._show(Outcome("restored", result=result))

    async def _keep(self) -> Changes:
        self.files.target = None
        return NOTHING

    def _show(self, outcome: Outcome, *, undoing: bool = False, listed: bool = False) -> Changes:
        notify = self.notify
        if outcome.kind in ("none", "same"):
            return notify(NOTICE_KEY, None)
        if outcome.kind == "failed":
            return notify(NOTICE_KEY, "The files were not restored: {error}", error=outcome.error)
        if outcome.kind == "differs":
            changes = outcome.changes

            async def show() -> Changes:
                return self._show(outcome, listed=True)

            more = [("Keep", self._keep), ("Show changes", show)]
            text = (
                "The files in the folder are from another branch ({count} differ): {files}"
                if listed
                else "The files in the folder are from another branch ({count} differ)"
            )
            return self.notify_choices(
                NOTICE_KEY,
                text,
                ("Restore files", self.restore),
                more,
                count=len(changes),
                files=_listing(changes),
            )
        result = outcome.result
        assert result is not None
        count = len(result.written) + len(result.deleted)
        text = (
            "Restored {count} files; these could not be restored: {problems}"
            if result.problems
            else "The files now follow this branch ({count} restored)."
        )
        if undoing:
            return notify(NOTICE_KEY, text, None, count=count, problems=problems_text(result))
        return notify(
            NOTICE_KEY,
            text,
            ("Undo restore", self.undo),
            count=count,
            problems=problems_text(result),
        )


def _listing(changes: list[FileChange]) -> str:
    words = {"added": "restored", "modified": "changed", "deleted": "removed"}
    shown = [f"{c.path} ({words[c.kind]})" for c in changes[:MAX_SHOWN]]
    if len(changes) > MAX_SHOWN:
        shown.append(f"and {len(changes) - MAX_SHOWN} more")
    return ", ".join(shown)


async def file_marks(session: Session) -> dict[str, FilesMark]:
    """Where the session's turns changed files: by ``after`` checkpoint entry."""
    return {
        entry_id: FilesMark(record.changed_count, record.changed)
        for entry_id, record in (await session_records(session)).items()
        if record.kind == "after" and record.changed_count
    }


MAX_DIFF_BYTES = 512 * 1024
"""A file larger than this (either side) is listed without its diff."""


@dataclass(frozen=True)
class FileDiff:
    path: str
    kind: str
    """``added``, ``modified`` or ``deleted`` by the turn."""
    diff: str
    """A unified diff (as the approval dialog shows), or a line saying why there is none."""


@dataclass(frozen=True)
class TurnChanges:
    """What the turns shown on one map row did to the files."""

    folder: FolderCheckpoints
    pairs: tuple[tuple[str, str], ...]
    files: tuple[FileDiff, ...]


async def turn_changes(
    session: Session, store: CheckpointStore, entry_ids: Collection[str]
) -> TurnChanges | None:
    """The files changed by the turns whose ``after`` checkpoint entries are ``entry_ids``
    (those a map row stands for), with their diffs."""
    cwd = session.metadata.cwd
    records = await session_records(session)
    pairs = tuple(
        (r.before, r.tree)
        for i, r in records.items()
        if i in entry_ids and r.kind == "after" and r.before is not None
    )
    if not cwd or not pairs:
        return None
    folder = store.folder(cwd)
    files: dict[str, FileDiff] = {}
    for before, after in pairs:
        for diff in await file_diffs(folder, before, after, await folder.diff(before, after)):
            files[diff.path] = diff
    return TurnChanges(folder, pairs, tuple(files.values()))


async def file_diffs(
    folder: FolderCheckpoints, before: str, after: str, changes: list[FileChange]
) -> list[FileDiff]:
    """Each change from snapshot ``before`` to ``after`` with its unified diff."""
    out: list[FileDiff] = []
    for change in changes:
        old = await folder.read(before, change.path) if change.kind != "added" else b""
        new = await folder.read(after, change.path) if change.kind != "deleted" else b""
        out.append(
            FileDiff(change.path, change.kind, unified_diff(change.path, old or b"", new or b""))
        )
    return out


def unified_diff(path: str, old: bytes, new: bytes) -> str:
    if len(old) > MAX_DIFF_BYTES or len(new) > MAX_DIFF_BYTES:
        return f"{path}: too large to show ({max(len(old), len(new)):,} bytes)\n"
    if b"\0" in old[:8192] or b"\0" in new[:8192]:
        return f"{path}: binary file ({len(old):,} -> {len(new):,} bytes)\n"
    lines = difflib.unified_diff(
        old.decode("utf-8", "replace").splitlines(keepends=True),
        new.decode("utf-8", "replace").splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


async def revert(changes: TurnChanges, paths: Collection[str] | None = None) -> RestoreResult:
    """Put the files of the turn (or only ``paths``) back as they were before it; files
    the turn created are removed. The rest of the folder is left as it is."""
    wanted = {f.path for f in changes.files} if paths is None else set(paths)
    before = changes.pairs[0][0]
    return await changes.folder.restore(before, deletable=wanted, only=wanted)
