"""The Context view: what the model is told about the project (issue 19).

The exact system prompt the next request carries, the files it came from with their
token estimates (each can be opened in the system's editor), the files skipped and why,
and the folder's Instructions, kept by the app and used from the next turn on. The
window shows one at a time, non-modal; it reads everything from `Workbench.context_view`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._tr import QT_TRANSLATE_NOOP
from desktop_agent.workbench import ContextView

KINDS = {
    "system": QT_TRANSLATE_NOOP("ContextDialog", "Base prompt (SYSTEM.md)"),
    "append": QT_TRANSLATE_NOOP("ContextDialog", "Appended (APPEND_SYSTEM.md)"),
    "context": QT_TRANSLATE_NOOP("ContextDialog", "Context file"),
    "instructions": QT_TRANSLATE_NOOP("ContextDialog", "Instructions for this folder"),
    "skill": QT_TRANSLATE_NOOP("ContextDialog", "Skill"),
}


def _kind(kind: str) -> str:
    return QCoreApplication.translate("ContextDialog", KINDS.get(kind, kind))


class ContextDialog(QDialog):
    """objectName ``contextDialog``: ``contextPrompt``, ``contextSources``,
    ``contextOpenButton``, ``contextProblems``, ``contextInstructions``,
    ``contextSaveInstructions``."""

    def __init__(
        self,
        parent: QWidget | None,
        view: ContextView,
        save_instructions: Callable[[str], object],
    ) -> None:
        super().__init__(parent)
        self.setObjectName("contextDialog")
        self.setWindowTitle(self.tr("Context"))
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.resize(900, 700)
        self._save = save_instructions
        self.summary = QLabel(self)
        self.summary.setObjectName("contextSummary")
        self.summary.setWordWrap(True)
        self.prompt = QPlainTextEdit(self)
        self.prompt.setObjectName("contextPrompt")
        self.prompt.setReadOnly(True)
        self.prompt.setAccessibleName(self.tr("System prompt of the next request"))
        self.sources = QTreeWidget(self)
        self.sources.setObjectName("contextSources")
        self.sources.setHeaderLabels([self.tr("Part"), self.tr("Tokens"), self.tr("File")])
        self.sources.setRootIsDecorated(False)
        self.sources.itemActivated.connect(lambda _item, _col: self.open_selected())
        self.open_button = QPushButton(self.tr("Open file"), self)
        self.open_button.setObjectName("contextOpenButton")
        self.open_button.clicked.connect(self.open_selected)
        self.problems = QListWidget(self)
        self.problems.setObjectName("contextProblems")
        self.problems.setAccessibleName(self.tr("Skipped or cut"))
        self.problems.setWordWrap(True)
        self.instructions = QPlainTextEdit(self)
        self.instructions.setObjectName("contextInstructions")
        self.instructions.setAccessibleName(self.tr("Instructions for this folder"))
        self.instructions.setPlaceholderText(
            self.tr("Instructions for this folder, told to the agent at every turn")
        )
        self.instructions.setTabChangesFocus(True)
        self.instructions.setMaximumHeight(120)
        self.save_button = QPushButton(self.tr("Save instructions"), self)
        self.save_button.setObjectName("contextSaveInstructions")
        self.save_button.clicked.connect(lambda: self._save(self.instructions.toPlainText()))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)

        files = QWidget(self)
        files_layout = QVBoxLayout(files)
        files_layout.setContentsMargins(0, 0, 0, 0)
        files_layout.addWidget(QLabel(self.tr("Where it came from:"), files))
        files_layout.addWidget(self.sources, 2)
        files_layout.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignLeft)
        files_layout.addWidget(QLabel(self.tr("Skipped or cut, and why:"), files))
        files_layout.addWidget(self.problems, 1)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.prompt)
        split.addWidget(files)
        split.setSizes([520, 380])
        bottom = QHBoxLayout()
        bottom.addWidget(self.save_button)
        bottom.addStretch(1)
        bottom.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)
        layout.addWidget(QLabel(self.tr("Instructions for this folder:"), self))
        layout.addWidget(self.instructions)
        layout.addLayout(bottom)
        self.show_view(view)

    @staticmethod
    def open_file(path: str) -> None:
        """Open ``path`` in the system's editor (tests replace this entry point)."""
        QDesktopServices.openUrl(QUrl.fromLocalFile(path))

    def show_view(self, view: ContextView) -> None:
        report = view.report
        summary = (
            self.tr("The system prompt of the next request in %1: about %2 tokens.")
            .replace("%1", view.folder)
            .replace("%2", f"{report.tokens:,}")
        )
        if view.global_dirs:
            summary += "\n" + self.tr(
                "Global AGENTS.md, SYSTEM.md, APPEND_SYSTEM.md, skills/ and prompts/ are read "
                "from: %1"
            ).replace("%1", ", ".join(view.global_dirs))
        self.summary.setText(summary)
        self.prompt.setPlainText(report.text)
        self.sources.clear()
        for source in report.sources:
            path = source.path or self.tr("(kept by Desktop Agent)")
            item = QTreeWidgetItem([_kind(source.kind), f"{source.tokens:,}", path])
            item.setToolTip(2, path)
            item.setData(0, Qt.ItemDataRole.UserRole, source.path)
            self.sources.addTopLevelItem(item)
        first = self.sources.topLevelItem(0)
        if first is not None:
            self.sources.setCurrentItem(first)
        for column in range(3):
            self.sources.resizeColumnToContents(column)
        self.problems.clear()
        for problem in report.problems:
            self.problems.addItem(f"{problem.path}: {problem.message}")
        if not self.instructions.hasFocus():
            self.instructions.setPlainText(view.instructions)

    def open_selected(self) -> None:
        """Open the selected file in the system's editor (the instructions have none)."""
        item = self.sources.currentItem()
        path = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        if isinstance(path, str) and path:
            type(self).open_file(path)
