"""Sessions in windows of their own, in real windows (issue 22 item 3): Ctrl+Shift+N opens
a second window with a new session and the cursor in its message box; its prompt is
answered while the first window's run streams; both sidebars show both sessions and
their runs; "Open in new window" on a row shows that session in a new window; asking
for a session shown in another window brings that window forward; closing a window
keeps its run going (its file ends with the whole reply); quitting with two runs active
asks once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from PySide6.QtCore import QEvent, QModelIndex, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop_agent.gui import MainWindow
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import close, new_window, painted, painted_text, run, settle

LAST_SENTENCE = "That is the end of alpha's reply."


def long_reply(name: str, last: str) -> list[str]:
    text = (
        f"# {name}\n\n"
        + "\n\n".join(f"Paragraph {i} of {name}: a short line of text." for i in range(1, 30))
        + f"\n\n{last}"
    )
    return [text[i : i + 10] for i in range(0, len(text), 10)]


def shown_ref(window: MainWindow) -> str | None:
    with window.wb.viewing(window.view):
        return window.wb.ref


def type_prompt(qtbot: QtBot, window: MainWindow, text: str) -> None:
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.composer.input, timeout=30_000)
    target = window.composer.input
    QTest.keyClicks(target, text)
    QTest.keyClick(target, Qt.Key.Key_Return)


def row_index(window: MainWindow, ref: str, column: int) -> QModelIndex:
    index = window.sidebar.model().index_for_path(ref)
    return index.sibling(index.row(), column)


def row_state(window: MainWindow, ref: str) -> str:
    return str(row_index(window, ref, 1).data(Qt.ItemDataRole.DisplayRole) or "")


def last_message(ref: str) -> dict[str, object]:
    for line in reversed(Path(ref).read_text().splitlines()):
        entry = json.loads(line)
        if entry.get("type") == "message":
            message: dict[str, object] = entry["message"]
            return message
    raise AssertionError(f"no message in {ref}")


def ends_with(ref: str, words: str) -> bool:
    message = last_message(ref)
    content = message.get("content")
    text = "".join(str(p.get("text", "")) for p in content) if isinstance(content, list) else ""
    return message.get("stopReason") == "stop" and words in text


def says_running(qtbot: QtBot, window: MainWindow, ref: str) -> None:
    qtbot.waitUntil(lambda: "running" in row_state(window, ref), timeout=30_000)


def streams(window: MainWindow, words: str) -> bool:
    chat = window.chat.model
    return chat.rowCount() >= 2 and words in str(chat.row_at(chat.last_row()).item.message)


def new_window_opened(qtbot: QtBot, windows: list[MainWindow], count: int) -> MainWindow:
    qtbot.waitUntil(lambda: len(windows) == count, timeout=30_000)
    window = windows[-1]
    qtbot.waitUntil(window.isActiveWindow, timeout=30_000)
    qtbot.waitUntil(lambda: shown_ref(window) is not None, timeout=30_000)
    settle(qtbot, window)
    return window


def test_sessions_in_windows_of_their_own(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    first = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    wb = first.wb
    windows: list[MainWindow] = first.windows.windows  # type: ignore[assignment]
    asked: list[tuple[int, int]] = []

    def asking(view: int) -> str:
        asked.append((view, wb.runs_active))  # the question names how many runs
        return "stop"

    first.ask_stop_or_wait = lambda: asking(0)  # type: ignore[method-assign]
    QTest.keyClick(first, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: shown_ref(first) is not None, timeout=30_000)
    a = shown_ref(first)
    assert a is not None

    # A: a long reply streams in the first window.
    provider.script_for(
        "Explain alpha", Reply(text=long_reply("alpha", LAST_SENTENCE), delay_s=0.1)
    )
    type_prompt(qtbot, first, "Explain alpha")
    qtbot.waitUntil(lambda: streams(first, "Paragraph 1 of alpha"), timeout=60_000)

    # Ctrl+Shift+N: a second window, a new session, the cursor in its message box.
    modifiers = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    QTest.keyClick(first, Qt.Key.Key_N, modifiers)
    second = new_window_opened(qtbot, windows, 2)
    b = shown_ref(second)
    assert b is not None and b != a and shown_ref(first) == a
    assert QApplication.focusWidget() is second.composer.input
    assert second.pos() != first.pos()  # it cascades

    # B's prompt is answered in the second window while A still streams in the first.
    provider.script_for("Bravo question", Reply(text="Bravo's whole answer."))
    type_prompt(qtbot, second, "Bravo question")
    qtbot.waitUntil(lambda: streams(second, "Bravo's whole answer."), timeout=60_000)
    settle(qtbot, second)
    assert "Bravo's whole answer." in painted_text(painted(second, second.chat.model.last_row()))
    assert not ends_with(a, LAST_SENTENCE)  # A still streams ...
    settle(qtbot, first)
    qtbot.waitUntil(lambda: streams(first, "Paragraph 5 of alpha"), timeout=60_000)
    first.chat.view.viewport().repaint()
    assert "alpha" in painted_text(painted(first, first.chat.model.last_row()))
    assert "alpha" not in str(second.chat.model.row_at(1).item.message)  # ... drawn there only

    # Both sidebars list both sessions, with A running.
    for window in (first, second):
        says_running(qtbot, window, a)
        assert row_index(window, b, 0).isValid()
        assert window.sidebar.model().current() == shown_ref(window)

    # Clicking A's row in the second window brings the first forward (never shown twice).
    view = second.sidebar.view
    QTest.mouseClick(
        view.viewport(),
        Qt.MouseButton.LeftButton,
        pos=view.visualRect(row_index(second, a, 0)).center(),
    )
    qtbot.waitUntil(first.isActiveWindow, timeout=30_000)
    assert shown_ref(second) == b and shown_ref(first) == a and len(windows) == 2

    # "Open in new window" on B's row in the first window: B is shown there already,
    # so the second window comes forward; on the row of a closed session it opens one.
    menu = first.sidebar.context_menu_for(b)
    assert menu is not None
    action = next(x for x in menu.actions() if x.objectName() == "openInWindowSession")
    action.trigger()
    qtbot.waitUntil(second.isActiveWindow, timeout=30_000)
    assert len(windows) == 2
    # A third window for a new session C, answered; then closed: C is released.
    QTest.keyClick(second, Qt.Key.Key_N, modifiers)
    third = new_window_opened(qtbot, windows, 3)
    c = shown_ref(third)
    assert c is not None
    provider.script_for("Charlie question", Reply(text="Charlie's answer."))
    type_prompt(qtbot, third, "Charlie question")
    qtbot.waitUntil(lambda: ends_with(c, "Charlie's answer."), timeout=60_000)
    # Back in the second window, the third shows C: "Open in new window" on a row of a
    # session no window shows opens it in a window of its own.
    third.close()
    qtbot.waitUntil(lambda: len(windows) == 2 and c not in wb.open_sessions, timeout=30_000)
    second.activateWindow()
    qtbot.waitUntil(second.isActiveWindow, timeout=30_000)
    menu = second.sidebar.context_menu_for(c)
    assert menu is not None
    next(x for x in menu.actions() if x.objectName() == "openInWindowSession").trigger()
    fourth = new_window_opened(qtbot, windows, 3)
    qtbot.waitUntil(lambda: fourth.chat.model.rowCount() >= 2, timeout=30_000)
    assert shown_ref(fourth) == c and "Charlie's answer." in str(
        fourth.chat.model.row_at(fourth.chat.model.last_row()).item.message
    )

    # The fourth window's run streams; closing the window keeps it going.
    last_d = "That is the end of charlie's second reply."
    provider.script_for("Charlie again", Reply(text=long_reply("charlie", last_d), delay_s=0.05))
    type_prompt(qtbot, fourth, "Charlie again")
    qtbot.waitUntil(lambda: streams(fourth, "Paragraph 1 of charlie"), timeout=60_000)
    fourth.close()
    qtbot.waitUntil(lambda: len(windows) == 2, timeout=30_000)
    opened_c = wb.find_open(c)
    assert opened_c is not None and opened_c.running
    for window in (first, second):
        says_running(qtbot, window, c)
    qtbot.waitUntil(lambda: ends_with(c, last_d), timeout=60_000)  # the whole reply

    # Two runs active (A, and B's new one): quitting asks once, for both.
    provider.script_for("Bravo again", Reply(text=long_reply("bravo", "end of bravo"), delay_s=0.1))
    second.activateWindow()
    qtbot.waitUntil(second.isActiveWindow, timeout=30_000)
    second.composer.input.setFocus()
    type_prompt(qtbot, second, "Bravo again")
    qtbot.waitUntil(lambda: streams(second, "Paragraph 1 of bravo"), timeout=60_000)
    if ends_with(a, LAST_SENTENCE):  # (a very slow machine: A ended; start it again)
        provider.script_for("Alpha again", Reply(text=long_reply("alpha", "x"), delay_s=0.1))
        first.activateWindow()
        type_prompt(qtbot, first, "Alpha again")
    qtbot.waitUntil(lambda: wb.runs_active == 2, timeout=60_000)
    second.ask_stop_or_wait = lambda: asking(second.view)  # type: ignore[method-assign]
    QTest.keyClick(second, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: first._closed_ok and second._closed_ok, timeout=60_000)
    assert asked == [(second.view, 2)]  # one question for both runs, in the window used
    assert not first.isVisible() and first.windows.all_closed and windows == []
    for ref in (a, b):
        assert last_message(ref)["stopReason"] in ("aborted", "stop")
    run(qtbot, first.windows.closed())
    run(qtbot, wb.aclose())
    # The windows opened here are gone with their widgets (each was deleted on close).
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    left = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    assert left == [first]


def test_the_session_menu_moves_the_session_shown_to_a_window_of_its_own(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    first = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    windows: list[MainWindow] = first.windows.windows  # type: ignore[assignment]
    QTest.keyClick(first, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: shown_ref(first) is not None, timeout=30_000)
    a = shown_ref(first)
    assert a is not None
    provider.script_for("Delta question", Reply(text="Delta's answer."))
    type_prompt(qtbot, first, "Delta question")
    qtbot.waitUntil(lambda: ends_with(a, "Delta's answer."), timeout=60_000)
    first.actions_by_name["openInWindowAction"].trigger()  # Session -> Open in new window
    second = new_window_opened(qtbot, windows, 2)
    qtbot.waitUntil(lambda: second.chat.model.rowCount() >= 2, timeout=30_000)
    settle(qtbot, second)
    assert shown_ref(second) == a and shown_ref(first) is None  # moved, not shown twice
    assert "Delta's answer." in painted_text(painted(second, second.chat.model.last_row()))
    qtbot.waitUntil(lambda: first.center.currentWidget() is first.start_page, timeout=30_000)
    assert QApplication.focusWidget() is second.composer.input
    close(qtbot, first)
