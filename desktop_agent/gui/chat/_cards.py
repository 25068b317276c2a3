"""What each kind of message is made of as a card (`build_card`), built from `CardBuilder`'s
pieces, and a cheap guess of a card's height for rows not laid out yet (`estimate_height`).

A `CardLayout` is built for one row at one width and kept in a cache by the delegate; it is
a flat list of paint parts (boxes, text documents, buttons, images) in card coordinates and
a list of hit rectangles for clicks. Building one is the only expensive step (QTextDocument
layout), so only visible rows are built; the rest of the list uses `estimate_height`.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from PySide6.QtCore import QCoreApplication, QRect, Qt
from PySide6.QtGui import QColor

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
from desktop_agent.gui.chat._builder import (
    EDITOR_HEIGHT,
    GAP,
    IMAGE_MAX_HEIGHT,
    MARGIN_X,
    MARGIN_Y,
    MAX_TEXT_CHARS,
    PAD,
    TOOL_CHARS_EXPANDED,
    TOOL_LINES_COLLAPSED,
    TOOL_LINES_EXPANDED,
    CardBuilder,
    HoverButton,
    LiveLookup,
    RowState,
    column,
)
from desktop_agent.gui.chat._items import ChatItem
from desktop_agent.gui.chat._parts import (
    BoxPart,
    CardAction,
    CardLayout,
    DocCache,
    ImageCache,
    TextPart,
    Theme,
)
from desktop_agent.gui.chat._tool_text import clip_lines, result_text
from desktop_agent.utils.text import message_text

log = logging.getLogger(__name__)


def _tr(text: str) -> str:
    return QCoreApplication.translate("ChatCard", text)


_ACTIONS: dict[str, tuple[CardAction, str, str]] = {
    # name: (action, icon, tooltip); the shortcuts are the window's (gui/_actions.py)
    QT_TRANSLATE_NOOP("ChatCard", "Copy"): (
        CardAction.COPY,
        "copy",
        QT_TRANSLATE_NOOP("ChatCard", "Copy the message (Ctrl+Shift+C)"),
    ),
    QT_TRANSLATE_NOOP("ChatCard", "Edit"): (
        CardAction.EDIT,
        "edit",
        QT_TRANSLATE_NOOP("ChatCard", "Edit and send again (Ctrl+E)"),
    ),
    QT_TRANSLATE_NOOP("ChatCard", "Regenerate"): (
        CardAction.REGENERATE,
        "retry",
        QT_TRANSLATE_NOOP("ChatCard", "A new version of this answer (Ctrl+R on the last one)"),
    ),
}


def _content_of(block: object) -> str:
    """The line a block of an unknown type is shown as."""
    return _tr("[{type} content]").format(type=getattr(block, "type", "?"))


def _failed_reply(message: AssistantMessage) -> bool:
    """A failed or stopped reply: its card has Retry, not Regenerate."""
    return message.stop_reason in ("error", "aborted")


def _action(name: str) -> HoverButton:
    action, icon_name, tip = _ACTIONS[name]
    return (_tr(name), action, icon_name, _tr(tip))


def build_card(
    state: RowState, width: int, theme: Theme, docs: DocCache, images: ImageCache, live: LiveLookup
) -> CardLayout:
    """Lay out one row. Never raises: a row that cannot be shown becomes a placeholder."""
    b = CardBuilder(width, theme, docs, images, live)
    b.grow = state.streaming
    try:
        _build(b, state)
    except Exception:  # habit 8: a damaged row is a placeholder, not a crash
        log.exception("could not lay out a chat row")
        b = CardBuilder(width, theme, docs, images, live)
        b.doc("small", _tr("[this message could not be displayed]"), theme.muted)
        b.y += PAD
        _card_box(b, theme.card_notice, theme.border, dashed=True)
    return b.out


def _card_box(b: CardBuilder, fill: QColor, border: QColor | None, *, dashed: bool = False) -> None:
    left = b.x0 + MARGIN_X
    rect = QRect(left, MARGIN_Y, b.right + PAD - left, b.y - MARGIN_Y)
    b.out.parts.insert(0, BoxPart(rect, fill, border, 8, dashed))
    b.out.height = b.y + MARGIN_Y


def _build(b: CardBuilder, state: RowState) -> None:
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
            b.doc("plain", clip_lines(msg.content, 20_000, MAX_TEXT_CHARS))
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


def _bash_card(b: CardBuilder, state: RowState, msg: BashExecutionMessage) -> None:
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
        b.doc("mono", clip_lines(msg.output, TOOL_LINES_EXPANDED, TOOL_CHARS_EXPANDED), None)
    else:
        b.doc("small", _tr("(no output)"), t.muted)
    if msg.truncated and msg.full_output_path:
        path = msg.full_output_path
        b.full_output(_tr("Output truncated. Full output: {path}").format(path=path), path)
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


def _notice(b: CardBuilder, state: RowState, title: str, extra: str, text: str) -> None:
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


def _user_blocks(b: CardBuilder, blocks: list[Any]) -> None:
    first = True
    for block in blocks:
        if not first:
            b.y += GAP
        first = False
        if isinstance(block, TextContent):
            b.doc("plain", clip_lines(block.text, 20_000, MAX_TEXT_CHARS))
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


def _assistant_blocks(b: CardBuilder, state: RowState, msg: AssistantMessage) -> None:
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
                body = result_text(res) if res is not None else ""
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
        h += line + 24 + text_h(result_text(msg), theme.mono_line, TOOL_LINES_COLLAPSED + 1)
    elif isinstance(msg, BashExecutionMessage):
        h += line + 24 + text_h(msg.output, theme.mono_line, TOOL_LINES_EXPANDED)
    else:
        h += theme.small_line
    return h
