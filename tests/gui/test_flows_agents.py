"""Several agents at once in the real window (issue 22 item 2): A's long reply streams
while Ctrl+N opens B and C and their prompts are answered; the sidebar says A is running
and then finished; an approval of B waits while C is shown and is asked when the person
clicks B's row; each session file ends with its own whole reply."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.exceptions import TimeoutError
from pytestqt.qtbot import QtBot

from desktop_agent.gui import MainWindow
from desktop_agent.tools import ApprovalDecision, ApprovalRequest
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec
from tests.helpers.window import close, idle, new_window, painted, painted_text, settle

LAST_SENTENCE = "That is the end of alpha's reply."


def long_reply() -> list[str]:
    text = (
        "# Alpha\n\n"
        + "\n\n".join(f"Paragraph {i} of alpha: a short line of text." for i in range(1, 40))
        + f"\n\n{LAST_SENTENCE}"
    )
    return [text[i : i + 10] for i in range(0, len(text), 10)]


def ctrl_n(window: MainWindow) -> None:
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)


def type_prompt(window: MainWindow, text: str) -> None:
    target = QApplication.focusWidget()
    assert target is window.composer.input  # Ctrl+N put the cursor there
    QTest.keyClicks(target, text)
    QTest.keyClick(target, Qt.Key.Key_Return)


def row_index(window: MainWindow, ref: str, column: int) -> QModelIndex:
    model = window.sidebar.model()
    index = model.index_for_path(ref)
    return index.sibling(index.row(), column)


def row_state(window: MainWindow, ref: str) -> str:
    """What the sidebar paints in the session's second column, and says to a reader."""
    index = row_index(window, ref, 1)
    return str(index.data(Qt.ItemDataRole.DisplayRole) or "")


def last_message(ref: str) -> dict[str, object]:
    for line in reversed(Path(ref).read_text().splitlines()):
        entry = json.loads(line)
        if entry.get("type") == "message":
            message: dict[str, object] = entry["message"]
            return message
    raise AssertionError(f"no message in {ref}")


def answered(qtbot: QtBot, window: MainWindow, words: str) -> None:
    """Wait until the chat of the session shown has ``words`` in its reply, then check
    that they are painted."""
    chat = window.chat.model
    try:
        qtbot.waitUntil(
            lambda: (
                chat.rowCount() >= 2 and words in str(chat.row_at(chat.last_row()).item.message)
            ),
            timeout=60_000,
        )
    except TimeoutError as exc:  # say what the window shows instead
        wb = window.wb
        rows = [str(chat.row_at(i).item.message)[:200] for i in range(chat.rowCount())]
        shown = {
            "running": wb.running,
            "rows": rows,
            "notices": window.notices.texts(),
            "file": Path(wb.ref or "").read_text()[-500:] if wb.ref else "",
            "open": {ref: o.activity for ref, o in wb.open_sessions.items()},
        }
        raise AssertionError(f"{words!r} not shown: {shown}") from exc
    settle(qtbot, window)
    assert words in painted_text(painted(window, chat.last_row()))


def new_session_shown(qtbot: QtBot, window: MainWindow, before: str | None) -> str:
    """Ctrl+N, and wait for what it started (not for the runs going on elsewhere): the
    new session is made, its views drawn and the cursor in its composer."""
    going = set(window._tasks)
    ctrl_n(window)
    qtbot.waitUntil(lambda: window.wb.ref not in (None, before), timeout=60_000)
    qtbot.waitUntil(lambda: all(t.done() for t in window._tasks - going), timeout=60_000)
    settle(qtbot, window)
    assert QApplication.focusWidget() is window.composer.input
    ref = window.wb.ref
    assert ref is not None
    return ref


def test_three_sessions_run_at_once_and_the_sidebar_follows_them(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    window.wb.settings.approval["bash"] = "ask"
    asked: list[str | None] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(window.wb.ref)  # the session shown when the person is asked
        return ApprovalDecision.ALLOW_ONCE

    window.wb.approver = approve
    wb = window.wb

    # A: a long reply that streams for seconds.
    a = new_session_shown(qtbot, window, None)
    provider.script_for("Explain alpha", Reply(text=long_reply(), delay_s=0.15))
    type_prompt(window, "Explain alpha")
    chat = window.chat.model
    qtbot.waitUntil(
        lambda: chat.rowCount() == 2 and "Paragraph 1" in str(chat.row_at(1).item.message),
        timeout=60_000,  # (the SDK's first import on a loaded machine takes seconds)
    )
    opened_a = wb.find_open(a)
    assert opened_a is not None and opened_a.running

    # B: Ctrl+N while A streams; B's prompt is answered while A still streams.
    b = new_session_shown(qtbot, window, a)
    stop = window.composer.stop_button  # Stop is B's: nothing runs there
    qtbot.waitUntil(lambda: not stop.isEnabled(), timeout=60_000)
    provider.script_for("Bravo question", Reply(text="Bravo's whole answer."))
    type_prompt(window, "Bravo question")
    answered(qtbot, window, "Bravo's whole answer.")
    settle(qtbot, window)
    assert "running" in row_state(window, a) and wb.find_open(a) is opened_a
    assert "Paragraph" not in painted_text(painted(window, 1))  # A's stream is not drawn here
    # B again: a command that needs approval, asked once C is shown.
    call = ToolCallSpec("call_b", "bash", {"command": "echo bravo-approved"})
    provider.script_for(
        "Bravo runs a command", Reply(tool_calls=[call], delay_s=0.1), Reply(text="Bravo done.")
    )
    type_prompt(window, "Bravo runs a command")
    qtbot.waitUntil(lambda: window.wb.running, timeout=60_000)

    # C: Ctrl+N while A streams and B is about to ask; C's prompt is answered too.
    c = new_session_shown(qtbot, window, b)
    provider.script_for("Charlie question", Reply(text="Charlie's whole answer."))
    type_prompt(window, "Charlie question")
    answered(qtbot, window, "Charlie's whole answer.")
    qtbot.waitUntil(lambda: "approval" in row_state(window, b), timeout=60_000)
    assert asked == []  # B's approval waits for the person while C is shown
    assert any("approval" in text for _title, text in window.notifier.sent)
    accessible = row_index(window, b, 0).data(Qt.ItemDataRole.AccessibleTextRole)
    assert "approval" in str(accessible)
    assert "running" in row_state(window, a)

    # The person clicks B's row: now they are asked, and B finishes.
    view = window.sidebar.view
    rect = view.visualRect(row_index(window, b, 0))
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: asked == [b], timeout=60_000)
    qtbot.waitUntil(lambda: "Bravo done." in Path(b).read_text(), timeout=60_000)

    # A ends while B is shown: its row says finished, and a notification tells it.
    qtbot.waitUntil(lambda: "finished" in row_state(window, a), timeout=60_000)
    assert any("finished" in text for _title, text in window.notifier.sent)
    idle(qtbot, window)
    for ref, words in ((a, LAST_SENTENCE), (b, "Bravo done."), (c, "Charlie's whole answer.")):
        message = last_message(ref)
        assert message["stopReason"] == "stop"
        content = message["content"]
        assert isinstance(content, list)
        assert words in "".join(str(part.get("text", "")) for part in content)
    assert "alpha" not in Path(b).read_text() and "alpha" not in Path(c).read_text()
    assert window.wb.open_sessions.keys() == {b}  # A and C are released (idle, not shown)
    close(qtbot, window)


def test_a_session_not_shown_streams_and_waits_without_redrawing_the_list_or_the_chat(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """While A streams 200 deltas and then asks for an approval behind B, the sidebar is
    never reset (A's row is repainted when its state changes and as its seconds tick;
    no other row) and B's chat is not touched (issue 22's benchmark: the loop work of the
    sessions not shown)."""
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    window.wb.settings.approval["bash"] = "ask"
    asked: list[str | None] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(window.wb.ref)
        return ApprovalDecision.ALLOW_ONCE

    window.wb.approver = approve
    a = new_session_shown(qtbot, window, None)
    deltas = [f"alpha{i} " for i in range(200)]
    call = ToolCallSpec("call_a", "bash", {"command": "echo alpha-approved"})
    provider.script_for(
        "Alpha works",
        Reply(text=deltas, tool_calls=[call], delay_s=0.01),
        Reply(text="Alpha done."),
    )
    type_prompt(window, "Alpha works")
    chat = window.chat.model
    qtbot.waitUntil(
        lambda: chat.rowCount() == 2 and "alpha1 " in str(chat.row_at(1).item.message),
        timeout=60_000,
    )
    b = new_session_shown(qtbot, window, a)
    assert "running" in row_state(window, a)

    model = window.sidebar.model()
    resets: list[str] = []
    repainted: list[tuple[str | None, str | None]] = []
    model.modelReset.connect(lambda: resets.append("list"))
    window.sidebar.trash_model().modelReset.connect(lambda: resets.append("trash"))

    def path(index: QModelIndex) -> str | None:
        row = model.row_data(index)
        return row.path if row is not None else None

    model.dataChanged.connect(
        lambda first, last, _roles=(): repainted.append((path(first), path(last)))
    )
    chat_changes: list[str] = []
    chat.modelReset.connect(lambda: chat_changes.append("reset"))
    chat.rowsInserted.connect(lambda *_: chat_changes.append("inserted"))
    chat.dataChanged.connect(lambda *_: chat_changes.append("changed"))
    loop = asyncio.get_event_loop()
    since = loop.time()

    qtbot.waitUntil(lambda: "approval" in row_state(window, a), timeout=60_000)
    seconds = loop.time() - since
    assert "alpha199" in Path(a).read_text()  # all 200 deltas came (and were saved)
    assert asked == []
    assert resets == []
    assert repainted and set(repainted) == {(a, a)}  # A's row only, one row at a time
    assert len(repainted) <= seconds + 3  # its seconds ticking, and its state once
    assert chat_changes == []
    assert window.wb.ref == b

    view = window.sidebar.view
    rect = view.visualRect(row_index(window, a, 0))
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: asked == [a], timeout=60_000)
    qtbot.waitUntil(lambda: "Alpha done." in Path(a).read_text(), timeout=60_000)
    idle(qtbot, window)
    close(qtbot, window)
