"""The chat pane: a QListView of cards painted by a delegate from cached layouts.

Only visible rows are laid out (QTextDocument); every other row keeps its last measured
height or a cheap estimate as its item's size hint. When painting finds a row's real
height different from what the view has, one coalesced relayout runs on the next turn of
the event loop: it lays out the rows within a screen of the viewport, updates their size
hints, and keeps either the bottom (when the user is at the bottom) or the first visible
unchanged row in place, so nothing jumps.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import (
    QPoint,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtGui import (
    QDesktopServices,
    QGuiApplication,
)
from PySide6.QtWidgets import (
    QVBoxLayout,
    QWidget,
)

from desktop_agent.ai import (
    AssistantMessage,
    BashExecutionMessage,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.gui.chat._builder import LiveTool, column
from desktop_agent.gui.chat._cards import bash_text
from desktop_agent.gui.chat._delegate import ChatDelegate
from desktop_agent.gui.chat._find import FindBar
from desktop_agent.gui.chat._items import ChatItem
from desktop_agent.gui.chat._model import ChatModel, Row
from desktop_agent.gui.chat._parts import (
    SELECTED,
    CardAction,
    Mark,
    changed_from,
)
from desktop_agent.gui.chat._select import TextSelection
from desktop_agent.gui.chat._view import ChatView
from desktop_agent.utils.text import message_text

STREAM_REPAINT_MS = 40
SWITCH_ANCHOR_S = 5.0
"""A branch shown this soon after a click on ‹ or › is shown at the clicked card."""


class ChatPane(QWidget):
    """The messages of the current branch as cards (see module docstring)."""

    sibling_requested = Signal(str, int)
    edit_resend_requested = Signal(str, str)
    retry_requested = Signal()
    regenerate_requested = Signal(str)
    """A new version of the answer of this entry id (a reply's Regenerate button)."""
    copy_requested = Signal(str)
    quote_requested = Signal(str)
    """Quote this text in the reply being written (the right-click menu)."""
    older_wanted = Signal()
    """The user scrolled near the top and older messages exist: `prepend_items` them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatPane")
        self.model = ChatModel(self)
        self.view = ChatView(self)
        self.delegate = ChatDelegate(self.view, self.model)
        self.delegate.set_width(self.view.viewport().width())
        self.view.setItemDelegate(self.delegate)
        self.view.setModel(self.model)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.view)
        self.delegate.action.connect(self._on_action)
        self.selection = TextSelection(
            self.view,
            self.delegate.layout_for,
            lambda i: self.model.row_at(i).uid,
            self._row_of_uid,
            lambda i: (
                self._copy_text(self.model.row_at(i).item) if 0 <= i < self.model.rowCount() else ""
            ),
            QGuiApplication.clipboard().setText,
        )
        self.finder = FindBar(self, self.view, self.delegate.layout_for, self.model.rowCount)
        box.insertWidget(0, self.finder)
        self.view.cards.marks_of = self._marks
        self.selection.copied.connect(self.copy_requested)
        self.selection.quote_requested.connect(self.quote_requested)
        self.delegate.edit_submitted.connect(self._on_edit_submitted)
        self.view.near_top.connect(self._maybe_older)
        self.has_more = False
        """Older messages of the branch exist above the first row."""
        self._asked_older = False  # older_wanted was emitted; prepend_items answers it
        self._switch_anchor: tuple[str | None, int, float] | None = None
        """(entry before the card, its top) of a click on ‹ or ›, for the next branch."""
        self._fill_timer = QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(0)
        self._fill_timer.timeout.connect(self._fill)
        self._stream: Row | None = None
        self._pending: AssistantMessage | None = None
        self._dirty: set[int] = set()  # uids of rows to repaint on the next flush
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(STREAM_REPAINT_MS)
        self._flush_timer.timeout.connect(self._flush)
        self.last_set_items_ms = 0.0
        self.stream_repaints = 0  # partial repaints of the streaming card (tests)

    # -- whole branch

    def set_items(
        self, items: list[ChatItem], *, has_more: bool = False, project: str | None = None
    ) -> None:
        """Replace everything (a branch switch) and show the bottom. ``has_more``: the
        branch goes on above ``items`` (the end of a long branch is shown first; older
        pages come through `older_wanted` / `prepend_items` as the user scrolls up).
        ``project``: the session's folder, which an empty chat names."""
        start = time.perf_counter()
        self.view.empty_text = (
            self.tr(
                "A new session in {folder}\n\nAsk the agent below: Enter sends, Shift+Enter"
                " starts a new line, / lists the commands."
            ).format(folder=project)
            if project
            else ""
        )
        self._flush_timer.stop()
        self._stream = None
        self._pending = None
        self._dirty.clear()
        self.delegate.painted.clear()
        self.selection.clear()
        self.model.reset(items)
        self.finder.refresh()
        self.has_more = has_more
        self._asked_older = False
        anchor, self._switch_anchor = self._switch_anchor, None
        row = self._anchor_row(anchor, items) if anchor is not None else -1
        self.view.stick_to_bottom = row < 0
        self.view.relayout_now()
        if row >= 0 and anchor is not None:
            self.view.show_row_at(row, anchor[1])
        self._fill_timer.start()
        self.last_set_items_ms = (time.perf_counter() - start) * 1000

    @staticmethod
    def _anchor_row(anchor: tuple[str | None, int, float], items: list[ChatItem]) -> int:
        """The row of the version a click on ‹ or › asked for (the one after the message
        before it), if that click was just now; else -1 (the branch's end is shown)."""
        before, _top, when = anchor
        if time.monotonic() - when > SWITCH_ANCHOR_S:
            return -1
        if before is None:
            return 0 if items else -1
        for i, item in enumerate(items):
            if item.entry_id == before:
                return i + 1 if i + 1 < len(items) else -1
        return -1

    def prepend_items(self, items: list[ChatItem], *, has_more: bool) -> None:
        """Older messages above the first row; what the user looks at stays in place."""
        self._asked_older = False
        self.has_more = has_more
        view = self.view
        bar = view.verticalScrollBar()
        stick = view.stick_to_bottom
        before = bar.value()
        added = self.model.prepend(items)
        if added:
            height = sum(self.model.row_at(i).hint[1] for i in range(added))
            view.scheduleDelayedItemsLayout()
            view.executeDelayedItemsLayout()
            if stick:
                bar.setValue(bar.maximum())
            else:
                view.stick_to_bottom = False
                bar.setValue(before + height)
            view.schedule_relayout(-1)
        self._fill_timer.start()

    def _maybe_older(self) -> None:
        if self.has_more and not self._asked_older:
            self._asked_older = True
            self.older_wanted.emit()

    def _fill(self) -> None:
        """Rows that do not fill the viewport (or a top within a screen): load more."""
        bar = self.view.verticalScrollBar()
        if bar.value() < self.view.viewport().height():
            self._maybe_older()

    def append_item(self, item: ChatItem) -> None:
        """Append a finished message; tool results join their assistant message's card."""
        self._flush()
        self.model.append(item)

    def item_count(self) -> int:
        return self.model.rowCount()

    def visible_widget_count(self) -> int:
        """Widgets that exist for rows (inline editors); cards themselves are painted."""
        return sum(1 for c in self.view.viewport().children() if isinstance(c, QWidget))

    # -- streaming

    def begin_stream(self, partial: AssistantMessage) -> None:
        self._flush()
        if self._stream is not None:
            self._stream.streaming = False
        self.model.append(ChatItem(None, partial), streaming=True)
        self._stream = self.model.row_at(self.model.last_row())

    def update_stream(self, partial: AssistantMessage) -> None:
        """A new snapshot; painted at most every STREAM_REPAINT_MS milliseconds."""
        if self._stream is None:
            self.begin_stream(partial)
            return
        self._pending = partial
        self._dirty.add(self._stream.uid)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def end_stream(self, final: AssistantMessage, entry_id: str | None) -> None:
        row = self._stream
        self._pending = None
        self._flush()
        if row is None:
            self.model.append(ChatItem(entry_id, final))
            return
        self._stream = None
        row.item.message = final
        row.item.entry_id = entry_id
        row.streaming = False
        i = self._index_of(row)
        self.model.changed(i)
        # The finished card is usually taller or shorter than the streaming one: lay it
        # out now and repaint, so its end is drawn when the run ends (not at the next
        # mouse move over it).
        self.view.schedule_relayout(i)
        self.view.relayout_now()

    def saved(self, entry_id: str, role: str | None, index: int, count: int) -> None:
        """A message of this sitting got its entry: its card gets Edit and ``‹ n/m ›``."""
        rows = self.model.rows()
        found = -1
        for i in range(len(rows) - 1, -1, -1):
            item = rows[i].item
            if item.entry_id == entry_id:
                found = i
                break
            if item.entry_id is None and getattr(item.message, "role", None) == role:
                found = i
                break
        if found < 0:
            return
        item = rows[found].item
        item.entry_id = entry_id
        item.sibling_index, item.sibling_count = index, count
        self.model.changed(found)

    def follow_bottom(self) -> None:
        """Scroll to the end and stay there while a reply streams (on send)."""
        self.view.stick_to_bottom = True
        self.view.scrollToBottom()

    # -- tools

    def tool_waiting(self, call_id: str, waiting: bool) -> None:
        """The tool call waits for the user's approval (or no longer does)."""
        live = self.model.live.get(call_id)
        if live is None:
            return
        live.waiting = waiting
        self.model.changed(self.model.row_of_tool(call_id))

    def tool_started(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self._flush()
        self.model.live[call_id] = LiveTool(name, dict(args))
        self.model.changed(self.model.row_of_tool(call_id))

    def tool_output(self, call_id: str, text: str) -> None:
        live = self.model.live.get(call_id)
        if live is None:
            return
        live.output = text
        i = self.model.row_of_tool(call_id)
        if i >= 0:
            self._dirty.add(self.model.row_at(i).uid)
            if not self._flush_timer.isActive():
                self._flush_timer.start()

    def tool_finished(self, call_id: str, result: ToolResultMessage) -> None:
        self._flush()
        live = self.model.live.get(call_id)
        if live is not None:
            live.result = result
        i = self.model.row_of_tool(call_id)
        if i >= 0:
            self.model.row_at(i).item.tool_results[call_id] = result
            self.model.changed(i)
        else:
            self.model.append(ChatItem(None, result))

    # -- internals

    def _flush(self) -> None:
        self._flush_timer.stop()
        if self._pending is not None and self._stream is not None:
            self._stream.item.message = self._pending
            self._pending = None
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        rows = self.model.rows()
        # Dirty rows are the streaming row or rows with running tools: near the end.
        for i in range(len(rows) - 1, -1, -1):
            if rows[i].uid in dirty:
                if rows[i] is self._stream:
                    self._repaint_stream(i)
                else:
                    self.model.changed(i)
                dirty.discard(rows[i].uid)
                if not dirty:
                    break

    def _repaint_stream(self, i: int) -> None:
        """The streaming row has a new snapshot: repaint only what changed in its card
        (its end, as the reply grows), not the whole card again."""
        row = self.model.row_at(i)
        shown = self.delegate.painted.get(row.uid)
        if shown is None or shown[0] != row.version or not self.model.touch_quietly(i):
            self.model.changed(i)  # its last version is not painted yet, or its summary changed
            return
        view = self.view
        rect = view.visualRect(self.model.index(i, 0))
        if not rect.intersects(view.viewport().rect()):
            return  # scrolled away: painted when it comes back into view
        y = changed_from(shown[1], self.delegate.layout_for(i))
        if y is None:
            self.delegate.painted[row.uid] = (row.version, shown[1])
            return
        self.stream_repaints += 1
        view.viewport().update(rect.adjusted(0, y, 0, 0))

    def card_column(self) -> tuple[int, int]:
        """(left edge, width) of the column the cards are centred in (at most
        `MAX_TEXT_WIDTH` inside), in this pane's coordinates: the composer keeps to it
        (FIRST_HOUR.md p13)."""
        port = self.view.viewport()
        x0, col = column(port.width())
        return port.mapTo(self, QPoint(x0, 0)).x(), col

    def _marks(self, row: int) -> dict[int, list[Mark]]:
        """Text marked in card ``row``: what is found (Ctrl+F), then the selection."""
        marks = self.finder.marks_for(row)
        for part, (start, end) in self.selection.ranges_for(row).items():
            marks.setdefault(part, []).append((start, end, SELECTED))
        return marks

    @staticmethod
    def _copy_text(item: ChatItem) -> str:
        """A message as copied: its Markdown (a command with its output)."""
        if isinstance(item.message, BashExecutionMessage):
            return bash_text(item.message)
        return message_text(item.message)

    def _row_of_uid(self, uid: int) -> int:
        rows = self.model.rows()
        return next((i for i in range(len(rows) - 1, -1, -1) if rows[i].uid == uid), -1)

    def _index_of(self, row: Row) -> int:
        rows = self.model.rows()
        for i in range(len(rows) - 1, -1, -1):
            if rows[i] is row:
                return i
        return -1

    def _on_action(self, i: int, action: CardAction, arg: object) -> None:
        """Carry out a click on a card's button or toggle (the delegate's `CardAction`)."""
        if not 0 <= i < self.model.rowCount():
            return
        item = self.model.row_at(i).item
        match action:
            case CardAction.COPY:
                text = arg if isinstance(arg, str) else self._copy_text(item)
                QGuiApplication.clipboard().setText(text)
                self.copy_requested.emit(text)
            case CardAction.SIBLING if isinstance(arg, int) and item.entry_id is not None:
                if 0 <= item.sibling_index + arg < item.sibling_count:
                    # The other version comes as a new branch (`set_items`): it is shown
                    # where this card is, not at the branch's end, so the arrows stay
                    # under the pointer (FIRST_HOUR.md m12).
                    before = self.model.row_at(i - 1).item.entry_id if i > 0 else None
                    top = self.view.visualRect(self.model.index(i, 0)).top()
                    self._switch_anchor = (before, top, time.monotonic())
                    self.sibling_requested.emit(item.entry_id, arg)
            case CardAction.RETRY:
                self.retry_requested.emit()
            case CardAction.REGENERATE if item.entry_id is not None:
                self.regenerate_requested.emit(item.entry_id)
            case CardAction.TOGGLE if isinstance(arg, str):
                self.model.toggle(i, arg)
                self.view.schedule_relayout(i, keep=True)
            case CardAction.EDIT if isinstance(item.message, UserMessage):
                self.start_edit(i)
            case CardAction.OPEN if isinstance(arg, str):
                QDesktopServices.openUrl(QUrl.fromLocalFile(arg))

    def start_edit(self, i: int) -> None:
        """Open the inline edit-and-resend editor on user row ``i``."""
        row = self.model.row_at(i)
        row.editing = True
        self.model.changed(i)
        self.view.schedule_relayout(i, keep=True)
        self.view.relayout_now()
        index = self.model.index(i, 0)
        # the edit box in full view (m17: it opened above the top, under the notices)
        box = self.delegate.layout_for(i).editor_rect
        if box is not None:
            top = self.view.visualRect(index).top() + box.top() - 8
            shown = self.view.viewport().rect()
            bar = self.view.verticalScrollBar()
            if top < 0 or top + box.height() + 16 > shown.height():
                self.view.stick_to_bottom = False
                bar.setValue(bar.value() + top)
        self.view.edit(index)

    def _on_edit_submitted(self, row: object, text: str) -> None:
        if isinstance(row, Row) and row.item.entry_id is not None and text.strip():
            self.edit_resend_requested.emit(row.item.entry_id, text)
