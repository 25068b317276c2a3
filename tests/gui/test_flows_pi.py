"""The Pi coding agent's sessions through the real `MainWindow` (issue 13 GUI part): the
"Pi sessions" section of the sidebar, continuing a session written by the real Pi CLI in
place (Pi's CLI still reads the file), "Copy into Desktop Agent", "Convert to the current
format" for a v2 file, and Reload after another program appended.

The Pi folder is always a temp folder given to the workbench: never the real ~/.pi.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QMenu, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from desktop_agent.gui import MainWindow
from desktop_agent.gui._dialogs import PersistenceErrorDialog
from desktop_agent.gui._settings_dialog import SettingsDialog
from desktop_agent.gui.sidebar import SidebarRole
from desktop_agent.session import encode_cwd
from desktop_agent.workbench import SettingsForm
from tests.helpers.pi import Pi
from tests.helpers.pi_cli import MODEL as PI_MODEL
from tests.helpers.pi_cli import PROVIDER as PI_PROVIDER
from tests.helpers.pi_files import outside_append, pi_session, place, v2_file
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import (
    SCREENSHOTS,
    card_texts,
    close,
    find_index,
    idle,
    open_window,
    run,
    send,
    settle,
)
from tests.helpers.workbench import make_workbench


@pytest.fixture
def pi_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "pi-agent" / "sessions"
    folder.mkdir(parents=True)
    return folder


def pi_window(
    qtbot: QtBot, tmp_path: Path, provider: ProviderServer, pi_folder: Path, store: str = "jsonl"
) -> MainWindow:
    model = provider.model("anthropic-messages")
    # The Pi user's own model (the CLI's models.json): a restored Pi session keeps its
    # model and never moves to another provider by itself (issue 24), so the window knows it.
    pis = provider.model("openai-completions", model_id=PI_MODEL, provider=PI_PROVIDER)
    wb = make_workbench(tmp_path / "data", [model, pis], store=store, pi_folder=pi_folder)
    window = open_window(qtbot, tmp_path / "data", model, workbench=wb)
    window.activateWindow()
    return window


def click_session(qtbot: QtBot, window: MainWindow, path: str) -> None:
    """Click a session's row in the sidebar, as a person does."""
    view = window.sidebar.view
    index = window.sidebar.model().index_for_path(path)
    assert index.isValid(), f"{path} is not in the sidebar"
    view.scrollTo(index)
    rect = view.visualRect(index)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    idle(qtbot, window)


def in_thread(coro: Coroutine[Any, Any, str]) -> str:
    """Seed files from a thread of its own (the test's qasync loop is running here)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def last_card_text(window: MainWindow) -> str:
    texts = card_texts(window, to_end=True)
    return texts[-1] if texts else ""


@pytest.mark.slow
def test_a_pi_cli_session_opens_from_the_sidebar_and_continues_in_place(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    pi: Pi,
    pi_folder: Path,
    workspace: Path,
) -> None:
    report = pi.run("cli-write-fixture", pi_folder / encode_cwd(str(workspace)), str(workspace))
    pi_path = str(report["path"])
    window = pi_window(qtbot, tmp_path, provider, pi_folder)
    # The Pi CLI's session is the only one: the window restored it on its leaf.
    assert window.wb.ref == pi_path and window.wb.session is not None
    assert window.wb.session.leaf_id() == report["leafId"]
    run(qtbot, window.new_session(str(workspace)))
    settle(qtbot, window)
    ours = window.wb.ref
    assert ours != pi_path

    # The sidebar: our workspace group, then the "Pi sessions" section and Pi's group.
    model = window.sidebar.model()
    section = model.section_index()
    assert section.isValid() and section.data() == "Pi sessions"
    assert section.siblingAtColumn(1).data() == "1"
    assert not (model.flags(section) & Qt.ItemFlag.ItemIsSelectable)
    pi_index = model.index_for_path(pi_path)
    assert pi_index.parent().row() > section.row()
    assert pi_index.data(SidebarRole.SOURCE) == "pi" and pi_index.data() == "CLI fixture"
    assert window.sidebar.view.visualRect(pi_index).isValid()
    SCREENSHOTS.mkdir(exist_ok=True)
    window.sidebar.grab().save(str(SCREENSHOTS / "pi-sessions-sidebar.png"))

    before = Path(pi_path).read_bytes()
    click_session(qtbot, window, pi_path)
    assert window.wb.ref == pi_path and window.sidebar.model().current() == pi_path
    assert any("After compaction." in t for t in card_texts(window, to_end=True))
    provider.script(Reply(text="Answered from the desktop."))
    send(qtbot, window, "Continue from the desktop")
    assert "Answered from the desktop." in last_card_text(window)
    after = Path(pi_path).read_bytes()
    assert after.startswith(before) and len(after) > len(before)  # appended in place

    # Pi's CLI reads the grown file: our turn is the end of what it would send next.
    seen = pi.run("cli-context", pi_path)
    assert seen["llmView"][-2:] == [
        {"role": "user", "text": "Continue from the desktop"},
        {"role": "assistant", "text": "Answered from the desktop."},
    ]
    assert seen["leafId"] == window.wb.session.leaf_id()
    assert not Path(str(ours)).exists()  # our empty one was not kept
    close(qtbot, window)


@pytest.mark.parametrize("store", ["jsonl", "sqlite"])
def test_copy_into_desktop_agent_from_the_context_menu(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    pi_folder: Path,
    workspace: Path,
    store: str,
) -> None:
    pi_path = in_thread(pi_session(pi_folder, workspace, "from pi"))
    original = Path(pi_path).read_bytes()
    window = pi_window(qtbot, tmp_path, provider, pi_folder, store)
    assert window.wb.ref == pi_path
    menu = window.sidebar.context_menu_for(pi_path)
    assert menu is not None
    names = [a.objectName() for a in menu.actions()]
    assert "copySession" in names and "deleteSession" not in names and "forkSession" not in names
    copy = next(a for a in menu.actions() if a.objectName() == "copySession")
    copy.trigger()
    idle(qtbot, window)
    ref = window.wb.ref
    assert ref != pi_path and not window.wb.is_pi(ref)
    assert window.sidebar.model().current() == ref
    assert window.sidebar.model().index_for_path(ref).data(SidebarRole.SOURCE) == "sessions"
    assert any("your own copy" in t for t in window.notices.texts())
    assert Path(pi_path).read_bytes() == original
    provider.script(Reply(text="in the copy"))
    send(qtbot, window, "now ours")
    assert "in the copy" in last_card_text(window)
    assert Path(pi_path).read_bytes() == original
    close(qtbot, window)


def test_a_v2_session_is_read_only_until_converted(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    pi_folder: Path,
) -> None:
    path = place(pi_folder, "2025-12-08T22-41-00-000Z_v2-session.jsonl", v2_file())
    original = path.read_bytes()
    window = pi_window(qtbot, tmp_path, provider, pi_folder)
    assert window.wb.ref == str(path)
    composer = window.composer
    assert composer.input.isReadOnly() and not composer.send_button.isEnabled()
    assert "older Pi format (version 2)" in composer.input.placeholderText()
    assert window.status.save.text() == "Read-only"
    notice = window.notices.findChild(QWidget, "notice_read_only")
    assert notice is not None and notice.isVisible()
    row = notice.findChild(QLabel, "noticeText")
    assert row is not None and "Convert it to continue it" in row.text()
    session_menu = window.findChild(QMenu, "sessionMenu")
    convert = window.findChild(QAction, "convertAction")
    assert session_menu is not None and convert is not None
    session_menu.aboutToShow.emit()
    assert convert.isEnabled()  # the Session menu offers it too
    button = notice.findChild(QPushButton, "noticeAction")
    assert button is not None and button.text() == "Convert to the current format"
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    new = window.wb.ref or ""
    assert new != str(path) and Path(new).parent == path.parent
    assert path.read_bytes() == original
    assert not composer.input.isReadOnly() and composer.send_button.isEnabled()
    assert window.status.save.text() == "Saved"
    assert window.sidebar.model().current() == new
    provider.script(Reply(text="continued after converting"))
    send(qtbot, window, "go on")
    assert "continued after converting" in last_card_text(window)
    session_menu.aboutToShow.emit()
    assert not convert.isEnabled()  # the open session is in the current format now
    close(qtbot, window)


def test_reload_after_another_program_appended(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    pi_folder: Path,
    workspace: Path,
) -> None:
    pi_path = in_thread(pi_session(pi_folder, workspace, "from pi"))
    window = pi_window(qtbot, tmp_path, provider, pi_folder)
    assert window.wb.ref == pi_path and window.wb.session is not None
    opened: list[PersistenceErrorDialog] = []
    real_keep = window.dialogs._keep

    def keep(dialog: object) -> None:
        if isinstance(dialog, PersistenceErrorDialog):
            opened.append(dialog)
        real_keep(dialog)  # type: ignore[arg-type]

    window.dialogs._keep = keep  # type: ignore[method-assign]
    outside_append(pi_path, window.wb.session.leaf_id(), "typed in Pi", "pi000001")
    provider.script(Reply(text="ours, kept as a branch"))
    send(qtbot, window, "typed here meanwhile")
    assert len(opened) == 1
    dialog = opened[0]
    assert dialog.windowTitle() == "The session was changed by another program"
    text = dialog.findChild(QLabel, "persistenceErrorText")
    assert text is not None and "Another program changed this session" in text.text()
    assert dialog.findChild(QPushButton, "retryButton") is None
    reload = dialog.findChild(QPushButton, "reloadButton")
    assert reload is not None
    QTest.mouseClick(reload, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    assert window.status.save.text() == "Saved"
    assert any("came in" in t for t in window.notices.texts())
    assert "typed in Pi" in last_card_text(window)  # the leaf is where Pi left it
    body = Path(pi_path).read_text()
    assert "typed here meanwhile" in body and "ours, kept as a branch" in body
    # Our turn is a branch of the tree (from where the two diverged), theirs the leaf.
    ours = next(
        x
        for x in map(json.loads, body.splitlines())
        if x.get("message", {}).get("content", [{}])[0].get("text") == "typed here meanwhile"
    )
    assert find_index(window.map_pane.model(), ours["id"]) is not None
    lines = [json.loads(x) for x in body.splitlines()]
    assert lines[-1]["type"] == "leaf" and lines[-1]["targetId"] == "pi000001"
    # The notice takes the user to their branch in one click.
    notice = window.notices.findChild(QWidget, "notice_save")
    assert notice is not None
    show = notice.findChild(QPushButton, "noticeAction")
    assert show is not None and show.text() == "Show my branch"
    QTest.mouseClick(show, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    assert "ours, kept as a branch" in last_card_text(window)
    close(qtbot, window)


def test_the_pi_source_is_turned_off_and_on_in_settings(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    pi_folder: Path,
    workspace: Path,
) -> None:
    pi_path = in_thread(pi_session(pi_folder, workspace, "from pi"))
    elsewhere = tmp_path / "other-pi"
    other = in_thread(pi_session(elsewhere, workspace, "in another folder"))
    window = pi_window(qtbot, tmp_path, provider, pi_folder)
    assert window.sidebar.model().section_index().isValid()
    action = window.findChild(QAction, "settingsAction")
    assert action is not None

    def settings_with(on: bool, folder: str) -> None:
        async def fill(form: SettingsForm) -> SettingsForm:
            dialog = SettingsDialog(window, form)
            qtbot.addWidget(dialog)
            assert dialog.pi_sessions.isChecked() == form.pi_sessions
            dialog.pi_sessions.setChecked(on)
            dialog.pi_folder.setText(folder)
            return dialog.result_form()

        window.dialogs.settings = fill  # type: ignore[method-assign]
        action.trigger()
        idle(qtbot, window)

    settings_with(False, "")
    assert not window.sidebar.model().section_index().isValid()
    assert window.sidebar.model().index_for_path(pi_path).isValid() is False
    stored = json.loads((tmp_path / "data" / "config" / "settings.json").read_text())
    assert stored["pi_sessions"] == {"enabled": False, "folder": None}
    settings_with(True, str(elsewhere))
    model = window.sidebar.model()
    assert model.section_index().isValid() and model.index_for_path(other).isValid()
    assert not model.index_for_path(pi_path).isValid()
    close(qtbot, window)


@pytest.mark.slow
def test_pi_and_the_window_take_turns_on_one_session(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    pi: Pi,
    workspace: Path,
) -> None:
    """The real Pi CLI (print mode) starts a session; the window continues it from the
    sidebar's Pi section; ``pi --continue`` then carries on after our turn."""
    from tests.helpers.pi_cli import PiCli
    from tests.helpers.wire import user_texts

    cli = PiCli(pi, provider, tmp_path / "cli")
    provider.script(Reply(text="Pi's first answer."))
    cli.print("Started in Pi", cwd=workspace)
    (path,) = cli.session_files(workspace)
    window = pi_window(qtbot, tmp_path, provider, cli.sessions_dir)
    assert window.wb.ref == str(path)  # restored: the most recent session of either source
    assert window.sidebar.model().index_for_path(str(path)).data(SidebarRole.SOURCE) == "pi"
    assert any("Pi's first answer." in t for t in card_texts(window, to_end=True))
    provider.script(Reply(text="The desktop's answer."))
    send(qtbot, window, "Continued in the window")
    assert "The desktop's answer." in last_card_text(window)
    close(qtbot, window)

    provider.script(Reply(text="Pi again."))
    cli.print("Back in Pi", cwd=workspace, args=("--continue",))
    assert cli.session_files(workspace) == [path]  # it continued the same file
    sent = user_texts(provider.last_body())
    assert sent == ["Started in Pi", "Continued in the window", "Back in Pi"]
