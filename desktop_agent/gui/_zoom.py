"""The conversation's text size (FIRST_HOUR.md p15): Ctrl+= / Ctrl++ larger, Ctrl+- smaller,
Ctrl+0 as it was, in steps from 50% to 200%, for the chat's cards and the message box; Ctrl
and the mouse wheel (or a touchpad's two fingers) over either of them step too, as in a
browser. Kept with the app state (``chat_zoom``), so a relaunch shows the same size."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QFont, QWheelEvent
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

from desktop_agent.gui._composer import Composer
from desktop_agent.gui.chat import ChatPane

STEPS = (50, 67, 75, 80, 90, 100, 110, 125, 150, 175, 200)
"""The zoom levels, in percent (a browser's)."""
WHEEL_NOTCH = 120
"""A wheel's click in ``angleDelta`` units: one step (a touchpad sends it in small parts)."""


def nearest_step(percent: int) -> int:
    return min(STEPS, key=lambda s: abs(s - percent))


def _scaled(font: QFont, percent: int) -> QFont:
    out = QFont(font)
    if font.pointSizeF() > 0:
        out.setPointSizeF(font.pointSizeF() * percent / 100)
    elif font.pixelSize() > 0:
        out.setPixelSize(max(1, round(font.pixelSize() * percent / 100)))
    return out


class TextZoom(QObject):
    """Scales the fonts of the chat's cards and of the message box from the sizes they
    had when made; ``remember`` keeps the level, ``say`` tells the user. Ctrl+wheel over
    either steps (an event filter: the message box would otherwise zoom only its own
    font, and the chat would scroll)."""

    def __init__(
        self,
        chat: ChatPane,
        composer: Composer,
        remember: Callable[[int], None],
        say: Callable[[str], None],
    ) -> None:
        super().__init__(chat)
        self._chat = chat
        self._composer = composer
        self._remember = remember
        self._say = say
        self._widgets: list[tuple[QWidget, QFont]] = [
            (chat.view, QFont(chat.view.font())),
            (composer.input, QFont(composer.input.font())),
        ]
        self.percent = 100
        self._wheel = 0
        for widget, _font in self._widgets:
            target = widget.viewport() if isinstance(widget, QAbstractScrollArea) else widget
            target.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel or not isinstance(event, QWheelEvent):
            return False
        if not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self._wheel = 0
            return False
        self._wheel += event.angleDelta().y()
        while abs(self._wheel) >= WHEEL_NOTCH:
            direction = 1 if self._wheel > 0 else -1
            self._wheel -= direction * WHEEL_NOTCH
            self.step(direction)
        event.accept()
        return True

    def apply(self, percent: int) -> None:
        """Show the text at ``percent`` (the nearest step), cards re-measured."""
        percent = nearest_step(percent)
        if percent == self.percent:
            return
        self.percent = percent
        for widget, base in self._widgets:
            # at 100% the widget inherits its font again (a later system font change shows)
            widget.setFont(_scaled(base, percent) if percent != 100 else QFont())
        self._chat.delegate.theme()  # a new font: every card is measured again
        self._chat.view.schedule_relayout(-1)
        self._composer.fit_height()

    def step(self, direction: int) -> None:
        """One step larger (1), smaller (-1), or back to 100% (0)."""
        if direction == 0:
            percent = 100
        else:
            i = STEPS.index(self.percent) + direction
            percent = STEPS[min(max(i, 0), len(STEPS) - 1)]
        self.apply(percent)
        self._remember(self.percent)
        self._say(
            QCoreApplication.translate("TextZoom", "Text size {percent}%").format(
                percent=self.percent
            )
        )
