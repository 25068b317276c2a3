"""Search that knows branches: a content hit from the sidebar search opens its session
at that entry (asking before it moves the leaf to another branch), and the hits of the
query are marked on the branch map."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QAbstractItemView

from desktop_agent.gui._ports import Ops
from desktop_agent.gui.chat import ChatPane
from desktop_agent.gui.map import MapPane
from desktop_agent.workbench import Workbench


class HitNavigator:
    """The window's search routes (bound by `install_actions`). ``ask_switch(query)``
    asks whether to move the leaf to the branch of a hit elsewhere (tests replace it)."""

    def __init__(
        self,
        wb: Workbench,
        ops: Ops,
        chat: ChatPane,
        map_pane: MapPane,
        ask_switch: Callable[[str], bool],
    ) -> None:
        self.wb = wb
        self.ops = ops
        self.chat = chat
        self.map_pane = map_pane
        self.ask_switch = ask_switch

    async def open_from_list(self, ref: str) -> None:
        """Open a session picked in the sidebar; while a search is on, at its hit."""
        query = self.wb.query.strip()
        if ref != self.wb.ref:
            await self.ops.do(self.wb.open(ref))
        if query and self.wb.ref == ref:
            await self.go_to(query)

    async def search(self, query: str) -> None:
        """The sidebar's search: the list, and the hits of the open session on its map."""
        before = self.wb.query.strip()
        if before and not query.strip():
            self.chat.finder.drop_query(before)
        await self.ops.do(self.wb.refresh_sessions(query))
        if self.wb.session is not None:
            await self.wb.search_session(query)
            await self.ops.drawn()

    async def go_to(self, query: str) -> None:
        """Mark the hits of ``query`` on the map and show the best one: the first on the
        current branch, else (after asking) the newest elsewhere, whose branch the leaf
        then moves to. A hit that a compaction folded scrolls the map to it."""
        hits = await self.wb.search_session(query)
        await self.ops.drawn()
        if not hits:
            return
        path = set(self.wb.current_path())
        on_path = [h for h in hits if h in path]
        target = on_path[0] if on_path else hits[-1]
        if not on_path:
            if self.ask_switch(query):
                await self.ops.do(self.wb.navigate_to_branch_of(target))
            else:
                self.map_pane.reveal(target)
                return
        self.map_pane.reveal(target)
        self.chat_show(target)

    def chat_show(self, entry_id: str) -> None:
        """Scroll the chat to the card of ``entry_id`` (or of the last card before it)."""
        path = self.wb.current_path()
        if entry_id not in path:
            return
        wanted = set(path[: path.index(entry_id) + 1])
        model = self.chat.model
        best = -1
        for i in range(model.rowCount()):
            if model.row_at(i).item.entry_id in wanted:
                best = i
        if best >= 0:
            self.chat.view.scrollTo(
                model.index(best, 0), QAbstractItemView.ScrollHint.PositionAtTop
            )
        query = self.wb.query.strip()
        if query:  # the term marked in the text too, not only the card shown (m5)
            self.chat.finder.show_query(query, max(best, 0))
