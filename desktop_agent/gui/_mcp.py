"""The MCP servers in the window: the Servers menu (each server's status, Restart,
Enable/Disable, Manage…) and the servers dialog (add, edit, remove, enable, restart, import
a Claude Desktop config file). Everything they do is a `workbench.McpServers` operation."""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMenuBar,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.gui._ports import Ops
from desktop_agent.gui._titles import fit_title
from desktop_agent.gui._tr import QT_TRANSLATE_NOOP
from desktop_agent.workbench import NEW_MCP_ENTRY as NEW_ENTRY
from desktop_agent.workbench import Changes, McpConfigError, McpRow, Workbench, parse_entry

CONTEXT = "McpServers"
_TEMPLATES = (  # the workbench's English templates, for the translation template
    QT_TRANSLATE_NOOP("McpServers", "{name}: starting…"),
    QT_TRANSLATE_NOOP("McpServers", "{name}: ready ({tools} tools)"),
    QT_TRANSLATE_NOOP("McpServers", "{name}: failed"),
    QT_TRANSLATE_NOOP("McpServers", "{name}: stopped"),
    QT_TRANSLATE_NOOP("McpServers", "{name}: disabled"),
)


def tr(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


def row_text(row: McpRow) -> str:
    return tr(row.text).format(**dict(row.args))


def install_mcp_menu(bar: QMenuBar, wb: Workbench, ops: Ops) -> QMenu:
    """The menu bar's Servers menu (Alt+R), filled each time it opens."""
    menu = QMenu(tr("Se&rvers"), bar)
    menu.setObjectName("mcpMenu")
    help_menu = bar.findChild(QMenu, "helpMenu")
    if help_menu is not None:  # before Help, as the last menu of the app's own
        bar.insertMenu(help_menu.menuAction(), menu)
    else:
        bar.addMenu(menu)
    menu.aboutToShow.connect(lambda: fill_mcp_menu(menu, wb, ops))
    fill_mcp_menu(menu, wb, ops)
    return menu


def fill_mcp_menu(menu: QMenu, wb: Workbench, ops: Ops) -> None:
    menu.clear()
    rows = wb.mcp.rows()
    for row in rows:
        sub = menu.addMenu(row_text(row))
        sub.setObjectName(f"mcpServerMenu_{row.name}")
        sub.setToolTip(row.detail)
        restart = sub.addAction(tr("&Restart"))
        restart.setObjectName(f"mcpRestartAction_{row.name}")
        restart.setEnabled(row.enabled)
        restart.triggered.connect(lambda _c=False, n=row.name: ops.spawn(wb.mcp.restart(n)))
        toggle = sub.addAction(tr("&Disable") if row.enabled else tr("&Enable"))
        toggle.setObjectName(f"mcpToggleAction_{row.name}")
        toggle.triggered.connect(
            lambda _c=False, n=row.name, e=row.enabled: ops.spawn(
                ops.do(wb.mcp.set_enabled(n, not e))
            )
        )
    if not rows:
        none = menu.addAction(tr("No MCP servers"))
        none.setEnabled(False)
    menu.addSeparator()
    manage = menu.addAction(tr("&Manage MCP servers…"))
    manage.setObjectName("mcpManageAction")
    # on the window (the menu bar's), not on the menu: a popup is a window of its own
    owner = menu.parentWidget()
    window = owner.window() if owner is not None else menu
    manage.triggered.connect(lambda: open_mcp_dialog(window, wb, ops))


def open_mcp_dialog(parent: QWidget, wb: Workbench, ops: Ops) -> McpServersDialog:
    dialog = McpServersDialog(parent, wb, ops)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    fit_title(dialog)
    dialog.open()
    return dialog


class McpServerEditor(QDialog):
    """A server's name and its JSON entry, as in mcp.json; OK checks the entry first."""

    def __init__(self, parent: QWidget | None, name: str = "", entry: str = NEW_ENTRY) -> None:
        super().__init__(parent)
        self.setObjectName("mcpServerEditor")
        self.setWindowTitle(tr("MCP server"))
        self.name = QLineEdit(name, self)
        self.name.setObjectName("mcpServerName")
        self.name.setPlaceholderText(tr("Name"))
        self.entry = QPlainTextEdit(entry, self)
        self.entry.setObjectName("mcpServerEntry")
        self.error = QLabel(self)
        self.error.setObjectName("mcpEditorError")
        self.error.setWordWrap(True)
        hint = QLabel(
            tr(
                'As in mcp.json: {"command": …, "args": […], "env": {…}} or '
                '{"url": …, "headers": {…}}'
            ),
            self,
        )
        hint.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self._check)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (self.name, hint, self.entry, self.error, buttons):
            layout.addWidget(widget)
        self.resize(520, 360)

    def _check(self) -> None:
        if not self.name.text().strip():
            self.error.setText(tr("A server needs a name."))
            return
        try:
            parse_entry(self.entry.toPlainText())
        except McpConfigError as exc:
            self.error.setText(str(exc))
            return
        self.accept()


class McpServersDialog(QDialog):
    """Every configured server with its status; add, edit, remove, enable, restart, import."""

    def __init__(self, parent: QWidget, wb: Workbench, ops: Ops) -> None:
        super().__init__(parent)
        self.wb = wb
        self.ops = ops
        self.setObjectName("mcpServersDialog")
        self.setWindowTitle(tr("MCP servers"))
        self.list = QListWidget(self)
        self.list.setObjectName("mcpServerList")
        self.list.itemChanged.connect(self._item_changed)
        self.detail = QLabel(self)
        self.detail.setObjectName("mcpServerDetail")
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error = QLabel(self)
        self.error.setObjectName("mcpError")
        self.error.setWordWrap(True)
        self.list.currentRowChanged.connect(lambda _r: self._show_detail())
        buttons = QHBoxLayout()
        self.buttons: dict[str, QPushButton] = {}
        for key, text, slot in (
            ("Add", tr("&Add…"), self.add),
            ("Edit", tr("&Edit…"), self.edit),
            ("Remove", tr("Re&move"), self.remove),
            ("Restart", tr("&Restart"), self.restart),
            ("Import", tr("&Import Claude Desktop config…"), self.import_file),
        ):
            button = QPushButton(text, self)
            button.setObjectName(f"mcp{key}Button")
            button.clicked.connect(slot)
            buttons.addWidget(button)
            self.buttons[key] = button
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list)
        layout.addWidget(self.detail)
        layout.addLayout(buttons)
        layout.addWidget(self.error)
        layout.addWidget(close)
        self.resize(640, 400)
        self.editor: McpServerEditor | None = None
        self._rows: list[McpRow] = []
        self._filling = False
        self._note = ""
        self._unsubscribe = wb.subscribe(self._on_event)
        self.finished.connect(lambda _r: self._unsubscribe())
        self.refresh()

    def _on_event(self, event: object) -> None:
        if isinstance(event, Changes) and event.mcp:
            self.refresh()

    def refresh(self) -> None:
        current = self.current()
        self._rows = self.wb.mcp.rows()
        self._filling = True
        try:
            self.list.clear()
            for row in self._rows:
                item = QListWidgetItem(row_text(row), self.list)
                item.setData(Qt.ItemDataRole.UserRole, row.name)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(
                    Qt.CheckState.Checked if row.enabled else Qt.CheckState.Unchecked
                )
                item.setToolTip(row.detail)
                if current is not None and row.name == current.name:
                    self.list.setCurrentItem(item)
        finally:
            self._filling = False
        if self.list.currentRow() < 0 and self._rows:
            self.list.setCurrentRow(0)
        self._show_detail()

    def current(self) -> McpRow | None:
        row = self.list.currentRow()
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def _show_detail(self) -> None:
        row = self.current()
        self.detail.setText(row.detail if row is not None else "")
        for key in ("Edit", "Remove", "Restart"):
            self.buttons[key].setEnabled(row is not None)

    def _run(self, op: Coroutine[Any, Any, Changes]) -> None:
        """Run ``op``; what went wrong shows under the buttons, else ``_note`` (if any)."""

        async def guarded() -> None:
            try:
                await op
            except McpConfigError as exc:
                self.error.setText(str(exc))
                return
            finally:
                note, self._note = self._note, ""
            self.error.setText(note)
            self.refresh()

        self.ops.spawn(guarded())

    def _item_changed(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        name = str(item.data(Qt.ItemDataRole.UserRole))
        enabled = item.checkState() == Qt.CheckState.Checked
        self._run(self.wb.mcp.set_enabled(name, enabled))

    def _edit(self, name: str, entry: str, old: str | None) -> None:
        editor = McpServerEditor(self, name, entry)
        self.editor = editor

        def done(result: int) -> None:
            if result == QDialog.DialogCode.Accepted:
                text, new = editor.entry.toPlainText(), editor.name.text()
                self._run(self.wb.mcp.put(new, text, old=old))
            self.editor = None

        editor.finished.connect(done)
        fit_title(editor)
        editor.open()

    def add(self) -> None:
        self._edit("", NEW_ENTRY, None)

    def edit(self) -> None:
        row = self.current()
        if row is not None:
            self._edit(row.name, row.entry, row.name)

    def remove(self) -> None:
        row = self.current()
        if row is not None:
            self._run(self.wb.mcp.remove(row.name))

    def restart(self) -> None:
        row = self.current()
        if row is not None:
            self.ops.spawn(self.wb.mcp.restart(row.name))

    def ask_import_path(self) -> str | None:
        """The Claude Desktop (or Cursor, Claude Code) file to import (tests replace it)."""
        path, _ = QFileDialog.getOpenFileName(
            self, tr("Import MCP servers"), "", tr("JSON files (*.json);;All files (*)")
        )
        return path or None

    def import_file(self) -> None:
        path = self.ask_import_path()
        if path is None:
            return

        async def imported() -> Changes:
            added, changes = await self.wb.mcp.import_file(Path(path))
            count = len(added)
            self._note = tr("Imported {count} MCP server(s) from {file}.").format(
                count=count, file=Path(path).name
            )
            return changes

        self._run(imported())


def add_settings_row(dialog: QDialog, wb: Workbench, ops: Ops) -> None:
    """Settings shows each MCP server's status and opens the servers dialog (the
    window's `Dialogs.settings_rows`)."""
    layout = dialog.layout()
    if not isinstance(layout, QVBoxLayout):
        return
    row = QWidget(dialog)
    row.setObjectName("settingsMcpRow")
    line = QHBoxLayout(row)
    line.setContentsMargins(0, 0, 0, 0)
    texts = [row_text(r) for r in wb.mcp.rows()]
    label = QLabel("\n".join(texts) if texts else tr("No MCP servers"), row)
    label.setObjectName("settingsMcpStatus")
    label.setWordWrap(True)
    button = QPushButton(tr("MCP &servers…"), row)
    button.setObjectName("settingsMcpButton")
    # (beside Settings, on the window, as from the Servers menu)
    button.clicked.connect(lambda: open_mcp_dialog(dialog.parentWidget() or dialog, wb, ops))
    line.addWidget(QLabel(tr("MCP servers"), row))
    line.addWidget(label, 1)
    line.addWidget(button)
    layout.insertWidget(max(layout.count() - 1, 0), row)
