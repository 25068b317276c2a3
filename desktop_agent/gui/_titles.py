"""Dialog titles that fit (FIRST_HOUR.md p9): a dialog is at least as wide as its title as
the window manager shows it, with room for the window's icon and buttons.

On Linux Qt hands the window manager "<title> — <display name>" (the application's display
name is appended unless the title ends with it), and a bar narrower than that elides it in
the middle: the Rename dialog read "Rena… Agent". `fit_title` gives the dialog a minimum
width (a message box, which sets its own fixed size when shown, gets it through a spacer in
its layout); call it once its title, texts and buttons are set, before it is shown (a
message box lays itself out again when its informative text is set).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QApplication,
    QBoxLayout,
    QGridLayout,
    QLayout,
    QMessageBox,
    QSizePolicy,
    QSpacerItem,
    QWidget,
)

from desktop_agent.gui._identity import DISPLAY_NAME

TITLE_MARGIN = 140
"""Room for the window's icon and its minimize, maximize and close buttons (px)."""


def shown_title(title: str) -> str:
    """The title as the window manager gets it (the display name appended)."""
    return title if title.endswith(DISPLAY_NAME) else f"{title} — {DISPLAY_NAME}"


def title_width(title: str) -> int:
    """The width of ``title`` in a title bar's (bold) font, as shown."""
    font = QApplication.font()
    font.setBold(True)
    return QFontMetrics(font).horizontalAdvance(shown_title(title))


def fit_title(dialog: QWidget) -> None:
    """Make ``dialog`` at least wide enough to show its whole title (within the screen)."""
    need = min(
        title_width(dialog.windowTitle()) + TITLE_MARGIN,
        dialog.screen().availableGeometry().width() - 40,
    )
    if isinstance(dialog, QMessageBox):
        _widen_layout(dialog.layout(), need)
        return
    need = max(need, dialog.minimumWidth())  # (a width asked for before, kept too)
    dialog.setMinimumWidth(need)
    # A layout that sets the dialog's minimum size itself (an input dialog's, made when it
    # is shown) would take that minimum back: it gets a spacer as wide, once shown.
    _WhenShown(dialog, need)


def _widen_layout(layout: QLayout | None, need: int) -> None:
    spacer = QSpacerItem(need, 0, QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Minimum)
    if isinstance(layout, QGridLayout):
        layout.addItem(spacer, layout.rowCount(), 0, 1, layout.columnCount())
    elif isinstance(layout, QBoxLayout):
        layout.addSpacerItem(spacer)
    else:
        return
    layout.invalidate()
    layout.activate()


class _WhenShown(QObject):
    def __init__(self, dialog: QWidget, need: int) -> None:
        super().__init__(dialog)
        self._need = need
        dialog.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show and isinstance(watched, QWidget):
            watched.removeEventFilter(self)
            layout = watched.layout()
            free = (
                QLayout.SizeConstraint.SetDefaultConstraint,
                QLayout.SizeConstraint.SetNoConstraint,
            )
            if layout is not None and layout.sizeConstraint() not in free:
                _widen_layout(layout, self._need)
            if watched.width() < self._need:
                watched.resize(self._need, watched.height())
        return False
