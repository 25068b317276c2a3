"""Long sessions through the real `MainWindow` (issue 12 items 2-4, issue 11 item 8, issue
13): restoring shows the end of the branch painted at once and only a page of rows;
scrolling to the top loads the older pages; a reply streaming into a long session keeps
the end in view; an interrupted tool call and a Pi ``bashExecution`` message are painted
as their cards."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop_agent.gui import MainWindow
from desktop_agent.session import _jsonl as jsonl_module
from desktop_agent.session._header import encode_cwd
from desktop_agent.utils.text import message_text
from desktop_agent.workbench import INLINE_ENTRIES, PAGE
from desktop_agent.workbench import _store as store_module
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import (
    close,
    idle,
    on_screen,
    open_window,
    painted,
    painted_text,
    run,
    settle,
    type_and_send,
)
from tests.helpers.workbench import make_workbench

TURNS = 1_100  # 2,200+ entries: more than INLINE_ENTRIES, so pages are read off the loop


def _stamp(i: int) -> str:
    return f"2026-11-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"


class _Writer:
    """A Pi-v3 session file written line by line, as Pi writes it."""

    def __init__(self, cwd: Path) -> None:
        self.lines: list[dict[str, Any]] = [
            {
                "type": "session",
                "version": 3,
                "id": "01a20000-0000-7000-8000-000000000001",
                "timestamp": _stamp(0),
                "cwd": str(cwd),
            }
        ]
        self.parent: str | None = None
        self.n = 0

    def add(self, message: dict[str, Any]) -> str:
        self.n += 1
        entry_id = f"{self.n:08x}"
        message.setdefault("timestamp", 1_790_000_000_000 + self.n)
        self.lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": self.parent,
                "timestamp": _stamp(self.n),
                "message": message,
            }
        )
        self.parent = entry_id
        return entry_id

    def user(self, text: str) -> str:
        return self.add({"role": "user", "content": [{"type": "text", "text": text}]})

    def assistant(self, content: list[dict[str, Any]], stop: str = "stop") -> str:
        return self.add(
            {
                "role": "assistant",
                "content": content,
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-test",
                "usage": {
                    "input": 10,
                    "output": 5,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 15,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": stop,
            }
        )

    def save(self, data: Path) -> Path:
        folder = data / "sessions" / encode_cwd(str(self.lines[0]["cwd"]))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "2026-11-01T00-00-00-000Z_01a20000-0000-7000-8000-000000000001.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


def opening_now(window: MainWindow) -> bool:
    return window.wb.session is None and window.wb.opening is not None


def has_more(window: MainWindow) -> bool:
    return window.chat.has_more


def long_session(data: Path, cwd: Path, turns: int = TURNS) -> None:
    w = _Writer(cwd)
    for i in range(turns):
        w.user(f"Question {i}: what is {i} squared?")
        w.assistant([{"type": "text", "text": f"Answer {i}: {i * i}."}])
    w.save(data)


def test_restoring_a_long_session_paints_its_end_and_scrolling_up_loads_older_pages(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    long_session(data, workspace)
    assert 2 * TURNS > INLINE_ENTRIES
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    chat = window.chat
    rows = chat.model.rowCount()
    assert PAGE <= rows < 2 * PAGE + 2  # one page (or two to fill the view), not 2,200 rows
    assert chat.has_more
    last = chat.model.last_row()
    assert f"Answer {TURNS - 1}: {(TURNS - 1) ** 2}." in painted_text(painted(window, last))
    assert on_screen(window, last)
    bar = chat.view.verticalScrollBar()
    assert bar.value() == bar.maximum()

    # Home (the list's own key) goes to the first row; near the top the older page comes
    # in above it, and what was at the top stays where it was.
    chat.view.setFocus()
    pages = 0
    while has_more(window):
        before = chat.model.rowCount()
        top_item = chat.model.row_at(0).item.entry_id
        QTest.keyClick(chat.view, Qt.Key.Key_Home)
        qtbot.waitUntil(lambda: chat.model.rowCount() > before, timeout=10_000)  # noqa: B023
        settle(qtbot, window)
        pages += 1
        added = chat.model.rowCount() - before
        assert chat.model.row_at(added).item.entry_id == top_item
        # What was at the top stays about there (estimated heights of the new rows
        # are corrected as they are measured), not thrown to the new top.
        top = chat.view.visualRect(chat.model.index(added, 0)).top()
        assert -100 <= top <= 100, top
        assert pages < 2 * TURNS // PAGE + 2
    assert chat.model.rowCount() == 2 * TURNS
    QTest.keyClick(chat.view, Qt.Key.Key_Home)

    def first_painted() -> bool:
        chat.view.viewport().repaint()
        return on_screen(window, 0) and "Question 0: what" in painted_text(painted(window, 0))

    qtbot.waitUntil(first_painted, timeout=5_000)  # the relayout of measured rows may follow
    assert chat.view.verticalScrollBar().value() <= 100
    close(qtbot, window)


def test_a_reply_streaming_into_a_long_session_keeps_the_end_in_view(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    long_session(data, workspace)
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    chat = window.chat
    words = [f"word{i} " for i in range(300)] + ["THE END."]
    provider.script(Reply(text=words, delay_s=0.003))
    window.composer.input.setFocus()
    type_and_send(qtbot, window, "One more question")
    bar = chat.view.verticalScrollBar()
    seen: list[bool] = []

    def streaming_in_view() -> bool:
        last = chat.model.last_row()
        row = chat.model.row_at(last)
        if row.streaming and message_text(row.item.message):
            seen.append(on_screen(window, last) and bar.value() >= bar.maximum() - 2)
        return len(seen) >= 5

    qtbot.waitUntil(streaming_in_view, timeout=15_000)
    assert all(seen)
    idle(qtbot, window)
    last = chat.model.last_row()
    assert "THE END." in painted_text(painted(window, last))
    assert on_screen(window, last) and bar.value() == bar.maximum()
    assert "One more question" in painted_text(painted(window, last - 1))
    close(qtbot, window)


def test_an_interrupted_tool_call_and_a_pi_shell_command_are_painted_as_cards(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    w = _Writer(workspace)
    w.add(
        {
            "role": "bashExecution",
            "command": "ls src",
            "output": "greet.ts\nmain.ts\n",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
    )
    w.add(
        {
            "role": "bashExecution",
            "command": "make test",
            "output": "",
            "exitCode": 2,
            "cancelled": False,
            "truncated": False,
            "excludeFromContext": True,
        }
    )
    w.user("Run the build")
    call = {"type": "toolCall", "id": "call-1", "name": "bash", "arguments": {"command": "make"}}
    w.assistant([{"type": "text", "text": "Building."}, call], stop="toolUse")
    w.save(data)  # the app stopped while `make` ran: no result was written
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    chat = window.chat
    assert chat.model.rowCount() == 4
    shell = painted_text(painted(window, 0))
    assert "$ ls src" in shell and "greet.ts" in shell and "done" in shell
    excluded = painted_text(painted(window, 1))
    assert "$ make test" in excluded and "exit 2" in excluded
    assert "not sent to the model" in excluded and "(no output)" in excluded
    tool = painted_text(painted(window, 3))
    assert "bash" in tool and "$ make" in tool and "interrupted" in tool
    assert "The app stopped before this tool finished" in tool
    assert "not run" not in tool
    close(qtbot, window)


def test_a_big_session_never_seen_shows_its_end_while_the_rest_is_read(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first open of a big file (no entry index) paints the end of its branch at
    once, says how much is read, and becomes the open session when the scan ends."""
    data = tmp_path / "data"
    long_session(data, workspace)
    monkeypatch.setattr(store_module, "PROGRESSIVE_BYTES", 0)  # our file counts as big
    release = threading.Event()
    real_open = jsonl_module.JsonlStorage.open

    def slow_open(*args: Any, **kwargs: Any) -> Any:
        assert release.wait(20), "the test never let the scan finish"
        return real_open(*args, **kwargs)

    monkeypatch.setattr(jsonl_module.JsonlStorage, "open", slow_open)
    wb = make_workbench(data, provider.model("anthropic-messages"))
    window = open_window(qtbot, data, [], workbench=wb)
    try:
        chat = window.chat
        assert opening_now(window)
        assert window.center.currentWidget() is window.chat_box
        last = chat.model.last_row()
        assert f"Answer {TURNS - 1}: {(TURNS - 1) ** 2}." in painted_text(painted(window, last))
        assert on_screen(window, last)
        assert "Reading the session" in window.status.progress.text()
        assert not has_more(window)  # older pages come with the open session
    finally:
        release.set()
    run(qtbot, window.wb.opened())
    idle(qtbot, window)
    assert window.wb.session is not None
    assert window.wb.opening is None and window.status.progress.text() == ""
    assert has_more(window) and PAGE <= chat.model.rowCount() < 2 * TURNS
    last = chat.model.last_row()
    assert f"Answer {TURNS - 1}: {(TURNS - 1) ** 2}." in painted_text(painted(window, last))
    assert on_screen(window, last)
    close(qtbot, window)
