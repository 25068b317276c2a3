"""The end of the quit sequence: settle the run, write and sync everything; entries that
could not be saved are retried, copied elsewhere or given up, as the person chooses (or
written to a recovery file when nobody can be asked)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable

from desktop_agent.gui._dialogs import Dialogs
from desktop_agent.gui._ports import Ops
from desktop_agent.workbench import Workbench


async def shut_down(
    wb: Workbench,
    ops: Ops,
    dialogs: Dialogs,
    save_copy: Callable[[], Awaitable[bool]],
    *,
    stop: bool,
    ask: bool,
) -> int | None:
    """Shut the workbench down (``stop``: stop a run instead of waiting for it). Returns
    the exit code once everything is written (1 when unsaved entries went to a recovery
    file because ``ask`` is False), None when the person chose to keep the app open."""
    unsaved = await wb.shutdown(stop=stop)
    while unsaved:
        if not ask:
            return write_recovery(wb, unsaved)
        choice = await dialogs.quit_unsaved(unsaved)
        if choice == "retry":
            await ops.do(wb.retry_saving())
        elif (choice == "copy" and await save_copy()) or choice == "quit":
            wb.abandon()
            return 0
        elif choice == "cancel":
            return None
        unsaved = await wb.shutdown(stop=True)
    return 0


def write_recovery(wb: Workbench, unsaved: int) -> int:
    """The unsaved entries into a recovery file, said on stderr; the exit code (1)."""
    try:
        path = wb.write_recovery()
    except OSError as exc:
        path = None
        sys.stderr.write(f"desktop-agent: the recovery file failed too: {exc}\n")
    if path:
        sys.stderr.write(f"desktop-agent: {unsaved} unsaved entries were written to {path}\n")
    wb.abandon()
    return 1
