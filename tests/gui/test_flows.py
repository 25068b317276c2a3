"""Daily flows through the real `MainWindow`, driven with QTest keys and clicks, asserting
on what is painted or focused (issue 8 item 3). Every test runs on both session stores."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QPlainTextEdit
from pytestqt.qtbot import QtBot

from desktop_agent.ai import AssistantMessage
from desktop_agent.session import Session
from tests.helpers.provider_server import HttpError, ProviderServer, Reply, tool_call
from tests.helpers.window import (
    SCREENSHOTS,
    ask,
    click_button,
    close,
    find_index,
    idle,
    new_window,
    on_screen,
    open_window,
    painted,
    painted_text,
    run,
    session_window,
    settle,
    type_and_send,
)
from tests.helpers.workbench import Approver, answer, seed, user

LAST_SENTENCE = "That is the end of the reply."


def long_reply() -> list[str]:
    """A heading, a code block, a table and 24 short paragraphs, in small deltas."""
    text = (
        "# A long answer\n\nHere is some code:\n\n```python\ndef f(x):\n    return x * 2\n```\n\n"
        "| name | value |\n| --- | --- |\n| a | 1 |\n| b | 2 |\n\n"
        + "\n\n".join(f"Paragraph {i}: a short line of text." for i in range(1, 25))
        + f"\n\n{LAST_SENTENCE}"
    )
    return [text[i : i + 12] for i in range(0, len(text), 12)]


def ctrl(qtbot: QtBot, widget: object, key: Qt.Key) -> None:
    QTest.keyClick(widget, key, Qt.KeyboardModifier.ControlModifier)  # type: ignore[call-overload]


def test_launch_ctrl_n_type_enter_sends_and_the_end_of_the_reply_is_drawn(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, store, workspace)
    assert window.center.currentWidget() is window.start_page
    ctrl(qtbot, window, Qt.Key.Key_N)
    qtbot.waitUntil(lambda: window.wb.session is not None)
    idle(qtbot, window)  # the new-session task moves the focus once its views are drawn
    assert QApplication.focusWidget() is window.composer.input  # not the session search
    ask(qtbot, window, provider, "Explain at length", Reply(text=long_reply(), delay_s=0.002))
    last = window.chat.model.last_row()
    assert last == 1
    shown = painted_text(painted(window, last))
    assert LAST_SENTENCE in shown and "Paragraph 24" in shown and "def f(x)" in shown
    assert "streaming" not in shown
    assert on_screen(window, last)
    view = window.chat.view
    assert view.verticalScrollBar().value() == view.verticalScrollBar().maximum()
    assert "Explain at length" in window.sidebar.model().rows()[0].title
    window.grab().save(str(SCREENSHOTS / f"flow_long_reply_{store}.png"))
    close(qtbot, window)


def test_edit_button_and_versions_come_at_once_and_focus_returns_to_the_composer(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, store, workspace)
    ask(qtbot, window, provider, "question one", Reply(text="answer one"), Reply(text="answer two"))
    assert "Edit" in painted_text(painted(window, 0))  # at once, without reopening
    click_button(qtbot, window, 0, "Edit")
    editor = window.chat.view.findChild(QPlainTextEdit, "chatEditText")
    qtbot.waitUntil(lambda: editor is not None and editor.isVisible())
    assert editor is not None
    editor.selectAll()
    QTest.keyClicks(editor, "question one, edited")
    QTest.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.wb.running or window.chat.item_count() == 2)
    idle(qtbot, window)
    assert QApplication.focusWidget() is window.composer.input
    card = painted_text(painted(window, 0))
    assert "question one, edited" in card and "2/2" in card and "‹" in card
    click_button(qtbot, window, 0, "‹")
    qtbot.waitUntil(lambda: "answer one" in painted_text(painted(window, 1)), timeout=10_000)
    assert "1/2" in painted_text(painted(window, 0))
    close(qtbot, window)


def test_retries_do_not_pile_up_and_fold_after_a_successful_retry(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, store, workspace)
    ask(qtbot, window, provider, "please answer", *[HttpError(500, "the server is busy")] * 4)
    assert window.chat.item_count() == 2  # one card for the prompt's four attempts
    card = painted_text(painted(window, 1))
    assert "Error · 4 attempts" in card and provider.url in card and "Retry" in card
    provider.script(Reply(text="here it is"))
    click_button(qtbot, window, 1, "Retry")
    qtbot.waitUntil(lambda: window.wb.running, timeout=5000)
    idle(qtbot, window)
    assert window.chat.item_count() == 2
    card = painted_text(painted(window, 1))
    assert "here it is" in card and "After 4 failed attempts" in card and "Error" not in card
    session = window.wb.session
    assert session is not None
    failed = [
        m
        for i in session.branch_ids()
        if isinstance(m := session.get_message(i), AssistantMessage) and m.stop_reason == "error"
    ]
    assert len(failed) == 4  # they stay in the file
    close(qtbot, window)


def test_tool_card_waits_for_approval_and_the_dialog_shows_the_quoted_command(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, store, workspace)
    window.wb.settings.approval["bash"] = "ask"
    run(qtbot, window.new_session())
    window.wb.approver = approver = Approver()
    command = "echo 'it works' && ls"
    provider.script(
        tool_call("bash", {"command": command}),
        Reply(text="done"),
    )
    type_and_send(qtbot, window, "run it")
    qtbot.waitUntil(lambda: bool(approver.asked), timeout=10_000)
    settle(qtbot, window)
    assert "waiting for approval" in painted_text(painted(window, 1))
    approver.release()
    idle(qtbot, window)
    shown = painted_text(painted(window, 1))
    assert "waiting for approval" not in shown and "it works" in shown
    from desktop_agent.gui._dialogs import ApprovalDialog, approval_text

    assert approval_text(approver.asked[0]).endswith(" -c 'echo '\"'\"'it works'\"'\"' && ls'")
    dialog = ApprovalDialog(window, approver.asked[0])
    qtbot.addWidget(dialog)
    body = dialog.findChild(QPlainTextEdit, "approvalText")
    assert body is not None
    needed = body.fontMetrics().horizontalAdvance(body.toPlainText())
    assert dialog.width() >= needed
    dialog.reject()
    close(qtbot, window)


def test_sending_scrolls_to_the_new_message_even_when_scrolled_up(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    data = tmp_path / "data"

    async def build(s: Session) -> None:
        for i in range(40):
            await s.append_message(user(f"question {i}"))
            await s.append_message(answer(f"answer {i}\n\n" + "more text. " * 30))

    seed(data, workspace, build, store)
    window = open_window(qtbot, data, provider.model("anthropic-messages"), store=store)
    window.activateWindow()
    view = window.chat.view
    view.verticalScrollBar().setValue(0)
    settle(qtbot, window)
    assert not on_screen(window, window.chat.model.last_row())
    provider.script(Reply(text="the newest answer"))
    window.composer.input.setFocus()
    type_and_send(qtbot, window, "one more")
    idle(qtbot, window)
    last = window.chat.model.last_row()
    assert on_screen(window, last) and on_screen(window, last - 1)
    assert "the newest answer" in painted_text(painted(window, last))
    close(qtbot, window)


def test_stop_a_run_with_the_stop_button(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, store, workspace)
    provider.script(Reply(text=["partial ", "answer ", "never ends"], stall_after=4, stall_s=30))
    type_and_send(qtbot, window, "long answer please")
    model = window.chat.model
    qtbot.waitUntil(
        lambda: model.rowCount() == 2 and "partial" in str(model.row_at(1).item.message),
        timeout=10_000,
    )
    assert window.composer.stop_button.isEnabled()
    QTest.mouseClick(window.composer.stop_button, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    assert "Stopped" in painted_text(painted(window, 1))
    assert not window.composer.stop_button.isEnabled()
    close(qtbot, window)


def test_clicking_a_tree_node_switches_branch_with_one_leaf_entry_and_is_restored(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    ids: dict[str, str] = {}

    async def build(s: Session) -> None:
        ids["q1"] = await s.append_message(user("first question"))
        ids["a1"] = await s.append_message(answer("first answer"))
        ids["q2"] = await s.append_message(user("second question"))
        ids["a2"] = await s.append_message(answer("second answer"))
        await s.move_to(ids["a1"])
        ids["q2b"] = await s.append_message(user("other second question"))
        ids["a2b"] = await s.append_message(answer("other answer"))

    ref = seed(data, workspace, build, store)
    window = open_window(qtbot, data, provider.model("anthropic-messages"), store=store)
    assert window.wb.ref == ref and window.chat.item_count() == 4
    view = window.map_pane.view
    qtbot.waitUntil(lambda: find_index(view.model(), ids["a2"]) is not None)
    target = find_index(view.model(), ids["a2"])
    view.scrollTo(target)
    QTest.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(target).center()
    )
    session = window.wb.session
    assert session is not None
    qtbot.waitUntil(lambda: session.leaf_id() == ids["a2"])
    settle(qtbot, window)
    assert "second answer" in painted_text(painted(window, 3))
    leaves = [r for r in session.raw_entries() if r[2] == "leaf"]
    assert len(leaves) == 2 and json.loads(leaves[-1][4])["targetId"] == ids["a2"]
    close(qtbot, window)
    again = open_window(qtbot, data, provider.model("anthropic-messages"), store=store)
    assert again.wb.session is not None and again.wb.session.leaf_id() == ids["a2"]
    close(qtbot, again)


def test_quitting_during_a_run_can_wait_for_it(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, store, workspace)
    provider.script(Reply(text=["slow ", "but ", "complete"], delay_s=0.1))
    type_and_send(qtbot, window, "take your time")
    qtbot.waitUntil(lambda: window.wb.running)
    window.ask_stop_or_wait = lambda: "wait"  # type: ignore[method-assign]
    session = window.wb.session
    assert session is not None
    close(qtbot, window)
    assert session.closed
    message = session.get_message(session.leaf_id() or "")
    assert isinstance(message, AssistantMessage) and message.stop_reason == "stop"
