"""Session operations on the list (Anki's ``aqt/operations/<noun>.py``): rename, fork,
trash and Undo, restore from the trash, delete for good, repair, convert, copy in,
reload from disk, export and back up. Each takes the workbench and returns what it
changed; a session that is open is changed through its `OpenSession`."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING

from desktop_agent.checkpoints import CheckpointError
from desktop_agent.session import Session, SessionError
from desktop_agent.utils.atomic import atomic_write
from desktop_agent.workbench._changes import Changes
from desktop_agent.workbench._checkpoints import session_trees
from desktop_agent.workbench._open import WorkbenchError
from desktop_agent.workbench._views import SaveState, SidebarRow, entries_phrase

if TYPE_CHECKING:
    from desktop_agent.workbench._workbench import Workbench

log = logging.getLogger("desktop_agent.workbench")


def _folder(cwd: str) -> str:
    """A session's folder as the checkpoint store names it."""
    return os.path.abspath(cwd) if cwd else ""


async def rename(wb: Workbench, ref: str, name: str) -> Changes:
    name = name.strip()
    store = wb.listing.store_for(ref)
    opened = wb.find_open(ref)
    if opened is not None:
        await opened.session.append_session_name(name)
        await opened.sync()
    else:
        other = await store.open(ref)
        try:
            await other.append_session_name(name)
        finally:
            await other.close()
    await store.changed(ref)
    return wb._changed(await wb.refresh_sessions())


async def fork(wb: Workbench, ref: str, at: str | None = None) -> Changes:
    """A new session that continues from ``ref``'s current position (or from the entry
    ``at``: the path to it is copied), opened; its title says it is a fork, and its name
    entry gives it its own time."""
    opened = wb.find_open(ref)
    if opened is not None:
        opened.check_idle("forking")
        await opened.sync()
        cwd = opened.session.metadata.cwd or ""
    else:
        row = wb.row_for(ref)
        cwd = row.cwd if row is not None else (wb.default_workspace() or "")
    title = wb.listing.title(ref)
    if wb.is_pi(ref) and at is None:  # a new session of ours, from another program's file
        forked = await wb.store.open(await wb.store.copy_in(ref))
    else:
        forked = await wb.store.fork(ref, cwd, at)
    await forked.append_session_name(f"{title} (fork)")
    await forked.sync()
    await wb.sessions.leave()
    changes = await wb.sessions.adopt(forked)
    await wb.store.changed(wb.ref or "")
    return wb._changed(changes | await wb.refresh_sessions())


async def trash(wb: Workbench, ref: str) -> Changes:
    """Move a session to the trash (Undo in the notice brings it back). Trashing the
    shown session opens the next one of the list, or none."""
    if wb.is_pi(ref):
        raise WorkbenchError(
            "Sessions of the Pi coding agent are deleted with Pi; Desktop Agent leaves"
            " its folder as it is."
        )
    opened = wb.find_open(ref)
    was_open = opened is not None and opened.shown
    if opened is not None:
        opened.check_idle("deleting the session")
    following: str | None = None
    if was_open:
        rows = wb.listing.rows
        cwd = next((r.cwd for r in rows if r.path == ref), None)
        # the neighbour in the same project (the list groups by project: m20)
        paths = [r.path for r in rows if r.source != "pi" and r.cwd == cwd]
        paths = paths or [r.path for r in rows if r.source != "pi"]
        rest = [p for p in paths if p != ref]
        index = paths.index(ref) if ref in paths else 0
        following = rest[min(index, len(rest) - 1)] if rest else None
        await wb.sessions.leave()
    trash_ref = await wb.store.move_to_trash(ref)
    changes = Changes.everything() if was_open else Changes(sessions=True)
    if trash_ref is not None:

        async def undo() -> Changes:
            restored = await wb.store.restore(trash_ref)
            return await wb.open(restored) if was_open else await wb.refresh_sessions()

        changes = changes | wb.notify(
            "trash", "The session was moved to the trash.", ("Undo", undo)
        )
    await wb.refresh_sessions()
    if was_open and following is not None:
        changes = changes | await wb.open(following)
    return wb._changed(changes)


async def restore_from_trash(wb: Workbench, trash_ref: str) -> Changes:
    ref = await wb.store.restore(trash_ref)
    wb.notify("trash", None)
    changes = await wb.refresh_sessions()
    return wb._changed(changes | await wb.open(ref))


PREVIEW_CHARS = 6_000
"""How much of a session in the trash its preview shows (the start of the Markdown)."""


async def preview_trashed(wb: Workbench, trash_ref: str) -> str:
    """The start of a session in the trash, as Markdown: read before it is restored or
    deleted for good (FIRST_HOUR.md m11). A file that cannot be read says so."""
    from desktop_agent.workbench._export import demote_headings, to_markdown

    title = next((r.title for r in wb.trash_rows if r.path == trash_ref), "")
    try:
        session = await wb.store.open_trashed(trash_ref)
    except SessionError as exc:
        return f"*This session cannot be read: {exc.message}*"
    try:
        text = demote_headings(to_markdown(session, title, limit=PREVIEW_CHARS), 3)  # narrow
    finally:
        await session.close()
    if len(text) <= PREVIEW_CHARS:
        return text
    return text[:PREVIEW_CHARS].rstrip() + "\n\n…"


async def delete_for_good(wb: Workbench, trash_refs: Sequence[str] | None = None) -> Changes:
    """Delete sessions in the trash for good (None: empty the trash). The checkpoints
    only they used are removed from the store, in a worker thread: a snapshot another
    session (open, listed or still in the trash) points at is kept."""
    store = wb.store
    trash_rows = await store.trash()
    chosen = [r.path for r in trash_rows if trash_refs is None or r.path in trash_refs]
    gone: dict[str, set[str]] = {}
    for ref in chosen:
        found = await _trees(store.open_trashed(ref))
        await store.purge(ref)
        if found is not None and found[0]:
            gone.setdefault(found[0], set()).update(found[1])
    freed = 0
    if wb.files is not None and gone:
        left = [r for r in trash_rows if r.path not in chosen]
        in_use = await _trees_in_use(wb, set(gone), left)
        for cwd, trees in gone.items():
            if cwd not in in_use:
                continue  # a session there could not be read: keep everything
            try:
                freed += await wb.files.files.store.folder(cwd).forget(trees - in_use[cwd])
            except CheckpointError as exc:
                log.warning("checkpoints of deleted sessions not removed: %s", exc.message)
    changes = wb.notify(
        "trash",
        "Deleted {count} sessions for good ({size} MB of checkpoints freed).",
        count=len(chosen),
        size=f"{freed / 1e6:.1f}",
    )
    return wb._changed(changes | await wb.refresh_sessions())


async def _trees(opening: Awaitable[Session]) -> tuple[str, set[str]] | None:
    """A session's folder and the snapshots it points at (None: it cannot be read)."""
    try:
        session = await opening
    except SessionError as exc:
        log.warning("a session's checkpoints could not be read: %s", exc)
        return None
    try:
        return _folder(session.metadata.cwd or ""), await session_trees(session)
    finally:
        await session.close()


async def _trees_in_use(
    wb: Workbench, folders: set[str], trash_rows: Sequence[SidebarRow]
) -> dict[str, set[str]]:
    """The snapshots the other sessions in ``folders`` point at, by folder; a folder with
    a session that could not be read is left out."""
    used: dict[str, set[str]] = {cwd: set() for cwd in folders}
    unreadable: set[str] = set()
    store = wb.store
    for row in [*await store.sessions(), *trash_rows]:
        cwd = _folder(row.cwd)
        if cwd not in folders or row.source == "pi":
            continue
        opened = wb.find_open(row.path)
        if opened is not None:
            used[cwd] |= await session_trees(opened.session)
            continue
        opening = store.open_trashed(row.path) if row.in_trash else store.open(row.path)
        found = await _trees(opening)
        if found is None:
            unreadable.add(cwd)
        else:
            used[cwd] |= found[1]
    return {cwd: trees for cwd, trees in used.items() if cwd not in unreadable}


async def repair(wb: Workbench, ref: str) -> Changes:
    """Write the readable entries of a damaged session to a new session, open it."""
    new_ref = await wb.store.repair(ref)
    changes = wb.notify(
        "repair", "The readable entries are in a new session; the damaged one is unchanged."
    )
    return wb._changed(changes | await wb.open(new_ref))


async def convert(wb: Workbench, ref: str | None = None) -> Changes:
    """ "Convert to the current format": a v1/v2 session (read-only here) as a new v3
    file beside the original, which is never rewritten; the new file opens."""
    ref = ref or wb.ref
    if ref is None:
        raise WorkbenchError("No session is open.")
    opened = wb.find_open(ref)
    if opened is not None:
        opened.check_idle("converting the session")
    new_ref = await wb.listing.store_for(ref).convert(ref)
    changes = wb.notify("read_only", None) | wb.notify(
        "convert",
        "Converted to the current format: this is a new file beside the original,"
        " which is unchanged.",
    )
    await wb.refresh_sessions()
    return wb._changed(changes | await wb.open(new_ref))


async def copy_into_ours(wb: Workbench, ref: str) -> Changes:
    """ "Copy into Desktop Agent": our own session holding every entry of a Pi session
    (the Pi CLI's file stays as it is), opened."""
    if not wb.is_pi(ref):
        raise WorkbenchError("Only sessions of the Pi coding agent can be copied in.")
    opened = wb.find_open(ref)
    if opened is not None:
        opened.check_idle("copying the session")
        await opened.sync()  # the copy holds what this window wrote too
    new_ref = await wb.store.copy_in(ref)
    changes = wb.notify(
        "copy",
        "This is your own copy of the Pi session; the Pi coding agent's file is unchanged.",
    )
    await wb.refresh_sessions()
    return wb._changed(changes | await wb.open(new_ref))


async def reload_from_disk(wb: Workbench) -> Changes:
    """Another program (the Pi CLI, another tool) wrote to the shown session's file: take
    in its entries and keep ours as a branch from where the two diverged."""
    opened = wb._need_open()
    harness, session = opened.harness, opened.session
    if harness is None:
        raise WorkbenchError("No session is open.")
    opened.check_idle("reloading the session")
    report = await harness.reload_from_disk()
    opened.entries_told = session.entry_count  # the map is redrawn as a whole
    if report.error is not None:
        opened.save = SaveState(
            "not_saved", session.pending_count, report.error.message, report.error.code
        )
    else:
        opened.save = SaveState("saved")
    theirs, ours = len(report.taken_in), len(report.kept)
    text = (
        "Reloaded: {theirs} written by another program came in; {ours} of yours are"
        " kept as a branch where the two diverged."
        if ours > 1
        else "Reloaded: {theirs} written by another program came in; {ours} of yours is"
        " kept as a branch where the two diverged."
        if ours
        else "Reloaded: {theirs} written by another program came in."
    )
    opened.count_usage(harness.model.context_window if harness.model is not None else 0)
    await wb.listing.store_for(opened.ref).changed(opened.ref)
    changes = Changes(branch=True, map=True, usage=True, save_state=True, draft=True)
    ours_leaf = report.our_leaf
    action = None
    if ours and ours_leaf is not None and ours_leaf != session.leaf_id():

        async def show_ours() -> Changes:
            return await wb.navigate(ours_leaf)

        action = ("Show my branch", show_ours)
    notice = wb.notify(
        "save", text, action, theirs=entries_phrase(theirs), ours=entries_phrase(ours)
    )
    return wb._changed(changes | notice | await wb.refresh_sessions())


async def export(wb: Workbench, ref: str, fmt: str, dest: str) -> Changes:
    """Markdown or HTML of the current branch, or a JSONL copy of the session."""
    from desktop_agent.workbench._export import to_html, to_markdown

    opened = wb.find_open(ref)
    if fmt == "jsonl":
        if opened is not None:
            await opened.session.save_copy(dest)
        else:
            await wb.listing.store_for(ref).copy_jsonl(ref, dest)
    else:
        session = opened.session if opened else await wb.listing.store_for(ref).open(ref)
        try:
            render = to_markdown if fmt == "markdown" else to_html
            text = render(session, wb.listing.title(ref))
        finally:
            if opened is None:
                await session.close()
        await asyncio.to_thread(atomic_write, dest, text.encode("utf-8"), mode=0o644)
    return wb._changed(wb.notify("export", "Exported to {path}.", path=dest))


async def backup(wb: Workbench, dest: str) -> Changes:
    count = await wb.store.backup(dest)
    text = "{n} sessions backed up to {path}." if count != 1 else "1 session backed up to {path}."
    return wb._changed(wb.notify("export", text, n=count, path=dest))
