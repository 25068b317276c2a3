"""The "Changes" view of a turn (the map's "Show file changes…"): the files the turn
changed, each file's diff as the approval dialog shows diffs, and "Revert this file" /
"Revert the turn" (then "Undo restore" in the bar above the chat).

With ``branch=True`` it is the files bar's "Show changes": the files that differ from the
branch's state, each diff going from the folder to the branch, and "Restore this file" /
"Restore files"."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._dialogs import Dialogs, fitting_size
from desktop_agent.gui._ports import Ops
from desktop_agent.workbench import SHOW_CHANGES, TurnChanges, Workbench

Revert = Callable[[Sequence[str] | None], object]


class FileChangesDialog(QDialog):
    """Non-modal: the window goes on working while it is open."""

    def __init__(
        self, parent: QWidget | None, changes: TurnChanges, revert: Revert, *, branch: bool = False
    ) -> None:
        super().__init__(parent)
        self.setObjectName("fileChangesDialog")
        self.changes = changes
        self._revert = revert
        if branch:
            title = self.tr("Files that differ from this branch")
            words = {
                "added": self.tr("brought back"),
                "modified": self.tr("changed"),
                "deleted": self.tr("removed"),
            }
            head = QLabel(self.tr("{n} files differ").format(n=len(changes.files)), self)
        else:
            title = self.tr("Files changed by this turn")
            words = {
                "added": self.tr("created"),
                "modified": self.tr("changed"),
                "deleted": self.tr("deleted"),
            }
            head = QLabel(self.tr("{n} files changed").format(n=len(changes.files)), self)
        self.setWindowTitle(title)
        self.files = QListWidget(self)
        self.files.setObjectName("fileChangesList")
        self.files.setAccessibleName(title)
        for change in changes.files:
            self.files.addItem(f"{change.path} ({words.get(change.kind, change.kind)})")
        self.diff = QPlainTextEdit(self)
        self.diff.setObjectName("fileChangesDiff")
        self.diff.setReadOnly(True)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff.setAccessibleName(self.tr("Diff"))
        self.files.currentRowChanged.connect(self._show)
        buttons = QDialogButtonBox(self)
        self.revert_file = QPushButton(
            self.tr("Restore this &file") if branch else self.tr("Revert this &file"), self
        )
        self.revert_file.setObjectName("revertFile")
        self.revert_file.setAutoDefault(False)
        self.revert_file.clicked.connect(self._revert_file)
        self.revert_turn = QPushButton(
            self.tr("&Restore files") if branch else self.tr("Revert the &turn"), self
        )
        self.revert_turn.setObjectName("revertTurn")
        self.revert_turn.setAutoDefault(False)
        self.revert_turn.clicked.connect(lambda: self._done(None))
        buttons.addButton(self.revert_file, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.revert_turn, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(head)
        layout.addWidget(self.files, 1)
        layout.addWidget(self.diff, 3)
        layout.addWidget(buttons)
        if changes.files:
            self.files.setCurrentRow(0)
        self.resize(fitting_size(self.diff, 260))
        self.files.setFocus(Qt.FocusReason.OtherFocusReason)

    def _show(self, row: int) -> None:
        files = self.changes.files
        self.diff.setPlainText(files[row].diff if 0 <= row < len(files) else "")

    def _revert_file(self) -> None:
        row = self.files.currentRow()
        if 0 <= row < len(self.changes.files):
            self._done([self.changes.files[row].path])

    def _done(self, paths: Sequence[str] | None) -> None:
        self._revert(paths)
        self.accept()


async def show_turn_changes(
    parent: QWidget, wb: Workbench, ops: Ops, dialogs: Dialogs, entry_id: str
) -> None:
    """The Changes view of the turn a map row stands for (non-modal)."""
    changes = await wb.turn_changes(entry_id)
    if changes is not None:
        revert = wb.revert_changes
        dialogs.keep(
            FileChangesDialog(parent, changes, lambda p: ops.spawn(ops.do(revert(changes, p))))
        )


async def show_branch_changes(parent: QWidget, wb: Workbench, ops: Ops, dialogs: Dialogs) -> None:
    """The files bar's "Show changes": the files that differ from the branch, with
    their diffs (non-modal), besides the list in the bar."""
    await ops.do(wb.notice_action(SHOW_CHANGES))
    changes = await wb.branch_changes()
    if changes is not None:
        restore = wb.restore_branch_files
        dialogs.keep(
            FileChangesDialog(parent, changes, lambda p: ops.spawn(ops.do(restore(p))), branch=True)
        )
