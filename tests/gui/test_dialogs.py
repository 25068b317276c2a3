"""The dialogs behind `Dialogs`' entry points, driven like a person would."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton
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


def test_persistence_error_dialog_is_as_tall_as_its_text(qtbot: QtBot) -> None:
    """No empty band above the text (it was centred in a fixed height); Details shows
    the error under it and the dialog grows for it."""
    event = PersistenceErrorEvent(
        operation="append", path="/data/sessions/x.jsonl", os_error="[Errno 28] No space",
        errno=28, code="storage", pending_count=1, message="OSError: [Errno 28] No space",
    )  # fmt: skip
    dialog = PersistenceErrorDialog(None, event, lambda: None, lambda: None)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    text = dialog.findChild(QLabel, "persistenceErrorText")
    details = dialog.findChild(QPlainTextEdit, "persistenceErrorDetails")
    more = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Details")
    assert text is not None and details is not None
    layout = dialog.layout()
    assert layout is not None
    assert text.geometry().top() == layout.contentsMargins().top()
    assert text.height() <= text.heightForWidth(text.width()) + 2  # no band around it
    short = dialog.height()
    QTest.mouseClick(more, Qt.MouseButton.LeftButton)
    assert details.isVisible() and dialog.height() > short
    assert "Errno 28" in details.toPlainText()
