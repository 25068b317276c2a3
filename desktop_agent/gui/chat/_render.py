"""Card layouts: what one chat row paints, where its buttons are, and how tall it is.

A `CardLayout` is built for one row at one width and kept in a cache by the delegate; it is
a flat list of paint parts (boxes, text documents, buttons, images) in card coordinates and
a list of hit rectangles for clicks. Building one is the only expensive step (QTextDocument
layout), so only visible rows are built; the rest of the list uses `estimate_height`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QRect, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics

from desktop_agent.ai import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.gui._tr import QT_TRANSLATE_NOOP
from desktop_agent.gui.chat._fences import split_markdown
from desktop_agent.gui.chat._items import ChatItem
from desktop_agent.gui.chat._parts import (
    BoxPart,
    ButtonPart,
    CardLayout,
    DocCache,
    DocPart,
    Hit,
    ImageCache,
    ImagePart,
    Part,
    TextPart,
    Theme,
    quote_bars,
)
from desktop_agent.utils.text import content_text, message_text
from desktop_agent.workbench import error_attempt_text

log = logging.getLogger(__name__)

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


# --------------------------------------------------------------------------- helpers


def _clip_lines(
    text: str, max_lines: int, max_chars: int, *, tail: bool = False, middle: bool = False
) -> str:
    """At most ``max_lines`` lines: the first ones, the last ones (``tail``), or both
    ends (``middle``: a command's output, whose end says how it went: m15)."""
    lines = text.split("\n")
    more = len(lines) - max_lines
    if more > 1:  # never "[... 1 more lines]" in place of the one line itself (p5)
        if middle:
            head = (max_lines + 1) // 2
            gap = _tr("[... {n} more lines]").format(n=more)
            lines = [*lines[:head], gap, *lines[len(lines) - (max_lines - head) :]]
        elif tail:
            lines = [_tr("[... {n} earlier lines]").format(n=more), *lines[-max_lines:]]
        else:
            lines = [*lines[:max_lines], _tr("[... {n} more lines]").format(n=more)]
    out = "\n".join(lines)
    if len(out) > max_chars:
        out = (
            out[:max_chars]
            + "\n"
            + _tr("[... {n} more characters]").format(n=f"{len(out) - max_chars:,}")
        )
    return out


def _tool_args_summary(call: ToolCall) -> str:
    args = call.arguments
    for key in ("command", "path", "pattern", "file_path"):
        value = args.get(key)
        if isinstance(value, str):
            return ("$ " if key == "command" else "") + value
    try:
        return json.dumps(args, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(args)


_PRETTY_NESTED_CHARS = 20_000


def pretty_arguments(arguments: dict[str, Any], max_chars: int) -> str:
    """What ``json.dumps(arguments, indent=2)`` gives, at the C encoder's speed.

    With ``indent`` Python's json uses its pure-Python encoder: arguments of 5,000 small
    items took 27 ms of the GUI thread to show an expanded card. So the top level is
    laid out here and each value goes through the C encoder, indented as json would
    when it is small; a string longer than ``max_chars`` is cut to that first (only so
    much is shown), and a big list or mapping stays on one line.
    """
    lines = []
    for key, value in arguments.items():
        shown = value[:max_chars] if isinstance(value, str) else value
        text = json.dumps(shown, ensure_ascii=False)
        if isinstance(shown, dict | list) and len(text) <= _PRETTY_NESTED_CHARS:
            text = json.dumps(shown, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        lines.append(f"  {json.dumps(key, ensure_ascii=False)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}" if lines else "{}"


def _result_text(result: ToolResultMessage) -> str:
    return content_text(result.content)


@dataclass
class LiveTool:
    """A tool call the agent is running now (events from the harness)."""

    name: str
    args: dict[str, Any]
    output: str = ""
    result: ToolResultMessage | None = None
    waiting: bool = False
    """Waiting for the user's approval (the approval dialog is open)."""


# --------------------------------------------------------------------------- builder


@dataclass
class RowState:
    """Everything one row's picture depends on, besides width and theme."""

    item: ChatItem
    expanded: frozenset[str]
    streaming: bool
    is_last: bool
    editing: bool


class _Builder:
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

    def button(self, right: int, text: str, action: str, arg: Any = None, **kw: Any) -> int:
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
        self.out.hits.append(Hit(QRect(self.left, self.y, end - self.left, h), "toggle", key))
        self.y += h

    # -- card pieces

    def header(self, state: RowState, title: str, subtitle: str, buttons: list[CardAction]) -> None:
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
                right, "›", "sibling", 1, enabled=idx < count - 1, tip=_tr("Next version")
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
                self.button(right, "‹", "sibling", -1, enabled=idx > 0, tip=_tr("Previous version"))
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

    def code_block(self, code: str, lang: str, kind: str = "code") -> None:
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
        self.button(self.right, _tr("Copy"), "copy", code, tip=_tr("Copy code"))
        self.y += bh + 2
        shown = _clip_lines(code.rstrip("\n"), 2000, MAX_TEXT_CHARS)
        if "\r" in shown:  # the colours' offsets count a line end as one character
            shown = shown.replace("\r\n", "\n").replace("\r", "\n")
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
            self.doc("plain", _clip_lines(block.thinking, 5000, MAX_TEXT_CHARS), self.t.muted)
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
        if result is not None:
            status = _tr("error") if error else _tr("done")
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
            self.text_line(
                x + 8, _tool_args_summary(call).replace("\n", " ⏎ "), t.muted, t.small, h
            )
        self.right += sw + 8 + dw + 4
        self.out.hits.append(
            Hit(QRect(saved[0], top, saved[1] - saved[0], h + 6), "toggle", f"tool:{call_id}")
        )
        self.y += h + 4
        if expanded and call is not None and call.arguments:
            try:
                args = pretty_arguments(call.arguments, TOOL_CHARS_EXPANDED)
            except (TypeError, ValueError):
                args = str(call.arguments)
            self.doc("mono", _clip_lines(args, TOOL_LINES_EXPANDED, TOOL_CHARS_EXPANDED), t.muted)
            self.y += 4
        lines = TOOL_LINES_EXPANDED if expanded else TOOL_LINES_COLLAPSED
        chars = TOOL_CHARS_EXPANDED if expanded else 4_000
        if result is not None:
            details = result.details if isinstance(result.details, dict) else {}
            diff = details.get("diff")
            if isinstance(diff, str) and diff and not error:
                self.code_block(_clip_lines(diff, lines, chars), "", kind="diff")
            else:
                text = _result_text(result)
                if text:
                    shown = _clip_lines(text, lines, chars, middle=True)
                    self.doc("mono", shown, t.red if error else None)
            for block in result.content:
                if isinstance(block, ImageContent):
                    self.y += 4
                    self.image(block)
            path = details.get("fullOutputPath")
            if isinstance(path, str) and details.get("truncated"):
                self.y += 2
                self.doc("small", _tr("Full output: {path}").format(path=path), t.muted)
        elif live is not None and live.output:
            self.doc("mono", _clip_lines(live.output, lines, chars, tail=True), t.muted)
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
        if retry:
            self.button(self.right, _tr("Retry"), "retry", tip=_tr("Send the request again"))
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
        self.doc("plain", _clip_lines(text, 40, 8000), t.text)
        self.y += 6
        self.left, self.right = saved
        self.out.parts.insert(
            box_index, BoxPart(QRect(self.left, top, self.w, self.y - top), bg, fg, 5)
        )


LiveLookup = Callable[[str], LiveTool | None]

CardAction = tuple[str, str, str, str]
"""(name, action, icon, tooltip) of a hover action of a card."""

_ACTIONS: dict[str, tuple[str, str, str]] = {
    # name: (action, icon, tooltip); the shortcuts are the window's (gui/_actions.py)
    QT_TRANSLATE_NOOP("ChatCard", "Copy"): (
        "copy",
        "copy",
        QT_TRANSLATE_NOOP("ChatCard", "Copy the message (Ctrl+Shift+C)"),
    ),
    QT_TRANSLATE_NOOP("ChatCard", "Edit"): (
        "edit",
        "edit",
        QT_TRANSLATE_NOOP("ChatCard", "Edit and send again (Ctrl+E)"),
    ),
    QT_TRANSLATE_NOOP("ChatCard", "Regenerate"): (
        "regenerate",
        "retry",
        QT_TRANSLATE_NOOP("ChatCard", "A new version of this answer (Ctrl+R on the last one)"),
    ),
}


def _tr(text: str) -> str:
    return QCoreApplication.translate("ChatCard", text)


def _content_of(block: object) -> str:
    """The line a block of an unknown type is shown as."""
    return _tr("[{type} content]").format(type=getattr(block, "type", "?"))


def _failed_reply(message: AssistantMessage) -> bool:
    """A failed or stopped reply: its card has Retry, not Regenerate."""
    return message.stop_reason in ("error", "aborted")


def _action(name: str) -> CardAction:
    action, icon_name, tip = _ACTIONS[name]
    return (_tr(name), action, icon_name, _tr(tip))


def build_card(
    state: RowState, width: int, theme: Theme, docs: DocCache, images: ImageCache, live: LiveLookup
) -> CardLayout:
    """Lay out one row. Never raises: a row that cannot be shown becomes a placeholder."""
    b = _Builder(width, theme, docs, images, live)
    b.grow = state.streaming
    try:
        _build(b, state)
    except Exception:  # habit 8: a damaged row is a placeholder, not a crash
        log.exception("could not lay out a chat row")
        b = _Builder(width, theme, docs, images, live)
        b.doc("small", _tr("[this message could not be displayed]"), theme.muted)
        b.y += PAD
        _card_box(b, theme.card_notice, theme.border, dashed=True)
    return b.out


def _card_box(b: _Builder, fill: QColor, border: QColor | None, *, dashed: bool = False) -> None:
    left = b.x0 + MARGIN_X
    rect = QRect(left, MARGIN_Y, b.right + PAD - left, b.y - MARGIN_Y)
    b.out.parts.insert(0, BoxPart(rect, fill, border, 8, dashed))
    b.out.height = b.y + MARGIN_Y


def _build(b: _Builder, state: RowState) -> None:
    t = b.t
    msg = state.item.message
    expanded = state.expanded
    if isinstance(msg, UserMessage):
        buttons = [_action("Copy")]
        if state.item.entry_id is not None:
            buttons.append(_action("Edit"))
        b.header(
            state,
            QCoreApplication.translate("ChatCard", "You"),
            "",
            [] if state.editing else buttons,
        )
        if state.editing:
            b.out.editor_rect = QRect(b.left, b.y, b.w, EDITOR_HEIGHT)
            b.y += EDITOR_HEIGHT
        elif isinstance(msg.content, str):
            b.doc("plain", _clip_lines(msg.content, 20_000, MAX_TEXT_CHARS))
        else:
            _user_blocks(b, msg.content)
        b.y += PAD
        _card_box(b, t.card_user, t.border)
    elif isinstance(msg, AssistantMessage):
        subtitle = QCoreApplication.translate("ChatCard", "streaming…") if state.streaming else ""
        buttons = [] if state.streaming else [_action("Copy")]
        if not state.streaming and state.item.entry_id is not None and not _failed_reply(msg):
            buttons.append(_action("Regenerate"))
        b.header(
            state,
            msg.model or QCoreApplication.translate("ChatCard", "Assistant"),
            subtitle,
            buttons,
        )
        _assistant_blocks(b, state, msg)
        b.y += PAD - GAP
        _card_box(b, t.card_assistant, t.border)
    elif isinstance(msg, ToolResultMessage):
        b.header(state, _tr("Tool result"), "", [])
        key = f"tool:{msg.tool_call_id}"
        b.tool_card(msg.tool_call_id, msg.tool_name, None, msg, None, key in expanded)
        b.y += PAD
        _card_box(b, t.card_assistant, t.border)
    elif isinstance(msg, BranchSummaryMessage | CompactionSummaryMessage):
        if isinstance(msg, BranchSummaryMessage):
            title = _tr("Branch summary")
            extra = _tr("of the branch this conversation came back from")
        else:
            title = _tr("Compaction summary")
            extra = _tr("{n} tokens before").format(n=f"{int(msg.tokens_before):,}")
        _notice(b, state, title, extra, msg.summary)
    elif isinstance(msg, CustomMessage):
        text = msg.content if isinstance(msg.content, str) else message_text(msg)
        _notice(b, state, msg.custom_type, "", text)
    elif isinstance(msg, BashExecutionMessage):
        _bash_card(b, state, msg)
    else:
        role = getattr(msg, "role", "?")
        b.header(state, _tr("Message"), f"({role})", [])
        unknown = _tr("A message of type '{role}' that this app does not display.")
        b.doc("small", unknown.format(role=role), t.muted)
        b.y += PAD
        _card_box(b, t.card_notice, t.border, dashed=True)


INTERRUPTED_NOTE = QT_TRANSLATE_NOOP(
    "ChatCard", "The app stopped before this tool finished. The agent was told it was interrupted."
)


def bash_status(msg: BashExecutionMessage) -> str:
    """What a shell command card says of how the command ended."""
    if msg.cancelled:
        return _tr("cancelled")
    code = msg.exit_code
    if code is None:
        return ""
    if code == 0:
        return _tr("done")
    return _tr("exit {code}").format(code=int(code))


def bash_text(msg: BashExecutionMessage) -> str:
    """The card's text for Copy: the command line and its output."""
    return f"$ {msg.command}\n{msg.output}" if msg.output else f"$ {msg.command}"


def _bash_card(b: _Builder, state: RowState, msg: BashExecutionMessage) -> None:
    """A command the user ran in Pi (``!cmd``): the command line, then its output,
    as Pi shows it; a ``!!`` command (not sent to the model) says so."""
    t = b.t
    extra = _tr("not sent to the model") if msg.exclude_from_context else ""
    b.header(state, _tr("Shell"), extra, [_action("Copy")])
    top = b.y
    box_index = len(b.out.parts)
    saved = b.left, b.right
    b.left += 8
    b.right -= 8
    b.y += 6
    failed = msg.cancelled or (msg.exit_code is not None and msg.exit_code != 0)
    status = bash_status(msg)
    h = max(t.line, t.small_line + 6)
    if status:
        sw = t.fm_small.horizontalAdvance(status) + 2
        b.out.parts.append(
            TextPart(
                QRect(b.right - sw, b.y, sw, h),
                status,
                t.red if failed else t.muted,
                t.small,
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
            )
        )
        b.right -= sw + 8
    b.text_line(b.left, "$ " + msg.command.replace("\n", " ⏎ "), t.text, t.mono, h)
    b.right = saved[1] - 8
    b.y += h + 4
    if msg.output:
        b.doc("mono", _clip_lines(msg.output, TOOL_LINES_EXPANDED, TOOL_CHARS_EXPANDED), None)
    else:
        b.doc("small", _tr("(no output)"), t.muted)
    if msg.truncated and msg.full_output_path:
        b.y += 2
        b.doc(
            "small",
            _tr("Output truncated. Full output: {path}").format(path=msg.full_output_path),
            t.muted,
        )
    b.y += 6
    b.left, b.right = saved
    border = t.red if failed else t.border
    b.out.parts.insert(box_index, BoxPart(QRect(b.left, top, b.w, b.y - top), t.tool_bg, border, 5))
    b.y += PAD
    _card_box(b, t.card_user, t.border)


_FILE_TAGS = re.compile(r"<(read|modified)-files>\n?(.*?)\n?</\1-files>", re.DOTALL)


def _file_lists(text: str) -> str:
    """A summary's ``<read-files>`` and ``<modified-files>`` blocks (for the model) as
    lists of their own: Qt's importer dropped the tags and ran the paths into the last
    sentence ("…counted to 3000.src/calc.py src/mul.py", FIRST_HOUR.md m13)."""

    def listed(match: re.Match[str]) -> str:
        title = _tr("Files read:") if match[1] == "read" else _tr("Files changed:")
        paths = [p.strip() for p in match[2].split("\n") if p.strip()]
        return f"**{title}**\n\n" + "\n".join(f"- `{p}`" for p in paths) + "\n"

    return _FILE_TAGS.sub(listed, text) if "-files>" in text else text


def _notice(b: _Builder, state: RowState, title: str, extra: str, text: str) -> None:
    t = b.t
    open_ = "summary" in state.expanded
    b.y -= 2
    b.toggle_line("summary", title, extra, open_)
    b.y += 2
    if open_:
        b.markdown(_file_lists(text), t.text)
    else:
        first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
        b.text_line(b.left, first, t.muted, t.small, t.small_line)
        b.y += t.small_line
    b.y += PAD - 2
    _card_box(b, t.card_notice, t.muted, dashed=True)


def _user_blocks(b: _Builder, blocks: list[Any]) -> None:
    first = True
    for block in blocks:
        if not first:
            b.y += GAP
        first = False
        if isinstance(block, TextContent):
            b.doc("plain", _clip_lines(block.text, 20_000, MAX_TEXT_CHARS))
        elif isinstance(block, ImageContent):
            b.image(block)
        else:
            b.doc("small", _content_of(block), b.t.muted)


def _shows(block: object) -> bool:
    """A block of an answer that its card shows something of."""
    return not isinstance(block, TextContent) or bool(block.text.strip())


def _written(message: AssistantMessage) -> str:
    """The text an answer wrote (its text blocks)."""
    return "\n\n".join(
        b.text for b in message.content if isinstance(b, TextContent) and b.text.strip()
    )


def _assistant_blocks(b: _Builder, state: RowState, msg: AssistantMessage) -> None:
    item = state.item
    for i, block in enumerate(msg.content):
        if isinstance(block, TextContent):
            if not block.text.strip():
                continue
            b.markdown(block.text)
        elif isinstance(block, ThinkingContent):
            b.thinking(f"think:{i}", block, f"think:{i}" in state.expanded)
        elif isinstance(block, ToolCall):
            result = item.tool_results.get(block.id)
            live = b.live(block.id)
            if result is None and live is not None:
                result = live.result
            b.tool_card(
                block.id,
                block.name,
                block,
                result,
                live,
                f"tool:{block.id}" in state.expanded,
                interrupted=result is None and live is None and block.id in item.interrupted,
            )
        elif isinstance(block, ImageContent):
            b.image(block)
        else:
            b.doc("small", _content_of(block), b.t.muted)
        b.y += GAP
    if state.streaming and not msg.content:
        b.doc("small", "…", b.t.muted)
        b.y += GAP
    attempts = state.item.attempts
    failed = msg.stop_reason in ("error", "aborted")
    if not state.streaming and not any(_shows(block) for block in msg.content):
        partial = next((a for a in reversed(attempts) if _written(a)), None)
        if failed and partial is not None:
            # The retries came back empty: what an earlier attempt wrote stays on
            # screen, said to be partial (it was not sent back to the model; m4).
            n = attempts.index(partial) + 1
            b.doc("small", _tr("What attempt {n} wrote before it failed:").format(n=n), b.t.muted)
            b.y += 2
            b.markdown(_written(partial), b.t.muted)
            b.y += GAP
        elif not failed:
            b.doc("small", _tr("(empty reply)"), b.t.muted)  # not a blank card (L6)
            b.y += GAP
    if failed:
        b.error_box(msg, state.is_last and not state.streaming, attempts)
        b.y += GAP
    elif attempts:
        n = len(attempts)
        note = (
            _tr("After {n} failed attempts (kept in the session)").format(n=n)
            if n != 1
            else _tr("After 1 failed attempt (kept in the session)")
        )
        b.doc("small", note, b.t.muted)
        b.y += GAP


# --------------------------------------------------------------------------- estimates


def estimate_height(item: ChatItem, width: int, theme: Theme, expanded: frozenset[str]) -> int:
    """A cheap guess of a row's height, used for rows that have not been laid out yet."""
    inner = max(40, column(width)[1] - 2 * (MARGIN_X + PAD))
    cpl = max(10, inner // theme.char_w)
    line = theme.line
    h = 2 * (MARGIN_Y + PAD) + max(line, theme.small_line + 6) + GAP
    msg = item.message

    def text_h(text: str, lh: int, cap: int = 100_000) -> int:
        n = 0
        for ln in text[:MAX_TEXT_CHARS].split("\n"):
            n += 1 + len(ln) // cpl
            if n > cap:
                break
        return min(n, cap) * lh

    if isinstance(msg, AssistantMessage):
        for block in msg.content:
            if isinstance(block, TextContent):
                h += text_h(block.text, line + 2) + GAP
                h += block.text.count("```") // 2 * (theme.small_line + 24)
            elif isinstance(block, ToolCall):
                res = item.tool_results.get(block.id)
                body = _result_text(res) if res is not None else ""
                h += line + 24 + text_h(body, theme.mono_line, TOOL_LINES_COLLAPSED + 1) + GAP
            elif isinstance(block, ImageContent):
                h += IMAGE_MAX_HEIGHT // 2 + GAP
            else:
                h += line + 6 + GAP
        if msg.stop_reason in ("error", "aborted"):
            h += 2 * line + 30
    elif isinstance(msg, UserMessage):
        h += text_h(message_text(msg), line)
    elif isinstance(msg, ToolResultMessage):
        h += line + 24 + text_h(_result_text(msg), theme.mono_line, TOOL_LINES_COLLAPSED + 1)
    elif isinstance(msg, BashExecutionMessage):
        h += line + 24 + text_h(msg.output, theme.mono_line, TOOL_LINES_EXPANDED)
    else:
        h += theme.small_line
    return h


__all__ = [
    "BoxPart",
    "ButtonPart",
    "CardLayout",
    "DocCache",
    "DocPart",
    "Hit",
    "ImageCache",
    "ImagePart",
    "LiveTool",
    "Part",
    "RowState",
    "TextPart",
    "Theme",
    "bash_text",
    "build_card",
    "estimate_height",
    "message_text",
    "split_markdown",
]
