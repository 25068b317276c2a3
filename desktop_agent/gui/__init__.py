"""Everything Qt: main window, sidebar, branch map, chat pane, composer, dialogs."""

import os

# qasync picks the Qt binding when it is first imported; make sure it is PySide6.
os.environ.setdefault("QT_API", "pyside6")

# First of the GUI: Qt itself, with its per-import source check made cheap (`_pyside_hook`).
from desktop_agent.gui import _pyside_hook  # noqa: F401
from desktop_agent.gui._app import InstanceServer, hand_over, instance_name, run_gui
from desktop_agent.gui._heap import freeze_heap
from desktop_agent.gui._main_window import MainWindow
from desktop_agent.gui._smoke import smoke_payload

__all__ = [
    "InstanceServer",
    "MainWindow",
    "freeze_heap",
    "hand_over",
    "instance_name",
    "run_gui",
    "smoke_payload",
]
