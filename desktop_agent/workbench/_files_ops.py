"""The folder's files and the branch (checkpoints), for the window: what a turn
changed, what differs from the branch, putting files back, and the folder following the
shown session's branch; none of it while another session's agent works in that folder.
Methods of `Workbench` (assigned there)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from desktop_agent.workbench._changes import Changes
from desktop_agent.workbench._checkpoints import TurnChanges, file_marks

if TYPE_CHECKING:
    from desktop_agent.workbench._workbench import Workbench


async def turn_changes(wb: Workbench, entry_id: str) -> TurnChanges | None:
    """The files the turns of the map row of ``entry_id`` changed, with diffs."""
    if wb.files is None or wb.session is None:
        return None
    return await wb.files.changes_at(wb.session, wb.map, entry_id)


async def branch_changes(wb: Workbench) -> TurnChanges | None:
    """The files that differ from the branch's state (the files bar's "Show
    changes"), with diffs from the folder to the branch; None: none differ now."""
    return await wb.files.differing() if wb.files is not None else None


async def restore_branch_files(wb: Workbench, paths: Sequence[str] | None = None) -> Changes:
    """Restore files (or ``paths`` of them) of the branch the files bar offered;
    refused while another session's agent works in that folder."""
    assert wb.files is not None
    wb._check_folder_free("restoring files")
    return wb._changed(await wb.files.restore(paths))


async def revert_changes(
    wb: Workbench, changes: TurnChanges, paths: Sequence[str] | None = None
) -> Changes:
    """Put a turn's files (or ``paths`` of them) back as they were before it."""
    wb._check_idle("reverting files")
    wb._check_folder_free("reverting files")
    assert wb.files is not None
    return wb._changed(await wb.files.revert(changes, paths))


def _check_idle(wb: Workbench, what: str) -> None:
    if wb.shown is not None:
        wb.shown.check_idle(what)


def _check_folder_free(wb: Workbench, what: str) -> None:
    wb.sessions.check_folder_free(what)


def _follow_files(wb: Workbench) -> None:
    """Compare the folder with the shown point's files (in the background); not
    while another session's run works in the same folder."""
    files, shown = wb.files, wb.shown
    if files is None or shown is None:
        return
    if any(
        o is not shown and o.running and o.folder == shown.folder for o in wb.open_sessions.values()
    ):
        return
    session, mode = shown.session, wb.settings.checkpoints.follow_branch

    async def follow() -> None:
        marks = wb.map.file_marks
        wb.map.set_file_marks(await file_marks(session))
        redraw = Changes(map=wb.map.file_marks != marks)
        wb._changed(await files.follow(session, mode) | redraw)

    wb._following = wb.spawn(follow())
