"""Code in replies through the real `MainWindow`: a streamed reply with a fenced Python
block is painted with coloured keyword spans (issue 9 item 4)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pygments.token import Keyword
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop_agent.gui import MainWindow
from desktop_agent.gui.chat._highlight import STYLES, style_format
from desktop_agent.gui.chat._parts import DocPart
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import (
    SCREENSHOTS,
    ask,
    close,
    new_window,
    painted,
    settle,
)

CODE = "def area(radius):\n    import math\n    return math.pi * radius ** 2\n"
REPLY = f"Here is the function:\n\n```python\n{CODE}```\n\n- and it is *short*\n"


def near(a: QColor, b: QColor, tolerance: int = 40) -> bool:
    return (
        abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) <= tolerance
    )


def count_pixels(image: QImage, colour: QColor) -> int:
    n = 0
    for y in range(image.height()):
        for x in range(image.width()):
            if near(image.pixelColor(x, y), colour):
                n += 1
    return n


def test_reply_with_python_block_is_painted_with_coloured_keywords(
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
    ask(
        qtbot,
        window,
        provider,
        "Write an area function",
        Reply(text=[REPLY[i : i + 9] for i in range(0, len(REPLY), 9)]),
    )
    colorizer = window.chat.delegate.docs.colorizer
    qtbot.waitUntil(lambda: not colorizer.busy(), timeout=10_000)
    view = window.chat.view
    view.viewport().repaint()
    last = window.chat.model.last_row()
    layout = painted(window, last)
    assert layout is not None, (last, window.chat.item_count(), window.wb.session)
    doc = next(
        p.doc for p in layout.parts if isinstance(p, DocPart) and "def area" in p.doc.toPlainText()
    )
    dark = window.chat.delegate.theme().dark
    keyword_fmt = style_format(STYLES[dark], Keyword)
    assert keyword_fmt is not None
    keyword = keyword_fmt.foreground().color()
    # the document carries the keyword colour on "def", "import" and "return"
    coloured = set()
    block = doc.begin()
    while block.isValid():
        for r in block.layout().formats():
            if r.format.foreground().color() == keyword:
                coloured.add(block.text()[r.start : r.start + r.length])
        block = block.next()
    assert {"def", "import", "return"} <= coloured, coloured
    # and the window paints it: the chat viewport has keyword-coloured pixels, and the
    # prose does not (the keyword colour appears only inside the code block)
    image = view.viewport().grab().toImage()
    assert count_pixels(image, keyword) > 20
    window.grab().save(str(SCREENSHOTS / f"flow_code_colours_{store}.png"))
    close(qtbot, window)
