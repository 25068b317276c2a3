"""Search that knows branches: a content hit from the sidebar search opens its session
at that entry (asking before it moves the leaf to another branch), the hits of the query
are marked on the branch map, and the map's previews are loaded on demand."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QAbstractItemView, QMessageBox

if TYPE_CHECKING:
    from desktop_agent.gui._main_window import MainWindow


class HitNavigator:
    """The window's search routes (bound by `install_actions`); ``ask_switch`` is the
    entry point tests replace."""

    def __init__(self, window: MainWindow) -> None:
        self.w = window

    async def open_from_list(self, ref: str) -> None:
        """Open a session picked in the sidebar; while a search is on, at its hit."""
        query = self.w.wb.query.strip()
        if ref != self.w.wb.ref:
            await self.w.do(self.w.wb.open(ref))
        if query and self.w.wb.ref == ref:
            await self.go_to(query)

    async def search(self, query: str) -> None:
        """The sidebar's search: the list, and the hits of the open session on its map."""
        await self.w.do(self.w.wb.refresh_sessions(query))
        if self.w.wb.session is not None:
            await self.w.wb.search_session(query)
            await self.w.presenter.settled()

    async def go_to(self, query: str) -> None:
        """Mark the hits of ``query`` on the map and show the best one: the first on the
        current branch, else (after asking) the newest elsewhere, whose branch the leaf
        then moves to. A hit that a compaction folded scrolls the map to it."""
        hits = await self.w.wb.search_session(query)
        await self.w.presenter.settled()
        if not hits:
            return
        path = set(self.w.wb.current_path())
        on_path = [h for h in hits if h in path]
        target = on_path[0] if on_path else hits[-1]
        if not on_path:
            if self.ask_switch(query):
                await self.w.do(self.w.wb.navigate_to_branch_of(target))
            else:
                self.w.map_pane.reveal(target)
                return
        self.w.map_pane.reveal(target)
        self.chat_show(target)

    def ask_switch(self, query: str) -> bool:
        """Entry point tests replace: move the leaf to the branch of a hit elsewhere?"""
        if self.w.no_err_windows:
            return False
        answer = QMessageBox.question(
            self.w,
            QCoreApplication.translate("MainWindow", "Switch branch?"),
            QCoreApplication.translate(
                "MainWindow",
                "“{query}” is found on another branch of this conversation. Switch to that branch?",
            ).format(query=query),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.Yes,
        )
        return answer == QMessageBox.StandardButton.Yes

    def chat_show(self, entry_id: str) -> None:
        """Scroll the chat to the card of ``entry_id`` (or of the last card before it)."""
        path = self.w.wb.current_path()
        if entry_id not in path:
            return
        wanted = set(path[: path.index(entry_id) + 1])
        model = self.w.chat.model
        best = -1
        for i in range(model.rowCount()):
            if model.row_at(i).item.entry_id in wanted:
                best = i
        if best >= 0:
            self.w.chat.view.scrollTo(
                model.index(best, 0), QAbstractItemView.ScrollHint.PositionAtTop
            )

    async def load_previews(self, entry_ids: list[str]) -> None:
        session = self.w.wb.session
        texts = await self.w.wb.map_previews(entry_ids)
        if self.w.wb.session is session:
            self.w.map_pane.set_previews(texts)
