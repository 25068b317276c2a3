"""The pieces a chat card is painted from: theme, laid-out documents, images, parts, hits.

A `CardLayout` is a flat list of paint parts (boxes, text documents, buttons, images) in
card coordinates and a list of hit rectangles for clicks; `_render` builds them.
"""

from __future__ import annotations

import base64
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QByteArray, QRect, QRectF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QImage,
    QPainter,
    QPalette,
    QPen,
    QPixmap,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextOption,
)

from desktop_agent.ai import ImageContent
from desktop_agent.gui._icons import render as render_icon
from desktop_agent.gui.chat._highlight import CodeColorizer, CodeColors, Colors, DiffHighlighter

# --------------------------------------------------------------------------- theme


@dataclass(frozen=True)
class Theme:
    """Colours and fonts derived from the view's palette and font."""

    key: tuple[int, str]
    dark: bool
    text: QColor
    muted: QColor
    base: QColor
    link: QColor
    card_user: QColor
    card_assistant: QColor
    card_notice: QColor
    code_bg: QColor
    tool_bg: QColor
    border: QColor
    red: QColor
    red_bg: QColor
    font: QFont
    bold: QFont
    small: QFont
    mono: QFont
    line: int
    small_line: int
    mono_line: int
    fm_small: QFontMetrics
    fm_bold: QFontMetrics
    char_w: int

    @staticmethod
    def from_palette(palette: QPalette, font: QFont) -> Theme:
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        window = palette.color(QPalette.ColorRole.Window)
        highlight = palette.color(QPalette.ColorRole.Highlight)
        dark = base.lightness() < 128
        red = QColor("#ef5350") if dark else QColor("#c62828")
        bold = QFont(font)
        bold.setBold(True)
        small = QFont(font)
        if small.pointSizeF() > 0:
            small.setPointSizeF(max(6.0, small.pointSizeF() - 1))
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        if font.pointSizeF() > 0:
            mono.setPointSizeF(max(6.0, font.pointSizeF() - 0.5))
        fm_small = QFontMetrics(small)
        return Theme(
            key=(palette.cacheKey(), font.key()),
            dark=dark,
            text=text,
            muted=_mix(text, base, 0.42),
            base=base,
            link=palette.color(QPalette.ColorRole.Link),
            card_user=_mix(base, highlight, 0.12),
            card_assistant=base,
            card_notice=_mix(base, window, 0.6),
            code_bg=_mix(base, text, 0.06),
            tool_bg=_mix(base, window, 0.45),
            border=_mix(base, text, 0.18),
            red=red,
            red_bg=_mix(base, red, 0.12),
            font=font,
            bold=bold,
            small=small,
            mono=mono,
            line=QFontMetrics(font).height(),
            small_line=fm_small.height(),
            mono_line=QFontMetrics(mono).height(),
            fm_small=fm_small,
            fm_bold=QFontMetrics(bold),
            char_w=max(1, QFontMetrics(font).averageCharWidth()),
        )


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


# --------------------------------------------------------------------------- documents


class DocCache:
    """Laid-out QTextDocuments by (kind, text, width, font); least recently used go first.

    The palette is not part of the key (see `_look`): a theme switch re-colours code in
    place (`CodeColorizer.restyle`, a few lines at a time) instead of laying every
    document out again.

    Code documents get their colours from `colorizer` (Pygments in a worker thread, applied
    in slices): connect its ``recolored`` signal to a repaint of the view.
    """

    def __init__(self, limit: int = 800, colorizer: CodeColorizer | None = None) -> None:
        self._docs: OrderedDict[tuple[Any, ...], tuple[QTextDocument, Colors | None]]
        self._docs = OrderedDict()
        self._limit = limit
        self.colorizer = colorizer if colorizer is not None else CodeColorizer()
        self.built = 0  # documents laid out so far (tests and timings)

    def clear(self) -> None:
        for _doc, highlighter in self._docs.values():
            self.colorizer.discard(highlighter)
        self._docs.clear()

    @staticmethod
    def _look(kind: str, text: str, theme: Theme) -> object:
        """What of the theme a document of ``kind`` holds besides its font (the text
        colour comes from the paint context, code colours are restyled in place): a
        palette switch keeps the laid-out documents."""
        if kind == "diff":
            return theme.dark
        if kind == "md" and ("](" in text or "://" in text):
            return theme.link.rgba()
        return None

    def get(self, kind: str, text: str, width: int, theme: Theme, lang: str = "") -> QTextDocument:
        key = (kind, lang, text, width, theme.key[1], self._look(kind, text, theme))
        hit = self._docs.get(key)
        if hit is not None:
            self._docs.move_to_end(key)
            if isinstance(hit[1], CodeColors):
                self.colorizer.restyle(hit[1], dark=theme.dark)
            return hit[0]
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        doc.setDefaultTextOption(option)
        highlighter: Colors | None = None
        if kind == "md":
            doc.setDefaultFont(theme.font)
            doc.setMarkdown(text)
            if "](" in text or "://" in text:
                _recolor_links(doc, theme.link)
        elif kind == "plain":
            doc.setDefaultFont(theme.font)
            doc.setPlainText(text)
        elif kind == "small":
            doc.setDefaultFont(theme.small)
            doc.setPlainText(text)
        else:  # code, diff, mono
            doc.setDefaultFont(theme.mono)
            if kind == "code":
                highlighter = self.colorizer.build(doc, text, lang, dark=theme.dark)
            else:
                if kind == "diff":
                    highlighter = DiffHighlighter(doc, dark=theme.dark)
                doc.setPlainText(text)
        doc.setTextWidth(max(20, width))
        doc.size()  # lay out now, not while painting
        self.built += 1
        self._docs[key] = (doc, highlighter)
        while len(self._docs) > self._limit:
            self.colorizer.discard(self._docs.popitem(last=False)[1][1])
        return doc


def _recolor_links(doc: QTextDocument, color: QColor) -> None:
    """Links in the view's link colour (the Markdown importer uses the app palette's)."""
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.charFormat().isAnchor():
                cursor = QTextCursor(doc)
                cursor.setPosition(frag.position())
                cursor.setPosition(frag.position() + frag.length(), QTextCursor.MoveMode.KeepAnchor)
                fmt = QTextCharFormat()
                fmt.setForeground(color)
                cursor.mergeCharFormat(fmt)
            it += 1
        block = block.next()


class ImageCache:
    """Decoded images by content block, least recently used go first."""

    def __init__(self, limit: int = 64) -> None:
        self._images: OrderedDict[int, tuple[ImageContent, QImage]] = OrderedDict()
        self._limit = limit

    def clear(self) -> None:
        self._images.clear()

    def get(self, block: ImageContent) -> QImage:
        hit = self._images.get(id(block))
        if hit is not None and hit[0] is block:
            self._images.move_to_end(id(block))
            return hit[1]
        image = QImage()
        try:
            raw = base64.b64decode(block.data, validate=False)
        except ValueError:
            raw = b""
        image.loadFromData(QByteArray(raw))
        self._images[id(block)] = (block, image)
        while len(self._images) > self._limit:
            self._images.popitem(last=False)
        return image


# --------------------------------------------------------------------------- parts


class Part:
    def paint(self, p: QPainter, theme: Theme) -> None:
        raise NotImplementedError


@dataclass
class DocPart(Part):
    x: int
    y: int
    doc: QTextDocument
    color: QColor | None = None

    def paint(self, p: QPainter, theme: Theme) -> None:
        p.save()
        p.translate(self.x, self.y)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        pal = QPalette(ctx.palette)
        pal.setColor(QPalette.ColorRole.Text, self.color or theme.text)
        pal.setColor(QPalette.ColorRole.Link, theme.link)
        ctx.palette = pal
        ctx.clip = _visible_rect(p)
        self.doc.documentLayout().draw(p, ctx)
        p.restore()


def _visible_rect(p: QPainter) -> QRectF:
    """What of the painter's device shows, in its current coordinates: documents skip the
    blocks outside it (a 1,000-line code block otherwise draws every line each paint)."""
    if p.hasClipping():
        return QRectF(p.clipBoundingRect())
    device = p.device()
    inverse, ok = p.transform().inverted()
    return inverse.mapRect(QRectF(0, 0, device.width(), device.height())) if ok else QRectF()


@dataclass
class BoxPart(Part):
    rect: QRect
    fill: QColor
    border: QColor | None = None
    radius: float = 6.0
    dashed: bool = False
    border_width: float = 1.0

    def paint(self, p: QPainter, theme: Theme) -> None:
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self.border is not None:
            pen = QPen(self.border, self.border_width)
            if self.dashed:
                pen.setStyle(Qt.PenStyle.DashLine)
            p.setPen(pen)
        else:
            p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(self.fill)
        p.drawRoundedRect(
            QRectF(self.rect).adjusted(0.5, 0.5, -0.5, -0.5), self.radius, self.radius
        )
        p.restore()


@dataclass
class TextPart(Part):
    rect: QRect
    text: str
    color: QColor
    font: QFont
    align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter

    def paint(self, p: QPainter, theme: Theme) -> None:
        p.setFont(self.font)
        p.setPen(self.color)
        p.drawText(self.rect, self.text, self.align)


@dataclass
class ButtonPart(Part):
    """A button painted on a card. With ``icon`` (a name of `gui._icons`) it is a quiet
    icon button (``text`` is then its name for tooltips and tests); ``hover`` buttons are
    painted only while the card is under the mouse or has keyboard focus."""

    rect: QRect
    text: str
    enabled: bool = True
    color: QColor | None = None
    icon: str = ""
    hover: bool = False

    def paint(self, p: QPainter, theme: Theme) -> None:
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        fg = self.color or (theme.text if self.enabled else theme.muted)
        if self.icon:
            side = min(self.rect.width(), self.rect.height()) - 6
            pixmap = tinted_icon(self.icon, _mix(theme.base, fg, 0.75), side, p)
            x = self.rect.x() + (self.rect.width() - side) // 2
            y = self.rect.y() + (self.rect.height() - side) // 2
            p.drawPixmap(x, y, pixmap)
            p.restore()
            return
        p.setPen(QPen(_mix(theme.base, fg, 0.35), 1.0))
        p.setBrush(_mix(theme.base, theme.text, 0.04))
        p.drawRoundedRect(QRectF(self.rect).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
        p.setFont(theme.small)
        p.setPen(fg)
        p.drawText(self.rect, self.text, Qt.AlignmentFlag.AlignCenter)
        p.restore()


_ICON_CACHE: OrderedDict[tuple[str, str, int, float], QPixmap] = OrderedDict()


def tinted_icon(name: str, color: QColor, side: int, p: QPainter) -> QPixmap:
    """Icon ``name`` in ``color`` at ``side`` logical pixels for painter ``p`` (cached)."""
    ratio = p.device().devicePixelRatioF()
    key = (name, color.name(), side, ratio)
    pixmap = _ICON_CACHE.get(key)
    if pixmap is None:
        pixmap = render_icon(name, color, side, ratio)
        _ICON_CACHE[key] = pixmap
        while len(_ICON_CACHE) > 64:
            _ICON_CACHE.popitem(last=False)
    return pixmap


@dataclass
class ImagePart(Part):
    rect: QRect
    image: QImage

    def paint(self, p: QPainter, theme: Theme) -> None:
        p.save()
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        p.drawImage(QRectF(self.rect), self.image)
        p.restore()


@dataclass
class Hit:
    rect: QRect
    action: str  # "sibling" | "copy" | "edit" | "retry" | "toggle"
    arg: Any = None
    tip: str = ""
    hover: bool = False
    """Only while the card is active (under the mouse or focused), like its button."""


@dataclass
class CardLayout:
    height: int = 0
    parts: list[Part] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    editor_rect: QRect | None = None

    def paint(self, p: QPainter, theme: Theme, active: bool = True) -> None:
        """Paint the card; its hover buttons only when ``active``."""
        for part in self.parts:
            if active or not (isinstance(part, ButtonPart) and part.hover):
                part.paint(p, theme)

    def hit_at(self, x: int, y: int, active: bool = True) -> Hit | None:
        for hit in reversed(self.hits):
            if hit.rect.contains(x, y) and (active or not hit.hover):
                return hit
        return None

    def hover_hits(self) -> list[Hit]:
        """The actions that appear on hover or focus, in painting order."""
        return [h for h in self.hits if h.hover]
