"""Checkpoint records as the session keeps them (``custom`` entries Pi ignores in context).

A turn whose tools may change files gets a ``before`` record right before its first such
tool call and an ``after`` record at its end::

    {"type": "custom", "customType": "desktop-agent.checkpoint",
     "data": {"kind": "after", "tree": "<git tree id>", "before": "<tree id>",
              "changed": ["notes.txt", ...], "skipped": [{"path": ..., "reason": ...}]}}

The folder state of a point of the tree is the tree of the last record on its path
(`state_of`); the files a tool of the session created or deleted are those in which each
``after`` differs from its ``before`` by existence (`turn_pairs` gives the pairs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from desktop_agent.checkpoints._store import Skipped, Snapshot

CHECKPOINT_CUSTOM_TYPE = "desktop-agent.checkpoint"
MAX_LISTED_CHANGES = 200
"""An ``after`` record lists at most this many changed paths (and always their count)."""

RecordKind = Literal["before", "after"]


@dataclass(frozen=True)
class CheckpointRecord:
    kind: RecordKind
    tree: str
    before: str | None = None
    changed: tuple[str, ...] = ()
    changed_count: int = 0
    skipped: tuple[Skipped, ...] = ()


def record_data(
    kind: RecordKind,
    snapshot: Snapshot,
    *,
    before: str | None = None,
    changed: Sequence[str] = (),
) -> dict[str, Any]:
    """The ``data`` of a checkpoint custom entry."""
    data: dict[str, Any] = {"kind": kind, "tree": snapshot.tree}
    if kind == "after":
        data["before"] = before
        data["changed"] = list(changed[:MAX_LISTED_CHANGES])
        data["changedCount"] = len(changed)
    if snapshot.skipped:
        data["skipped"] = [{"path": s.path, "reason": s.reason} for s in snapshot.skipped]
    return data


def parse_record(custom_type: str | None, data: Any) -> CheckpointRecord | None:
    """The record in a custom entry, or None for any other entry or a malformed one."""
    if custom_type != CHECKPOINT_CUSTOM_TYPE or not isinstance(data, Mapping):
        return None
    kind = data.get("kind")
    tree = data.get("tree")
    if kind not in ("before", "after") or not _is_id(tree):
        return None
    before = data.get("before")
    changed = data.get("changed")
    paths = tuple(p for p in changed if isinstance(p, str)) if isinstance(changed, list) else ()
    count = data.get("changedCount")
    skipped_raw = data.get("skipped")
    skipped = (
        tuple(
            Skipped(str(s.get("path", "")), str(s.get("reason", "")))
            for s in skipped_raw
            if isinstance(s, Mapping)
        )
        if isinstance(skipped_raw, list)
        else ()
    )
    return CheckpointRecord(
        kind=kind,
        tree=str(tree),
        before=str(before) if _is_id(before) else None,
        changed=paths,
        changed_count=count if isinstance(count, int) and count >= 0 else len(paths),
        skipped=skipped,
    )


def state_of(records: Iterable[CheckpointRecord | None]) -> str | None:
    """The folder state (tree id) of the point a path of records ends at: the last record
    on it, or None when no turn on it snapshotted the folder."""
    tree: str | None = None
    for record in records:
        if record is not None:
            tree = record.tree
    return tree


def turn_pairs(records: Iterable[CheckpointRecord | None]) -> list[tuple[str, str]]:
    """(before, after) tree pairs of every turn, in order, without repeats."""
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str]] = []
    for record in records:
        if record is None or record.kind != "after" or record.before is None:
            continue
        pair = (record.before, record.tree)
        if pair not in seen and pair[0] != pair[1]:
            seen.add(pair)
            out.append(pair)
    return out


def _is_id(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) in (40, 64)
        and all(c in "0123456789abcdef" for c in value)
    )
