"""Sessions on a PostgreSQL server shared by two computers (issue 23's acceptance), through
the real windows and a real app process, against the suite's own cluster
(tests/helpers/postgres.py) and scripted model server.

"Two computers" are app instances with data folders of their own on one database: the
first is a window in this process, the second an app process (``--smoke``) and a second
window in this process with its own data folder, workbench and store.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.gui import MainWindow
from desktop_agent.gui._dialogs import PersistenceErrorDialog
from desktop_agent.gui._settings_dialog import SettingsDialog
from desktop_agent.session import PostgresSessionRepo, SessionMetadata
from desktop_agent.utils.text import message_text
from desktop_agent.workbench import PostgresStore, SettingsForm, Shared, connect_shared
from tests.helpers.keyring import MemoryKeyring
from tests.helpers.postgres import Cluster
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import (
    card_texts,
    close,
    idle,
    open_window,
    run,
    type_and_send,
)
from tests.helpers.workbench import make_workbench


def computer(
    qtbot: QtBot, data: Path, provider: ProviderServer, url: str, target: str | None = None
) -> MainWindow:
    """A window on the shared database, following other computers (as app.py wires it)."""
    wb = make_workbench(
        data, provider.model("anthropic-messages"), store="postgres", database_url=url
    )
    window = open_window(qtbot, data, [], workbench=wb, target=target)
    Shared(wb.store, None).attach(wb)
    return window


def send_in(qtbot: QtBot, window: MainWindow, text: str) -> None:
    """Bring ``window`` to the front, click into its message box, type and press Enter."""
    window.activateWindow()
    QTest.mouseClick(window.composer.input.viewport(), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.composer.input)
    type_and_send(qtbot, window, text)


def read_only(window: MainWindow) -> bool:
    return window.wb.session is not None and window.wb.session.read_only


def stored_texts(url: str, session_id: str) -> list[str]:
    """The session's messages as a third reader finds them on the server (on a thread
    with a loop of its own: the test's qasync loop is busy with the windows)."""

    async def read() -> list[str]:
        repo = PostgresSessionRepo(url)
        try:
            meta = SessionMetadata(id=session_id, created_at="")
            session = await repo.open(meta, write=False)
            context = await session.build_context()
            session.get_storage().force_close()
            return [message_text(m) for m in context.messages]
        finally:
            await repo.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, read()).result(60)


def smoke(
    data: Path, url: str | None, env: dict[str, str] | None = None
) -> tuple[dict[str, object], str]:
    """A computer's app: ``--smoke`` (on the database ``url``, else as its settings say);
    (its JSON line, its stderr and log)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **(env or {})}
    command = [sys.executable, "-m", "desktop_agent", "--data-dir", str(data), "--smoke"]
    if url is not None:
        command += ["--store", "postgres", "--database-url", url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=90, env=env, check=True)
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("{")][-1]
    result = json.loads(line)
    assert isinstance(result, dict)
    log = (data / "logs" / "desktop-agent.log").read_text()
    return result, done.stderr + log


def test_two_computers_share_a_session_one_writes_the_other_follows_then_continues(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    database_url: str,
    postgres_cluster: Cluster,
) -> None:
    first = computer(qtbot, tmp_path / "first", provider, database_url)
    run(qtbot, first.new_session(str(workspace)))
    idle(qtbot, first)
    provider.script(Reply(text="First answer from the model."))
    type_and_send(qtbot, first, "First question")
    idle(qtbot, first)
    session = first.wb.session
    assert session is not None and not session.read_only
    ref = first.wb.ref
    assert ref == "postgres:" + session.metadata.id

    # The second computer's app lists it and restores it, read-only while the first holds it.
    result, output = smoke(tmp_path / "second-app", database_url)
    assert result["restored_session"] == session.metadata.id
    assert result["messages_shown"] == 2 and result["sessions"] == 1
    notices = " ".join(str(n) for n in result["notices"])  # type: ignore[attr-defined]
    assert "read-only" in notices and "another computer" in notices
    assert postgres_cluster.password not in output

    # The second computer opens it and follows the first live.
    second = computer(qtbot, tmp_path / "second", provider, database_url, target=ref)
    assert second.wb.session is not None and second.wb.session.read_only
    assert second.composer.input.isReadOnly() or not second.composer.input.isEnabled()
    provider.script(Reply(text="Second answer, seen elsewhere."))
    send_in(qtbot, first, "Second question")
    idle(qtbot, first)
    written = time.monotonic()
    qtbot.waitUntil(
        lambda: any("Second answer, seen elsewhere." in t for t in card_texts(second)),
        timeout=1000,
    )
    assert time.monotonic() - written < 1.0
    assert sum("Second question" in t for t in card_texts(second)) == 1

    # A session created on the first computer appears in the second's sidebar.
    rows_before = second.sidebar.model().rows()
    run(qtbot, first.new_session(str(workspace)))
    other = first.wb.session
    assert other is not None and other.metadata.id != session.metadata.id
    created = time.monotonic()
    qtbot.waitUntil(
        lambda: any(r.id == other.metadata.id for r in second.sidebar.model().rows()),
        timeout=1000,
    )
    assert time.monotonic() - created < 1.0
    assert len(second.sidebar.model().rows()) == len(rows_before) + 1
    run(qtbot, first.open_session(ref))
    idle(qtbot, first)

    # The first closes: the second continues the session.
    close(qtbot, first)
    qtbot.waitUntil(
        lambda: second.wb.session is not None and not second.wb.session.read_only, timeout=3000
    )
    idle(qtbot, second)
    provider.script(Reply(text="Third answer, written here."))
    send_in(qtbot, second, "Third question")
    idle(qtbot, second)
    assert any("Third answer, written here." in t for t in card_texts(second))
    close(qtbot, second)
    assert stored_texts(database_url, session.metadata.id) == [
        "First question",
        "First answer from the model.",
        "Second question",
        "Second answer, seen elsewhere.",
        "Third question",
        "Third answer, written here.",
    ]
    QApplication.processEvents()


def test_server_stopped_hard_during_a_reply_then_back_nothing_lost_nothing_twice(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    database_url: str,
    postgres_cluster: Cluster,
) -> None:
    window = computer(qtbot, tmp_path / "data", provider, database_url)
    run(qtbot, window.new_session(str(workspace)))
    idle(qtbot, window)
    opened = capture_save_dialogs(window)
    words = ["The", "answer", "that", "was", "streaming", "when", "the", "server", "went", "away."]
    provider.script(Reply(text=[w + " " for w in words[:-1]] + words[-1:], delay_s=0.15))
    session = window.wb.session
    assert session is not None
    before = session.entry_count
    send_in(qtbot, window, "A question")
    qtbot.waitUntil(lambda: session.entry_count == before + 1)  # the prompt is written
    postgres_cluster.stop("immediate")  # mid-reply
    try:
        assert window.wb.running  # the reply is still streaming
        idle(qtbot, window)
        assert len(opened) == 1
        shown = opened[0].findChild(QLabel, "persistenceErrorText")
        assert shown is not None and "database server cannot be reached" in shown.text()
        assert "kept in memory" in shown.text()
        assert "database server is running" in shown.text()  # not "free some disk space"
        assert "disk space" not in shown.text()
        assert window.wb.save.pending >= 1
        assert postgres_cluster.password not in shown.text()
    finally:
        postgres_cluster.start()
    retry_until_saved(qtbot, window, opened[0])
    texts = card_texts(window)
    assert sum("A question" in t for t in texts) == 1
    assert sum("The answer that was streaming when the server went away." in t for t in texts) == 1
    again = reopen_with_every_entry_once(
        qtbot,
        window,
        tmp_path / "data",
        provider,
        database_url,
        ["A question", "The answer that was streaming when the server went away."],
    )
    texts = card_texts(again)
    assert sum("The answer that was streaming when the server went away." in t for t in texts) == 1
    close(qtbot, again)


def retry_until_saved(qtbot: QtBot, window: MainWindow, dialog: PersistenceErrorDialog) -> None:
    """Press the failed-save dialog's Retry and wait until everything is saved."""
    retry = dialog.findChild(QPushButton, "retryButton")
    assert retry is not None
    QTest.mouseClick(retry, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    qtbot.waitUntil(lambda: window.wb.save.pending == 0 and window.wb.save.status == "saved")


def reopen_with_every_entry_once(
    qtbot: QtBot,
    window: MainWindow,
    data: Path,
    provider: ProviderServer,
    database_url: str,
    stored: list[str],
) -> MainWindow:
    """Close ``window``: the server holds exactly ``stored``; a new window on the same
    data folder reads back the same entries, each once (returned, still open)."""
    session = window.wb.session
    assert session is not None
    ids = [r[0] for r in session.raw_entries()]
    close(qtbot, window)
    assert stored_texts(database_url, session.metadata.id) == stored
    again = computer(qtbot, data, provider, database_url)
    assert again.wb.session is not None
    assert [r[0] for r in again.wb.session.raw_entries()] == ids  # every entry once
    return again


def capture_save_dialogs(window: MainWindow) -> list[PersistenceErrorDialog]:
    """The failed-save dialogs ``window`` opens, as it opens them."""
    opened: list[PersistenceErrorDialog] = []
    real_keep = window.dialogs._keep

    def keep(dialog: object) -> None:
        if isinstance(dialog, PersistenceErrorDialog):
            opened.append(dialog)
        real_keep(dialog)  # type: ignore[arg-type]

    window.dialogs._keep = keep  # type: ignore[method-assign]
    return opened


def test_a_server_that_stops_answering_is_a_failed_save_in_bounded_time_then_retry_writes_the_rest(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    database_url: str,
    postgres_cluster: Cluster,
) -> None:
    """SIGSTOP of every server process keeps TCP open (the kernel acknowledges what is
    sent), so only the client's own limit (`Deadline`) ends the wait: the save fails with
    the Retry dialog, the entries stay in memory, and Retry after SIGCONT writes exactly
    the missing ones."""
    window = computer(qtbot, tmp_path / "data", provider, database_url)
    run(qtbot, window.new_session(str(workspace)))
    idle(qtbot, window)
    assert isinstance(window.wb.store, PostgresStore)
    window.wb.store.repo.answer_timeout_s = 2.0
    opened = capture_save_dialogs(window)
    session = window.wb.session
    assert session is not None
    provider.script(Reply(text="An answer while the server is frozen."))
    postgres_cluster.pause()
    try:
        started = time.monotonic()
        send_in(qtbot, window, "A question to a frozen server")
        qtbot.waitUntil(lambda: len(opened) == 1, timeout=15_000)
        assert time.monotonic() - started < 2.0 * 3  # the answer time, not forever
        idle(qtbot, window)
        assert len(opened) == 1
        shown = opened[0].findChild(QLabel, "persistenceErrorText")
        assert shown is not None and "did not answer within 2 s" in shown.text()
        assert "kept in memory" in shown.text()
        assert opened[0].findChild(QPushButton, "saveCopyButton") is not None
        assert window.wb.save.pending == 2 and window.wb.save.status != "saved"
        texts = card_texts(window)
        assert sum("An answer while the server is frozen." in t for t in texts) == 1
    finally:
        postgres_cluster.resume()
    retry_until_saved(qtbot, window, opened[0])
    again = reopen_with_every_entry_once(
        qtbot,
        window,
        tmp_path / "data",
        provider,
        database_url,
        ["A question to a frozen server", "An answer while the server is frozen."],
    )
    close(qtbot, again)


def test_an_unreachable_server_at_start_up_is_said_and_local_files_are_used(
    tmp_path: Path, postgres_cluster: Cluster
) -> None:
    url = postgres_cluster.url().replace(f":{postgres_cluster.port}/", ":1/")
    result, output = smoke(tmp_path / "data", url)
    notices = " ".join(str(n) for n in result["notices"])  # type: ignore[attr-defined]
    assert "session server cannot be used" in notices and "local" in notices
    assert "cannot be reached" in notices
    assert postgres_cluster.password not in output + notices
    assert (tmp_path / "data" / "sessions").is_dir()  # working on local files


@pytest.mark.slow
@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("postgresql://me@[db.example/agent", "IPv6"),
        ("db.example agent", "Not a PostgreSQL server's address"),
        ("postgresql://me@127.0.0.1:99999/agent", "65535"),
    ],
)
def test_m3_class_a_bad_server_address_at_start_up_is_said_in_words(
    tmp_path: Path, url: str, why: str
) -> None:
    """M3's class at a launch: an address the server could never be reached at (no server
    is started) starts the app on local files and says why in words, not as the
    ValueError or psycopg.ProgrammingError that stopped the launch before."""
    result, output = smoke(tmp_path / "data", url)
    notices = " ".join(str(n) for n in result["notices"])  # type: ignore[attr-defined]
    assert "session server cannot be used" in notices and "is not valid" in notices
    assert why in notices and ".." not in notices
    assert "Error" not in notices and "Traceback" not in output
    assert (tmp_path / "data" / "sessions").is_dir()  # working on local files


def store_notice_buttons(window: MainWindow) -> tuple[QPushButton, QPushButton]:
    notice = window.notices.findChild(QWidget, "notice_store")
    assert notice is not None and notice.isVisible()
    local = notice.findChild(QPushButton, "noticeAction")
    again = notice.findChild(QPushButton, "noticeChoice")
    assert local is not None and local.text() == "Work on local files"
    assert again is not None and again.text() == "Try the server again"
    return local, again


def test_an_unreachable_server_at_start_up_offers_local_files_or_another_try(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    postgres_cluster: Cluster,
) -> None:
    """As app.py starts: the server is down, so the local files are used and the notice
    offers the choice; trying again while it is down says so again; once it is up, a
    try moves the window onto the server (and "Work on local files" just keeps them)."""
    data = tmp_path / "data"
    database_url = postgres_cluster.url(postgres_cluster.database())
    wb = make_workbench(data, provider.model("anthropic-messages"))
    postgres_cluster.stop()
    try:
        shared = run(qtbot, connect_shared(database_url, None, fallback=wb.store))
        assert shared.problem is not None and shared.store is wb.store
        window = open_window(qtbot, data, [], workbench=wb)
        shared.attach(wb)
        idle(qtbot, window)
        _, again = store_notice_buttons(window)
        QTest.mouseClick(again, Qt.MouseButton.LeftButton)  # still down
        idle(qtbot, window)
        _, again = store_notice_buttons(window)
        assert any("cannot be reached" in t for t in window.notices.texts())
        assert not isinstance(wb.store, PostgresStore)
    finally:
        postgres_cluster.start()
    QTest.mouseClick(again, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    assert isinstance(wb.store, PostgresStore)
    assert window.notices.findChild(QWidget, "notice_store") is None or not any(
        "session server" in t for t in window.notices.texts()
    )
    run(qtbot, window.new_session(str(workspace)))
    idle(qtbot, window)
    assert wb.session is not None
    repo = PostgresSessionRepo(database_url)
    try:
        assert run(qtbot, repo.exists(wb.session.metadata.id))  # on the server
    finally:
        run(qtbot, repo.close())
    close(qtbot, window)

    # "Work on local files": the notice goes, the local files stay.
    data = tmp_path / "other"
    wb = make_workbench(data, provider.model("anthropic-messages"))
    unreachable = postgres_cluster.url().replace(f":{postgres_cluster.port}/", ":1/")
    shared = run(qtbot, connect_shared(unreachable, None, fallback=wb.store))
    window = open_window(qtbot, data, [], workbench=wb)
    shared.attach(wb)
    idle(qtbot, window)
    local, _ = store_notice_buttons(window)
    QTest.mouseClick(local, Qt.MouseButton.LeftButton)
    idle(qtbot, window)
    assert not any("session server" in t for t in window.notices.texts())
    assert not isinstance(wb.store, PostgresStore)
    run(qtbot, window.new_session(str(workspace)))
    idle(qtbot, window)
    assert wb.session is not None and wb.session.metadata.path is not None
    assert Path(wb.session.metadata.path).is_relative_to(data / "sessions")
    close(qtbot, window)


def test_quitting_while_the_server_is_away_keeps_the_unsaved_entries_in_the_recovery_folder(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    database_url: str,
    postgres_cluster: Cluster,
) -> None:
    data = tmp_path / "data"
    wb = make_workbench(
        data, provider.model("anthropic-messages"), store="postgres", database_url=database_url
    )
    window = open_window(qtbot, data, [], workbench=wb, no_err_windows=True)
    run(qtbot, window.new_session(str(workspace)))
    idle(qtbot, window)
    postgres_cluster.stop("immediate")
    try:
        provider.script(Reply(text="Do not lose this answer."))
        send_in(qtbot, window, "Keep this question")
        idle(qtbot, window)
        assert window.wb.save.pending == 2
        close(qtbot, window)
    finally:
        postgres_cluster.start()
    assert window.exit_code == 1
    (saved,) = (tmp_path / "data-recovery").glob("*.jsonl")
    text = saved.read_text()
    assert "Keep this question" in text and "Do not lose this answer." in text


def test_after_the_writer_lost_its_connection_the_other_computer_continues_it_here(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    database_url: str,
) -> None:
    first = computer(qtbot, tmp_path / "first", provider, database_url)
    run(qtbot, first.new_session(str(workspace)))
    idle(qtbot, first)
    provider.script(Reply(text="Answer on the first computer."))
    send_in(qtbot, first, "Question on the first computer")
    idle(qtbot, first)
    ref = first.wb.ref
    assert ref is not None
    second = computer(qtbot, tmp_path / "second", provider, database_url, target=ref)
    assert second.wb.session is not None and second.wb.session.read_only
    notice = second.notices.findChild(QWidget, "notice_read_only")
    assert notice is not None and notice.isVisible()
    button = notice.findChild(QPushButton, "noticeAction")
    assert button is not None and button.text() == "Continue it here"
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)  # the first still holds it
    idle(qtbot, second)
    assert second.wb.session.read_only
    assert any("still open on another computer" in t for t in second.notices.texts())

    # The first computer's connection is lost (the server ends it, as after a crash).
    with psycopg.connect(database_url, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks"
            " WHERE locktype = 'advisory' AND pid <> pg_backend_pid()"
        ).fetchall()
    assert ended == [(True,)]
    notice = second.notices.findChild(QWidget, "notice_read_only")
    assert notice is not None
    button = notice.findChild(QPushButton, "noticeAction")
    assert button is not None
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    idle(qtbot, second)
    assert not read_only(second)
    assert not second.composer.input.isReadOnly()
    provider.script(Reply(text="Answer on the second computer."))
    send_in(qtbot, second, "Question on the second computer")
    idle(qtbot, second)
    assert any("Answer on the second computer." in t for t in card_texts(second))

    # The first comes back: its next save is refused, nothing is overwritten.
    provider.script(Reply(text="Late answer."))
    send_in(qtbot, first, "Late question")
    idle(qtbot, first)
    assert first.wb.save.status != "saved" and first.wb.save.pending == 2
    assert "cannot be reached" in (first.wb.save.detail or "")  # its connection is gone
    run(qtbot, first.wb.retry_saving())  # connected again: the lock is the other's now
    assert first.wb.save.pending == 2
    assert "took this session over" in (first.wb.save.detail or "")
    session_id = second.wb.session.metadata.id
    close(qtbot, second)
    first.wb.abandon()
    close(qtbot, first)
    assert stored_texts(database_url, session_id) == [
        "Question on the first computer",
        "Answer on the first computer.",
        "Question on the second computer",
        "Answer on the second computer.",
    ]


def test_settings_switch_to_the_server_for_the_next_start_with_the_password_in_the_keychain(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    database_url: str,
    postgres_cluster: Cluster,
) -> None:
    data = tmp_path / "data"
    keyring = MemoryKeyring()
    wb = make_workbench(data, provider.model("anthropic-messages"), keyring=keyring)
    window = open_window(qtbot, data, [], workbench=wb)
    action = window.findChild(QAction, "settingsAction")
    assert action is not None

    async def fill(form: SettingsForm) -> SettingsForm:
        dialog = SettingsDialog(window, form)
        qtbot.addWidget(dialog)
        assert not dialog.database_url.isEnabled()  # files: no server to name
        dialog.store.setFocus()
        dialog.store.setCurrentIndex(dialog.store.findData("postgres"))
        assert dialog.database_url.isEnabled() and dialog.database_password.isEnabled()
        QTest.keyClicks(dialog.database_url, postgres_cluster.url(password=False))
        QTest.keyClicks(dialog.database_password, postgres_cluster.password)
        return dialog.result_form()

    window.dialogs.settings = fill  # type: ignore[method-assign]
    action.trigger()
    qtbot.waitUntil(lambda: any("next start" in t for t in window.notices.texts()))
    stored = (data / "config" / "settings.json").read_text()
    assert json.loads(stored)["store"] == "postgres"
    assert json.loads(stored)["database_url"] == postgres_cluster.url(password=False)
    assert postgres_cluster.password not in stored
    assert keyring.store[("DesktopAgent", "session-database")] == postgres_cluster.password
    close(qtbot, window)

    # The next start uses the server (the password from PGPASSWORD here: the test's
    # keyring lives in this process only).
    async def seed_server() -> str:
        repo = PostgresSessionRepo(postgres_cluster.url())
        try:
            s = await repo.create(cwd=str(workspace))
            await s.append_message(
                UserMessage(content=[TextContent(text="on the server")], timestamp=1)
            )
            await s.close()
            return s.metadata.id
        finally:
            await repo.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        seeded = pool.submit(asyncio.run, seed_server()).result(60)
    result, output = smoke(data, None, {"PGPASSWORD": postgres_cluster.password})
    assert result["sessions"] == 1
    assert not any("session server" in str(n) for n in result["notices"])  # type: ignore[attr-defined]
    assert result["restored_session"] == seeded and result["messages_shown"] == 1
    assert postgres_cluster.password not in output


def test_a_database_migrated_by_a_newer_app_opens_read_only_with_a_notice(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    database_url: str,
) -> None:
    first = computer(qtbot, tmp_path / "first", provider, database_url)
    run(qtbot, first.new_session(str(workspace)))
    idle(qtbot, first)
    provider.script(Reply(text="Written before the upgrade."))
    send_in(qtbot, first, "Before the upgrade")
    idle(qtbot, first)
    ref = first.wb.ref
    close(qtbot, first)
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute("UPDATE desktop_agent.meta SET value = '99' WHERE key = 'schema_version'")
    older = computer(qtbot, tmp_path / "older", provider, database_url, target=ref)
    assert read_only(older)
    assert older.composer.input.isReadOnly()
    assert any("newer Desktop Agent" in t for t in older.notices.texts())
    assert any("Written before the upgrade." in t for t in card_texts(older))
    close(qtbot, older)
