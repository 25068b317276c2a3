"""Guards against Qt binding bugs that would crash the app, not just a test."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication


class _Emitter(QObject):
    text = Signal(str)
    flag = Signal(bool)


def test_signal_emit_keeps_reference_counts(qapp: QApplication) -> None:
    """PySide6 6.12.0 dropped a reference to True per emit and aborted the interpreter."""
    emitter = _Emitter()
    received: list[object] = []
    emitter.text.connect(received.append)
    emitter.flag.connect(received.append)
    before_true = sys.getrefcount(True)
    before_false = sys.getrefcount(False)
    for _ in range(10_000):
        emitter.text.emit("x")
        emitter.flag.emit(False)
    received.clear()
    assert abs(sys.getrefcount(True) - before_true) < 50
    assert abs(sys.getrefcount(False) - before_false) < 50
