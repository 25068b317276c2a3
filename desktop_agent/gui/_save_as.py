"""Where a session goes on disk: Export, Back up and Save a copy ask for a file, then
run their workbench operation through the window's route (`Ops.do`)."""

from __future__ import annotations

import asyncio
import os

from PySide6.QtCore import QCoreApplication

from desktop_agent.gui._dialogs import Dialogs
from desktop_agent.gui._ports import Ops
from desktop_agent.workbench import EXPORT_FILTERS, Workbench, export_file_name


def _tr(text: str) -> str:
    return QCoreApplication.translate("MainWindow", text)


async def export_session(wb: Workbench, ops: Ops, dialogs: Dialogs, ref: str, fmt: str) -> None:
    """Export ``ref`` as ``fmt``, named after the session, in its project folder (p11)."""
    row = wb.row_for(ref)
    name = export_file_name(row.title if row else "", fmt)
    there = row is not None and await asyncio.to_thread(os.path.isdir, row.cwd)
    suggested = os.path.join(row.cwd, name) if row is not None and there else name
    filters = EXPORT_FILTERS.get(fmt, "")
    dest = await dialogs.ask_save_path(_tr("Export session"), suggested, filters)
    if dest:
        await ops.do(wb.export(ref, fmt, dest))


async def back_up(wb: Workbench, ops: Ops, dialogs: Dialogs) -> None:
    """Every session into one archive."""
    dest = await dialogs.ask_save_path(_tr("Back up all sessions"), "sessions-backup.zip", "")
    if dest:
        await ops.do(wb.backup(dest))


async def save_copy(wb: Workbench, ops: Ops, dialogs: Dialogs) -> bool:
    """A copy of the open session (the way out when it cannot be saved); False when no
    file was chosen."""
    dest = await dialogs.ask_save_path(
        _tr("Save a copy of the session"), "", _tr("JSONL (*.jsonl)")
    )
    if dest:
        await ops.do(wb.save_copy(dest))
    return bool(dest)
