"""Reloading a session another program wrote to while it was open here (issue 13 item 4).

The file on disk wins as it is: its entries (ours that reached it, and the other
program's) are taken in unchanged. Our entries that the file lacks (unsaved ones, or
written ones a rewrite dropped) are appended after them as one block, in our order, with
their parents as they were, so they form a branch from the point where the two
histories diverged: nothing lost, nothing interleaved. An entry of ours whose id the
other program also used gets a new id (and references to it follow).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from desktop_agent.session._codec import Entry, decode_entry, entry_from_obj, serialize
from desktop_agent.session._errors import SessionWriteError
from desktop_agent.session._ids import new_entry_id
from desktop_agent.session._tree import Tree

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
