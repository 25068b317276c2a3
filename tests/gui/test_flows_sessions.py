"""Session flows through the real `MainWindow` (issue 8 item 3): the sidebar follows the
open session, delete and Undo, the trash, Settings and local servers, quitting with
unsaved entries, the window's geometry, export, repair.

These check that the menus, keys and buttons reach the operation and that the window
repaints, on the JSONL store; what the operations do, on every store, is tested without Qt
in tests/workbench/test_session_operations.py (issue 22 item 5)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QCheckBox, QLabel, QLineEdit, QPushButton
from pytestqt.qtbot import QtBot

from desktop_agent.config import ProviderSettings, Settings, backend_problem, save_settings
from desktop_agent.gui import MainWindow
from desktop_agent.gui._dialogs import PersistenceErrorDialog
from desktop_agent.gui._settings_dialog import SettingsDialog
from desktop_agent.session import Session
from desktop_agent.workbench import SettingsForm
from desktop_agent.workbench import _models as models_module
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import (
    SCREENSHOTS,
    close,
    idle,
    new_window,
    open_window,
    run,
    send,
    session_window,
    settle,
)
from tests.helpers.workbench import (
    answer,
    break_saving,
    damage_second_entry,
    make_workbench,
    seed,
    user,
)


def highlighted(window: MainWindow) -> str | None:
    from desktop_agent.gui.sidebar import SidebarRole

    index = window.sidebar.view.currentIndex()
    value = index.siblingAtColumn(0).data(SidebarRole.PATH) if index.isValid() else None
    return str(value) if value else None


def test_the_sidebar_follows_the_open_session_and_forks_are_titled(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    idle(qtbot, window)
    assert highlighted(window) == window.wb.ref
    provider.script(Reply(text="first answer"), Reply(text="second answer"))
    send(qtbot, window, "first topic")
    first = window.wb.ref
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    idle(qtbot, window)
    empty = window.wb.ref
    assert highlighted(window) == empty != first
    window.sidebar.open_session(first or "")  # what a click on its row does
    idle(qtbot, window)
    rows = [r.path for r in window.sidebar.model().rows()]
    assert empty not in rows  # the empty "New session" row is not kept
    assert highlighted(window) == first
    menu = window.sidebar.context_menu_for(first or "")
    assert menu is not None
    fork = next(a for a in menu.actions() if a.objectName() == "forkSession")
    fork.trigger()
    idle(qtbot, window)
    forked = window.sidebar.model().row_data(window.sidebar.view.currentIndex())
    assert forked is not None and forked.path == window.wb.ref
    assert forked.title == "first topic (fork)"
    assert window.windowTitle().startswith("first topic (fork)")
    close(qtbot, window)
    again = open_window(qtbot, tmp_path / "data", provider.model("anthropic-messages"))
    assert highlighted(again) == again.wb.ref == forked.path  # restored and highlighted
    close(qtbot, again)


def test_delete_opens_the_next_undo_brings_it_back_and_the_trash_lists_it(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    provider.script(Reply(text="one"), Reply(text="two"))
    run(qtbot, window.new_session())
    send(qtbot, window, "older session")
    older = window.wb.ref
    run(qtbot, window.new_session())
    send(qtbot, window, "newer session")
    newer = window.wb.ref
    assert newer != older
    view = window.sidebar.view
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_Delete)
    idle(qtbot, window)
    assert highlighted(window) == older
    assert window.notices.texts() == ["The session was moved to the trash."]
    undo = window.notices.findChild(QPushButton, "undoButton")
    assert undo is not None and undo.isVisible()
    QTest.mouseClick(undo, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    assert window.chat.item_count() == 2 and not window.notices.texts()
    for _ in range(2):
        view.setFocus()
        QTest.keyClick(view, Qt.Key.Key_Delete)
        run(qtbot, window.settle_tasks())
    settle(qtbot, window)
    assert window.wb.session is None
    assert window.center.currentWidget() is window.start_page
    assert window.map_pane.model().rowCount() == 0
    assert window.status.save.text() == "" and window.status.usage.text() == ""
    toggle = window.sidebar.trash_toggle
    QTest.mouseClick(toggle, Qt.MouseButton.LeftButton)
    assert toggle.text() == "Trash (2)"
    trash = window.sidebar.trash_model()
    assert sorted(r.title for r in trash.rows()) == ["newer session", "older session"]
    trash_view = window.sidebar.trash_view
    trash_view.setFocus()
    first = trash.index(0, 0, trash.index(0, 0))
    trash_view.setCurrentIndex(first)
    QTest.keyClick(trash_view, Qt.Key.Key_Return)
    idle(qtbot, window)
    assert toggle.text() == "Trash (1)" and window.chat.item_count() == 2
    close(qtbot, window)


def test_settings_are_in_the_menu_and_a_local_server_takes_effect_at_once(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    # Only an OpenAI model, without a key: nothing is usable yet.
    remote = provider.model("openai-responses", base_url="https://api.openai.test/v1")
    settings = Settings(default_model=remote.key, discover_local_servers=False)
    wb = make_workbench(data, remote, settings=settings)
    window = open_window(qtbot, data, remote, workbench=wb, restore=False)
    run(qtbot, window.new_session(str(workspace)))
    settle(qtbot, window)
    assert any("No model is available" in t for t in window.notices.texts())
    send(qtbot, window, "typed before any model")
    assert window.composer.text() == "typed before any model"  # not sent, not lost
    window.composer.input.clear()
    action = window.findChild(QAction, "settingsAction")
    assert action is not None and action.isEnabled() and action.shortcut().toString() == "Ctrl+,"
    forms: list[SettingsForm] = []

    async def fill(form: SettingsForm) -> SettingsForm:
        forms.append(form)
        dialog = SettingsDialog(window, form)
        qtbot.addWidget(dialog)
        dialog.local_url.setText(f"{provider.url}/v1")
        return dialog.result_form()

    window.dialogs.settings = fill  # type: ignore[method-assign]
    action.trigger()
    qtbot.waitUntil(lambda: window.wb.model_key() == "local/local-model", timeout=10_000)
    settle(qtbot, window)
    assert forms and remote.key not in [k for k, _ in forms[0].models]  # no key: not offered
    picker = window.composer.model_picker
    assert picker.currentText() == "local-model (local)"
    assert not any("No model" in t for t in window.notices.texts())  # its cause is gone
    settings_file = data / "config" / "settings.json"
    stored = json.loads(settings_file.read_text())
    assert stored["providers"]["local"]["base_url"] == f"{provider.url}/v1"  # as typed
    provider.script(Reply(text="from the local server"))
    send(qtbot, window, "hello local")
    assert "local-model" in window.wb.model_key()  # type: ignore[operator]
    close(qtbot, window)


def test_the_settings_dialog_says_once_where_keys_are_kept(qtbot: QtBot) -> None:
    form = SettingsForm(
        models=(("local/m", "m (local)"),),
        keychain_problem="No system keychain was found; a key typed here is kept in memory.",
        where_kept="kept in memory until you quit (no system keychain)",
    )
    dialog = SettingsDialog(None, form)
    qtbot.addWidget(dialog)
    texts = [label.text() for label in dialog.findChildren(QLabel)]
    assert sum("No system keychain" in t for t in texts) == 1
    key = dialog.findChild(QLineEdit, "openaiKey")
    # where it is kept is the field's tip (p1: the placeholder only shows the key's shape)
    assert key is not None and "kept in memory until you quit" in key.toolTip()
    assert "kept in memory" not in key.placeholderText()
    assert dialog.default_model.itemText(0) == "m (local)"


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A local port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        yield int(server.getsockname()[1])
    finally:
        server.close()


def test_a_local_server_in_settings_is_used_at_every_start_without_delaying_the_paint(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    silent_port: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = tmp_path / "data"
    settings_file = data / "config" / "settings.json"

    async def build(s: Session) -> None:
        await s.append_message(user("hi"))
        await s.append_message(answer("hello"))
        await s.append_model_change("local", "local-model")

    ref = seed(data, workspace, build)
    save_settings(
        settings_file,
        Settings(
            providers={"local": ProviderSettings(base_url=f"{provider.url}/v1")},
            discover_local_servers=False,
        ),
    )
    window = open_window(qtbot, data, [])
    qtbot.waitUntil(lambda: window.wb.model_key() == "local/local-model", timeout=10_000)
    settle(qtbot, window)
    assert window.wb.ref == ref
    assert window.composer.model_picker.currentText() == "local-model (local)"
    assert not window.notices.texts()
    close(qtbot, window)
    # A server that accepts and never answers: the session is shown at once, its model
    # is "connecting", and the notice says what went wrong once the listing gives up.
    # (long enough that a loaded machine paints before it: under load 1 s was not)
    monkeypatch.setattr(models_module, "DISCOVERY_TIMEOUT_S", 4.0)
    save_settings(
        settings_file,
        Settings(
            providers={"local": ProviderSettings(base_url=f"http://127.0.0.1:{silent_port}/v1")},
            discover_local_servers=False,
        ),
    )
    slow = open_window(qtbot, data, [])
    assert slow.wb.ref == ref and slow.chat.item_count() == 2  # painted, not waiting
    assert slow.wb.models.pending("local")
    assert "connecting" in slow.composer.model_picker.currentText()
    qtbot.waitUntil(lambda: not slow.wb.models.pending("local"), timeout=15_000)
    settle(qtbot, slow)
    assert any("did not answer" in t for t in slow.notices.texts())
    close(qtbot, slow)


def test_quitting_with_unsaved_entries_asks_and_retry_saves_them(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    opened: list[PersistenceErrorDialog] = []
    real_keep = window.dialogs._keep

    def keep(dialog: object) -> None:
        if isinstance(dialog, PersistenceErrorDialog):
            opened.append(dialog)
        real_keep(dialog)  # type: ignore[arg-type]

    window.dialogs._keep = keep  # type: ignore[method-assign]
    broken = break_saving(monkeypatch, "jsonl")
    provider.script(Reply(text="kept in memory"))
    send(qtbot, window, "save me")
    assert len(opened) == 1  # one dialog per failure burst, with the live count
    shown = opened[0].findChild(QLabel, "persistenceErrorText")
    assert shown is not None and "2 entries are kept in memory" in shown.text()
    assert window.status.save.text() == "Not saved (2)"
    opened[0].reject()
    asked: list[int] = []

    async def quit_unsaved(count: int) -> str:
        asked.append(count)
        broken["on"] = False  # the user freed some space
        return "retry"

    window.dialogs.quit_unsaved = quit_unsaved  # type: ignore[method-assign]
    session = window.wb.session
    assert session is not None
    ids = [r[0] for r in session.raw_entries()]
    close(qtbot, window)
    assert asked == [2] and session.closed and session.pending_count == 0
    assert len(ids) == 5  # the session's three entries, the prompt and the answer


def test_without_windows_unsaved_entries_go_to_a_recovery_file_and_the_exit_code_says_so(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = tmp_path / "data"
    window = open_window(qtbot, data, provider.model("anthropic-messages"), no_err_windows=True)
    run(qtbot, window.new_session(str(workspace)))
    break_saving(monkeypatch, "jsonl")
    provider.script(Reply(text="do not lose me"))
    send(qtbot, window, "important")
    close(qtbot, window)
    assert window.exit_code == 1
    files = list((tmp_path / "data-recovery").glob("*.jsonl"))
    assert len(files) == 1
    assert "do not lose me" in files[0].read_text()


def test_window_size_splitter_and_tree_pane_are_restored(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    window.resize(780, 530)  # within the offscreen screen (800x600) and not the default
    window.splitter.setSizes([300, 500, 200])
    QTest.keyClick(window, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert window.map_pane.isHidden()
    QApplication.processEvents()
    sizes = window.splitter.sizes()
    size = (window.width(), window.height())
    assert size[1] == 530
    close(qtbot, window)
    again = new_window(qtbot, tmp_path, provider, "jsonl", workspace)
    assert (again.width(), again.height()) == size
    assert again.map_pane.isHidden() and again.splitter.sizes()[:2] == sizes[:2]
    QTest.keyClick(again, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert not again.map_pane.isHidden()
    close(qtbot, again)


def test_markdown_export_from_the_sidebar_says_where_the_file_is(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = session_window(qtbot, tmp_path, provider, "jsonl", workspace)
    provider.script(Reply(text="## Result\n\nDone."))
    send(qtbot, window, "export me")
    dest = tmp_path / "export.md"

    async def ask_save_path(*_args: object) -> str:
        return str(dest)

    window.dialogs.ask_save_path = ask_save_path  # type: ignore[method-assign,assignment]
    menu = window.sidebar.context_menu_for(window.wb.ref or "")
    assert menu is not None
    export = next(a for a in menu.findChildren(QAction) if a.objectName() == "export_markdown")
    export.trigger()
    qtbot.waitUntil(lambda: dest.exists())
    run(qtbot, window.settle_tasks())
    settle(qtbot, window)
    assert window.notices.texts() == [f"Exported to {dest}."]
    text = dest.read_text()
    assert "## You" in text and "#### Result" in text
    window.grab().save(str(SCREENSHOTS / "flow_export.png"))
    close(qtbot, window)


def test_a_damaged_session_says_so_and_repair_opens_a_new_one(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"

    async def build(s: Session) -> None:
        await s.append_message(user("one"))
        await s.append_message(answer("two"))
        await s.append_message(user("three"))

    path = seed(data, workspace, build)
    damage_second_entry(path)
    wb = make_workbench(data, provider.model("anthropic-messages"))
    window = open_window(qtbot, data, [], workbench=wb, restore=False)
    repairs: list[object] = []
    window.dialogs.damaged_session = (  # type: ignore[method-assign]
        lambda path, report, on_repair: repairs.append(on_repair)
    )
    run(qtbot, window.open_session(path))
    assert len(repairs) == 1 and window.status.save.text() == "Read-only"
    repair = repairs[0]
    assert callable(repair)
    repair()
    # the new ref is set before its save state (the harness starts in between)
    qtbot.waitUntil(
        lambda: window.wb.ref not in (path, None) and window.status.save.text() == "Saved"
    )
    settle(qtbot, window)
    assert window.status.save.text() == "Saved"
    close(qtbot, window)


def test_p1_every_wrapped_text_of_the_settings_dialog_is_shown_whole(qtbot: QtBot) -> None:
    """Seen in a real X window: with no keychain, its five-line explanation showed two
    lines cut in half (a top-level dialog is sized from its layout's minimum, which does
    not ask a wrapped label how tall it is at the dialog's width)."""
    from keyring.backends import fail

    problem = backend_problem(fail.Keyring())  # type: ignore[no-untyped-call]
    assert problem is not None
    form = SettingsForm(models=(("local/m", "m (local)"),), keychain_problem=problem)
    dialog = SettingsDialog(None, form)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    for width in (dialog.width(), dialog.width() - 120):
        dialog.resize(width, 100)  # as small as it lets itself be
        QApplication.processEvents()
        wrapped = [x for x in dialog.findChildren(QLabel) if x.wordWrap() and x.isVisible()]
        assert wrapped
        for label in wrapped:
            needed = label.heightForWidth(label.width())
            assert label.height() >= needed, (label.objectName(), label.height(), needed)
    # A line that comes under a field (Save refused a URL) grows the dialog, not squeeze
    # the texts above it (seen in a real X window: the keychain's note cut to two lines).
    dialog.store.setFocus(Qt.FocusReason.TabFocusReason)
    while dialog.store.currentData() != "postgres":
        QTest.keyClick(dialog.store, Qt.Key.Key_Down)
    for field, text in ((dialog.database_url, "postgresql://[bad"), (dialog.local_url, "ftp://x")):
        field.setFocus(Qt.FocusReason.TabFocusReason)
        QTest.keyClicks(field, text)
        QTest.keyClick(field, Qt.Key.Key_Return)
        QApplication.processEvents()
        assert dialog.isVisible()
        wrapped = [x for x in dialog.findChildren(QLabel) if x.wordWrap() and x.isVisible()]
        assert any("Problem" in x.objectName() for x in wrapped)
        for label in wrapped:
            needed = label.heightForWidth(label.width())
            assert label.height() >= needed, (label.objectName(), label.height(), needed)


def test_l1_ticking_keep_keys_in_a_file_says_which_file_instead_of_cannot_be_saved(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """Seen in a real X window: with "Keep keys in a file only you can read" ticked, the
    note above it still said that keys "cannot be saved"."""
    from keyring.backends import fail

    problem = backend_problem(fail.Keyring())  # type: ignore[no-untyped-call]
    key_file = str(tmp_path / "config" / "keys.json")
    form = SettingsForm(
        models=(("local/m", "m (local)"),), keychain_problem=problem, key_file=key_file
    )
    dialog = SettingsDialog(None, form)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    note = dialog.findChild(QLabel, "keychainProblem")
    box = dialog.findChild(QCheckBox, "keysInFile")
    assert note is not None and box is not None and not box.isChecked()
    assert "cannot be saved" in note.text()
    QTest.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
    assert box.isChecked()
    assert "cannot be saved" not in note.text() and key_file in note.text()
    QTest.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
    assert "cannot be saved" in note.text()
