"""The trash of JSONL sessions: a deleted session file moves into a folder of its own
under the trash root with a ``trash.json`` manifest (where it was, when, its id), from
where it can be restored (never over an existing file)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from desktop_agent.session._errors import SessionError
from desktop_agent.session._header import read_header
from desktop_agent.session._ids import now_iso
from desktop_agent.session._platform import fsync_dir
from desktop_agent.utils.atomic import atomic_write


@dataclass(frozen=True)
class TrashItem:
    """A deleted session waiting in the trash."""

    trash_path: str
    original_path: str
    deleted_at: str
    session_id: str


def move_to_trash(path: str, trash_root: str) -> TrashItem | None:
    """Move a session file (and its sidecars) into the trash; None if it is missing."""
    if not os.path.exists(path):
        return None
    deleted_at = now_iso()
    folder = os.path.join(trash_root, deleted_at.replace(":", "-").replace(".", "-"))
    n = 1
    while os.path.exists(folder):
        n += 1
        folder = os.path.join(trash_root, f"{deleted_at.replace(':', '-')}-{n}")
    os.makedirs(folder)
    dest = os.path.join(folder, os.path.basename(path))
    try:
        session_id = read_header(path).id
    except (SessionError, OSError):
        session_id = ""
    manifest = {"originalPath": path, "deletedAt": deleted_at, "sessionId": session_id}
    atomic_write(os.path.join(folder, "trash.json"), json.dumps(manifest).encode(), mode=0o644)
    shutil.move(path, dest)
    fsync_dir(folder)
    fsync_dir(os.path.dirname(path))
    _remove_legacy_lock(path)
    return TrashItem(dest, path, deleted_at, session_id)


def _remove_legacy_lock(path: str) -> None:
    """Delete the empty ``<file>.lock`` sidecar that older versions left beside a file."""
    legacy = path + ".lock"
    with contextlib.suppress(OSError):
        st = os.lstat(legacy)
        if stat.S_ISREG(st.st_mode) and st.st_size == 0:
            os.unlink(legacy)


def list_trash(trash_root: str) -> list[TrashItem]:
    items: list[TrashItem] = []
    root = Path(trash_root)
    if not root.is_dir():
        return items
    for manifest in sorted(root.glob("*/trash.json"), reverse=True):
        try:
            info = json.loads(manifest.read_bytes())
            files = [p for p in manifest.parent.iterdir() if p.name.endswith(".jsonl")]
        except (OSError, ValueError):
            continue
        for f in files:
            items.append(
                TrashItem(
                    str(f),
                    str(info.get("originalPath", "")),
                    str(info.get("deletedAt", "")),
                    str(info.get("sessionId", "")),
                )
            )
    return items


def restore_from_trash(item: TrashItem) -> str:
    """Put a trashed session back where it was (refuses to overwrite anything)."""
    dest = item.original_path
    if os.path.exists(dest):
        raise SessionError("storage", f"Cannot restore: {dest} already exists")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.move(item.trash_path, dest)
    fsync_dir(os.path.dirname(dest))
    folder = os.path.dirname(item.trash_path)
    if not any(p.endswith(".jsonl") for p in os.listdir(folder)):
        shutil.rmtree(folder, ignore_errors=True)
    return dest
