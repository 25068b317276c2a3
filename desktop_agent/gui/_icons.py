"""The app's own line icons (original SVGs in ``desktop_agent/resources/icons/``), tinted.

Each SVG strokes and fills with ``currentColor``; `icon` renders it in a colour of the
given palette (ButtonText by default, the disabled colour for the disabled state), so the
icons follow the theme. Rendered icons are cached by (name, colours).
"""

from __future__ import annotations

from functools import cache, lru_cache

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QImage, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QWidget

from desktop_agent.resources import resource

ICONS = (
    "send",
    "stop",
    "new-session",
    "settings",
    "search",
    "branch",
    "copy",
    "edit",
    "retry",
    "sidebar",
    "map",
    "export",
    "help",
    "context",
    "previous",
    "next",
)

_SIZES = (16, 18, 32, 36)
"""Buttons and menus draw icons at 16 px, the toolbar at 18 (`ICON_SIZE`); 32 and 36 for
a 2x screen. Exact sizes stay crisp (an 18 px icon was a 20 px picture scaled down)."""


def sizes() -> tuple[int, ...]:
    """The sizes icons are drawn at now: the 2x ones only while a screen has more than
    one device pixel per pixel (half the pictures, ~20 ms of a launch, on other screens).
    The window tints its icons again on a ``DevicePixelRatioChange``
    (`MainWindow.event`)."""
    if any(screen.devicePixelRatio() > 1 for screen in QGuiApplication.screens()):
        return _SIZES
    return _SIZES[:2]


@cache
def _svg(name: str) -> bytes:
    return resource(f"icons/{name}.svg").read_bytes()


@lru_cache(maxsize=64)
def _renderer(name: str, color: str) -> QSvgRenderer:
    """Icon ``name`` parsed once per colour (an icon is drawn at 5 sizes in 3 colours:
    parsing it for each picture was half of the ~40 ms a launch spent on icons)."""
    return QSvgRenderer(QByteArray(_svg(name).replace(b"currentColor", color.encode())))


def render(name: str, color: QColor, size: int, ratio: float = 1.0) -> QPixmap:
    """One tinted picture of icon ``name`` at ``size`` logical pixels."""
    renderer = _renderer(name, color.name(QColor.NameFormat.HexRgb))
    px = max(1, round(size * ratio))
    image = QImage(px, px, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, px, px))
    painter.end()
    pixmap = QPixmap.fromImage(image)
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


@lru_cache(maxsize=256)
def _icon(name: str, normal: str, disabled: str, active: str, sizes: tuple[int, ...]) -> QIcon:
    icon = QIcon()
    for size in sizes:
        icon.addPixmap(render(name, QColor(normal), size), QIcon.Mode.Normal)
        icon.addPixmap(render(name, QColor(disabled), size), QIcon.Mode.Disabled)
        icon.addPixmap(render(name, QColor(active), size), QIcon.Mode.Active)
    return icon


def icon(name: str, palette: QPalette, role: QPalette.ColorRole | None = None) -> QIcon:
    """Icon ``name`` in ``palette``'s ``role`` colour (ButtonText when not given)."""
    role = QPalette.ColorRole.ButtonText if role is None else role
    normal = palette.color(QPalette.ColorGroup.Active, role).name()
    disabled = palette.color(QPalette.ColorGroup.Disabled, role).name()
    active = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.Highlight).name()
    return _icon(name, normal, disabled, active, sizes())


def palette_of(widget: QWidget) -> QPalette:
    """The palette ``widget`` paints with. Before its first polish a widget still holds
    Qt's default palette (another Highlight colour than the theme's), so icons tinted
    from it in a constructor were rendered again, at every size, when the theme's
    palette arrived (~0.1 s of each launch): the application's palette for it then."""
    if widget.testAttribute(Qt.WidgetAttribute.WA_WState_Polished):
        return widget.palette()
    return QApplication.palette(widget)


ICON_SIZE = QSize(18, 18)
