"""A long code block streamed into the real `MainWindow` grows in place (issue 9 item 4,
issue 12): once the block is long, each repaint lays out and colours only its new lines,
not the whole block again, and the finished card shows every line, coloured."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pygments.token import Keyword
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop_agent.ai import AssistantMessage, TextContent
from desktop_agent.gui import MainWindow
from desktop_agent.gui.chat import ChatItem, ChatPane
from desktop_agent.gui.chat._highlight import STYLES, style_format
from desktop_agent.gui.chat._parts import DocPart
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import close, idle, new_window, painted, settle, type_and_send

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

LINES = 240
CODE = "".join(f"def step_{i}(value):\n    return value + {i}\n" for i in range(LINES // 2))
REPLY = f"Here it is:\n\n```python\n{CODE}```\n\nThat is the module.\n"


def test_a_long_streaming_block_grows_in_place_and_ends_coloured(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    window: MainWindow = new_window(qtbot, tmp_path, provider, store, workspace)
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.wb.session is not None)
    settle(qtbot, window)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.composer.input)
    pieces = [REPLY[i : i + 150] for i in range(0, len(REPLY), 150)]  # ~40 deltas
    provider.script(Reply(text=pieces, delay_s=0.03))  # a repaint every ~2 deltas
    docs = window.chat.delegate.docs
    colorizer = docs.colorizer
    built, grown, blocks = docs.built, docs.grown, colorizer.stats["blocks"]
    seen: set[int] = set()  # versions of the streaming card painted while it streamed

    def on_event(event: object) -> None:
        chat = window.chat
        row = chat.model.row_at(chat.model.last_row()) if chat.item_count() else None
        if row is not None and row.streaming:
            shown = chat.delegate.painted.get(row.uid)
            if shown is not None:
                seen.add(shown[0])

    harness = window.wb.harness
    assert harness is not None
    unsubscribe = harness.subscribe(on_event)
    type_and_send(qtbot, window, "Write the steps module")
    idle(qtbot, window)
    unsubscribe()
    # The card is painted as the reply grows, not only at its end (its 200-character
    # accessibility summary stops changing: the repaint must not depend on it).
    assert len(seen) >= 8, sorted(seen)
    qtbot.waitUntil(lambda: not colorizer.busy(), timeout=10_000)
    window.chat.view.viewport().repaint()

    # Grown in place, not built again per repaint; lines coloured about once each.
    assert docs.grown - grown >= 3, (docs.grown - grown, docs.built - built)
    assert docs.built - built < 60, docs.built - built  # not ~4 per repaint
    assert colorizer.stats["blocks"] - blocks < 6 * LINES, colorizer.stats["blocks"] - blocks

    layout = painted(window, window.chat.model.last_row())
    assert layout is not None
    (code,) = [p.doc for p in layout.parts if isinstance(p, DocPart) and "def step_0" in
               p.doc.toPlainText()]  # fmt: skip
    assert code.toPlainText() == CODE.rstrip("\n")  # every line, once, in order
    keyword_fmt = style_format(STYLES[window.chat.delegate.theme().dark], Keyword)
    assert keyword_fmt is not None
    last = code.findBlockByNumber(code.blockCount() - 2)  # "def step_119(value):"
    assert last.text().startswith(f"def step_{LINES // 2 - 1}")
    colours = {r.format.foreground().color().name() for r in last.layout().formats()}
    assert keyword_fmt.foreground().color().name() in colours
    close(qtbot, window)


def _message(body: str) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=body)],
        api="anthropic-messages",
        provider="anthropic",
        model="m",
        stop_reason="stop",
        timestamp=1_760_000_000_000,
    )


def test_a_finished_card_is_never_changed_by_a_stream_that_extends_its_text(
    qtbot: QtBot,
) -> None:
    """A new reply that starts with an earlier reply's block (the same code again, then
    more) grows its own document, never the one the finished card shows."""
    pane = ChatPane()
    qtbot.addWidget(pane)
    pane.resize(900, 700)
    pane.show()
    qtbot.waitExposed(pane)
    body = f"```python\n{CODE}"
    pane.begin_stream(_message(body))
    pane.view.viewport().repaint()
    pane.end_stream(_message(body), "e1")
    pane.view.viewport().repaint()

    def code_text(row: int) -> str:
        layout = pane.delegate.layout_for(row)
        return next(p.doc.toPlainText() for p in layout.parts if isinstance(p, DocPart))

    finished = code_text(0)
    grown = pane.delegate.docs.grown
    more = body
    pane.begin_stream(_message(more))
    for i in range(5):
        more += f"extra_{i} = {i}\n"
        pane.update_stream(_message(more))
        qtbot.wait(60)  # a repaint each time
        pane.view.viewport().repaint()
    assert pane.delegate.docs.grown > grown  # the new stream did grow in place
    assert code_text(0) == finished  # the finished card's text is as it was
    assert code_text(1) == more.removeprefix("```python\n").rstrip("\n")
    pane.set_items([ChatItem("e1", _message(body))])


def test_partial_repaints_of_a_streaming_card_leave_what_a_full_paint_shows(
    qtbot: QtBot,
) -> None:
    """Each new snapshot repaints only the card's end; what is on screen then (the
    window's backing store) is what painting the whole card again gives."""
    pane = ChatPane()
    qtbot.addWidget(pane)
    pane.resize(700, 500)
    pane.show()
    qtbot.waitExposed(pane)
    words = ["the", "session", "branch", "append", "entry", "leaf", "sync", "file", "test"]
    body = "Streaming:\n\n"
    pane.begin_stream(_message(body))
    for i in range(60):
        body += words[i % len(words)] + (" " if i % 7 else ".\n\n")
        if i == 30:
            body += "```python\ndef f(x):\n    return x\n"
        pane.update_stream(_message(body))
        qtbot.wait(45)  # past the repaint throttle: one snapshot painted each time
    assert pane.stream_repaints >= 20, pane.stream_repaints

    def on_screen() -> QImage:
        QApplication.processEvents()
        handle = pane.window().windowHandle()
        return handle.screen().grabWindow(pane.window().winId()).toImage()

    partial = on_screen()
    pane.view.viewport().repaint()  # the whole viewport, from scratch
    full = on_screen()
    assert partial == full


def test_a_closed_block_of_the_streaming_card_never_grows(qtbot: QtBot) -> None:
    """The reply repeats a block and goes on: only the block still open grows, never the
    closed one above it with the same beginning."""
    pane = ChatPane()
    qtbot.addWidget(pane)
    pane.resize(900, 700)
    pane.show()
    qtbot.waitExposed(pane)
    first = f"```python\n{CODE}"
    pane.begin_stream(_message(first))
    qtbot.wait(60)
    pane.view.viewport().repaint()
    body = f"{first}```\n\nAgain, longer:\n\n```python\n{CODE}more = 1\n"
    pane.update_stream(_message(body))
    qtbot.wait(60)
    pane.view.viewport().repaint()
    layout = pane.delegate.layout_for(0)
    codes = [p.doc.toPlainText() for p in layout.parts if isinstance(p, DocPart)]
    assert codes[0] == CODE.rstrip("\n")
    assert codes[-1] == CODE + "more = 1"
