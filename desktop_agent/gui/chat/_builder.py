"""Card building blocks: the sizes of a card, text clipping, and `CardBuilder`, which
lays out documents, buttons, code blocks, thinking, images, tool cards and error boxes in
card coordinates. What each kind of message is made of is `_cards`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QRect, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics

from desktop_agent.ai import (
    AssistantMessage,
    ImageContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)
from desktop_agent.gui._tr import QT_TRANSLATE_NOOP
from desktop_agent.gui.chat._fences import split_markdown
from desktop_agent.gui.chat._gutter import LineNumbers, gutter_width
from desktop_agent.gui.chat._items import ChatItem
from desktop_agent.gui.chat._parts import (
    BoxPart,
    ButtonPart,
    CardAction,
    CardLayout,
    DocCache,
    DocPart,
    Hit,
    ImageCache,
    ImagePart,
    TextPart,
    Theme,
    quote_bars,
)
from desktop_agent.gui.chat._tool_text import (
    clip_lines,
    numbered_lines,
    pretty_arguments,
    result_text,
    tool_args_summary,
)
from desktop_agent.workbench import error_attempt_text


def _tr(text: str) -> str:
    return QCoreApplication.translate("ChatCard", text)


MARGIN_X = 12  # card to view edge
MARGIN_Y = 5  # card to card (half)
PAD = 10  # inside a card
GAP = 6  # between blocks inside a card
MAX_TEXT_CHARS = 200_000  # longer message text is cut in the view (Copy still copies all)
TOOL_LINES_COLLAPSED = 12
TOOL_LINES_EXPANDED = 400
TOOL_CHARS_EXPANDED = 60_000
EDITOR_HEIGHT = 150
IMAGE_MAX_HEIGHT = 260
MAX_TEXT_WIDTH = 760
"""The chat column: cards are at most this wide inside (readable lines), centred."""


def column(width: int) -> tuple[int, int]:
    """(left edge, width) of the centred card column in a view ``width`` wide."""
    col = min(width, MAX_TEXT_WIDTH + 2 * (MARGIN_X + PAD))
    return (width - col) // 2, col


CODE_INDENT = 16  # a code block per enclosing list item or quote


@dataclass
class LiveTool:
    """A tool call the agent is running now (events from the harness)."""

    name: str
    args: dict[str, Any]
    output: str = ""
    result: ToolResultMessage | None = None
    waiting: bool = False
    """Waiting for the user's approval (the approval dialog is open)."""


@dataclass
class RowState:
    """Everything one row's picture depends on, besides width and theme."""

    item: ChatItem
    expanded: frozenset[str]
    streaming: bool
    is_last: bool
    editing: bool


class CardBuilder:
    def __init__(
        self, width: int, theme: Theme, docs: DocCache, images: ImageCache, live: LiveLookup
    ) -> None:
        self.t = theme
        self.docs = docs
        self.images = images
        self.live = live
        self.out = CardLayout()
        self.x0, col = column(width)
        self.left = self.x0 + MARGIN_X + PAD
        self.right = self.x0 + col - MARGIN_X - PAD
        self.y = MARGIN_Y + PAD
        self.grow = False
        """The row streams: its long plain documents grow in place (`DocCache.get`)."""

    @property
    def w(self) -> int:
        return max(40, self.right - self.left)

    # -- primitives

    def doc(self, kind: str, text: str, color: QColor | None = None, lang: str = "") -> None:
        d = self.docs.get(kind, text, self.w, self.t, lang, grow=self.grow)
        self.out.parts.append(DocPart.of(self.left, self.y, d, color))
        self.y += int(d.size().height() + 0.999)

    def button(self, right: int, text: str, action: CardAction, arg: Any = None, **kw: Any) -> int:
        """Add a button whose right edge is at ``right``; return its left edge."""
        fm = self.t.fm_small
        icon = str(kw.pop("icon", ""))
        hover = bool(kw.pop("hover", False))
        bh = self.t.small_line + 6
        bw = bh + 4 if icon else fm.horizontalAdvance(text) + 14
        rect = QRect(right - bw, self.y, bw, bh)
        enabled = bool(kw.pop("enabled", True))
        color = kw.pop("color", None)
        self.out.parts.append(ButtonPart(rect, text, enabled, color, icon, hover))
        if enabled:
            self.out.hits.append(Hit(rect, action, arg, kw.pop("tip", ""), hover))
        return right - bw

    def full_output(self, text: str | None, path: str) -> None:
        """The note of an output shown in part (if ``text``), and a button that opens all
        of it (m15: the path was plain text)."""
        self.y += 2
        if text is not None:
            self.doc("small", text, self.t.muted)
            self.y += 2
        self.button(self.right, _tr("Open full output"), CardAction.OPEN, path, tip=path)
        self.y += self.t.small_line + 6

    def text_line(self, x: int, text: str, color: QColor, font: QFont, h: int) -> int:
        fm = QFontMetrics(font)
        text = fm.elidedText(text, Qt.TextElideMode.ElideRight, max(10, self.right - x))
        w = fm.horizontalAdvance(text) + 1
        self.out.parts.append(TextPart(QRect(x, self.y, w, h), text, color, font))
        return x + w

    def toggle_line(self, key: str, title: str, extra: str, expanded: bool) -> None:
        h = max(self.t.line, self.t.small_line + 6)
        arrow = "▾ " if expanded else "▸ "
        x = self.text_line(self.left, arrow + title, self.t.text, self.t.bold, h)
        end = x
        if extra:
            end = self.text_line(x + 6, extra, self.t.muted, self.t.small, h)
        self.out.hits.append(
            Hit(QRect(self.left, self.y, end - self.left, h), CardAction.TOGGLE, key)
        )
        self.y += h

    # -- card pieces

    def header(
        self, state: RowState, title: str, subtitle: str, buttons: list[HoverButton]
    ) -> None:
        """A quiet role marker, the version switcher and the card's hover actions."""
        t = self.t
        h = max(t.line, t.small_line + 6)
        right = self.right
        for text, action, icon_name, tip in reversed(buttons):
            right = self.button(right, text, action, icon=icon_name, hover=True, tip=tip) - 2
        item = state.item
        if item.sibling_count > 1 and item.entry_id is not None:
            idx, count = item.sibling_index, item.sibling_count
            right = self.button(
                right, "›", CardAction.SIBLING, 1, enabled=idx < count - 1, tip=_tr("Next version")
            )
            label = f"{idx + 1}/{count}"
            lw = t.fm_small.horizontalAdvance(label) + 8
            right -= lw
            self.out.parts.append(
                TextPart(
                    QRect(right, self.y, lw, h),
                    label,
                    t.muted,
                    t.small,
                    Qt.AlignmentFlag.AlignCenter,
                )
            )
            right = (
                self.button(
                    right, "‹", CardAction.SIBLING, -1, enabled=idx > 0, tip=_tr("Previous version")
                )
                - 6
            )
        saved_right = self.right
        self.right = right - 6
        x = self.text_line(self.left, title, t.muted, t.small, h)
        if subtitle:
            x = self.text_line(x + 8, subtitle, t.muted, t.small, h)
        if item.label:
            self.text_line(x + 8, f"[{item.label}]", t.link, t.small, h)
        self.right = saved_right
        self.y += h + GAP

    def markdown(self, text: str, color: QColor | None = None) -> None:
        if len(text) > MAX_TEXT_CHARS:
            text = (
                text[:MAX_TEXT_CHARS]
                + "\n\n*"
                + _tr("[... {n} more characters; Copy copies all]").format(
                    n=f"{len(text) - MAX_TEXT_CHARS:,}"
                )
                + "*"
            )
        first = True
        segments = split_markdown(text)
        growing = self.grow
        for n, seg in enumerate(segments):
            if not first:
                self.y += GAP
            first = False
            self.grow = growing and n == len(segments) - 1  # only the end still grows
            if seg.kind == "md":
                top = self.y
                self.doc("md", seg.text, color)
                if ">" in seg.text:
                    doc = self.out.parts[-1]
                    assert isinstance(doc, DocPart)
                    for bar in quote_bars(doc.doc):
                        self.out.parts.append(
                            BoxPart(bar.translated(self.left, top), self.t.border, None, 1)
                        )
            else:
                # A fence inside list items or quotes is indented as deep as they are.
                indent = min(seg.depth, 4) * CODE_INDENT
                self.left += indent
                self.code_block(seg.text, seg.lang)
                self.left -= indent
        self.grow = growing

    def code_block(
        self, code: str, lang: str, kind: str = "code", numbers: tuple[int, int] | None = None
    ) -> None:
        """A fenced block: its language, Copy, the code in colours; ``numbers``: (first,
        count) of a file's lines, numbered in a gutter (p18)."""
        t = self.t
        top = self.y
        box_index = len(self.out.parts)
        self.y += 4
        # language label and copy button on one line
        bh = t.small_line + 6
        saved = self.left, self.right
        self.left += 8
        self.right -= 4
        self.text_line(
            self.left, lang or ("diff" if kind == "diff" else _tr("code")), t.muted, t.small, bh
        )
        self.button(self.right, _tr("Copy"), CardAction.COPY, code, tip=_tr("Copy code"))
        self.y += bh + 2
        shown = clip_lines(code.rstrip("\n"), 2000, MAX_TEXT_CHARS)
        if "\r" in shown:  # the colours' offsets count a line end as one character
            shown = shown.replace("\r\n", "\n").replace("\r", "\n")
        if numbers is not None and numbers[1] > 0:
            first, count = numbers
            gutter = gutter_width(t, first + count - 1)
            top_of_doc = self.y
            self.left += gutter
            self.doc(kind, shown, lang=lang)
            self.left -= gutter
            doc = self.out.parts[-1]
            assert isinstance(doc, DocPart)
            rect = QRect(self.left, top_of_doc, gutter, doc.height)
            self.out.parts.append(LineNumbers(rect, doc.doc, first, count))
        else:
            self.doc(kind, shown, lang=lang)
        self.left, self.right = saved
        self.y += 8
        self.out.parts.insert(
            box_index, BoxPart(QRect(self.left, top, self.w, self.y - top), t.code_bg, t.border, 5)
        )

    def thinking(self, key: str, block: ThinkingContent, expanded: bool) -> None:
        if block.redacted:
            self.toggle_line(key, _tr("Thinking"), _tr("(redacted)"), False)
            return
        n = len(block.thinking)
        chars = _tr("{n} characters").format(n=f"{n:,}") if n else ""
        self.toggle_line(key, _tr("Thinking"), chars, expanded)
        if expanded and block.thinking:
            self.y += 2
            saved = self.left
            self.left += 14
            top = self.y
            self.doc("plain", clip_lines(block.thinking, 5000, MAX_TEXT_CHARS), self.t.muted)
            self.out.parts.append(
                BoxPart(QRect(saved + 4, top, 2, self.y - top), self.t.border, None, 1)
            )
            self.left = saved

    def image(self, block: ImageContent) -> None:
        img = self.images.get(block)
        if img.isNull():
            self.doc(
                "small",
                _tr("[image {mime} could not be shown]").format(mime=block.mime_type),
                self.t.muted,
            )
            return
        scale = min(1.0, self.w / max(1, img.width()), IMAGE_MAX_HEIGHT / max(1, img.height()))
        w, h = max(1, int(img.width() * scale)), max(1, int(img.height() * scale))
        self.out.parts.append(ImagePart(QRect(self.left, self.y, w, h), img))
        self.y += h

    def tool_card(
        self,
        call_id: str,
        name: str,
        call: ToolCall | None,
        result: ToolResultMessage | None,
        live: LiveTool | None,
        expanded: bool,
        interrupted: bool = False,
    ) -> None:
        t = self.t
        top = self.y
        box_index = len(self.out.parts)
        saved = self.left, self.right
        self.left += 8
        self.right -= 8
        self.y += 6
        error = result is not None and result.is_error
        stopped = error and result is not None and _stopped(result)
        error = error and not stopped  # the user's choice: not an error (p14)
        if result is not None:
            status = _tr("stopped") if stopped else _tr("error") if error else _tr("done")
            details = result.details if isinstance(result.details, dict) else {}
            code = details.get("exitCode")
            if isinstance(code, int) and code != 0:
                status = _tr("exit {code}").format(code=code)
        elif live is not None:
            status = _tr("waiting for approval") if live.waiting else _tr("running…")
        elif interrupted:
            status = _tr("interrupted")
        else:
            status = _tr("not run")
        h = max(t.line, t.small_line + 6)
        # The output shows either way: the toggle is for the details (the arguments,
        # more lines), said in words at the right, not by an arrow by the name that
        # read as "closed" above visible output (FIRST_HOUR.md p6).
        details_text = (_tr("Hide details") if expanded else _tr("Details")) + " ·"
        dw = t.fm_small.horizontalAdvance(details_text) + 2
        sw = t.fm_small.horizontalAdvance(status) + 2
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        self.out.parts.append(
            TextPart(
                QRect(self.right - sw - 4 - dw, self.y, dw, h),
                details_text,
                t.muted,
                t.small,
                right,
            )
        )
        self.out.parts.append(
            TextPart(
                QRect(self.right - sw, self.y, sw, h),
                status,
                t.red if error else t.muted,
                t.small,
                right,
            )
        )
        self.right -= sw + 8 + dw + 4
        x = self.text_line(self.left, name, t.red if error else t.text, t.bold, h)
        if call is not None:
            self.text_line(x + 8, tool_args_summary(call).replace("\n", " ⏎ "), t.muted, t.small, h)
        self.right += sw + 8 + dw + 4
        self.out.hits.append(
            Hit(
                QRect(saved[0], top, saved[1] - saved[0], h + 6),
                CardAction.TOGGLE,
                f"tool:{call_id}",
            )
        )
        self.y += h + 4
        if expanded and call is not None and call.arguments:
            try:
                args = pretty_arguments(call.arguments, TOOL_CHARS_EXPANDED)
            except (TypeError, ValueError):
                args = str(call.arguments)
            self.doc("mono", clip_lines(args, TOOL_LINES_EXPANDED, TOOL_CHARS_EXPANDED), t.muted)
            self.y += 4
        lines = TOOL_LINES_EXPANDED if expanded else TOOL_LINES_COLLAPSED
        chars = TOOL_CHARS_EXPANDED if expanded else 4_000
        if result is not None:
            details = result.details if isinstance(result.details, dict) else {}
            diff = details.get("diff")
            if stopped:  # (the model reads "Aborted"; the person did it)
                before = details.get("notRun") is True
                note = _tr("Stopped before it ran.") if before else _tr("You stopped it.")
                self.doc("small", note, t.muted)
            elif isinstance(diff, str) and diff and not error:
                self.code_block(clip_lines(diff, lines, chars), "", kind="diff")
            else:
                text = result_text(result)
                path = call.arguments.get("path") if call is not None else None
                if text and name == "read" and not error and isinstance(path, str):
                    # A file's text in its language's colours, named, its lines numbered
                    # from where the read began (p18).
                    shown = clip_lines(text, lines, chars)
                    name = path.replace("\\", "/").rsplit("/", 1)[-1]
                    self.code_block(shown, name, numbers=numbered_lines(text, shown, details, call))
                elif text:
                    shown = clip_lines(text, lines, chars, middle=True)
                    self.doc("mono", shown, t.red if error else None)
            for block in result.content:
                if isinstance(block, ImageContent):
                    self.y += 4
                    self.image(block)
            path = details.get("fullOutputPath")
            if isinstance(path, str) and details.get("truncated"):
                # (the tool's text already ends with "[… Full output: <path>]")
                self.full_output(None, path)
        elif live is not None and live.output:
            self.doc("mono", clip_lines(live.output, lines, chars, tail=True), t.muted)
        elif interrupted:
            self.doc("small", _tr(INTERRUPTED_NOTE), t.red)
        self.y += 6
        self.left, self.right = saved
        border = t.red if error else t.border
        self.out.parts.insert(
            box_index,
            BoxPart(
                QRect(self.left, top, self.w, self.y - top),
                t.tool_bg,
                border,
                5,
                border_width=1.5 if error else 1.0,
            ),
        )

    def error_box(
        self, message: AssistantMessage, retry: bool, attempts: list[AssistantMessage]
    ) -> None:
        """One card for a request and all its failed attempts (retries do not pile up)."""
        t = self.t
        top = self.y
        box_index = len(self.out.parts)
        saved = self.left, self.right
        self.left += 8
        self.right -= 8
        self.y += 6
        aborted = message.stop_reason == "aborted"  # the user's choice: not an error (p14)
        title = _tr("Stopped") if aborted else _tr("Error")
        fg, bg = (t.muted, t.card_notice) if aborted else (t.red, t.red_bg)
        if attempts and not aborted:
            title = _tr("Error · {n} attempts").format(n=len(attempts) + 1)
        if retry and aborted:  # a new answer, not a retry after a failure (p14)
            left = self.button(
                self.right,
                _tr("Answer again"),
                CardAction.RETRY,
                tip=_tr("Ask for this answer again"),
            )
            self.right = min(self.right - 60, left - 8)
        elif retry:
            self.button(
                self.right, _tr("Retry"), CardAction.RETRY, tip=_tr("Send the request again")
            )
            self.right -= 60
        self.text_line(self.left, title, fg, t.bold, max(t.line, t.small_line + 6))
        self.y += max(t.line, t.small_line + 6) + 2
        self.right = saved[1] - 8
        if aborted:
            text = _tr("You stopped this answer; what came before is kept.")
        else:
            lines = [error_attempt_text(m) for m in [*attempts, message]]
            if len(lines) > 1:
                lines = [f"{i}. {line}" for i, line in enumerate(lines, 1)]
            text = "\n".join(lines)
        self.doc("plain", clip_lines(text, 40, 8000), t.text)
        self.y += 6
        self.left, self.right = saved
        self.out.parts.insert(
            box_index, BoxPart(QRect(self.left, top, self.w, self.y - top), bg, fg, 5)
        )


def _stopped(result: ToolResultMessage) -> bool:
    """Whether the user stopped the tool (its result says so in its details)."""
    return isinstance(result.details, dict) and result.details.get("aborted") is True


LiveLookup = Callable[[str], LiveTool | None]

HoverButton = tuple[str, CardAction, str, str]
"""(name, action, icon, tooltip) of a hover action of a card."""

INTERRUPTED_NOTE = QT_TRANSLATE_NOOP(
    "ChatCard", "The app stopped before this tool finished. The agent was told it was interrupted."
)
