"""The files follow the branch in the real window (issue 21's acceptance), on both stores:
in a folder that is the user's own git repository with uncommitted and untracked files,
"Write version one", the prompt edited (Ctrl+E) to "Write version two"; Alt+Left shows
the bar, "Restore files" brings version one's files, Alt+Right and "Restore files"
version two's, "Keep" keeps the folder, and after a restart the bar offers the files of
the branch the session was left on. The user's .git is unchanged byte for byte, their
untracked files kept, and nothing new is left in the folder."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton
from pytestqt.qtbot import QtBot

from desktop_agent.config import CheckpointSettings, Settings
from desktop_agent.gui import MainWindow
from desktop_agent.gui._file_changes import FileChangesDialog
from desktop_agent.gui._settings_dialog import SettingsDialog
from desktop_agent.gui.map._model import MapRole
from desktop_agent.workbench import SettingsForm
from tests.gui.test_map_flows import click_row
from tests.helpers.checkpoint_flow import V1, V2, assert_version, two_versions
from tests.helpers.git_repo import dot_git_fingerprint, folder_files, make_user_repo
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec, tool_call
from tests.helpers.window import (
    ask,
    chat_text,
    close,
    focused,
    idle,
    painted,
    painted_text,
    run,
    window_in,
)
from tests.helpers.workbench import make_workbench

ALT = Qt.KeyboardModifier.AltModifier
CTRL = Qt.KeyboardModifier.ControlModifier
DIFFER = "The files in the folder are from another branch (3 differ)"


def window_on(
    qtbot: QtBot, data: Path, provider: ProviderServer, store: str, project: Path
) -> MainWindow:
    settings = Settings(
        default_model=provider.model("anthropic-messages").key,
        approval={"bash": "allow", "write": "allow", "edit": "allow"},
        discover_local_servers=False,
        checkpoints=CheckpointSettings(follow_branch="ask"),
    )
    wb = make_workbench(
        data,
        provider.model("anthropic-messages"),
        store=store,
        settings=settings,
        checkpoints=True,
    )
    return window_in(qtbot, wb, project)


def bar_shows(window: MainWindow, text: str) -> bool:
    return window.notices.isVisible() and any(t.startswith(text) for t in window.notices.texts())


def settled(qtbot: QtBot, window: MainWindow) -> None:
    """What a key or click started (the move), then what it started in the background
    (the comparison of the folder), then the redraws."""
    idle(qtbot, window)
    run(qtbot, window.wb.settled())
    idle(qtbot, window)


def click(qtbot: QtBot, window: MainWindow, label: str) -> None:
    buttons = [b for b in window.notices.findChildren(QPushButton) if b.text() == label]
    assert len(buttons) == 1, [b.text() for b in window.notices.findChildren(QPushButton)]
    assert buttons[0].isVisible()
    QTest.mouseClick(buttons[0], Qt.MouseButton.LeftButton)
    settled(qtbot, window)


def alt(qtbot: QtBot, window: MainWindow, key: Qt.Key) -> None:
    window.composer.input.setFocus()
    QTest.keyClick(focused(), key, ALT)
    settled(qtbot, window)


def test_the_files_follow_alt_left_and_alt_right_and_a_restart(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
) -> None:
    project = make_user_repo(tmp_path / "project")
    git_before = dot_git_fingerprint(project)
    names_before = set(folder_files(project))
    data = tmp_path / "data"
    window = window_on(qtbot, data, provider, store, project)
    QTest.keyClick(window, Qt.Key.Key_N, CTRL)
    qtbot.waitUntil(lambda: window.wb.session is not None)
    idle(qtbot, window)

    ask(
        qtbot,
        window,
        provider,
        "Write version one",
        tool_call("write", {"path": "notes.txt", "content": V1}, "w1"),
        Reply(text="one written"),
    )
    assert (project / "notes.txt").read_text() == V1

    provider.script(
        Reply(
            tool_calls=[
                ToolCallSpec("w2", "write", {"path": "notes.txt", "content": V2}),
                ToolCallSpec("b2", "bash", {"command": "echo extra > extra.txt; rm keep.txt"}),
            ]
        ),
        Reply(text="two written"),
    )
    window.composer.input.setFocus()
    QTest.keyClick(focused(), Qt.Key.Key_E, CTRL)  # edit the prompt
    qtbot.waitUntil(
        lambda: (
            (e := window.chat.view.findChild(QPlainTextEdit, "chatEditText")) is not None
            and e.hasFocus()
        )
    )
    QTest.keyClick(focused(), Qt.Key.Key_A, CTRL)
    QTest.keyClicks(focused(), "Write version two")
    QTest.keyClick(focused(), Qt.Key.Key_Return, CTRL)
    qtbot.waitUntil(lambda: "two written" in chat_text(window), timeout=20_000)
    idle(qtbot, window)
    run(qtbot, window.wb.settled())
    assert_version(project, 2)
    assert not window.notices.isVisible()

    alt(qtbot, window, Qt.Key.Key_Left)  # version one's conversation: the bar asks
    assert "1/2" in painted_text(painted(window, 0)) and "one written" in chat_text(window)
    assert bar_shows(window, DIFFER)
    assert_version(project, 2)
    click(qtbot, window, "Show changes")
    assert bar_shows(window, DIFFER + ": ")
    assert any("extra.txt (removed)" in t for t in window.notices.texts())
    dialog = window.findChild(FileChangesDialog)  # the Changes view of what differs
    assert dialog is not None and dialog.files.count() == 3
    qtbot.waitUntil(dialog.isActiveWindow)
    QTest.keyClick(focused(), Qt.Key.Key_Escape)  # closed, back to the window
    qtbot.waitUntil(lambda: not dialog.isVisible())
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    click(qtbot, window, "Restore files")
    assert_version(project, 1)
    assert bar_shows(window, "The files now follow this branch (3 restored).")
    click(qtbot, window, "Undo restore")
    assert_version(project, 2)
    alt(qtbot, window, Qt.Key.Key_Right)  # version two: the folder already matches
    assert not window.notices.isVisible()
    alt(qtbot, window, Qt.Key.Key_Left)
    click(qtbot, window, "Restore files")
    assert_version(project, 1)
    alt(qtbot, window, Qt.Key.Key_Right)
    assert bar_shows(window, DIFFER)
    click(qtbot, window, "Restore files")
    assert_version(project, 2)
    alt(qtbot, window, Qt.Key.Key_Left)  # left on version one, the folder kept as it is
    click(qtbot, window, "Keep")
    assert not window.notices.isVisible()
    assert_version(project, 2)
    close(qtbot, window)

    again = window_on(qtbot, data, provider, store, project)  # the restart
    run(qtbot, again.wb.settled())
    idle(qtbot, again)
    assert "one written" in chat_text(again)
    assert bar_shows(again, DIFFER)
    click(qtbot, again, "Restore files")
    assert_version(project, 1)
    close(qtbot, again)

    assert dot_git_fingerprint(project) == git_before
    assert set(folder_files(project)) == names_before | {"notes.txt"}


def test_settings_show_the_store_and_set_follow_branch(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
) -> None:
    project = make_user_repo(tmp_path / "project")
    data = tmp_path / "data"
    window = window_on(qtbot, data, provider, "jsonl", project)
    _first, _second = run(qtbot, two_versions(window.wb, provider, project))
    settled(qtbot, window)
    # The map marks the turns that changed files; hovering lists the files.
    bmap, model = window.map_pane.bmap, window.map_pane.model()
    marks = {bmap.on_path(r): m for r, m in bmap.file_marks.items()}
    assert marks[True].changed == 3 and marks[False].changed == 1
    assert set(marks[True].files) == {"notes.txt", "extra.txt", "keep.txt"}
    row = next(r for r, m in bmap.file_marks.items() if bmap.on_path(r))
    tip = model.data(model.index(row, 0), Qt.ItemDataRole.ToolTipRole)
    assert "Files changed (3):" in tip and "extra.txt" in tip
    assert model.data(model.index(row, 0), MapRole.FILES) == 3
    window.map_pane.view.viewport().repaint()
    assert window.map_pane.view.map_delegate.file_marks_painted > 0

    # "Show file changes…" on that row: the files and their diffs; revert one file.
    menu = window.map_pane.context_menu_for(bmap.rows[row].entry_id)
    assert menu is not None
    action = menu.findChild(QAction, "showFileChanges")
    assert action is not None
    action.trigger()
    qtbot.waitUntil(lambda: window.findChild(FileChangesDialog) is not None)
    dialog = window.findChild(FileChangesDialog)
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    listed = [dialog.files.item(i).text() for i in range(dialog.files.count())]
    assert sorted(listed) == ["extra.txt (created)", "keep.txt (deleted)", "notes.txt (changed)"]
    dialog.files.setFocus()

    def select(name: str) -> None:
        QTest.keyClick(dialog.files, Qt.Key.Key_Home)
        for _ in range(dialog.files.count()):
            if dialog.files.currentItem().text().startswith(name):
                return
            QTest.keyClick(dialog.files, Qt.Key.Key_Down)
        raise AssertionError(f"{name} is not listed")

    select("notes.txt")
    assert "-version one\n+version two" in dialog.diff.toPlainText()
    select("keep.txt")
    QTest.mouseClick(dialog.revert_file, Qt.MouseButton.LeftButton)
    settled(qtbot, window)
    assert (project / "keep.txt").read_text() == "keep me\n"
    assert (project / "notes.txt").read_text() == V2
    click(qtbot, window, "Undo restore")
    assert_version(project, 2)
    seen: list[SettingsForm] = []

    async def fill(form: SettingsForm) -> SettingsForm:
        seen.append(form)
        dialog = SettingsDialog(window, form)
        qtbot.addWidget(dialog)
        size = dialog.findChild(QLabel, "checkpointsSize")
        assert size is not None and size.text().endswith("MB in the app's data folder")
        box = dialog.follow_branch
        assert box.currentData() == "ask"
        box.setFocus()
        QTest.keyClick(box, Qt.Key.Key_Down)
        assert box.currentData() == "always"
        dialog.prune.setFocus()
        QTest.keyClick(dialog.prune, Qt.Key.Key_Space)  # "Remove checkpoints older than"
        dialog.prune_days.setFocus()
        dialog.prune_days.selectAll()
        QTest.keyClicks(dialog.prune_days, "7")
        return dialog.result_form()

    window.dialogs.settings = fill  # type: ignore[method-assign]
    window.activateWindow()  # the Changes view was the active window
    qtbot.waitUntil(window.isActiveWindow)
    QTest.keyClick(window, Qt.Key.Key_Comma, CTRL)
    settled(qtbot, window)
    assert seen and (seen[0].checkpoints_bytes or 0) > 0
    stored = json.loads((data / "config" / "settings.json").read_text())
    assert stored["checkpoints"]["follow_branch"] == "always"
    assert seen[0].prune_days is None
    assert any(
        t.startswith("Removed the checkpoints older than 7 days") for t in window.notices.texts()
    )
    alt(qtbot, window, Qt.Key.Key_Left)  # no question now: the files follow
    assert_version(project, 1)
    assert bar_shows(window, "The files now follow this branch (3 restored).")
    # A click on version two's last answer in the map: its files, at once.
    session = window.wb.session
    assert session is not None
    two_answer = [i for i in session.entry_ids() if session.entry_kind(i)[1] == "assistant"][-1]
    click_row(window, two_answer)
    settled(qtbot, window)
    assert session.leaf_id() == two_answer
    assert_version(project, 2)
    close(qtbot, window)


def test_a_leaf_change_with_the_maps_keys_shows_the_bar_and_show_changes_the_diffs(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
) -> None:
    project = make_user_repo(tmp_path / "project")
    window = window_on(qtbot, tmp_path / "data", provider, store, project)
    first, second = run(qtbot, two_versions(window.wb, provider, project))
    settled(qtbot, window)
    session = window.wb.session
    assert session is not None
    view, bmap = window.map_pane.view, window.map_pane.bmap
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)

    def selected() -> int:
        return view.currentIndex().row()

    QTest.keyClick(view, Qt.Key.Key_End)  # the leaf's row
    assert bmap.on_path(selected())
    for _ in range(len(bmap)):  # Up to the edited prompt (version two beside version one)
        if len(bmap.siblings(selected())) > 1:
            break
        QTest.keyClick(view, Qt.Key.Key_Up)
    assert bmap.rows[selected()].entry_id == second
    QTest.keyClick(view, Qt.Key.Key_Left)  # version one's prompt
    assert bmap.rows[selected()].entry_id == first
    for _ in range(len(bmap)):  # Down to its last answer ("one written")
        row = selected()
        QTest.keyClick(view, Qt.Key.Key_Down)
        if selected() == row:
            break
    QTest.keyClick(view, Qt.Key.Key_Return)  # the leaf moves there
    settled(qtbot, window)
    assert first in session.branch_ids() and "one written" in chat_text(window)
    assert bar_shows(window, DIFFER)
    assert_version(project, 2)  # asked, not restored

    click(qtbot, window, "Show changes")  # the Changes view of what differs
    qtbot.waitUntil(lambda: window.findChild(FileChangesDialog) is not None)
    dialog = window.findChild(FileChangesDialog)
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    assert dialog.windowTitle() == "Files that differ from this branch"
    listed = [dialog.files.item(i).text() for i in range(dialog.files.count())]
    assert sorted(listed) == [
        "extra.txt (removed)",
        "keep.txt (brought back)",
        "notes.txt (changed)",
    ]
    assert bar_shows(window, DIFFER + ": ")  # and listed in the bar
    dialog.files.setFocus()
    QTest.keyClick(dialog.files, Qt.Key.Key_Home)
    while not dialog.files.currentItem().text().startswith("notes.txt"):
        QTest.keyClick(dialog.files, Qt.Key.Key_Down)
    assert "-version two\n+version one" in dialog.diff.toPlainText()  # folder -> branch
    QTest.mouseClick(dialog.revert_file, Qt.MouseButton.LeftButton)  # Restore this file
    settled(qtbot, window)
    assert (project / "notes.txt").read_text() == V1
    assert (project / "extra.txt").exists()  # only that file
    assert bar_shows(window, "The files now follow this branch (1 restored).")
    click(qtbot, window, "Undo restore")
    assert_version(project, 2)
    close(qtbot, window)
