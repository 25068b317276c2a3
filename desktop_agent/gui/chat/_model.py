"""The list model of the chat pane: one row per `ChatItem`, tool results merged.

The model mirrors what the main window hands it (habit 6): it owns no session data, only
per-row view state (expanded toggles, streaming flag, a version bumped on every change so
cached layouts of that row are dropped, and the row's measured height).
"""

from __future__ import annotations

import datetime
import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSize,
    Qt,
)

from desktop_agent.ai import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from desktop_agent.gui.chat._items import ChatItem
from desktop_agent.gui.chat._render import LiveTool, message_text

_uids = itertools.count(1)

ROW_ROLE = Qt.ItemDataRole.UserRole + 1

_Index = QModelIndex | QPersistentModelIndex


@dataclass(eq=False)
class Row:
    item: ChatItem
    uid: int = field(default_factory=lambda: next(_uids))
    version: int = 0
    expanded: frozenset[str] = frozenset()
    streaming: bool = False
    editing: bool = False
    measured: tuple[int, int, int] | None = None  # (version, width, height) of the last layout
    estimate: tuple[int, int, int] | None = None  # (version, width, height)
    hint: QSize | None = None  # what the view was told (sizeHint), at width hint_w
    hint_w: int = 0

    def touch(self) -> None:
        self.version += 1


def _tool_call_ids(item: ChatItem) -> set[str]:
    msg = item.message
    if isinstance(msg, AssistantMessage):
        return {b.id for b in msg.content if isinstance(b, ToolCall)}
    return set()


class ChatModel(QAbstractListModel):
    """Rows of the chat pane. Row data for painting is read with `row_at`, not `data`."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Row] = []
        self.live: dict[str, LiveTool] = {}

    # -- Qt model API

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (
            not index.isValid()
            or index.parent().isValid()
            or not 0 <= index.row() < len(self._rows)
        ):
            return None
        row = self._rows[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return _summary(row.item)
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip(row.item)
        if role == ROW_ROLE:
            return row.uid
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemNeverHasChildren
        row = self._rows[index.row()]
        if isinstance(row.item.message, UserMessage) and row.item.entry_id is not None:
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    # -- reading

    def row_at(self, i: int) -> Row:
        return self._rows[i]

    def rows(self) -> list[Row]:
        return self._rows

    def last_row(self) -> int:
        return len(self._rows) - 1

    def row_of_tool(self, call_id: str) -> int:
        """The row of the assistant message holding tool call ``call_id`` (-1 if none)."""
        for i in range(len(self._rows) - 1, -1, -1):
            msg = self._rows[i].item.message
            if isinstance(msg, AssistantMessage) and any(
                isinstance(b, ToolCall) and b.id == call_id for b in msg.content
            ):
                return i
        return -1

    # -- changing

    def reset(self, items: list[ChatItem]) -> None:
        rows: list[Row] = []
        owners: dict[str, Row] = {}
        for item in items:
            msg = item.message
            if isinstance(msg, AssistantMessage):
                item = replace(item, tool_results=dict(item.tool_results))
            if isinstance(msg, ToolResultMessage) and msg.tool_call_id in owners:
                owners[msg.tool_call_id].item.tool_results[msg.tool_call_id] = msg
                continue
            row = Row(item)
            rows.append(row)
            for cid in _tool_call_ids(item):
                owners[cid] = row
        self.beginResetModel()
        self._rows = rows
        self.live.clear()
        self.endResetModel()

    def append(self, item: ChatItem, *, streaming: bool = False) -> int:
        """Append a row (or merge a tool result into its assistant row); return the row."""
        msg = item.message
        if isinstance(msg, ToolResultMessage):
            i = self.row_of_tool(msg.tool_call_id)
            if i >= 0:
                self._rows[i].item.tool_results[msg.tool_call_id] = msg
                self.changed(i)
                return i
        if isinstance(msg, AssistantMessage):
            item = replace(item, tool_results=dict(item.tool_results))
        n = len(self._rows)
        self.beginInsertRows(QModelIndex(), n, n)
        self._rows.append(Row(item, streaming=streaming))
        self.endInsertRows()
        prev = self._rows[n - 1].item.message if n > 0 else None
        if isinstance(prev, AssistantMessage) and prev.stop_reason in ("error", "aborted"):
            self.changed(n - 1)  # its Retry button is only shown while it is last
        return n

    def changed(self, i: int) -> None:
        if 0 <= i < len(self._rows):
            self._rows[i].touch()
            idx = self.index(i, 0)
            self.dataChanged.emit(idx, idx)

    def toggle(self, i: int, key: str) -> None:
        row = self._rows[i]
        row.expanded = row.expanded ^ {key}
        self.changed(i)


def _summary(item: ChatItem) -> str:
    role = getattr(item.message, "role", "?")
    text = message_text(item.message)
    if len(text) > 200:
        text = text[:200] + "…"
    return f"{role}: {text}"


def tooltip(item: ChatItem) -> str:
    msg = item.message
    lines: list[str] = []
    if isinstance(msg, AssistantMessage):
        lines.append(f"Model: {msg.provider}/{msg.model}")
        u = msg.usage
        lines.append(
            f"Tokens: {int(u.input):,} in, {int(u.output):,} out"
            + (f", {int(u.cache_read):,} cache read" if u.cache_read else "")
            + (f", {int(u.cache_write):,} cache write" if u.cache_write else "")
        )
        lines.append(f"Cost: ${float(u.cost.total):.4f}")
        if msg.stop_reason not in ("stop", "toolUse"):
            lines.append(f"Stop reason: {msg.stop_reason}")
    ts = getattr(msg, "timestamp", None)
    if isinstance(ts, int | float) and ts > 0:
        when = datetime.datetime.fromtimestamp(ts / 1000)
        lines.append(when.strftime("%Y-%m-%d %H:%M:%S"))
    if item.sibling_count > 1:
        lines.append(f"Version {item.sibling_index + 1} of {item.sibling_count}")
    return "\n".join(lines)
