"""Line numbers beside a file's text (FIRST_HOUR.md p18): painted in a column of their own,
muted, next to each line of a code document, so that selecting and copying the text never
takes them along (they are no document's characters)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QTextDocument

from desktop_agent.gui.chat._parts import Part, Theme, visible_rect

GUTTER_GAP = 10
"""Between the numbers and the text."""


def gutter_width(theme: Theme, last: int) -> int:
    """The width of a column of numbers up to ``last``, its gap included."""
    return QFontMetrics(theme.mono).horizontalAdvance("0" * len(str(last))) + GUTTER_GAP


@dataclass
class LineNumbers(Part):
    """Numbers ``first``, ``first + 1``, … beside the first ``count`` lines (blocks) of
    ``doc``, whose top is at ``rect.top()``; right-aligned in ``rect`` (its gap excluded).
    A line that wraps has its number on its first row."""

    rect: QRect
    doc: QTextDocument
    first: int
    count: int

    def paint(self, p: QPainter, theme: Theme) -> None:
        p.save()
        p.setFont(theme.mono)
        p.setPen(theme.muted)
        shown = visible_rect(p)
        layout = self.doc.documentLayout()
        width = self.rect.width() - GUTTER_GAP
        align = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        block = self.doc.begin()
        n = 0
        while block.isValid() and n < self.count:
            box = layout.blockBoundingRect(block)
            top = self.rect.top() + box.top()
            if not shown.isEmpty() and top > shown.bottom():
                break
            lines = block.layout()
            if lines.lineCount() and top + box.height() >= shown.top():
                line = lines.lineAt(0)
                where = QRectF(self.rect.left(), top + line.y(), width, line.height())
                p.drawText(where, align, str(self.first + n))
            block = block.next()
            n += 1
        p.restore()
