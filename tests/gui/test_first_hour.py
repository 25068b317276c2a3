"""A new user's first hour (issue 25, FIRST_HOUR.md): every defect found in a real window,
each driven here through the real `MainWindow` with QTest keys and clicks, the real
dialogs answered as a person would (never a replaced entry point: that hid M1)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, QObject, QPoint, QPointF, QRect, Qt, QTimer, QUrl, Slot
from PySide6.QtGui import (
    QAction,
    QColor,
    QContextMenuEvent,
    QDesktopServices,
    QFontMetrics,
    QGuiApplication,
    QImage,
    QPalette,
    QWheelEvent,
)
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFileDialog,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)
from pytestqt.qtbot import QtBot

from desktop_agent.config import ProviderSettings, Settings, load_settings
from desktop_agent.gui import MainWindow
from desktop_agent.gui._settings_dialog import SettingsDialog
from desktop_agent.gui.chat._builder import MARGIN_X, PAD
from desktop_agent.gui.chat._parts import BoxPart, DocPart
from desktop_agent.gui.map import MapRole
from desktop_agent.gui.sidebar._model import SidebarRole
from desktop_agent.session import Session
from tests.gui.test_map_flows import open_three, row_of
from tests.helpers.provider_server import (
    HttpError,
    ProviderServer,
    Reply,
    ToolCallSpec,
    tool_call,
)
from tests.helpers.window import (
    active_dialog,
    ask,
    chat_text,
    click_button,
    close,
    find_index,
    idle,
    new_window,
    open_window,
    painted,
    painted_text,
    run,
    session_window,
    settle,
    type_and_send,
    window_in,
)
from tests.helpers.workbench import answer, make_workbench, seed, user


@contextmanager
def answering_dialogs(
    answer: Callable[[QWidget], None] | None = None,
) -> Iterator[list[str]]:
    """Answer every modal dialog that opens (``answer`` if given, else Cancel/close), as a
    person would; yields the titles of the dialogs seen."""
    seen: list[str] = []

    def poll() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None or not dialog.isVisible():
            return
        seen.append(dialog.windowTitle())
        if answer is not None:
            answer(dialog)
        elif isinstance(dialog, QDialog):
            dialog.reject()
        else:
            dialog.close()

    timer = QTimer()
    timer.setInterval(30)
    timer.timeout.connect(poll)
    timer.start()
    try:
        yield seen
    finally:
        timer.stop()


def error_boxes(window: MainWindow) -> list[str]:
    """The texts of the error boxes the window opened (its "Something went wrong")."""
    return [
        f"{d.windowTitle()}: {d.text()}"
        for d in window.dialogs._open
        if isinstance(d, QMessageBox) and d.icon() == QMessageBox.Icon.Warning
    ]


def test_m1_f2_in_the_map_asks_for_a_label_and_the_node_shows_it(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window, ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    pane = window.map_pane
    session = window.wb.session
    assert session is not None

    def type_label(dialog: QWidget) -> None:
        assert isinstance(dialog, QInputDialog)
        dialog.setTextValue("the idea")
        dialog.accept()

    pane.view.setFocus(Qt.FocusReason.OtherFocusReason)
    pane.view.select_row(row_of(window, ids["q2"]))
    with answering_dialogs(type_label) as seen:
        QTest.keyClick(pane.view, Qt.Key.Key_F2)
        qtbot.waitUntil(lambda: session.label_of(ids["q2"]) == "the idea")
    assert seen == ["Label"]
    idle(qtbot, window)
    assert pane.bmap.label(row_of(window, ids["q2"])) == "the idea"
    # the context menu's "Set label…" asks the same way
    menu = pane.context_menu_for(ids["q1"])
    assert menu is not None
    set_label = next(a for a in menu.actions() if a.objectName() == "setLabel")
    with answering_dialogs(type_label):
        set_label.trigger()
        qtbot.waitUntil(lambda: session.label_of(ids["q1"]) == "the idea")
    assert error_boxes(window) == []
    close(qtbot, window)


def test_m2_changing_the_map_filter_filters_quietly(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window, _ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    combo = window.map_pane.filter
    combo.setFocus(Qt.FocusReason.TabFocusReason)
    names = []
    for _ in range(combo.count() - 1):
        QTest.keyClick(combo, Qt.Key.Key_Down)
        idle(qtbot, window)
        names.append(window.map_pane.filter_name())
    assert names == ["user", "labeled", "all"]
    assert window.wb.state.map_filter == "all"
    assert error_boxes(window) == []
    close(qtbot, window)


def test_every_action_and_menu_entry_runs_once_without_an_error(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """Would have caught M1 and M2: each QAction of the window, each entry of its menus and
    of the map's and the list's context menus, triggered once with its dialogs cancelled."""
    window, ids, ref = open_three(qtbot, tmp_path, provider, workspace)
    provider.script(*[Reply(text="another answer")] * 4)
    actions: list[QAction] = []
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        assert isinstance(menu, QMenu)
        actions.extend(menu.actions())
    actions.extend(window.actions_by_name.values())
    for context in (
        window.map_pane.context_menu_for(ids["q2"]),
        window.sidebar.context_menu_for(ref),
    ):
        assert context is not None
        for action in context.actions():
            sub = action.menu()
            actions.extend(sub.actions() if isinstance(sub, QMenu) else [action])
    last = {"trashAction", "deleteSession", "quitAction"}  # they end the session or the window
    skip = {"revealSession"}  # it opens the system's file manager
    ordered = [a for a in actions if a.objectName() not in last] + [
        a for a in actions if a.objectName() in last - {"quitAction"}
    ]
    triggered: list[str] = []
    with answering_dialogs() as seen:
        for action in ordered:
            name = action.objectName() or action.text()
            if action.isSeparator() or name in triggered or name in skip:
                continue
            if not action.isEnabled():
                continue  # (it says why in its tip; disabled entries cannot be triggered)
            triggered.append(name)
            action.trigger()
            idle(qtbot, window)
            assert error_boxes(window) == [], name
    assert len(triggered) >= 30, triggered
    assert {"mapLabelAction", "setLabel", "settingsAction", "renameSession"} <= set(triggered)
    assert {"Label", "Settings", "Rename session"} <= set(seen), seen
    close(qtbot, window)


def first_run_window(qtbot: QtBot, tmp_path: Path, provider: ProviderServer) -> MainWindow:
    """A first launch: no key, no server, only an OpenAI model nobody can use yet."""
    data = tmp_path / "data"
    remote = provider.model("openai-responses", base_url="https://api.openai.test/v1")
    settings = Settings(default_model=remote.key, discover_local_servers=False)
    wb = make_workbench(data, remote, settings=settings)
    return open_window(qtbot, data, remote, workbench=wb, restore=False)


def open_settings(qtbot: QtBot, window: MainWindow) -> SettingsDialog:
    QTest.keyClick(window, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: any(isinstance(d, SettingsDialog) for d in window.dialogs._open))
    dialog = next(d for d in window.dialogs._open if isinstance(d, SettingsDialog))
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def test_m3_a_server_typed_without_http_is_completed_and_bad_ones_are_said_inline(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = first_run_window(qtbot, tmp_path, provider)
    run(qtbot, window.new_session(str(workspace)))
    dialog = open_settings(qtbot, window)
    dialog.theme.setFocus(Qt.FocusReason.TabFocusReason)
    dark = dialog.theme.findData("dark")
    while dialog.theme.currentIndex() != dark:
        QTest.keyClick(dialog.theme, Qt.Key.Key_Down)  # another edit, to be kept
    field = dialog.local_url
    field.setFocus(Qt.FocusReason.TabFocusReason)
    QTest.keyClicks(field, "localhost:99999")
    QTest.keyClick(field, Qt.Key.Key_Return)
    settle(qtbot, window)
    assert dialog.isVisible(), "the dialog stays open with the other edits"
    problem = dialog.findChild(QLabel, "localServerUrlProblem")
    assert problem is not None and problem.isVisible()
    assert "port" in problem.text() and "Error" not in problem.text()
    assert dialog.theme.currentData() == "dark"
    assert error_boxes(window) == [] and window.wb.settings.providers == {}
    field.selectAll()
    QTest.keyClicks(field, f"127.0.0.1:{provider.port}/v1")  # as LM Studio shows it
    assert not problem.isVisible()  # the message goes as soon as the text is right
    QTest.keyClick(field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    qtbot.waitUntil(lambda: window.wb.model_key() == "local/local-model", timeout=10_000)
    idle(qtbot, window)
    local = window.wb.settings.providers["local"]
    assert local.base_url == f"{provider.url}/v1"
    assert window.wb.settings.theme == "dark"
    assert window.composer.model_picker.currentText() == "local-model (local)"
    assert error_boxes(window) == []
    close(qtbot, window)


def test_l2_a_server_url_without_http_in_settings_json_is_used(tmp_path: Path) -> None:
    from desktop_agent.config import server_url_problem

    path = tmp_path / "settings.json"
    path.write_text('{"providers": {"local": {"base_url": "localhost:1234"}}}')
    settings = load_settings(path)
    assert settings.providers["local"].base_url == "http://localhost:1234"
    assert server_url_problem("ftp://host") is not None
    assert server_url_problem("http://") is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_m4_a_server_started_after_the_app_is_listed_by_itself_and_refresh_lists_again(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    workspace: Path,
) -> None:
    port = free_port()
    data = tmp_path / "data"
    settings = Settings(
        providers={"local": ProviderSettings(base_url=f"127.0.0.1:{port}/v1")},
        default_model="local/local-model",
        discover_local_servers=False,
    )
    wb = make_workbench(data, [], settings=settings)
    wb.models.relist_interval_s = 0.2
    window = open_window(qtbot, data, [], workbench=wb, restore=False)
    run(qtbot, window.new_session(str(workspace)))
    settle(qtbot, window)
    assert window.wb.model_key() is None
    qtbot.waitUntil(lambda: any("127.0.0.1" in t for t in window.notices.texts()))
    # the notice says the set-up server did not answer, not "add a local server"
    qtbot.waitUntil(lambda: any("cannot be used now" in t for t in window.notices.texts()))
    texts = window.notices.texts()
    assert not any("No model is available" in t for t in texts), texts
    assert any(
        b.text() == "Try again" and b.isVisible() for b in window.notices.findChildren(QPushButton)
    )
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "hello")
    idle(qtbot, window)
    assert window.status.currentMessage().startswith("Not sent: The default model local/")
    with ProviderServer(port=port) as server:  # LM Studio started after the app
        qtbot.waitUntil(lambda: window.wb.model_key() == "local/local-model", timeout=10_000)
        idle(qtbot, window)
        picker = window.composer.model_picker
        assert picker.currentText() == "local-model (local)"
        assert not any("127.0.0.1" in t for t in window.notices.texts())  # its cause is gone
        server.models.append("second-model")  # a model loaded later: File → Refresh models
        action = window.actions_by_name["refreshModelsAction"]
        assert action in window.findChild(QMenu, "fileMenu").actions()  # type: ignore[union-attr]
        action.trigger()
        qtbot.waitUntil(lambda: picker.findText("second-model (local)") >= 0, timeout=10_000)
        idle(qtbot, window)
        close(qtbot, window)


def test_m5_ctrl_r_on_a_good_answer_makes_a_new_version_and_retry_stays_for_failures(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(
        qtbot,
        window,
        provider,
        "a question",
        Reply(text="answer one"),
        Reply(text="answer two"),
        Reply(text="three"),
    )
    assert "answer one" in painted_text(painted(window, 1))
    assert "Regenerate" in painted_text(painted(window, 1))  # on hover, as Copy
    sent = len(provider.requests)
    QTest.keyClick(window.composer.input, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(provider.requests) > sent, timeout=10_000)
    idle(qtbot, window)
    assert window.chat.item_count() == 2  # replaced on screen, not appended under it
    card = painted_text(painted(window, 1))
    assert "answer two" in card and "2/2" in card and "answer one" not in card
    body = provider.requests[-1].body
    assert body["messages"][-1]["role"] == "user"  # never ends with the old answer
    assert "answer one" not in str(body["messages"])
    click_button(qtbot, window, 1, "‹")
    qtbot.waitUntil(lambda: "answer one" in painted_text(painted(window, 1)), timeout=10_000)
    assert "1/2" in painted_text(painted(window, 1))
    # the card's own Regenerate makes a third version of that answer
    click_button(qtbot, window, 1, "Regenerate")
    qtbot.waitUntil(lambda: "3/3" in painted_text(painted(window, 1)), timeout=10_000)
    idle(qtbot, window)
    assert "three" in painted_text(painted(window, 1))
    # a failed request: Ctrl+R retries it (no new version of the prompt's answer)
    provider.script(*[HttpError(500, "busy")] * 4)
    window.composer.input.setFocus(Qt.FocusReason.MouseFocusReason)
    type_and_send(qtbot, window, "second question")
    idle(qtbot, window)
    last = window.chat.model.last_row()
    failed = painted_text(painted(window, last))
    assert last == 3 and "Retry" in failed and "Regenerate" not in failed
    provider.script(Reply(text="it worked"))
    QTest.keyClick(window.composer.input, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "it worked" in painted_text(painted(window, last)), timeout=10_000)
    idle(qtbot, window)
    assert window.chat.item_count() == 4
    assert "/2" not in painted_text(painted(window, last))
    close(qtbot, window)


def long_code_reply() -> str:
    """A reply taller than the view, a code block near its end."""
    paragraphs = "\n\n".join(f"Paragraph {i}: some text of the answer." for i in range(1, 45))
    return f"{paragraphs}\n\n```python\ndef sub(a, b):\n    return a - b\n```\n\nThe end."


def test_m7_clicks_in_a_long_reply_do_not_move_the_view_and_code_copy_copies(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "a long answer please", Reply(text=long_code_reply()))
    view = window.chat.view
    bar = view.verticalScrollBar()
    assert view.visualRect(window.chat.model.index(1, 0)).height() > view.viewport().height()
    bar.setValue(bar.maximum())
    settle(qtbot, window)
    before = bar.value()
    QGuiApplication.clipboard().clear()
    layout = painted(window, 1)
    assert layout is not None
    copy = next(h for h in layout.hits if h.action == "copy" and isinstance(h.arg, str))
    pos = view.visualRect(window.chat.model.index(1, 0)).topLeft() + copy.rect.center()
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    settle(qtbot, window)
    assert bar.value() == before, "the view stayed where it was"
    assert QGuiApplication.clipboard().text() == "def sub(a, b):\n    return a - b"
    # a click and a right-click in the text do not move it either, even a second later
    text_at = QPoint(view.viewport().width() // 2, view.viewport().height() // 3)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=text_at)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.RightButton, pos=text_at)
    QTest.qWait(1200)
    for menu in QApplication.topLevelWidgets():
        if isinstance(menu, QMenu) and menu.isVisible():
            menu.close()
    settle(qtbot, window)
    assert bar.value() == before
    close(qtbot, window)


REPLY = "**Bold** start. The quick brown fox jumps.\n\nA second paragraph."


def char_point(window: MainWindow, row: int, needle: str, after: bool = False) -> QPoint:
    """Where the text ``needle`` of chat row ``row`` is painted (its start, or its end),
    in viewport coordinates."""
    layout = painted(window, row)
    assert layout is not None
    for part in layout.parts:
        if isinstance(part, DocPart) and needle in part.doc.toPlainText():
            at = part.doc.toPlainText().index(needle) + (len(needle) if after else 0)
            block = part.doc.findBlock(at)
            top = part.doc.documentLayout().blockBoundingRect(block).topLeft()
            line = block.layout().lineForTextPosition(at - block.position())
            x_at = line.cursorToX(at - block.position())
            x = top.x() + float(x_at[0] if isinstance(x_at, tuple) else x_at)  # type: ignore[arg-type]
            y = top.y() + line.y() + line.height() / 2
            card = window.chat.view.visualRect(window.chat.model.index(row, 0)).topLeft()
            return card + QPoint(int(part.x + x + (-1 if after else 1)), int(part.y + y))
    raise AssertionError(f"{needle!r} is not painted in row {row}")


@pytest.mark.qt_log_ignore(  # the offscreen platform about the popup menu
    "^This plugin does not support raise\\(\\)$",
    "^This plugin does not support grabbing the keyboard$",
)
def test_m6_reply_text_is_selected_in_place_and_copied_with_ctrl_c_and_the_menu(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "say something", Reply(text=REPLY))
    view = window.chat.view
    port = view.viewport()
    clipboard = QGuiApplication.clipboard()
    # a double-click selects a word, Ctrl+C copies it, "Copied" says so
    QTest.mouseDClick(port, Qt.MouseButton.LeftButton, pos=char_point(window, 1, "brown"))
    assert view.hasFocus()
    QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == "brown"
    assert window.status.currentMessage() == "Copied"
    # a drag selects part of the line, painted with the highlight
    start, end = char_point(window, 1, "quick"), char_point(window, 1, "fox", after=True)
    QTest.mousePress(port, Qt.MouseButton.LeftButton, pos=start)
    QTest.mouseMove(port, end)
    QTest.mouseRelease(port, Qt.MouseButton.LeftButton, pos=end)
    assert window.chat.selection.ranges_for(1)
    QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == "quick brown fox"
    # nothing selected: Ctrl+C copies the whole message, never a cut preview
    QTest.keyClick(view, Qt.Key.Key_Escape)
    QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == REPLY
    # the right-click menu
    menu = window.chat.selection.menu_for(1)
    names = [a.objectName() for a in menu.actions() if a.objectName()]
    assert names == ["chatCopy", "chatCopyMarkdown", "chatSelectAll", "chatQuote"]
    next(a for a in menu.actions() if a.objectName() == "chatSelectAll").trigger()
    QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == "Bold start. The quick brown fox jumps.\nA second paragraph."
    menu = window.chat.selection.menu_for(1)
    next(a for a in menu.actions() if a.objectName() == "chatCopyMarkdown").trigger()
    assert clipboard.text() == REPLY
    QTest.mouseDClick(port, Qt.MouseButton.LeftButton, pos=char_point(window, 1, "second"))
    menu = window.chat.selection.menu_for(1)
    next(a for a in menu.actions() if a.objectName() == "chatQuote").trigger()
    assert window.composer.text() == "> second\n\n"
    assert QApplication.focusWidget() is window.composer.input
    # a right-click in the reply opens that menu
    at = char_point(window, 1, "jumps")
    QTest.mouseClick(port, Qt.MouseButton.RightButton, pos=at)  # what a right-click sends:
    QApplication.sendEvent(
        port, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at, port.mapToGlobal(at))
    )
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None)
    popup = QApplication.activePopupWidget()
    assert popup is not None and popup.objectName() == "chatContextMenu"
    popup.close()
    close(qtbot, window)


def test_m1_first_launch_says_why_it_cannot_send_and_leads_to_settings(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = first_run_window(qtbot, tmp_path, provider)
    run(qtbot, window.new_session(str(workspace)))
    settle(qtbot, window)
    picker = window.composer.model_picker
    assert picker.count() == 0 and "Settings" in picker.placeholderText()
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "hello")
    idle(qtbot, window)
    assert window.composer.text() == "hello"  # kept
    assert window.status.currentMessage().startswith("Not sent: No model is available")
    QTest.mouseClick(window.composer.send_button, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    assert window.status.currentMessage().startswith("Not sent: ")
    button = window.notices.findChild(QPushButton, "noticeSettings")
    assert button is not None and button.isVisible()
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: any(isinstance(d, SettingsDialog) for d in window.dialogs._open))
    dialog = next(d for d in window.dialogs._open if isinstance(d, SettingsDialog))
    dialog.reject()
    idle(qtbot, window)
    close(qtbot, window)


def test_m2_test_connection_lists_the_servers_models_before_saving(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = first_run_window(qtbot, tmp_path, provider)
    run(qtbot, window.new_session(str(workspace)))
    dialog = open_settings(qtbot, window)
    button = dialog.findChild(QPushButton, "testConnection")
    result = dialog.findChild(QLabel, "testConnectionResult")
    assert button is not None and result is not None and button.isEnabled()
    dead = free_port()
    dialog.local_url.setFocus(Qt.FocusReason.TabFocusReason)
    QTest.keyClicks(dialog.local_url, f"127.0.0.1:{dead}")
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "could not be reached" in result.text(), timeout=10_000)
    assert "nothing answers at that address" in result.text()  # L7: not "(ConnectError)"
    assert dialog.local_url.text() == f"http://127.0.0.1:{dead}"  # completed
    dialog.local_url.selectAll()  # https:// to a server that speaks plain HTTP
    QTest.keyClicks(dialog.local_url, f"https://127.0.0.1:{provider.port}/v1")
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "over HTTPS" in result.text(), timeout=10_000)
    assert "http://?" in result.text()
    dialog.local_url.selectAll()
    QTest.keyClicks(dialog.local_url, f"127.0.0.1:{provider.port}/v1")
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: result.text() == "Connected. It lists: local-model", timeout=10_000)
    assert dialog.default_model.currentText() == "local-model (local)"
    assert window.wb.settings.providers == {}  # nothing saved yet
    dialog.reject()
    idle(qtbot, window)
    close(qtbot, window)


def test_m5_ctrl_f_finds_text_in_the_conversation_with_highlights(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(
        qtbot,
        window,
        provider,
        "tell me about zebras",
        Reply(text="A zebra is striped.\n\nAnother Zebra runs."),
        Reply(text="ok"),
    )
    type_and_send(qtbot, window, "thanks")
    idle(qtbot, window)
    QTest.keyClick(window.composer.input, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = window.chat.finder
    assert bar.isVisible() and QApplication.focusWidget() is bar.input
    QTest.keyClicks(bar.input, "zebra")
    count = bar.findChild(QLabel, "findCount")
    assert count is not None and count.text() == "1 of 3"  # the prompt's, then the answer's
    assert window.chat._marks(0) and sum(len(m) for m in window.chat._marks(1).values()) == 2
    QTest.keyClick(bar.input, Qt.Key.Key_Return)
    assert count.text() == "2 of 3" and bar.hits[bar.current][0] == 1
    QTest.keyClick(bar.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert count.text() == "1 of 3"
    bar.input.selectAll()
    QTest.keyClicks(bar.input, "giraffe")
    assert count.text() == "No match"
    QTest.keyClick(bar.input, Qt.Key.Key_Escape)
    assert not bar.isVisible() and window.chat._marks(1) == {}
    assert "findAction" in [a.objectName() for a in window.findChild(QMenu, "viewMenu").actions()]  # type: ignore[union-attr]
    close(qtbot, window)


def test_m10_l7_error_cards_say_what_to_do_and_read_cleanly(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "hello", HttpError(401, "scripted 401"))
    card = painted_text(painted(window, window.chat.model.last_row()))
    assert "401" in card and "Check the API key in Settings." in card
    close(qtbot, window)
    # a server that is not there: one readable sentence, not "Connection error.: All …"
    dead = provider.model("anthropic-messages", base_url=f"http://127.0.0.1:{free_port()}")
    data = tmp_path / "data2"
    wb = make_workbench(data, dead)
    assert wb.harness_settings is not None
    wb.harness_settings.max_retries = 0
    window = open_window(qtbot, data, dead, workbench=wb, restore=False)
    run(qtbot, window.new_session(str(workspace)))
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "hello")
    idle(qtbot, window)
    card = painted_text(painted(window, window.chat.model.last_row()))
    assert "Network error: " in card and ".:" not in card, card
    close(qtbot, window)


def test_m18_enter_in_the_inline_edit_box_sends_like_the_message_box(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "question one", Reply(text="answer one"), Reply(text="answer two"))
    click_button(qtbot, window, 0, "Edit")
    editor = window.chat.view.findChild(QPlainTextEdit, "chatEditText")
    qtbot.waitUntil(lambda: editor is not None and editor.isVisible())
    assert editor is not None
    editor.selectAll()
    QTest.keyClicks(editor, "first line")
    QTest.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    QTest.keyClicks(editor, "second line")
    assert editor.toPlainText() == "first line\nsecond line"  # Shift+Enter: a new line
    QTest.keyClick(editor, Qt.Key.Key_Return)  # Enter sends, as in the message box
    qtbot.waitUntil(lambda: "2/2" in painted_text(painted(window, 0)), timeout=10_000)
    idle(qtbot, window)
    assert "second line" in painted_text(painted(window, 0))
    close(qtbot, window)


def test_l3_a_failed_listing_quotes_the_servers_reason(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = first_run_window(qtbot, tmp_path, provider)
    run(qtbot, window.new_session(str(workspace)))
    dialog = open_settings(qtbot, window)
    result = dialog.findChild(QLabel, "testConnectionResult")
    assert result is not None
    provider.models_error = HttpError(400, "No connected db.")
    try:
        dialog.local_url.setText(f"{provider.url}/v1")
        QTest.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "No connected db." in result.text(), timeout=10_000)
    finally:
        provider.models_error = None
    assert "listing its models failed: it answered 400" in result.text()
    dialog.reject()
    idle(qtbot, window)
    close(qtbot, window)


def test_p5_a_preview_never_hides_a_single_line() -> None:
    from desktop_agent.gui.chat._tool_text import clip_lines

    assert clip_lines("a\nb\nc", 2, 1000) == "a\nb\nc"
    assert clip_lines("a\nb\nc\nd", 2, 1000) == "a\nb\n[... 2 more lines]"


def test_m14_the_window_title_of_a_long_prompt_is_cut_near_80_characters(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    provider.script(Reply(text="ok"))
    prompt = "\n".join(f"line {i} of a long prompt about the calculator" for i in range(1, 9))
    window.composer.set_text(prompt)
    QTest.keyClick(window.composer.input, Qt.Key.Key_Return)
    idle(qtbot, window)
    title = window.windowTitle()
    assert title.startswith("line 1 of a long prompt") and title.endswith("… — Desktop Agent")
    assert len(title) <= 100 and "line 3" not in title  # the sidebar elides by its width
    close(qtbot, window)


def test_m15_long_command_output_shows_its_start_and_its_end(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    command = "seq 1 3000; echo done-marker"
    ask(
        qtbot,
        window,
        provider,
        "count",
        tool_call("bash", {"command": command}),
        Reply(text="done"),
    )
    shown = chat_text(window)
    assert "\n3000\ndone-marker" in shown  # the end, where errors are
    assert "more lines]" in shown
    # the whole output is a click away (the path was plain text)
    row = next(
        r
        for r in range(window.chat.model.rowCount())
        if any(h.action == "open" for h in window.chat.delegate.layout_for(r).hits)
    )
    button = next(h for h in window.chat.delegate.layout_for(row).hits if h.action == "open")
    assert isinstance(button.arg, str) and Path(button.arg).read_text().endswith("done-marker\n")
    view = window.chat.view
    view.scrollTo(window.chat.model.index(row, 0))
    settle(qtbot, window)
    pos = view.visualRect(window.chat.model.index(row, 0)).topLeft() + button.rect.center()
    opened = _Opened()
    QDesktopServices.setUrlHandler("file", opened, "open")  # type: ignore[arg-type]
    try:
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert opened.paths == [button.arg]
    close(qtbot, window)


def test_m6_m11_the_session_list_says_when_nothing_matches_and_an_emptied_trash_goes_back(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "a session about zebras", Reply(text="one"))
    sidebar = window.sidebar
    empty = sidebar.findChild(QLabel, "sessionListEmpty")
    assert empty is not None and not empty.isVisible()
    QTest.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(sidebar.search, "giraffes")
    qtbot.waitUntil(lambda: empty.isVisible(), timeout=5000)
    assert empty.text() == "No sessions match “giraffes”."
    sidebar.search.clear()
    qtbot.waitUntil(lambda: not empty.isVisible(), timeout=5000)
    idle(qtbot, window)
    sidebar.view.setFocus()
    QTest.keyClick(sidebar.view, Qt.Key.Key_Delete)
    idle(qtbot, window)
    QTest.mouseClick(sidebar.trash_toggle, Qt.MouseButton.LeftButton)
    trash_view = sidebar.trash_view
    trash = sidebar.trash_model()
    trash_view.setFocus()
    trash_view.setCurrentIndex(trash.index(0, 0, trash.index(0, 0)))
    QTest.keyClick(trash_view, Qt.Key.Key_Return)
    idle(qtbot, window)
    assert not sidebar.trash_toggle.isChecked(), "back to the list, where the session is"
    assert sidebar.stack.currentWidget() is sidebar.view
    assert window.wb.ref is not None
    close(qtbot, window)


def test_m20_deleting_the_open_session_opens_its_neighbour_in_the_same_project(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    other = tmp_path / "project2"
    other.mkdir()
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    provider.script(*[Reply(text="ok")] * 3)
    refs = []
    for folder, prompt in ((workspace, "first here"), (other, "over there"), (workspace, "2nd")):
        run(qtbot, window.new_session(str(folder)))
        window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
        type_and_send(qtbot, window, prompt)
        idle(qtbot, window)
        refs.append(window.wb.ref)
    assert window.wb.ref == refs[2]
    window.actions_by_name["trashAction"].trigger()  # Session → Move to trash
    idle(qtbot, window)
    assert window.wb.ref == refs[0], "the other session of this project, not the other one's"
    close(qtbot, window)


def test_m19_a_relaunch_with_workspace_opens_that_projects_session(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    other = tmp_path / "project2"
    other.mkdir()
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    provider.script(*[Reply(text="ok")] * 2)
    refs = []
    for folder, prompt in ((workspace, "in project 1"), (other, "in project 2")):
        run(qtbot, window.new_session(str(folder)))
        window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
        type_and_send(qtbot, window, prompt)
        idle(qtbot, window)
        refs.append(window.wb.ref)
    close(qtbot, window)
    # desktop-agent --workspace project1 (without --new): project 1's session, not the last
    again = open_window(
        qtbot, tmp_path / "data", provider.model("anthropic-messages"), restore=False
    )
    run(qtbot, again.restore(workspace=str(workspace)))
    idle(qtbot, again)
    assert again.wb.ref == refs[0]
    close(qtbot, again)


def test_p10_p15_pi_only_entries_are_hidden_for_our_sessions_and_help_about_says_the_version(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    from desktop_agent.utils.versions import APP_VERSION

    window, _ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    menu = window.findChild(QMenu, "sessionMenu")
    assert menu is not None
    menu.aboutToShow.emit()
    for name in ("copyIntoOursAction", "convertAction"):
        assert not window.actions_by_name[name].isVisible()
    window.actions_by_name["aboutAction"].trigger()
    about = next(d for d in window.dialogs._open if d.objectName() == "aboutDialog")
    assert isinstance(about, QMessageBox) and APP_VERSION in about.text()
    about.accept()
    idle(qtbot, window)
    close(qtbot, window)


def test_m17_ctrl_e_opens_the_edit_box_in_view(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "a long answer please", Reply(text=long_code_reply()))
    view = window.chat.view
    assert not view.visualRect(window.chat.model.index(0, 0)).intersects(view.viewport().rect())
    QTest.keyClick(window.composer.input, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    editor = view.findChild(QPlainTextEdit, "chatEditText")
    qtbot.waitUntil(lambda: editor is not None and editor.isVisible())
    assert editor is not None
    settle(qtbot, window)
    box = editor.parentWidget()
    assert box is not None
    shown = view.viewport().rect()
    assert shown.contains(box.geometry()), (box.geometry(), shown)
    assert editor.toPlainText() == "a long answer please"
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    idle(qtbot, window)
    close(qtbot, window)


def test_m8_a_message_typed_while_a_reply_streams_says_where_it_went(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    provider.script(
        Reply(text=["partial ", "answer ", "goes on"], stall_after=4, stall_s=30),
        Reply(text="after the steer"),
    )
    type_and_send(qtbot, window, "a slow answer please")
    qtbot.waitUntil(lambda: window.wb.running, timeout=10_000)
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "also mention the tests")
    qtbot.waitUntil(
        lambda: window.status.currentMessage().startswith("Sent to the agent, read before its")
    )
    assert "also mention the tests" in window.status.currentMessage()
    QTest.mouseClick(window.composer.stop_button, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    close(qtbot, window)


def test_p11_export_suggests_the_session_title_in_its_project_folder(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "Calculator: project tour?", Reply(text="ok"))
    seen: list[tuple[str, list[str], str]] = []

    def look(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        seen.append(
            (dialog.directory().absolutePath(), dialog.selectedFiles(), dialog.nameFilters()[0])
        )
        dialog.reject()

    menu = window.findChild(QMenu, "exportSessionMenu")
    assert menu is not None
    with answering_dialogs(look):
        next(a for a in menu.actions() if a.objectName() == "exportAction_markdown").trigger()
        qtbot.waitUntil(lambda: bool(seen))
    folder, files, name_filter = seen[0]
    assert folder == str(workspace.resolve()) or folder == str(workspace)
    assert files and files[0].endswith("Calculator project tour.md")
    assert name_filter == "Markdown (*.md)"
    idle(qtbot, window)
    close(qtbot, window)


HAIKU = (
    "Tall keeper of light\nwaves fold on the granite shore\nships find their way home\n\n"
    "A second paragraph.\n\n1. one\n2. two\n3. three\n\n> a quote after the list\n> goes on"
)


def test_m3_a_reply_keeps_its_line_breaks_spaces_its_paragraphs_and_marks_its_quotes(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(Reply(text=HAIKU))
    type_and_send(qtbot, window, "write a haiku")
    idle(qtbot, window)
    layout = painted(window, 1)
    assert layout is not None
    part = next(
        p for p in layout.parts if isinstance(p, DocPart) and "keeper" in p.doc.toPlainText()
    )
    doc = part.doc
    haiku = doc.findBlock(0)
    assert haiku.layout().lineCount() == 3  # "light / waves … / ships …", not one line
    assert "light\nwaves" in doc.toPlainText()
    geometry = doc.documentLayout().blockBoundingRect
    second = haiku.next()
    gap = geometry(second).top() - (geometry(haiku).top() + haiku.layout().boundingRect().height())
    line = QFontMetrics(doc.defaultFont()).height()
    assert gap >= line // 2, (gap, line)  # paragraphs apart, as in other chat apps
    quote = doc.findBlock(doc.toPlainText().index("a quote"))
    three = doc.findBlock(doc.toPlainText().index("three"))
    assert quote.textList() is None and three.textList() is not None
    quote_x = geometry(quote).left() + quote.blockFormat().leftMargin()
    item_x = (
        geometry(three).left()
        + three.blockFormat().leftMargin()
        + three.textList().format().indent() * doc.indentWidth()
    )
    assert quote_x < item_x, "the quote is not indented as the list's items"
    top = part.y + int(geometry(quote).top())
    bars = [
        p
        for p in layout.parts
        if isinstance(p, BoxPart) and p.rect.width() <= 4 and p.rect.top() <= top < p.rect.bottom()
    ]
    assert bars and bars[0].rect.right() < part.x + quote_x, "a bar left of the quote"
    close(qtbot, window)


def test_m4_l6_failed_attempts_keep_their_partial_text_and_say_failed_on_the_map(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    cut = ["This is a long answer ", "that will be cut ", "in the middle"]
    provider.script(Reply(text=cut, disconnect_after=4), *[HttpError(500, "scripted 500")] * 4)
    type_and_send(qtbot, window, "a long answer please")
    idle(qtbot, window)
    last = window.chat.model.last_row()
    card = painted_text(painted(window, last))
    assert "attempts" in card and "Retry" in card
    assert "This is a long answer" in card, card  # not lost on screen
    assert "attempt 1 wrote before it failed" in card
    model = window.map_pane.model()
    qtbot.waitUntil(lambda: "…" not in [model.text(r) for r in range(model.rowCount())])
    texts = [model.text(r) for r in range(model.rowCount())]
    assert not any("(empty reply)" in t for t in texts), texts
    assert texts == ["a long answer please", "Failed · 4 attempts"], texts  # (L6: one row)
    # an empty answer that did not fail says so, not a blank card
    provider.script(Reply(text=""))
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "say nothing")
    idle(qtbot, window)
    assert "(empty reply)" in painted_text(painted(window, window.chat.model.last_row()))
    close(qtbot, window)


def test_m7_the_thinking_picker_of_a_server_that_takes_no_level_says_so_and_sends_none(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    from desktop_agent.ai._registry import LOCAL_COMPAT

    reasoner = provider.model(
        "openai-completions", "fake-reasoner", reasoning=True, compat=LOCAL_COMPAT
    )
    window = open_window(qtbot, tmp_path / "data", reasoner)
    run(qtbot, window.new_session(str(workspace)))
    idle(qtbot, window)
    picker = window.composer.thinking_picker
    assert not picker.isEnabled() and picker.count() == 1
    assert picker.currentText() == "Thinking: set by the server"
    assert "takes no thinking level" in picker.toolTip()
    provider.script(Reply(text="hm", thinking="let me think"))
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "think hard")
    idle(qtbot, window)
    assert "reasoning_effort" not in provider.requests[-1].body
    close(qtbot, window)


def test_p12_the_model_picker_shows_its_placeholder_whole_and_elides_a_long_name(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = first_run_window(qtbot, tmp_path, provider)
    run(qtbot, window.new_session(str(workspace)))
    settle(qtbot, window)
    picker = window.composer.model_picker
    window.resize(1000, 700)  # m16's size
    idle(qtbot, window)
    picker.repaint()
    assert picker.shown_text == "No model: set one up in Settings (Ctrl+,)"
    close(qtbot, window)
    long_name = provider.model("anthropic-messages", name="Fake Reasoner with a long name (local)")
    window = open_window(qtbot, tmp_path / "data2", long_name)
    run(qtbot, window.new_session(str(workspace)))
    idle(qtbot, window)
    picker = window.composer.model_picker
    picker.repaint()
    assert picker.shown_text == picker.currentText() != ""  # whole when there is room
    window.resize(620, 700)
    idle(qtbot, window)
    picker.repaint()
    shown = picker.shown_text
    assert shown.endswith("…") and picker.currentText().startswith(shown[:-1]), shown
    close(qtbot, window)


class _Opened(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.paths.append(url.toLocalFile())


def test_m9_an_export_notice_opens_the_file_and_passes_by_itself(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(Reply(text="ok"))
    type_and_send(qtbot, window, "something to export")
    idle(qtbot, window)
    dest = tmp_path / "out.md"

    async def ask_save_path(*_args: object) -> str:
        return str(dest)  # (the save dialog itself: test_p11)

    window.dialogs.ask_save_path = ask_save_path  # type: ignore[method-assign,assignment]
    window.notices.passing_ms = 1500
    menu = window.findChild(QMenu, "exportSessionMenu")
    assert menu is not None
    next(a for a in menu.actions() if a.objectName() == "exportAction_markdown").trigger()
    qtbot.waitUntil(dest.exists, timeout=10_000)
    idle(qtbot, window)
    assert any(t.startswith("Exported to") for t in window.notices.texts())
    opened = _Opened()  # the desktop's file opener, as Qt lets an app replace it
    QDesktopServices.setUrlHandler("file", opened, "open")  # type: ignore[arg-type]
    try:
        for name in ("noticeOpen", "noticeShowFolder"):
            button = window.notices.findChild(QPushButton, name)
            assert button is not None and button.isVisible(), name
            QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert opened.paths == [str(dest), str(tmp_path)]
    # a confirmation goes by itself (a problem's notice stays until its cause goes)
    qtbot.waitUntil(lambda: not window.notices.texts(), timeout=5000)
    idle(qtbot, window)
    close(qtbot, window)


def test_m13_a_branch_summary_lists_only_the_files_written_apart_from_its_text(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    model = provider.model("anthropic-messages")
    settings = Settings(
        default_model=model.key, approval={"write": "allow"}, discover_local_servers=False
    )
    data = tmp_path / "data"
    (workspace / "notes.txt").write_text("a file, not a folder")
    wb = make_workbench(data, model, settings=settings)
    window = open_window(qtbot, data, model, workbench=wb, restore=False)
    run(qtbot, window.new_session(str(workspace)))
    provider.script(
        Reply(
            tool_calls=[
                ToolCallSpec("call_1", "write", {"path": "src/calc.py", "content": "x = 1\n"}),
                ToolCallSpec("call_2", "write", {"path": "notes.txt/mul.py", "content": "y\n"}),
            ]
        ),
        Reply(text="Wrote the calculator and counted to 3000."),
        Reply(text="The branch wrote the calculator and counted to 3000."),
    )
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "write the files")
    idle(qtbot, window)
    assert (workspace / "src" / "calc.py").exists()
    first = window.map_pane.bmap.rows[0].entry_id  # the prompt
    menu = window.map_pane.context_menu_for(first)
    assert menu is not None
    next(a for a in menu.actions() if a.objectName() == "goHereAndSummarize").trigger()
    qtbot.waitUntil(
        lambda: "Branch summary" in painted_text(painted(window, window.chat.model.last_row())),
        timeout=10_000,
    )
    idle(qtbot, window)
    last = window.chat.model.last_row()
    layout = painted(window, last)
    assert layout is not None
    toggle = next(h for h in layout.hits if h.action == "toggle")
    view = window.chat.view
    top = view.visualRect(window.chat.model.index(last, 0)).topLeft()
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=top + toggle.rect.center())
    qtbot.waitUntil(lambda: "Files changed:" in painted_text(painted(window, last)))
    card = painted_text(painted(window, last))
    assert "counted to 3000.\n" in card and "3000.src" not in card, card
    assert "src/calc.py" in card and "mul.py" not in card, card  # its write failed
    close(qtbot, window)


def test_p2_map_nodes_show_a_replys_text_without_its_markdown(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(
        Reply(text="## Project overview\n\nThis is a **tiny calculator**: `README.md`.")
    )
    type_and_send(qtbot, window, "tour the project")
    idle(qtbot, window)
    model = window.map_pane.model()
    qtbot.waitUntil(lambda: "…" not in [model.text(r) for r in range(model.rowCount())])
    texts = [model.text(r) for r in range(model.rowCount())]
    assert "Project overview This is a tiny calculator: README.md." in texts, texts
    # A reply stopped halfway is previewed without its markdown too (seen in a real
    # window: "Stopped: # A long answer …").
    provider.script(
        Reply(text=["# A long ", "**answer** ", "never ends"], stall_after=4, stall_s=30)
    )
    type_and_send(qtbot, window, "a long one")
    chat = window.chat.model
    qtbot.waitUntil(lambda: chat.rowCount() == 4 and "A long" in str(chat.row_at(3).item.message))
    QTest.mouseClick(window.composer.stop_button, Qt.MouseButton.LeftButton)
    idle(qtbot, window)

    def shown() -> list[str]:
        return [model.text(r) for r in range(model.rowCount())]

    qtbot.waitUntil(lambda: any(t.startswith("Stopped: A long") for t in shown()))
    assert not any("#" in t or "**" in t for t in shown()), shown()
    close(qtbot, window)


def test_p6_a_tool_card_with_its_output_shown_has_no_closed_arrow_and_says_details(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(
        tool_call("bash", {"command": "echo visible-output"}),
        Reply(text="done"),
    )
    type_and_send(qtbot, window, "run it")
    idle(qtbot, window)
    row = next(
        r
        for r in range(window.chat.item_count())
        if "visible-output" in painted_text(painted(window, r)).replace("$ echo", "")
    )
    card = painted_text(painted(window, row))
    assert "▸" not in card and "Details ·\ndone" in card, card
    layout = painted(window, row)
    assert layout is not None
    toggle = next(h for h in layout.hits if h.action == "toggle")
    view = window.chat.view
    top = view.visualRect(window.chat.model.index(row, 0)).topLeft()
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=top + toggle.rect.center())
    qtbot.waitUntil(lambda: "Hide details ·\ndone" in painted_text(painted(window, row)))
    assert '"command": "echo visible-output"' in painted_text(painted(window, row))
    close(qtbot, window)


def test_p19_a_click_on_empty_space_in_the_list_keeps_the_window_title(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(Reply(text="ok"))
    type_and_send(qtbot, window, "Calculator tour")
    idle(qtbot, window)
    assert window.windowTitle() == "Calculator tour — Desktop Agent"
    view = window.sidebar.view
    empty = QPoint(view.viewport().width() // 2, view.viewport().height() - 5)
    assert not view.indexAt(empty).isValid()
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=empty)
    idle(qtbot, window)
    assert window.windowTitle() == "Calculator tour — Desktop Agent"
    assert window.wb.ref is not None
    close(qtbot, window)


def test_p1_the_key_fields_placeholders_fit_and_say_where_a_key_is_kept_in_their_tip(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    import keyring.backends.fail

    data = tmp_path / "data"
    remote = provider.model("openai-responses", base_url="https://api.openai.test/v1")
    settings = Settings(default_model=remote.key, discover_local_servers=False)
    no_keychain = keyring.backends.fail.Keyring()  # type: ignore[no-untyped-call]
    wb = make_workbench(data, remote, settings=settings, keyring=no_keychain)  # type: ignore[arg-type]
    window = open_window(qtbot, data, remote, workbench=wb, restore=False)
    run(qtbot, window.new_session(str(workspace)))
    dialog = open_settings(qtbot, window)
    assert "no system keychain" in dialog.key_fields["openai"].toolTip()
    assert "no system keychain" in dialog.database_password.toolTip()
    for field in [*dialog.key_fields.values(), dialog.database_password]:
        text = field.placeholderText()
        assert text.count("(") <= 1, text  # never "(kept … (no system keychain…"
        room = field.width() - 12
        assert field.fontMetrics().horizontalAdvance(text) <= room, (text, room)
        assert " typed here is " in field.toolTip()
    dialog.reject()
    idle(qtbot, window)
    close(qtbot, window)


def test_m12_a_click_on_a_version_arrow_keeps_the_card_under_the_pointer(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(
        Reply(text=long_code_reply()), Reply(text=long_code_reply()), Reply(text="short")
    )
    type_and_send(qtbot, window, "question one")
    idle(qtbot, window)
    type_and_send(qtbot, window, "question two")
    idle(qtbot, window)
    first = window.chat.model.row_at(0).item.entry_id
    assert first is not None
    window.chat.edit_resend_requested.emit(first, "question one, again")  # (m18 clicks Edit)
    qtbot.waitUntil(lambda: "2/2" in painted_text(painted(window, 0)), timeout=10_000)
    idle(qtbot, window)
    view = window.chat.view
    top = view.visualRect(window.chat.model.index(0, 0)).top()
    click_button(qtbot, window, 0, "‹")  # back to version 1 and its long answers
    qtbot.waitUntil(lambda: "1/2" in painted_text(painted(window, 0)), timeout=10_000)
    idle(qtbot, window)
    assert window.chat.item_count() == 4
    assert view.visualRect(window.chat.model.index(0, 0)).top() == top, "stayed in place"
    click_button(qtbot, window, 0, "›")  # and the arrows are still there to go forward
    qtbot.waitUntil(lambda: "2/2" in painted_text(painted(window, 0)), timeout=10_000)
    idle(qtbot, window)
    close(qtbot, window)


def test_p16_a_new_session_names_its_folder_and_how_to_start(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    settle(qtbot, window)
    shown = window.chat.view.painted_empty
    assert str(workspace) in shown and "Enter sends" in shown, shown
    provider.script(Reply(text="ok"))
    type_and_send(qtbot, window, "hello")
    idle(qtbot, window)
    assert window.chat.view.painted_empty == ""  # the cards now
    close(qtbot, window)


def test_m6_shift_and_the_arrows_extend_a_selection_in_a_reply(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(Reply(text=REPLY))
    type_and_send(qtbot, window, "say something")
    idle(qtbot, window)
    view = window.chat.view
    clipboard = QGuiApplication.clipboard()
    QTest.mouseDClick(
        view.viewport(), Qt.MouseButton.LeftButton, pos=char_point(window, 1, "quick")
    )
    shift = Qt.KeyboardModifier.ShiftModifier
    for _ in range(6):
        QTest.keyClick(view, Qt.Key.Key_Right, shift)
    QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == "quick brown"
    QTest.keyClick(view, Qt.Key.Key_Right, shift | Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(view, Qt.Key.Key_End, shift)
    QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == "quick brown fox jumps."
    QTest.keyClick(view, Qt.Key.Key_Down, shift)  # on into the next paragraph
    QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text().startswith("quick brown fox jumps.\nA second"), clipboard.text()
    assert window.chat.selection.ranges_for(1)  # painted as selected
    close(qtbot, window)


def test_p13_the_message_box_grows_with_its_text_up_to_a_limit(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    field = window.composer.input
    field.setFocus(Qt.FocusReason.OtherFocusReason)
    empty = field.height()
    for i in range(6):
        QTest.keyClicks(field, f"line {i}")
        QTest.keyClick(field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    settle(qtbot, window)
    taller = field.height()
    assert taller > empty and not field.verticalScrollBar().isVisible()  # all 7 lines shown
    for _ in range(20):
        QTest.keyClick(field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    settle(qtbot, window)
    assert taller < field.height() <= 12 * field.fontMetrics().lineSpacing() + 20
    assert field.verticalScrollBar().isVisible()  # then it scrolls
    field.clear()
    settle(qtbot, window)
    assert field.height() == empty
    close(qtbot, window)


def test_p13_the_focus_ring_follows_a_message_box_that_grows(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """Seen in a real window: the box grew upwards (its parent moved, not the box) and
    the ring stayed where the box had been."""
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    field = window.composer.input
    field.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: window.focus_ring.isVisible())
    for i in range(8):
        QTest.keyClicks(field, f"line {i}")
        QTest.keyClick(field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    settle(qtbot, window)
    where = QRect(field.mapTo(window, QPoint(0, 0)), field.size()).adjusted(-2, -2, 2, 2)
    assert window.focus_ring.geometry() == where
    close(qtbot, window)


def test_l7_an_error_sent_as_an_event_stream_reads_as_its_message(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """LiteLLM answers a failed streaming request with its error as events: the card
    showed "500 data: {…} data: [DONE]"."""
    local = provider.model("openai-completions")
    data = tmp_path / "data"
    wb = make_workbench(data, local)
    assert wb.harness_settings is not None
    wb.harness_settings.max_retries = 0
    window = open_window(qtbot, data, local, workbench=wb, restore=False)
    run(qtbot, window.new_session(str(workspace)))
    provider.script(HttpError(500, "the upstream model is overloaded", as_events=True))
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "hello")
    idle(qtbot, window)
    card = painted_text(painted(window, window.chat.model.last_row()))
    assert "500" in card and "the upstream model is overloaded" in card, card
    assert "data:" not in card and "[DONE]" not in card, card
    close(qtbot, window)


def test_m16_at_1000_by_700_the_side_panes_keep_their_width_and_the_chat_gives_way(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(Reply(text="ok"))
    type_and_send(qtbot, window, "Calculator project tour")
    idle(qtbot, window)
    before = window.sidebar.width(), window.map_pane.width()
    window.resize(1000, 700)
    idle(qtbot, window)
    assert (window.sidebar.width(), window.map_pane.width()) == before
    tabs = window.map_pane.tabs
    assert tabs.tabRect(1).width() >= tabs.fontMetrics().horizontalAdvance("Branches")
    assert window.chat.view.viewport().width() >= 400
    close(qtbot, window)


def test_l7_a_whole_json_answer_to_a_streaming_request_keeps_its_text(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    local = provider.model("openai-completions")
    data = tmp_path / "data"
    wb = make_workbench(data, local)
    assert wb.harness_settings is not None
    wb.harness_settings.max_retries = 0
    window = open_window(qtbot, data, local, workbench=wb, restore=False)
    run(qtbot, window.new_session(str(workspace)))
    provider.script(Reply(text="The answer, sent whole. " * 20, whole_json=True))
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "hello")
    idle(qtbot, window)
    card = painted_text(painted(window, window.chat.model.last_row()))
    assert "instead of streaming it" in card, card
    assert card.count("The answer, sent whole.") == 20, card  # the whole text, not cut
    assert "{'" not in card and "'choices'" not in card
    close(qtbot, window)


def test_p18_a_read_files_text_is_shown_in_its_languages_colours(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(tool_call("read", {"path": "calc.py"}), Reply(text="read it"))
    type_and_send(qtbot, window, "read calc.py")
    idle(qtbot, window)
    row = next(
        r
        for r in range(window.chat.item_count())
        if "return a + b" in painted_text(painted(window, r))
    )

    def colours() -> set[str]:
        layout = painted(window, row)
        assert layout is not None
        doc = next(
            p.doc
            for p in layout.parts
            if isinstance(p, DocPart) and "return a + b" in p.doc.toPlainText()
        )
        block, seen = doc.begin(), set()
        while block.isValid():
            for r in block.layout().formats():
                seen.add(r.format.foreground().color().name())
            block = block.next()
        return seen

    qtbot.waitUntil(lambda: len(colours()) >= 2, timeout=5000)  # "def", "return" coloured
    assert "calc.py" in painted_text(painted(window, row))  # the code block is named
    close(qtbot, window)


def test_m12_switching_branch_on_the_map_moves_no_node_and_keeps_every_colour(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window, ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    pane = window.map_pane
    view = pane.view
    session = window.wb.session
    assert session is not None
    idle(qtbot, window)

    def layout() -> list[tuple[str, int, int]]:
        return [(r.entry_id, r.lane, r.color) for r in pane.bmap.rows]

    def node_colours() -> list[str]:
        """The colour painted at the centre of every prompt's node (a filled dot)."""
        image = view.viewport().grab().toImage()
        out = []
        for r, row in enumerate(pane.bmap.rows):
            if row.kind == "user":
                rect = view.visualRect(pane.model().index(r, 0))
                x = round(view.map_delegate.lane_x(rect, row.lane))
                out.append(image.pixelColor(x, rect.center().y()).name())
        return out

    before, colours = layout(), node_colours()
    assert len(set(colours)) == 3, colours  # three branches, three colours
    for name in ("a2", "a2b", "a2c", "q2"):
        index = find_index(pane.model(), ids[name])
        assert index is not None
        point = view.visualRect(index).center()
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
        want: str = ids[name]

        def switched(want: str = want) -> bool:
            return session.leaf_id() == want

        qtbot.waitUntil(switched)
        idle(qtbot, window)
        assert layout() == before, f"the map moved when switching to {name}"
        assert node_colours() == colours, name
        under = view.indexAt(point)
        assert pane.model().data(under, MapRole.ID) == ids[name], "the node left the pointer"
        assert pane.bmap.leaf_row == under.row()
    # scrolled to the end, the last row keeps room below it (not glued to the edge)
    view.setFixedHeight(6 * view.map_delegate.row_height())
    idle(qtbot, window)
    bar = view.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(bar.maximum())
    last = view.visualRect(pane.model().index(pane.model().rowCount() - 1, 0))
    assert view.viewport().height() - last.bottom() > view.map_delegate.row_height()
    assert error_boxes(window) == []
    close(qtbot, window)


def test_l6_a_run_of_failed_attempts_is_one_row_on_the_map_and_in_the_branches_list(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    pane = window.map_pane
    model = pane.model()

    def texts() -> list[str]:
        qtbot.waitUntil(lambda: "…" not in [model.text(r) for r in range(model.rowCount())])
        return [model.text(r) for r in range(model.rowCount())]

    def branches() -> list[str]:
        pane.show_tab(1)
        qtbot.waitUntil(lambda: "…" not in pane.branches_shown())
        shown = pane.branches_shown()
        pane.show_tab(0)
        return shown

    provider.script(*[HttpError(500, "scripted 500")] * 4)
    type_and_send(qtbot, window, "first try")
    idle(qtbot, window)
    assert texts() == ["first try", "Failed · 4 attempts"]
    assert branches() == ["Failed · 4 attempts"]
    # a failure whose retry worked: one row, the reply's, that says it
    provider.script(HttpError(500, "scripted 500"), Reply(text="it worked"))
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "second try")
    idle(qtbot, window)
    assert texts()[2:] == ["second try", "it worked · after a failed attempt"]
    # one failed attempt (a 4xx is not retried) says it failed, and why
    provider.script(HttpError(400, "scripted 400"))
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "third try")
    idle(qtbot, window)
    third = texts()[4:]
    assert third[0] == "third try" and third[1].startswith("Failed · "), third
    assert "400" in third[1] and len(third) == 2, third
    # an empty answer is not a blank row
    provider.script(Reply(text=""))
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "say nothing")
    idle(qtbot, window)
    assert texts()[6:] == ["say nothing", "(empty reply)"]
    # clicking the run of attempts shows its last attempt
    bmap = pane.bmap
    run_row = 1
    assert len(bmap.attempts(run_row)) == 4
    assert model.target(run_row) == bmap.attempts(run_row)[-1]
    assert error_boxes(window) == []
    close(qtbot, window)


def test_m5_find_scrolls_to_the_hit_itself_inside_a_long_reply(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """Seen in a real X window: "1 of 1" for a paragraph far down a long reply, and the
    view stayed at the reply's top (only the card's text part was brought into view)."""
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    text = "# Heading\n\n" + "\n\n".join(f"Line {i} of the answer." for i in range(1, 81))
    ask(qtbot, window, provider, "a long one", Reply(text=text))
    view = window.chat.view
    view.verticalScrollBar().setValue(0)
    QTest.keyClick(window.composer.input, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = window.chat.finder
    for query in ("Line 77 of", "Line 3 of", "Line 60 of"):
        bar.input.selectAll()
        QTest.keyClicks(bar.input, query)
        count = bar.findChild(QLabel, "findCount")
        assert count is not None and count.text() == "1 of 1"
        qtbot.waitUntil(lambda: bar.current_rect() is not None)
        hit = bar.current_rect()
        assert hit is not None and view.viewport().rect().contains(hit), (query, hit)
    close(qtbot, window)


def highlighted(window: MainWindow, row: int) -> int:
    """How many pixels of chat card ``row`` are painted in the selection's colour."""
    view = window.chat.view
    view.viewport().repaint()
    rect = view.visualRect(window.chat.model.index(row, 0)).intersected(view.viewport().rect())
    image = view.viewport().grab(rect).toImage()
    colour = QGuiApplication.palette().color(QPalette.ColorRole.Highlight).rgb()
    return sum(
        1
        for y in range(0, image.height(), 2)
        for x in range(0, image.width(), 2)
        if image.pixel(x, y) == colour
    )


def test_m6_a_drag_from_one_reply_into_another_selects_across_the_cards(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "say something", Reply(text=REPLY))
    ask(qtbot, window, provider, "and again", Reply(text="Another answer here."))
    view = window.chat.view
    port = view.viewport()
    assert highlighted(window, 3) == 0
    start, end = char_point(window, 1, "quick"), char_point(window, 3, "answer", after=True)
    QTest.mousePress(port, Qt.MouseButton.LeftButton, pos=start)
    QTest.mouseMove(port, char_point(window, 2, "again"))
    QTest.mouseMove(port, end)
    QTest.mouseRelease(port, Qt.MouseButton.LeftButton, pos=end)
    assert highlighted(window, 1) > 0 and highlighted(window, 3) > 0  # painted selected
    QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    text = QGuiApplication.clipboard().text()
    assert text == ("quick brown fox jumps.\nA second paragraph.\n\nand again\n\nAnother answer"), (
        text
    )
    close(qtbot, window)


def test_m6_a_drag_held_above_the_chat_scrolls_it_and_extends_the_selection(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "a long answer please", Reply(text=long_code_reply()))
    view = window.chat.view
    port = view.viewport()
    bar = view.verticalScrollBar()
    bar.setValue(bar.maximum())
    settle(qtbot, window)
    before = bar.value()
    start = char_point(window, 1, "The end", after=True)
    QTest.mousePress(port, Qt.MouseButton.LeftButton, pos=start)
    QTest.mouseMove(port, QPoint(start.x(), -40))  # held above the view
    qtbot.waitUntil(lambda: bar.value() < before - 300, timeout=5000)
    QTest.mouseRelease(port, Qt.MouseButton.LeftButton, pos=QPoint(start.x(), -40))
    stopped = bar.value()
    QTest.qWait(200)
    assert bar.value() == stopped  # the release stops the scrolling
    QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    text = QGuiApplication.clipboard().text()
    assert text.endswith("return a - b\nThe end"), text
    first = int(text.split("Paragraph ")[1].split(":")[0]) if "Paragraph " in text else 99
    assert first < 40, text  # paragraphs that were above the view when the drag began
    # below the view it scrolls down again
    bar.setValue(0)
    settle(qtbot, window)
    start = char_point(window, 1, "Paragraph 1")
    QTest.mousePress(port, Qt.MouseButton.LeftButton, pos=start)
    below = QPoint(start.x(), port.height() + 40)
    QTest.mouseMove(port, below)
    qtbot.waitUntil(lambda: bar.value() > 300, timeout=5000)
    QTest.mouseRelease(port, Qt.MouseButton.LeftButton, pos=below)
    assert highlighted(window, 1) > 0
    close(qtbot, window)


def test_p13_with_both_side_panes_hidden_the_message_box_keeps_to_the_cards_column(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "say something", Reply(text=REPLY))
    window.resize(1600, 800)
    for name in ("sidebarAction", "mapAction"):
        window.actions_by_name[name].trigger()
    settle(qtbot, window)
    assert window.sidebar.isHidden() and window.map_pane.isHidden()

    def edges(widget: QWidget, x: float, width: float) -> tuple[int, int]:
        left = widget.mapTo(window, QPoint(int(x), 0)).x()
        return left, left + int(width)

    def check() -> None:
        layout = painted(window, 1)
        assert layout is not None
        doc = next(p for p in layout.parts if isinstance(p, DocPart))
        port = window.chat.view.viewport()
        card = edges(port, doc.x - PAD - MARGIN_X, doc.doc.textWidth() + 2 * (PAD + MARGIN_X))
        composer = window.composer
        box = edges(composer, 0, composer.width())
        assert port.width() > card[1] - card[0] + 200  # the cards are centred with room
        assert abs(box[0] - card[0]) <= 1 and abs(box[1] - card[1]) <= 1, (box, card)
        picker = edges(window.composer.model_picker, 0, 0)[0]
        assert picker >= card[0]

    check()
    window.resize(1200, 800)  # it follows the window
    settle(qtbot, window)
    check()
    close(qtbot, window)


def test_p15_ctrl_plus_and_minus_zoom_the_conversation_text_and_a_relaunch_keeps_it(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "say something", Reply(text=REPLY))
    view = window.chat.view
    ctrl = Qt.KeyboardModifier.ControlModifier

    def card() -> tuple[float, int]:
        """(the point size of the reply's text, its card's height), as painted."""
        settle(qtbot, window)
        layout = painted(window, 1)
        assert layout is not None
        doc = next(p for p in layout.parts if isinstance(p, DocPart))
        return doc.doc.defaultFont().pointSizeF(), layout.height

    size, height = card()
    box = window.composer.input.font().pointSizeF()
    view.setFocus(Qt.FocusReason.OtherFocusReason)
    QTest.keyClick(view, Qt.Key.Key_Equal, ctrl)
    QTest.keyClick(view, Qt.Key.Key_Plus, ctrl)
    bigger, taller = card()
    assert bigger == pytest.approx(size * 1.25, abs=0.05) and taller > height
    assert window.composer.input.font().pointSizeF() == pytest.approx(box * 1.25, abs=0.05)
    assert view.visualRect(window.chat.model.index(1, 0)).height() == taller  # re-measured
    assert window.status.currentMessage() == "Text size 125%"
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)  # from the message box too
    for _ in range(12):
        QTest.keyClick(window.composer.input, Qt.Key.Key_Minus, ctrl)
    assert card()[0] == pytest.approx(size * 0.5, abs=0.05)  # down to 50%, no further
    assert window.composer.text() == ""
    QTest.keyClick(window.composer.input, Qt.Key.Key_0, ctrl)
    assert card()[0] == pytest.approx(size)
    QTest.keyClick(view, Qt.Key.Key_Equal, ctrl)
    close(qtbot, window)
    # in the View menu and the shortcuts sheet
    from desktop_agent.gui._action_table import shortcut_rows

    sheet = dict(shortcut_rows())
    assert sheet["Ctrl+= / Ctrl++"] == "Zoom in" and sheet["Ctrl+0"] == "Actual size"
    # a relaunch shows the text at 110%
    again = open_window(
        qtbot, tmp_path / "data", provider.model("anthropic-messages"), restore=True
    )
    idle(qtbot, again)
    menu = again.findChild(QMenu, "viewMenu")
    assert menu is not None
    assert {"zoomInAction", "zoomOutAction", "zoomResetAction"} <= {
        a.objectName() for a in menu.actions()
    }
    layout = painted(again, 1)
    assert layout is not None
    doc = next(p for p in layout.parts if isinstance(p, DocPart))
    assert doc.doc.defaultFont().pointSizeF() == pytest.approx(size * 1.1, abs=0.05)
    close(qtbot, again)


def wheel(widget: QWidget, dy: int, modifiers: Qt.KeyboardModifier) -> None:
    """A wheel turn (``dy`` in eighths of a degree, 120 a click) over ``widget``'s middle, as
    the mouse or a touchpad sends it."""
    at = QPointF(widget.rect().center())
    event = QWheelEvent(
        at,
        QPointF(widget.mapToGlobal(widget.rect().center())),
        QPoint(0, 0),
        QPoint(0, dy),
        Qt.MouseButton.NoButton,
        modifiers,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def test_p15_ctrl_and_the_wheel_zoom_the_conversation_text_over_the_chat_and_the_message_box(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """As in a browser: Ctrl and a wheel click over the chat (or the message box) is one zoom
    step of both; a touchpad's small turns add up to one; without Ctrl the chat scrolls and
    the text keeps its size (the message box no longer zooms only its own font)."""
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "say something", Reply(text=REPLY))
    view, box = window.chat.view, window.composer.input
    ctrl, none = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.NoModifier

    def sizes() -> tuple[float, float]:
        settle(qtbot, window)
        layout = painted(window, 1)
        assert layout is not None
        doc = next(p for p in layout.parts if isinstance(p, DocPart))
        return doc.doc.defaultFont().pointSizeF(), box.font().pointSizeF()

    card, typed = sizes()
    wheel(view.viewport(), 120, ctrl)
    assert sizes() == pytest.approx((card * 1.1, typed * 1.1), abs=0.05)
    assert window.status.currentMessage() == "Text size 110%"
    for _ in range(4):  # a touchpad: four small turns are one click
        wheel(box.viewport(), -30, ctrl)
    assert sizes() == pytest.approx((card, typed), abs=0.05)
    wheel(box.viewport(), -240, ctrl)  # two clicks at once
    assert sizes() == pytest.approx((card * 0.8, typed * 0.8), abs=0.05)
    assert window.wb.state.chat_zoom == 80
    wheel(view.viewport(), -120, none)  # no Ctrl: nothing zooms
    wheel(box.viewport(), -120, none)
    assert sizes() == pytest.approx((card * 0.8, typed * 0.8), abs=0.05)
    close(qtbot, window)
    from desktop_agent.gui._action_table import shortcut_rows

    sheet = dict(shortcut_rows())  # said on the shortcuts sheet
    assert sheet["Ctrl+wheel (over the chat or the message)"] == "Larger / smaller text"


def test_p18_a_read_files_lines_are_numbered_from_its_offset_in_a_gutter_not_copied(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    from desktop_agent.gui.chat._gutter import LineNumbers

    source = "".join(f"x{i} = {i}\n" for i in range(1, 7))
    (workspace / "nums.py").write_text(source)
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(tool_call("read", {"path": "nums.py", "offset": 3}), Reply(text="read it"))
    type_and_send(qtbot, window, "read nums.py from line 3")
    idle(qtbot, window)
    row = next(
        r for r in range(window.chat.item_count()) if "x6 = 6" in painted_text(painted(window, r))
    )
    layout = painted(window, row)
    assert layout is not None
    gutter = next(p for p in layout.parts if isinstance(p, LineNumbers))
    doc = next(p for p in layout.parts if isinstance(p, DocPart) and p.doc is gutter.doc)
    assert (gutter.first, gutter.count) == (3, 4)  # lines 3 to 6, not the notes after them
    assert gutter.rect.right() < doc.x  # beside the text, not in it
    assert doc.doc.toPlainText() == "x3 = 3\nx4 = 4\nx5 = 5\nx6 = 6"
    # painted, in the muted colour
    view = window.chat.view
    view.viewport().repaint()
    card = view.visualRect(window.chat.model.index(row, 0)).topLeft()
    image = view.viewport().grab(gutter.rect.translated(card)).toImage()
    muted = window.chat.delegate.theme().muted.rgb()
    inked = {image.pixel(x, y) for x in range(image.width()) for y in range(image.height())} - {
        image.pixel(0, 0)
    }
    assert muted in inked, [hex(c) for c in inked]
    # copying the file's text leaves the numbers out
    window.chat.selection.select_all(row)
    view.setFocus(Qt.FocusReason.OtherFocusReason)
    QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    copied = QGuiApplication.clipboard().text()
    assert "x3 = 3\nx4 = 4\nx5 = 5\nx6 = 6" in copied and "3x3" not in copied, copied
    close(qtbot, window)


def test_p15_a_zoom_reaches_the_apps_other_windows_and_new_ones(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    from tests.gui.test_flows_windows import new_window_opened

    first = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    windows: list[MainWindow] = first.windows.windows  # type: ignore[assignment]
    size = first.composer.input.font().pointSizeF()
    ctrl = Qt.KeyboardModifier.ControlModifier
    QTest.keyClick(first, Qt.Key.Key_N, ctrl | Qt.KeyboardModifier.ShiftModifier)
    second = new_window_opened(qtbot, windows, 2)
    QTest.keyClick(second.composer.input, Qt.Key.Key_Equal, ctrl)
    for window in (first, second):
        assert window.composer.input.font().pointSizeF() == pytest.approx(size * 1.1)
        assert window.chat.view.font().pointSizeF() > first.sidebar.font().pointSizeF()
    first.activateWindow()
    qtbot.waitUntil(first.isActiveWindow)
    QTest.keyClick(first, Qt.Key.Key_N, ctrl | Qt.KeyboardModifier.ShiftModifier)
    third = new_window_opened(qtbot, windows, 3)
    assert third.composer.input.font().pointSizeF() == pytest.approx(size * 1.1)
    for window in (third, second):
        window.ask_stop_or_wait = lambda: "stop"  # type: ignore[method-assign]
        window.close()
    close(qtbot, first)


def test_p4_the_approval_dialog_says_what_in_words_colours_its_diff_and_passes_a_denial_reason(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    from desktop_agent.gui._dialogs import ApprovalDialog
    from desktop_agent.tools import ApprovalRequest

    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    window.wb.settings.approval["write"] = "ask"  # (the test settings allow it)
    run(qtbot, window.new_session())
    provider.script(
        tool_call(
            "write", {"path": "src/calc.py", "content": "def add(a, b):\n    return a + b\n"}
        ),
        Reply(text="understood, I will not write it"),
    )
    type_and_send(qtbot, window, "write the calculator")
    dialog = active_dialog(qtbot, "approvalDialog")
    head = dialog.findChild(QLabel, "approvalHeadline")
    assert head is not None and "The agent wants to write src/calc.py" in head.text()
    assert "run" not in head.text()
    title_width = QFontMetrics(QApplication.font()).horizontalAdvance(dialog.windowTitle())
    assert title_width < dialog.width() - 120
    body = dialog.findChild(QPlainTextEdit, "approvalText")
    assert body is not None
    added = body.document().findBlock(body.toPlainText().index("+def add"))
    colours = {r.format.foreground().color().name() for r in added.layout().formats()}
    assert colours and colours != {body.palette().text().color().name()}, colours
    say_why = dialog.findChild(QPushButton, "denyWithReason")
    assert say_why is not None and say_why.text().replace("&", "") == "Deny and say why…"
    QTest.mouseClick(say_why, Qt.MouseButton.LeftButton)
    reason = dialog.findChild(QLineEdit, "denyReason")
    assert reason is not None
    qtbot.waitUntil(reason.hasFocus)
    QTest.keyClicks(reason, "put it in src/ops.py instead")
    QTest.keyClick(reason, Qt.Key.Key_Return)
    idle(qtbot, window)
    assert not (workspace / "src" / "calc.py").exists()
    sent = json.dumps(provider.last_body())
    assert "They said: put it in src/ops.py instead" in sent
    assert "understood" in chat_text(window)
    # a long command: wide, scrollable, never taller than the screen
    command = ("bash", "-c", "\n".join(f"echo line {i} {'x' * 150}" for i in range(300)))
    request = ApprovalRequest("bash", "c9", "long", str(workspace), command=command)
    long = ApprovalDialog(window, request)
    qtbot.addWidget(long)
    screen = QGuiApplication.primaryScreen().availableGeometry()
    assert 640 <= long.width() <= screen.width()
    assert long.height() <= screen.height()
    long.show()
    qtbot.waitExposed(long)
    long_body = long.findChild(QPlainTextEdit, "approvalText")
    assert long_body is not None and long_body.verticalScrollBar().maximum() > 0
    long.reject()
    close(qtbot, window)


def whole_title(dialog: QWidget) -> bool:
    """Whether the title bar shows ``dialog``'s whole title as the window manager gets it
    ("<title> — Desktop Agent"), in a bold title font, beside ~120 px of icon and buttons."""
    title = dialog.windowTitle()
    shown = title if title.endswith("Desktop Agent") else f"{title} — Desktop Agent"
    font = QApplication.font()
    font.setBold(True)
    return QFontMetrics(font).horizontalAdvance(shown) < dialog.width() - 120


def test_p9_every_dialog_the_window_opens_shows_its_whole_title(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    from desktop_agent.session import RecoveryReport
    from desktop_agent.tools import ApprovalRequest
    from desktop_agent.workbench import PersistenceErrorEvent

    window, ids, ref = open_three(qtbot, tmp_path, provider, workspace)
    provider.script(*[Reply(text="another answer")] * 4)
    cut: dict[str, tuple[str, int]] = {}
    seen: set[str] = set()

    widths: dict[str, int] = {}

    def look(dialog: QWidget) -> None:
        seen.add(dialog.windowTitle())
        widths[dialog.windowTitle()] = dialog.width()
        if not whole_title(dialog):
            cut[dialog.windowTitle()] = (type(dialog).__name__, dialog.width())
        if isinstance(dialog, QDialog):
            dialog.reject()
        else:
            dialog.close()

    def look_at_the_rest() -> None:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, QDialog) and widget.isVisible():
                look(widget)

    actions: list[QAction] = []
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        assert isinstance(menu, QMenu)
        actions.extend(menu.actions())
    actions.extend(window.actions_by_name.values())
    for context in (
        window.map_pane.context_menu_for(ids["q2"]),
        window.sidebar.context_menu_for(ref),
    ):
        assert context is not None
        for action in context.actions():
            sub = action.menu()
            actions.extend(sub.actions() if isinstance(sub, QMenu) else [action])
    skip = {"revealSession", "trashAction", "deleteSession", "quitAction"}
    done: set[str] = set()
    dialogs = window.dialogs
    event = PersistenceErrorEvent(
        operation="append",
        path="/data/s.jsonl",
        os_error="[Errno 28] No space left on device",
        errno=28,
        code="storage",
        pending_count=3,
        message="Could not save the session.",
    )
    with answering_dialogs(look):
        for action in actions:
            name = action.objectName() or action.text()
            if action.isSeparator() or name in done or name in skip or not action.isEnabled():
                continue
            done.add(name)
            action.trigger()
            idle(qtbot, window)
            look_at_the_rest()
        assert dialogs.stop_or_wait(2) == "cancel"  # quitting while the agent works
        dialogs.ask_switch_branch("zebra")
        window.sidebar.purge("")  # Empty trash's question
        dialogs.error("Could not export", "The folder is read-only.")
        dialogs.persistence_error(event, lambda: None, lambda: None)
        dialogs.damaged_session("/data/s.jsonl", RecoveryReport(), lambda: None)
        request = ApprovalRequest("bash", "c1", "ls", str(workspace), command=("ls",))
        run(qtbot, dialogs.approve(request))
        task = asyncio.ensure_future(dialogs.quit_unsaved(2))
        qtbot.waitUntil(task.done)
        idle(qtbot, window)
        look_at_the_rest()
    assert cut == {}, cut
    assert widths["Rename session"] >= 420, "a name is read whole (it was 200 px)"
    assert {
        "Rename session",
        "Label",
        "Settings",
        "Still working",
        "About Desktop Agent",
        "Switch branch?",
        "Entries are not saved",
    } <= seen, seen
    assert len(seen) >= 12, seen
    close(qtbot, window)


def test_p10_one_name_for_fork_f2_acts_on_the_focused_pane_and_no_two_actions_share_a_key(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent, QKeySequence

    window, ids, ref = open_three(qtbot, tmp_path, provider, workspace)
    # one name for "copy this branch into a new session", in every menu
    session_menu = window.findChild(QMenu, "sessionMenu")
    list_menu = window.sidebar.context_menu_for(ref)
    assert session_menu is not None and list_menu is not None
    names = {
        a.text().replace("&", "")
        for menu in (session_menu, list_menu)
        for a in menu.actions()
        if a.objectName() in ("forkAction", "forkSession")
    }
    assert names == {"Fork into a new session"}, names
    # no two actions share a key where both are live: per window, per widget
    scopes: dict[tuple[int, int], dict[str, set[str]]] = {}
    panes: dict[str, list[QWidget]] = {}
    actions = {id(a): a for a in window.findChildren(QAction)}
    for widget in window.findChildren(QWidget):
        actions.update({id(a): a for a in widget.actions()})
    for action in actions.values():
        context = action.shortcutContext()
        for owner in action.associatedObjects():
            if not isinstance(owner, QWidget) or isinstance(owner, QMenu):
                continue  # (a menu's keys work while it is open only)
            widget_wide = context in (
                Qt.ShortcutContext.WidgetShortcut,
                Qt.ShortcutContext.WidgetWithChildrenShortcut,
            )
            scope = owner if widget_wide else owner.window()
            for key in action.shortcuts():
                text = key.toString()
                scopes.setdefault((int(context.value), id(scope)), {}).setdefault(text, set()).add(
                    action.objectName() or action.text()
                )
                if widget_wide:
                    panes.setdefault(text, []).append(owner)
    shared = {k: v for scope in scopes.values() for k, v in scope.items() if len(v) > 1}
    assert shared == {}, shared
    window_keys = {
        k
        for (c, _s), keys in scopes.items()
        if c != Qt.ShortcutContext.WidgetShortcut.value
        for k in keys
    }
    for text in panes.keys() & window_keys:  # a pane's own key wins over the window's there
        for pane in panes[text]:
            seq = QKeySequence(text)[0]  # type: ignore[index]
            override = QKeyEvent(QEvent.Type.ShortcutOverride, seq.key(), seq.keyboardModifiers())
            QApplication.sendEvent(pane, override)
            assert override.isAccepted(), (text, pane.objectName())
    # F2: in the map it labels, in the list it renames the selected row, elsewhere the open one
    provider.script(Reply(text="ok"))
    run(qtbot, window.new_session())
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "a second session")
    idle(qtbot, window)
    second = window.wb.ref
    assert second is not None and second != ref
    asked: list[str] = []

    def rename(dialog: QWidget) -> None:
        assert isinstance(dialog, QInputDialog)
        asked.append(f"{dialog.windowTitle()}: {dialog.textValue()}")
        dialog.reject()

    view = window.sidebar.view
    view.setFocus(Qt.FocusReason.OtherFocusReason)
    view.setCurrentIndex(window.sidebar.model().index_for_path(ref))
    first_title = window.wb.listing.title(ref)
    with answering_dialogs(rename):
        QTest.keyClick(view, Qt.Key.Key_F2)
        qtbot.waitUntil(lambda: len(asked) == 1)
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow)
        window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
        QTest.keyClick(window.composer.input, Qt.Key.Key_F2)
        qtbot.waitUntil(lambda: len(asked) == 2)
    assert asked == [
        f"Rename session: {first_title}",
        f"Rename session: {window.wb.listing.title(second)}",
    ]
    assert ids  # (the map's F2: test_m1_f2_in_the_map_asks_for_a_label_and_the_node_shows_it)
    close(qtbot, window)


def test_p3_a_selected_map_row_off_the_current_branch_reads_at_4_5_to_1_in_both_themes(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window, ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    pane = window.map_pane
    view = pane.view

    def wcag(a: QColor, b: QColor) -> float:
        def lum(c: QColor) -> float:
            ch = [
                v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
                for v in (c.redF(), c.greenF(), c.blueF())
            ]
            return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2]

        hi, lo = sorted((lum(a), lum(b)), reverse=True)
        return (hi + 0.05) / (lo + 0.05)

    try:
        for mode in ("light", "dark"):
            window.theme.set_mode(mode)
            idle(qtbot, window)
            r = row_of(window, ids["a2b"])  # an answer on another branch: muted text
            assert r != pane.bmap.leaf_row and not pane.bmap.on_path(r)
            view.select_row(r)

            def read(r: int = r) -> bool:
                return pane.model().text(r) != "…"

            qtbot.waitUntil(read)
            delegate = view.map_delegate
            view.viewport().repaint()
            # what the screen shows: the text's strongest pixel on the row's background
            rect = view.visualRect(pane.model().index(r, 0))
            image = view.viewport().grab().toImage()
            shown_bg = image.pixelColor(rect.right() - 2, rect.top() + 1)
            text_left = round(delegate.lane_x(rect, pane.bmap.width(r))) + 4
            pixels = [
                image.pixelColor(x, y)
                for x in range(text_left, text_left + 60)
                for y in range(rect.top(), rect.bottom())
            ]
            best = max(wcag(p, shown_bg) for p in pixels)
            assert best >= 4.5, f"{mode}: the text reads at {best:.2f}:1 on {shown_bg.name()}"
            painted_colours = list(delegate.selected_painted)
            parts = {part for part, _fg, _bg in painted_colours}
            assert {"text", "age"} <= parts, parts
            for part, fg, bg in painted_colours:
                assert bg.name() == shown_bg.name(), (mode, part)  # the fill really painted
                ratio = wcag(fg, shown_bg)
                assert ratio >= 4.5, f"{mode}: {part} {fg.name()} on {shown_bg.name()}: {ratio}"
            assert painted_colours[0][1] == view.palette().color(QPalette.ColorRole.HighlightedText)
    finally:
        window.theme.set_mode("system")
    close(qtbot, window)


def test_p16_a_map_filter_that_matches_nothing_says_why_and_how_to_label(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window, _ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    pane = window.map_pane
    view = pane.view
    combo = pane.filter

    def choose(name: str) -> None:
        combo.setFocus(Qt.FocusReason.TabFocusReason)
        while pane.filter_name() != name:
            QTest.keyClick(combo, Qt.Key.Key_Down)
            idle(qtbot, window)

    def ink(image: QImage) -> int:
        """Pixels that are not the background (the text painted)."""
        base = image.pixelColor(4, image.height() - 4).name()
        return sum(
            image.pixelColor(x, y).name() != base
            for x in range(4, image.width() - 4, 2)
            for y in range(4, min(image.height() - 4, 120), 2)
        )

    choose("labeled")
    assert pane.model().rowCount() == 0
    image = view.viewport().grab().toImage()
    assert ink(image) > 20, "a blank map"
    said = view.painted_empty
    assert said.startswith("No labelled entries.") and "press F2" in said, said
    assert "Set label…" in said
    combo.setFocus(Qt.FocusReason.TabFocusReason)
    QTest.keyClick(combo, Qt.Key.Key_Up)  # back to Prompts: rows, no text
    idle(qtbot, window)
    view.grab()
    assert pane.model().rowCount() > 0 and view.painted_empty == ""
    close(qtbot, window)
    # a session with no prompt yet: "Prompts" says so
    fresh = new_window(qtbot, tmp_path / "fresh", provider, "jsonl", workspace)
    run(qtbot, fresh.new_session())
    idle(qtbot, fresh)
    fresh.map_pane.filter.setFocus(Qt.FocusReason.TabFocusReason)
    QTest.keyClick(fresh.map_pane.filter, Qt.Key.Key_Down)
    idle(qtbot, fresh)
    fresh.map_pane.view.grab()
    assert fresh.map_pane.view.painted_empty.startswith("No prompts yet"), (
        fresh.map_pane.view.painted_empty
    )
    close(qtbot, fresh)


def test_m16_a_fork_is_marked_in_the_sidebar_and_names_its_original_at_1000_by_700(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    run(qtbot, window.new_session())
    provider.script(Reply(text="ok"))
    type_and_send(qtbot, window, "Calculator project tour")
    idle(qtbot, window)
    original = window.wb.ref
    assert original is not None
    window.actions_by_name["forkAction"].trigger()  # Session → Fork into a new session
    qtbot.waitUntil(lambda: window.wb.ref not in (None, original), timeout=10_000)
    idle(qtbot, window)
    fork = window.wb.ref
    assert fork is not None
    window.resize(1000, 700)
    idle(qtbot, window)
    view, model = window.sidebar.view, window.sidebar.model()
    qtbot.waitUntil(lambda: model.index_for_path(original).isValid())
    rows = {ref: model.index_for_path(ref) for ref in (original, fork)}
    titles = {ref: str(index.data()) for ref, index in rows.items()}
    assert titles[fork] == "Calculator project tour (fork)"
    width = view.visualRect(rows[fork]).width()
    fm = QFontMetrics(view.font())
    assert fm.horizontalAdvance(titles[fork]) > width - 8, "(the suffix is cut here)"
    # what tells them apart on screen: a fork mark painted before the fork's title
    image = view.viewport().grab().toImage()

    def left_part(index: QModelIndex) -> list[str]:
        rect = view.visualRect(index)
        return [
            image.pixelColor(x, y).name()
            for x in range(rect.left(), rect.left() + 22)
            for y in range(rect.top() + 2, rect.bottom() - 1)
        ]

    base = image.pixelColor(2, image.height() - 2).name()
    assert set(left_part(rows[fork])) - {base}, "no mark on the fork's row"
    assert rows[fork].data(Qt.ItemDataRole.DecorationRole) is not None
    assert rows[original].data(Qt.ItemDataRole.DecorationRole) is None
    assert view.visualRect(rows[fork]).left() == view.visualRect(rows[original]).left()
    tip = str(rows[fork].data(Qt.ItemDataRole.ToolTipRole))
    assert "Forked from Calculator project tour" in tip, tip
    said = str(rows[fork].data(Qt.ItemDataRole.AccessibleTextRole))
    assert "Forked from Calculator project tour" in said, said
    close(qtbot, window)


def test_m6_a_session_found_by_its_text_shows_where_on_a_second_line(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """FIRST_HOUR m6: "Matching sessions show no snippet of where the hit is"."""
    data = tmp_path / "data"
    reply = "Zebras have black and white stripes, which confuse the flies that bite them."

    async def zebras(s: Session) -> None:
        await s.append_message(user("a session about zebras"))
        await s.append_message(answer(reply))

    async def other(s: Session) -> None:
        await s.append_message(user("an unrelated question"))
        await s.append_message(answer("an unrelated answer"))

    found = seed(data, workspace, zebras)
    shown = seed(data, workspace, other)
    window = open_window(qtbot, data, provider.model("anthropic-messages"), target=shown)
    sidebar = window.sidebar
    model = sidebar._model
    QTest.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(sidebar.search, "confuse flies")
    qtbot.waitUntil(lambda: bool(model.index_for_path(found).data(SidebarRole.SNIPPET)))
    idle(qtbot, window)
    index = model.index_for_path(found)
    snippet = index.data(SidebarRole.SNIPPET)
    assert snippet.startswith("…stripes, which confuse the flies"), snippet  # near the hit
    assert "found: " in index.data(Qt.ItemDataRole.AccessibleTextRole)
    assert "Found: " in index.data(Qt.ItemDataRole.ToolTipRole)
    line = sidebar.view.fontMetrics().height()
    row = sidebar.view.visualRect(index)
    assert row.height() >= 2 * line + 6, (row.height(), line)
    # the second line is painted: text pixels below the title
    shot = sidebar.view.viewport().grab(row).toImage()
    lower = {
        shot.pixel(x, y)
        for x in range(shot.width())
        for y in range(shot.height() // 2 + 2, shot.height() - 2)
    }
    assert len(lower) > 2
    # a title match has no second line, and the end of the search ends them
    sidebar.search.clear()
    qtbot.waitUntil(lambda: window.wb.query == "", timeout=5000)
    idle(qtbot, window)
    assert not model.index_for_path(found).data(SidebarRole.SNIPPET)
    assert sidebar.view.visualRect(model.index_for_path(found)).height() < 2 * line + 6
    close(qtbot, window)


def test_p11_a_name_typed_without_md_in_the_export_dialog_gets_it(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "Calculator: project tour?", Reply(text="ok"))

    def type_a_name(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        name = dialog.findChild(QLineEdit, "fileNameEdit")  # typed as a person would
        assert name is not None
        name.clear()
        QTest.keyClicks(name, "tour")
        dialog.accept()

    menu = window.findChild(QMenu, "exportSessionMenu")
    assert menu is not None
    with answering_dialogs(type_a_name):
        next(a for a in menu.actions() if a.objectName() == "exportAction_markdown").trigger()
        qtbot.waitUntil((workspace / "tour.md").exists, timeout=10_000)
    idle(qtbot, window)
    assert not (workspace / "tour").exists()
    assert "Calculator: project tour?" in (workspace / "tour.md").read_text()
    close(qtbot, window)


def listed_paths(window: MainWindow) -> list[str]:
    """The session rows of the list, top to bottom."""
    model = window.sidebar.model()
    paths = []
    for g in range(model.rowCount()):
        group = model.index(g, 0)
        for r in range(model.rowCount(group)):
            row = model.row_data(model.index(r, 0, group))
            if row is not None:
                paths.append(row.path)
    return paths


def rename_the_older_of_two(
    qtbot: QtBot, window: MainWindow, provider: ProviderServer
) -> list[str]:
    """Two sessions, the older renamed with F2 in the real list; their refs, newer first,
    once the list shows the newer on top."""
    provider.script(*[Reply(text="ok")] * 2)
    refs = []
    for prompt in ("the older one", "the newer one"):
        run(qtbot, window.new_session())
        window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
        type_and_send(qtbot, window, prompt)
        idle(qtbot, window)
        refs.append(window.wb.ref)
    older, newer = refs
    assert older is not None and newer is not None
    qtbot.waitUntil(lambda: listed_paths(window)[:2] == [newer, older])

    def rename(dialog: QWidget) -> None:
        assert isinstance(dialog, QInputDialog)
        dialog.setTextValue("Renamed, not worked on")
        dialog.accept()

    view = window.sidebar.view
    view.setFocus(Qt.FocusReason.OtherFocusReason)
    view.setCurrentIndex(window.sidebar.model().index_for_path(older))
    with answering_dialogs(rename):
        QTest.keyClick(view, Qt.Key.Key_F2)
        qtbot.waitUntil(lambda: window.wb.listing.title(older) == "Renamed, not worked on")
    idle(qtbot, window)
    return [newer, older]


def test_p17_a_renamed_session_keeps_its_place_in_the_list(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, store, workspace)
    order = rename_the_older_of_two(qtbot, window, provider)
    assert listed_paths(window)[:2] == order
    close(qtbot, window)
    # read again from the files, by a new launch
    again = open_window(qtbot, tmp_path / "data", provider.model("anthropic-messages"), store=store)
    idle(qtbot, again)
    qtbot.waitUntil(lambda: len(listed_paths(again)) >= 2)
    assert listed_paths(again)[:2] == order
    close(qtbot, again)


def test_p17_a_renamed_session_keeps_its_place_on_a_postgresql_server(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    database_url: str,
) -> None:
    def on_the_server(data: Path) -> MainWindow:
        model = provider.model("anthropic-messages")
        wb = make_workbench(data, model, store="postgres", database_url=database_url)
        return window_in(qtbot, wb, workspace)

    window = on_the_server(tmp_path / "first")
    order = rename_the_older_of_two(qtbot, window, provider)
    assert listed_paths(window)[:2] == order
    close(qtbot, window)
    again = on_the_server(tmp_path / "second")  # the rows as the server keeps them
    qtbot.waitUntil(lambda: len(listed_paths(again)) >= 2)
    assert listed_paths(again)[:2] == order
    close(qtbot, again)


def red_parts(window: MainWindow, row: int) -> list[str]:
    """What a painted card shows in the error red (texts, borders, documents)."""
    from desktop_agent.gui.chat._parts import TextPart

    layout = painted(window, row)
    assert layout is not None
    reds = {"#c62828", "#ef5350"}
    found: list[str] = []
    for part in layout.parts:
        if isinstance(part, TextPart) and part.color.name() in reds:
            found.append(part.text)
        elif isinstance(part, BoxPart) and part.border is not None and part.border.name() in reds:
            found.append("a red border")
        elif isinstance(part, DocPart) and part.color is not None and part.color.name() in reds:
            found.append(part.doc.toPlainText())
    return found


def test_p14_esc_while_a_reply_or_a_tool_runs_reads_stopped_not_a_red_error(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    provider.script(Reply(text=["partial ", "answer ", "never ends"], stall_after=4, stall_s=30))
    type_and_send(qtbot, window, "a long answer please")
    model = window.chat.model
    qtbot.waitUntil(
        lambda: model.rowCount() == 2 and "partial" in str(model.row_at(1).item.message),
        timeout=10_000,
    )
    QTest.keyClick(window.composer.input, Qt.Key.Key_Escape)
    idle(qtbot, window)
    shown = painted_text(painted(window, 1))
    assert "Stopped" in shown and "partial" in shown, shown  # what came before is kept
    assert "Error" not in shown and "aborted" not in shown.lower(), shown
    assert "Retry" not in shown and "Answer again" in shown, shown  # not a failure's retry
    assert red_parts(window, 1) == []
    # a command stopped while it runs: its card says "stopped", not a red "error"
    provider.script(tool_call("bash", {"command": "sleep 30"}), Reply(text="never sent"))
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    type_and_send(qtbot, window, "wait a while")
    qtbot.waitUntil(lambda: "running…" in painted_text(painted(window, 3)), timeout=10_000)
    QTest.keyClick(window.composer.input, Qt.Key.Key_Escape)
    idle(qtbot, window)
    settle(qtbot, window)
    card = painted_text(painted(window, 3))
    assert "stopped" in card and "error" not in card and "Aborted" not in card, card
    assert "You stopped it." in card
    assert red_parts(window, 3) == []
    close(qtbot, window)


def test_m11_a_restored_session_is_shown_open_in_the_list_while_others_stay_in_the_trash(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    provider.script(*[Reply(text="ok")] * 3)
    for prompt in ("about zebras", "about giraffes", "about lions"):
        run(qtbot, window.new_session())
        window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
        type_and_send(qtbot, window, prompt)
        idle(qtbot, window)
    sidebar = window.sidebar
    for _ in range(2):  # Session → Move to trash, twice
        window.actions_by_name["trashAction"].trigger()
        idle(qtbot, window)
    QTest.mouseClick(sidebar.trash_toggle, Qt.MouseButton.LeftButton)
    trash_view = sidebar.trash_view
    trash = sidebar.trash_model()
    qtbot.waitUntil(lambda: trash.session_count() == 2)
    trash_view.setFocus()
    first = trash.index(0, 0, trash.index(0, 0))
    restored = trash.row_data(first)
    assert restored is not None
    trash_view.setCurrentIndex(first)
    QTest.keyClick(trash_view, Qt.Key.Key_Return)
    idle(qtbot, window)
    assert sidebar.stack.currentWidget() is sidebar.view, "back to the list"
    assert not sidebar.trash_toggle.isChecked()
    assert trash.session_count() == 1  # the other one stays in the trash
    assert window.wb.ref is not None
    assert window.wb.listing.title(window.wb.ref) == restored.title
    current = sidebar.view.currentIndex()
    assert sidebar.model().row_data(current) is not None
    assert sidebar.view.visualRect(current).intersects(sidebar.view.viewport().rect())
    close(qtbot, window)


def test_m11_a_session_in_the_trash_can_be_read_before_it_is_restored_or_deleted(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "tell me about zebras", Reply(text="Zebras have stripes."))
    window.actions_by_name["trashAction"].trigger()
    idle(qtbot, window)
    sidebar = window.sidebar
    QTest.mouseClick(sidebar.trash_toggle, Qt.MouseButton.LeftButton)
    trash = sidebar.trash_model()
    qtbot.waitUntil(lambda: trash.session_count() == 1)
    preview = sidebar.findChild(QWidget, "trashPreview")
    assert preview is not None and not preview.isVisible()
    row = trash.index(0, 0, trash.index(0, 0))
    view = sidebar.trash_view
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(row).center())
    qtbot.waitUntil(preview.isVisible, timeout=5000)
    from PySide6.QtWidgets import QTextBrowser

    assert isinstance(preview, QTextBrowser)
    shown = preview.toPlainText()
    assert "tell me about zebras" in shown and "Zebras have stripes." in shown, shown
    assert sidebar.stack.currentWidget() is view  # read there, not restored nor opened
    QTest.mouseClick(sidebar.trash_toggle, Qt.MouseButton.LeftButton)  # back to the list
    assert not preview.isVisible()
    close(qtbot, window)


def test_p19_a_search_that_hides_the_open_session_keeps_the_window_title(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """Seen in a real X window: a sidebar search the open session does not match made
    the window's title "Desktop Agent" (the title was the open session's listed row)."""
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    ask(qtbot, window, provider, "a session about zebras", Reply(text="one"))
    qtbot.waitUntil(lambda: window.windowTitle().startswith("a session about zebras"))
    QTest.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(window.sidebar.search, "giraffes")
    qtbot.waitUntil(lambda: window.wb.query == "giraffes", timeout=5000)
    idle(qtbot, window)
    assert window.wb.row_for(window.wb.ref or "") is not None
    assert window.windowTitle().startswith("a session about zebras"), window.windowTitle()
    close(qtbot, window)


RAW_ERROR_MARKS = ("validation error for", "errors.pydantic.dev", "input_value=", "Traceback")
"""What a pydantic ValidationError or a traceback looks like when it reaches a person."""

HOSTILE_SETTINGS: list[tuple[str, str]] = [
    ("localServerUrl", "http://[::1"),
    ("localServerUrl", "ftp://127.0.0.1:1234"),
    ("localServerUrl", "localhost:0"),
    ("localServerUrl", "http://a b:12/v1"),
    ("localServerUrl", "x" * 3000),
    ("piSessionsFolder", "relative/folder"),
    ("piSessionsFolder", "/dev/null/sessions"),
    ("piSessionsFolder", "bad\x00name"),
    ("databaseUrl", "postgresql://[bad"),
    ("databaseUrl", "not a url at all"),
    ("databaseUrl", "postgresql://me@127.0.0.1:99999/agent"),
    ("databaseUrl", "postgresql://me@127.0.0.1:1/agent"),
    ("databasePassword", "pa\x00ss"),
    ("openaiKey", "sk-\x00nul"),
    ("openaiKey", "k" * 10_000),
]


SAID_INLINE = {
    "http://[::1",
    "ftp://127.0.0.1:1234",
    "localhost:0",
    "http://a b:12/v1",
    "postgresql://[bad",
    "not a url at all",
    "postgresql://me@127.0.0.1:99999/agent",
}
"""The values Save refuses, saying why beside the field (the others are saved)."""


def test_m3_class_no_value_typed_into_settings_reaches_a_person_as_a_raw_error(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """M3's class: every free-text field of Settings, fed what a person could type or paste
    (a bad URL, a dead server, a NUL, 10,000 characters), then Save. The dialog either says
    why inline and stays open, or saves; nothing raw (a pydantic dump, a traceback) reaches
    a box or a notice, and the settings file still loads."""
    window = first_run_window(qtbot, tmp_path, provider)
    run(qtbot, window.new_session(str(workspace)))
    path = tmp_path / "data" / "config" / "settings.json"
    for name, value in HOSTILE_SETTINGS:
        window.activateWindow()  # (as the window manager does when a dialog closes)
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
        dialog = open_settings(qtbot, window)
        if name.startswith("database"):
            store = dialog.store
            store.setFocus(Qt.FocusReason.TabFocusReason)
            while store.currentData() != "postgres":
                QTest.keyClick(store, Qt.Key.Key_Down)
        field = dialog.findChild(QLineEdit, name)
        assert field is not None, name
        assert field.isEnabled() or name == "piSessionsFolder", name
        if not field.isEnabled():
            dialog.pi_sessions.setFocus(Qt.FocusReason.TabFocusReason)
            QTest.keyClick(dialog.pi_sessions, Qt.Key.Key_Space)
        field.setFocus(Qt.FocusReason.TabFocusReason)
        field.selectAll()
        if value.isprintable() and len(value) < 100:
            QTest.keyClicks(field, value)
        else:
            field.insert(value)  # as a paste would (a NUL cannot be typed)
        QTest.keyClick(field, Qt.Key.Key_Return)
        qtbot.wait(50)
        said_inline = value in SAID_INLINE
        assert dialog.isVisible() == said_inline, (name, value)
        if said_inline:  # the dialog stays, with the reason in words beside the field
            beside = "databaseUrlProblem" if name == "databaseUrl" else "localServerUrlProblem"
            problem = dialog.findChild(QLabel, beside)
            assert problem is not None and problem.isVisible() and problem.text(), (name, value)
            shown = [
                label.text()
                for label in dialog.findChildren(QLabel)
                if label.isVisible() and label.text()
            ]
            assert not any(m in t for t in shown for m in RAW_ERROR_MARKS), (name, value, shown)
            QTest.keyClick(dialog, Qt.Key.Key_Escape)
            qtbot.waitUntil(dialog.isHidden)
        idle(qtbot, window)
        said = error_boxes(window) + window.wb.notice_texts()
        assert not any(m in t for t in said for m in RAW_ERROR_MARKS), (name, value, said)
        assert error_boxes(window) == [], (name, value)
        assert load_settings(path).model_dump() is not None
    close(qtbot, window)
