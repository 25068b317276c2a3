"""PySide6's per-import "does this module use PySide?" check, made cheap (gui/_pyside_hook)."""

from __future__ import annotations

import linecache
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from PySide6 import QtCore

import desktop_agent.gui  # noqa: F401 - installs the quick check
from desktop_agent.gui._pyside_hook import MARKER, quicken_feature_check

feature = sys.modules["shibokensupport.feature"]


@pytest.fixture
def modules(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith("da_hook_probe_")]:
            del sys.modules[name]
            feature.pyside_feature_dict.pop(name, None)


def test_modules_imported_after_qt_get_pyside6s_answers_without_their_source_kept(
    modules: Path,
) -> None:
    (modules / "da_hook_probe_qt.py").write_text("from PySide6.QtCore import QObject\n")
    (modules / "da_hook_probe_plain.py").write_text(
        "# -*- coding: latin-1 -*-\nX = 'caf\xe9'\n", encoding="latin-1"
    )
    (modules / "da_hook_probe_word.py").write_text('NOTE = "works with PySide6 too"\n')

    for name in ("da_hook_probe_qt", "da_hook_probe_plain", "da_hook_probe_word"):
        __import__(name)  # an import statement's route (importlib.import_module skips the hook)

    # 0: "uses PySide" (its features may be switched); -1: "ignore this module". The word
    # anywhere in the source counts, as in PySide6's own check.
    assert feature.pyside_feature_dict["da_hook_probe_qt"] == 0
    assert feature.pyside_feature_dict["da_hook_probe_plain"] == -1
    assert feature.pyside_feature_dict["da_hook_probe_word"] == 0
    # PySide6's own check read each source through inspect into linecache: ours did not.
    assert not any(str(modules) in path for path in linecache.cache)


def test_the_quick_check_falls_back_to_pyside6s_own_where_it_cannot_read_a_file(
    tmp_path: Path,
) -> None:
    quick = feature._mod_uses_pyside
    assert getattr(quick, MARKER)
    assert quicken_feature_check() is False  # installed once, never wrapped twice
    assert feature._mod_uses_pyside is quick

    assert quick(QtCore) is False  # a compiled extension (its bytes name PySide6): no source
    assert quick(sys) is False  # built in: PySide6's own check says no (TypeError)
    missing = ModuleType("da_hook_probe_missing")
    missing.__file__ = str(tmp_path / "missing" / "da_hook_probe_missing.py")
    assert quick(missing) is False  # no file, no loader: PySide6's own check says no
    linecache.checkcache()


class _FrozenLoader:
    """A loader like PyInstaller's: modules in its archive, sources only if collected."""

    def __init__(self, sources: dict[str, str | None]) -> None:
        self.sources = sources

    def get_source(self, name: str) -> str | None:
        if name not in self.sources:
            raise ImportError(name)
        return self.sources[name]


def test_a_frozen_apps_modules_are_asked_through_their_loader(tmp_path: Path) -> None:
    """In a PyInstaller bundle a module's ``__file__`` is a ``.pyc`` path with no file
    beside it: its loader gives the source (None when it was not collected), as
    ``inspect`` would find after scanning every module; a ``.py`` beside a ``.pyc`` path
    is read as usual."""
    quick = feature._mod_uses_pyside
    loader = _FrozenLoader(
        {"da_frozen_qt": "import PySide6\n", "da_frozen_plain": "X = 1\n", "da_frozen_bare": None}
    )

    def frozen(name: str) -> ModuleType:
        module = ModuleType(name)
        module.__file__ = str(tmp_path / "bundle" / f"{name}.pyc")
        module.__loader__ = loader  # type: ignore[assignment]
        return module

    assert quick(frozen("da_frozen_qt")) is True
    assert quick(frozen("da_frozen_plain")) is False
    assert quick(frozen("da_frozen_bare")) is False  # no source in the bundle
    assert not any("bundle" in path for path in linecache.cache)  # (inspect's would be)
    assert quick(frozen("da_frozen_unknown")) is False  # the loader refuses: PySide6's check
    linecache.checkcache()
    beside = tmp_path / "da_beside.py"
    beside.write_text("from PySide6 import QtCore\n")
    module = ModuleType("da_beside")
    module.__file__ = str(tmp_path / "da_beside.pyc")
    assert quick(module) is True


def test_another_hook_than_pyside6s_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(feature, "_mod_uses_pyside")
    assert quicken_feature_check() is False
    monkeypatch.setitem(sys.modules, "shibokensupport.feature", None)
    assert quicken_feature_check() is False
