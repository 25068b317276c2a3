"""Code colours: Pygments tokens per language, the worker thread, slices, themes, streams."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from pygments.token import Comment, Keyword, Name, Number, String, _TokenType, is_token_subtype
from PySide6.QtGui import QColor, QPalette, QTextDocument
from pytestqt.qtbot import QtBot

from desktop_agent.gui.chat import ChatItem, ChatPane
from desktop_agent.gui.chat import _highlight as hl
from desktop_agent.gui.chat._highlight import (
    CodeColorizer,
    CodeColors,
    DiffHighlighter,
    lexer_for,
    style_format,
    tokenize,
)
from desktop_agent.gui.chat._parts import DocPart
from tests.gui.test_chat import assistant, text

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def kind_of(lang: str, source: str, needle: str) -> _TokenType | None:
    """The token type Pygments gives the first occurrence of ``needle``."""
    lexer = lexer_for(lang)
    assert lexer is not None, lang
    tokens = tokenize(lexer, source)
    pos = source.index(needle)
    for s, e, k in zip(tokens.starts, tokens.ends, tokens.kinds, strict=True):
        if s <= pos < e:
            return tokens.types[k]
    return None


def is_a(ttype: _TokenType | None, parent: _TokenType) -> bool:
    return ttype is not None and is_token_subtype(ttype, parent)


@pytest.mark.parametrize(
    ("lang", "source", "needle", "parent"),
    [
        ("python", "def f(x):\n    return 'a'  # c\n", "def", Keyword),
        ("py", "def f(x):\n    return 'a'  # c\n", "'a'", String),
        ("python", "def f(x):\n    return 'a'  # c\n", "# c", Comment),
        ("js", "const a = 42; // note\nfunction g() {}\n", "const", Keyword),
        ("javascript", "const a = 42; // note\n", "42", Number),
        ("js", "const a = 42; // note\n", "// note", Comment),
        ("rust", 'fn main() {\n    let s = "hi";\n}\n', "fn", Keyword),
        ("rust", 'fn main() {\n    let s = "hi";\n}\n', '"hi"', String),
        ("bash", 'if [ -f x ]; then\n  echo "yes"  # check\nfi\n', "if", Keyword),
        ("sh", 'echo "yes"  # check\n', "# check", Comment),
        ("shell", 'echo "yes"\n', "echo", Name),
        ("json", '{"key": [1, true, "v"]}', '"key"', Name),
        ("json", '{"key": [1, true, "v"]}', '"v"', String),
        ("json", '{"key": [1, true, "v"]}', "true", Keyword),
        ("src/main.rs", "fn x() {}", "fn", Keyword),  # a file name as the info string
    ],
)
def test_tokens_per_language(lang: str, source: str, needle: str, parent: _TokenType) -> None:
    ttype = kind_of(lang, source, needle)
    assert is_a(ttype, parent), (lang, needle, ttype)


def test_unknown_and_plain_languages_have_no_lexer() -> None:
    assert lexer_for("no-such-language-xyz") is None
    assert lexer_for("text") is None
    assert lexer_for("") is None


def test_python_keywords_are_not_rust_keywords() -> None:
    # a real per-language tokenizer: "fn" is nothing in Python, "def" nothing in Rust
    assert not is_a(kind_of("python", "fn = 1\n", "fn"), Keyword)
    assert not is_a(kind_of("rust", "let def = 1;\n", "def"), Keyword)


def colour_at(doc: QTextDocument, needle: str) -> QColor | None:
    """The foreground colour the document's formats give the start of ``needle``."""
    pos = doc.toPlainText().index(needle)
    block = doc.findBlock(pos)
    for r in block.layout().formats():
        if r.start <= pos - block.position() < r.start + r.length:
            return r.format.foreground().color()
    return None


def expected(dark: bool, ttype: _TokenType) -> QColor:
    fmt = style_format(hl.STYLES[dark], ttype)
    assert fmt is not None
    return fmt.foreground().color()


def test_diff_lines_are_coloured(qtbot: QtBot) -> None:
    doc = QTextDocument()
    keep = DiffHighlighter(doc, dark=False)
    doc.setPlainText("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same")
    doc.size()  # Qt highlights when it lays the document out
    formats = {doc.findBlockByNumber(i).text(): doc.findBlockByNumber(i).layout().formats()
               for i in range(doc.blockCount())}  # fmt: skip
    assert formats["+new"][0].format.background().color() == QColor("#e3f4e3")
    assert formats["-old"][0].format.foreground().color() == QColor("#b71c1c")
    assert formats["@@ -1 +1 @@"][0].format.foreground().color() == QColor("#1565c0")
    assert formats[" same"] == []
    del keep


@pytest.fixture
def colorizer(qtbot: QtBot) -> Iterator[CodeColorizer]:
    c = CodeColorizer(sync_chars=0)  # everything goes through the worker thread
    yield c
    qtbot.waitUntil(lambda: not c.busy(), timeout=10_000)


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts tokenized (in the worker or at once), in order."""
    texts: list[str] = []
    real = hl._job

    def job(lang: str, source: str) -> hl.Tokens | None:
        texts.append(source)
        return real(lang, source)

    monkeypatch.setattr(hl, "_job", job)
    return texts


def test_worker_result_is_applied_on_the_gui_thread(
    qtbot: QtBot, colorizer: CodeColorizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    real = hl._job

    def job(lang: str, source: str) -> hl.Tokens | None:
        threads.append(threading.current_thread().name)
        return real(lang, source)

    monkeypatch.setattr(hl, "_job", job)
    doc = QTextDocument()
    source = "def greet(name):\n    return 'hi ' + name\n"
    colors = colorizer.build(doc, source, "python", dark=False)
    assert isinstance(colors, CodeColors)
    assert colour_at(doc, "def") is None  # nothing yet: the worker has it
    with qtbot.waitSignal(colorizer.recolored, timeout=10_000):
        pass
    qtbot.waitUntil(lambda: not colorizer.busy())
    assert threads and all(name.startswith("code-colours") for name in threads)
    assert colour_at(doc, "def") == expected(False, Keyword)
    assert colour_at(doc, "'hi '") == expected(False, String)
    # the same text again: from the cache, coloured at once, no second job
    doc2 = QTextDocument()
    colorizer.build(doc2, source, "python", dark=True)
    assert colour_at(doc2, "def") == expected(True, Keyword)
    assert len(threads) == 1


def test_a_long_block_is_coloured_in_slices(qtbot: QtBot, colorizer: CodeColorizer) -> None:
    source = "\n".join(f"def f{i}(x):\n    return x + {i}" for i in range(600))
    doc = QTextDocument()
    colorizer.build(doc, source, "python", dark=False)
    doc.setTextWidth(500)
    doc.size()
    slices = 0

    def count() -> None:
        nonlocal slices
        slices += 1

    colorizer.recolored.connect(count)
    qtbot.waitUntil(lambda: not colorizer.busy(), timeout=20_000)
    assert slices >= 3  # never all 1,200 lines in one go (time-bounded slices)
    assert colorizer.stats["blocks"] == 1200
    assert colour_at(doc, "def f599") == expected(False, Keyword)
    assert colour_at(doc, "def f0") == expected(False, Keyword)


def test_streamed_block_keeps_its_colours_and_older_texts_are_superseded(
    qtbot: QtBot, colorizer: CodeColorizer, jobs: list[str]
) -> None:
    source = "import os\n"
    doc = QTextDocument()
    colorizer.build(doc, source, "python", dark=False)
    qtbot.waitUntil(lambda: not colorizer.busy(), timeout=10_000)
    docs = []
    for i in range(30):
        source += f"def f{i}():\n    return {i}\n"
        d = QTextDocument()
        colorizer.build(d, source, "python", dark=False)
        docs.append(d)
        # the lines it had before are coloured at once (provisional tokens)
        assert colour_at(d, "import") == expected(False, Keyword)
    qtbot.waitUntil(lambda: not colorizer.busy(), timeout=10_000)
    assert len(jobs) < 10, len(jobs)  # not one per delta
    assert jobs[-1] == source  # the newest text always gets its own tokens
    assert colour_at(docs[-1], "def f29") == expected(False, Keyword)


def test_a_lexer_that_raises_leaves_the_block_plain(
    qtbot: QtBot, colorizer: CodeColorizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(lang: str, source: str) -> hl.Tokens | None:
        raise RuntimeError("lexer bug")

    monkeypatch.setattr(hl, "_job", boom)
    doc = QTextDocument()
    colorizer.build(doc, "x = 1\n", "python", dark=False)
    qtbot.waitUntil(lambda: not colorizer.busy(), timeout=10_000)
    assert doc.toPlainText() == "x = 1\n"
    assert colour_at(doc, "x") is None


# ----------------------------------------------------------------------------- the chat pane


def code_part(pane: ChatPane, row: int, needle: str) -> DocPart:
    layout = pane.delegate.layout_for(row)
    return next(
        p
        for p in layout.parts
        if isinstance(p, DocPart) and needle in p.doc.toPlainText() and "```" not in needle
    )


def dark_palette() -> QPalette:
    pal = QPalette()
    for role, colour in [
        (QPalette.ColorRole.Window, "#202124"),
        (QPalette.ColorRole.Base, "#1b1b1d"),
        (QPalette.ColorRole.Text, "#e8e8e8"),
        (QPalette.ColorRole.WindowText, "#e8e8e8"),
    ]:
        pal.setColor(role, QColor(colour))
    return pal


def test_theme_switch_recolours_code_without_tokenizing_again(qtbot: QtBot) -> None:
    pane = ChatPane()
    qtbot.addWidget(pane)
    pane.resize(760, 700)
    light = QPalette(pane.palette())
    light.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    light.setColor(QPalette.ColorRole.Text, QColor("#111111"))
    pane.setPalette(light)
    pane.show()
    qtbot.waitExposed(pane)
    reply = "Here:\n\n```python\ndef f(x):\n    return x  # twice\n```\n"
    pane.set_items([ChatItem("a1", assistant(text(reply)))])
    colorizer = pane.delegate.docs.colorizer
    qtbot.waitUntil(lambda: not colorizer.busy(), timeout=10_000)
    pane.view.viewport().repaint()
    doc = code_part(pane, 0, "def f(x)").doc
    qtbot.waitUntil(lambda: colour_at(doc, "def") == expected(False, Keyword), timeout=10_000)
    tokenized = colorizer.stats["tokenized"] + colorizer.stats["sync"]
    built = pane.delegate.docs.built
    pane.setPalette(dark_palette())  # what a live theme switch does (palette change)
    pane.view.viewport().repaint()
    qtbot.waitUntil(lambda: not colorizer.busy(), timeout=10_000)
    dark_doc = code_part(pane, 0, "def f(x)").doc
    assert dark_doc is doc  # re-coloured in place: no document laid out again
    assert pane.delegate.docs.built == built
    assert colour_at(dark_doc, "def") == expected(True, Keyword)
    assert colour_at(dark_doc, "# twice") == expected(True, Comment)
    assert expected(True, Keyword) != expected(False, Keyword)
    assert colorizer.stats["tokenized"] + colorizer.stats["sync"] == tokenized


def test_streaming_reply_tokenizes_closed_blocks_once(qtbot: QtBot, jobs: list[str]) -> None:
    pane = ChatPane()
    qtbot.addWidget(pane)
    pane.resize(760, 900)
    pane.show()
    qtbot.waitExposed(pane)
    first = 'fn main() {\n    println!("closed");\n}'
    so_far = f"One:\n\n```rust\n{first}\n```\n\nTwo:\n\n```python\n"
    pane.begin_stream(assistant(text(so_far)))
    for i in range(40):
        so_far += f"x{i} = {i}\n"
        pane.update_stream(assistant(text(so_far)))
        qtbot.wait(5)
    pane.view.viewport().repaint()
    qtbot.waitUntil(lambda: not pane.delegate.docs.colorizer.busy(), timeout=10_000)
    assert jobs.count(first) == 1  # the closed block: once, however often the reply grew
    assert len([j for j in jobs if j.startswith("x0")]) < 40
