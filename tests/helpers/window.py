"""Driving the real `MainWindow` in tests: open it on a workbench, run its coroutines,
read what its chat pane painted, and close it the way a person does."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop_agent.ai import Model
from desktop_agent.gui import MainWindow
from desktop_agent.gui.chat._parts import ButtonPart, CardLayout, DocPart, TextPart
from desktop_agent.workbench import Workbench
from tests.helpers.provider_server import ProviderServer
from tests.helpers.workbench import make_workbench

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
    window = open_window(qtbot, tmp_path / "data", model, store=store)
    window.wb.state.last_workspace = str(workspace)
    window.activateWindow()
    return window


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
    """Close like a person (the window's close button), then release the workbench."""
    window.close()
    qtbot.waitUntil(lambda: window._closed_ok, timeout=timeout)
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
