"""Marking strings for translation where they are defined, translating where shown.

`QT_TRANSLATE_NOOP` is the marker pyside6-lupdate extracts (by name); this typed twin of
PySide6's returns the text unchanged as a ``str``. Translate with
``QCoreApplication.translate(context, text)`` where the string is put on screen.
"""

from __future__ import annotations


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:
    """Mark ``text`` for translation in ``context``; returns it unchanged."""
    del context
    return text
