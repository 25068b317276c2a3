"""Reloading a session another program wrote to while it was open here (issue 13 item 4).

The file on disk wins as it is: its entries (ours that reached it, and the other
program's) are taken in unchanged. Our entries that the file lacks (unsaved ones, or
written ones a rewrite dropped) are appended after them as one block, in our order, with
their parents as they were, so they form a branch from the point where the two
histories diverged: nothing lost, nothing interleaved. An entry of ours whose id the
other program also used gets a new id (and references to it follow).

`read_for_reload` reads the file as it is now and works out what to keep; the JSONL
storage then takes the file's tree as its own (`JsonlStorage.reload_from_disk`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from desktop_agent.session._codec import Entry, decode_entry, entry_from_obj, serialize
from desktop_agent.session._errors import SessionError, SessionWriteError
from desktop_agent.session._header import LegacyFile, newer_writer, open_for_read, v3_header
from desktop_agent.session._ids import new_entry_id
from desktop_agent.session._jsonl_read import FdLines, open_for_append
from desktop_agent.session._platform import FileOps
from desktop_agent.session._quarantine import QuarantineError, quarantine_tail
from desktop_agent.session._scan import ScanResult, scan
from desktop_agent.session._tree import Tree
from desktop_agent.utils.versions import newer_reason

ReloadLeaf: TypeAlias = Literal["theirs", "ours"]
"""Where the leaf is after a reload: where the other program left it, or on our branch."""

_REFERENCES = ("parentId", "targetId", "firstKeptEntryId", "fromId")


@dataclass(frozen=True)
class ReloadReport:
    """What `Session.reload_from_disk` did."""

    taken_in: tuple[str, ...]
    """Ids of the entries the file had and this session did not (the other program's)."""
    kept: tuple[str, ...]
    """Ids of our entries the file lacked, appended after the file's entries."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Ids of ours the other program had used too: old id -> new id."""
    branch_point: str | None = None
    """Where our kept entries branch off (the parent of the first one; None = a root)."""
    our_leaf: str | None = None
    """The leaf this session had (after renaming): the tip of our branch."""
    their_leaf: str | None = None
    """The leaf the file had, as the other program left it."""
    leaf: str | None = None
    """The leaf now."""
    error: SessionWriteError | None = None
    """Writing our kept entries failed (they stay in memory; retry writes them)."""


def _rewrite(entry: Entry, raw: bytes, renamed: dict[str, str]) -> tuple[Entry, bytes]:
    obj: dict[str, Any] = decode_entry(raw)
    changed = False
    if obj.get("id") in renamed:
        obj["id"] = renamed[obj["id"]]
        changed = True
    for key in _REFERENCES:
        value = obj.get(key)
        if isinstance(value, str) and value in renamed:
            obj[key] = renamed[value]
            changed = True
    if not changed:
        return entry, raw
    line = serialize(obj)
    return entry_from_obj(obj), line


def entries_to_keep(disk: Tree, ours: Tree) -> tuple[list[tuple[Entry, bytes]], dict[str, str]]:
    """Our entries (with their lines) that ``disk`` lacks (same id and same content
    counts as present), with new ids where the id is taken on disk by another entry."""
    missing: list[tuple[Entry, bytes]] = []
    our_lines = ours.lines(range(len(ours)))
    for i, raw in enumerate(our_lines):
        j = disk.by_id.get(ours.ids[i])
        if j is not None:
            theirs = disk.line(j)
            if theirs == raw or decode_entry(theirs) == decode_entry(raw):
                continue
        missing.append((ours.entry(i), raw))
    taken: set[str] = set(disk.by_id) | {e.id for e, _ in missing}
    renamed: dict[str, str] = {}
    for entry, _ in missing:
        if entry.id in disk.by_id:
            new = new_entry_id(taken)
            taken.add(new)
            renamed[entry.id] = new
    if not renamed:
        return missing, renamed
    return [_rewrite(e, raw, renamed) for e, raw in missing], renamed


@dataclass
class ReloadRead:
    """The file as `read_for_reload` found it: its descriptors (read, append), its tree,
    and what a reload takes in and keeps."""

    rfd: int
    fd: int
    disk: Tree
    found: ScanResult
    same_locked_file: bool
    """``rfd`` is the file whose writer lock this session holds already (on its ``rfd``)."""
    kept: list[tuple[Entry, bytes]]
    renamed: dict[str, str]
    taken_in: tuple[str, ...]
    needs_newline: bool
    """The file's last entry line has no newline yet."""


def read_for_reload(
    ops: FileOps, path: str, session_id: str, ours: Tree, *, our_rfd: int | None, locked: bool
) -> ReloadRead:
    """Read the session file at ``path`` to reload it into ``ours`` (this session's tree:
    ``our_rfd`` its read descriptor, ``locked``: it holds the writer lock on it). Refuses
    (`SessionError`) a file that now holds another session, an older format, damaged lines
    or a newer app's writes, or that another writer holds; a torn last line is moved aside
    first. On success the caller owns both descriptors."""
    where = "Cannot reload the session: "
    rfd = open_for_read(path, ops)
    fd: int | None = None
    try:
        st = ops.fstat(rfd)
        disk = Tree()
        try:
            found = scan(ops, rfd, path, disk, size=st.size, header=v3_header)
        except LegacyFile:
            raise SessionError(
                "changed_on_disk",
                f"{where}{path} is now in an older Pi format; save a copy elsewhere",
            ) from None
        assert found.header is not None
        if found.header.get("id") != session_id:
            raise SessionError(
                "changed_on_disk",
                f"{where}{path} now holds another session ({found.header.get('id')});"
                " save a copy elsewhere to keep this one",
            )
        if found.damaged:
            raise SessionError(
                "changed_on_disk",
                f"{where}{path} now has lines this app cannot read; save a copy elsewhere",
            )
        if (newer := newer_writer(found.header)) is not None:
            raise SessionError("read_only", f"{where}{newer_reason(path, newer)}")
        same_file = our_rfd is not None and ops.fstat(our_rfd).identity == st.identity
        if not (locked and same_file) and not ops.try_lock(rfd):
            raise SessionError(
                "locked", f"{where}{path} is open in another Desktop Agent window or process"
            )
        fd, reason = open_for_append(ops, path, st)
        if fd is None:
            raise SessionError("storage", f"{where}{path} {reason}")
        if found.torn_offset is not None:
            torn = ops.pread(rfd, st.size - found.torn_offset, found.torn_offset)
            try:
                quarantine_tail(ops, path, fd, torn, found.torn_offset)
            except QuarantineError as exc:
                raise SessionError(
                    "storage", f"{where}an incomplete last line of {path}: {exc.reason}"
                ) from None
        disk.source = FdLines(ops, rfd, path)
        kept, renamed = entries_to_keep(disk, ours)
        taken_in = tuple(
            disk.ids[j]
            for j, raw in enumerate(disk.lines(range(len(disk))))
            if (i := ours.by_id.get(disk.ids[j])) is None or ours.line(i) != raw
        )
        needs_newline = found.clean_end > 0 and ops.pread(rfd, 1, found.clean_end - 1) != b"\n"
    except BaseException:
        if fd is not None:
            ops.close(fd)
        with contextlib.suppress(OSError):
            ops.close(rfd)
        raise
    return ReloadRead(
        rfd, fd, disk, found, locked and same_file, kept, renamed, taken_in, needs_newline
    )
