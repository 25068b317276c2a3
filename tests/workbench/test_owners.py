"""The workbench's parts on their own, without a harness or Qt (issue 22 item 1): the
notices (`Notices`) and the session list with its stores (`SessionList`)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.session import Session
from desktop_agent.workbench import Changes, Notices, SessionList, WorkbenchLimits
from tests.helpers.workbench import answer, make_store, seed_async, user

pytestmark = pytest.mark.asyncio


async def test_notices_keep_one_per_cause_and_run_an_action_once() -> None:
    notices = Notices()
    ran: list[str] = []

    async def undo() -> Changes:
        ran.append("undo")
        return Changes(sessions=True)

    async def other() -> Changes:
        ran.append("other")
        return Changes()

    assert notices.notify("trash", "Moved {what}.", ("Undo", undo), what="x") == Changes(
        notices=True
    )
    assert notices["trash"].english == "Moved x." and notices["trash"].action_label == "Undo"
    notices.notify("trash", "Moved {what} again.", what="y")  # the same cause: replaced
    assert len(notices) == 1 and notices.texts() == ["Moved y again."]
    changes, action = notices.take("trash")  # no button any more: nothing to run
    assert action is None and changes == Changes(notices=True) and "trash" not in notices
    assert notices.notify("gone", None) == Changes()  # dropping what is not there: nothing

    notices.notify_choices("store", "Pick {n}.", ("Keep", undo), [("Other", other)], n=2)
    assert notices["store"].more == (("Other", "store/Other"),)
    changes, action = notices.take("store/Other")
    assert action is not None and "store" not in notices
    await action()
    assert notices.take("store/Other") == (Changes(), None)  # once
    assert ran == ["other"]


async def test_the_session_list_lists_finds_and_titles_sessions(
    tmp_path: Path, workspace: Path
) -> None:
    data = tmp_path / "data"

    async def first(s: Session) -> None:
        await s.append_message(user("the first question"))
        await s.append_message(answer("an answer"))

    async def second(s: Session) -> None:
        await s.append_message(user("the second question"))

    one = await seed_async(data, workspace, first)
    two = await seed_async(data, workspace, second)
    spawned: list[asyncio.Task[Any]] = []
    refreshed: list[int] = []

    def spawn(coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        spawned.append(task)
        return task

    async def refresh() -> None:
        refreshed.append(1)

    listing = SessionList(
        make_store(data, "jsonl"),
        pi_store=None,
        make_pi=None,
        pi_default_folder="",
        limits=WorkbenchLimits(index_wait_s=5.0),
        spawn=spawn,
        refresh=refresh,
        opening=lambda: False,
    )
    try:
        await listing.start(one)  # the session a launch restores: indexed once opened
        assert listing.index_after_open == [one] and listing.first_index is None
        await listing.refresh()
        assert {r.path for r in listing.rows} == {two}  # the restored one is not read twice
        await listing.index_later()
        await listing.refresh()
        assert {r.path for r in listing.rows} == {one, two}
        assert listing.title(one) == "the first question"
        assert listing.title("/nowhere.jsonl") == "Session"
        assert not listing.is_pi(one) and listing.store_for(one) is listing.store
        row = listing.row_for(two)
        assert row is not None and await listing.find(row.id) == two
        await listing.refresh("second")
        assert [r.path for r in listing.rows] == [two] and listing.query == "second"
        assert listing.pi_count == 0 and spawned == [] and refreshed == []
    finally:
        await listing.close()


def indexing(listing: SessionList) -> bool:
    """Whether our folder's first index still runs (a call: read anew each time)."""
    return listing.first_index is not None


async def test_a_slow_index_goes_on_in_the_background_and_refreshes_the_list(
    tmp_path: Path, workspace: Path
) -> None:
    data = tmp_path / "data"

    async def build(s: Session) -> None:
        await s.append_message(user("listed later"))

    ref = await seed_async(data, workspace, build)
    spawned: list[asyncio.Task[Any]] = []
    refreshed: list[int] = []

    def spawn(coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        spawned.append(asyncio.ensure_future(coro))
        return spawned[-1]

    async def refresh() -> None:
        refreshed.append(1)

    listing = SessionList(
        make_store(data, "jsonl"),
        pi_store=None,
        make_pi=None,
        pi_default_folder="",
        limits=WorkbenchLimits(index_wait_s=0.0),  # no wait at all: the index goes on
        spawn=spawn,
        refresh=refresh,
        opening=lambda: False,
    )
    try:
        await listing.start(None)
        still_indexing = listing.first_index
        assert still_indexing is not None
        await asyncio.wait(spawned)
        assert still_indexing.done() and refreshed == [1]
        assert not indexing(listing)
        await listing.refresh()
        assert [r.path for r in listing.rows] == [ref]
    finally:
        await listing.close()
