"""The desktop app end to end (issue 5 item 7), offscreen, with the provider test server."""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import json
import os
import subprocess
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from desktop_agent.ai import AssistantMessage, TextContent, UserMessage
from desktop_agent.gui import MainWindow
from desktop_agent.harness import PersistenceErrorEvent
from desktop_agent.session import JsonlSessionRepo, RecoveryReport, Session
from desktop_agent.session._platform import OS_FILE_OPS
from tests.ai.provider_server import ProviderServer, Reply
from tests.gui.conftest import make_services

SCREENSHOTS = Path(__file__).parent / "screenshots"


def run(
    qtbot: QtBot, window: MainWindow, coro: Coroutine[Any, Any, Any], timeout: int = 15_000
) -> Any:
    task = window.spawn(coro)
    qtbot.waitUntil(task.done, timeout=timeout)
    return task.result()


def make_window(qtbot: QtBot, data: Path, provider: ProviderServer, **extra: Any) -> MainWindow:
    services = make_services(data, provider.model("anthropic-messages"), **extra)
    window = MainWindow(services, no_err_windows=False)
    qtbot.addWidget(window)
    window.resize(1200, 760)
    return window


def shoot(window: MainWindow, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    window.grab().save(str(SCREENSHOTS / f"app_{name}.png"))


def seed(data: Path, workspace: Path, build: Callable[[Session], Coroutine[Any, Any, None]]) -> str:
    async def go() -> str:
        repo = JsonlSessionRepo(data / "sessions", str(data / "trash"))
        session = await repo.create(cwd=str(workspace))
        await build(session)
        await session.close()
        return session.metadata.path or ""

    # The test's qasync loop is marked running in this thread: seed from another one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, go()).result()


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-test",
        stop_reason="stop",
        timestamp=2,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    return ws


def test_first_launch_shows_the_start_page(
    qtbot: QtBot, running_qloop: asyncio.AbstractEventLoop, tmp_path: Path, provider: ProviderServer
) -> None:
    window = make_window(qtbot, tmp_path / "data", provider)
    window.show()
    run(qtbot, window, window.restore_last(None))
    assert window.center.currentWidget() is window.start_page
    shoot(window, "first_launch")


def test_send_prompt_streams_the_answer_and_restores_after_restart(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    window = make_window(qtbot, data, provider)
    window.show()
    run(qtbot, window, window.new_session(str(workspace)))
    provider.script(Reply(text=["Hello ", "from ", "the ", "model."], delay_s=0.02))
    run(qtbot, window, window.send("Say hello"))
    assert window.chat.item_count() == 2
    assert window.status_save.text() == "Saved"
    session = window.session
    assert session is not None
    leaf = session.leaf_id()
    path = session.metadata.path
    shoot(window, "answered")
    run(qtbot, window, window._shutdown(stop=False))
    # Restart: the same session opens on the same leaf.
    again = make_window(qtbot, data, provider)
    again.show()
    run(qtbot, again, again.restore_last(None))
    assert again.session is not None
    assert again.session.metadata.path == path
    assert again.session.leaf_id() == leaf
    assert again.messages_shown == 2
    run(qtbot, again, again._shutdown(stop=False))


def test_stop_a_run(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = make_window(qtbot, tmp_path / "data", provider)
    run(qtbot, window, window.new_session(str(workspace)))
    provider.script(Reply(text=["partial ", "answer ", "never ends"], hold_after=4))
    task = window.spawn(window.send("long answer please"))
    qtbot.waitUntil(lambda: window.harness is not None and not window.harness.is_idle)
    qtbot.waitUntil(lambda: window.composer.stop_button.isEnabled())
    qtbot.wait(100)
    window.composer.stop_button.click()
    qtbot.waitUntil(task.done, timeout=10_000)
    session = window.session
    assert session is not None
    last = session.get_message(session.leaf_id() or "")
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
    assert not window.composer.stop_button.isEnabled()
    run(qtbot, window, window._shutdown(stop=False))


def test_clicking_a_tree_node_switches_branch_and_is_restored(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    ids: dict[str, str] = {}

    async def build(s: Session) -> None:
        ids["q1"] = await s.append_message(user("first question"))
        ids["a1"] = await s.append_message(answer("first answer"))
        ids["q2"] = await s.append_message(user("second question"))
        ids["a2"] = await s.append_message(answer("second answer"))
        await s.move_to(ids["a1"])
        ids["q2b"] = await s.append_message(user("other second question"))
        ids["a2b"] = await s.append_message(answer("other answer"))

    path = seed(data, workspace, build)
    window = make_window(qtbot, data, provider)
    window.show()
    run(qtbot, window, window.open_session(path))
    assert window.chat.item_count() == 4
    view = window.tree.findChild(type(window.tree.view), "branchTreeView") or window.tree.view
    model = view.model()
    target = _find_index(model, ids["a2"])
    assert target is not None
    view.scrollTo(target)
    rect = view.visualRect(target)
    qtbot.mouseClick(view.viewport(), qtbot_button(), pos=rect.center())  # type: ignore[no-untyped-call]
    qtbot.waitUntil(lambda: window.session is not None and window.session.leaf_id() == ids["a2"])
    qtbot.waitUntil(lambda: not window._tasks, timeout=5000)
    assert window.chat.item_count() == 4
    shoot(window, "branch_switched")
    run(qtbot, window, window._shutdown(stop=False))
    lines = Path(path).read_text().splitlines()
    leaf_lines = [json.loads(line) for line in lines if '"type":"leaf"' in line]
    assert leaf_lines[-1]["targetId"] == ids["a2"]
    assert len(leaf_lines) == 2  # the seed's move plus exactly one for the click
    again = make_window(qtbot, data, provider)
    run(qtbot, again, again.restore_last(None))
    assert again.session is not None and again.session.leaf_id() == ids["a2"]
    run(qtbot, again, again._shutdown(stop=False))


def qtbot_button() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def _find_index(model: Any, entry_id: str) -> Any:
    from PySide6.QtCore import QModelIndex, Qt

    stack = [QModelIndex()]
    while stack:
        parent = stack.pop()
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            for role in range(Qt.ItemDataRole.UserRole, Qt.ItemDataRole.UserRole + 8):
                if model.data(index, role) == entry_id:
                    return index
            stack.append(index)
    return None


def test_sibling_arrows_and_edit_and_resend(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    window = make_window(qtbot, data, provider)
    run(qtbot, window, window.new_session(str(workspace)))
    provider.script(Reply(text="answer one"))
    run(qtbot, window, window.send("question one"))
    session = window.session
    assert session is not None
    first_user = next(
        i for i in session.branch_ids() if session.entry_kind(i) == ("message", "user")
    )
    provider.script(Reply(text="answer two"))
    run(qtbot, window, window.edit_resend(first_user, "question one, edited"))
    texts = [
        m.content[0].text  # type: ignore[union-attr]
        for i in session.branch_ids()
        if (m := session.get_message(i)) is not None and isinstance(m, UserMessage)
    ]
    assert texts == ["question one, edited"]
    edited = next(i for i in session.branch_ids() if session.entry_kind(i) == ("message", "user"))
    assert session.parent_of(edited) == session.parent_of(first_user)
    run(qtbot, window, window.switch_sibling(edited, -1))
    texts = [
        m.content[0].text  # type: ignore[union-attr]
        for i in session.branch_ids()
        if (m := session.get_message(i)) is not None and isinstance(m, UserMessage)
    ]
    assert texts == ["question one"]
    assert session.get_message(session.leaf_id() or "").content[0].text == "answer one"  # type: ignore[union-attr]
    shoot(window, "siblings")
    run(qtbot, window, window._shutdown(stop=False))


def test_persistence_error_dialog_once_then_retry_saves_exactly_once(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = tmp_path / "data"
    window = make_window(qtbot, data, provider)
    run(qtbot, window, window.new_session(str(workspace)))
    shown: list[PersistenceErrorEvent] = []
    retry_callbacks: list[Callable[[], object]] = []

    def fake_dialog(
        event: PersistenceErrorEvent, on_retry: Callable[[], object], on_copy: Callable[[], object]
    ) -> None:
        shown.append(event)
        retry_callbacks.append(on_retry)

    monkeypatch.setattr(window.dialogs, "persistence_error", fake_dialog)
    real = OS_FILE_OPS.write_all
    broken = {"on": True}

    def write_all(fd: int, payload: bytes) -> None:
        if broken["on"]:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        real(fd, payload)

    monkeypatch.setattr(OS_FILE_OPS, "write_all", write_all)
    provider.script(Reply(text="the answer still shows"))
    run(qtbot, window, window.send("save me"))
    assert window.chat.item_count() == 2
    assert len(shown) == 1
    assert window.status_save.text() == "Not saved"
    session = window.session
    assert session is not None and session.pending_count >= 2
    in_memory = session.branch_ids()
    broken["on"] = False
    retry_callbacks[0]()
    qtbot.waitUntil(lambda: session.pending_count == 0)
    qtbot.waitUntil(lambda: window.status_save.text() == "Saved")
    path = session.metadata.path or ""
    run(qtbot, window, window._shutdown(stop=False))
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]
    written = [line["id"] for line in lines]
    assert len(written) == len(set(written))
    assert set(in_memory) <= set(written)


def test_damaged_session_dialog(
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
    lines = Path(path).read_bytes().split(b"\n")
    lines[2] = b"#" + lines[2][1:]
    Path(path).write_bytes(b"\n".join(lines))
    window = make_window(qtbot, data, provider)
    reports: list[RecoveryReport] = []
    window.dialogs.damaged_session = lambda *args: reports.append(args[1])  # type: ignore[method-assign]
    run(qtbot, window, window.open_session(path))
    assert len(reports) == 1 and reports[0].damaged
    assert window.session is not None and window.session.read_only
    run(qtbot, window, window._shutdown(stop=False))


def test_quitting_during_a_run_waits_and_saves(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = make_window(qtbot, tmp_path / "data", provider)
    window.show()
    run(qtbot, window, window.new_session(str(workspace)))
    provider.script(Reply(text=["slow ", "but ", "complete"], delay_s=0.1))
    task = window.spawn(window.send("take your time"))
    qtbot.waitUntil(lambda: window.harness is not None and not window.harness.is_idle)
    window.ask_stop_or_wait = lambda: "wait"  # type: ignore[method-assign]
    session = window.session
    assert session is not None
    window.close()
    qtbot.waitUntil(lambda: session.closed, timeout=15_000)
    qtbot.waitUntil(task.done)
    path = session.metadata.path or ""
    last = json.loads(Path(path).read_text().splitlines()[-1])
    assert last["message"]["role"] == "assistant"
    assert last["message"]["stopReason"] == "stop"


def test_smoke_command_line(tmp_path: Path, workspace: Path) -> None:
    data = tmp_path / "data"

    async def build(s: Session) -> None:
        a = await s.append_message(user("q1"))
        await s.append_message(answer("a1"))
        await s.move_to(a)

    seed(data, workspace, build)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-m", "desktop_agent", "--data-dir", str(data), "--smoke"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )
    payload = json.loads([ln for ln in done.stdout.splitlines() if ln.startswith("{")][-1])
    assert payload["messages_shown"] == 1
    assert payload["leaf"] is not None


def test_delete_to_trash_and_undo(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = make_window(qtbot, tmp_path / "data", provider)
    run(qtbot, window, window.new_session(str(workspace)))
    provider.script(Reply(text="keep this"))
    run(qtbot, window, window.send("something worth keeping"))
    session = window.session
    assert session is not None
    path = session.metadata.path or ""
    run(qtbot, window, window.delete(path))
    assert not Path(path).exists()
    assert window.undo_button.isVisibleTo(window)
    run(qtbot, window, window.undo())
    assert Path(path).exists()
    assert window.session is not None and window.session.metadata.path == path
    assert window.chat.item_count() == 2
    run(qtbot, window, window._shutdown(stop=False))
