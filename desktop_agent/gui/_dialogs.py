"""Dialogs, each behind one small entry point of `Dialogs` that tests can replace.

None of them blocks the event loop: they are shown with ``open()``/``show()`` and report
through callbacks or futures. With ``--no-err-windows`` they write to stderr instead.
"""

from __future__ import annotations

import asyncio
import html
import os
import shlex
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace

from PySide6.QtCore import QCoreApplication, QSize, Qt
from PySide6.QtGui import QFontMetrics, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._actions import shortcut_rows
from desktop_agent.gui._mcp import add_settings_row
from desktop_agent.gui._tr import QT_TRANSLATE_NOOP
from desktop_agent.session import RecoveryReport
from desktop_agent.tools import ApprovalDecision, ApprovalRequest
from desktop_agent.utils.versions import APP_VERSION
from desktop_agent.workbench import (
    PersistenceErrorEvent,
    SettingsForm,
    entries_phrase,
    normalize_server_url,
    server_url_problem,
)

CHANGED_ON_DISK = "changed_on_disk"
"""The save error of a file another program wrote to: only a reload can save."""


def _tr(text: str) -> str:
    return QCoreApplication.translate("Dialogs", text)


class PersistenceErrorDialog(QDialog):
    """What could not be saved, where and why; nothing is lost yet. Retry / Save a copy.

    When another program changed the file (code ``changed_on_disk``) a retry cannot
    succeed: the dialog says so and offers Reload (their entries come in, ours stay as a
    branch) in place of Retry."""

    def __init__(
        self,
        parent: QWidget | None,
        event: PersistenceErrorEvent,
        on_retry: Callable[[], object],
        on_save_copy: Callable[[], object],
        on_reload: Callable[[], object] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("persistenceErrorDialog")
        self.changed_on_disk = event.code == CHANGED_ON_DISK and on_reload is not None
        self.setWindowTitle(
            self.tr("The session was changed by another program")
            if self.changed_on_disk
            else self.tr("The session could not be saved")
        )
        self.setWindowModality(Qt.WindowModality.NonModal)
        self._where = event.path or self.tr("the session file")
        self._why = event.os_error or event.code
        text = QLabel(self)
        text.setObjectName("persistenceErrorText")
        self._text = text
        self.set_pending(event.pending_count)
        text.setWordWrap(True)
        text.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        details = QPlainTextEdit(event.message)
        details.setObjectName("persistenceErrorDetails")
        details.setReadOnly(True)
        details.setVisible(False)
        buttons = QDialogButtonBox(self)
        if self.changed_on_disk and on_reload is not None:
            retry = buttons.addButton(self.tr("Reload"), QDialogButtonBox.ButtonRole.AcceptRole)
            retry.setObjectName("reloadButton")
            retry.setAccessibleName(self.tr("Reload the session from its file"))
            retry.setToolTip(
                self.tr(
                    "Take in what the other program wrote; your entries stay, as a branch"
                    " from where the two diverged"
                )
            )
            retry.clicked.connect(lambda: on_reload())
        else:
            retry = buttons.addButton(self.tr("Retry"), QDialogButtonBox.ButtonRole.AcceptRole)
            retry.setObjectName("retryButton")
            retry.clicked.connect(lambda: on_retry())
        retry.clicked.connect(self.accept)
        copy = buttons.addButton(
            self.tr("Save a copy elsewhere…"), QDialogButtonBox.ButtonRole.ActionRole
        )
        copy.setObjectName("saveCopyButton")
        more = buttons.addButton(self.tr("Details"), QDialogButtonBox.ButtonRole.HelpRole)
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        copy.clicked.connect(on_save_copy)
        more.clicked.connect(lambda: self._show_details(not details.isVisible()))
        close.clicked.connect(self.reject)
        self._details = details
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(details, 1)
        layout.addSpacing(8)
        layout.addWidget(buttons)
        # As tall as its text (a fixed height left an empty band above the text).
        self.setMinimumWidth(520)
        self.adjustSize()

    def _show_details(self, shown: bool) -> None:
        self._details.setVisible(shown)
        self.adjustSize()

    def set_pending(self, count: int) -> None:
        """Say how many entries wait in memory now (it grows while the run goes on)."""
        waiting = (self.tr("{entries} is") if count == 1 else self.tr("{entries} are")).format(
            entries=entries_phrase(count)
        )
        if self.changed_on_disk:
            self._text.setText(
                self.tr(
                    "<b>Another program changed this session's file</b> (the Pi coding"
                    " agent, or another tool wrote to it while it was open here), so Desktop"
                    " Agent did not write over what it wrote.<br><br>File: {0}<br><br>"
                    "<b>Nothing is lost.</b> {1} kept in memory. Press Reload: what the other"
                    " program wrote comes in, and your entries are kept as a branch from"
                    " where the two diverged. Retrying cannot help here."
                ).format(html.escape(self._where), waiting)
            )
            return
        self._text.setText(
            self.tr(
                "<b>Desktop Agent could not save this session.</b><br><br>"
                "Where: {where}<br>Why: {why}<br><br>"
                "<b>Nothing is lost yet.</b> {waiting} kept in memory, unsaved. Fix the "
                "problem (free some disk space, check permissions) and press Retry, or save a "
                "copy of the whole session somewhere else."
            ).format(where=self._where, why=self._why, waiting=waiting)
        )


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
        self.setWindowTitle(self.tr("This session was damaged"))
        lines = [f"<b>{path}</b>", "", report.describe() + "."]
        if report.damaged:
            lines.append(
                self.tr(
                    "The session is open read-only and the file was not changed. "
                    "“Repair” writes the readable entries to a new file beside it."
                )
            )
        label = QLabel("<br>".join(lines))
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(self)
        ok = buttons.addButton(
            self.tr("Open read-only") if report.damaged else self.tr("OK"),
            QDialogButtonBox.ButtonRole.AcceptRole,
        )
        ok.clicked.connect(self.accept)
        if report.damaged:
            repair = buttons.addButton(
                self.tr("Repair into a new file"), QDialogButtonBox.ButtonRole.ActionRole
            )
            repair.setObjectName("repairButton")
            repair.clicked.connect(self.accept)
            repair.clicked.connect(lambda: on_repair())
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(buttons)
        self.resize(520, 220)


def approval_text(request: ApprovalRequest) -> str:
    """The command as the shell will run it (each argument quoted), or the diff."""
    if request.command:
        return shlex.join(request.command)
    return request.diff or request.summary


def fitting_size(body: QPlainTextEdit, extra_height: int) -> QSize:
    """A dialog size that shows ``body``'s text without scrolling when it fits on the
    screen (between 420x200 and 80 % of the screen)."""
    fm = QFontMetrics(body.font())
    lines = body.toPlainText().split("\n")
    width = max(fm.horizontalAdvance(line) for line in lines[:500]) + 60
    height = fm.lineSpacing() * min(len(lines), 200) + 24 + extra_height
    screen = QGuiApplication.primaryScreen()
    room = screen.availableGeometry().size() * 0.8
    return QSize(max(420, min(width, room.width())), max(200, min(height, room.height())))


class ApprovalDialog(QDialog):
    """Command or diff, working directory; allow once / always for this session / deny."""

    def __init__(self, parent: QWidget | None, request: ApprovalRequest) -> None:
        super().__init__(parent)
        self.setObjectName("approvalDialog")
        self.setWindowTitle(self.tr("Allow {tool}?").format(tool=request.tool_name))
        self.decision: ApprovalDecision | None = None
        title = self.tr("<b>The agent wants to run {tool}</b> in {folder}")
        if request.sandbox_blocked:
            title = self.tr("<b>The sandbox blocked this {tool} command</b> in {folder}")
        head = QLabel(title.format(tool=request.tool_name, folder=request.cwd))
        head.setWordWrap(True)
        why: QLabel | None = None
        if request.sandbox_blocked or request.unconfined:
            why = QLabel(
                self.tr(
                    "Run outside the sandbox, it can change any of your files and read the "
                    "app's settings. It stays blocked unless you choose to."
                )
                if request.sandbox_blocked
                else QCoreApplication.translate("notices", request.unconfined or ""),
                self,
            )
            why.setObjectName("sandboxBlocked" if request.sandbox_blocked else "noSandbox")
            why.setWordWrap(True)
        body = QPlainTextEdit(self)
        body.setObjectName("approvalText")
        body.setReadOnly(True)
        body.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        body.setPlainText(approval_text(request))
        buttons = QDialogButtonBox(self)
        choices = [
            (self.tr("Allow &once"), ApprovalDecision.ALLOW_ONCE),
            (self.tr("&Always allow in this session"), ApprovalDecision.ALLOW_ALWAYS),
            (self.tr("&Deny"), ApprovalDecision.DENY),
        ]
        if request.sandbox_blocked:  # Alt+R, Alt+K
            choices = [
                (
                    self.tr("&Run outside the sandbox, once"),
                    ApprovalDecision.RUN_OUTSIDE_SANDBOX_ONCE,
                ),
                (self.tr("&Keep it blocked"), ApprovalDecision.DENY),
            ]
        elif request.unconfined:  # asked every time: "always" would not be kept
            choices.pop(1)
        for label, decision in choices:
            # Alt+O, Alt+A, Alt+D; no default button: Enter never approves by accident
            button = QPushButton(label, self)
            button.setAutoDefault(False)
            button.clicked.connect(lambda _=False, d=decision: self._decide(d))
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addWidget(head)
        if why is not None:
            layout.addWidget(why)
        layout.addWidget(body)
        layout.addWidget(buttons)
        extra = why.sizeHint().height() if why is not None else 0
        self.resize(fitting_size(body, head.sizeHint().height() + extra + 90))

    def _decide(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.accept()


class QuitUnsavedDialog(QMessageBox):
    """Quitting while entries are not saved: Retry / Save a copy… / Quit without them."""

    def __init__(self, parent: QWidget | None, count: int) -> None:
        super().__init__(parent)
        self.setObjectName("quitUnsavedDialog")
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle(self.tr("Entries are not saved"))
        text = (
            self.tr("{entries} is not saved.")
            if count == 1
            else self.tr("{entries} are not saved.")
        )
        self.setText(text.format(entries=entries_phrase(count)))
        self.setInformativeText(
            self.tr(
                "Retry saving (after freeing disk space), save a copy of the whole session "
                "somewhere else, or quit without them."
            )
        )
        self.retry = self.addButton(self.tr("Retry"), QMessageBox.ButtonRole.AcceptRole)
        self.retry.setObjectName("quitRetry")
        self.copy = self.addButton(self.tr("Save a copy…"), QMessageBox.ButtonRole.ActionRole)
        self.copy.setObjectName("quitSaveCopy")
        self.drop = self.addButton(
            self.tr("Quit without them"), QMessageBox.ButtonRole.DestructiveRole
        )
        self.drop.setObjectName("quitWithout")
        self.addButton(QMessageBox.StandardButton.Cancel)

    def choice(self) -> str:
        clicked = self.clickedButton()
        for button, name in ((self.retry, "retry"), (self.copy, "copy"), (self.drop, "quit")):
            if clicked is button:
                return name
        return "cancel"


_PROTOCOLS = (
    (
        "openai-completions",
        QT_TRANSLATE_NOOP("SettingsDialog", "OpenAI-compatible (chat completions)"),
    ),
    ("openai-responses", QT_TRANSLATE_NOOP("SettingsDialog", "OpenAI Responses API")),
    ("anthropic-messages", QT_TRANSLATE_NOOP("SettingsDialog", "Anthropic-compatible (messages)")),
)


ServerTest = Callable[[str, str, str | None], Awaitable[list[str]]]
"""(url, protocol, key) -> the ids of the models the server lists."""


class SettingsDialog(QDialog):
    """Providers and keys, a local or custom server, default model, approvals, Enter."""

    def __init__(
        self, parent: QWidget | None, form: SettingsForm, test: ServerTest | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self._test = test
        self._testing: asyncio.Task[list[str]] | None = None
        self.setWindowTitle(self.tr("Settings"))
        self._form = form
        fields = QFormLayout()
        self.key_fields: dict[str, QLineEdit] = {}
        for provider, label, shape in (
            ("openai", self.tr("OpenAI API key"), "sk-…"),
            ("anthropic", self.tr("Anthropic API key"), "sk-ant-…"),
        ):
            fields.addRow(label, self._key_field(provider, shape))
        if form.keychain_problem:
            warning = QLabel(f"<i>{form.keychain_problem}</i>")
            warning.setObjectName("keychainProblem")
            warning.setWordWrap(True)
            fields.addRow(warning)
        self.keys_in_file = QCheckBox(self.tr("Keep keys in a file only you can read"), self)
        self.keys_in_file.setObjectName("keysInFile")
        self.keys_in_file.setChecked(form.keys_in_file)
        self.keys_in_file.setToolTip(form.key_file or "")
        self.keys_in_file.setEnabled(form.key_file is not None)
        fields.addRow("", self.keys_in_file)
        self.local_url = QLineEdit(form.local_url or "", self)
        self.local_url.setObjectName("localServerUrl")
        self.local_url.setPlaceholderText(self.tr("localhost:1234 or http://127.0.0.1:11434/v1"))
        self.protocol = QComboBox(self)
        self.protocol.setObjectName("localServerProtocol")
        for value, text in _PROTOCOLS:
            self.protocol.addItem(self.tr(text), value)
        self.protocol.setCurrentIndex(max(self.protocol.findData(form.local_protocol), 0))
        url_row = QHBoxLayout()
        url_row.addWidget(self.local_url, 1)
        self.test_button = QPushButton(self.tr("Test connection"), self)
        self.test_button.setObjectName("testConnection")
        self.test_button.setToolTip(self.tr("Ask the server for its models, without saving"))
        self.test_button.setEnabled(test is not None)
        self.test_button.clicked.connect(self._start_test)
        url_row.addWidget(self.test_button)
        fields.addRow(self.tr("Local or custom server"), url_row)
        self.test_result = QLabel(self)
        self.test_result.setObjectName("testConnectionResult")
        self.test_result.setWordWrap(True)
        self.test_result.hide()
        fields.addRow("", self.test_result)
        self.finished.connect(self._cancel_test)
        self.url_problem = QLabel(self)
        self.url_problem.setObjectName("localServerUrlProblem")
        self.url_problem.setWordWrap(True)
        self.url_problem.setStyleSheet("color: palette(highlight);")
        self.url_problem.hide()
        fields.addRow("", self.url_problem)
        self.local_url.textEdited.connect(lambda _t: self._check_url(complete=False))
        self.local_url.editingFinished.connect(lambda: self._check_url(complete=True))
        fields.addRow(self.tr("It speaks"), self.protocol)
        fields.addRow(self.tr("Its API key (if it needs one)"), self._key_field("local", ""))
        self.discover = QCheckBox(self.tr("Also look for Ollama, LM Studio, llama.cpp, vLLM"), self)
        self.discover.setChecked(form.discover_local_servers)
        fields.addRow("", self.discover)
        self.default_model = QComboBox(self)
        self.default_model.setObjectName("defaultModel")
        for key, label in form.models:
            self.default_model.addItem(label, key)
        if not form.models:
            self.default_model.addItem(self.tr("(add a key or a server first)"), None)
        self.default_model.setCurrentIndex(max(self.default_model.findData(form.default_model), 0))
        fields.addRow(self.tr("Default model"), self.default_model)
        self.approval: dict[str, QComboBox] = {}
        for tool in ("bash", "write", "edit"):
            box = QComboBox(self)
            for rule, rule_text in (
                ("ask", self.tr("ask")),
                ("allow", self.tr("allow")),
                ("deny", self.tr("deny")),
            ):
                box.addItem(rule_text, rule)
            box.setCurrentIndex(max(box.findData(form.approval.get(tool, "ask")), 0))
            self.approval[tool] = box
            fields.addRow(self.tr("Before {tool}").format(tool=tool), box)
        self.shell_network = QCheckBox(self.tr("Shell commands may use the network"), self)
        self.shell_network.setObjectName("shellNetwork")
        self.shell_network.setChecked(form.shell_network)
        self.shell_network.setToolTip(
            self.tr("Package installs need it. Off: commands run with no network at all.")
        )
        fields.addRow(self.tr("Sandbox"), self.shell_network)
        if form.sandbox_problem:
            no_sandbox = QLabel(f"<i>{form.sandbox_problem}</i>")
            no_sandbox.setObjectName("sandboxProblem")
            no_sandbox.setWordWrap(True)
            fields.addRow(no_sandbox)
        self.send_key = QComboBox(self)
        self.send_key.addItem(self.tr("Enter sends, Shift+Enter new line"), "enter")
        self.send_key.addItem(self.tr("Ctrl+Enter sends, Enter new line"), "ctrl+enter")
        self.send_key.setCurrentIndex(max(self.send_key.findData(form.send_key), 0))
        fields.addRow(self.tr("Send with"), self.send_key)
        self.theme = QComboBox(self)
        self.theme.setObjectName("themePicker")
        for value, text in (
            ("system", self.tr("Like the system (light or dark)")),
            ("light", self.tr("Light")),
            ("dark", self.tr("Dark")),
        ):
            self.theme.addItem(text, value)
        self.theme.setCurrentIndex(max(self.theme.findData(form.theme), 0))
        fields.addRow(self.tr("Theme"), self.theme)
        self.pi_sessions = QCheckBox(self.tr("Show the Pi coding agent's sessions"), self)
        self.pi_sessions.setObjectName("piSessionsEnabled")
        self.pi_sessions.setAccessibleName(self.tr("Show the Pi coding agent's sessions"))
        self.pi_sessions.setChecked(form.pi_sessions)
        self.pi_folder = QLineEdit(form.pi_folder or "", self)
        self.pi_folder.setObjectName("piSessionsFolder")
        self.pi_folder.setAccessibleName(self.tr("Folder of the Pi coding agent's sessions"))
        self.pi_folder.setPlaceholderText(form.pi_default_folder or "~/.pi/agent/sessions")
        self.pi_folder.setToolTip(
            self.tr("Empty: where Pi keeps them. Nothing is shown when the folder does not exist.")
        )
        self.pi_sessions.toggled.connect(self.pi_folder.setEnabled)
        self.pi_folder.setEnabled(form.pi_sessions)
        fields.addRow(self.tr("Pi sessions"), self.pi_sessions)
        fields.addRow(self.tr("Their folder"), self.pi_folder)
        self.follow_branch = QComboBox(self)
        self.follow_branch.setObjectName("followBranch")
        self.follow_branch.setAccessibleName(self.tr("When you switch branches, the files"))
        for value, text in (
            ("ask", self.tr("Ask whether to restore them")),
            ("always", self.tr("Follow the branch (restore them)")),
            ("never", self.tr("Stay as they are")),
        ):
            self.follow_branch.addItem(text, value)
        self.follow_branch.setCurrentIndex(max(self.follow_branch.findData(form.follow_branch), 0))
        fields.addRow(self.tr("When you switch branches, the files"), self.follow_branch)
        if form.checkpoints_bytes is not None:
            size = QLabel(
                self.tr("{size} MB in the app's data folder").format(
                    size=f"{form.checkpoints_bytes / 1e6:.1f}"
                ),
                self,
            )
            size.setObjectName("checkpointsSize")
            fields.addRow(self.tr("Checkpoints of the files"), size)
            self.prune = QCheckBox(self.tr("Remove checkpoints older than"), self)
            self.prune.setObjectName("pruneCheckpoints")
            self.prune_days = QSpinBox(self)
            self.prune_days.setObjectName("pruneDays")
            self.prune_days.setRange(1, 3650)
            self.prune_days.setValue(30)
            self.prune_days.setSuffix(self.tr(" days"))
            self.prune_days.setAccessibleName(self.tr("Days"))
            row = QHBoxLayout()
            row.addWidget(self.prune)
            row.addWidget(self.prune_days)
            row.addStretch(1)
            fields.addRow("", row)
        self._store_fields(fields, form)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(fields)
        layout.addWidget(buttons)

    def _store_fields(self, fields: QFormLayout, form: SettingsForm) -> None:
        """Where sessions are kept (from the next start) and the PostgreSQL server."""
        self.store = QComboBox(self)
        self.store.setObjectName("storeKind")
        self.store.setAccessibleName(self.tr("Where sessions are kept"))
        for value, label in (
            ("jsonl", self.tr("Files on this computer (Pi-compatible)")),
            ("sqlite", self.tr("One SQLite database on this computer")),
            ("postgres", self.tr("A PostgreSQL server (shared)")),
        ):
            self.store.addItem(label, value)
        self.store.setCurrentIndex(max(0, self.store.findData(form.store)))
        self.database_url = QLineEdit(form.database_url, self)
        self.database_url.setObjectName("databaseUrl")
        self.database_url.setAccessibleName(self.tr("PostgreSQL server URL"))
        self.database_url.setPlaceholderText(
            self.tr("postgresql://me@db.example/agent?sslmode=verify-full")
        )
        self.database_password = QLineEdit(self)
        self.database_password.setObjectName("databasePassword")
        self.database_password.setAccessibleName(self.tr("PostgreSQL password"))
        self.database_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.database_password.setPlaceholderText(f"({form.where_kept})" if form.where_kept else "")

        def shared(index: int) -> None:
            on = self.store.itemData(index) == "postgres"
            self.database_url.setEnabled(on)
            self.database_password.setEnabled(on)

        self.store.currentIndexChanged.connect(shared)
        shared(self.store.currentIndex())
        fields.addRow(self.tr("Sessions are kept"), self.store)
        fields.addRow(self.tr("Server"), self.database_url)
        fields.addRow(self.tr("Its password"), self.database_password)

    def _check_url(self, *, complete: bool) -> bool:
        """Inline validation of the server URL (``complete``: typing is done, so
        ``http://`` is added to ``localhost:1234``); True when it can be saved."""
        text = self.local_url.text()
        problem = server_url_problem(text)
        if problem is None and complete and text.strip():
            fixed = normalize_server_url(text)
            if fixed != text:
                self.local_url.setText(fixed)
        if problem is not None and not complete and not self.url_problem.isVisible():
            return False  # while typing, a problem is shown only once it was shown at Save
        self.url_problem.setText(problem or "")
        self.url_problem.setVisible(problem is not None)
        return problem is None

    def _start_test(self) -> None:
        """Test connection: the server's models, listed here and offered as the default."""
        if self._test is None or not self._check_url(complete=True):
            return
        url = self.local_url.text().strip()
        if not url:
            self._show_test(self.tr("Type the server's address first."))
            return
        if self._testing is not None:
            self._testing.cancel()
        self._show_test(self.tr("Connecting to %s…") % url)
        key = self.key_fields["local"].text().strip() or None
        task = asyncio.ensure_future(self._test(url, self.protocol.currentData(), key))
        self._testing = task
        task.add_done_callback(self._tested)

    def _cancel_test(self) -> None:
        if self._testing is not None:
            self._testing.cancel()

    def _show_test(self, text: str) -> None:
        self.test_result.setText(text)
        self.test_result.setVisible(bool(text))

    def _tested(self, task: asyncio.Task[list[str]]) -> None:
        if task.cancelled() or task is not self._testing:
            return
        self._testing = None
        exc = task.exception()
        if exc is not None:
            self._show_test(str(exc))  # a sentence (WorkbenchError)
            return
        ids = task.result()
        if not ids:
            self._show_test(self.tr("Connected, but the server lists no model."))
            return
        shown = ", ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
        self._show_test(self.tr("Connected. It lists: %s") % shown)
        current = self.default_model.currentData()
        others = [(k, label) for k, label in self._form.models if not k.startswith("local/")]
        self.default_model.clear()
        for key, label in [*others, *((f"local/{i}", f"{i} (local)") for i in ids)]:
            self.default_model.addItem(label, key)
        found = self.default_model.findData(current)
        self.default_model.setCurrentIndex(found if found >= 0 else len(others))

    def accept(self) -> None:
        """Save, unless a field is not valid: then it says why and the dialog (with every
        other edit) stays open."""
        if not self._check_url(complete=True):
            self.local_url.setFocus(Qt.FocusReason.OtherFocusReason)
            return
        super().accept()

    def _key_field(self, provider: str, shape: str) -> QLineEdit:
        field = QLineEdit(self)
        field.setObjectName(f"{provider}Key")
        field.setEchoMode(QLineEdit.EchoMode.Password)
        has_key = self._form.has_key.get(provider)
        state = self.tr("a key is set; type to replace it") if has_key else ""
        # Where a key is kept is the tip's (it was in brackets inside the placeholder's
        # brackets, cut at the field's width: FIRST_HOUR.md p1).
        field.setPlaceholderText(f"{shape} ({state})" if shape and state else shape or state)
        field.setToolTip(
            self.tr("A key typed here is {where}.").format(where=self._form.where_kept)
        )
        self.key_fields[provider] = field
        return field

    def result_form(self) -> SettingsForm:
        keys = {p: f.text().strip() for p, f in self.key_fields.items() if f.text().strip()}
        return replace(
            self._form,
            keys=keys,
            local_url=self.local_url.text().strip() or None,
            local_protocol=self.protocol.currentData(),
            discover_local_servers=self.discover.isChecked(),
            default_model=self.default_model.currentData(),
            send_key=self.send_key.currentData(),
            theme=self.theme.currentData(),
            approval={tool: box.currentData() for tool, box in self.approval.items()},
            shell_network=self.shell_network.isChecked(),
            keys_in_file=self.keys_in_file.isChecked(),
            pi_sessions=self.pi_sessions.isChecked(),
            pi_folder=self.pi_folder.text().strip() or None,
            follow_branch=self.follow_branch.currentData(),
            prune_days=(
                self.prune_days.value()
                if self._form.checkpoints_bytes is not None and self.prune.isChecked()
                else None
            ),
            store=self.store.currentData(),
            database_url=self.database_url.text().strip(),
            database_password=self.database_password.text(),
        )


class ShortcutsDialog(QDialog):
    """Help -> Keyboard shortcuts: every key of the window, from the one action table."""

    def __init__(self, parent: QWidget | None, rows: list[tuple[str, str]]) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle(self.tr("Keyboard shortcuts"))
        table = QTableWidget(len(rows), 2, self)
        table.setObjectName("shortcutsTable")
        table.setAccessibleName(self.tr("Keyboard shortcuts"))
        table.setHorizontalHeaderLabels([self.tr("Keys"), self.tr("Does")])
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        for i, (keys, what) in enumerate(rows):
            table.setItem(i, 0, QTableWidgetItem(keys))
            table.setItem(i, 1, QTableWidgetItem(what))
        table.resizeColumnsToContents()
        table.horizontalHeader().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.resize(560, 520)
        self.table = table

    def rows(self) -> list[tuple[str, str]]:
        t = self.table
        cells = [(t.item(i, 0), t.item(i, 1)) for i in range(t.rowCount())]
        return [(a.text(), b.text()) for a, b in cells if a is not None and b is not None]


class Dialogs:
    """Entry points for every dialog. Tests replace these methods; with ``no_windows``
    (``--no-err-windows``) errors go to stderr and questions get their safe answer."""

    def __init__(self, parent: QWidget | None, *, no_windows: bool = False) -> None:
        self.parent = parent
        self.no_windows = no_windows
        self._open: list[QDialog] = []
        self.test_server: ServerTest | None = None
        """Settings' "Test connection" (the workbench's `test_server`)."""

    def keep(self, dialog: QDialog) -> None:
        """Show a non-modal dialog, kept alive until it is closed."""
        self._keep(dialog)

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
        on_reload: Callable[[], object] | None = None,
    ) -> None:
        if self.no_windows:
            sys.stderr.write(f"desktop-agent: could not save: {event.message}\n")
            return
        self._keep(PersistenceErrorDialog(self.parent, event, on_retry, on_save_copy, on_reload))

    def set_pending(self, count: int) -> None:
        """Keep the count of an open "could not save" dialog right."""
        for dialog in self._open:
            if isinstance(dialog, PersistenceErrorDialog):
                dialog.set_pending(count)

    async def quit_unsaved(self, count: int) -> str:
        """ "retry", "copy", "quit" or "cancel": what to do with unsaved entries."""
        box = QuitUnsavedDialog(self.parent, count)
        done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        box.finished.connect(lambda _r: done.set_result(box.choice()) if not done.done() else None)
        self._keep(box)
        return await done

    def stop_or_wait(self) -> str:
        """ "stop", "wait" or "cancel": quitting while the agent works."""
        box = QMessageBox(self.parent)
        box.setWindowTitle(QCoreApplication.translate("Dialogs", "The agent is still working"))
        box.setText(
            QCoreApplication.translate(
                "Dialogs", "Stop the agent now, or wait until it has finished?"
            )
        )
        stop = box.addButton(
            QCoreApplication.translate("Dialogs", "Stop and quit"),
            QMessageBox.ButtonRole.DestructiveRole,
        )
        wait = box.addButton(
            QCoreApplication.translate("Dialogs", "Wait, then quit"),
            QMessageBox.ButtonRole.AcceptRole,
        )
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        clicked = box.clickedButton()
        return "stop" if clicked is stop else "wait" if clicked is wait else "cancel"

    async def ask_folder(self, title: str) -> str | None:
        dialog = QFileDialog(self.parent, title)
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly)
        return await self._chosen_file(dialog)

    async def ask_save_path(self, title: str, suggested: str, filters: str) -> str | None:
        folder, name = os.path.split(suggested)
        dialog = QFileDialog(self.parent, title, folder, filters)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        if name:
            dialog.selectFile(name)
        return await self._chosen_file(dialog)

    async def _chosen_file(self, dialog: QFileDialog) -> str | None:
        """The file or folder chosen in ``dialog``, None if cancelled. Opened, never
        exec()'d: a nested event loop inside a coroutine stalls the qasync loop."""
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        dialog.finished.connect(lambda r: done.set_result(r) if not done.done() else None)
        self._keep(dialog)
        result = await done
        files = dialog.selectedFiles()
        dialog.deleteLater()
        return files[0] if result == QDialog.DialogCode.Accepted and files else None

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

    def about(self) -> QMessageBox:
        """Help → About: the app's name and version (p15)."""
        box = QMessageBox(self.parent)
        box.setObjectName("aboutDialog")
        box.setWindowTitle(QCoreApplication.translate("Dialogs", "About Desktop Agent"))
        box.setText(
            QCoreApplication.translate("Dialogs", "Desktop Agent {version}").format(
                version=APP_VERSION
            )
        )
        box.setInformativeText(
            QCoreApplication.translate(
                "Dialogs", "An AI agent for your project folder; sessions in Pi's format v3."
            )
        )
        self._keep(box)
        return box

    def shortcuts(self) -> ShortcutsDialog:
        dialog = ShortcutsDialog(self.parent, shortcut_rows())
        self._keep(dialog)
        return dialog

    async def settings(self, form: SettingsForm) -> SettingsForm | None:
        dialog = SettingsDialog(self.parent, form, self.test_server)
        add_settings_row(dialog, self.parent)  # the MCP servers' statuses
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        dialog.finished.connect(lambda r: done.set_result(r) if not done.done() else None)
        self._keep(dialog)
        result = await done
        return dialog.result_form() if result == QDialog.DialogCode.Accepted else None
