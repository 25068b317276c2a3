"""Code colours: Pygments lexers in a worker thread, formats applied in bounded slices.

`CodeColorizer` owns everything: a fenced block's text is tokenized by the Pygments lexer
of its language in one worker thread (a 1,000-line Python block takes ~0.1 s there), the
tokens are cached by (lexer, text) and are independent of the theme, and a
`TokenHighlighter` applies them to the block's `QTextDocument` on the GUI thread a few
milliseconds at a time. A theme change therefore re-colours from the cache without
tokenizing again; small blocks whose tokens (or lexer) are at hand are coloured at once,
so a card is painted in colour on its first paint.

A block that grows while a reply streams is a new text each time: it starts with the
tokens of the text it extends (all but that text's last line), and only the newest text
of a stream waits for the worker, at most half of the worker's time, so a long streaming
block never keeps a core busy.

Colours: a Pygments style per palette lightness (`STYLES`), and `DiffHighlighter`'s two
sets; both are picked from `Theme.dark` when a document is built. When the palette
changes, a laid-out code document keeps its layout and `CodeColorizer.restyle` sets the
other style's formats from its tokens (the first and last lines at once, the rest in
slices); diffs are built again.
"""

from __future__ import annotations

import bisect
import logging
import sys
import threading
import time
from array import array
from collections import OrderedDict, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pygments.token import Error, Text, _TokenType, is_token_subtype
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
    QTextLayout,
)

if TYPE_CHECKING:
    from pygments.lexer import Lexer

log = logging.getLogger(__name__)

STYLES = {False: "default", True: "github-dark"}
"""The Pygments style for light (False) and dark (True) palettes."""

DIFF_LANGUAGES = frozenset({"diff", "patch", "udiff"})
SYNC_CHARS = 3_000
"""A block this small is tokenized on the GUI thread when its lexer is already loaded."""
SYNC_LINES = 120
"""Lines of a block coloured while it is built (the first and last half); the rest in slices."""
SLICE_S = 0.006
"""GUI-thread time per slice of applying formats."""
SLICE_BLOCKS = 40
"""Blocks formatted (and laid out again) at a time: ~3 ms for 40 lines of code."""
POLL_MS = 4
YIELD_TOKENS = 48
SWITCH_INTERVAL_S = 0.0002
"""The worker gives up the GIL this often (tokens), see `tokenize`."""
CACHE_LIMIT = 256
CACHE_TOKENS = 2_000_000


# --------------------------------------------------------------------------- tokens


@dataclass(frozen=True, eq=False)
class Tokens:
    """Coloured spans of one text: sorted, non-overlapping character ranges."""

    starts: array[int]
    ends: array[int]
    kinds: array[int]  # index into `types`
    types: tuple[_TokenType, ...]

    def __len__(self) -> int:
        return len(self.starts)

    def before(self, pos: int) -> Tokens:
        """The spans that end at or before ``pos`` (a stream's provisional colours)."""
        n = bisect.bisect_right(self.ends, pos)
        return Tokens(self.starts[:n], self.ends[:n], self.kinds[:n], self.types)


def _plain(ttype: _TokenType) -> bool:
    """Painted in the view's text colour (errors too: a half-written block has some)."""
    return is_token_subtype(ttype, Text) or is_token_subtype(ttype, Error)


def tokenize(lexer: Lexer, text: str, *, yield_every: int = 0) -> Tokens:
    """The spans of ``text`` (raw offsets: no newline or tab processing) with a style.

    ``yield_every`` > 0 (in the worker) gives up the GIL every that many tokens: the GUI
    thread takes and releases the GIL at every Qt call, and a worker that kept it for the
    whole switch interval each time would stretch the GUI thread's work many times over.
    """
    starts: array[int] = array("l")
    ends: array[int] = array("l")
    kinds: array[int] = array("l")
    index: dict[_TokenType, int] = {}
    last_kind, last_end = -1, -1
    for n, (pos, ttype, value) in enumerate(lexer.get_tokens_unprocessed(text + "\n")):
        if yield_every and n % yield_every == 0:
            time.sleep(0)
        if not value or _plain(ttype):
            continue
        end = min(pos + len(value), len(text))
        if end <= pos:
            continue
        kind = index.setdefault(ttype, len(index))
        if kind == last_kind and pos == last_end:
            ends[-1] = end
        else:
            starts.append(pos)
            ends.append(end)
            kinds.append(kind)
        last_kind, last_end = kind, end
    return Tokens(starts, ends, kinds, tuple(index))


_LEXERS: dict[str, Lexer | None] = {}


def lexer_for(lang: str) -> Lexer | None:
    """The Pygments lexer of a fence's language ("py", "rust", "main.rs", "ts:app.ts")."""
    key = lang.strip().lower()
    if key in _LEXERS:
        return _LEXERS[key]
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
    from pygments.util import ClassNotFound

    options: dict[str, Any] = {"stripnl": False, "stripall": False, "ensurenl": False}
    name = key.removeprefix("language-")
    lexer: Lexer | None = None
    for candidate in dict.fromkeys((name, name.split(":", 1)[0])):
        if not candidate:
            continue
        try:
            lexer = get_lexer_by_name(candidate, **options)
        except ClassNotFound:
            try:
                lexer = get_lexer_for_filename(candidate, **options)
            except ClassNotFound:
                continue
        break
    if lexer is not None and lexer.name in ("Text only", "Text output"):
        lexer = None
    _LEXERS[key] = lexer
    return lexer


def _lexer_known(lang: str) -> bool:
    return lang.strip().lower() in _LEXERS


def _job(lang: str, text: str) -> Tokens | None:
    lexer = lexer_for(lang)
    if lexer is None:
        return None
    in_worker = threading.current_thread() is not threading.main_thread()
    return tokenize(lexer, text, yield_every=YIELD_TOKENS if in_worker else 0)


# --------------------------------------------------------------------------- formats

_STYLE_FORMATS: dict[tuple[str, _TokenType], QTextCharFormat | None] = {}


def style_format(style_name: str, ttype: _TokenType) -> QTextCharFormat | None:
    """The character format of a token type in a Pygments style (None: the text colour)."""
    key = (style_name, ttype)
    if key in _STYLE_FORMATS:
        return _STYLE_FORMATS[key]
    from pygments.styles import get_style_by_name

    spec = get_style_by_name(style_name).style_for_token(ttype)
    fmt: QTextCharFormat | None = None
    if spec["color"] or spec["bold"] or spec["italic"]:
        fmt = QTextCharFormat()
        if spec["color"]:
            fmt.setForeground(QColor("#" + spec["color"]))
        if spec["bold"]:
            fmt.setFontWeight(QFont.Weight.Bold)
        if spec["italic"]:
            fmt.setFontItalic(True)
    _STYLE_FORMATS[key] = fmt
    return fmt


class CodeColors:
    """The colours of one code document: `Tokens` set as each block's layout formats.

    Not a QSyntaxHighlighter: re-highlighting a laid-out 1,000-line document block by
    block costs ~0.4 s (every block relayouts the document), while setting the formats of
    a run of blocks and marking that run dirty once costs ~4 ms per 50 lines.
    """

    def __init__(self, doc: QTextDocument, *, dark: bool, lang: str, text: str = "") -> None:
        self.doc = doc
        self.text = text
        self.style = STYLES[dark]
        self.lang = lang
        self.tokens: Tokens | None = None
        self.final = False  # the tokens are of this exact text (not provisional)
        self.discarded = False
        self._formats: list[QTextCharFormat | None] = []

    def changed_from(self, tokens: Tokens | None) -> int:
        """The first text position whose colour differs between the tokens applied now
        and ``tokens`` (0 when nothing was applied): blocks before it stay as they are."""
        old = self.tokens
        if old is None or tokens is None or old.types != tokens.types[: len(old.types)]:
            return 0
        n = min(len(old), len(tokens))
        lo, hi = 0, n  # the longest common run of spans: [0, lo) equal
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if (
                old.starts[:mid] == tokens.starts[:mid]
                and old.ends[:mid] == tokens.ends[:mid]
                and old.kinds[:mid] == tokens.kinds[:mid]
            ):
                lo = mid
            else:
                hi = mid - 1
        if lo == 0:
            return 0
        return min(old.ends[lo - 1], tokens.ends[lo - 1])

    def set_tokens(self, tokens: Tokens | None, *, final: bool) -> None:
        self.tokens = tokens
        self.final = final
        types = tokens.types if tokens is not None else ()
        self._formats = [style_format(self.style, t) for t in types]

    def apply(self, first: int, count: int, *, relayout: bool) -> int:
        """Format blocks ``first``..``first + count - 1``; relayout them once if asked."""
        block = self.doc.findBlockByNumber(first)
        start = block.position()
        end = start
        done = 0
        while block.isValid() and done < count:
            block.layout().setFormats(self._ranges(block.position(), block.length() - 1))
            end = block.position() + block.length()
            block = block.next()
            done += 1
        if relayout and done:
            self.doc.markContentsDirty(start, end - start)
        return done

    def _ranges(self, pos: int, length: int) -> list[QTextLayout.FormatRange]:
        tokens = self.tokens
        out: list[QTextLayout.FormatRange] = []
        if tokens is None or not len(tokens):
            return out
        end = pos + length
        starts, ends, kinds, formats = tokens.starts, tokens.ends, tokens.kinds, self._formats
        i = max(0, bisect.bisect_right(starts, pos) - 1)
        n = len(starts)
        while i < n and starts[i] < end:
            s, e = max(starts[i], pos), min(ends[i], end)
            fmt = formats[kinds[i]]
            if e > s and fmt is not None:
                r = QTextLayout.FormatRange()
                r.start, r.length, r.format = s - pos, e - s, fmt
                out.append(r)
            i += 1
        return out


class DiffHighlighter(QSyntaxHighlighter):
    """Added lines green, removed lines red, hunk headers blue."""

    def __init__(self, doc: QTextDocument, *, dark: bool) -> None:
        if dark:
            add, rem, hunk = ("#81c784", "#1f3a24"), ("#ef9a9a", "#45221f"), "#90caf9"
        else:
            add, rem, hunk = ("#1b5e20", "#e3f4e3"), ("#b71c1c", "#fbe4e4"), "#1565c0"
        self._add = _fmt(add[0], add[1])
        self._rem = _fmt(rem[0], rem[1])
        self._hunk = _fmt(hunk)
        self._head = _fmt(hunk)
        self._head.setFontWeight(QFont.Weight.Bold)
        super().__init__(doc)

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("+++", "---")):
            self.setFormat(0, len(text), self._head)
        elif text.startswith("+"):
            self.setFormat(0, len(text), self._add)
        elif text.startswith("-"):
            self.setFormat(0, len(text), self._rem)
        elif text.startswith("@@"):
            self.setFormat(0, len(text), self._hunk)


def _fmt(color: str, background: str | None = None) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if background is not None:
        fmt.setBackground(QColor(background))
    return fmt


# --------------------------------------------------------------------------- colorizer


@dataclass
class _Request:
    lang: str
    text: str
    waiters: list[CodeColors] = field(default_factory=list)
    extends: bool = False  # a stream's newer text: runs at most half of the worker's time


@dataclass
class _Apply:
    colors: CodeColors
    runs: deque[tuple[int, int]]  # (first block, count) still to format, in this order


_EXECUTOR: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _EXECUTOR
    if _EXECUTOR is None:
        # A worker holding the GIL makes the GUI thread wait up to the switch interval at
        # every Qt call it returns from (5 ms by default: a convoy that stretched 10 ms
        # of painting to 100 ms while a lexer loaded); 0.2 ms keeps the GUI thread smooth.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        _EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="code-colours")
    return _EXECUTOR


def _warm_up() -> None:
    """Import the Markdown parser and Pygments' registries in the worker, not on the GUI
    thread at the first code block (~0.1 s together). Part of `warm_up_lexers`, once the
    restored session is settled: started with the window, it held the GIL from the
    restore of every session, most of which show no code at their end (a card that
    does imports what it needs when it is drawn)."""
    import markdown_it  # noqa: F401
    import pygments.lexers
    import pygments.styles

    pygments.styles.get_style_by_name(STYLES[False])
    pygments.styles.get_style_by_name(STYLES[True])
    del pygments.lexers


COMMON_LANGUAGES = ("python", "bash", "json", "javascript", "typescript", "diff")
"""Lexers `warm_up_lexers` loads ahead: a lexer's first use compiles its regular expressions
(Python's: 170 ms, TypeScript's: 110 ms), which in the worker still holds the GIL from the
GUI thread in long pieces: it stalled the first reply with a Python block."""


def _load_lexers(languages: tuple[str, ...]) -> int:
    loaded = 0
    for lang in languages:
        lexer = lexer_for(lang)
        if lexer is not None:
            tokenize(lexer, "x = 1\n")  # the regular expressions compile at first use
            loaded += 1
    return loaded


def warm_up_lexers(languages: tuple[str, ...] = COMMON_LANGUAGES) -> Future[int]:
    """Import the Markdown parser and Pygments (`_warm_up`), then load and compile the
    lexers of ``languages``, in the colours' worker (once start-up is done, before a
    reply streams); the future gives how many were loaded."""
    executor = _executor()
    executor.submit(_warm_up)
    return executor.submit(_load_lexers, languages)


Colors = CodeColors | DiffHighlighter
"""What `CodeColorizer.build` attaches to a document (keep it as long as the document)."""


class CodeColorizer(QObject):
    """Tokens for code documents: cached, computed in a worker, applied in slices.

    ``recolored`` is emitted (on the GUI thread) after formats changed in some document,
    so the view repaints. `stats` counts work for tests and benchmarks.
    """

    recolored = Signal()

    def __init__(self, parent: QObject | None = None, *, sync_chars: int = SYNC_CHARS) -> None:
        super().__init__(parent)
        self.sync_chars = sync_chars
        self._cache: OrderedDict[tuple[str, str], Tokens | None] = OrderedDict()
        self._cached_tokens = 0
        self._queue: deque[_Request] = deque()
        self._running: tuple[_Request, Future[Tokens | None], float] | None = None
        self._not_before = 0.0  # when the next stream job may start (worker duty <= 1/2)
        self._applying: deque[_Apply] = deque()
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._tick)
        _executor()
        self.stats = {"tokenized": 0, "sync": 0, "cached": 0, "superseded": 0, "blocks": 0}

    # -- building documents

    def build(self, doc: QTextDocument, text: str, lang: str, *, dark: bool) -> Colors | None:
        """Set ``text`` into ``doc`` (not laid out yet) with the colours of ``lang``, now
        or soon."""
        name = lang.strip().lower()
        if name in DIFF_LANGUAGES:
            diff = DiffHighlighter(doc, dark=dark)
            doc.setPlainText(text)
            return diff
        doc.setPlainText(text)
        if not name or (name in _LEXERS and _LEXERS[name] is None):
            return None  # no language, or one Pygments does not know
        colors = CodeColors(doc, dark=dark, lang=name, text=text)
        key = (name, text)
        tokens, final = self._known(key)
        if tokens is None and len(text) <= self.sync_chars and _lexer_known(name):
            tokens, final = self._tokenize_now(key), True
        if tokens is not None:
            colors.set_tokens(tokens, final=final)
            count = doc.blockCount()
            if count <= SYNC_LINES:
                colors.apply(0, count, relayout=False)
            else:  # the first and last lines now (a card's top; a stream's end), the rest soon
                half = SYNC_LINES // 2
                colors.apply(0, half, relayout=False)
                colors.apply(count - half, half, relayout=False)
                self._schedule(colors, [(half, count - 2 * half)])
        if not final:
            self._request(key, colors, extends=tokens is not None)
        return colors

    def extend(self, colors: CodeColors, text: str, first_block: int) -> None:
        """``colors.doc`` got more text at its end (a streaming block, `DocCache`): colour
        its blocks from ``first_block`` on (the old last line and the new ones) with the
        tokens at hand, and ask the worker for the new text's."""
        colors.text = text
        key = (colors.lang, text)
        tokens, final = self._known(key)
        if tokens is None and len(text) <= self.sync_chars and _lexer_known(colors.lang):
            tokens, final = self._tokenize_now(key), True
        if tokens is not None:
            colors.set_tokens(tokens, final=final)
            count = colors.doc.blockCount() - first_block
            now = min(count, SYNC_LINES)
            colors.apply(first_block, 1, relayout=True)
            colors.apply(first_block + 1, now - 1, relayout=False)
            if count > now:
                self._schedule(colors, [(first_block + now, count - now)])
        if not final:
            self._request(key, colors, extends=True)

    def restyle(self, colors: CodeColors, *, dark: bool) -> None:
        """Colours of the other palette lightness for a laid-out document (a theme
        switch): from its tokens, the first and last lines now, the rest in slices."""
        style = STYLES[dark]
        if colors.style == style:
            return
        colors.style = style
        if colors.tokens is None:
            return  # the worker's tokens get the new style when they arrive
        colors.set_tokens(colors.tokens, final=colors.final)
        count = colors.doc.blockCount()
        half = SYNC_LINES // 2
        if count <= SYNC_LINES:
            colors.apply(0, count, relayout=True)
            return
        colors.apply(0, half, relayout=True)
        colors.apply(count - half, half, relayout=True)
        self._schedule(colors, [(half, count - 2 * half)])

    def discard(self, colors: object) -> None:
        """The document is gone from the caller's cache: no more work for it."""
        if isinstance(colors, CodeColors):
            colors.discarded = True

    def busy(self) -> bool:
        """Whether tokens are being computed or applied (tests wait for this)."""
        return bool(self._queue or self._running or self._applying)

    # -- the cache

    def _known(self, key: tuple[str, str]) -> tuple[Tokens | None, bool]:
        if key in self._cache:
            self._cache.move_to_end(key)
            self.stats["cached"] += 1
            return self._cache[key], True
        lang, text = key
        for (old_lang, old), tokens in reversed(self._cache.items()):
            if old_lang == lang and tokens is not None and old and text.startswith(old):
                return tokens.before(old.rfind("\n") + 1), False
        return None, False

    def _store(self, key: tuple[str, str], tokens: Tokens | None) -> None:
        old = self._cache.pop(key, None)
        self._cached_tokens -= len(old) if old is not None else 0
        self._cache[key] = tokens
        self._cached_tokens += len(tokens) if tokens is not None else 0
        while len(self._cache) > CACHE_LIMIT or (
            self._cached_tokens > CACHE_TOKENS and len(self._cache) > 1
        ):
            _, dropped = self._cache.popitem(last=False)
            self._cached_tokens -= len(dropped) if dropped is not None else 0

    def _tokenize_now(self, key: tuple[str, str]) -> Tokens | None:
        tokens = _job(*key)
        self.stats["sync"] += 1
        self._store(key, tokens)
        return tokens

    # -- the worker

    def _request(self, key: tuple[str, str], colors: CodeColors, *, extends: bool) -> None:
        lang, text = key
        running = self._running
        if running is not None and running[0].lang == lang and running[0].text == text:
            running[0].waiters.append(colors)
            return
        for req in self._queue:
            if req.lang == lang and req.text == text:
                req.waiters.append(colors)
                return
        # A stream's older texts still waiting are never shown again: the newest replaces them.
        kept: deque[_Request] = deque()
        for req in self._queue:
            if req.lang == lang and text.startswith(req.text):
                self.stats["superseded"] += 1
                extends = True
            else:
                kept.append(req)
        self._queue = kept
        self._queue.append(_Request(lang, text, [colors], extends))
        self._start()

    def _start(self) -> None:
        queue = self._queue
        held = bool(queue) and queue[0].extends and time.monotonic() < self._not_before
        if self._running is None and queue and not held:
            req = queue.popleft()
            future = _executor().submit(_job, req.lang, req.text)
            self._running = (req, future, time.monotonic())
        if self.busy() and not self._timer.isActive():
            self._timer.start()

    def _tick(self) -> None:
        running = self._running
        if running is not None and running[1].done():
            req, future, started = running
            self._running = None
            now = time.monotonic()
            self._not_before = now + (now - started)
            try:
                tokens = future.result()
            except Exception:  # a lexer bug must not cost the chat: the block stays plain
                log.exception("could not tokenize a %s code block", req.lang)
                tokens = None
            self.stats["tokenized"] += 1
            self._store((req.lang, req.text), tokens)
            for colors in req.waiters:
                if not colors.discarded:
                    # A growing document may be longer than the text tokenized: those
                    # tokens colour its start, a newer request the rest.
                    changed = colors.changed_from(tokens)
                    colors.set_tokens(tokens, final=colors.text == req.text)
                    count = colors.doc.blockCount()
                    first = colors.doc.findBlock(changed).blockNumber() if changed else 0
                    first = max(0, min(first, count))
                    tail = min(count - first, SYNC_LINES // 2)
                    self._schedule(colors, [(count - tail, tail), (first, count - tail - first)])
        self._start()
        if self._apply_slice():
            self.recolored.emit()
        if not self.busy():
            self._timer.stop()

    # -- applying formats

    def _schedule(self, colors: CodeColors, runs: list[tuple[int, int]]) -> None:
        # A stream's older documents are not shown any more: only the newest is coloured.
        # The same (growing) document keeps what it still had to do, merged into one run.
        pending = [r for a in self._applying if a.colors is colors for r in a.runs]
        self._applying = deque(a for a in self._applying if not _replaces(colors, a.colors))
        wanted = [(f, n) for f, n in runs if n > 0]
        if pending:
            start = min(f for f, _ in [*pending, *wanted])
            end = max(f + n for f, n in [*pending, *wanted])
            wanted = [(start, end - start)]
        self._applying.append(_Apply(colors, deque(wanted)))
        if not self._timer.isActive():
            self._timer.start()

    def _apply_slice(self) -> bool:
        deadline = time.perf_counter() + SLICE_S
        changed = False
        while self._applying and time.perf_counter() < deadline:
            job = self._applying[0]
            if job.colors.discarded or not job.runs:
                self._applying.popleft()
                continue
            first, count = job.runs.popleft()
            step = min(count, SLICE_BLOCKS)
            done = job.colors.apply(first, step, relayout=True)
            self.stats["blocks"] += done
            changed = True
            if done == step and count > step:
                job.runs.appendleft((first + step, count - step))
        return changed


def _replaces(new: CodeColors, old: CodeColors) -> bool:
    return old is new or (
        old.lang == new.lang and old.style == new.style and new.text.startswith(old.text)
    )


__all__ = [
    "STYLES",
    "CodeColorizer",
    "CodeColors",
    "Colors",
    "DiffHighlighter",
    "Tokens",
    "lexer_for",
    "style_format",
    "tokenize",
]
