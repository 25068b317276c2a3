"""Keyboard flows through the real `MainWindow` (issue 9 item 5, BRANCH_MAP.md rule 6): Tab
from the message box reaches its buttons, the toolbar and every pane with the focus ring
drawn; in the branch map ``[`` / ``]`` switch versions, Alt+Up/Down jump between fork
points and F2 labels; the Branches list's filter box; the chat's ``n/m`` on a tree with a
label and a settings entry between messages agrees with the map."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from desktop_agent.gui._action_table import shortcut_rows
from desktop_agent.gui.map import MapPane
from desktop_agent.gui.sidebar import SessionSidebar
from desktop_agent.session import Session
from tests.gui.test_map_flows import open_three
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import (
    ask,
    close,
    focused,
    idle,
    new_window,
    open_window,
    painted,
    painted_text,
    press,
    type_and_send,
)
from tests.helpers.workbench import answer, seed, user

ALT = Qt.KeyboardModifier.AltModifier


def test_tab_from_the_message_box_reaches_its_buttons_the_toolbar_and_every_pane(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.wb.session is not None)
    idle(qtbot, window)
    ask(qtbot, window, provider, "a prompt", Reply(text="an answer"))
    assert focused() is window.composer.input
    seen: list[str] = []
    for _ in range(40):
        press(Qt.Key.Key_Tab)
        widget = focused()
        if widget is window.composer.input:
            break
        assert widget.accessibleName(), widget.objectName()
        qtbot.waitUntil(lambda w=widget: window.focus_ring.target is w)  # type: ignore[misc]
        assert window.focus_ring.isVisible()  # focus is always visible
        seen.append(widget.objectName())
    assert focused() is window.composer.input, "Tab goes round back to the message box"
    expected = [
        "sendButton", "modelPicker", "thinkingPicker",
        "sidebarToolButton", "newSessionToolButton", "searchToolButton", "exportButton",
        "settingsToolButton", "shortcutsToolButton", "mapToolButton",
        "sessionSearch", "newSessionButton", "sessionList",
        "chatView", "branchTabs", "branchFilter", "branchTree",
    ]  # fmt: skip
    assert [n for n in seen if n in expected] == expected, seen
    # while the agent runs, Tab from the message box reaches Stop, and Space stops it
    provider.script(Reply(text=["partial ", "answer ", "never ends"], stall_after=4, stall_s=30))
    type_and_send(qtbot, window, "long answer please")
    qtbot.waitUntil(lambda: window.composer.stop_button.isEnabled(), timeout=10_000)
    window.composer.input.setFocus(Qt.FocusReason.OtherFocusReason)
    for _ in range(4):
        if focused() is window.composer.stop_button:
            break
        press(Qt.Key.Key_Tab)
    assert focused() is window.composer.stop_button
    press(Qt.Key.Key_Space)
    idle(qtbot, window)
    assert not window.wb.running and "Stopped" in painted_text(painted(window, 3))
    # a toolbar button works from the keyboard: Space on "Branch map" hides the map
    window.findChild(QWidget, "mapToolButton").setFocus(Qt.FocusReason.TabFocusReason)  # type: ignore[union-attr]
    press(Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: window.map_pane.isHidden())
    press(Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: not window.map_pane.isHidden())
    close(qtbot, window)


def current_entry(pane: MapPane) -> str:
    return pane.entry_at_row(pane.view.currentIndex().row())


def test_brackets_switch_versions_in_the_map_alt_arrows_jump_forks_f2_labels(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window, ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    pane = window.map_pane
    session = window.wb.session
    assert session is not None
    pane.view.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(pane.view.hasFocus)
    assert current_entry(pane) == ids["a2c"] and "3/3" in painted_text(painted(window, 2))
    press(Qt.Key.Key_BracketLeft)  # the previous version at the fork above the leaf
    qtbot.waitUntil(lambda: session.leaf_id() == ids["a2b"])
    idle(qtbot, window)
    assert "other answer about zebras" in painted_text(painted(window, 3))
    assert "2/3" in painted_text(painted(window, 2))
    qtbot.waitUntil(lambda: current_entry(pane) == ids["q2b"])  # the map selects it
    assert pane.view.hasFocus()
    press(Qt.Key.Key_BracketLeft)
    qtbot.waitUntil(lambda: session.leaf_id() == ids["a2"])
    idle(qtbot, window)
    assert current_entry(pane) == ids["q2"]
    press(Qt.Key.Key_BracketRight)
    qtbot.waitUntil(lambda: session.leaf_id() == ids["a2b"])
    idle(qtbot, window)
    assert "2/3" in painted_text(painted(window, 2))
    # Alt+Up / Alt+Down: from a prompt to the fork above it, and down to the next fork
    pane.view.select_row(pane.bmap.row_of(ids["a2b"]))
    press(Qt.Key.Key_Up, ALT)
    assert current_entry(pane) == ids["a1"]
    press(Qt.Key.Key_Up, ALT)  # no fork above: stays
    assert current_entry(pane) == ids["a1"]
    press(Qt.Key.Key_Home)
    assert current_entry(pane) == ids["q1"]
    press(Qt.Key.Key_Down, ALT)
    assert current_entry(pane) == ids["a1"]
    assert session.leaf_id() == ids["a2b"]  # selecting is not switching
    # F2 in the map labels the selected entry (the window's F2 renames the session)
    asked: list[str | None] = []

    def ask(_parent: QWidget, current: str | None) -> str:
        asked.append(current)
        return "the fork"

    monkeypatch.setattr(MapPane, "ask_label", staticmethod(ask))
    renamed: list[str] = []
    monkeypatch.setattr(
        SessionSidebar, "ask_text", staticmethod(lambda _p, title, *_a: renamed.append(title))
    )
    press(Qt.Key.Key_F2)
    qtbot.waitUntil(lambda: session.label_of(ids["a1"]) == "the fork")
    idle(qtbot, window)
    assert asked == [None] and renamed == []
    assert pane.bmap.label(pane.bmap.row_of(ids["a1"])) == "the fork"
    window.sidebar.view.setFocus(Qt.FocusReason.OtherFocusReason)
    press(Qt.Key.Key_F2)  # elsewhere F2 still renames the session
    assert len(renamed) == 1  # the rename dialog was asked for
    # the shortcut sheet lists the map's keys
    sheet = dict(shortcut_rows())
    assert {"[", "]", "Alt+Up", "Alt+Down"} <= set(sheet)
    assert any("Label" in what for keys, what in sheet.items() if keys == "F2")
    close(qtbot, window)


def test_branch_list_filter_box_escape_clears_down_enters_the_list(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window, ids, _ref = open_three(qtbot, tmp_path, provider, workspace)
    pane = window.map_pane
    session = window.wb.session
    assert session is not None
    box = pane.branch_filter
    assert box.objectName() == "branchListFilter" and box.accessibleName()
    assert not box.isVisible()  # only with the Branches list
    pane.tabs.setFocus(Qt.FocusReason.TabFocusReason)
    press(Qt.Key.Key_Right)  # the Branches tab
    qtbot.waitUntil(lambda: pane.branch_list.isVisible() and box.isVisible())
    box.setFocus(Qt.FocusReason.TabFocusReason)
    lst = pane.branch_list

    def shown() -> list[str]:
        tips = pane.branches.tips
        return [t.leaf_id for r, t in enumerate(tips) if not lst.isRowHidden(r)]

    QTest.keyClicks(box, "ZEBRAS")
    qtbot.waitUntil(lambda: shown() == [ids["a2b"]])
    lst.viewport().repaint()
    assert lst.visualRect(pane.branches.index(1)).isValid()  # the one painted row
    press(Qt.Key.Key_Escape)
    assert box.text() == "" and shown() == [ids["a2c"], ids["a2b"], ids["a2"]]
    assert focused() is box
    QTest.keyClicks(box, "second answer")
    qtbot.waitUntil(lambda: shown() == [ids["a2"]])
    press(Qt.Key.Key_Down)
    assert focused() is lst and lst.currentIndex().row() == 2
    press(Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: session.leaf_id() == ids["a2"])
    idle(qtbot, window)
    assert "second answer" in painted_text(painted(window, 3))
    close(qtbot, window)


def labelled_versions(ids: dict[str, str]):  # type: ignore[no-untyped-def]
    """q1 a1 ┬ q2                  a label entry and a thinking change hang between a1
    ├ [label] q2b            and two of the versions of its next prompt
    └ [thinking] q2c a2c ← leaf
    """

    async def build(s: Session) -> None:
        ids["q1"] = await s.append_message(user("first question"))
        ids["a1"] = await s.append_message(answer("first answer"))
        ids["q2"] = await s.append_message(user("second question"))
        await s.move_to(ids["a1"])
        await s.append_label(ids["a1"], "fork here")
        ids["q2b"] = await s.append_message(user("second question, again"))
        await s.move_to(ids["a1"])
        await s.append_thinking_level_change("high")
        ids["q2c"] = await s.append_message(user("second question, third time"))
        ids["a2c"] = await s.append_message(answer("third answer"))

    return build


def test_the_chats_version_count_agrees_with_the_map_across_labels_and_settings(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    ids: dict[str, str] = {}
    seed(data, workspace, labelled_versions(ids), "jsonl")
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    bmap = window.map_pane.bmap
    assert len(bmap.siblings(bmap.row_of(ids["q2c"]))) == 3
    assert "3/3" in painted_text(painted(window, 2))
    chat = window.chat.view
    chat.setFocus(Qt.FocusReason.OtherFocusReason)
    chat.setCurrentIndex(window.chat.model.index(3, 0))
    press(Qt.Key.Key_Up)  # to the third version of the prompt
    assert chat.currentIndex().row() == 2
    press(Qt.Key.Key_Left, ALT)  # the chat's previous version: through the label entry
    session = window.wb.session
    assert session is not None
    qtbot.waitUntil(lambda: session.leaf_id() == ids["q2b"])
    idle(qtbot, window)
    assert "2/3" in painted_text(painted(window, 2))
    assert "second question, again" in painted_text(painted(window, 2))
    close(qtbot, window)
