"""Everything Qt. This first slice: the main window showing the restored branch."""

import os

# qasync picks the Qt binding when it is first imported; make sure it is PySide6.
os.environ.setdefault("QT_API", "pyside6")

from desktop_agent.gui._main_window import MainWindow, run_main_window

__all__ = ["MainWindow", "run_main_window"]
