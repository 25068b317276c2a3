"""Who the app is to the desktop: name, desktop-file id / WM_CLASS, version, icon, log links.

Set once, where the QApplication is created (`apply_identity`), so the task bar, the dock and
the window switcher show the app's icon and group its windows under ``desktop-agent``:

- X11: WM_CLASS is (argv[0]'s base name, applicationName) = (``desktop-agent``,
  ``desktop-agent``), which the ``.desktop`` file's ``StartupWMClass=desktop-agent`` matches;
- Wayland: the xdg-shell app id is the desktop file name, ``desktop-agent``;
- window titles end with the display name, ``Desktop Agent``.

The icon is drawn from the one SVG in ``desktop_agent/resources`` that every package icon
is rendered from too (packaging/render_icons.py).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QCoreApplication, QSize, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QMainWindow, QMenu

import desktop_agent
from desktop_agent.gui._tr import QT_TRANSLATE_NOOP
from desktop_agent.resources import ICON_SVG, resource

APP_ID = "desktop-agent"
"""Desktop file id (``desktop-agent.desktop``), WM_CLASS and Wayland app id."""

DISPLAY_NAME = "Desktop Agent"
LOG_FILE = "desktop-agent.log"
CRASH_LOG = "crash.log"


def app_icon() -> QIcon:
    """The app icon, scalable (QtSvg's icon engine draws each size from the SVG)."""
    svg = resource(ICON_SVG)
    if isinstance(svg, Path):  # an installed package or a frozen bundle: a real file
        icon = QIcon(str(svg))
        if not icon.isNull():
            return icon
    return _icon_from_bytes(svg.read_bytes())


def _icon_from_bytes(data: bytes) -> QIcon:
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(QByteArray(data))
    icon = QIcon()
    for size in (16, 24, 32, 48, 64, 128, 256):
        pixmap = QPixmap(QSize(size, size))
        pixmap.fill(0)
        painter = QPainter(pixmap)
        renderer.render(painter)
        painter.end()
        icon.addPixmap(pixmap)
    return icon


def apply_identity(app: QGuiApplication) -> None:
    """Name, version, desktop file name and window icon of the application (call once)."""
    app.setApplicationName(APP_ID)
    app.setApplicationDisplayName(DISPLAY_NAME)
    app.setApplicationVersion(desktop_agent.__version__)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())


def open_path(path: Path) -> bool:
    """Open a file or folder with the desktop's default application."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


def add_log_actions(menu: QMenu, logs_dir: Path) -> list[QAction]:
    """ "Open log", "Open crash log" and "Show log folder" at the end of ``menu``."""
    actions: list[QAction] = []
    for name, text, target in (
        ("openLogAction", QT_TRANSLATE_NOOP("Help", "Open &log"), logs_dir / LOG_FILE),
        ("openCrashLogAction", QT_TRANSLATE_NOOP("Help", "Open &crash log"), logs_dir / CRASH_LOG),
        ("showLogFolderAction", QT_TRANSLATE_NOOP("Help", "Show log &folder"), logs_dir),
    ):
        action = menu.addAction(QCoreApplication.translate("Help", text))
        action.setObjectName(name)
        action.setToolTip(str(target))
        action.triggered.connect(lambda _checked=False, t=target: open_path(t))
        actions.append(action)
    return actions


def install_help_menu(window: QMainWindow, logs_dir: Path) -> QMenu:
    """The window's Help menu (made if it has none yet) with the log actions in it."""
    bar = window.menuBar()
    for action in bar.actions():
        menu = action.menu()
        if isinstance(menu, QMenu) and menu.objectName() == "helpMenu":
            break
    else:
        menu = bar.addMenu(QCoreApplication.translate("Help", "&Help"))
        menu.setObjectName("helpMenu")
    if not any(a.objectName() == "openLogAction" for a in menu.actions()):
        add_log_actions(menu, logs_dir)
    return menu
