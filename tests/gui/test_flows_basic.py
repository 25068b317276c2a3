"""Temporary smoke of the new window."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.ai.provider_server import ProviderServer, Reply
from tests.gui._window import close, open_window, painted, painted_text, settle, type_and_send


def test_new_session_type_enter(
    qtbot: QtBot, running_qloop: asyncio.AbstractEventLoop, tmp_path: Path,
    provider: ProviderServer, store: str,
) -> None:
    ws = tmp_path / "project"
    ws.mkdir()
    window = open_window(qtbot, tmp_path / "data", provider.model("anthropic-messages"), store=store)
    window.wb.state.last_workspace = str(ws)
    window.activateWindow()
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.wb.session is not None)
    settle(qtbot, window)
    print("focus", QApplication.focusWidget())
    assert QApplication.focusWidget() is window.composer.input
    provider.script(Reply(text=["Hello ", "from ", "the ", "model."], delay_s=0.01))
    type_and_send(qtbot, window, "Say hello")
    qtbot.waitUntil(lambda: window.chat.item_count() == 2 and not window.wb.running, timeout=10000)
    settle(qtbot, window)
    text = painted_text(painted(window, 1))
    print(text)
    assert "Hello from the model." in text
    close(qtbot, window)
