"""Everything Qt: main window, sidebar, branch tree, chat pane, composer, dialogs."""

import os

# qasync picks the Qt binding when it is first imported; make sure it is PySide6.
os.environ.setdefault("QT_API", "pyside6")

from desktop_agent.gui._app import InstanceServer, hand_over, instance_name, run_gui
from desktop_agent.gui._main_window import AppServices, MainWindow

__all__ = ["AppServices", "InstanceServer", "MainWindow", "hand_over", "instance_name", "run_gui"]
