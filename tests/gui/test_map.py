"""The branch map pane on its own: its models, what it paints, filter, tooltips, hits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtTest import QTest
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from desktop_agent.ai import AssistantMessage, TextContent, UserMessage
from desktop_agent.gui.map import MapPane, MapRole
from desktop_agent.session import InMemorySessionRepo, Session
from desktop_agent.workbench import BranchMap, MapUpdate

pytestmark = [
    pytest.mark.usefixtures("qapp"),
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)], api="x", provider="p", model="m",
        stop_reason="stop", timestamp=2,
    )  # fmt: skip


async def _big(turns: int, every: int) -> tuple[Session, list[str]]:
    s = await InMemorySessionRepo().create(cwd="/w")
    answers: list[str] = []
    for k in range(turns):
        if k and k % every == 0:
            await s.move_to(answers[-3])
        await s.append_message(user(f"prompt {k}"))
        answers.append(await s.append_message(answer(f"answer {k}")))
    return s, answers


def at_once(coro: Coroutine[Any, Any, None]) -> None:
    """The pane's task route for previews that come from memory: the read is done in
    its first step (no loop runs in these tests)."""
    try:
        coro.send(None)
    except StopIteration:
        return
    raise AssertionError("the previews read waited for something")


async def texts_of(entry_ids: list[str]) -> dict[str, str]:
    return {i: f"text of {i}" for i in entry_ids}


def shown(qtbot: QtBot, bmap: BranchMap, tooltip: Callable[[str], str] | None = None) -> MapPane:
    pane = MapPane(previews=texts_of, tooltip=tooltip, spawn=at_once)
    qtbot.addWidget(pane)
    pane.resize(320, 400)
    pane.apply(bmap, MapUpdate(reset=True))
    pane.show()
    qtbot.waitExposed(pane)
    return pane


def test_models_pass_the_model_tester_and_appends_insert(
    qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    s, _answers = asyncio.run(_big(30, 7))
    bmap = BranchMap()
    bmap.sync(s.shape())
    pane = shown(qtbot, bmap)
    qtmodeltester.check(pane.model())  # type: ignore[no-untyped-call]
    qtmodeltester.check(pane.branches)  # type: ignore[no-untyped-call]
    inserted: list[tuple[int, int]] = []
    pane.model().rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    resets: list[int] = []
    pane.model().modelReset.connect(lambda: resets.append(1))
    n = len(bmap)
    asyncio.run(s.append_message(user("one more")))
    pane.apply(bmap, bmap.sync(s.shape()))
    assert inserted == [(n, n)] and resets == []
    assert pane.view.currentIndex().row() == n  # the selection follows the leaf


def test_only_visible_rows_are_painted_and_previews_are_asked_for_them(qtbot: QtBot) -> None:
    s, _answers = asyncio.run(_big(1500, 40))
    bmap = BranchMap()
    bmap.sync(s.shape())
    asked: list[str] = []

    async def record(entry_ids: list[str]) -> dict[str, str]:
        asked.extend(entry_ids)
        return {}

    pane = MapPane(previews=record, spawn=at_once)
    qtbot.addWidget(pane)
    pane.resize(320, 400)
    pane.apply(bmap, MapUpdate(reset=True))
    pane.show()
    qtbot.waitExposed(pane)
    pane.view.viewport().repaint()
    qtbot.waitUntil(lambda: bool(asked))
    assert len(bmap) == 3000
    assert 0 < pane.view.map_delegate.painted < 60
    assert 0 < len(asked) < 60 and all(bmap.row_of(e) >= 0 for e in asked)


def test_filter_combo_emits_and_the_hidden_rows_go(qtbot: QtBot) -> None:
    s, _answers = asyncio.run(_big(10, 4))
    bmap = BranchMap()
    bmap.sync(s.shape())
    pane = shown(qtbot, bmap)
    assert pane.filter.objectName() == "branchFilter" and pane.filter.accessibleName()
    with qtbot.waitSignal(pane.filter_changed) as blocker:
        pane.filter.setFocus()
        QTest.keyClick(pane.filter, Qt.Key.Key_Down)
    assert blocker.args == ["user"]
    bmap.set_filter("user")
    pane.apply(bmap, bmap.sync(s.shape()))
    assert {bmap.rows[r].kind for r in range(len(bmap))} == {"user"}
    assert pane.filter.currentData() == "user"


def test_tooltip_text_is_the_whole_message_and_the_kind_and_time(qtbot: QtBot) -> None:
    s, _answers = asyncio.run(_big(3, 10))
    bmap = BranchMap()
    bmap.sync(s.shape())
    pane = shown(qtbot, bmap, tooltip=lambda entry_id: f"the whole message {entry_id}")
    # (the offscreen platform cannot raise a tooltip window: the view shows this text)
    text = pane.model().index(1, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert f"the whole message {bmap.rows[1].entry_id}" in text
    assert text.startswith("assistant · ")


def test_n_walks_the_search_hits_and_palette_change_recolours(qtbot: QtBot) -> None:
    s, answers = asyncio.run(_big(20, 6))
    bmap = BranchMap()
    bmap.sync(s.shape())
    pane = shown(qtbot, bmap)
    hits = [answers[2], answers[9], answers[15]]
    changed = bmap.set_hits(hits)
    pane.model().rows_changed(changed)
    rows = sorted(bmap.row_of(h) for h in hits)
    view = pane.view
    view.setFocus()
    view.select_row(0)
    seen = []
    for _ in range(4):
        QTest.keyClick(view, Qt.Key.Key_N)
        seen.append(view.currentIndex().row())
    assert seen == [*rows, rows[0]]
    QTest.keyClick(view, Qt.Key.Key_N, Qt.KeyboardModifier.ShiftModifier)
    assert view.currentIndex().row() == rows[-1]
    assert pane.model().index(rows[0], 0).data(MapRole.HIT)
    # a hit row is painted with the hit band
    image = view.viewport().grab().toImage()
    band = view.map_delegate.colors.hit
    assert band.alpha() > 0
    before = view.map_delegate.colors.accent.name()
    dark = QPalette(pane.palette())
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#eeeeee"))
    dark.setColor(QPalette.ColorRole.Highlight, QColor("#3b82f6"))
    view.setPalette(dark)
    colors = view.map_delegate.colors
    assert colors.dark and colors.accent.name() == "#3b82f6" != before
    assert image.width() > 0
    pos = QPoint(2, view.visualRect(view.currentIndex()).center().y())
    assert view.viewport().grab().toImage().pixelColor(pos) != QColor("#ffffff")
