"""Keyboard routes of the main window: moving between panes (F6 / Ctrl+Tab) and the
message actions (edit, copy, previous/next version) on the focused or last card.

The message actions go through the chat delegate's ``action`` signal, the route a click
on the card's hover button takes, so a key and a click do exactly the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QToolBar, QWidget

from desktop_agent.ai import AssistantMessage, UserMessage
from desktop_agent.gui._composer import Composer
from desktop_agent.gui.chat import ChatPane
from desktop_agent.gui.map import MapPane
from desktop_agent.gui.sidebar import SessionSidebar


def focus_target(pane: QWidget) -> QWidget | None:
    """The widget of ``pane`` that takes focus when the pane is entered: its list, view
    or text box (a scroll area) if it has one, else its first focusable widget."""
    candidates = [pane, *pane.findChildren(QWidget)]
    usable = [
        c
        for c in candidates
        if c.isVisibleTo(pane.window())
        and c.isEnabled()
        and c.focusPolicy() & Qt.FocusPolicy.TabFocus
        and c.objectName() != "focusRing"
    ]
    for c in usable:
        if isinstance(c, QAbstractScrollArea):
            return c
    return usable[0] if usable else None


def tab_chain(
    composer: Composer,
    toolbar: QToolBar | None,
    sidebar: SessionSidebar,
    chat: ChatPane,
    map_pane: MapPane,
) -> list[QWidget]:
    """The window's Tab order: the message box and its buttons, the toolbar left to
    right, the session list, the conversation, the branch pane, back to the message box
    (hidden widgets are passed over)."""
    buttons: list[QWidget] = []
    if toolbar is not None:
        for action in toolbar.actions():
            button = toolbar.widgetForAction(action)
            if button.focusPolicy() & Qt.FocusPolicy.TabFocus:
                buttons.append(button)
    return [
        composer.input, composer.send_button, composer.follow_button, composer.stop_button,
        composer.model_picker, composer.thinking_picker,
        *buttons,
        sidebar.search, sidebar.new_button, sidebar.view, sidebar.trash_view,
        sidebar.trash_toggle, sidebar.backup_button,
        chat.view,
        map_pane.tabs, map_pane.filter, map_pane.branch_filter, map_pane.view,
        map_pane.branch_list,
    ]  # fmt: skip


def set_tab_order(chain: list[QWidget]) -> None:
    for first, second in pairwise(chain):
        QWidget.setTabOrder(first, second)


class PaneCycler:
    """Moves the focus through ``panes()`` (the window's: sessions -> conversation ->
    message box -> branch map), skipping hidden panes."""

    def __init__(self, panes: Callable[[], list[QWidget]]) -> None:
        self._panes = panes

    def panes(self) -> list[QWidget]:
        return [p for p in self._panes() if not p.isHidden()]

    def current(self) -> int:
        focus = QApplication.focusWidget()
        for i, pane in enumerate(self.panes()):
            if focus is not None and (focus is pane or pane.isAncestorOf(focus)):
                return i
        return -1

    def cycle(self, step: int) -> None:
        panes = self.panes()
        if not panes:
            return
        start = self.current()
        for k in range(1, len(panes) + 1):
            i = (start + step * k) % len(panes) if start >= 0 else (0 if step > 0 else -1)
            target = focus_target(panes[i])
            if target is not None:
                target.setFocus(Qt.FocusReason.TabFocusReason)
                return


COPIED_FEEDBACK_MS = 2000
QUEUED_FEEDBACK_MS = 8000


class ChatActions:
    """Edit, copy and switch versions of the focused message (or the last fitting one).

    ``say(text, ms)`` shows feedback in the status bar; ``switch_at_end(step)`` switches
    the version of the last message when no card has the focus."""

    def __init__(
        self,
        chat: ChatPane,
        composer: Composer,
        say: Callable[[str, int], None],
        switch_at_end: Callable[[int], object],
    ) -> None:
        self.chat = chat
        self.composer = composer
        self.say = say
        self.switch_at_end = switch_at_end

    def _rows(self) -> list[int]:
        """Rows to act on: the focused card first, then the others from the end."""
        chat = self.chat
        n = chat.model.rowCount()
        order = list(range(n - 1, -1, -1))
        current = chat.view.currentIndex()
        if chat.view.hasFocus() and current.isValid():
            return [current.row()]
        return order

    def _emit(self, row: int, action: str, arg: object = None) -> None:
        self.chat.delegate.action.emit(row, action, arg)

    def edit(self) -> None:
        model = self.chat.model
        for i in self._rows():
            item = model.row_at(i).item
            if isinstance(item.message, UserMessage) and item.entry_id is not None:
                self._emit(i, "edit")
                return

    def copy(self) -> None:
        model = self.chat.model
        rows = self._rows()
        if len(rows) == 1:
            self._emit(rows[0], "copy")
            return
        for i in rows:
            if isinstance(model.row_at(i).item.message, AssistantMessage):
                self._emit(i, "copy")
                return

    def quote(self, text: str) -> None:
        """ "Quote in reply": ``text`` as a Markdown quote at the end of the message box."""
        lines = text.strip("\n").splitlines() or [""]
        quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in lines)
        composer = self.composer
        before = composer.text().rstrip("\n")
        composer.set_text(f"{before}\n\n{quoted}\n\n" if before else f"{quoted}\n\n")
        composer.input.setFocus(Qt.FocusReason.OtherFocusReason)

    def queued(self, text: str, *, steer: bool) -> None:
        """A message typed while the agent works: say where it went (m8: it vanished)."""
        words = " ".join(text.split())
        short = words if len(words) <= 60 else words[:59] + "…"
        what = (
            QCoreApplication.translate(
                "ChatActions", "Sent to the agent, read before its next step: %s"
            )
            if steer
            else QCoreApplication.translate(
                "ChatActions", "Queued, sent when the agent has finished: %s"
            )
        )
        self.say(what % short, QUEUED_FEEDBACK_MS)

    def copied(self) -> None:
        """The feedback of every copy from the chat."""
        self.say(QCoreApplication.translate("ChatActions", "Copied"), COPIED_FEEDBACK_MS)

    def _version(self, step: int) -> None:
        chat = self.chat
        current = chat.view.currentIndex()
        if chat.view.hasFocus() and current.isValid():
            item = chat.model.row_at(current.row()).item
            if item.sibling_count > 1:
                self._emit(current.row(), "sibling", step)
            return
        self.switch_at_end(step)

    def previous_version(self) -> None:
        self._version(-1)

    def next_version(self) -> None:
        self._version(1)
