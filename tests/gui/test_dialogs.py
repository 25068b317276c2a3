"""The dialogs behind `Dialogs`' entry points, driven like a person would."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QLabel, QPushButton
from pytestqt.qtbot import QtBot

from desktop_agent.gui._dialogs import ApprovalDialog, Dialogs, PersistenceErrorDialog
from desktop_agent.harness import PersistenceErrorEvent
from desktop_agent.tools import ApprovalDecision, ApprovalRequest


def request() -> ApprovalRequest:
    return ApprovalRequest(
        tool_name="bash",
        call_id="c1",
        summary="bash rm -rf build",
        cwd="/home/me/project",
        command=("bash", "-c", "rm -rf build"),
    )


def test_approval_dialog_shows_the_command_and_returns_the_choice(
    qtbot: QtBot, running_qloop: asyncio.AbstractEventLoop
) -> None:
    dialogs = Dialogs(None)
    task = asyncio.ensure_future(dialogs.approve(request()))
    qtbot.waitUntil(lambda: bool(dialogs._open))
    dialog = dialogs._open[0]
    assert isinstance(dialog, ApprovalDialog)
    buttons = {b.text().replace("&", ""): b for b in dialog.findChildren(QPushButton)}
    assert {"Allow once", "Always allow in this session", "Deny"} <= set(buttons)
    buttons["Always allow in this session"].click()
    qtbot.waitUntil(task.done)
    assert task.result() == ApprovalDecision.ALLOW_ALWAYS


def test_dismissed_approval_is_a_denial(
    qtbot: QtBot, running_qloop: asyncio.AbstractEventLoop
) -> None:
    dialogs = Dialogs(None)
    task = asyncio.ensure_future(dialogs.approve(request()))
    qtbot.waitUntil(lambda: bool(dialogs._open))
    dialogs._open[0].reject()
    qtbot.waitUntil(task.done)
    assert task.result() is None  # the policy treats None as "deny" (fail closed)


def test_no_windows_mode_denies_and_writes_to_stderr(
    qtbot: QtBot, running_qloop: asyncio.AbstractEventLoop, capsys: pytest.CaptureFixture[str]
) -> None:
    dialogs = Dialogs(None, no_windows=True)
    task = asyncio.ensure_future(dialogs.approve(request()))
    qtbot.waitUntil(task.done)
    assert task.result() == ApprovalDecision.DENY
    assert not dialogs._open
    assert "denied bash" in capsys.readouterr().err


def test_persistence_error_dialog_retry(qtbot: QtBot) -> None:
    event = PersistenceErrorEvent(
        operation="append",
        path="/data/sessions/x.jsonl",
        os_error="[Errno 28] No space left on device",
        errno=28,
        code="storage",
        pending_count=3,
        message="Could not save the session: the disk is full. Nothing is lost yet.",
    )
    retried: list[bool] = []
    dialog = PersistenceErrorDialog(None, event, lambda: retried.append(True), lambda: None)
    qtbot.addWidget(dialog)
    shown = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "/data/sessions/x.jsonl" in shown and "No space left" in shown
    assert "Nothing is lost yet" in shown and "3 entries are kept in memory" in shown
    retry = dialog.findChild(QPushButton, "retryButton")
    assert retry is not None
    retry.click()
    assert retried == [True]
