"""PySide6's import hook, made cheap before the rest of the GUI is imported.

Importing ``PySide6.QtCore`` replaces ``builtins.__import__`` with shiboken's
``__feature_import__`` (for ``from __feature__ import snake_case``). After every module
imported from then on, it asks whether that module "uses PySide": it reads the module's
whole source through ``inspect.getsource`` (a ``linecache`` entry, the encoding sniffed by
``tokenize``) and looks for the word ``PySide6``. A launch imports ~200 modules after Qt
(our GUI, qasync, markdown-it, Pygments, the keyring's D-Bus client) and the SDK warm-up
hundreds more on a worker thread, where each read holds the GIL the GUI thread waits for:
30-45 ms of every launch, and every module's source kept in ``linecache`` for nothing.

`quicken_feature_check` keeps the question and its answers and makes the reading cheap:
a module's ``.py`` file is read as bytes and searched for ``b"PySide6"`` (ASCII, so the
same in every source encoding Python accepts); compiled extension modules have no source
(``inspect`` says so after a few ``stat`` calls: "not PySide"); a module of a frozen app
(PyInstaller's have a ``.pyc`` path and no file) is asked for its source through its
loader, as ``inspect`` would after scanning every module (``inspect.getmodule``);
anything else goes to PySide6's own check as before. Nothing here changes when it is not
PySide6's hook we find (another version): it is left alone.
"""

from __future__ import annotations

import sys
from importlib.machinery import EXTENSION_SUFFIXES
from types import ModuleType

import PySide6.QtCore  # noqa: F401 - installs shiboken's import hook, which we then adjust

MARKER = "_desktop_agent_quick"
_EXTENSIONS = tuple(EXTENSION_SUFFIXES)


def quicken_feature_check() -> bool:
    """Replace PySide6's per-import source check by a byte search of the module's file;
    returns whether it was replaced now (False: not found, or done already)."""
    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or not callable(original) or getattr(original, MARKER, False):
        return False

    def uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            return bool(original(module))
        if path.endswith(_EXTENSIONS):
            return False  # no source: what inspect.getsource's OSError means there
        source_path = path[:-1] if path.endswith(".pyc") else path
        if source_path.endswith(".py"):
            try:
                with open(source_path, "rb") as source:
                    return b"PySide6" in source.read()
            except OSError:
                pass
            # No file: a frozen app's module (PyInstaller's are "<bundle>/x/y.pyc").
            # inspect would ask its loader for the source (none: "not PySide").
            get_source = getattr(getattr(module, "__loader__", None), "get_source", None)
            if get_source is not None:
                try:
                    text = get_source(module.__name__)
                except Exception:  # noqa: BLE001 - a loader's own rules: PySide6 decides
                    return bool(original(module))
                return isinstance(text, str) and "PySide6" in text
        return bool(original(module))

    setattr(uses_pyside, MARKER, True)
    feature._mod_uses_pyside = uses_pyside  # type: ignore[attr-defined]
    return True


quicken_feature_check()
