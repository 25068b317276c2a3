"""A restored session whose local server cannot list its model, in the real window: it
keeps its model (no other provider, though OpenAI is usable), the notice says why and
offers "Try again"; once the server answers, clicking it brings the session's model back."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.config import ProviderSettings, Settings
from desktop_agent.session import Session
from tests.helpers.provider_server import ProviderServer
from tests.helpers.window import close, open_window, settle
from tests.helpers.workbench import make_workbench, seed


def test_a_local_session_whose_server_is_down_keeps_its_model_and_tries_again(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"

    async def build(s: Session) -> None:
        await s.append_model_change("local", "local-model")
        await s.append_message(UserMessage(content=[TextContent(text="hi")], timestamp=1))

    path = seed(data, workspace, build)
    before = Path(path).read_bytes()
    # The server is behind a proxy path it does not answer yet (404: it cannot list).
    settings = Settings(
        providers={"local": ProviderSettings(base_url=f"{provider.url}/proxy/v1")},
        default_model="openai/gpt-test",
        approval={"bash": "allow", "write": "allow", "edit": "allow"},
        discover_local_servers=False,
    )
    openai = provider.model("openai-responses")  # usable: the other provider is right there
    wb = make_workbench(data, openai, settings=settings)
    window = open_window(qtbot, data, [], workbench=wb)
    qtbot.waitUntil(  # the listing failed (it said "Connecting to … for …" until then)
        lambda: window.wb.notices["model"].english.startswith("Model local/local-model"),
        timeout=10_000,
    )
    settle(qtbot, window)
    assert window.wb.model_key() is None
    notice = window.findChild(QWidget, "notice_model")
    assert notice is not None and notice.isVisible()
    label = notice.findChild(QLabel, "noticeText")
    assert label is not None
    assert label.text().startswith("Model local/local-model cannot be used now: Could not list")
    said = [t for t in window.notices.texts() if "Could not list" in t]
    assert len(said) == 1, said  # the servers' own notice does not say it a second time
    assert "openai" not in label.text().lower()
    assert window.composer.model_picker.currentText() == "local/local-model (unavailable)"
    button = notice.findChild(QPushButton, "noticeAction")
    assert button is not None and button.text() == "Try again"

    provider.prefix = "/proxy"  # the server answers now
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.wb.model_key() is not None, timeout=10_000)
    settle(qtbot, window)
    assert window.wb.model_key() == "local/local-model"
    assert "model" not in window.wb.notices
    assert window.composer.model_picker.currentText() == "local-model (local)"
    assert Path(path).read_bytes() == before  # no model change was written
    close(qtbot, window)
