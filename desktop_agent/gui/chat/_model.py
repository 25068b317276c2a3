"""The list model of the chat pane: one row per `ChatItem`, tool results merged.

The model mirrors what the main window hands it (habit 6): it owns no session data, only
per-row view state (expanded toggles, streaming flag, a version bumped on every change so
cached layouts of that row are dropped, and the row's measured height).

It is a `QStandardItemModel` on purpose: every row's height is stored as the item's size
hint, so the list view's layout pass (which asks every row for its size) runs entirely in
C++. With a Python ``rowCount``/``sizeHint`` that pass cost ~35 ms for 5,000 rows; this
way it costs ~1 ms, and a relayout never stalls scrolling or streaming.
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from PySide6.QtCore import QCoreApplication, QModelIndex, QObject, QSize
from PySide6.QtGui import QStandardItem, QStandardItemModel

from desktop_agent.ai import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from desktop_agent.gui.chat._builder import LiveTool
from desktop_agent.gui.chat._items import ChatItem
from desktop_agent.utils.text import message_text

_uids = itertools.count(1)


@dataclass(eq=False)
class Row:
    item: ChatItem
    qitem: QStandardItem = field(default_factory=QStandardItem)
    uid: int = field(default_factory=lambda: next(_uids))
    version: int = 0
    expanded: frozenset[str] = frozenset()
    streaming: bool = False
    editing: bool = False
    measured: tuple[int, int, int] | None = None  # (version, width, height) of the last layout
    estimate: tuple[int, int, int] | None = None  # (version, width, height)
    hint: tuple[int, int] = (0, 0)  # (width, height) the view has been given

    def touch(self) -> None:
        self.version += 1


HeightFn = Callable[[Row], QSize]


def _tool_call_ids(item: ChatItem) -> set[str]:
    msg = item.message
    if isinstance(msg, AssistantMessage):
        return {b.id for b in msg.content if isinstance(b, ToolCall)}
    return set()


class ChatModel(QStandardItemModel):
    """Rows of the chat pane. Row data for painting is read with `row_at`, not `data`."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Row] = []
        self.setColumnCount(1)
        self.live: dict[str, LiveTool] = {}
        self.height_fn: HeightFn = lambda row: QSize(600, 80)

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

    def _new_row(self, item: ChatItem, *, streaming: bool = False) -> Row:
        row = Row(item, streaming=streaming)
        q = row.qitem
        q.setText(_summary(item))
        q.setEditable(isinstance(item.message, UserMessage) and item.entry_id is not None)
        q.setSelectable(False)
        q.setDragEnabled(False)
        q.setDropEnabled(False)
        size = self.height_fn(row)
        q.setSizeHint(size)
        row.hint = (size.width(), size.height())
        return row

    @staticmethod
    def _merged(items: list[ChatItem]) -> list[ChatItem]:
        """``items`` with tool-result items merged into their assistant items (copies)."""
        merged: list[ChatItem] = []
        owners: dict[str, ChatItem] = {}
        for item in items:
            msg = item.message
            if isinstance(msg, ToolResultMessage) and msg.tool_call_id in owners:
                owners[msg.tool_call_id].tool_results[msg.tool_call_id] = msg
                continue
            if isinstance(msg, AssistantMessage):
                copy = replace(item, tool_results=dict(item.tool_results))
                for cid in _tool_call_ids(copy):
                    owners[cid] = copy
                merged.append(copy)
            else:
                merged.append(item)
        return merged

    def reset(self, items: list[ChatItem]) -> None:
        merged = self._merged(items)
        self.clear()
        self.setColumnCount(1)  # else appending rows also inserts a column, mid-insert
        self.live.clear()
        # Heights are estimated with the tool results merged in, so make the rows now.
        self._rows = [self._new_row(item) for item in merged]
        if self._rows:
            self.invisibleRootItem().appendRows([r.qitem for r in self._rows])

    def prepend(self, items: list[ChatItem]) -> int:
        """Insert older messages above the first row; return how many rows were added."""
        rows = [self._new_row(item) for item in self._merged(items)]
        if rows:
            self._rows[:0] = rows
            self.invisibleRootItem().insertRows(0, [r.qitem for r in rows])
        return len(rows)

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
        row = self._new_row(item, streaming=streaming)
        self._rows.append(row)
        self.appendRow(row.qitem)
        prev = self._rows[n - 1].item.message if n > 0 else None
        if isinstance(prev, AssistantMessage) and prev.stop_reason in ("error", "aborted"):
            self.changed(n - 1)  # its Retry button is only shown while it is last
        return n

    def touch_quietly(self, i: int) -> bool:
        """Row ``i`` shows something new, and the caller repaints it: a new version
        without a model signal. False (and no new version) when its summary changes:
        then `changed` must tell the view (and the accessibility tree)."""
        row = self._rows[i]
        if row.qitem.text() != _summary(row.item):
            return False
        row.touch()
        return True

    def changed(self, i: int) -> None:
        """Row ``i`` shows something new: drop its cached picture and repaint it."""
        if 0 <= i < len(self._rows):
            row = self._rows[i]
            row.touch()
            summary = _summary(row.item)
            if row.qitem.text() != summary:
                row.qitem.setText(summary)  # emits dataChanged
            else:  # the summary is cut at 200 characters: a growing reply keeps it
                row.qitem.emitDataChanged()
            row.qitem.setEditable(
                isinstance(row.item.message, UserMessage) and row.item.entry_id is not None
            )

    def set_height(self, i: int, width: int, height: int) -> bool:
        """Tell the view row ``i``'s height; return whether it changed."""
        row = self._rows[i]
        if row.hint == (width, height):
            return False
        row.hint = (width, height)
        row.qitem.setSizeHint(QSize(width, height))
        return True

    def toggle(self, i: int, key: str) -> None:
        row = self._rows[i]
        row.expanded = row.expanded ^ {key}
        self.changed(i)

    def index_of(self, i: int) -> QModelIndex:
        return self.index(i, 0)


def _summary(item: ChatItem) -> str:
    """The row's text for accessibility and model tests (cards are painted, not this)."""
    role = getattr(item.message, "role", "?")
    text = message_text(item.message)
    if len(text) > 200:
        text = text[:200] + "…"
    names = {"user": _tr("You"), "assistant": _tr("Assistant")}
    return _tr("{role}: {text}").format(role=names.get(role, role), text=text)


def _tr(text: str) -> str:
    return QCoreApplication.translate("ChatCard", text)


def tooltip(item: ChatItem) -> str:
    """Model, tokens and cost of a message, and when it was written."""
    msg = item.message
    lines: list[str] = []
    if isinstance(msg, AssistantMessage):
        lines.append(_tr("Model: {model}").format(model=f"{msg.provider}/{msg.model}"))
        u = msg.usage
        lines.append(
            _tr("Tokens: {input} in, {output} out").format(
                input=f"{int(u.input):,}", output=f"{int(u.output):,}"
            )
            + (_tr(", {n} cache read").format(n=f"{int(u.cache_read):,}") if u.cache_read else "")
            + (
                _tr(", {n} cache write").format(n=f"{int(u.cache_write):,}")
                if u.cache_write
                else ""
            )
        )
        lines.append(_tr("Cost: {cost}").format(cost=f"${float(u.cost.total):.4f}"))
        if msg.stop_reason not in ("stop", "toolUse"):
            lines.append(_tr("Stop reason: {reason}").format(reason=msg.stop_reason))
    ts = getattr(msg, "timestamp", None)
    if isinstance(ts, int | float) and ts > 0:
        when = datetime.datetime.fromtimestamp(ts / 1000)
        lines.append(when.strftime("%Y-%m-%d %H:%M:%S"))
    if item.sibling_count > 1:
        lines.append(
            _tr("Version {n} of {count}").format(n=item.sibling_index + 1, count=item.sibling_count)
        )
    return "\n".join(lines)


__all__ = ["ChatModel", "Row", "tooltip"]
