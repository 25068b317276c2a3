"""The branch map through the real `MainWindow` (issue 9 item 1): clicks, keys, the
context menu, the Branches list and search hits on another branch, asserting on what
is painted, selected and written."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop_agent.gui import MainWindow
from desktop_agent.gui.map import MapPane
from desktop_agent.session import Session
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import (
    SCREENSHOTS,
    chat_text,
    close,
    find_index,
    idle,
    open_window,
    painted,
    painted_text,
    run,
    settle,
)
from tests.helpers.workbench import answer, seed, user

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def three_branches(ids: dict[str, str]):  # type: ignore[no-untyped-def]
    """q1 a1 ┬ q2 a2          "second question" (the first version)
    ├ q2b a2b        "other second question", whose answer mentions zebras
    └ q2c a2c ← leaf "third version"
    """

    async def build(s: Session) -> None:
        ids["q1"] = await s.append_message(user("first question"))
        ids["a1"] = await s.append_message(answer("first answer"))
        ids["q2"] = await s.append_message(user("second question"))
        ids["a2"] = await s.append_message(answer("second answer"))
        await s.move_to(ids["a1"])
        ids["q2b"] = await s.append_message(user("other second question"))
        ids["a2b"] = await s.append_message(answer("other answer about zebras"))
        await s.move_to(ids["a1"])
        ids["q2c"] = await s.append_message(user("third version"))
        ids["a2c"] = await s.append_message(answer("third answer"))

    return build


def open_three(
    qtbot: QtBot, tmp_path: Path, provider: ProviderServer, workspace: Path, store: str = "jsonl"
) -> tuple[MainWindow, dict[str, str], str]:
    """A window on a session of `three_branches`: (window, entry ids, its reference)."""
    data = tmp_path / "data"
    ids: dict[str, str] = {}
    ref = seed(data, workspace, three_branches(ids), store)
    window = open_window(qtbot, data, provider.model("anthropic-messages"), store=store)
    return window, ids, ref


def row_of(window: MainWindow, entry_id: str) -> int:
    return window.map_pane.bmap.row_of(entry_id)


def click_row(
    window: MainWindow, entry_id: str, button: Qt.MouseButton = Qt.MouseButton.LeftButton
) -> None:
    view = window.map_pane.view
    index = find_index(view.model(), entry_id)
    assert index is not None, entry_id
    view.scrollTo(index)
    QTest.mouseClick(view.viewport(), button, pos=view.visualRect(index).center())


def leaf_entries(session: Session) -> list[str]:
    return [json.loads(r[4])["targetId"] for r in session.raw_entries() if r[2] == "leaf"]


def test_clicking_a_node_of_another_branch_moves_the_leaf_and_the_map_redraws(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    window, ids, _ref = open_three(qtbot, tmp_path, provider, workspace, store)
    pane = window.map_pane
    assert pane.objectName() == "branchPane" and pane.view.objectName() == "branchTree"
    bmap = pane.bmap
    names = {v: k for k, v in ids.items()}
    assert [names[r.entry_id] for r in bmap.rows] == [
        "q1", "a1", "q2", "a2", "q2b", "a2b", "q2c", "a2c",
    ]  # fmt: skip
    assert [r.lane for r in bmap.rows] == [0, 0, 1, 1, 1, 1, 0, 0]
    assert pane.view.currentIndex().row() == bmap.leaf_row == 7
    qtbot.waitUntil(lambda: pane.view.map_delegate.painted > 0)
    # previews arrive for the painted rows
    qtbot.waitUntil(lambda: pane.model().text(3) == "second answer")
    click_row(window, ids["a2"])
    session = window.wb.session
    assert session is not None
    qtbot.waitUntil(lambda: session.leaf_id() == ids["a2"])
    idle(qtbot, window)
    assert "second answer" in painted_text(painted(window, 3))
    assert leaf_entries(session)[-1] == ids["a2"]
    # no row moved (m12): the new path is told by its text, the leaf by its ring
    bmap = pane.bmap
    assert [r.lane for r in bmap.rows] == [0, 0, 1, 1, 1, 1, 0, 0]
    assert [names[r.entry_id] for k, r in enumerate(bmap.rows) if bmap.on_path(k)] == [
        "q1", "a1", "q2", "a2",
    ]  # fmt: skip
    assert pane.view.currentIndex().row() == bmap.leaf_row == row_of(window, ids["a2"])
    # clicking the current leaf writes nothing
    before = len(leaf_entries(session))
    click_row(window, ids["a2"])
    idle(qtbot, window)
    assert len(leaf_entries(session)) == before
    close(qtbot, window)


def test_keyboard_along_the_lane_across_siblings_and_enter(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window, ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    view = window.map_pane.view
    view.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(view.hasFocus)

    def at() -> str:
        return window.map_pane.entry_at_row(view.currentIndex().row())

    assert at() == ids["a2c"]
    QTest.keyClick(view, Qt.Key.Key_Up)
    assert at() == ids["q2c"]
    QTest.keyClick(view, Qt.Key.Key_Left)  # the previous version of this prompt
    assert at() == ids["q2b"]
    QTest.keyClick(view, Qt.Key.Key_Left)
    assert at() == ids["q2"]
    QTest.keyClick(view, Qt.Key.Key_Right)
    assert at() == ids["q2b"]
    QTest.keyClick(view, Qt.Key.Key_Down)  # along its lane
    assert at() == ids["a2b"]
    QTest.keyClick(view, Qt.Key.Key_Home)
    assert at() == ids["q1"]
    QTest.keyClick(view, Qt.Key.Key_End)
    assert at() == ids["a2c"]
    QTest.keyClick(view, Qt.Key.Key_Up)
    QTest.keyClick(view, Qt.Key.Key_Left)
    QTest.keyClick(view, Qt.Key.Key_Down)
    assert at() == ids["a2b"]
    session = window.wb.session
    assert session is not None and session.leaf_id() == ids["a2c"]  # moving is not switching
    QTest.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: session.leaf_id() == ids["a2b"])
    idle(qtbot, window)
    assert "other answer about zebras" in painted_text(painted(window, 3))
    assert window.map_pane.entry_at_row(view.currentIndex().row()) == ids["a2b"]
    assert view.hasFocus()
    close(qtbot, window)


def test_context_menu_label_fork_and_summarize(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window, ids, ref = open_three(qtbot, tmp_path, provider, workspace)
    pane = window.map_pane
    session = window.wb.session
    assert session is not None
    # label, then remove it
    monkeypatch.setattr(MapPane, "ask_label", staticmethod(lambda _parent, _current: "idea"))
    menu = pane.context_menu_for(ids["q2"])
    assert menu is not None
    names = [a.objectName() for a in menu.actions() if a.objectName()]
    assert names == ["goHere", "goHereAndSummarize", "forkFromHere", "setLabel"]
    next(a for a in menu.actions() if a.objectName() == "setLabel").trigger()
    qtbot.waitUntil(lambda: session.label_of(ids["q2"]) == "idea")
    idle(qtbot, window)
    r = row_of(window, ids["q2"])
    assert pane.bmap.label(r) == "idea"
    assert "label idea" in pane.model().accessible(r)
    menu = pane.context_menu_for(ids["q2"])
    assert menu is not None
    next(a for a in menu.actions() if a.objectName() == "removeLabel").trigger()
    qtbot.waitUntil(lambda: session.label_of(ids["q2"]) is None)
    idle(qtbot, window)
    # go here and summarize the branch being left: a branch summary row on the new path
    provider.script(Reply(text=["The third version was tried."]))
    menu = pane.context_menu_for(ids["a2"])
    assert menu is not None
    next(a for a in menu.actions() if a.objectName() == "goHereAndSummarize").trigger()
    qtbot.waitUntil(lambda: pane.bmap.rows[pane.bmap.leaf_row].kind == "summary", timeout=10_000)
    idle(qtbot, window)
    leaf = pane.bmap.rows[pane.bmap.leaf_row]
    assert pane.bmap.on_path(pane.bmap.leaf_row)
    assert pane.bmap.rows[leaf.parent].entry_id == ids["a2"] and leaf.lane == 1
    # fork from here: a new session holding the path to that entry, opened
    menu = pane.context_menu_for(ids["a2b"])
    assert menu is not None
    next(a for a in menu.actions() if a.objectName() == "forkFromHere").trigger()
    qtbot.waitUntil(lambda: window.wb.ref not in (None, ref), timeout=10_000)
    idle(qtbot, window)
    forked = window.wb.session
    assert forked is not None
    assert forked.branch_ids()[:4] == [ids[k] for k in ("q1", "a1", "q2b", "a2b")]
    assert [r.entry_id for r in pane.bmap.rows] == [ids[k] for k in ("q1", "a1", "q2b", "a2b")]
    assert "(fork)" in window.windowTitle()
    close(qtbot, window)


def test_branches_list_newest_first_and_a_click_switches(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window, ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    pane = window.map_pane
    tabs = pane.tabs
    QTest.mouseClick(tabs, Qt.MouseButton.LeftButton, pos=tabs.tabRect(1).center())
    assert pane.stack.currentWidget() is pane.branch_list and pane.branch_list.isVisible()
    model = pane.branches
    assert [t.leaf_id for t in model.tips] == [ids["a2c"], ids["a2b"], ids["a2"]]
    assert model.tips[0].current
    qtbot.waitUntil(lambda: model.index(1).data() == "other answer about zebras")
    assert pane.branch_list.currentIndex().row() == 0
    view = pane.branch_list
    QTest.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(model.index(1)).center()
    )
    session = window.wb.session
    assert session is not None
    qtbot.waitUntil(lambda: session.leaf_id() == ids["a2b"])
    idle(qtbot, window)
    assert "other answer about zebras" in painted_text(painted(window, 3))
    assert [t.leaf_id for t in model.tips if t.current] == [ids["a2b"]]
    # keyboard: Enter on a row switches too
    view.setFocus()
    view.setCurrentIndex(model.index([t.leaf_id for t in model.tips].index(ids["a2"])))
    QTest.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: session.leaf_id() == ids["a2"])
    close(qtbot, window)


def test_search_hit_on_another_branch_asks_then_moves_the_leaf_and_marks_the_map(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    ids: dict[str, str] = {}
    hit_ref = seed(data, workspace, three_branches(ids))
    other: dict[str, str] = {}

    async def plain(s: Session) -> None:
        other["q"] = await s.append_message(user("an unrelated question"))
        other["a"] = await s.append_message(answer("an unrelated answer"))

    plain_ref = seed(data, workspace, plain)
    window = open_window(qtbot, data, provider.model("anthropic-messages"), target=plain_ref)
    assert window.wb.ref == plain_ref
    asked: list[str] = []
    answers = [False, True]

    def ask(query: str) -> bool:
        asked.append(query)
        return answers.pop(0)

    window.hits.ask_switch = ask
    sidebar = window.sidebar
    QTest.keyClicks(sidebar.search, "zebras")
    qtbot.waitUntil(lambda: window.wb.query == "zebras", timeout=5000)
    idle(qtbot, window)
    assert window.map_pane.bmap.hits == frozenset()  # nothing in the open session
    index = sidebar._model.index_for_path(hit_ref)
    assert index.isValid()
    rect = sidebar.view.visualRect(index)
    QTest.mouseClick(sidebar.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: asked == ["zebras"], timeout=10_000)
    idle(qtbot, window)
    session = window.wb.session
    assert window.wb.ref == hit_ref and session is not None
    # "No": the leaf stays, the hit's row is selected and marked
    assert session.leaf_id() == ids["a2c"]
    hit_row = row_of(window, ids["a2b"])
    assert window.map_pane.bmap.hits == {hit_row}
    assert window.map_pane.view.currentIndex().row() == hit_row
    assert "search hit" in window.map_pane.model().accessible(hit_row)
    # Again, "Yes": the leaf moves to that branch and the chat shows it
    window.map_pane.view.setCurrentIndex(window.map_pane.model().index(0, 0))
    run(qtbot, window.hits.go_to("zebras"))
    idle(qtbot, window)
    assert asked == ["zebras", "zebras"]
    assert session.leaf_id() == ids["a2b"]
    assert "zebras" in chat_text(window)
    hit_row = row_of(window, ids["a2b"])
    assert window.map_pane.bmap.hits == {hit_row} and window.map_pane.bmap.on_path(hit_row)
    assert window.map_pane.view.currentIndex().row() == hit_row
    # the term is marked in the chat's text as well, its hit in view (FIRST_HOUR m5:
    # only the card was scrolled to), and the focus stays where it was
    finder = window.chat.finder
    assert finder.isVisible() and finder.input.text() == "zebras"
    assert not finder.input.hasFocus()
    hit = finder.current_rect()
    assert hit is not None and window.chat.view.viewport().rect().contains(hit)
    row = finder.hits[finder.current][0]
    assert "zebras" in str(window.chat.model.row_at(row).item.message)
    assert any(m for m in window.chat._marks(row).values())
    # clearing the search clears the marks
    sidebar.search.clear()
    qtbot.waitUntil(lambda: window.wb.query == "", timeout=5000)
    idle(qtbot, window)
    assert window.map_pane.bmap.hits == frozenset()
    assert not finder.isVisible() and window.chat._marks(row) == {}
    close(qtbot, window)


def test_screenshot_of_a_map_with_three_branches(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window, _ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    pane = window.map_pane
    qtbot.waitUntil(lambda: all(pane.model().text(r) != "…" for r in range(len(pane.bmap))))
    settle(qtbot, window)
    SCREENSHOTS.mkdir(exist_ok=True)
    image = pane.grab().toImage()
    image.save(str(SCREENSHOTS / "branch_map.png"))
    # the current path is drawn in the accent colour, the other branches are not
    colors = pane.view.map_delegate.colors
    assert colors.lane(0) == colors.accent and colors.lane(1) != colors.accent
    view = pane.view
    x = round(view.map_delegate.lane_x(view.visualRect(pane.model().index(0, 0)), 0))
    y = view.visualRect(pane.model().index(3, 0)).center().y()  # a row of lane 1: lane 0 passes
    grabbed = view.viewport().grab().toImage()
    assert grabbed.pixelColor(QPoint(x, y)).name() == colors.accent.name()
    for w in QApplication.allWidgets():
        focusable = w.focusPolicy() != Qt.FocusPolicy.NoFocus
        if w.isVisible() and pane.isAncestorOf(w) and focusable:
            assert w.objectName() and w.accessibleName(), w
    close(qtbot, window)


def test_a_hit_inside_a_compacted_part_of_the_current_branch_scrolls_the_map_to_it(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    ids: dict[str, str] = {}

    async def build(s: Session) -> None:
        ids["old"] = await s.append_message(user("an early question about walruses"))
        ids["olda"] = await s.append_message(answer("an early answer"))
        for k in range(40):
            await s.append_message(user(f"filler question {k}"))
            kept = await s.append_message(answer(f"filler answer {k}"))
        await s.append_compaction("everything so far, summarized", kept, 80_000)
        await s.append_message(user("after the compaction"))
        await s.append_message(answer("the latest answer"))

    seed(data, workspace, build)
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    asked: list[str] = []

    def ask(query: str) -> bool:
        asked.append(query)
        return True

    window.hits.ask_switch = ask
    view = window.map_pane.view
    assert view.rowAt(0) > 0  # the map shows its end: the early rows are scrolled away
    run(qtbot, window.hits.go_to("walruses"))
    idle(qtbot, window)
    assert asked == []  # on the current branch: nothing to ask
    row = row_of(window, ids["old"])
    assert view.currentIndex().row() == row and window.map_pane.bmap.hits == {row}
    assert view.visualRect(view.currentIndex()).intersects(view.viewport().rect())
    session = window.wb.session
    assert session is not None and ids["old"] in window.wb.current_path()
    close(qtbot, window)


def test_a_branch_switch_in_a_long_session_decodes_only_what_the_chat_shows(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """Issue 9 item 1: clicking another branch of a 3,000-entry session writes one `leaf`
    entry and paints that branch's end at once; the chat decodes a page of messages, not
    the branch (which shares 1,400 messages with the old one)."""
    ids: dict[str, str] = {}

    async def build(s: Session) -> None:
        for i in range(700):
            await s.append_message(user(f"question {i}"))
            ids[f"a{i}"] = await s.append_message(answer(f"answer {i}"))
        for i in range(700, 1_500):
            await s.append_message(user(f"question {i}"))
            ids[f"a{i}"] = await s.append_message(answer(f"answer {i}"))
        await s.move_to(ids["a699"])
        for i in range(20):
            await s.append_message(user(f"other question {i}"))
            ids[f"b{i}"] = await s.append_message(answer(f"other answer {i}"))
        await s.move_to(ids["a1499"])

    data = tmp_path / "data"
    seed(data, workspace, build)
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    session = window.wb.session
    assert session is not None
    tree = session.get_storage().tree
    assert "answer 1499" in chat_text(window)
    decoded = set(tree.parsed)
    leaves = len(leaf_entries(session))
    click_row(window, ids["b19"])
    qtbot.waitUntil(lambda: session.leaf_id() == ids["b19"])
    idle(qtbot, window)
    last = window.chat.model.rowCount() - 1
    assert "other answer 19" in painted_text(painted(window, last))  # the new end, painted
    assert len(leaf_entries(session)) == leaves + 1  # one leaf entry
    newly = set(tree.parsed) - decoded
    assert 0 < len(newly) <= 120, len(newly)  # a page or two, not the 1,440-message branch
    assert window.chat.model.rowCount() <= 60
    bmap = window.map_pane.bmap
    assert bmap.rows[bmap.leaf_row].entry_id == ids["b19"] and bmap.rows[bmap.leaf_row].lane == 0
    close(qtbot, window)


def test_opening_another_session_frees_the_first_when_the_heap_is_frozen(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """The app freezes its heap after the restore (`gui.freeze_heap`); the session tree is
    a reference cycle, so opening another session renews the frozen heap once the new one
    is shown, or the first session's entries would stay in memory for good."""
    import gc
    import weakref

    from desktop_agent.gui import _heap, freeze_heap

    data = tmp_path / "data"
    ids: dict[str, str] = {}
    refs = [seed(data, workspace, three_branches(ids)), seed(data, workspace, three_branches({}))]
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    session = window.wb.session
    assert session is not None
    other = next(r for r in refs if r != session.metadata.path)
    first = weakref.ref(session.get_storage().tree)
    del session
    try:
        freeze_heap()  # what `run_gui` does after the restore
        run(qtbot, window.open_session(other))
        idle(qtbot, window)
        assert window.wb.session is not None and window.wb.session.metadata.path == other
        assert "third answer" in chat_text(window)
        assert first() is None  # freed, though it was frozen
    finally:
        gc.unfreeze()
        _heap._active = False
    close(qtbot, window)
