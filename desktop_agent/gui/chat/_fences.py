"""Split message Markdown into prose and fenced code blocks, the CommonMark way.

markdown-it-py (CommonMark-exact) finds the fences: backtick and tilde fences, longer
fences, indented closing fences, fences inside list items and block quotes, and an
unclosed fence that runs to the end (the block a streaming reply is still writing). The
prose between fences goes to Qt's Markdown importer as it is, except that prose which
continues a list item or quote after a fence is dedented by the fence's indent (otherwise
four spaces of list indentation would read as an indented code block).

Streaming stays cheap: a reply that grows re-parses only from the start of its last
top-level block. Appending text cannot change a top-level block that another one already
follows (CommonMark decides block structure line by line), so the fences before it are
kept from the previous split.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


class Segment(NamedTuple):
    """``kind`` is "md" (prose for Qt's Markdown importer) or "code" (``lang`` from the
    fence's info string); ``depth`` counts the list items and quotes around a fence."""

    kind: str
    text: str
    lang: str = ""
    depth: int = 0


class _Fence(NamedTuple):
    start: int  # first line (the opening fence)
    end: int  # one past the last line (the closing fence, if any)
    code: str
    lang: str
    depth: int
    indent: int  # leading spaces of the opening fence line


class _Parsed(NamedTuple):
    lines: list[str]
    fences: list[_Fence]
    last_block: int  # start line of the last top-level block (re-parse from here)
    segments: list[Segment]


def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # 80 ms to import: not before the first fence

    md = MarkdownIt("commonmark")
    md.disable("inline")  # only the block structure is needed: several times faster
    return md


def _lang(info: str) -> str:
    word = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    return word.strip("{}.")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


class MarkdownSplitter:
    """`split` with a bounded cache of recent texts (the cache makes streaming cheap)."""

    def __init__(self, limit: int = 256) -> None:
        self._md: MarkdownIt | None = None
        self._cache: OrderedDict[str, _Parsed] = OrderedDict()
        self._limit = limit
        self.parsed_lines = 0  # lines given to markdown-it so far (tests and timings)

    def split(self, text: str) -> list[Segment]:
        if "\r" in text:  # markdown-it reads a lone CR as a line end; lines must agree
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "```" not in text and "~~~" not in text:
            return [Segment("md", text.strip("\n"))] if text.strip() else []
        hit = self._cache.get(text)
        if hit is not None:
            self._cache.move_to_end(text)
            return hit.segments
        parsed = self._parse(text, self._prefix_of(text))
        self._cache[text] = parsed
        while len(self._cache) > self._limit:
            self._cache.popitem(last=False)
        return parsed.segments

    def _prefix_of(self, text: str) -> _Parsed | None:
        """The most recent cached split of a text that ``text`` extends (a stream)."""
        for old, parsed in reversed(self._cache.items()):
            if len(old) < len(text) and text.startswith(old):
                return parsed
        return None

    def _parse(self, text: str, prefix: _Parsed | None) -> _Parsed:
        lines = text.split("\n")
        start = 0
        fences: list[_Fence] = []
        if prefix is not None:
            start = prefix.last_block
            fences = [f for f in prefix.fences if f.end <= start]
        src = "\n".join(lines[start:])
        self.parsed_lines += len(lines) - start
        if self._md is None:
            self._md = _parser()
        tokens = self._md.parse(src)
        last_block = start
        depth = 0
        for tok in tokens:
            if tok.level == 0 and tok.nesting >= 0 and tok.map is not None:
                last_block = start + tok.map[0]
            if tok.type in ("bullet_list_open", "ordered_list_open", "blockquote_open"):
                depth += 1
            elif tok.type in ("bullet_list_close", "ordered_list_close", "blockquote_close"):
                depth -= 1
            elif tok.type == "fence" and tok.map is not None:
                first, end = start + tok.map[0], start + tok.map[1]
                fences.append(
                    _Fence(first, end, tok.content, _lang(tok.info), depth, _indent(lines[first]))
                )
        return _Parsed(lines, fences, last_block, _segments(lines, fences))


def _segments(lines: list[str], fences: list[_Fence]) -> list[Segment]:
    out: list[Segment] = []
    pos = 0
    dedent = 0
    for fence in fences:
        _prose(out, lines[pos : fence.start], dedent)
        code = fence.code[:-1] if fence.code.endswith("\n") else fence.code
        out.append(Segment("code", code, fence.lang, fence.depth))
        pos = fence.end
        dedent = fence.indent if fence.depth else 0
    _prose(out, lines[pos:], dedent)
    return out


def _prose(out: list[Segment], lines: list[str], dedent: int) -> None:
    if dedent:
        # Lines that continue the list item the fence was in: as deep as the fence.
        cut: list[str] = []
        for line in lines:
            if _indent(line) >= dedent:
                cut.append(line[dedent:])
            elif line.strip():
                cut.extend(lines[len(cut) :])
                break
            else:
                cut.append(line)
        lines = cut
    text = "\n".join(lines).strip("\n")
    if text.strip():
        out.append(Segment("md", text))


_DEFAULT = MarkdownSplitter()

_BREAKS_MD: list[MarkdownIt] = []
_MARKUP = re.compile(r"^[ \t>]*")
_SOFT_BREAK = re.compile(r"[^\n]\n[^\n]")


def keep_line_breaks(text: str) -> str:
    """``text`` with the single line ends inside its paragraphs made line breaks (U+2028),
    as chat apps show a reply (a haiku keeps its three lines; FIRST_HOUR.md m3): CommonMark
    joins them with a space. Only paragraph lines are touched (markdown-it finds them), so
    lists, quotes' markers, headings and tables stay as they are; a continuation line's
    own indent and quote markers go, as the line now goes on the one before it."""
    if _SOFT_BREAK.search(text) is None:
        return text
    if not _BREAKS_MD:
        _BREAKS_MD.append(_parser().enable("table"))
    lines = text.split("\n")
    joined: set[int] = set()  # lines that go on the line before them
    for tok in _BREAKS_MD[0].parse(text):
        if tok.type == "paragraph_open" and tok.map is not None and tok.map[1] - tok.map[0] > 1:
            joined.update(range(tok.map[0] + 1, tok.map[1]))
    if not joined:
        return text
    out = [lines[0]]
    for i in range(1, len(lines)):
        if i in joined:
            before = out[-1][:-1] if out[-1].endswith("\\") else out[-1]  # a hard break
            out[-1] = before + "\u2028" + _MARKUP.sub("", lines[i], count=1)
        else:
            out.append(lines[i])
    return "\n".join(out)


def split_markdown(text: str) -> list[Segment]:
    """Prose and fenced code segments of Markdown ``text``, in order (shared cache)."""
    return _DEFAULT.split(text)


__all__ = ["MarkdownSplitter", "Segment", "keep_line_breaks", "split_markdown"]
