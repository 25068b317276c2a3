"""The pieces a chat card is painted from: theme, laid-out documents, images, parts, hits.

A `CardLayout` is a flat list of paint parts (boxes, text documents, buttons, images) in
card coordinates and a list of hit rectangles for clicks; `_cards` builds them.
"""

from __future__ import annotations

import base64
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from PySide6.QtCore import QByteArray, QRect, QRectF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QGuiApplication,
    QImage,
    QPainter,
    QPalette,
    QPen,
    QPixmap,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextOption,
)

from desktop_agent.ai import ImageContent
from desktop_agent.gui._icons import render as render_icon
from desktop_agent.gui.chat._fences import keep_line_breaks
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


GROWABLE = frozenset({"code", "mono", "plain"})
"""Document kinds a streaming row extends in place (Markdown is parsed again whole)."""
GROW_MIN_CHARS = 2_000
"""Shorter streaming documents are built again: that is as cheap and keeps them simple."""


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
        self.grown = 0  # streaming documents extended in place instead
        self._tails: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        """(kind, lang, width, theme) -> key of the streaming document that may grow."""

    def clear(self) -> None:
        for _doc, highlighter in self._docs.values():
            self.colorizer.discard(highlighter)
        self._docs.clear()
        self._tails.clear()

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

    def get(
        self,
        kind: str,
        text: str,
        width: int,
        theme: Theme,
        lang: str = "",
        *,
        grow: bool = False,
    ) -> QTextDocument:
        """The laid-out document of ``text``. ``grow``: a streaming row's; when its text
        extends the last streaming document of this kind, that document gets the new end
        (only the new lines are laid out and coloured, not the whole block again)."""
        key = (kind, lang, text, width, theme.key[1], self._look(kind, text, theme))
        tail = (kind, lang, width, theme.key[1])  # (growable kinds have no `_look`)
        hit = self._docs.get(key)
        if hit is not None:
            self._docs.move_to_end(key)
            if isinstance(hit[1], CodeColors):
                self.colorizer.restyle(hit[1], dark=theme.dark)
            if not grow and self._tails.get(tail) == key:
                del self._tails[tail]  # a finished row shows it now: it stays as it is
            return hit[0]
        if grow and kind in GROWABLE and len(text) >= GROW_MIN_CHARS:
            doc = self._grow(tail, key, text, theme)
            if doc is not None:
                return doc
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        doc.setDefaultTextOption(option)
        highlighter: Colors | None = None
        if kind == "md":
            doc.setDefaultFont(theme.font)
            doc.setMarkdown(keep_line_breaks(text))
            _space_blocks(doc, theme)
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
        if grow and kind in GROWABLE:
            self._tails[tail] = key
        while len(self._docs) > self._limit:
            dropped, (_doc, colors) = self._docs.popitem(last=False)
            self.colorizer.discard(colors)
            if self._tails.get(dropped[:2] + dropped[3:]) == dropped:
                del self._tails[dropped[:2] + dropped[3:]]
        return doc

    def _grow(
        self, tail: tuple[Any, ...], key: tuple[Any, ...], text: str, theme: Theme
    ) -> QTextDocument | None:
        old_key = self._tails.get(tail)
        if old_key is None or old_key not in self._docs:
            return None
        old_text: str = old_key[2]
        if len(text) <= len(old_text) or not text.startswith(old_text):
            return None
        doc, colors = self._docs.pop(old_key)
        first = doc.blockCount() - 1  # the old last line may go on
        cursor = QTextCursor(doc)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text[len(old_text) :])
        if isinstance(colors, CodeColors):
            self.colorizer.restyle(colors, dark=theme.dark)  # (a theme switch meanwhile)
            self.colorizer.extend(colors, text, first)
        doc.size()  # lay out the new lines now, not while painting
        self.grown += 1
        self._docs[key] = (doc, colors)
        self._tails[tail] = key
        return doc


QUOTE_INDENT = 14
"""A quote's text is this far in; its bar (`quote_bars`) is painted in that margin."""


def _space_blocks(doc: QTextDocument, theme: Theme) -> None:
    """Paragraphs apart by about half a line, list items closer, quotes in by
    `QUOTE_INDENT` (Qt's importer gives every block 6 px and a quote 40 px, so a quote
    after a list read as the list's last item: FIRST_HOUR.md m3). Qt keeps the larger of
    two neighbours' margins, not their sum."""
    para = max(6, theme.line // 2)
    first, last = doc.begin(), doc.lastBlock()
    block = first
    while block.isValid():
        fmt = block.blockFormat()
        quote = fmt.intProperty(QTextFormat.Property.BlockQuoteLevel)
        gap = 3 if block.textList() is not None else para
        top = 0 if block == first else gap
        bottom = 0 if block == last else gap
        left = QUOTE_INDENT * quote if quote else fmt.leftMargin()
        if (fmt.topMargin(), fmt.bottomMargin(), fmt.leftMargin()) != (top, bottom, left):
            fmt.setTopMargin(top)
            fmt.setBottomMargin(bottom)
            fmt.setLeftMargin(left)
            QTextCursor(block).setBlockFormat(fmt)
        block = block.next()


def quote_bars(doc: QTextDocument) -> list[QRect]:
    """Where the bars left of a Markdown document's quotes go (document coordinates)."""
    bars: list[QRect] = []
    layout = doc.documentLayout()
    block = doc.begin()
    while block.isValid():
        level = block.blockFormat().intProperty(QTextFormat.Property.BlockQuoteLevel)
        if level:
            r = layout.blockBoundingRect(block)
            x = QUOTE_INDENT * (level - 1) + 2
            top, bottom = int(r.top()), int(r.bottom() - block.blockFormat().bottomMargin())
            if bars and bars[-1].x() == x and bars[-1].bottom() >= top - 8:
                bars[-1].setBottom(bottom)
            else:
                bars.append(QRect(x, top, 3, bottom - top))
        block = block.next()
    return bars


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
    height: int = 0
    """The document's height, its length and the top of its last block when this part
    was laid out: a growing document (`DocCache.get`) changes after that."""
    chars: int = 0
    tail_top: int = 0

    @staticmethod
    def of(x: int, y: int, doc: QTextDocument, color: QColor | None) -> DocPart:
        tail = doc.documentLayout().blockBoundingRect(doc.lastBlock()).top()
        height = int(doc.size().height() + 0.999)
        return DocPart(x, y, doc, color, height, doc.characterCount(), int(tail))

    def paint(self, p: QPainter, theme: Theme, marks: Sequence[Mark] = ()) -> None:
        p.save()
        p.translate(self.x, self.y)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        pal = QPalette(ctx.palette)
        pal.setColor(QPalette.ColorRole.Text, self.color or theme.text)
        pal.setColor(QPalette.ColorRole.Link, theme.link)
        ctx.palette = pal
        ctx.clip = visible_rect(p)
        if marks:  # text selected in place (gui/chat/_select.py), find hits (_find.py)
            ctx.selections = [_selection(self.doc, mark) for mark in marks]
        self.doc.documentLayout().draw(p, ctx)
        p.restore()


Mark = tuple[int, int, int]
"""(start, end, kind) of text marked in a document: kind `SELECTED`, `FOUND` or
`FOUND_CURRENT`."""
SELECTED, FOUND, FOUND_CURRENT = 0, 1, 2


def _selection(doc: QTextDocument, mark: Mark) -> QAbstractTextDocumentLayout.Selection:
    start, end, kind = mark
    selection = QAbstractTextDocumentLayout.Selection()
    cursor = QTextCursor(doc)
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    selection.cursor = cursor
    look = QTextCharFormat()
    palette = QGuiApplication.palette()
    if kind == FOUND:
        look.setBackground(QColor(255, 214, 0, 110))
    else:
        look.setBackground(palette.color(QPalette.ColorRole.Highlight))
        look.setForeground(palette.color(QPalette.ColorRole.HighlightedText))
    selection.format = look
    return selection


def visible_rect(p: QPainter) -> QRectF:
    """What of the painter's device shows, in its current coordinates: documents skip the
    blocks outside it (a 1,000-line code block otherwise draws every line each paint)."""
    if p.hasClipping():
        return QRectF(p.clipBoundingRect())
    device = p.device()
    inverse, ok = p.transform().inverted()
    return inverse.mapRect(QRectF(0, 0, device.width(), device.height())) if ok else QRectF()


def changed_from(old: CardLayout, new: CardLayout) -> int | None:
    """The first y (card coordinates) below which ``new`` may paint differently from
    ``old`` (the same row, one version on), or None when both paint the same. A streaming
    card changes at its end: only that part of it is painted again."""
    ys: list[int] = []
    for i, part in enumerate(new.parts):
        prev = old.parts[i] if i < len(old.parts) else None
        if prev is None or type(prev) is not type(part):
            ys.append(_top(part))
        elif isinstance(part, DocPart) and isinstance(prev, DocPart):
            if part.doc is not prev.doc or (part.x, part.y, part.color) != (
                prev.x,
                prev.y,
                prev.color,
            ):
                ys.append(min(part.y, prev.y))
            elif (part.height, part.chars) != (prev.height, prev.chars):
                ys.append(part.y + prev.tail_top)  # it grew: from its old last block on
        elif isinstance(part, BoxPart) and isinstance(prev, BoxPart):
            a, b = part.rect, prev.rect
            if part == prev:
                continue
            same_top = (a.top(), a.left(), a.width()) == (b.top(), b.left(), b.width())
            if same_top and (part.fill, part.border, part.radius) == (
                prev.fill,
                prev.border,
                prev.radius,
            ):
                ys.append(min(a.bottom(), b.bottom()) - int(part.radius) - 2)  # its end moved
            else:
                ys.append(min(a.top(), b.top()))
        elif isinstance(part, ImagePart) and isinstance(prev, ImagePart):
            if part.image is not prev.image or part.rect != prev.rect:
                ys.append(min(part.rect.top(), prev.rect.top()))
        elif part != prev:
            ys.append(min(_top(part), _top(prev)))
    ys.extend(_top(p) for p in old.parts[len(new.parts) :])
    if old.height != new.height:
        ys.append(min(old.height, new.height) - 12)
    return max(0, min(ys)) if ys else None


def _top(part: Part) -> int:
    if isinstance(part, DocPart):
        return part.y
    rect = getattr(part, "rect", None)
    return rect.top() if isinstance(rect, QRect) else 0


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
        rect = QRectF(self.rect).adjusted(0.5, 0.5, -0.5, -0.5)
        if not self.dashed:  # (a dashed border's pattern starts at its corner)
            # A tall card or code box is filled only where it shows: its corners outside
            # the visible part are never drawn, so what shows is the same, and an
            # antialiased 4,000-pixel rounded rectangle is not rasterized for a few lines.
            seen = visible_rect(p)
            if not seen.isEmpty():
                pad = self.radius + self.border_width + 2
                rect.setTop(max(rect.top(), seen.top() - pad))
                rect.setBottom(min(rect.bottom(), seen.bottom() + pad))
                if rect.bottom() <= rect.top():
                    p.restore()
                    return
        p.drawRoundedRect(rect, self.radius, self.radius)
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
        # One line, always: (rect, text, align) picks the QTextOption overload, which wraps
        # words, so a model's name "mock-gpt" measured a pixel short became "mock-" over a
        # cut-off "gpt" in a real X window.
        p.drawText(self.rect, int(self.align | Qt.TextFlag.TextSingleLine), self.text)


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


class CardAction(StrEnum):
    """What a click on a card's button or toggle does (`ChatPane` carries it out)."""

    COPY = "copy"
    """Copy the message, or a code block (the hit's argument)."""
    EDIT = "edit"
    REGENERATE = "regenerate"
    RETRY = "retry"
    SIBLING = "sibling"
    """Show the previous (-1) or next (+1) version."""
    TOGGLE = "toggle"
    """Open or close the part named by the argument (thinking, a tool, a summary)."""
    OPEN = "open"
    """Open the file named by the argument with the desktop's application (the whole
    output of a command whose card shows part of it)."""


@dataclass
class Hit:
    rect: QRect
    action: CardAction
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

    def paint(
        self,
        p: QPainter,
        theme: Theme,
        active: bool = True,
        marks: dict[int, list[Mark]] | None = None,
    ) -> None:
        """Paint the card; its hover buttons only when ``active``; ``marks``: text marked
        in some of its documents (selected, found), by part index."""
        for i, part in enumerate(self.parts):
            if marks and i in marks and isinstance(part, DocPart):
                part.paint(p, theme, marks[i])
            elif active or not (isinstance(part, ButtonPart) and part.hover):
                part.paint(p, theme)

    def hit_at(self, x: int, y: int, active: bool = True) -> Hit | None:
        for hit in reversed(self.hits):
            if hit.rect.contains(x, y) and (active or not hit.hover):
                return hit
        return None

    def hover_hits(self) -> list[Hit]:
        """The actions that appear on hover or focus, in painting order."""
        return [h for h in self.hits if h.hover]
