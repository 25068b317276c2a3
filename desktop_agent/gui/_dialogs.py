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
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QSize, Qt
from PySide6.QtGui import QFontDatabase, QFontMetrics, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._action_table import shortcut_rows
from desktop_agent.gui._settings_dialog import ServerTest, SettingsDialog
from desktop_agent.gui._theme import is_dark
from desktop_agent.gui._titles import fit_title
from desktop_agent.gui.chat._highlight import DiffHighlighter
from desktop_agent.session import RecoveryReport
from desktop_agent.tools import ApprovalAnswer, ApprovalDecision, ApprovalRequest
from desktop_agent.utils.versions import APP_VERSION
from desktop_agent.workbench import (
    PersistenceErrorEvent,
    SettingsForm,
    entries_phrase,
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
        *,
        on_server: bool = False,
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
        # A session on a PostgreSQL server: the disk advice would send the person to
        # the wrong place.
        self._on_server = on_server
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
        fix = (
            self.tr("check that the database server is running and can be reached")
            if self._on_server
            else self.tr("free some disk space, check permissions")
        )
        self._text.setText(
            self.tr(
                "<b>Desktop Agent could not save this session.</b><br><br>"
                "Where: {where}<br>Why: {why}<br><br>"
                "<b>Nothing is lost yet.</b> {waiting} kept in memory, unsaved. Fix the "
                "problem ({fix}) and press Retry, or save a copy of the whole session "
                "somewhere else."
            ).format(where=self._where, why=self._why, waiting=waiting, fix=fix)
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


def approval_headline(request: ApprovalRequest) -> str:
    """What the agent wants, as a sentence a person reads ("The agent wants to write
    src/calc.py"); the tool's name when there is nothing better to say."""
    path = request.arguments.get("path")
    shown = html.escape(str(path)) if isinstance(path, str) and path else ""
    tool = request.tool_name
    if request.command is not None:
        return QCoreApplication.translate("Dialogs", "The agent wants to run this command:")
    if tool == "write" and shown:
        return QCoreApplication.translate("Dialogs", "The agent wants to write {path}").format(
            path=shown
        )
    if tool == "edit" and shown:
        return QCoreApplication.translate("Dialogs", "The agent wants to edit {path}").format(
            path=shown
        )
    if tool == "read" and shown:
        return QCoreApplication.translate("Dialogs", "The agent wants to read {path}").format(
            path=shown
        )
    if tool in ("grep", "find", "ls"):
        return QCoreApplication.translate(
            "Dialogs", "The agent wants to look through {path}"
        ).format(path=shown or QCoreApplication.translate("Dialogs", "the project folder"))
    server, sep, name = tool.removeprefix("mcp__").partition("__")
    if tool.startswith("mcp__") and sep:
        return QCoreApplication.translate(
            "Dialogs", "The agent wants to use the tool “{tool}” of the MCP server “{server}”"
        ).format(tool=html.escape(name), server=html.escape(server))
    return QCoreApplication.translate("Dialogs", "The agent wants to use the tool {tool}").format(
        tool=html.escape(tool)
    )


def fitting_size(body: QPlainTextEdit, extra_height: int) -> QSize:
    """A dialog size that shows ``body``'s text without scrolling when it fits on the
    screen (between 640x240 and 80 % of the screen; it scrolls beyond)."""
    fm = QFontMetrics(body.font())
    lines = body.toPlainText().split("\n")
    width = max(fm.horizontalAdvance(line) for line in lines[:500]) + 60
    height = fm.lineSpacing() * min(len(lines), 200) + 24 + extra_height
    screen = QGuiApplication.primaryScreen()
    room = screen.availableGeometry().size() * 0.8
    return QSize(min(max(640, width), room.width()), min(max(240, height), room.height()))


class ApprovalDialog(QDialog):
    """Command or diff, working directory; allow once / always for this session / deny,
    or deny and tell the agent why (`reason`, which the model reads)."""

    def __init__(self, parent: QWidget | None, request: ApprovalRequest) -> None:
        super().__init__(parent)
        self.setObjectName("approvalDialog")
        self.setWindowTitle(self.tr("Allow this?"))
        self.decision: ApprovalDecision | None = None
        self.reason = ""
        folder = html.escape(request.cwd)
        if request.sandbox_blocked:
            head_text = self.tr(
                "<b>The sandbox blocked this {tool} command</b><br>in {folder}"
            ).format(tool=html.escape(request.tool_name), folder=folder)
        else:
            head_text = "<b>{what}</b><br>{where}".format(
                what=approval_headline(request),
                where=self.tr("in {folder}").format(folder=folder),
            )
        head = QLabel(head_text)
        head.setObjectName("approvalHeadline")
        head.setWordWrap(True)
        head.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
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
        body.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self._colors: DiffHighlighter | None = None
        if not request.command and request.diff:  # coloured as the result card's diff
            self._colors = DiffHighlighter(body.document(), dark=is_dark(body.palette()))
            self._colors.rehighlight()
        reason = QLineEdit(self)
        reason.setObjectName("denyReason")
        reason.setPlaceholderText(self.tr("Tell the agent why, or what to do instead"))
        reason.setAccessibleName(self.tr("Why you deny it (the agent reads this)"))
        reason.setVisible(False)
        reason.returnPressed.connect(self._deny_with_reason)
        self._reason_edit = reason
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
        # Alt+W: the reason box, then Enter denies (or keeps the command blocked) with them
        say_why = QPushButton(
            self.tr("Keep it blocked and say &why…")
            if request.sandbox_blocked
            else self.tr("Deny and say &why…"),
            self,
        )
        say_why.setObjectName("denyWithReason")
        say_why.setAutoDefault(False)
        say_why.clicked.connect(self._deny_with_reason)
        buttons.addButton(say_why, QDialogButtonBox.ButtonRole.ActionRole)
        self._say_why = say_why
        self._blocked = bool(request.sandbox_blocked)
        layout = QVBoxLayout(self)
        layout.addWidget(head)
        if why is not None:
            layout.addWidget(why)
        layout.addWidget(body, 1)
        layout.addWidget(reason)
        layout.addWidget(buttons)
        extra = why.sizeHint().height() if why is not None else 0
        size = fitting_size(body, head.sizeHint().height() + extra + 90)
        self.setMinimumWidth(min(size.width(), buttons.sizeHint().width() + 40))
        self.resize(size.expandedTo(QSize(buttons.sizeHint().width() + 40, 0)))

    def _decide(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.accept()

    def _deny_with_reason(self) -> None:
        """First press: the reason box opens; with words in it, the call is denied with
        them (the model reads them as the call's result)."""
        edit = self._reason_edit
        if not edit.isVisible():
            edit.setVisible(True)
            edit.setFocus(Qt.FocusReason.OtherFocusReason)
            self._say_why.setText(
                self.tr("Keep it blocked and &send")
                if self._blocked
                else self.tr("&Send the denial")
            )
            return
        self.reason = edit.text().strip()
        self._decide(ApprovalDecision.DENY)

    def answer(self) -> ApprovalDecision | ApprovalAnswer | None:
        """The decision, with the person's words when they gave some."""
        if self.decision == ApprovalDecision.DENY and self.reason:
            return ApprovalAnswer(ApprovalDecision.DENY, self.reason)
        return self.decision


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
        self.settings_rows: Callable[[QDialog], None] | None = None
        """Adds the window's own rows to Settings (the MCP servers' statuses, `gui._mcp`)."""

    def keep(self, dialog: QDialog) -> None:
        """Show a non-modal dialog, kept alive until it is closed."""
        self._keep(dialog)

    def _keep(self, dialog: QDialog) -> None:
        fit_title(dialog)
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
        *,
        on_server: bool = False,
    ) -> None:
        if self.no_windows:
            sys.stderr.write(f"desktop-agent: could not save: {event.message}\n")
            return
        self._keep(
            PersistenceErrorDialog(
                self.parent, event, on_retry, on_save_copy, on_reload, on_server=on_server
            )
        )

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

    def stop_or_wait(self, runs: int = 1) -> str:
        """ "stop", "wait" or "cancel": quitting while the agent works (in ``runs``
        sessions: one question for all of them, over every window)."""
        box = QMessageBox(self.parent)
        box.setWindowModality(Qt.WindowModality.ApplicationModal)
        box.setWindowTitle(QCoreApplication.translate("Dialogs", "Still working"))
        text = QCoreApplication.translate(
            "Dialogs", "Stop the agent now, or wait until it has finished?"
        )
        if runs > 1:
            text = QCoreApplication.translate(
                "Dialogs",
                "The agent is working in %n sessions. Stop them now, or wait until they"
                " have finished?",
                None,
                runs,
            )
        box.setText(text)
        stop = box.addButton(
            QCoreApplication.translate("Dialogs", "Stop and quit"),
            QMessageBox.ButtonRole.DestructiveRole,
        )
        wait = box.addButton(
            QCoreApplication.translate("Dialogs", "Wait, then quit"),
            QMessageBox.ButtonRole.AcceptRole,
        )
        box.addButton(QMessageBox.StandardButton.Cancel)
        fit_title(box)
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
        # A name typed without an extension gets the format's ("tour" saves tour.md).
        suffix = os.path.splitext(name)[1] or os.path.splitext(filters.rstrip(")"))[1]
        if suffix.strip(".").isalnum():
            dialog.setDefaultSuffix(suffix.strip("."))
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

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision | ApprovalAnswer | None:
        if self.no_windows:
            sys.stderr.write(f"desktop-agent: denied {request.tool_name} (no windows)\n")
            return ApprovalDecision.DENY
        dialog = ApprovalDialog(self.parent, request)
        done: asyncio.Future[ApprovalDecision | ApprovalAnswer | None]
        done = asyncio.get_running_loop().create_future()
        dialog.finished.connect(
            lambda _r: done.set_result(dialog.answer()) if not done.done() else None
        )
        self._keep(dialog)
        try:
            return await done
        finally:
            dialog.close()

    def ask_switch_branch(self, query: str) -> bool:
        """A search hit is on another branch only: move the leaf to that branch?"""
        if self.no_windows:
            return False
        box = QMessageBox(
            QMessageBox.Icon.Question,
            QCoreApplication.translate("MainWindow", "Switch branch?"),
            QCoreApplication.translate(
                "MainWindow",
                "“{query}” is found on another branch of this conversation. Switch to that branch?",
            ).format(query=query),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self.parent,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Yes)
        fit_title(box)
        return box.exec() == QMessageBox.StandardButton.Yes

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
        if self.settings_rows is not None:
            self.settings_rows(dialog)
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        dialog.finished.connect(lambda r: done.set_result(r) if not done.done() else None)
        self._keep(dialog)
        result = await done
        return dialog.result_form() if result == QDialog.DialogCode.Accepted else None
