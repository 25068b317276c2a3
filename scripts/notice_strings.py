"""The workbench's fixed user-visible texts, as ``QT_TRANSLATE_NOOP("notices", ...)`` lines.

The workbench is Qt-free: it gives the GUI plain English texts (notices, their action
labels, the save state, progress), and the GUI translates them where it shows them, with
the context ``notices`` (`gui/_panels.py`, `gui/_presenter.py`). pyside6-lupdate cannot see
them in the workbench's code, so `scripts/translations` feeds it this module's output:
every string literal given to ``notify(...)`` or ``notify_choices(...)`` (text and action
label, and the labels of a ``more`` list of buttons), ``Notice(...)``, a relative age's
``_age(...)`` (`workbench/_time.py`),
as ``action_label=``, set as ``progress`` or as a ``text`` variable, or returned by
``SaveState.label``; and the harness's restore notices (`harness/_restore.py`).
Values go in ``{name}`` placeholders (``notify(key, "Exported to {path}.", path=dest)``),
filled in after translation (`workbench.fill`)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKBENCH = ROOT / "desktop_agent" / "workbench"


def _text(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip():
        return node.value
    return None


def _texts(node: ast.AST | None) -> list[str]:
    """A literal, or both literals of ``"a" if c else "b"`` (a notice's text chosen)."""
    if isinstance(node, ast.IfExp):
        return [*_texts(node.body), *_texts(node.orelse)]
    text = _text(node)
    return [text] if text else []


def notice_texts(folder: Path = WORKBENCH) -> list[str]:
    found: set[str] = set()
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in ("notify", "notify_choices") and len(node.args) > 1:
                    found.update(_texts(node.args[1]))
                    if len(node.args) > 2 and isinstance(node.args[2], ast.Tuple):
                        found.add(_text(node.args[2].elts[0]) or "")  # the action's label
                if name == "Notice":
                    found.update(_text(a) or "" for a in node.args)
                if name == "_age" and node.args:
                    found.add(_text(node.args[0]) or "")
                for kw in node.keywords:
                    if kw.arg in ("text", "action_label"):
                        found.add(_text(kw.value) or "")
            elif isinstance(node, ast.Assign):
                target = node.targets[0]
                if isinstance(target, ast.Attribute) and target.attr == "progress":
                    found.update(_texts(node.value))
                elif isinstance(target, ast.Name) and target.id in ("text", "missing"):
                    found.update(_texts(node.value))  # a notice's text, then notify(key, text)
                elif isinstance(target, ast.Name) and target.id == "more":
                    # the further buttons of notify_choices: [("Keep", ...), ...]
                    for elt in getattr(node.value, "elts", []):
                        if isinstance(elt, ast.Tuple):
                            found.add(_text(elt.elts[0]) or "")
            elif isinstance(node, ast.FunctionDef) and node.name == "label":
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Dict):
                        found.update(_text(v) or "" for v in inner.values)
    found.update(_harness_notices())
    found.update(_sandbox_notices())
    found.discard("")
    return sorted(found)


HARNESS_NOTICES = ROOT / "desktop_agent" / "harness" / "_restore.py"


def _harness_notices(path: Path = HARNESS_NOTICES) -> list[str]:
    """The restore notices the harness hands the workbench as templates (`NO_MODEL`,
    the values of `_NOTICES`)."""
    found: list[str] = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id == "NO_MODEL":
                found.extend(_texts(node.value))
            elif node.targets[0].id == "_NOTICES" and isinstance(node.value, ast.Dict):
                for value in node.value.values:
                    found.extend(_texts(value))
    return found


SANDBOX_NOTICES = ROOT / "desktop_agent" / "tools" / "_sandbox.py"


def _sandbox_notices(path: Path = SANDBOX_NOTICES) -> list[str]:
    """Why shell commands run without a sandbox (`BWRAP_MISSING`, `WINDOWS_NONE`,
    `SEATBELT_MISSING`): the workbench's notice and the approval dialog show them."""
    names = ("BWRAP_MISSING", "WINDOWS_NONE", "SEATBELT_MISSING")
    return [
        text
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in names
        for text in _texts(node.value)
    ]


def main() -> int:
    sys.stdout.write("# Generated by scripts/translations for pyside6-lupdate; not imported.\n")
    for text in notice_texts():
        sys.stdout.write(f"QT_TRANSLATE_NOOP({'notices'!r}, {text!r})\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
