"""An MCP server's tool in the real window (issue 20): a server in mcp.json, the approval
rule ``mcp__<server>`` allowed, a prompt whose scripted model calls one of its tools. The
card shows the result, the next request carries it, the session file keeps it, and after
a restart of the app the next request offers the server's tools again."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QDialogButtonBox,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)
from pytestqt.qtbot import QtBot

from desktop_agent.ai import ToolResultMessage
from desktop_agent.config import Settings
from desktop_agent.gui import MainWindow
from desktop_agent.gui._dialogs import ApprovalDialog
from desktop_agent.gui._mcp import McpServersDialog
from desktop_agent.gui._settings_dialog import SettingsDialog
from desktop_agent.utils import Redactor
from desktop_agent.workbench import McpServers
from tests.helpers.mcp_servers import REPO
from tests.helpers.provider_server import ProviderServer, Reply, tool_call
from tests.helpers.window import (
    ask,
    chat_text,
    close,
    idle,
    open_window,
    run,
    type_and_send,
    window_in,
)
from tests.helpers.workbench import Approver, make_workbench

pytestmark = pytest.mark.slow

TOKEN = "mcp-test-token-0123456789abcdef"
ECHOED = f"from the model {TOKEN}"


def write_config(data: Path, *flags: str) -> Path:
    path = data / "config" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.helpers.mcp_server", *flags],
        "cwd": str(REPO),
        "env": {"TESTS_API_TOKEN": TOKEN},
    }
    path.write_text(json.dumps({"mcpServers": {"tests": server}}))
    return path


def mcp_window(qtbot: QtBot, data: Path, provider: ProviderServer, workspace: Path) -> MainWindow:
    model = provider.model("anthropic-messages")
    settings = Settings(
        default_model=model.key,
        approval={"bash": "ask", "mcp__tests": "allow"},
        discover_local_servers=False,
    )
    redactor = Redactor()
    mcp = McpServers.load(data / "config" / "mcp.json", redactor=redactor)
    wb = make_workbench(data, model, settings=settings, mcp=mcp)
    wb.redactor = redactor
    window = window_in(qtbot, wb, workspace)
    # Started by the first paint, in the background: ready a little later.
    qtbot.waitUntil(lambda: wb.mcp.statuses()[0].state == "ready", timeout=30_000)
    return window


def tool_names(body: Any) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def test_a_server_tool_is_offered_called_shown_sent_back_kept_and_offered_after_a_restart(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    write_config(data)
    window = mcp_window(qtbot, data, provider, workspace)
    wb = window.wb
    run(qtbot, window.new_session(str(workspace)))
    posts = ask(
        qtbot,
        window,
        provider,
        "ask the server",
        tool_call("mcp__tests__echo", {"text": ECHOED}),
        Reply(text="The server answered."),
    )
    assert len(posts) == 2
    assert "mcp__tests__echo" in tool_names(posts[0])
    assert "bash" in tool_names(posts[0])
    echo = next(t for t in posts[0]["tools"] if t["name"] == "mcp__tests__echo")
    assert echo["description"] == "Echo the text back."
    assert echo["input_schema"]["required"] == ["text"]
    # The next request carries the result.
    sent = json.dumps(posts[1]["messages"])
    assert "echo: from the model" in sent
    # The card shows it.
    shown = chat_text(window)
    assert "echo: from the model" in shown
    assert "The server answered." in shown
    # The session file keeps it; the server's token (from its env in mcp.json), which the
    # model sent and the server echoed, is redacted there.
    session = wb.session
    assert session is not None
    path = Path(session.metadata.path or "")
    results = [
        m
        for i in session.branch_ids()
        if isinstance(m := session.get_message(i), ToolResultMessage)
    ]
    assert [(r.tool_name, r.is_error) for r in results] == [("mcp__tests__echo", False)]
    text = path.read_text()
    assert "echo: from the model" in text
    assert TOKEN not in text
    close(qtbot, window)
    assert wb.mcp.statuses()[0].state == "stopped"

    # Restart the app on the same data folder: the next request offers the tools again.
    window = mcp_window(qtbot, data, provider, workspace)
    posts = ask(qtbot, window, provider, "again", Reply(text="Still here."))
    assert len(posts) == 1
    assert "mcp__tests__echo" in tool_names(posts[0])
    assert "Still here." in chat_text(window)
    close(qtbot, window)


def test_without_a_rule_it_asks_naming_server_and_tool_progress_shows_and_stop_cancels(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    log = tmp_path / "server.log"
    write_config(data, "--log", str(log))
    window = mcp_window(qtbot, data, provider, workspace)
    wb = window.wb
    wb.settings.approval.pop("mcp__tests")  # MCP tools ask by default
    run(qtbot, window.new_session(str(workspace)))
    wb.approver = approver = Approver()
    provider.script(
        tool_call("mcp__tests__slow", {"seconds": 60}),
    )
    type_and_send(qtbot, window, "be slow")
    qtbot.waitUntil(lambda: bool(approver.asked), timeout=10_000)
    dialog = ApprovalDialog(window, approver.asked[0])
    qtbot.addWidget(dialog)
    body = dialog.findChild(QPlainTextEdit, "approvalText")
    assert body is not None
    assert body.toPlainText() == "MCP server 'tests', tool 'slow'\n{\n  \"seconds\": 60\n}"
    head = dialog.findChild(QLabel, "approvalHeadline")
    assert head is not None
    assert "use the tool “slow” of the MCP server “tests”" in head.text()
    dialog.reject()
    approver.release()
    # The server's progress notification reaches the card while the call runs.
    qtbot.waitUntil(lambda: "1/3 started" in chat_text(window), timeout=10_000)
    # Stop: the server hears of the cancellation; the call's result is an error.
    QTest.mouseClick(window.composer.stop_button, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    qtbot.waitUntil(lambda: log.exists() and "slow cancelled" in log.read_text(), timeout=10_000)
    session = wb.session
    assert session is not None
    results = [
        m
        for i in session.branch_ids()
        if isinstance(m := session.get_message(i), ToolResultMessage)
    ]
    assert [(r.tool_name, r.is_error) for r in results] == [("mcp__tests__slow", True)]
    assert "You stopped it." in chat_text(window)  # the model reads "Aborted" (p14)
    close(qtbot, window)


def list_texts(dialog: McpServersDialog) -> list[str]:
    return [dialog.list.item(i).text() for i in range(dialog.list.count())]


def select(qtbot: QtBot, dialog: McpServersDialog, name: str) -> None:
    row = next(i for i, r in enumerate(dialog._rows) if r.name == name)
    rect = dialog.list.visualItemRect(dialog.list.item(row))
    QTest.mouseClick(dialog.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert dialog.current() is not None and dialog.current().name == name  # type: ignore[union-attr]


def test_the_servers_menu_and_dialog_add_edit_disable_restart_import_and_remove(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    config_file = write_config(data)
    window = mcp_window(qtbot, data, provider, workspace)
    wb = window.wb
    menus = [a.text() for a in window.menuBar().actions()]
    assert menus == ["&File", "&Session", "&View", "Se&rvers", "&Help"]
    menu = window.menuBar().findChild(QMenu, "mcpMenu")
    assert menu is not None
    menu.aboutToShow.emit()
    titles = [a.text() for a in menu.actions() if a.menu() is not None]
    assert titles == ["tests: ready (7 tools)"]
    manage = next(a for a in menu.actions() if a.objectName() == "mcpManageAction")
    manage.trigger()
    opened = window.findChild(McpServersDialog, "mcpServersDialog")
    assert opened is not None and opened.parentWidget() is window  # not on the popup menu
    opened.close()  # (deleted on close)
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert window.findChild(McpServersDialog, "mcpServersDialog") is None
    # Settings (Ctrl+,) shows the statuses and opens the servers dialog.
    QTest.keyClick(window, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.findChild(SettingsDialog, "settingsDialog") is not None)
    settings = window.findChild(SettingsDialog, "settingsDialog")
    assert settings is not None
    status = settings.findChild(QLabel, "settingsMcpStatus")
    assert status is not None and status.text() == "tests: ready (7 tools)"
    button = settings.findChild(QPushButton, "settingsMcpButton")
    assert button is not None
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    dialog = window.findChild(McpServersDialog, "mcpServersDialog")
    assert dialog is not None and dialog.isVisible()
    assert list_texts(dialog) == ["tests: ready (7 tools)"]

    # Add: a broken entry is refused with a reason and nothing is saved.
    QTest.mouseClick(dialog.buttons["Add"], Qt.MouseButton.LeftButton)
    editor = dialog.editor
    assert editor is not None and editor.isVisible()
    QTest.keyClicks(editor.name, "second")
    editor.entry.selectAll()
    QTest.keyClicks(editor.entry, '{"command": ')
    QTest.mouseClick(
        editor.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok),  # type: ignore[union-attr]
        Qt.MouseButton.LeftButton,
    )
    assert editor.isVisible()
    assert editor.error.text().startswith("This is not valid JSON")
    assert "second" not in config_file.read_text()
    editor.entry.selectAll()
    entry = {
        "command": sys.executable,
        "args": ["-m", "tests.helpers.mcp_server"],
        "cwd": str(REPO),
    }
    QTest.keyClicks(editor.entry, json.dumps(entry))
    QTest.keyClick(editor.name, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "second: ready (7 tools)" in list_texts(dialog), timeout=30_000)
    saved = json.loads(config_file.read_text())["mcpServers"]
    assert saved["second"] == entry
    assert "mcp__second__echo" in {t.name for t in wb.mcp.tools()}

    # Disable with the keyboard (Space on the checkable row): its tools are gone.
    select(qtbot, dialog, "second")
    QTest.keyClick(dialog.list, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: "second: disabled" in list_texts(dialog), timeout=10_000)
    assert json.loads(config_file.read_text())["mcpServers"]["second"]["disabled"] is True
    assert not any(t.name.startswith("mcp__second__") for t in wb.mcp.tools())

    # Restart one server: it goes through "starting" and is ready again.
    seen: list[str] = []
    wb.mcp.subscribe(lambda: seen.append(wb.mcp.statuses()[0].state))
    select(qtbot, dialog, "tests")
    QTest.mouseClick(dialog.buttons["Restart"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "starting" in seen and seen[-1] == "ready", timeout=30_000)

    # Import a Claude Desktop config: a taken name gets " (imported)".
    claude = tmp_path / "claude_desktop_config.json"
    imported = {"command": "srv-that-is-off", "disabled": True}
    claude.write_text(json.dumps({"mcpServers": {"tests": imported, "gh": imported}}))
    dialog.ask_import_path = lambda: str(claude)  # type: ignore[method-assign]
    QTest.mouseClick(dialog.buttons["Import"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "gh: disabled" in list_texts(dialog), timeout=10_000)
    assert dialog.error.text() == "Imported 2 MCP server(s) from claude_desktop_config.json."
    saved = json.loads(config_file.read_text())["mcpServers"]
    assert list(saved) == ["tests", "second", "tests (imported)", "gh"]

    # Remove.
    select(qtbot, dialog, "second")
    QTest.mouseClick(dialog.buttons["Remove"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not any(t.startswith("second") for t in list_texts(dialog)))
    assert "second" not in json.loads(config_file.read_text())["mcpServers"]
    dialog.reject()
    settings.reject()
    close(qtbot, window)


def test_a_folders_own_mcp_file_is_offered_once_and_used_only_after_the_person_agrees(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    entry = {
        "command": sys.executable,
        "args": ["-m", "tests.helpers.mcp_server"],
        "cwd": str(REPO),
    }
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": entry}}))
    other = tmp_path / "other"
    (other / ".pi").mkdir(parents=True)
    (other / ".pi" / "mcp.json").write_text(json.dumps({"mcpServers": {"pi-proj": entry}}))
    model = provider.model("anthropic-messages")
    settings = Settings(default_model=model.key, discover_local_servers=False)
    wb = make_workbench(
        data, model, settings=settings, mcp=McpServers.load(data / "config" / "mcp.json")
    )
    window = open_window(qtbot, data, model, workbench=wb)

    # A folder whose .pi/mcp.json is offered and left alone: nothing starts, not asked again.
    run(qtbot, window.new_session(str(other)))
    idle(qtbot, window)
    assert any("pi-proj" in t for t in window.notices.texts())
    assert wb.mcp.statuses() == []
    assert wb.mcp.tools() == []
    assert wb.state.mcp_projects == {str(other): "offered"}
    run(qtbot, window.new_session(str(other)))
    idle(qtbot, window)
    assert not any("pi-proj" in t for t in window.notices.texts())
    assert wb.mcp.statuses() == []

    # The project's .mcp.json: offered with "Use them"; clicking it starts its server.
    run(qtbot, window.new_session(str(workspace)))
    idle(qtbot, window)
    row = window.notices.findChild(QWidget, "notice_mcp-project")
    assert row is not None
    label = row.findChild(QLabel, "noticeText")
    assert label is not None and ".mcp.json: proj" in label.text()
    assert wb.mcp.statuses() == []
    button = row.findChild(QPushButton, "noticeAction")
    assert button is not None and button.text() == "Use them"
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: [(s.name, s.state) for s in wb.mcp.statuses()] == [("proj (project)", "ready")],
        timeout=30_000,
    )
    assert "mcp__proj_project__echo" in {t.name for t in wb.mcp.tools()}
    assert wb.state.mcp_projects[str(workspace)] == "allowed"
    # It is not written to the person's own mcp.json.
    assert not (data / "config" / "mcp.json").exists()
    close(qtbot, window)

    # Next launch: the agreed folder's servers start with its session, without asking.
    wb = make_workbench(
        data, model, settings=settings, mcp=McpServers.load(data / "config" / "mcp.json")
    )
    window = open_window(qtbot, data, model, workbench=wb)
    qtbot.waitUntil(
        lambda: [(s.name, s.state) for s in wb.mcp.statuses()] == [("proj (project)", "ready")],
        timeout=30_000,
    )
    assert not any("proj" in t for t in window.notices.texts())
    close(qtbot, window)
