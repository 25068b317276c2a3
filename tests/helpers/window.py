"""Driving the real `MainWindow` in tests: open it on a workbench, run its coroutines,
read what its chat pane painted, and close it the way a person does."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QWidget
from pytestqt.qtbot import QtBot

from desktop_agent.ai import Model
from desktop_agent.gui import MainWindow
from desktop_agent.gui.chat._parts import ButtonPart, CardLayout, DocPart, TextPart
from desktop_agent.workbench import Workbench
from tests.helpers.provider_server import HttpError, ProviderServer, Reply
from tests.helpers.workbench import make_workbench

Scripted = Reply | HttpError

SCREENSHOTS = Path(__file__).resolve().parents[1] / "gui" / "screenshots"


def run(qtbot: QtBot, coro: Coroutine[Any, Any, Any], timeout: int = 20_000) -> Any:
    """Run ``coro`` on the test's qasync loop and wait for it (Qt events keep flowing)."""
    task = asyncio.ensure_future(coro)
    qtbot.waitUntil(task.done, timeout=timeout)
    return task.result()


def open_window(
    qtbot: QtBot,
    data: Path,
    models: Model | list[Model],
    *,
    store: str = "jsonl",
    restore: bool = True,
    target: str | None = None,
    workbench: Workbench | None = None,
    no_err_windows: bool = False,
) -> MainWindow:
    wb = workbench or make_workbench(data, models, store=store)
    return show_window(qtbot, wb, restore=restore, target=target, no_err_windows=no_err_windows)


def show_window(
    qtbot: QtBot,
    wb: Workbench,
    *,
    restore: bool = True,
    target: str | None = None,
    no_err_windows: bool = False,
) -> MainWindow:
    """The real window on ``wb`` (started here), restored to ``target`` or the last
    session, shown, with its first redraws done."""
    run(qtbot, wb.start())
    window = MainWindow(wb, no_err_windows=no_err_windows)

    def before_close(w: MainWindow) -> None:
        # A failed test leaves a run going: quit without the modal question.
        w.ask_stop_or_wait = lambda: "stop"  # type: ignore[method-assign]

    qtbot.addWidget(window, before_close_func=before_close)
    if wb.state.window_geometry is None:
        window.resize(1200, 760)
    if restore:
        run(qtbot, window.restore(target))
    window.show()
    qtbot.waitUntil(lambda: window._shown_once)
    run(qtbot, window.settle_tasks())
    settle(qtbot, window)
    return window


def new_window(
    qtbot: QtBot, tmp_path: Path, provider: ProviderServer, store: str, workspace: Path
) -> MainWindow:
    """A window on ``tmp_path/data`` whose new sessions go to ``workspace``, active."""
    model = provider.model("anthropic-messages")
    wb = make_workbench(tmp_path / "data", model, store=store)
    return window_in(qtbot, wb, workspace)


def window_in(qtbot: QtBot, workbench: Workbench, workspace: Path, **options: Any) -> MainWindow:
    """A window on ``workbench`` (``options`` as `open_window`'s) whose new sessions go to
    ``workspace``, active (so its keys and its dialogs' keys reach it)."""
    window = show_window(qtbot, workbench, **options)
    window.wb.state.last_workspace = str(workspace)
    window.activateWindow()
    return window


def session_window(
    qtbot: QtBot, tmp_path: Path, provider: ProviderServer, store: str, workspace: Path
) -> MainWindow:
    """`new_window` with a new, empty session open in ``workspace`` (where most flows
    start)."""
    window = new_window(qtbot, tmp_path, provider, store, workspace)
    run(qtbot, window.new_session())
    return window


def send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    """Click into the message box, type ``text``, press Enter and wait for the run."""
    window.composer.input.setFocus()
    type_and_send(qtbot, window, text)
    idle(qtbot, window)


def ask(
    qtbot: QtBot, window: MainWindow, provider: ProviderServer, text: str, *replies: Scripted
) -> list[Any]:
    """Script the model's ``replies`` (in order), type ``text`` into what has the focus,
    press Enter and wait for the run; returns the bodies of the requests the run sent."""
    provider.script(*replies)
    before = len(provider.requests)
    type_and_send(qtbot, window, text)
    idle(qtbot, window)
    return [r.body for r in provider.requests[before:] if r.method == "POST"]


def active_dialog(qtbot: QtBot, name: str) -> QDialog:
    """The real dialog ``name`` once it is shown and is the active window (its Alt+letter
    keys reach it only then: a busy machine shows it before it activates it)."""
    found: list[QDialog] = []

    def shown() -> bool:
        found[:] = [
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, QDialog) and w.objectName() == name and w.isVisible()
        ]
        return bool(found)

    qtbot.waitUntil(shown, timeout=15_000)
    qtbot.waitUntil(found[0].isActiveWindow, timeout=15_000)
    return found[0]


def settle(qtbot: QtBot, window: MainWindow, timeout: int = 20_000) -> None:
    """Wait until the window's redraws are done and Qt has painted (a run may go on)."""
    run(qtbot, window.presenter.settled(), timeout)
    QApplication.processEvents()
    window.chat.view.viewport().repaint()


def idle(qtbot: QtBot, window: MainWindow, timeout: int = 20_000) -> None:
    """Wait for what the last key press or click started (e.g. a run) to finish."""
    run(qtbot, window.settle_tasks(), timeout)
    settle(qtbot, window)


def close(qtbot: QtBot, window: MainWindow, timeout: int = 20_000) -> None:
    """Close like a person (the window's close button; then the other windows' too, if
    it opened some: the last one quits), then release the workbench."""
    windows = window.windows
    window.close()
    for other in list(windows.windows):
        if other is not window and isinstance(other, MainWindow):
            other.ask_stop_or_wait = lambda: "stop"  # type: ignore[method-assign]
            other.close()
    qtbot.waitUntil(lambda: windows.all_closed, timeout=timeout)
    run(qtbot, windows.closed())
    run(qtbot, window.settle_tasks())
    run(qtbot, window.wb.aclose())


def type_and_send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    """Type into whatever has the keyboard focus, then press Enter."""
    target = QApplication.focusWidget() or window.composer.input
    QTest.keyClicks(target, text)
    QTest.keyClick(target, Qt.Key.Key_Return)


def painted(window: MainWindow, row: int) -> CardLayout | None:
    """The layout last painted for chat row ``row`` if it is its current version."""
    model = window.chat.model
    if not 0 <= row < model.rowCount():
        return None
    r = model.row_at(row)
    seen = window.chat.delegate.painted.get(r.uid)
    return seen[1] if seen is not None and seen[0] == r.version else None


def painted_text(layout: CardLayout | None) -> str:
    """Every text a painted card shows (documents, labels and buttons)."""
    if layout is None:
        return ""
    out: list[str] = []
    for part in layout.parts:
        if isinstance(part, DocPart):
            out.append(part.doc.toPlainText())
        elif isinstance(part, TextPart | ButtonPart):
            out.append(part.text)
    return "\n".join(out)


def card_texts(window: MainWindow, *, to_end: bool = False) -> list[str]:
    """What the chat painted, card by card (``to_end``: scrolled to the end first); a card
    not on screen reads as ""."""
    if to_end:
        window.chat.follow_bottom()
    window.chat.view.viewport().repaint()
    return [painted_text(painted(window, r)) for r in range(window.chat.model.rowCount())]


def chat_text(window: MainWindow, *, to_end: bool = False) -> str:
    """Every card's painted text, one after the other."""
    return "\n".join(card_texts(window, to_end=to_end))


def focused() -> QWidget:
    """The widget with the keyboard focus (there must be one)."""
    target = QApplication.focusWidget()
    assert target is not None, "nothing has the keyboard focus"
    return target


def press(key: Qt.Key, mods: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    """Press ``key`` in whatever has the keyboard focus."""
    QTest.keyClick(focused(), key, mods)


def on_screen(window: MainWindow, row: int) -> bool:
    view = window.chat.view
    rect = view.visualRect(window.chat.model.index(row, 0))
    return rect.isValid() and rect.intersects(view.viewport().rect())


def click_button(qtbot: QtBot, window: MainWindow, row: int, text: str) -> None:
    """Click the painted button ``text`` of chat row ``row``."""
    layout = painted(window, row)
    assert layout is not None, f"row {row} is not painted"
    button = next(p for p in layout.parts if isinstance(p, ButtonPart) and p.text == text)
    view = window.chat.view
    top = view.visualRect(window.chat.model.index(row, 0)).topLeft()
    pos = top + button.rect.center()
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pos))


def find_index(model: Any, entry_id: str) -> Any:
    """The branch map's model index of the row of an entry, or None."""
    from desktop_agent.gui.map import MapRole

    for row in range(model.rowCount()):
        index = model.index(row, 0)
        if model.data(index, MapRole.ID) == entry_id:
            return index
    return None
