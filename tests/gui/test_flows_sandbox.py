"""The shell's sandbox through the real window: a command the sandbox blocked runs outside
it once through the approval dialog (keyboard only), recorded in the session; where no
sandbox works a notice says so and every command is asked for; the network switch in
Settings reaches the sandbox."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QCheckBox,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)
from pytestqt.qtbot import QtBot

from desktop_agent.gui import MainWindow
from desktop_agent.tools import APPROVAL_CUSTOM_TYPE, Sandbox, detect_sandbox
from desktop_agent.tools._sandbox import BWRAP_MISSING
from tests.helpers.provider_server import ProviderServer, Reply, tool_call
from tests.helpers.window import (
    active_dialog,
    close,
    idle,
    painted,
    painted_text,
    run,
    type_and_send,
    window_in,
)
from tests.helpers.workbench import make_workbench

ALT = Qt.KeyboardModifier.AltModifier


def _window(
    qtbot: QtBot, data: Path, provider: ProviderServer, sandbox: Sandbox, workspace: Path
) -> MainWindow:
    """A window whose bash runs in ``sandbox`` and whose new sessions go to ``workspace``."""
    wb = make_workbench(data, provider.model("anthropic-messages"), sandbox=sandbox)
    return window_in(qtbot, wb, workspace)


def _approvals(window_data: Path) -> list[dict[str, object]]:
    records = []
    for path in (window_data / "sessions").rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("customType") == APPROVAL_CUSTOM_TYPE:
                records.append(entry["data"])
    return records


def test_a_blocked_command_runs_outside_the_sandbox_once_through_the_dialog(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    window = _window(qtbot, data, provider, detect_sandbox(), workspace)
    assert "bash" in window.wb.settings.approval and window.wb.settings.approval["bash"] == "allow"
    run(qtbot, window.new_session())
    command = f"echo made > {outside}/note.txt && echo wrote it"
    provider.script(
        tool_call("bash", {"command": command}),
        Reply(text="done"),
    )
    type_and_send(qtbot, window, "write the note")
    dialog = active_dialog(qtbot, "approvalDialog")
    assert not (outside / "note.txt").exists()  # the sandboxed run was blocked
    labels = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "The sandbox blocked this bash command" in labels
    assert "Run outside the sandbox" in labels or "outside the sandbox" in labels
    buttons = [b.text() for b in dialog.findChildren(QPushButton)]
    assert buttons == [
        "&Run outside the sandbox, once",
        "&Keep it blocked",
        "Keep it blocked and say &why…",
    ]
    QTest.keyClick(dialog, Qt.Key.Key_R, ALT)
    idle(qtbot, window)
    assert (outside / "note.txt").read_text() == "made\n"
    shown = painted_text(painted(window, 1))
    assert "wrote it" in shown
    decisions = [r["decision"] for r in _approvals(data)]
    assert decisions == ["allow", "run_outside_sandbox_once"]

    # The next blocked command asks again: "once" is not remembered; Alt+K keeps it blocked.
    provider.script(
        tool_call("bash", {"command": command + " again"}, "call_2"),
        Reply(text="ok"),
    )
    (outside / "note.txt").unlink()
    type_and_send(qtbot, window, "again")
    dialog = active_dialog(qtbot, "approvalDialog")
    QTest.keyClick(dialog, Qt.Key.Key_K, ALT)
    idle(qtbot, window)
    assert not (outside / "note.txt").exists()
    assert [r["decision"] for r in _approvals(data)][-1] == "deny"
    tool_results = [
        json.loads(line)
        for path in (data / "sessions").rglob("*.jsonl")
        for line in path.read_text().splitlines()
        if '"toolResult"' in line
    ]
    assert "Blocked by the sandbox" in json.dumps(tool_results[-1])

    # Kept blocked with words; the model reads them after the sandbox's own report,
    # and the record keeps them (FIRST_HOUR.md p4, for the blocked dialog too).
    provider.script(
        tool_call("bash", {"command": command + " third"}, "call_3"),
        Reply(text="understood"),
    )
    type_and_send(qtbot, window, "once more")
    dialog = active_dialog(qtbot, "approvalDialog")
    say_why = dialog.findChild(QPushButton, "denyWithReason")
    assert say_why is not None
    QTest.mouseClick(say_why, Qt.MouseButton.LeftButton)
    reason = dialog.findChild(QLineEdit, "denyReason")
    assert reason is not None and reason.isVisible()
    qtbot.waitUntil(reason.hasFocus)
    assert say_why.text() == "Keep it blocked and &send"
    QTest.keyClicks(reason, "write it inside the project instead")
    QTest.keyClick(reason, Qt.Key.Key_Return)
    idle(qtbot, window)
    assert not (outside / "note.txt").exists()
    last = _approvals(data)[-1]
    assert last["decision"] == "deny" and "write it inside the project instead" in str(
        last["reason"]
    )
    sent = json.dumps(provider.last_body())
    assert "Blocked by the sandbox" in sent
    assert "They said: write it inside the project instead" in sent
    close(qtbot, window)


def test_without_a_sandbox_a_notice_says_so_and_every_command_is_asked(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    none = detect_sandbox(which=lambda name: None)
    window = _window(qtbot, data, provider, none, workspace)
    assert window.wb.notices["sandbox"].english == BWRAP_MISSING
    shown = window.findChild(QWidget, "notice_sandbox")
    assert shown is not None and shown.isVisible()
    label = shown.findChild(QLabel, "noticeText")
    assert label is not None and "bubblewrap (bwrap) is not installed" in label.text()
    run(qtbot, window.new_session())
    for i in range(2):
        provider.script(
            tool_call("bash", {"command": f"echo run{i}"}, f"c{i}"),
            Reply(text="ok"),
        )
        type_and_send(qtbot, window, f"go {i}")
        dialog = active_dialog(qtbot, "approvalDialog")
        note = dialog.findChild(QLabel, "noSandbox")
        assert note is not None and "bubblewrap" in note.text()
        buttons = [b.text() for b in dialog.findChildren(QPushButton)]
        assert buttons == ["Allow &once", "&Deny", "Deny and say &why…"]
        QTest.keyClick(dialog, Qt.Key.Key_O, ALT)
        idle(qtbot, window)
    assert [r["decision"] for r in _approvals(data)] == ["allow_once", "allow_once"]
    close(qtbot, window)


def test_settings_turn_the_network_off_and_keep_keys_in_a_file(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """Ctrl+, opens Settings; Space on the two boxes, a key typed for the local server,
    Save: the sandbox has no network, and the key is in keys.json (0600), not in
    settings.json."""
    data = tmp_path / "data"
    sandbox = detect_sandbox()
    window = _window(qtbot, data, provider, sandbox, workspace)
    QTest.keyClick(window, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    dialog = active_dialog(qtbot, "settingsDialog")
    network = dialog.findChild(QCheckBox, "shellNetwork")
    in_file = dialog.findChild(QCheckBox, "keysInFile")
    local_key = dialog.findChild(QLineEdit, "localKey")
    assert network is not None and in_file is not None and local_key is not None
    assert network.isChecked() and not in_file.isChecked() and in_file.isEnabled()
    for box in (network, in_file):
        box.setFocus()
        QTest.keyClick(box, Qt.Key.Key_Space)
    key = "local-" + os.urandom(6).hex()
    local_key.setFocus()
    QTest.keyClicks(local_key, key)
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    save = buttons.button(QDialogButtonBox.StandardButton.Save)
    QTest.mouseClick(save, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    assert sandbox.network is False
    keys_file = data / "config" / "keys.json"
    assert json.loads(keys_file.read_text()) == {"local": key}
    assert stat.S_IMODE(keys_file.stat().st_mode) == 0o600
    saved = (data / "config" / "settings.json").read_text()
    assert key not in saved
    assert json.loads(saved)["shell_network"] is False and json.loads(saved)["keys_in_file"]
    close(qtbot, window)
