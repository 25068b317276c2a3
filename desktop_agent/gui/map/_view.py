"""The lane view: a one-column `QTableView` of fixed-height rows whose delegate paints
the commit-graph lanes, the node of each row and its one-line text; only the visible rows
are painted. (A table, not a `QListView`: with fixed sections its layout costs nothing
per row, where a list view lays out every row again on each reset: 60-140 ms for 9,000
rows, measured.)

Colours come from the palette: the main line (lane 0) in the accent colour, drawn strong;
other branches in one of a few hues (two sets, for light and dark bases) blended
towards the base colour. Lanes and colours follow the tree, not the current branch
(m12): the current path is told by its text (the others' is muted) and the leaf's ring.
Search hits get a highlight band.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
)
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
    QPixmap,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from desktop_agent.gui.map._model import MapModel, MapRole, age_text
from desktop_agent.workbench import MapRow

ExactMatch = QKeySequence.SequenceMatch.ExactMatch

Index = QModelIndex | QPersistentModelIndex

LANE_WIDTH = 14
LANE_PAD = 6
MAX_LANES = 12
"""Lanes beyond this are drawn at the last one (the row's text stays in view)."""
NODE_HALF = 9
"""Half the side of a node's pixmap (the current leaf's ring has a radius of 7.5)."""
NODE_PIXMAPS = 1024
"""Node pixmaps kept (kinds x colours x offsets x themes: a few dozen are used)."""

# Hues of the other branches, far from the usual accent blues (the current path's colour).
_HUES_LIGHT = ("#c2410c", "#7c3aed", "#0f766e", "#b45309", "#be185d", "#15803d", "#b91c1c")
_HUES_DARK = ("#fb923c", "#a78bfa", "#2dd4bf", "#fbbf24", "#f472b6", "#4ade80", "#f87171")


def blend(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved a fraction ``t`` of the way to ``b``."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


def luminance(color: QColor) -> float:
    """WCAG 2 relative luminance of ``color``."""

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio of two opaque colours (1 to 21)."""
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def readable_fill(fill: QColor, text: QColor, ratio: float = 4.6) -> QColor:
    """``fill`` moved towards black or white (away from ``text``) until ``text`` on it
    reads at ``ratio`` (WCAG AA is 4.5:1): a selection in the palette's colours."""
    away = QColor("#000000") if luminance(text) > 0.4 else QColor("#ffffff")
    out = QColor(fill)
    t = 0.0
    while contrast_ratio(out, text) < ratio and t < 1.0:
        t += 0.05
        out = blend(fill, away, t)
    return out


class LaneColors:
    """The map's colours, derived from a palette (refreshed when it changes)."""

    def __init__(self, palette: QPalette) -> None:
        base = palette.color(QPalette.ColorRole.Base)
        self.dark = base.lightness() < 128
        self.base = base
        self.text = palette.color(QPalette.ColorRole.Text)
        self.muted_text = blend(self.text, base, 0.42)
        self.accent = palette.color(QPalette.ColorRole.Highlight)
        hues = _HUES_DARK if self.dark else _HUES_LIGHT
        self.lanes = [self.accent] + [blend(QColor(h), base, 0.35) for h in hues]
        hit = QColor("#facc15") if not self.dark else QColor("#a16207")
        hit.setAlpha(90 if not self.dark else 110)
        self.hit = hit
        self.tag = QColor(self.accent)
        # a selected row: the palette's highlighted text on its highlight, made dark
        # (or light) enough to read at 4.5:1 (p3: grey on blue was hard to read)
        self.selected_text = palette.color(QPalette.ColorRole.HighlightedText)
        self.selected = readable_fill(self.accent, self.selected_text)
        self.hover = QColor(self.text)
        self.hover.setAlpha(18)
        self._pens: dict[tuple[int, bool], QPen] = {}

    def lane(self, color: int) -> QColor:
        return self.lanes[color % len(self.lanes)]

    def pen(self, color: int, *, strong: bool) -> QPen:
        """The pen of a lane's line (strong: the current path's width), made once."""
        key = (color % len(self.lanes), strong)
        pen = self._pens.get(key)
        if pen is None:
            pen = self._pens[key] = QPen(self.lanes[key[0]], 2.2 if strong else 1.6)
        return pen

    def fill_state(self, painter: QPainter, rect: QRect, state: QStyle.StateFlag) -> bool:
        """The background of a selected or hovered row; True when selected (its texts
        are then in `selected_text`)."""
        if state & QStyle.StateFlag.State_Selected:
            painter.fillRect(rect, self.selected)
            return True
        if state & QStyle.StateFlag.State_MouseOver:
            painter.fillRect(rect, self.hover)
        return False


class _Fonts:
    """The fonts of a row and their metrics, made once per base font."""

    def __init__(self, base: QFont) -> None:
        self.plain = QFont(base)
        self.bold = QFont(base)
        self.bold.setBold(True)
        self.italic = QFont(base)
        self.italic.setItalic(True)
        self.small = QFont(base)
        self.small.setPointSizeF(max(base.pointSizeF() * 0.85, 6.0))
        self.metrics = {
            id(f): QFontMetrics(f) for f in (self.plain, self.bold, self.italic, self.small)
        }

    def fm(self, font: QFont) -> QFontMetrics:
        return self.metrics[id(font)]


class MapDelegate(QStyledItemDelegate):
    """Paints one map row (see the module docstring).

    A row is a few lines, one node and one line of text; scrolling paints a page of
    fresh rows at a time, so each piece is cheap: nodes are pixmaps drawn once per
    (kind, colour, sub-pixel offset, palette: kept across theme switches) and blitted,
    elided texts are kept by (text, width), texts are drawn at their baseline (no
    rectangle layout), and the fonts and metrics are made once per view font (not
    looked up per row).
    """

    ELIDED_LIMIT = 4096

    def __init__(self, view: MapView) -> None:
        super().__init__(view)
        self._view = view
        self.colors = LaneColors(view.palette())
        self.painted = 0
        self.file_marks_painted = 0  # rows painted with a "files changed" mark
        """Rows painted so far (tests and benchmarks check that only visible ones are)."""
        self.selected_painted: list[tuple[str, QColor, QColor]] = []
        """(part, text colour, background) of the texts of the last selected row painted."""
        self.fonts = _Fonts(view.font())
        self._elided: dict[tuple[str, int, int], str] = {}
        self._nodes: dict[tuple[Any, ...], QPixmap] = {}

    def refresh(self, palette: QPalette) -> None:
        self.colors = LaneColors(palette)  # node pixmaps are keyed by its colours: kept

    def refresh_font(self, font: QFont) -> None:
        self.fonts = _Fonts(font)
        self._elided.clear()

    def row_height(self) -> int:
        return QFontMetrics(self._view.font()).height() + 8

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        return QSize(200, self.row_height())

    @staticmethod
    def lane_x(rect: QRect, lane: int) -> float:
        return rect.left() + LANE_PAD + min(lane, MAX_LANES) * LANE_WIDTH + LANE_WIDTH / 2

    def elided(self, text: str, room: int, font: QFont) -> str:
        """``text`` elided to ``room`` pixels in ``font`` (one of `fonts`), cached."""
        key = (text, room, id(font))
        out = self._elided.get(key)
        if out is None:
            if len(self._elided) >= self.ELIDED_LIMIT:
                self._elided.clear()
            fm = self.fonts.fm(font)
            out = self._elided[key] = fm.elidedText(text, Qt.TextElideMode.ElideRight, room)
        return out

    def _text(self, painter: QPainter, font: QFont, x: int, rect: QRect, text: str) -> None:
        """``text`` at ``x``, centred vertically in ``rect`` (as AlignVCenter would)."""
        fm = self.fonts.fm(font)
        painter.setFont(font)
        painter.drawText(QPointF(x, rect.top() + (rect.height() - fm.height()) // 2 + fm.ascent()),
                         text)  # fmt: skip

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        model = index.model()
        if not isinstance(model, MapModel):
            return
        self.painted += 1
        r = index.row()
        row: MapRow = model.map_row(r)
        bmap = model.bmap
        c = self.colors
        rect = QRect(option.rect)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        top, bottom = float(rect.top()), float(rect.bottom() + 1)
        cy = rect.top() + rect.height() / 2
        # the lines that pass this row (lanes past MAX_LANES share one x: drawn once)
        passing = bmap.through(r)
        drawn: dict[int, int] = {}
        width = row.lane
        for lane, hue in passing:
            drawn[min(lane, MAX_LANES)] = hue
            width = max(width, lane)
        left = rect.left() + LANE_PAD + min(width + 1, MAX_LANES + 1) * LANE_WIDTH + 4
        # the selection fills the text's part; the lanes keep their colours on the base
        # (over the style's highlight of a selected row)
        text_part = rect.adjusted(left - 4 - rect.left(), 0, 0, 0)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(rect.adjusted(0, 0, text_part.left() - rect.right() - 1, 0), c.base)
        if r in bmap.hits:
            painter.fillRect(rect, c.hit)
        selected = c.fill_state(painter, text_part, option.state)
        if selected:
            self.selected_painted = []
        for lane, hue in drawn.items():
            painter.setPen(c.pen(hue, strong=hue == 0))
            x = self.lane_x(rect, lane)
            painter.drawLine(QPointF(x, top), QPointF(x, bottom))
        x = self.lane_x(rect, row.lane)
        on_path = bmap.on_path(r)
        painter.setPen(c.pen(row.color, strong=row.color == 0))
        if row.up:
            painter.drawLine(QPointF(x, top), QPointF(x, cy))
        if row.down:
            painter.drawLine(QPointF(x, cy), QPointF(x, bottom))
        if row.from_lane >= 0:
            x0 = self.lane_x(rect, row.from_lane)
            path = QPainterPath(QPointF(x0, top))
            path.cubicTo(QPointF(x0, cy), QPointF(x0, cy), QPointF(x, cy))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
        leaf = bmap.leaf_row
        self._node(painter, row, x, cy, current=r == leaf)
        # the text
        right = rect.right() - 6
        fonts = self.fonts
        if r == leaf:
            font = fonts.bold
        elif row.kind in ("compaction", "summary", "setting"):
            font = fonts.italic
        else:
            font = fonts.plain
        small, sfm = fonts.small, fonts.fm(fonts.small)
        age = age_text(bmap.timestamp(r)) if row.tip else ""
        if age:
            aw = sfm.horizontalAdvance(age)
            self._pen(painter, "age", c.selected_text if selected else c.muted_text, selected)
            self._text(painter, small, right - aw, rect, age)
            right -= aw + 8
        mark = bmap.file_marks.get(r)
        if mark is not None:  # files changed in this turn: "±N"
            text = f"±{mark.changed}"
            mw = sfm.horizontalAdvance(text)
            self._pen(painter, "files", c.selected_text if selected else c.tag, selected)
            self._text(painter, small, right - mw, rect, text)
            right -= mw + 8
            self.file_marks_painted += 1
        label = bmap.label(r)
        tag_w = 0
        if label:
            tag_w = min(sfm.horizontalAdvance(label) + 12, max(40, (right - left) // 2))
        room = max(right - left - (tag_w + 6 if tag_w else 0), 10)
        text = self.elided(model.text(r), room, font)
        fg = c.selected_text if selected else c.text if on_path else c.muted_text
        self._pen(painter, "text", fg, selected)
        self._text(painter, font, left, rect, text)
        if label:
            tx = left + fonts.fm(font).horizontalAdvance(text) + 6
            h = sfm.height() + 2
            tag = QRect(tx, round(cy - h / 2), tag_w, h)
            edge = c.selected_text if selected else c.tag
            fill = QColor(edge)
            fill.setAlpha(45)
            painter.setPen(edge)
            painter.setBrush(fill)
            painter.drawRoundedRect(tag.adjusted(0, 0, -1, -1), h / 2, h / 2)
            painter.setFont(small)
            self._pen(painter, "label", c.selected_text if selected else c.text, selected)
            painter.drawText(
                tag.adjusted(6, 0, -6, 0),
                int(Qt.AlignmentFlag.AlignCenter),
                sfm.elidedText(label, Qt.TextElideMode.ElideRight, tag_w - 10),
            )
        painter.restore()

    def _pen(self, painter: QPainter, part: str, color: QColor, selected: bool) -> None:
        """Set a text's pen; a selected row's are kept in `selected_painted`."""
        painter.setPen(color)
        if selected:
            self.selected_painted.append((part, QColor(color), QColor(self.colors.selected)))

    def _node(self, painter: QPainter, row: MapRow, x: float, cy: float, *, current: bool) -> None:
        """The row's node: a pixmap drawn once per look and sub-pixel offset, blitted."""
        ox, oy = math.floor(x) - NODE_HALF, math.floor(cy) - NODE_HALF
        dx, dy = x - ox, cy - oy
        ratio = painter.device().devicePixelRatioF()
        c = self.colors
        key = (row.kind, row.color, current, dx, dy, ratio, c.base.rgba(), c.accent.rgba())
        pixmap = self._nodes.get(key)
        if pixmap is None:
            if len(self._nodes) >= NODE_PIXMAPS:
                self._nodes.clear()
            side = 2 * NODE_HALF + 1
            pixmap = QPixmap(math.ceil(side * ratio), math.ceil(side * ratio))
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(Qt.GlobalColor.transparent)
            p = QPainter(pixmap)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            self.draw_node(p, row.kind, dx, dy, self.colors.lane(row.color), current=current)
            p.end()
            self._nodes[key] = pixmap
        painter.drawPixmap(QPointF(ox, oy), pixmap)

    def draw_node(
        self, painter: QPainter, kind: str, x: float, cy: float, color: QColor, *, current: bool
    ) -> None:
        c = self.colors
        painter.setPen(QPen(color, 1.6))
        if kind == "compaction":
            s = 5.5
            painter.setBrush(color)
            painter.drawPolygon(
                QPolygonF(
                    [QPointF(x, cy - s), QPointF(x + s, cy), QPointF(x, cy + s), QPointF(x - s, cy)]
                )
            )
        elif kind == "summary":
            painter.setBrush(color)
            painter.drawRoundedRect(QRectF(x - 4.5, cy - 4.5, 9, 9), 2, 2)
        elif kind in ("setting", "tool", "other"):
            painter.setBrush(c.base)
            painter.drawEllipse(QPointF(x, cy), 2.8, 2.8)
        elif kind == "assistant":
            painter.setBrush(c.base)
            painter.drawEllipse(QPointF(x, cy), 4.2, 4.2)
        else:
            painter.setBrush(color)
            painter.drawEllipse(QPointF(x, cy), 4.5, 4.5)
        if current:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(c.accent, 1.6))
            painter.drawEllipse(QPointF(x, cy), 7.5, 7.5)


class MapView(QTableView):
    """The lane view (objectName ``branchTree``) with the map's keyboard grammar:
    Up/Down along the lane (parent / next in the lane), Left/Right across siblings,
    Home/End the first row / the current leaf, n/N the next/previous search hit,
    Enter switches to the selected row (`MapPane` handles the activation)."""

    def __init__(self, model: MapModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("branchTree")
        self.setModel(model)
        self.map_delegate = MapDelegate(self)
        self.setItemDelegate(self.map_delegate)
        self.horizontalHeader().hide()
        self.horizontalHeader().setStretchLastSection(True)
        rows = self.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.map_delegate.row_height())
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setTabKeyNavigation(False)
        self.setMouseTracking(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.viewport().setAttribute(Qt.WidgetAttribute.WA_Hover, True)

    painted_empty = ""
    """What the empty map says, as last painted ("" when it has rows; tests read it)."""

    def empty_text(self) -> str:
        """What a map without rows says: why it is empty (p16), "" without a session."""
        bmap = self.map_model().bmap
        shape = bmap.shape
        if shape is None or self.model().rowCount() > 0:
            return ""
        if bmap.filter == "labeled":
            key = next(
                (
                    a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                    for a in self.actions()
                    if a.objectName() == "mapLabelAction" and not a.shortcut().isEmpty()
                ),
                "F2",
            )
            return self.tr(
                "No labelled entries. Show Messages, select a node and press {key} "
                "(or choose Set label… in its menu) to label it."
            ).format(key=key)
        if bmap.filter == "user":
            return self.tr("No prompts yet: each message you send shows here.")
        return self.tr("No messages yet: each prompt and answer shows here as you chat.")

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        text = self.empty_text()
        self.painted_empty = text
        if text:
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            area = self.viewport().rect().adjusted(16, 16, -16, -16)
            flags = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
            painter.drawText(area, int(flags | Qt.TextFlag.TextWordWrap), text)
            painter.end()

    def updateGeometries(self) -> None:
        super().updateGeometries()
        # Room below the last row when the rows do not fit: the last one is not glued
        # to the bottom edge, and clicking it never scrolls the map (m12).
        bar = self.verticalScrollBar()
        if bar.maximum() > 0:
            bar.setMaximum(bar.maximum() + 2 * self.map_delegate.row_height())

    def map_model(self) -> MapModel:
        model = self.model()
        assert isinstance(model, MapModel)
        return model

    def select_row(self, r: int, *, center: bool = False) -> None:
        index = self.model().index(r, 0)
        if not index.isValid():
            return
        self.setCurrentIndex(index)
        hint = (
            QAbstractItemView.ScrollHint.PositionAtCenter
            if center
            else QAbstractItemView.ScrollHint.EnsureVisible
        )
        self.scrollTo(index, hint)

    def _move(self, key: int) -> bool:
        bmap = self.map_model().bmap
        if not len(bmap):
            return False
        r = self.currentIndex().row()
        if r < 0:
            r = max(bmap.leaf_row, 0)
            self.select_row(r)
            return True
        target = -1
        if key == Qt.Key.Key_Up:
            target = bmap.rows[r].parent
        elif key == Qt.Key.Key_Down:
            target = bmap.continuation(r)
            if target < 0:
                kids = bmap.children(r)
                target = kids[0] if kids else -1
        elif key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            siblings = bmap.siblings(r)
            if len(siblings) > 1 and r in siblings:
                step = -1 if key == Qt.Key.Key_Left else 1
                target = siblings[(siblings.index(r) + step) % len(siblings)]
        elif key == Qt.Key.Key_Home:
            target = 0
        elif key == Qt.Key.Key_End:
            target = bmap.leaf_row
        if target >= 0:
            self.select_row(target)
        return True

    def next_hit(self, step: int) -> bool:
        bmap = self.map_model().bmap
        hits = sorted(bmap.hits)
        if not hits:
            return False
        r = self.currentIndex().row()
        if step > 0:
            later = [h for h in hits if h > r]
            target = later[0] if later else hits[0]
        else:
            earlier = [h for h in hits if h < r]
            target = earlier[-1] if earlier else hits[-1]
        self.select_row(target, center=True)
        return True

    def own_action(self, event: QKeyEvent) -> QAction | None:
        """The map's action (`ACTIONS` with menu "map") whose key ``event`` is."""
        pressed = QKeySequence(event.keyCombination())
        for action in self.actions():
            for key in action.shortcuts():
                if action.isEnabled() and key.matches(pressed) == ExactMatch:
                    return action
        return None

    def event(self, event: QEvent) -> bool:
        # The map's keys win over the window's (F2 labels here, renames elsewhere).
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and self.own_action(event) is not None
        ):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        action = self.own_action(event)
        if action is not None:
            action.trigger()
            event.accept()
            return
        key = event.key()
        plain = not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        moves = (
            Qt.Key.Key_Up,
            Qt.Key.Key_Down,
            Qt.Key.Key_Left,
            Qt.Key.Key_Right,
            Qt.Key.Key_Home,
            Qt.Key.Key_End,
        )
        if plain and key in moves and self._move(key):
            event.accept()
            return
        shift = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        if key == Qt.Key.Key_N and not event.modifiers() & ~Qt.KeyboardModifier.ShiftModifier:
            self.next_hit(-1 if shift or event.text() == "N" else 1)
            event.accept()
            return
        super().keyPressEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.map_delegate.refresh(self.palette())
            self.viewport().update()
        elif event.type() == QEvent.Type.FontChange:
            self.map_delegate.refresh_font(self.font())
            self.verticalHeader().setDefaultSectionSize(self.map_delegate.row_height())
        super().changeEvent(event)


class BranchDelegate(QStyledItemDelegate):
    """A row of the Branches list: a lane-coloured dot, the branch's text, its age."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        return QSize(200, QFontMetrics(self._view.font()).height() + 10)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        c = LaneColors(self._view.palette())
        rect = QRect(option.rect)
        state = option.state
        current = bool(index.data(MapRole.CURRENT))
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = c.fill_state(painter, rect, state)
        cy = rect.top() + rect.height() / 2
        dot = c.selected_text if selected else c.accent if current else c.muted_text
        painter.setPen(QPen(dot, 1.6))
        painter.setBrush(dot if current else c.base)
        painter.drawEllipse(QPointF(rect.left() + 12, cy), 4.5, 4.5)
        font = QFont(option.font)
        font.setBold(current)
        fm = QFontMetrics(font)
        age = str(index.data(MapRole.AGE) or "")
        small = QFont(option.font)
        small.setPointSizeF(max(small.pointSizeF() * 0.85, 6.0))
        sfm = QFontMetrics(small)
        aw = sfm.horizontalAdvance(age)
        right = rect.right() - 6
        painter.setFont(small)
        painter.setPen(c.selected_text if selected else c.muted_text)
        painter.drawText(
            QRect(right - aw, rect.top(), aw, rect.height()),
            int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight),
            age,
        )
        left = rect.left() + 24
        room = max(right - aw - 8 - left, 10)
        painter.setFont(font)
        painter.setPen(c.selected_text if selected else c.text)
        text = fm.elidedText(str(index.data() or ""), Qt.TextElideMode.ElideRight, room)
        painter.drawText(
            QRect(left, rect.top(), room, rect.height()),
            int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft),
            text,
        )
        painter.restore()
