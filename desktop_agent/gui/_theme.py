"""Light and dark: one application palette on the Fusion style, switched live.

The ``theme`` setting is ``system`` (follow the desktop's light/dark setting through
`QStyleHints.colorScheme()` and its ``colorSchemeChanged`` signal), ``light`` or ``dark``.
Setting the application palette sends every widget a ``PaletteChange``; panes paint from
palette roles (Base, Text, Window, Highlight, Mid, PlaceholderText...), so all of them
follow at once. Applied before the window is built, the first paint is already right.

`FocusRing` draws a ring in the palette's highlight colour around whatever widget has
keyboard focus, so focus is visible on every control (item views and the chat list
included, where the style draws none).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget
from shiboken6 import isValid

log = logging.getLogger("desktop_agent.gui")

THEMES = ("system", "light", "dark")
WARM_ICONS_MS = 1_500
"""After a theme is applied, the icons of the other one are made this much later."""

_R = QPalette.ColorRole
_G = QPalette.ColorGroup

# (role, normal, disabled) of the dark palette; the light one is Fusion's own.
_DARK: tuple[tuple[QPalette.ColorRole, str, str], ...] = (
    (_R.Window, "#202124", "#202124"),
    (_R.WindowText, "#e8eaed", "#80868b"),
    (_R.Base, "#17181a", "#1c1d1f"),
    (_R.AlternateBase, "#26272a", "#26272a"),
    (_R.ToolTipBase, "#2d2e31", "#2d2e31"),
    (_R.ToolTipText, "#e8eaed", "#80868b"),
    (_R.PlaceholderText, "#8a8f96", "#5f6368"),
    (_R.Text, "#e8eaed", "#80868b"),
    (_R.Button, "#2b2c2f", "#26272a"),
    (_R.ButtonText, "#e8eaed", "#80868b"),
    (_R.BrightText, "#ffffff", "#ffffff"),
    (_R.Light, "#3c3d41", "#3c3d41"),
    (_R.Midlight, "#323336", "#323336"),
    (_R.Mid, "#3f4145", "#333437"),
    (_R.Dark, "#111213", "#111213"),
    (_R.Shadow, "#000000", "#000000"),
    (_R.Highlight, "#4c8bf5", "#3a3b3e"),
    (_R.HighlightedText, "#ffffff", "#9aa0a6"),
    (_R.Link, "#8ab4f8", "#5f6368"),
    (_R.LinkVisited, "#c58af9", "#5f6368"),
    (_R.Accent, "#4c8bf5", "#3a3b3e"),
)


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, normal, disabled in _DARK:
        color = QColor(normal)
        palette.setColor(_G.Active, role, color)
        palette.setColor(_G.Inactive, role, color)
        palette.setColor(_G.Disabled, role, QColor(disabled))
    return palette


def light_palette() -> QPalette:
    style = QStyleFactory.create("Fusion")
    palette = QPalette(style.standardPalette())
    style.deleteLater()
    accent = QColor("#1a73e8")
    for group in (_G.Active, _G.Inactive):
        palette.setColor(group, _R.Highlight, accent)
        palette.setColor(group, _R.Accent, accent)
        palette.setColor(group, _R.Link, QColor("#1558b0"))
    return palette


def is_dark(palette: QPalette) -> bool:
    """The convention every pane uses to pick its own accent colours."""
    return palette.color(_R.Base).lightness() < 128


class ThemeManager(QObject):
    """Applies the ``theme`` setting to the application; emits ``changed(dark)``."""

    changed = Signal(bool)

    def __init__(self, app: QApplication, mode: str = "system") -> None:
        super().__init__(app)
        self.setObjectName("themeManager")
        self._app = app
        self._mode = mode if mode in THEMES else "system"
        self._dark: bool | None = None
        if app.style().name().lower() != "fusion":
            app.setStyle("Fusion")
        app.styleHints().colorSchemeChanged.connect(self._on_system_scheme)
        self.apply()

    @classmethod
    def of(cls, app: QApplication, mode: str) -> ThemeManager:
        """The application's theme manager (made on first use), set to ``mode``."""
        existing = app.findChild(ThemeManager, "themeManager")
        if existing is None:
            return cls(app, mode)
        existing.set_mode(mode)
        return existing

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def dark(self) -> bool:
        return bool(self._dark)

    def set_mode(self, mode: str) -> None:
        if mode not in THEMES:
            log.warning("unknown theme %r, following the system", mode)
            mode = "system"
        self._mode = mode
        self.apply()

    @staticmethod
    def system_is_dark() -> bool:
        return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark

    def apply(self) -> None:
        dark = self.system_is_dark() if self._mode == "system" else self._mode == "dark"
        if dark == self._dark:
            return
        self._dark = dark
        self._app.setPalette(dark_palette() if dark else light_palette())
        log.info("Theme: %s (%s)", "dark" if dark else "light", self._mode)
        self.changed.emit(dark)
        QTimer.singleShot(WARM_ICONS_MS, self, self._warm_icons)

    def _warm_icons(self) -> None:
        """Tint the icons for the other theme too, one icon per turn of the loop, so a
        live switch finds them made (all of them at the switch took ~30 ms of it)."""
        from desktop_agent.gui._icons import ICONS, icon

        other = light_palette() if self._dark else dark_palette()
        names = list(ICONS)

        def step() -> None:
            if names:
                icon(names.pop(), other)
                QTimer.singleShot(0, self, step)

        step()

    def _on_system_scheme(self, _scheme: Qt.ColorScheme) -> None:
        if self._mode == "system":
            self.apply()


_FOLLOWED = frozenset({QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Hide})


class FocusRing(QWidget):
    """A 2 px ring in the highlight colour around the focused widget of ``window``.

    Mouse-transparent and never focusable; it follows focus changes, moves and resizes.
    """

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName("focusRing")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self._window = window
        self._target: QWidget | None = None
        self._watched: list[QWidget] = []
        self.hide()
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.focusChanged.connect(self._on_focus)

    @property
    def target(self) -> QWidget | None:
        return self._target

    def _on_focus(self, _old: QWidget | None, new: QWidget | None) -> None:
        if not isValid(self._window):  # the window is being destroyed
            return
        for old in self._watched:
            if isValid(old):
                old.removeEventFilter(self)
        self._watched = []
        self._target = None
        if new is None or new is self or not isValid(new) or new.window() is not self._window:
            self.hide()
            return
        self._target = new
        # The widget and each of its parents: a message box that grows moves its parent,
        # not itself, and the ring stayed where the box had been (FIRST_HOUR.md p13).
        widget: QWidget | None = new
        while widget is not None and widget is not self._window:
            widget.installEventFilter(self)
            self._watched.append(widget)
            widget = widget.parentWidget()
        self.follow()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in _FOLLOWED and isValid(self._window) and watched in self._watched:
            self.follow()
        return False

    def follow(self) -> None:
        target = self._target
        if target is None or not isValid(target) or not target.isVisible():
            self.hide()
            return
        top_left = target.mapTo(self._window, target.rect().topLeft())
        rect = QRect(top_left, target.size()).adjusted(-2, -2, 2, 2)
        self.setGeometry(rect.intersected(self._window.rect()))
        self.raise_()
        self.show()
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(self.palette().color(_R.Highlight), 2)
        painter.setPen(pen)
        painter.drawRoundedRect(self.rect().adjusted(1, 1, -1, -1), 4, 4)
        painter.end()
