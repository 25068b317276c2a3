"""The branch map of the session shown, for the window: brought in line with the session
(relaid out in slices, or taken from the layout kept at its last close), its filter, the
rows' previews and tooltips, and the in-session search whose hits it marks. Methods of
`Workbench` (assigned there)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from desktop_agent.session import SessionError
from desktop_agent.workbench._changes import Changes
from desktop_agent.workbench._map import BranchMap, MapUpdate
from desktop_agent.workbench._map_layout import MapFilter
from desktop_agent.workbench._open import OpenSession
from desktop_agent.workbench._search import search_entries, tooltip_text

if TYPE_CHECKING:
    from desktop_agent.workbench._workbench import Workbench

log = logging.getLogger("desktop_agent.workbench")


def sync_map(wb: Workbench) -> MapUpdate:
    """Bring `map` in line with the shown session (see `BranchMap.sync`)."""
    return wb.map.sync(wb.session.shape() if wb.session is not None else None)


async def update_map(wb: Workbench, view: int | None = None) -> MapUpdate:
    """`sync_map`, a relayout in slices on the loop (`BranchMap.update`); the first
    one after an open starts from the layout kept at the last close when it fits.
    ``view``: the map of that view (window), default the active one's."""
    where = wb.sessions.views.get(wb.sessions.active if view is None else view)
    if where is None:
        return MapUpdate()
    shown, branch_map = where.shown, where.map
    shape = shown.session.shape() if shown is not None else None
    saved = None
    if shown is not None:
        saved, shown.kept_layout = shown.kept_layout, None
    if saved is not None and shape is not None and await branch_map.restore_saved(shape, saved):
        await branch_map.update(shape)  # entries appended since
        return MapUpdate(reset=True)
    return await branch_map.update(shape)


async def _keep_map(wb: Workbench, opened: OpenSession, shown_in: BranchMap | None = None) -> None:
    """Keep the layout of ``opened`` (a big one) from the map that shows it
    (``shown_in``, default: the active view's) for its next open."""
    branch_map = shown_in or wb.map
    shape = branch_map.shape
    if wb._maps is None or len(branch_map.rows) < wb.limits.map_min_rows or shape is None:
        return
    if shape.ids is not opened.session.shape().ids:  # (the map shows another session)
        return
    try:
        data = branch_map.saved()
    except (KeyError, IndexError, ValueError):  # a shortcut only: never in the way
        log.exception("the map layout could not be kept")
        return
    if data is not None:
        await asyncio.to_thread(wb._maps.write, opened.ref, data)


async def set_map_filter(wb: Workbench, name: MapFilter) -> Changes:
    """Which entries the map shows (`MAP_FILTERS`); remembered."""
    wb.map.set_filter(name)
    wb.state.map_filter = name
    wb._save_state(wb.state)
    return wb._changed(Changes(map=True))


async def map_previews(wb: Workbench, entry_ids: Sequence[str]) -> dict[str, str]:
    """One-line previews of map rows (read off the loop once, then kept)."""
    session = wb.session
    if session is None:
        return {}
    by_id = session.shape().by_id
    return await session.previews([e for e in entry_ids if e in by_id])


def map_tooltip(wb: Workbench, entry_id: str) -> str:
    """The whole message of a map row, for its tooltip (decoded now)."""
    return tooltip_text(wb.session, entry_id) if wb.session is not None else ""


async def search_session(wb: Workbench, query: str) -> list[str]:
    """Entries of the shown session (every branch) that match ``query``; the map
    marks them (an empty query clears the marks)."""
    wb.map_query = query.strip()
    session = wb.session
    try:
        hits = await search_entries(session, wb.map_query) if session is not None else []
    except SessionError as exc:  # e.g. the file changed under us: no marks, a notice
        log.warning("could not search the session: %s", exc)
        hits = []
    if wb.session is session:
        wb.map.set_hits(hits)
        wb._changed(Changes(map=True))
    return hits
