"""The app's own composer commands (``/new``, ``/compact``, ``/context``, …): each goes
to the same route as its menu entry, so typing a command and choosing it from a menu do
one thing. Anything else typed is sent (templates and skills expand in the workbench).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QTimer

from desktop_agent.gui._context_view import ContextDialog
from desktop_agent.gui._titles import fit_title
from desktop_agent.gui._window_api import WindowApi
from desktop_agent.workbench import NO_SESSION, Changes, parse_app_command

EXPORT_NAMES = {"html": "html", "markdown": "markdown", "md": "markdown", "jsonl": "jsonl"}


async def fill_completions(w: WindowApi) -> None:
    """Give the composer's ``/`` list its entries (commands, templates, skills)."""
    w.composer.commands.set_completions(await w.wb.completions())


async def command_or(
    w: WindowApi, text: str, send: Callable[[str], Coroutine[Any, Any, Changes]]
) -> None:
    """An app command typed while the agent runs is run (``/compact`` then says to stop
    the agent first), never steered to the model as text; anything else goes to ``send``."""
    if not await run_command(w, text):
        await w.do(send(text))


async def run_command(w: WindowApi, text: str) -> bool:
    """Run ``text`` when it is one of the app's commands (True), else leave it (False)."""
    parsed = parse_app_command(text.strip())
    if parsed is None:
        return False
    name, args = parsed
    wb, ref = w.wb, w.wb.ref
    if name == "new":
        await w.new_session()
    elif name == "compact":
        await w.do(wb.compact(args))
    elif name == "model" and args:
        await w.do(wb.choose_model(args))
    elif name == "model":
        w.composer.model_picker.setFocus()
        w.composer.model_picker.showPopup()
    elif name == "settings":
        await w.settings()
    elif name == "context":
        await show_context(w)
    elif name == "copy":
        w.chat_actions.copy()
    elif ref is None:
        w.presenter.apply(wb.notify("error", NO_SESSION))
    elif name == "name" and args:
        await w.do(wb.rename(ref, args))
    elif name == "name":  # a modal question: asked from the event loop, not this task
        QTimer.singleShot(0, lambda: w.sidebar.rename_session(ref))
    elif name == "fork":
        await w.do(wb.fork(ref))
    elif name == "export":
        await w.export(ref, EXPORT_NAMES.get(args.lower(), "html"))
    return True


async def show_context(w: WindowApi) -> None:
    """Open (or bring up to date) the Context view of the open session."""
    view = await w.wb.context_view()
    if view is None:
        w.presenter.apply(w.wb.notify("error", NO_SESSION))
        return
    dialog = w.window().findChild(ContextDialog, "contextDialog")
    if dialog is None:

        async def save(text: str) -> None:
            await w.do(w.wb.set_instructions(text))
            await show_context(w)

        dialog = ContextDialog(w.window(), view, lambda text: w.spawn(save(text)))
    else:
        dialog.show_view(view)
    fit_title(dialog)
    dialog.show()
    dialog.activateWindow()
