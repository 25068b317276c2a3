"""`DesktopNotifier`: tells the person about a session they are not looking at (its run
finished or failed, or it waits for an approval) outside the window.

It uses the desktop's notification service (``org.freedesktop.Notifications`` on the
session bus) where there is one, else the system tray's balloon; with neither (a bare X
server, the offscreen platform of the tests) the message goes to the log only. Every
message is also kept in `sent`, in order, which the window's tests read.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

log = logging.getLogger("desktop_agent.gui")

_SERVICE = "org.freedesktop.Notifications"
_PATH = "/org/freedesktop/Notifications"


class DesktopNotifier(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.sent: list[tuple[str, str]] = []
        self.route = "log"
        """How messages go out: "dbus", "tray" or "log" (none available)."""
        self._bus_interface: object | None = None
        self._tray: QSystemTrayIcon | None = None
        try:
            from PySide6.QtDBus import QDBusConnection, QDBusInterface

            bus = QDBusConnection.sessionBus()
            if bus.isConnected():
                interface = QDBusInterface(_SERVICE, _PATH, _SERVICE, bus)
                if interface.isValid():
                    self._bus_interface, self.route = interface, "dbus"
        except ImportError:  # a Qt built without D-Bus (Windows, macOS)
            pass
        if self.route == "log" and QSystemTrayIcon.isSystemTrayAvailable():
            self._tray = QSystemTrayIcon(QApplication.windowIcon(), self)
            self._tray.show()
            self.route = "tray"

    def notify(self, title: str, text: str) -> None:
        self.sent.append((title, text))
        log.info("notification: %s: %s", title, text)
        if self.route == "dbus":
            from PySide6.QtDBus import QDBus, QDBusInterface

            interface = self._bus_interface
            assert isinstance(interface, QDBusInterface)
            app = QApplication.applicationDisplayName() or "Desktop Agent"
            args: list[object] = [app, 0, "", title, text, [], {}, 10_000]
            interface.callWithArgumentList(QDBus.CallMode.NoBlock, "Notify", args)
        elif self._tray is not None:
            self._tray.showMessage(title, text, QSystemTrayIcon.MessageIcon.Information, 10_000)
