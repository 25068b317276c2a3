"""The chat pane: cards for every message kind, streaming, tools, clicks, and big sessions."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QEvent, QIODevice, QPoint, Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QHelpEvent, QImage, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QPushButton, QToolTip
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    Cost,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from desktop_agent.gui.chat import ChatItem, ChatPane
from desktop_agent.gui.chat._model import tooltip
from desktop_agent.gui.chat._parts import ButtonPart, CardLayout, DocPart, Hit, TextPart
from desktop_agent.gui.chat._tool_text import pretty_arguments

# The offscreen platform's harmless notice (PLATFORM.md §3, pitfall 10); every other Qt
# warning still fails the test.
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

SHOTS = Path(__file__).parent / "screenshots"
TS = 1_760_000_000_000


# ----------------------------------------------------------------------------- messages


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=TS)


def assistant(
    *blocks: Any, stop: str = "stop", error: str | None = None, model: str = "claude-sonnet-4-5"
) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),
        api="anthropic-messages",
        provider="anthropic",
        model=model,
        usage=Usage(input=1200, output=340, total_tokens=1540, cost=Cost(total=0.0123)),
        stop_reason=stop,
        error_message=error,
        timestamp=TS,
    )


def text(t: str) -> TextContent:
    return TextContent(text=t)


def result(
    call_id: str,
    name: str,
    body: str,
    details: dict[str, Any] | None = None,
    *,
    is_error: bool = False,
) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name=name,
        content=[text(body)],
        details=details,
        is_error=is_error,
        timestamp=TS,
    )


def png_block(w: int = 320, h: int = 200) -> ImageContent:
    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(QColor("#3b82f6"))
    for x in range(0, w, 20):
        for y in range(0, h, 20):
            if (x + y) // 20 % 2:
                img.setPixelColor(x, y, QColor("white"))
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")  # type: ignore[call-overload]  # stubs say bytes, runtime wants str
    return ImageContent(data=base64.b64encode(bytes(data.data())).decode(), mime_type="image/png")


DIFF = """--- a/app.py
+++ b/app.py
@@ -1,4 +1,4 @@
 def greet(name):
-    print("hello " + name)
+    print(f"Hello, {name}!")
     return None
"""

MARKDOWN = """Here is a **fix** for `greet()` — see the [docs](https://example.com):

```python
def greet(name: str) -> None:
    # say hello
    print(f"Hello, {name}!")  # 42
```

1. Run the tests
2. Commit
"""


def all_kinds() -> list[ChatItem]:
    """One branch with every kind of message the pane shows."""
    call_edit = ToolCall(id="t1", name="edit", arguments={"path": "app.py", "old_text": "x"})
    call_bash = ToolCall(id="t2", name="bash", arguments={"command": "pytest -q"})
    return [
        ChatItem("c1", CompactionSummaryMessage(summary="Earlier: set up the repo.\nMore.",
                                                tokens_before=48210, timestamp=TS)),
        ChatItem("u1", user("Please fix the greeting in app.py"), sibling_index=1,
                 sibling_count=3),
        ChatItem("a1", assistant(ThinkingContent(thinking="The user wants a nicer greeting."),
                                 text(MARKDOWN), call_edit, call_bash)),
        ChatItem("r1", result("t1", "edit", "Edited app.py", {"diff": DIFF})),
        ChatItem("r2", result("t2", "bash", "F.\nFAILED test_app.py::test_greet\n1 failed",
                              {"exitCode": 1}, is_error=True)),
        ChatItem("u2", UserMessage(content=[text("What does this screenshot show?"),
                                            png_block()], timestamp=TS), label="checkpoint"),
        ChatItem("b1", BranchSummaryMessage(summary="Tried a regex approach; abandoned.",
                                            from_id="x1", timestamp=TS)),
        ChatItem("x2", CustomMessage(custom_type="note", content="A custom note.",
                                     timestamp=TS)),
        ChatItem("a2", assistant(text("Working on it"), stop="error",
                                 error="429 rate limited: try again in 20 s")),
    ]  # fmt: skip


# ----------------------------------------------------------------------------- helpers


@pytest.fixture
def pane(qtbot: QtBot) -> Iterator[ChatPane]:
    w = ChatPane()
    qtbot.addWidget(w)
    w.resize(760, 900)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def shot(widget: ChatPane, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    widget.grab().save(str(SHOTS / f"chat_{name}.png"))


def texts(layout: CardLayout) -> str:
    """All text a card paints."""
    out: list[str] = []
    for part in layout.parts:
        if isinstance(part, TextPart | ButtonPart):
            out.append(part.text)
        elif isinstance(part, DocPart):
            out.append(part.doc.toPlainText())
    return "\n".join(out)


def settle(qtbot: QtBot, pane: ChatPane) -> None:
    """Let pending relayouts and paints run."""
    qtbot.wait(80)
    pane.view.relayout_now()
    pane.view.viewport().repaint()


def find_hit(pane: ChatPane, row: int, action: str, arg: Any = None) -> Hit:
    layout = pane.delegate.layout_for(row)
    for hit in layout.hits:
        if hit.action == action and (arg is None or hit.arg == arg):
            return hit
    raise AssertionError(f"row {row} has no {action}/{arg} hit: {layout.hits}")


def click(qtbot: QtBot, pane: ChatPane, row: int, action: str, arg: Any = None) -> None:
    """Click the centre of a card's button with the mouse, like a person would."""
    view = pane.view
    index = pane.model.index(row, 0)
    view.stick_to_bottom = False
    view.scrollTo(index, view.ScrollHint.PositionAtTop)
    settle(qtbot, pane)
    hit = find_hit(pane, row, action, arg)
    pos = view.visualRect(index).topLeft() + hit.rect.center()
    assert view.viewport().rect().contains(pos), (pos, view.viewport().rect())
    assert view.indexAt(pos).row() == row
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def many_items(n: int) -> list[ChatItem]:
    items: list[ChatItem] = []
    for i in range(n // 2):
        items.append(ChatItem(f"u{i}", user(f"Question {i}: how do I do thing number {i}?")))
        call = ToolCall(id=f"c{i}", name="bash", arguments={"command": f"ls dir{i}"})
        blocks: list[Any] = [text(f"Answer {i}. " + "Some explanation words here. " * 8)]
        if i % 3 == 0:
            blocks.append(text("```python\nprint('hi')\nx = 1\n```"))
        if i % 4 == 0:
            blocks.append(call)
        item = ChatItem(f"a{i}", assistant(*blocks))
        if i % 4 == 0:
            item.tool_results["c" + str(i)] = result(f"c{i}", "bash", "a\nb\nc")
        items.append(item)
    return items


# ----------------------------------------------------------------------------- tests


def test_every_message_kind_is_shown(qtbot: QtBot, pane: ChatPane) -> None:
    pane.set_items(all_kinds())
    settle(qtbot, pane)
    # the two tool results joined the assistant's tool cards
    assert pane.item_count() == 7
    assistant_row = pane.model.row_at(2)
    assert set(assistant_row.item.tool_results) == {"t1", "t2"}
    cards = [texts(pane.delegate.layout_for(i)) for i in range(pane.item_count())]
    assert "Compaction summary" in cards[0] and "48,210 tokens before" in cards[0]
    assert "Please fix the greeting" in cards[1] and "2/3" in cards[1]
    assert "Thinking" in cards[2] and "nicer greeting" not in cards[2]  # collapsed
    assert 'print(f"Hello, {name}!")' in cards[2]  # code block
    assert "+    print(f" in cards[2]  # the edit's diff
    assert "exit 1" in cards[2] and "FAILED test_app.py" in cards[2]
    assert "[checkpoint]" in cards[3]
    assert any(type(p).__name__ == "ImagePart" for p in pane.delegate.layout_for(3).parts)
    assert "Branch summary" in cards[4]
    assert "note" in cards[5]
    assert "429 rate limited" in cards[6] and "Retry" in cards[6]
    tip = tooltip(pane.model.row_at(2).item)
    assert "anthropic/claude-sonnet-4-5" in tip and "$0.0123" in tip
    # the bottom is shown
    bar = pane.view.verticalScrollBar()
    assert bar.value() == bar.maximum()
    shot(pane, "all_kinds_bottom")
    pane.view.scrollToTop()
    settle(qtbot, pane)
    shot(pane, "all_kinds_top")


def test_dark_palette_screenshot(qtbot: QtBot, pane: ChatPane) -> None:
    dark = QPalette()
    for role, color in (
        (QPalette.ColorRole.Window, "#1e1f22"),
        (QPalette.ColorRole.Base, "#2b2d30"),
        (QPalette.ColorRole.AlternateBase, "#313338"),
        (QPalette.ColorRole.Text, "#dfe1e5"),
        (QPalette.ColorRole.WindowText, "#dfe1e5"),
        (QPalette.ColorRole.Button, "#3c3f41"),
        (QPalette.ColorRole.ButtonText, "#dfe1e5"),
        (QPalette.ColorRole.Highlight, "#2f65ca"),
        (QPalette.ColorRole.Link, "#589df6"),
    ):
        dark.setColor(role, QColor(color))
    pane.setPalette(dark)
    pane.set_items(all_kinds())
    pane.view.scrollToTop()
    settle(qtbot, pane)
    assert pane.delegate.theme().dark
    shot(pane, "dark_top")
    pane.view.scrollToBottom()
    settle(qtbot, pane)
    shot(pane, "dark_bottom")


def test_streaming_updates_relayout_only_the_last_row(qtbot: QtBot, pane: ChatPane) -> None:
    pane.set_items(many_items(200))
    settle(qtbot, pane)
    before = {r.uid: r.measured for r in pane.model.rows()}
    built = pane.delegate.layouts_built
    pane.append_item(ChatItem("u-new", user("Stream me a story")))
    partial = assistant(text(""))
    pane.begin_stream(partial)
    words = ("Once upon a time there was a very long answer that kept growing. " * 30).split()
    costs: list[float] = []
    so_far = ""
    for n, word in enumerate(words):
        so_far += word + " "
        snapshot = assistant(text(so_far))
        t0 = time.perf_counter()
        pane.update_stream(snapshot)
        costs.append(time.perf_counter() - t0)
        if n % 40 == 0:
            qtbot.wait(50)  # let the coalescing timer fire now and then
    settle(qtbot, pane)
    streamed_row = pane.item_count() - 1
    assert "kept growing" in texts(pane.delegate.layout_for(streamed_row))
    assert pane.model.row_at(streamed_row).streaming
    # rows before the new ones were not laid out again
    after = {r.uid: r.measured for r in pane.model.rows()}
    relaid = [uid for uid, m in before.items() if after[uid] != m]
    assert relaid == [], relaid
    layouts = pane.delegate.layouts_built - built
    per_call_us = sum(costs) / len(costs) * 1e6
    print(f"\nupdate_stream: {len(words)} calls, mean {per_call_us:.1f} us/call, "
          f"max {max(costs) * 1e6:.0f} us; {layouts} card layouts built")  # fmt: skip
    assert layouts < len(words) / 4  # repaints are coalesced
    # the cost of one coalesced repaint of the streaming row
    t0 = time.perf_counter()
    pane.update_stream(assistant(text(so_far + "The end.")))
    pane._flush()
    pane.view.viewport().repaint()
    flush_ms = (time.perf_counter() - t0) * 1000
    print(f"one flush + repaint of a {len(so_far):,}-character streaming row: {flush_ms:.1f} ms")
    shot(pane, "streaming")
    final = assistant(text(so_far + "The end."))
    pane.end_stream(final, "a-final")
    settle(qtbot, pane)
    row = pane.model.row_at(streamed_row)
    assert not row.streaming and row.item.entry_id == "a-final"
    bar = pane.view.verticalScrollBar()
    assert bar.value() == bar.maximum()  # followed the bottom while streaming


def test_tool_card_lifecycle(qtbot: QtBot, pane: ChatPane) -> None:
    pane.set_items([ChatItem("u1", user("Run the tests and fix app.py"))])
    call_bash = ToolCall(id="b1", name="bash", arguments={"command": "pytest -q"})
    call_edit = ToolCall(id="e1", name="edit", arguments={"path": "app.py"})
    pane.begin_stream(assistant(text("Let me check."), stop="toolUse"))
    pane.end_stream(assistant(text("Let me check."), call_bash, call_edit, stop="toolUse"), "a1")
    assert pane.item_count() == 2
    pane.tool_started("b1", "bash", {"command": "pytest -q"})
    settle(qtbot, pane)
    card = texts(pane.delegate.layout_for(1))
    assert "running…" in card and "$ pytest -q" in card and "not run" in card
    for i in range(30):
        pane.tool_output("b1", "\n".join(f"test line {k}" for k in range(i + 1)))
    settle(qtbot, pane)
    card = texts(pane.delegate.layout_for(1))
    assert "test line 29" in card and "earlier lines" in card  # the tail of live output
    shot(pane, "tool_running")
    failed = result("b1", "bash", "1 failed", {"exitCode": 1}, is_error=True)
    pane.tool_finished("b1", failed)
    pane.tool_started("e1", "edit", {"path": "app.py"})
    pane.tool_finished("e1", result("e1", "edit", "Edited app.py", {"diff": DIFF}))
    settle(qtbot, pane)
    layout = pane.delegate.layout_for(1)
    card = texts(layout)
    assert "exit 1" in card and "1 failed" in card and "running…" not in card
    assert '-    print("hello " + name)' in card
    red = pane.delegate.theme().red
    assert any(isinstance(p, TextPart) and p.text == "exit 1" and p.color == red
               for p in layout.parts)  # fmt: skip
    # the saved tool results arrive as messages: merged, no new rows
    pane.append_item(ChatItem("r1", failed))
    pane.append_item(ChatItem("r2", result("e1", "edit", "Edited app.py", {"diff": DIFF})))
    assert pane.item_count() == 2
    # a result whose call is unknown gets its own card
    pane.append_item(ChatItem("r3", result("zz", "read", "orphan")))
    assert pane.item_count() == 3
    # the card expands on click and shows the full arguments
    click(qtbot, pane, 1, "toggle", "tool:b1")
    settle(qtbot, pane)
    assert '"command": "pytest -q"' in texts(pane.delegate.layout_for(1))
    shot(pane, "tools_done")


def test_sibling_arrows_emit(qtbot: QtBot, pane: ChatPane) -> None:
    items = [
        ChatItem("u1", user("first version?"), sibling_index=1, sibling_count=3),
        ChatItem("a1", assistant(text("answer")), sibling_index=0, sibling_count=2),
    ]
    pane.set_items(items)
    settle(qtbot, pane)
    with qtbot.waitSignal(pane.sibling_requested, timeout=2000) as sig:
        click(qtbot, pane, 0, "sibling", -1)
    assert sig.args == ["u1", -1]
    with qtbot.waitSignal(pane.sibling_requested, timeout=2000) as sig:
        click(qtbot, pane, 0, "sibling", 1)
    assert sig.args == ["u1", 1]
    with qtbot.waitSignal(pane.sibling_requested, timeout=2000) as sig:
        click(qtbot, pane, 1, "sibling", 1)
    assert sig.args == ["a1", 1]
    # at the first sibling the "previous" arrow is disabled: no hit
    assert all(h.arg != -1 for h in pane.delegate.layout_for(1).hits if h.action == "sibling")


def test_edit_and_resend(qtbot: QtBot, pane: ChatPane) -> None:
    pane.set_items([ChatItem("u1", user("old prompt")), ChatItem("a1", assistant(text("ok")))])
    settle(qtbot, pane)
    assert pane.visible_widget_count() == 0
    click(qtbot, pane, 0, "edit")
    settle(qtbot, pane)
    assert pane.visible_widget_count() == 1
    editor = pane.view.viewport().findChild(QPlainTextEdit, "chatEditText")
    assert editor is not None and editor.toPlainText() == "old prompt"
    shot(pane, "editing")
    editor.setPlainText("new prompt")
    send = pane.view.viewport().findChild(QPushButton, "chatEditSend")
    assert send is not None
    with qtbot.waitSignal(pane.edit_resend_requested, timeout=2000) as sig:
        QTest.mouseClick(send, Qt.MouseButton.LeftButton)
    assert sig.args == ["u1", "new prompt"]
    qtbot.waitUntil(lambda: pane.visible_widget_count() == 0, timeout=2000)
    assert not pane.model.row_at(0).editing
    # Escape cancels without a signal
    click(qtbot, pane, 0, "edit")
    editor = pane.view.viewport().findChild(QPlainTextEdit, "chatEditText")
    assert editor is not None
    with qtbot.assertNotEmitted(pane.edit_resend_requested):
        QTest.keyClick(editor, Qt.Key.Key_Escape)
        qtbot.waitUntil(lambda: pane.visible_widget_count() == 0, timeout=2000)
    # Ctrl+Enter sends
    click(qtbot, pane, 0, "edit")
    editor = pane.view.viewport().findChild(QPlainTextEdit, "chatEditText")
    assert editor is not None
    editor.setPlainText("typed")
    with qtbot.waitSignal(pane.edit_resend_requested, timeout=2000) as sig:
        QTest.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sig.args == ["u1", "typed"]
    qtbot.waitUntil(lambda: pane.visible_widget_count() == 0, timeout=2000)


def test_retry_and_copy(qtbot: QtBot, pane: ChatPane) -> None:
    items = [
        ChatItem("u1", user("hi")),
        ChatItem("a1", assistant(text("partial"), stop="aborted")),
        ChatItem("u2", user("again")),
        ChatItem("a2", assistant(text(MARKDOWN), stop="error", error="overloaded_error")),
    ]
    pane.set_items(items)
    settle(qtbot, pane)
    # only the last error message offers Retry
    assert all(h.action != "retry" for h in pane.delegate.layout_for(1).hits)
    assert "Stopped" in texts(pane.delegate.layout_for(1))
    with qtbot.waitSignal(pane.retry_requested, timeout=2000):
        click(qtbot, pane, 3, "retry")
    with qtbot.waitSignal(pane.copy_requested, timeout=2000) as sig:
        click(qtbot, pane, 3, "copy", None)
    assert sig.args == [MARKDOWN]
    code = 'def greet(name: str) -> None:\n    # say hello\n    print(f"Hello, {name}!")  # 42'
    with qtbot.waitSignal(pane.copy_requested, timeout=2000) as sig:
        click(qtbot, pane, 3, "copy", code)
    assert sig.args == [code]
    assert QGuiApplication.clipboard().text() == code


def test_thinking_and_summary_toggle(qtbot: QtBot, pane: ChatPane) -> None:
    thinking = ThinkingContent(thinking="Let me consider the options carefully. " * 10)
    pane.set_items(
        [
            ChatItem("s1", BranchSummaryMessage(summary="Line one\n\nA **longer** part.",
                                                from_id="z", timestamp=TS)),
            ChatItem("a1", assistant(thinking, text("Done."))),
        ]
    )  # fmt: skip
    settle(qtbot, pane)
    collapsed = pane.delegate.layout_for(1)
    assert "consider the options" not in texts(collapsed)
    click(qtbot, pane, 1, "toggle", "think:0")
    settle(qtbot, pane)
    opened = pane.delegate.layout_for(1)
    assert "consider the options" in texts(opened)
    assert opened.height > collapsed.height + 40
    assert pane.view.visualRect(pane.model.index(1, 0)).height() == opened.height
    shot(pane, "thinking_open")
    click(qtbot, pane, 1, "toggle", "think:0")
    settle(qtbot, pane)
    assert "consider the options" not in texts(pane.delegate.layout_for(1))
    # summaries: first line when collapsed, all when open
    assert "longer" not in texts(pane.delegate.layout_for(0))
    click(qtbot, pane, 0, "toggle", "summary")
    settle(qtbot, pane)
    assert "longer" in texts(pane.delegate.layout_for(0))


def test_five_thousand_messages_open_fast(qtbot: QtBot, pane: ChatPane) -> None:
    """Work done, not wall time (timings are printed; targets live in `benchmarks`):
    5,000 rows open with only the visible cards laid out, and scrolling the whole way
    keeps no widget per row."""
    items = many_items(5000)
    t0 = time.perf_counter()
    pane.set_items(items)
    set_ms = (time.perf_counter() - t0) * 1000
    t1 = time.perf_counter()
    pane.view.viewport().repaint()
    paint_ms = (time.perf_counter() - t1) * 1000
    print(f"\nset_items(5,000): {set_ms:.0f} ms, first paint {paint_ms:.0f} ms, "
          f"{pane.delegate.layouts_built} card layouts, "
          f"view relayout passes {pane.view.relayouts}")  # fmt: skip
    assert pane.item_count() == 5000
    assert pane.visible_widget_count() == 0
    assert pane.delegate.layouts_built < 60
    bar = pane.view.verticalScrollBar()
    assert bar.value() == bar.maximum()
    # scroll the whole way up in jumps (like dragging the bar); time each step's repaint
    # plus the relayout it causes. A Python gen-2 GC pass can land in any one step.
    jumps: list[float] = []
    value = bar.value()
    while value > 0 and len(jumps) < 400:
        value = max(0, value - pane.view.viewport().height() * 25)
        t = time.perf_counter()
        bar.setValue(value)
        pane.view.viewport().repaint()
        qtbot.wait(1)  # run the coalesced relayout of rows measured by this paint
        jumps.append(time.perf_counter() - t)
        value = bar.value()
    jumps.sort()
    print(f"scrolling up in {len(jumps)} jumps of 25 screens: median "
          f"{jumps[len(jumps) // 2] * 1000:.0f} ms, worst {jumps[-1] * 1000:.0f} ms; "
          f"{pane.delegate.layouts_built} card layouts so far")  # fmt: skip
    # wheel-like scrolling near the top
    small: list[float] = []
    for _ in range(60):
        t = time.perf_counter()
        bar.setValue(bar.value() + 40)
        pane.view.viewport().repaint()
        qtbot.wait(1)
        small.append(time.perf_counter() - t)
    small.sort()
    print(f"60 wheel-sized scroll steps: median {small[30] * 1000:.1f} ms, "
          f"worst {small[-1] * 1000:.1f} ms")  # fmt: skip
    assert pane.visible_widget_count() == 0
    shot(pane, "5000_top")


def test_model_under_qtmodeltester(qtbot: QtBot, qtmodeltester: ModelTester) -> None:
    w = ChatPane()
    qtbot.addWidget(w)
    model = w.model
    model.setParent(None)  # outlive the pane: the tester disconnects after qtbot's cleanup
    w.set_items(all_kinds())
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    # changes while the tester watches
    w.append_item(ChatItem("u9", user("more")))
    w.begin_stream(assistant(text("")))
    w.update_stream(assistant(text("abc")))
    w.end_stream(assistant(text("abcd"), ToolCall(id="q", name="ls", arguments={})), "a9")
    w.tool_started("q", "ls", {})
    w.tool_finished("q", result("q", "ls", "a\nb"))
    w.append_item(ChatItem("r9", result("q", "ls", "a\nb")))
    w.set_items(many_items(20))
    w.set_items([])
    assert w.item_count() == 0


def test_damaged_rows_render_as_placeholders(qtbot: QtBot, pane: ChatPane) -> None:
    from desktop_agent.ai._messages import UnknownMessage

    odd: AgentMessage = UnknownMessage(role="bashExecution")
    pane.set_items([ChatItem("k1", odd), ChatItem("u1", user("still fine"))])
    settle(qtbot, pane)
    assert "bashExecution" in texts(pane.delegate.layout_for(0))
    assert "still fine" in texts(pane.delegate.layout_for(1))
    assert QPoint(0, 0) == QPoint()  # nothing raised while painting


def test_streaming_into_2000_messages_does_not_stall(qtbot: QtBot, pane: ChatPane) -> None:
    """A 10 ms timer probe keeps ticking while a reply streams into a long session."""
    pane.set_items(many_items(2000))
    settle(qtbot, pane)
    pane.append_item(ChatItem("u-x", user("Explain, with code.")))
    pane.begin_stream(assistant(text("")))
    chunks = [
        "Here is how it works. " * 3 + "\n\n",
        "```python\n",
        *[f"value_{k} = compute({k})  # step {k}\n" for k in range(40)],
        "```\n\nAnd then **more** prose, " + "with several words in it " * 4 + "\n\n",
    ] * 6
    sent: list[str] = []
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    def feed() -> None:
        if len(sent) >= len(chunks):
            feeder.stop()
            return
        sent.append(chunks[len(sent)])
        pane.update_stream(assistant(text("".join(sent))))

    probe = QTimer()
    probe.setInterval(10)
    probe.timeout.connect(tick)
    feeder = QTimer()
    feeder.setInterval(5)
    feeder.timeout.connect(feed)
    probe.start()
    feeder.start()
    qtbot.waitUntil(lambda: not feeder.isActive(), timeout=30_000)
    qtbot.wait(100)
    probe.stop()
    worst = max(gaps[1:]) * 1000
    relayouts = pane.view.relayouts
    print(f"\nstreaming {len(chunks)} deltas ({len(''.join(sent)):,} chars) into 2,000 "
          f"messages: {len(gaps)} probe ticks, worst gap {worst:.0f} ms, "
          f"mean {sum(gaps) / len(gaps) * 1000:.1f} ms, view relayouts {relayouts}")  # fmt: skip
    # The 50 ms target is measured by `python -m benchmarks --only gui`, not asserted here.
    assert "value_39 = compute(39)" in texts(pane.delegate.layout_for(pane.item_count() - 1))
    bar = pane.view.verticalScrollBar()
    assert bar.value() == bar.maximum()


def test_streaming_does_not_move_a_view_scrolled_up(qtbot: QtBot, pane: ChatPane) -> None:
    pane.set_items(many_items(300))
    settle(qtbot, pane)
    bar = pane.view.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    settle(qtbot, pane)
    top_row = pane.view.indexAt(QPoint(4, 1)).row()
    top_y = pane.view.visualRect(pane.model.index(top_row, 0)).top()
    pane.begin_stream(assistant(text("")))
    for k in range(1, 30):
        pane.update_stream(assistant(text("growing line\n\n" * k)))
        qtbot.wait(5)
    settle(qtbot, pane)
    assert not pane.view.stick_to_bottom
    assert pane.view.indexAt(QPoint(4, 1)).row() == top_row
    assert pane.view.visualRect(pane.model.index(top_row, 0)).top() == top_y
    # back at the bottom, it follows again
    pane.view.scrollToBottom()
    settle(qtbot, pane)
    pane.update_stream(assistant(text("growing line\n\n" * 60)))
    settle(qtbot, pane)
    assert bar.value() == bar.maximum()


def test_branch_switch_while_editing_closes_the_editor(qtbot: QtBot, pane: ChatPane) -> None:
    pane.set_items([ChatItem("u1", user("a")), ChatItem("a1", assistant(text("b")))])
    settle(qtbot, pane)
    pane.start_edit(0)
    assert pane.visible_widget_count() == 1
    pane.set_items([ChatItem("u2", user("other branch"))])
    qtbot.waitUntil(lambda: pane.visible_widget_count() == 0, timeout=2000)
    settle(qtbot, pane)
    assert not pane.model.row_at(0).editing
    assert "other branch" in texts(pane.delegate.layout_for(0))


@pytest.mark.qt_log_ignore(  # offscreen notices; the tooltip window calls raise()
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)
def test_hover_shows_model_and_cost(qtbot: QtBot, pane: ChatPane) -> None:
    pane.set_items([ChatItem("a1", assistant(text("hello")))])
    settle(qtbot, pane)
    view = pane.view
    rect = view.visualRect(pane.model.index(0, 0))
    pos = rect.topLeft() + QPoint(rect.width() // 2, rect.height() - 14)
    event = QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)
    qtbot.waitUntil(lambda: "Cost: $0.0123" in QToolTip.text(), timeout=2000)
    assert "anthropic/claude-sonnet-4-5" in QToolTip.text()
    QToolTip.hideText()


def test_expanded_tool_arguments_read_as_indented_json_at_c_speed() -> None:
    """The expanded card shows ``json.dumps(arguments, indent=2)``, made without json's
    pure-Python encoder (which ``indent`` selects): the same text for arguments of a
    usual size; a big nested value on one line and a long string cut to what is shown."""
    import json

    usual: list[dict[str, Any]] = [
        {},
        {"path": "a.py", "content": 'print("é")\n\ttab\\', "n": 3, "ok": True, "no": None},
        {"edits": [{"old": "a", "new": "b"}, {"old": "", "new": []}], "opts": {"x": {}}},
    ]
    for arguments in usual:
        assert pretty_arguments(arguments, 60_000) == json.dumps(
            arguments, indent=2, ensure_ascii=False
        )
    rows = [{"i": i, "text": "row"} for i in range(5_000)]
    shown = pretty_arguments({"rows": rows, "content": "x" * 100_000}, 60_000)
    assert shown.count("\n") == 3  # {, "rows": [...] on one line, "content", }
    assert json.loads(shown)["rows"] == rows
    assert json.loads(shown)["content"] == "x" * 60_000


def test_a_header_text_measured_a_pixel_short_stays_on_one_line(qapp: QApplication) -> None:
    """Seen in a real X window: the reply's model name "mock-gpt" was painted as "mock-"
    over a cut-off "gpt" (the rect was a pixel short of what the painter's font needed,
    and the text option wrapped at the hyphen). A card's text part is one line."""
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QFont, QFontMetrics, QPainter

    from desktop_agent.gui.chat._parts import TextPart, Theme

    font = QFont(qapp.font())
    font.setPointSize(9)
    text = "mock-gpt-with-a-long-name"
    fm = QFontMetrics(font)
    line = fm.height()
    short = QRect(0, 0, fm.horizontalAdvance(text) - 4, line * 3)  # room for three lines
    image = QImage(short.width() + 10, short.height(), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    part = TextPart(short, text, QColor("black"), font, Qt.AlignmentFlag.AlignLeft)
    part.paint(painter, Theme.from_palette(qapp.palette(), font))
    painter.end()
    inked_rows = [
        y
        for y in range(image.height())
        if any(image.pixelColor(x, y).lightness() < 128 for x in range(image.width()))
    ]
    assert inked_rows and max(inked_rows) < line, (line, max(inked_rows))
