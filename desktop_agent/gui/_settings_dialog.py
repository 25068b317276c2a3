"""Settings: providers and their keys, a local or custom server (with "Test connection"),
the default model, approvals, the Enter key, the theme, the session store. It edits a
`SettingsForm` and gives it back; the workbench applies it."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Awaitable, Callable
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._tr import QT_TRANSLATE_NOOP
from desktop_agent.workbench import (
    SettingsForm,
    database_url_problem,
    normalize_server_url,
    server_url_problem,
)

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
        self.keychain_note: QLabel | None = None
        if form.keychain_problem:
            self.keychain_note = QLabel(self)
            self.keychain_note.setObjectName("keychainProblem")
            self.keychain_note.setWordWrap(True)
            fields.addRow(self.keychain_note)
        self.keys_in_file = QCheckBox(self.tr("Keep keys in a file only you can read"), self)
        self.keys_in_file.setObjectName("keysInFile")
        self.keys_in_file.setChecked(form.keys_in_file)
        self.keys_in_file.setToolTip(form.key_file or "")
        self.keys_in_file.setEnabled(form.key_file is not None)
        self.keys_in_file.toggled.connect(lambda _on: self._say_where_keys_go())
        self._say_where_keys_go()
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
        self.url_problem = self._problem_line(fields, "localServerUrlProblem")
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
        if form.where_kept:  # in its tip, as for the keys (p1: a bracket in a bracket, cut)
            self.database_password.setToolTip(
                self.tr("A password typed here is {where}.").format(where=form.where_kept)
            )

        def shared(index: int) -> None:
            on = self.store.itemData(index) == "postgres"
            self.database_url.setEnabled(on)
            self.database_password.setEnabled(on)

        self.store.currentIndexChanged.connect(shared)
        shared(self.store.currentIndex())
        fields.addRow(self.tr("Sessions are kept"), self.store)
        fields.addRow(self.tr("Server"), self.database_url)
        self.database_problem = self._problem_line(fields, "databaseUrlProblem")
        self.database_url.textEdited.connect(lambda _t: self._check_database(typing=True))
        self.store.currentIndexChanged.connect(lambda _i: self._check_database(typing=True))
        fields.addRow(self.tr("Its password"), self.database_password)

    def _say_where_keys_go(self) -> None:
        """Without a keychain: that a key cannot be saved, or, with the box ticked, the
        file it goes to (seen in a real X window: ticked, it still said "cannot be
        saved")."""
        note, form = self.keychain_note, self._form
        if note is None:
            return
        if self.keys_in_file.isChecked() and form.key_file:
            text = self.tr(
                "No system keychain was found: the keys typed here are kept in {file}, a file"
                " only you can read."
            ).format(file=form.key_file)
        else:
            text = form.keychain_problem or ""
        note.setText(f"<i>{html.escape(text)}</i>")

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A window is sized from its layout's minimum, which never asks a wrapped text
        (the keychain's explanation, the test's answer) how tall it is at this width: it
        showed two lines of five. The minimum height follows the width instead."""
        super().resizeEvent(event)
        self._fit_height(event.size().width())

    def _fit_height(self, width: int | None = None) -> None:
        """The minimum height for ``width`` (now: the dialog's): also after a line under a
        field comes or goes (a URL's problem, the test's answer), which resizes nothing,
        so the dialog grows rather than squeeze the texts above (seen in a real window:
        the keychain's explanation cut to two lines)."""
        layout = self.layout()
        if layout is not None and layout.hasHeightForWidth():
            needed = layout.totalHeightForWidth(self.width() if width is None else width)
            if needed != self.minimumHeight():
                self.setMinimumHeight(needed)  # (grows the dialog when it is shorter)

    def _check_url(self, *, complete: bool) -> bool:
        """Inline validation of the server URL (``complete``: typing is done, so
        ``http://`` is added to ``localhost:1234``); True when it can be saved."""
        text = self.local_url.text()
        problem = server_url_problem(text)
        if problem is None and complete and text.strip():
            fixed = normalize_server_url(text)
            if fixed != text:
                self.local_url.setText(fixed)
        return self._say_problem(self.url_problem, problem, typing=not complete)

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
        self._fit_height()

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
        if not self._check_database(typing=False):
            self.database_url.setFocus(Qt.FocusReason.OtherFocusReason)
            return
        super().accept()

    def _problem_line(self, fields: QFormLayout, name: str) -> QLabel:
        """The line under a field that says why Save refused its value (hidden until then)."""
        line = QLabel(self)
        line.setObjectName(name)
        line.setWordWrap(True)
        line.setStyleSheet("color: palette(highlight);")
        line.hide()
        fields.addRow("", line)
        return line

    def _check_database(self, *, typing: bool) -> bool:
        """Inline validation of the PostgreSQL server's address, when sessions are to be
        kept there (``typing``: shown only once Save showed it); True when it can be saved."""
        problem = None
        if self.store.currentData() == "postgres":
            problem = database_url_problem(self.database_url.text())
        return self._say_problem(self.database_problem, problem, typing=typing)

    def _say_problem(self, line: QLabel, problem: str | None, *, typing: bool) -> bool:
        """``problem`` on ``line`` under its field (gone when None); True when there is
        none. While typing, a problem is shown only once Save showed it."""
        if problem is not None and typing and not line.isVisible():
            return False
        line.setText(problem or "")
        line.setVisible(problem is not None)
        self._fit_height()
        return problem is None

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
