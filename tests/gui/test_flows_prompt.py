"""What the agent is told about the project, through the real window (issue 19).

The issue's folder (`tests.helpers.prompt_folder`, the one the Pi CLI test uses) plus a skill
without a description: the first request carries the appended text, the context files in
Pi's order, the skill and the date, and the broken skill is named in a notice; typing
``/rev``, Enter on the completion, ``src/app.py quickly`` and Enter sends the template
expanded as the Pi CLI sends it (and the chat shows what was sent); ``/context`` opens
the Context view whose prompt is exactly the next request's, with its files and the
skipped skill; Instructions saved there reach the next turn; ``/compact`` compacts now
and the compaction card is painted.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop_agent.gui._context_view import ContextDialog
from desktop_agent.gui.sidebar import SessionSidebar
from desktop_agent.harness import HarnessSettings
from tests.helpers.prompt_folder import APPEND, GLOBAL, REPO, SUB, build_folder
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import (
    SCREENSHOTS,
    ask,
    card_texts,
    close,
    idle,
    open_window,
    run,
    type_and_send,
)
from tests.helpers.wire import last_user_text, system_text
from tests.helpers.workbench import make_workbench


def test_context_templates_commands_and_compact_through_the_window(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    workspace = build_folder(tmp_path, home)  # the folder, as the Pi CLI test has it
    bare = workspace / ".pi" / "skills" / "bare" / "SKILL.md"
    bare.parent.mkdir()
    bare.write_text("---\nname: bare\n---\nno description", encoding="utf-8")
    data = tmp_path / "data"
    model = provider.model("openai-completions")
    wb = make_workbench(data, model, prompt_dirs=[agent, data / "config"], home=home)
    wb.harness_settings = HarnessSettings(base_delay_ms=10, max_delay_ms=50, keep_recent_tokens=1)
    window = open_window(qtbot, data, model, workbench=wb)
    wb.state.last_workspace = str(workspace)
    window.activateWindow()
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: wb.session is not None)
    idle(qtbot, window)
    editor = window.composer.input
    assert QApplication.focusWidget() is editor

    # 1. The first request carries the context files in order, the skill, date and folder.
    ask(qtbot, window, provider, "hello", Reply(text="Hello."))
    first = system_text(provider.last_body())
    order = [APPEND, GLOBAL, REPO, SUB, "<name>deploy</name>"]
    assert [first.index(x) for x in order] == sorted(first.index(x) for x in order)
    assert f"Current date: {dt.date.today().isoformat()}" in first
    assert first.endswith(f"Current working directory: {workspace}")
    skipped = str(bare)
    assert window.notices.texts() == [
        f"Project file {skipped} skill without a description: skipped"
    ]

    # 2. "/rev": the list shows the template; Enter fills it in, Enter again sends it.
    QTest.keyClicks(editor, "/rev")
    commands = window.composer.commands
    qtbot.waitUntil(commands.isVisible)
    assert [commands.item(i).text() for i in range(commands.count())] == [
        "/review <file> [tone] — Review a file"
    ]
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert editor.toPlainText() == "/review " and not commands.isVisible()
    assert QApplication.focusWidget() is editor
    ask(qtbot, window, provider, "src/app.py quickly", Reply(text="Reviewed."))
    sent = "Review src/app.py and be quickly. All arguments: src/app.py quickly"
    assert last_user_text(provider.last_body()) == sent  # as the Pi CLI sends it
    assert sent in card_texts(window, to_end=True)[-2]

    # 3. "/" lists the app's commands, the template and the skill; Esc closes the list.
    QTest.keyClicks(editor, "/")
    qtbot.waitUntil(commands.isVisible)
    shown = [commands.item(i).text().split(" ")[0] for i in range(commands.count())]
    for name in ("/new", "/compact", "/model", "/name", "/fork", "/export", "/copy"):
        assert name in shown
    assert "/settings" in shown and "/context" in shown
    assert "/review" in shown and "/skill:deploy" in shown
    SCREENSHOTS.mkdir(exist_ok=True)
    window.grab().save(str(SCREENSHOTS / "flow_commands.png"))
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    assert not commands.isVisible()

    # 4. /context: the exact prompt of the next request, its files and what was skipped.
    QTest.keyClicks(editor, "cont")  # typing shows the list again, with one entry
    assert commands.isVisible() and commands.count() == 1
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert editor.toPlainText() == "/context "
    QTest.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.findChild(ContextDialog, "contextDialog") is not None)
    dialog = window.findChild(ContextDialog, "contextDialog")
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    idle(qtbot, window)
    assert editor.toPlainText() == ""
    rows = [dialog.sources.topLevelItem(i) for i in range(dialog.sources.topLevelItemCount())]
    paths = [row.text(2) for row in rows if row is not None]
    assert paths[:4] == [
        str(workspace / ".pi" / "APPEND_SYSTEM.md"),
        str(agent / "AGENTS.md"),
        str(workspace.parent / "AGENTS.md"),
        str(workspace / "CLAUDE.md"),
    ]
    assert any(p.endswith("deploy/SKILL.md") for p in paths)
    assert f"are read from: {agent}, {data / 'config'}" in dialog.summary.text()
    problems = [dialog.problems.item(i).text() for i in range(dialog.problems.count())]
    assert problems == [f"{skipped}: skill without a description: skipped"]
    opened: list[str] = []
    monkeypatch.setattr(ContextDialog, "open_file", staticmethod(opened.append))
    assert rows[0] is not None
    dialog.sources.setCurrentItem(rows[0])
    QTest.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    assert opened == [str(workspace / ".pi" / "APPEND_SYSTEM.md")]
    dialog.grab().save(str(SCREENSHOTS / "context_view.png"))

    # Instructions kept by the app reach the prompt at the next turn.
    dialog.instructions.setFocus()
    QTest.keyClicks(dialog.instructions, "Answer in French.")
    QTest.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Answer in French." in dialog.prompt.toPlainText())
    idle(qtbot, window)
    next_prompt = dialog.prompt.toPlainText()
    dialog.close()
    editor.setFocus()
    ask(qtbot, window, provider, "and now?", Reply(text="D'accord."))
    assert system_text(provider.last_body()) == next_prompt
    assert wb.settings.instructions == {str(workspace): "Answer in French."}

    # 5. /compact with instructions: the compaction card is painted.
    before = len(provider.requests)
    summary = "Summary: greeted, reviewed src/app.py, French."
    ask(
        qtbot,
        window,
        provider,
        "/compact keep the file names",
        Reply(text=summary),
        Reply(text="The last turn, in short."),
    )
    asked = [r.body for r in provider.requests[before:] if r.method == "POST"]
    assert any("keep the file names" in last_user_text(b) for b in asked)
    assert any(summary in t for t in card_texts(window, to_end=True))
    close(qtbot, window)


def test_app_commands_do_what_their_menu_entries_do(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = provider.model("openai-completions")
    window = open_window(qtbot, tmp_path / "data", model)
    wb = window.wb
    wb.state.last_workspace = str(workspace)
    editor = window.composer.input
    before = len(provider.requests)

    def command(text: str) -> None:
        editor.setFocus()
        editor.clear()
        type_and_send(qtbot, window, text)
        idle(qtbot, window)

    command("/new")
    assert wb.session is not None and wb.session.metadata.cwd == str(workspace)
    provider.script(Reply(text="The reply to copy."))
    command("hello")
    first = wb.ref
    command("/name Naming by command")
    assert window.sidebar.model().rows()[0].title == "Naming by command"
    asked: list[str] = []
    monkeypatch.setattr(
        SessionSidebar, "ask_text", staticmethod(lambda _p, title, *_a: asked.append(title))
    )
    command("/name")  # no name: the rename question, as Session -> Rename asks it
    qtbot.waitUntil(lambda: asked == ["Rename session"])
    command("/copy")
    assert QApplication.clipboard().text() == "The reply to copy."
    command("/model nowhere/x")
    assert window.notices.texts() == [
        "There is no model 'nowhere/x': give it as provider/id, as the model list has it."
    ]
    dest = tmp_path / "by-command.md"

    async def ask_save_path(*_args: object) -> str:
        return str(dest)

    window.dialogs.ask_save_path = ask_save_path  # type: ignore[method-assign,assignment]
    command("/export markdown")
    qtbot.waitUntil(dest.exists)
    assert "The reply to copy." in dest.read_text(encoding="utf-8")
    command("/fork")
    assert wb.ref != first and wb.session is not None
    assert [r.role for r in run(qtbot, wb.branch())] == ["user", "assistant"]
    assert editor.toPlainText() == ""
    posts = [r for r in provider.requests[before:] if r.method == "POST"]
    assert len(posts) == 1  # "hello"; no command ever reached the model
    close(qtbot, window)
