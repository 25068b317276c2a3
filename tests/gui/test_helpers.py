"""The window's helpers without a window (REVIEW §3): each takes the few things it uses,
so it runs here on plain widgets or a lone pane."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QApplication, QLineEdit, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from desktop_agent.ai import AssistantMessage, TextContent, UserMessage
from desktop_agent.gui._keyboard import PaneCycler
from desktop_agent.gui.map import MapPane
from desktop_agent.session import InMemorySessionRepo, Session
from desktop_agent.workbench import BranchMap, MapUpdate
from tests.helpers.window import run

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


async def _session(turns: int) -> Session:
    s = await InMemorySessionRepo().create(cwd="/w")
    for k in range(turns):
        await s.append_message(UserMessage(content=f"prompt {k}", timestamp=1))
        answer = AssistantMessage(
            content=[TextContent(text=f"answer {k}")], api="x", provider="p", model="m",
            stop_reason="stop", timestamp=2,
        )  # fmt: skip
        await s.append_message(answer)
    return s


def test_the_pane_cycler_moves_through_the_panes_it_is_given_and_skips_hidden_ones(
    qtbot: QtBot,
) -> None:
    top = QWidget()
    qtbot.addWidget(top)
    layout = QVBoxLayout(top)
    panes: list[QWidget] = []
    for name in ("one", "two", "three"):
        pane = QWidget(top)
        pane.setObjectName(name)
        QVBoxLayout(pane).addWidget(QLineEdit(pane))
        layout.addWidget(pane)
        panes.append(pane)
    cycler = PaneCycler(lambda: panes)
    top.show()
    qtbot.waitExposed(top)
    top.activateWindow()

    def focused_pane() -> str:
        focus = QApplication.focusWidget()
        found = (p for p in panes if focus is not None and p.isAncestorOf(focus))
        return next((p.objectName() for p in found), "")

    cycler.cycle(1)
    qtbot.waitUntil(lambda: focused_pane() == "one")
    panes[1].hide()
    cycler.cycle(1)
    qtbot.waitUntil(lambda: focused_pane() == "three")
    cycler.cycle(1)
    qtbot.waitUntil(lambda: focused_pane() == "one")
    cycler.cycle(-1)
    qtbot.waitUntil(lambda: focused_pane() == "three")


def test_the_map_reads_its_own_previews_and_drops_those_of_a_map_it_no_longer_shows(
    qtbot: QtBot, running_qloop: asyncio.AbstractEventLoop
) -> None:
    """`MapPane(previews=…)`: rows shown ask for their previews through the source given
    at construction; a read that ends after the map was cleared (another session) is
    not shown, and the next map's rows are asked for again."""
    session = run(qtbot, _session(4))
    bmap = BranchMap()
    bmap.sync(session.shape())
    asked: list[list[str]] = []
    release = asyncio.Event()

    async def previews(entry_ids: list[str]) -> dict[str, str]:
        asked.append(entry_ids)
        await release.wait()
        return {i: f"preview of {i}" for i in entry_ids}

    pane = MapPane(previews=previews)
    qtbot.addWidget(pane)
    pane.resize(320, 400)
    pane.apply(bmap, MapUpdate(reset=True))
    pane.show()
    qtbot.waitExposed(pane)
    pane.view.viewport().repaint()
    qtbot.waitUntil(lambda: len(asked) == 1)
    first = asked[0][0]
    pane.clear()  # another session is opened while the read goes on
    release.set()
    qtbot.waitUntil(lambda: not pane._tasks)
    assert pane.previews.get(first) is None

    pane.apply(bmap, MapUpdate(reset=True))
    pane.view.viewport().repaint()
    qtbot.waitUntil(lambda: len(asked) == 2 and not pane._tasks)
    assert pane.previews.get(first) == f"preview of {first}"
