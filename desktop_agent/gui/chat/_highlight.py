"""Small syntax highlighters for code blocks and diffs (no Pygments).

Colours come from two fixed sets, one for light and one for dark palettes, chosen by the
lightness of the palette's base colour when the document is built.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QSyntaxHighlighter, QTextCharFormat, QTextDocument

_KEYWORDS = frozenset(
    [
        "and",
        "as",
        "assert",
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "def",
        "default",
        "del",
        "do",
        "elif",
        "else",
        "enum",
        "except",
        "export",
        "extends",
        "false",
        "final",
        "finally",
        "fn",
        "for",
        "from",
        "func",
        "function",
        "go",
        "if",
        "impl",
        "import",
        "in",
        "interface",
        "is",
        "lambda",
        "let",
        "loop",
        "match",
        "mod",
        "mut",
        "new",
        "nil",
        "none",
        "not",
        "null",
        "or",
        "package",
        "pass",
        "pub",
        "raise",
        "return",
        "self",
        "static",
        "struct",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "type",
        "typeof",
        "use",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "None",
        "True",
        "False",
        "echo",
        "fi",
        "then",
        "done",
        "esac",
        "local",
    ]
)

_TOKEN = re.compile(
    r"(?P<comment>#[^\n]*|//[^\n]*|--[^\n]*)"
    r"|(?P<string>\"(?:[^\"\\]|\\.)*\"?|'(?:[^'\\]|\\.)*'?|`[^`]*`?)"
    r"|(?P<number>\b\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?\b|\b0x[0-9a-fA-F]+\b)"
    r"|(?P<word>\b[A-Za-z_][A-Za-z0-9_]*\b)"
)

_LIGHT = {"keyword": "#7a3e9d", "string": "#2e7d32", "comment": "#7f8c8d", "number": "#b35c00"}
_DARK = {"keyword": "#c792ea", "string": "#a5d6a7", "comment": "#8a9499", "number": "#f7b267"}


def _fmt(color: str, *, italic: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if italic:
        fmt.setFontItalic(True)
    return fmt


class CodeHighlighter(QSyntaxHighlighter):
    """Keywords, strings, comments and numbers of C-like, Python-like and shell code."""

    def __init__(self, doc: QTextDocument, *, dark: bool, language: str = "") -> None:
        colors = _DARK if dark else _LIGHT
        self._formats = {
            "keyword": _fmt(colors["keyword"]),
            "string": _fmt(colors["string"]),
            "comment": _fmt(colors["comment"], italic=True),
            "number": _fmt(colors["number"]),
        }
        lang = language.lower()
        # "--" starts a comment only in SQL/Lua/Haskell; "#" not in C-like languages.
        self._dash_comments = lang in ("sql", "lua", "haskell", "hs")
        self._hash_comments = lang not in ("c", "cpp", "c++", "js", "javascript", "ts", "java")
        super().__init__(doc)

    def highlightBlock(self, text: str) -> None:
        for m in _TOKEN.finditer(text):
            kind = m.lastgroup
            start, end = m.span()
            if kind == "comment":
                token = m.group()
                if (token.startswith("--") and not self._dash_comments) or (
                    token.startswith("#") and not self._hash_comments
                ):
                    continue
                self.setFormat(start, len(text) - start, self._formats["comment"])
                return
            if kind == "word":
                if m.group() in _KEYWORDS:
                    self.setFormat(start, end - start, self._formats["keyword"])
            elif kind is not None:
                self.setFormat(start, end - start, self._formats[kind])


class DiffHighlighter(QSyntaxHighlighter):
    """Added lines green, removed lines red, hunk headers blue."""

    def __init__(self, doc: QTextDocument, *, dark: bool) -> None:
        if dark:
            add, rem, hunk = ("#81c784", "#1f3a24"), ("#ef9a9a", "#45221f"), "#90caf9"
        else:
            add, rem, hunk = ("#1b5e20", "#e3f4e3"), ("#b71c1c", "#fbe4e4"), "#1565c0"
        self._add = _fmt(add[0])
        self._add.setBackground(QColor(add[1]))
        self._rem = _fmt(rem[0])
        self._rem.setBackground(QColor(rem[1]))
        self._hunk = _fmt(hunk)
        self._head = _fmt(hunk)
        self._head.setFontWeight(700)
        super().__init__(doc)

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("+++", "---")):
            self.setFormat(0, len(text), self._head)
        elif text.startswith("+"):
            self.setFormat(0, len(text), self._add)
        elif text.startswith("-"):
            self.setFormat(0, len(text), self._rem)
        elif text.startswith("@@"):
            self.setFormat(0, len(text), self._hunk)
