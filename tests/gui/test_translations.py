"""Ready for translation (issue 9 item 6): no user-visible literal in the GUI escapes
``tr()``/``translate()``, the ``.ts`` template is what `scripts/translations` makes now, and
Qt's own translations load for a locale."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QLocale
from PySide6.QtWidgets import QApplication

from desktop_agent.gui._app import install_translators

ROOT = Path(__file__).resolve().parents[2]
GUI = ROOT / "desktop_agent" / "gui"
TEMPLATE = ROOT / "desktop_agent" / "resources" / "translations" / "desktop_agent.ts"

# Calls whose string arguments are put on screen.
SHOWN_BY_METHOD = {
    "setText", "setToolTip", "setStatusTip", "setPlaceholderText", "setWindowTitle",
    "setInformativeText", "setAccessibleName", "setAccessibleDescription", "addAction",
    "addMenu", "addButton", "addItem", "addRow", "setHorizontalHeaderLabels", "showMessage",
    "setTitle", "error", "ask_folder", "ask_save_path", "ask_text",
}  # fmt: skip
SHOWN_BY_CLASS = {
    "QAction", "QPushButton", "QLabel", "QCheckBox", "QMessageBox", "QToolButton", "QMenu",
    "QRadioButton", "QGroupBox", "QToolBar",
}  # fmt: skip

NOT_YET: set[str] = set()
"""GUI modules not checked yet (none: the chat pane, cards and fences joined in round 3)."""

# The chat cards' builder (`gui/chat/_builder.py`): which positional arguments are texts.
SHOWN_AT = {"header": (1, 2), "button": (1,), "toggle_line": (1, 2), "doc": (1,), "text_line": (1,)}
SHOWN_KEYWORDS = {"tip", "text", "title"}

_WORD = re.compile(r"[A-Za-z]{2,}")


def _literal_text(node: ast.expr) -> str | None:
    """The text of a string literal or f-string argument that contains words."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if _WORD.search(node.value) else None
    if isinstance(node, ast.JoinedStr):
        parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
        text = "".join(str(p) for p in parts)
        return text if _WORD.search(text) else None
    return None


def call_name(call: ast.Call) -> str:
    """``f`` of ``f(...)`` or ``x.f(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def untranslated(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = call_name(node)
        base = func.value if isinstance(func, ast.Attribute) else None
        if isinstance(base, ast.Name) and base.id in ("log", "logger", "logging"):
            continue  # log lines are for us, not shown
        if name in SHOWN_BY_CLASS:
            args = list(node.args)  # every text a widget is made with
        elif name in SHOWN_BY_METHOD:
            args = node.args[:1]  # the text; later arguments are data, names, paths
        elif name in SHOWN_AT:
            args = [node.args[i] for i in SHOWN_AT[name] if i < len(node.args)]
        else:
            args = []
        args += [k.value for k in node.keywords if k.arg in SHOWN_KEYWORDS]
        for arg in args:
            text = _literal_text(arg)
            if text is not None:
                found.append(f"{path.relative_to(GUI)}:{node.lineno} {name}({text!r})")
    return found


# Calls whose string arguments are not shown, or are translated: prose given to them is fine.
NOT_SHOWN = {
    "tr", "translate", "_tr", "QT_TRANSLATE_NOOP",  # translated (or marked)
    "debug", "info", "warning", "error", "exception", "critical",  # log lines
    "write",  # stderr lines of the command-line entry points
    "_say",  # --script's JSON lines on stdout (a protocol for programs, not prose)
    "setObjectName", "getLogger", "setStyleSheet",
}  # fmt: skip
ALLOWED_PROSE = {"Desktop Agent"}
"""The app's name (`_identity.DISPLAY_NAME`), the same in every language."""


def untranslated_prose(path: Path) -> list[str]:
    """String literals and f-strings with words and a space (prose) anywhere in a GUI
    module that are not given to tr/translate/a helper, a log call, a raise or a
    comparison, and are not docstrings: the texts a check by call name cannot see (cards
    painted by hand, tooltips built in lists, statuses picked in an ``if``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for kid in ast.iter_child_nodes(node):
            parents[kid] = node
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if isinstance(parents.get(node), ast.JoinedStr):
                continue  # counted with its f-string
            text = node.value
        else:
            continue
        if not _WORD.search(text) or " " not in text.strip() or text in ALLOWED_PROSE:
            continue
        child: ast.AST = node
        parent = parents.get(node)
        fine = False
        while parent is not None and not fine:
            if isinstance(parent, ast.Expr) and isinstance(child, ast.Constant):
                fine = True  # a docstring (or a bare string)
            elif isinstance(parent, ast.Raise | ast.Compare | ast.Assert):
                fine = True
            elif isinstance(parent, ast.Call):
                fine = call_name(parent) in NOT_SHOWN
            child, parent = parent, parents.get(parent)
        if not fine:
            found.append(f"{path.relative_to(GUI)}:{node.lineno} {text!r}")
    return found


def gui_modules() -> list[Path]:
    return sorted(p for p in GUI.rglob("*.py") if p.relative_to(GUI).as_posix() not in NOT_YET)


def test_no_user_visible_literal_in_the_gui_escapes_tr() -> None:
    found = [hit for path in gui_modules() for hit in untranslated(path)]
    assert not found, "\n".join(found)


def test_no_prose_in_the_gui_escapes_tr() -> None:
    found = [hit for path in gui_modules() for hit in untranslated_prose(path)]
    assert not found, "\n".join(found)


def test_the_prose_check_finds_texts_built_outside_tr() -> None:
    sample = GUI / "_sample_for_prose.py"
    sample.write_text(
        '"""A docstring with words."""\n'
        'status = "waiting for approval" if w else _tr("not run")\n'
        'lines.append(f"Stop reason: {r}")\n'
        'b.doc("small", _tr("Full output: {path}").format(path=p), muted)\n'
        'log.info("a log line with words")\n'
        'name = "Desktop Agent"\n'
        'if kind in ("Text only", "x"):\n    pass\n'
        'key = f"tool:{call_id}"\n'
    )
    try:
        hits = untranslated_prose(sample)
    finally:
        sample.unlink()
    assert [h.split(" ", 1)[1] for h in hits] == ["'waiting for approval'", "'Stop reason: '"]


def test_the_check_finds_an_untranslated_literal(tmp_path: Path) -> None:
    sample = GUI / "_sample_for_test.py"
    sample.write_text(
        'b = QPushButton("Send")\nb.setToolTip(f"Send {x}")\nb.setText(self.tr("ok"))\n'
        'b.setText("×")\nb.header(state, "Tool result", "", [])\n'
        'b.button(x, _tr("Copy"), "copy", tip="Copy code")\nb.doc("small", f"[{t} content]")\n'
    )
    try:
        hits = untranslated(sample)
    finally:
        sample.unlink()
    assert [h.split(" ", 1)[1] for h in hits] == [
        "QPushButton('Send')", "setToolTip('Send ')", "header('Tool result')",
        "button('Copy code')", "doc('[ content]')",
    ]  # fmt: skip


@pytest.mark.skipif(sys.platform == "win32", reason="the script is POSIX shell")
def test_the_template_is_what_scripts_translations_makes_now(tmp_path: Path) -> None:
    out = tmp_path / "desktop_agent.ts"
    subprocess.run(
        [str(ROOT / "scripts" / "translations"), "--output", str(out)],
        check=True,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    made = out.read_text(encoding="utf-8")
    assert TEMPLATE.read_text(encoding="utf-8") == made, (
        "desktop_agent.ts is out of date: run scripts/translations"
    )
    for text in ("Keyboard shortcuts", "Like the system (light or dark)", "Dismiss"):
        assert f"<source>{text}</source>" in made
    # texts given to a module's helper (`_tr("Shell")`) and notices with placeholders
    for text in ("Shell", "Tool result", "{n} min ago", "Exported to {path}."):
        assert f"<source>{text}</source>" in made, text
    assert "<name>notices</name>" in made  # the workbench's notices, translated at the GUI edge


def test_the_harness_restore_notices_are_in_the_template() -> None:
    """The harness hands the workbench its restore notice as a template with values; every
    template it can give is in the translation template (context ``notices``)."""
    from desktop_agent.harness import _restore

    ts = (ROOT / "desktop_agent/resources/translations/desktop_agent.ts").read_text("utf-8")
    templates = [_restore.NO_MODEL, *_restore._NOTICES.values()]
    assert len(templates) == 9
    for template in templates:
        assert f"<source>{template}</source>" in ts, template
    assert "<source>Connecting to {url} for {saved}…</source>" in ts


def test_qt_translations_load_for_a_locale(qapp: QApplication) -> None:
    loaded = install_translators(qapp, QLocale(QLocale.Language.German))
    try:
        assert any(Path(p).name.startswith("qtbase_de") for p in loaded)
        assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "Abbrechen"
    finally:
        from PySide6.QtCore import QTranslator

        for translator in qapp.findChildren(QTranslator):
            qapp.removeTranslator(translator)
            translator.deleteLater()


@pytest.mark.skipif(sys.platform == "win32", reason="the venv's lrelease is a POSIX script")
def test_a_notice_with_values_is_translated_then_filled_in(
    qapp: QApplication, tmp_path: Path
) -> None:
    """The workbench's English template goes through the translator (context
    ``notices``) and only then gets its values: a path is never translated."""
    from PySide6.QtCore import QTranslator
    from PySide6.QtWidgets import QLabel

    from desktop_agent.gui._panels import NoticeBar
    from desktop_agent.workbench import Notice, fill

    ts = tmp_path / "t_de.ts"
    ts.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n'
        '<TS version="2.1" language="de"><context><name>notices</name>\n'
        "<message><source>Exported to {path}.</source>"
        "<translation>Nach {path} exportiert.</translation></message>\n"
        "<message><source>No session {target} was found.</source>"
        "<translation>Keine Sitzung {ziel} gefunden.</translation></message>\n"
        "</context></TS>\n",
        encoding="utf-8",
    )
    qm = tmp_path / "t_de.qm"
    subprocess.run(
        [str(ROOT / ".venv" / "bin" / "pyside6-lrelease"), str(ts), "-qm", str(qm)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    translator = QTranslator()
    assert translator.load(str(qm))
    qapp.installTranslator(translator)
    bar = NoticeBar()
    try:
        exported = Notice("export", "Exported to {path}.", None, (("path", "/tmp/Ö x.md"),))
        broken = Notice("open", "No session {target} was found.", None, (("target", "abc"),))
        bar.set_notices([exported, broken])
        assert bar.texts() == [
            "Nach /tmp/Ö x.md exportiert.",
            "Keine Sitzung {ziel} gefunden. (abc)",  # a broken translation still shows it
        ]
        shown = [label.text() for label in bar.findChildren(QLabel, "noticeText")]
        assert shown == bar.texts()
        assert exported.english == "Exported to /tmp/Ö x.md."
        assert fill("{n} of {m}", (("n", "1"), ("m", "2"))) == "1 of 2"
    finally:
        qapp.removeTranslator(translator)
        bar.deleteLater()


def wrong_tr_calls(path: Path) -> list[str]:
    """``tr`` called on a class (``QObject.tr(widget, text)``): PySide6's ``tr`` takes the
    text only, so this raises TypeError when it runs (FIRST_HOUR.md M1). Outside a method,
    ``QCoreApplication.translate(context, text)`` is the way. A plain ``tr(context, text)``
    (``tr`` an alias of ``translate``) runs, but pyside6-lupdate reads it as
    ``tr(text, comment)``: the template got the context as the text."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        on_other = (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "tr"
            and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "self")
        )
        alias = isinstance(node.func, ast.Name) and node.func.id == "tr" and len(node.args) > 1
        if on_other or alias:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_tr_is_only_called_on_self_with_the_text_first() -> None:
    found = [hit for path in sorted(GUI.rglob("*.py")) for hit in wrong_tr_calls(path)]
    assert found == []
