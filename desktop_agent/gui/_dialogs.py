"""Dialogs, each behind one small entry point of `Dialogs` that tests can replace.

None of them blocks the event loop: they are shown with ``open()``/``show()`` and report
through callbacks or futures. With ``--no-err-windows`` they write to stderr instead.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.harness import PersistenceErrorEvent
from desktop_agent.session import RecoveryReport
from desktop_agent.tools import ApprovalDecision, ApprovalRequest


class PersistenceErrorDialog(QDialog):
    """What could not be saved, where and why; nothing is lost yet. Retry / Save a copy."""

    def __init__(
        self,
        parent: QWidget | None,
        event: PersistenceErrorEvent,
        on_retry: Callable[[], object],
        on_save_copy: Callable[[], object],
    ) -> None:
        super().__init__(parent)
        self.setObjectName("persistenceErrorDialog")
        self.setWindowTitle("The session could not be saved")
        self.setWindowModality(Qt.WindowModality.NonModal)
        where = event.path or "the session file"
        why = event.os_error or event.code
        text = QLabel(
            f"<b>Desktop Agent could not save this session.</b><br><br>"
            f"Where: {where}<br>Why: {why}<br><br>"
            f"<b>Nothing is lost yet.</b> {event.pending_count} unsaved entr"
            f"{'y is' if event.pending_count == 1 else 'ies are'} kept in memory. Fix the "
            "problem (free some disk space, check permissions) and press Retry, or save a "
            "copy of the whole session somewhere else."
        )
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        details = QPlainTextEdit(event.message)
        details.setReadOnly(True)
        details.setVisible(False)
        buttons = QDialogButtonBox(self)
        retry = buttons.addButton("Retry", QDialogButtonBox.ButtonRole.AcceptRole)
        retry.setObjectName("retryButton")
        copy = buttons.addButton("Save a copy elsewhere…", QDialogButtonBox.ButtonRole.ActionRole)
        copy.setObjectName("saveCopyButton")
        more = buttons.addButton("Details", QDialogButtonBox.ButtonRole.HelpRole)
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        retry.clicked.connect(self.accept)
        retry.clicked.connect(lambda: on_retry())
        copy.clicked.connect(on_save_copy)
        more.clicked.connect(lambda: details.setVisible(not details.isVisible()))
        close.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(details)
        layout.addWidget(buttons)
        self.resize(520, 260)


class DamagedSessionDialog(QDialog):
    """What was recovered, what was set aside and where; open read-only or repair."""

    def __init__(
        self,
        parent: QWidget | None,
        path: str,
        report: RecoveryReport,
        on_repair: Callable[[], object],
    ) -> None:
        super().__init__(parent)
        self.setObjectName("damagedSessionDialog")
        self.setWindowTitle("This session was damaged")
        lines = [f"<b>{path}</b>", "", report.describe() + "."]
        if report.damaged:
            lines.append(
                "The session is open read-only and the file was not changed. "
                "“Repair” writes the readable entries to a new file beside it."
            )
        label = QLabel("<br>".join(lines))
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(self)
        ok = buttons.addButton(
            "Open read-only" if report.damaged else "OK", QDialogButtonBox.ButtonRole.AcceptRole
        )
        ok.clicked.connect(self.accept)
        if report.damaged:
            repair = buttons.addButton(
                "Repair into a new file", QDialogButtonBox.ButtonRole.ActionRole
            )
            repair.setObjectName("repairButton")
            repair.clicked.connect(self.accept)
            repair.clicked.connect(lambda: on_repair())
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(buttons)
        self.resize(520, 220)


class ApprovalDialog(QDialog):
    """Command or diff, working directory; allow once / always for this session / deny."""

    def __init__(self, parent: QWidget | None, request: ApprovalRequest) -> None:
        super().__init__(parent)
        self.setObjectName("approvalDialog")
        self.setWindowTitle(f"Allow {request.tool_name}?")
        self.decision: ApprovalDecision | None = None
        head = QLabel(f"<b>The agent wants to run {request.tool_name}</b> in {request.cwd}")
        head.setWordWrap(True)
        body = QPlainTextEdit(self)
        body.setReadOnly(True)
        if request.command:
            body.setPlainText(" ".join(request.command))
        elif request.diff:
            body.setPlainText(request.diff)
        else:
            body.setPlainText(request.summary)
        buttons = QDialogButtonBox(self)
        for label, decision in (
            ("Allow once", ApprovalDecision.ALLOW_ONCE),
            ("Always allow in this session", ApprovalDecision.ALLOW_ALWAYS),
            ("Deny", ApprovalDecision.DENY),
        ):
            button = QPushButton(label, self)
            button.clicked.connect(lambda _=False, d=decision: self._decide(d))
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addWidget(head)
        layout.addWidget(body)
        layout.addWidget(buttons)
        self.resize(640, 360)

    def _decide(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.accept()


class SettingsDialog(QDialog):
    """Providers and keys, default model, approval policy, Enter behaviour."""

    def __init__(
        self,
        parent: QWidget | None,
        values: dict[str, Any],
        keystore_problem: str | None,
        models: list[tuple[str, str]],
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        form = QFormLayout()
        self.openai_key = QLineEdit(self)
        self.openai_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.openai_key.setPlaceholderText("sk-… (stored in the system keychain)")
        self.anthropic_key = QLineEdit(self)
        self.anthropic_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.anthropic_key.setPlaceholderText("sk-ant-… (stored in the system keychain)")
        self.local_url = QLineEdit(str(values.get("local_base_url") or ""), self)
        self.local_url.setPlaceholderText("http://127.0.0.1:11434/v1 (Ollama, LM Studio, …)")
        self.discover = QCheckBox("Look for local model servers at start", self)
        self.discover.setChecked(bool(values.get("discover_local_servers", True)))
        self.default_model = QComboBox(self)
        for key, label in models:
            self.default_model.addItem(label, key)
        index = self.default_model.findData(values.get("default_model"))
        self.default_model.setCurrentIndex(max(index, 0))
        self.send_key = QComboBox(self)
        self.send_key.addItem("Enter sends, Shift+Enter new line", "enter")
        self.send_key.addItem("Ctrl+Enter sends, Enter new line", "ctrl+enter")
        self.send_key.setCurrentIndex(max(self.send_key.findData(values.get("send_key")), 0))
        self.approval: dict[str, QComboBox] = {}
        form.addRow("OpenAI API key", self.openai_key)
        form.addRow("Anthropic API key", self.anthropic_key)
        if keystore_problem:
            warning = QLabel(
                f"<i>No system keychain is available: {keystore_problem} Keys typed here are "
                "kept for this run only; set OPENAI_API_KEY / ANTHROPIC_API_KEY to keep them.</i>"
            )
            warning.setWordWrap(True)
            form.addRow(warning)
        form.addRow("Local server URL", self.local_url)
        form.addRow("", self.discover)
        form.addRow("Default model", self.default_model)
        approvals = values.get("approval") or {}
        for tool in ("bash", "write", "edit"):
            box = QComboBox(self)
            for rule in ("ask", "allow", "deny"):
                box.addItem(rule, rule)
            box.setCurrentIndex(max(box.findData(approvals.get(tool, "ask")), 0))
            self.approval[tool] = box
            form.addRow(f"Before {tool}", box)
        form.addRow("Send with", self.send_key)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def result_values(self) -> dict[str, Any]:
        return {
            "openai_key": self.openai_key.text().strip() or None,
            "anthropic_key": self.anthropic_key.text().strip() or None,
            "local_base_url": self.local_url.text().strip() or None,
            "discover_local_servers": self.discover.isChecked(),
            "default_model": self.default_model.currentData(),
            "send_key": self.send_key.currentData(),
            "approval": {tool: box.currentData() for tool, box in self.approval.items()},
        }


class Dialogs:
    """Entry points for every dialog. Tests replace these methods; with ``no_windows``
    (``--no-err-windows``) errors go to stderr and questions get their safe answer."""

    def __init__(self, parent: QWidget | None, *, no_windows: bool = False) -> None:
        self.parent = parent
        self.no_windows = no_windows
        self._open: list[QDialog] = []

    def _keep(self, dialog: QDialog) -> None:
        self._open.append(dialog)
        dialog.finished.connect(
            lambda _r: self._open.remove(dialog) if dialog in self._open else None
        )
        dialog.open()

    def persistence_error(
        self,
        event: PersistenceErrorEvent,
        on_retry: Callable[[], object],
        on_save_copy: Callable[[], object],
    ) -> None:
        if self.no_windows:
            sys.stderr.write(f"desktop-agent: could not save: {event.message}\n")
            return
        self._keep(PersistenceErrorDialog(self.parent, event, on_retry, on_save_copy))

    def damaged_session(
        self, path: str, report: RecoveryReport, on_repair: Callable[[], object]
    ) -> None:
        if self.no_windows:
            sys.stderr.write(f"desktop-agent: {path}: {report.describe()}\n")
            return
        self._keep(DamagedSessionDialog(self.parent, path, report, on_repair))

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision | None:
        if self.no_windows:
            sys.stderr.write(f"desktop-agent: denied {request.tool_name} (no windows)\n")
            return ApprovalDecision.DENY
        dialog = ApprovalDialog(self.parent, request)
        done: asyncio.Future[ApprovalDecision | None] = asyncio.get_running_loop().create_future()
        dialog.finished.connect(
            lambda _r: done.set_result(dialog.decision) if not done.done() else None
        )
        self._keep(dialog)
        try:
            return await done
        finally:
            dialog.close()

    def error(self, title: str, text: str) -> None:
        if self.no_windows:
            sys.stderr.write(f"desktop-agent: {title}: {text}\n")
            return
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, parent=self.parent)
        self._keep(box)

    async def settings(
        self, values: dict[str, Any], keystore_problem: str | None, models: list[tuple[str, str]]
    ) -> dict[str, Any] | None:
        dialog = SettingsDialog(self.parent, values, keystore_problem, models)
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        dialog.finished.connect(lambda r: done.set_result(r) if not done.done() else None)
        self._keep(dialog)
        result = await done
        return dialog.result_values() if result == QDialog.DialogCode.Accepted else None
