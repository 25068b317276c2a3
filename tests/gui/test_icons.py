"""A live theme switch finds the other theme's icons already tinted: they are made ahead,
one icon per turn of the loop, after a theme is applied (making them all at the switch
took ~30 ms of it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop_agent.gui import _icons, _theme
from desktop_agent.gui._theme import ThemeManager, dark_palette, light_palette


@pytest.fixture(autouse=True)
def _system_again(qapp: QApplication) -> Iterator[None]:
    yield
    ThemeManager.of(qapp, "system")


def test_the_other_themes_icons_are_made_ahead(
    qapp: QApplication, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered: list[str] = []
    real = _icons.render

    def counting(name: str, color: QColor, size: int, ratio: float = 1.0) -> object:
        rendered.append(name)
        return real(name, color, size, ratio)

    monkeypatch.setattr(_icons, "render", counting)
    monkeypatch.setattr(_theme, "WARM_ICONS_MS", 0)
    _icons._icon.cache_clear()
    manager = ThemeManager.of(qapp, "light")
    manager.set_mode("dark")  # applied: the light icons are made soon after
    per_icon = len(_icons.sizes()) * 3
    qtbot.waitUntil(lambda: len(set(rendered)) == len(_icons.ICONS), timeout=5_000)
    qtbot.waitUntil(lambda: len(rendered) == per_icon * len(_icons.ICONS), timeout=5_000)
    made = len(rendered)
    for name in _icons.ICONS:  # what refresh_icons asks for after a switch to light
        _icons.icon(name, light_palette())
    assert len(rendered) == made  # nothing rendered at the switch
    _icons.icon("send", dark_palette())
    assert len(rendered) == made + per_icon  # the current theme's are made when asked
