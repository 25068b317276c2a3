"""What the widgets show, as plain data: branch items, sidebar rows, usage, save state.

Views are computed from the open session without Qt. The branch view is a list of entry
ids with cheap per-entry facts (kind, role, siblings, label, merged tool results, folded
failed attempts); a message is decoded only when `BranchItem.message` is read (the
session caches decoded messages), so a view that shows a few rows decodes a few.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    CompactionSummaryMessage,
    ToolCall,
    ToolResultMessage,
    classify_error,
)
from desktop_agent.session import BranchTail, CompactionEntry, Session, SessionError
from desktop_agent.workbench._slices import drain, sliced
from desktop_agent.workbench._time import time_key

_VISIBLE_ROLES = (
    "user",
    "assistant",
    "custom",
    "branchSummary",
    "compactionSummary",
    "bashExecution",  # a command the user ran in Pi (``!cmd``), shown as a shell card
)

Loader = Callable[[str], AgentMessage | None]


@dataclass(eq=False)
class BranchItem:
    """One visible message of the current branch.

    ``tool_result_ids`` are the entries of the results of its tool calls (merged into
    the card); ``failed_attempts`` are earlier failed attempts of the same request
    (retries), folded into this item so a prompt shows one card, not one per attempt.
    """

    entry_id: str
    kind: str
    role: str | None
    load: Loader = field(repr=False)
    sibling_index: int = 0
    sibling_count: int = 1
    label: str | None = None
    tool_result_ids: list[str] = field(default_factory=list)
    failed_attempts: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)
    """Ids of its tool calls that never got a result: the app stopped while they ran
    (the harness answers them with a synthetic "interrupted" result in the context)."""

    @property
    def message(self) -> AgentMessage:
        message = self.load(self.entry_id)
        assert message is not None, self.entry_id
        return message

    def tool_results(self) -> dict[str, ToolResultMessage]:
        out: dict[str, ToolResultMessage] = {}
        for entry_id in self.tool_result_ids:
            result = self.load(entry_id)
            if isinstance(result, ToolResultMessage):
                out[result.tool_call_id] = result
        return out

    def attempts(self) -> list[AssistantMessage]:
        """The failed attempts folded into this item, oldest first."""
        out: list[AssistantMessage] = []
        for entry_id in self.failed_attempts:
            message = self.load(entry_id)
            if isinstance(message, AssistantMessage):
                out.append(message)
        return out


def is_visible(session: Session, entry_id: str) -> bool:
    """Whether an entry is a message the chat shows (not tool results or bookkeeping)."""
    kind, role = session.entry_kind(entry_id)
    if kind == "message":
        return role in _VISIBLE_ROLES
    return kind in ("custom_message", "branch_summary", "compaction")


def visible_parent(session: Session, entry_id: str) -> str | None:
    """The nearest ancestor of ``entry_id`` the chat shows (None: none). Entries it does
    not show (labels, leaf moves, settings, model and thinking changes, tool results)
    are passed through, as the branch map hangs an entry on its nearest shown ancestor."""
    seen = {entry_id}
    parent = session.parent_of(entry_id)
    while parent is not None and parent not in seen:
        try:
            if is_visible(session, parent):
                break
        except SessionError:  # a parent missing from a damaged file: its orphans
            break
        seen.add(parent)
        parent = session.parent_of(parent)
    return None if parent in seen else parent


def visible_children(session: Session, parent: str | None) -> list[str]:
    """The shown entries whose nearest shown ancestor is ``parent`` (None: the roots'),
    oldest first: one message's versions. The branch map's rule (`BranchMap.siblings` in
    its default filter), so the chat's ``‹ n/m ›`` counts what the map shows."""
    out: list[str] = []
    seen: set[str] = set()
    stack = list(reversed(session.child_ids(parent)))
    while stack:
        child = stack.pop()
        if child in seen:  # a cycle in an odd file
            continue
        seen.add(child)
        if is_visible(session, child):
            out.append(child)
        else:
            stack.extend(reversed(session.child_ids(child)))
    return out


def visible_siblings(session: Session, entry_id: str) -> list[str]:
    """The versions of ``entry_id`` (itself included), oldest first: `visible_children`
    of its `visible_parent`."""
    return visible_children(session, visible_parent(session, entry_id))


def _failed(message: AgentMessage | None) -> bool:
    return isinstance(message, AssistantMessage) and message.stop_reason == "error"


class MessageLoader:
    """Decodes branch messages on demand (compactions become their summary message)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._compactions: dict[str, CompactionSummaryMessage] = {}

    async def prepare(self, entry_id: str) -> None:
        """Read what cannot be decoded synchronously (a compaction's entry)."""
        if entry_id in self._compactions:
            return
        entry = await self._session.get_entry(entry_id)
        if isinstance(entry, CompactionEntry):
            self._compactions[entry_id] = CompactionSummaryMessage(
                summary=entry.summary, tokens_before=entry.tokens_before, timestamp=0
            )

    def __call__(self, entry_id: str) -> AgentMessage | None:
        if entry_id in self._compactions:
            return self._compactions[entry_id]
        return self._session.get_message(entry_id)


PAGE = 24
"""Visible messages per page of `BranchReader` (a screen or two of cards)."""

INLINE_ENTRIES = 2_000
"""Sessions up to this many entries are decoded on the loop (a page costs a few ms);
longer ones in a worker thread."""
_READ_STEP = 32  # entries decoded per step while walking back
_DECODED_KINDS = ("message", "custom_message", "branch_summary")


_DECODE_STEP = 4
"""Messages decoded between pauses of `_decode_steps` (tool results run to 200 KB)."""


def _decode_steps(
    session: Session, ids: list[str]
) -> Generator[None, None, list[AgentMessage | None]]:
    """`Session.get_messages` of ``ids``, a few at a time (`_slices.sliced`)."""
    out: list[AgentMessage | None] = []
    for n in range(0, len(ids), _DECODE_STEP):
        out.extend(session.get_messages(ids[n : n + _DECODE_STEP]))
        yield
    return out


class BranchReader:
    """The chat view of the current branch, read from its end backwards in pages.

    `older` returns the next older page (root-first) of `BranchItem`; the first call
    gives the end of the branch, so a long session shows its last messages at once and
    decodes only what is shown (messages are decoded in steps of ``_READ_STEP`` entries,
    on the loop in slices of a few milliseconds). Siblings of a message are the visible
    children of its parent (what "edit and resend" creates), oldest first. Consecutive
    failed answers (automatic or manual retries of one request) fold into the next
    answer, or into the last failure; a page never ends inside such a run.

    ``at_rest``: no run is going on, so a tool call of the branch without a result was
    cut off (the app stopped while it ran) and its item lists it in ``interrupted``.
    """

    def __init__(
        self, session: Session, loader: MessageLoader | None = None, *, at_rest: bool = True
    ) -> None:
        self._session = session
        self._load = loader or MessageLoader(session)
        self._path = session.branch_ids(lenient=True)
        self._pos = len(self._path)  # entries before this are not read yet
        self._at_rest = at_rest
        self._siblings: dict[str | None, list[str]] = {}
        self._results: dict[str, str] = {}  # tool_call_id -> result entry, not yet owned
        self._absorber: BranchItem | None = None  # the answer earlier failures fold into
        self._answered_after = False  # a later assistant exists (for interrupted calls)
        self._held: BranchItem | None = None  # read but not returned (next page's first)
        self._decoded: dict[str, AgentMessage | None] = {}

    @property
    def has_more(self) -> bool:
        """Older messages remain to be read."""
        return self._held is not None or self._pos > 0

    @property
    def path(self) -> list[str]:
        return self._path

    async def older(self, limit: int = PAGE) -> list[BranchItem]:
        """The next ``limit`` older visible messages, root-first (empty at the start)."""
        out: list[BranchItem] = []
        if self._held is not None:
            out.append(self._held)
            self._held = None
        while len(out) < limit and self._pos > 0:
            item = await self._step()
            if item is not None:
                out.append(item)
        # Never end a page inside a run of failed attempts: they belong to its first item.
        while self._pos > 0 and self._absorber is not None:
            item = await self._step()
            if item is not None:
                self._held = item
                break
        out.reverse()
        return out

    async def all(self) -> list[BranchItem]:
        """Every visible message of the branch, root-first."""
        pages: list[list[BranchItem]] = []
        while self.has_more:
            pages.append(await self.older(10_000))
        return [item for page in reversed(pages) for item in page]

    async def _message(self, entry_id: str) -> AgentMessage | None:
        """The entry's message, decoded with the entries before it in one step off the
        loop (the walk goes backwards, so those are read next)."""
        if entry_id not in self._decoded:
            self._decoded.clear()
            at = self._pos
            chunk = self._path[max(0, at - _READ_STEP) : at + 1]
            session = self._session
            wanted = [
                i
                for i in chunk
                if session.entry_kind(i)[0] in ("message", "custom_message", "branch_summary")
            ]
            if session.entry_count <= INLINE_ENTRIES:
                messages = session.get_messages(wanted)
            else:  # on the loop in slices: a worker thread held the GIL against the paint
                messages = await sliced(_decode_steps(session, wanted))
            self._decoded.update(zip(wanted, messages, strict=True))
            for i in chunk:
                self._decoded.setdefault(i, None)
        if self._session.entry_kind(entry_id)[0] == "compaction":
            await self._load.prepare(entry_id)
            return self._load(entry_id)
        return self._decoded.get(entry_id)

    async def _step(self) -> BranchItem | None:
        """Read the entry before the cursor; return it as an item when it shows as one."""
        self._pos -= 1
        session = self._session
        entry_id = self._path[self._pos]
        kind, role = session.entry_kind(entry_id)
        if kind == "message" and role == "toolResult":
            result = await self._message(entry_id)
            if isinstance(result, ToolResultMessage):
                self._results[result.tool_call_id] = entry_id
            return None
        if not is_visible(session, entry_id):
            return None
        message = await self._message(entry_id)
        if message is None:
            return None
        if message.role == "custom" and not getattr(message, "display", True):
            return None
        if isinstance(message, AssistantMessage):
            absorber = self._absorber
            if _failed(message) and absorber is not None:
                absorber.failed_attempts.insert(0, entry_id)
                return None
        item = self._item(entry_id, kind, role)
        if isinstance(message, AssistantMessage):
            calls = [b.id for b in message.content if isinstance(b, ToolCall)]
            owned = {c: self._results.pop(c) for c in calls if c in self._results}
            item.tool_result_ids = [owned[c] for c in calls if c in owned]
            ran = not _failed(message) and message.stop_reason != "aborted"
            if ran and (self._at_rest or self._answered_after):
                item.interrupted = [c for c in calls if c not in owned]
            self._answered_after = True
            self._absorber = item
        else:
            self._absorber = None
        return item

    def _item(self, entry_id: str, kind: str, role: str | None) -> BranchItem:
        session = self._session
        parent = visible_parent(session, entry_id)
        siblings = self._siblings.get(parent)
        if siblings is None:
            siblings = visible_children(session, parent)
            self._siblings[parent] = siblings
        return BranchItem(
            entry_id=entry_id,
            kind=kind,
            role=role,
            load=self._load,
            sibling_index=siblings.index(entry_id) if entry_id in siblings else 0,
            sibling_count=max(1, len(siblings)),
            label=session.label_of(entry_id),
        )


class TailReader:
    """`BranchReader` of a session still being read: the end of its current branch as
    `open_progressive` found it (one page; older ones come once the session is open).
    Siblings are not known yet (each item is shown as the only version)."""

    def __init__(self, tail: BranchTail) -> None:
        self._tail = tail
        self._done = False

    @property
    def has_more(self) -> bool:
        return not self._done

    async def older(self, limit: int = PAGE) -> list[BranchItem]:
        if self._done:
            return []
        self._done = True
        return tail_items(self._tail)


def tail_items(tail: BranchTail) -> list[BranchItem]:
    """The chat items of a `BranchTail` (tool results merged, root-first)."""
    messages = tail.messages
    load = messages.get
    items: list[BranchItem] = []
    by_call: dict[str, BranchItem] = {}
    calls_of: list[tuple[BranchItem, list[str]]] = []
    for facts in tail.entries:
        message = messages.get(facts.id)
        if message is None:
            continue
        if isinstance(message, ToolResultMessage):
            owner = by_call.get(message.tool_call_id)
            if owner is not None:
                owner.tool_result_ids.append(facts.id)
            continue
        if facts.type == "message" and facts.role not in _VISIBLE_ROLES:
            continue
        if message.role == "custom" and not getattr(message, "display", True):
            continue
        item = BranchItem(entry_id=facts.id, kind=facts.type, role=facts.role, load=load)
        if isinstance(message, AssistantMessage) and not _failed(message):
            calls = [b.id for b in message.content if isinstance(b, ToolCall)]
            by_call.update((c, item) for c in calls)
            if message.stop_reason != "aborted":
                calls_of.append((item, calls))
        items.append(item)
    for item, calls in calls_of:  # at rest: a call without a result was cut off
        owned = {r.tool_call_id for r in item.tool_results().values()}
        item.interrupted = [c for c in calls if c not in owned]
    return items


async def branch_items(session: Session, loader: MessageLoader | None = None) -> list[BranchItem]:
    """The chat view of the whole current branch (see `BranchReader`)."""
    return await BranchReader(session, loader).all()


def latest_leaf_under(session: Session, entry_id: str) -> str:
    """The most recent entry below ``entry_id`` (following the newest child each step)."""
    current = entry_id
    seen = {current}
    while True:
        children = [c for c in session.child_ids(current) if session.entry_kind(c)[0] != "leaf"]
        if not children:
            return current
        newest = children[-1]
        if newest in seen:
            return current
        seen.add(newest)
        current = newest


# --------------------------------------------------------------------------- usage


@dataclass(frozen=True)
class Usage:
    """Tokens and cost of the current branch, and how full the context is."""

    tokens: int = 0
    cost: float = 0.0
    context_tokens: int = 0
    context_window: int = 0

    def add(self, message: AssistantMessage) -> Usage:
        context = self.context_tokens
        if message.stop_reason not in ("error", "aborted"):
            context = message.usage.context_tokens()
        return Usage(
            tokens=self.tokens + int(message.usage.total_tokens or 0),
            cost=self.cost + float(message.usage.cost.total or 0),
            context_tokens=context,
            context_window=self.context_window,
        )


class _UsageCost(msgspec.Struct):
    total: Any = 0


class _UsageFields(msgspec.Struct, rename="camel"):
    input: Any = 0
    output: Any = 0
    cache_read: Any = 0
    cache_write: Any = 0
    total_tokens: Any = 0
    cost: _UsageCost | None = None


class _UsageMessage(msgspec.Struct, rename="camel"):
    usage: _UsageFields | None = None
    stop_reason: Any = None


class _UsageLine(msgspec.Struct):
    message: _UsageMessage | None = None


_decode_usage = msgspec.json.Decoder(_UsageLine).decode


def _num(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return 0


def _lines_in_runs(session: Session, ids: list[str]) -> Iterator[tuple[str, bytes]]:
    """(id, line) of ``ids``, read a run at a time (not the whole branch's lines at once)."""
    for at in range(0, len(ids), 1_000):
        run = ids[at : at + 1_000]
        yield from zip(run, session.raw_lines(run), strict=True)


def count_branch_usage(
    session: Session,
    context_window: int,
    since: tuple[str, Usage] | None = None,
    branch: Sequence[str] | None = None,
) -> Usage:
    """`Usage` of the current branch (each assistant message's usage added up), without
    decoding the messages: only the usage fields of each assistant line are read (a long
    branch holds tens of thousands). A line that does not fit that light read is decoded
    as a message. See `count_branch_usage_sliced`.

    ``since`` (an entry id and the usage counted up to it, e.g. remembered from the last
    run): when that entry is on the branch, only the entries after it are read (entries
    never change once written). ``branch``: the branch's ids when the caller has them."""
    return drain(_usage_steps(session, context_window, since, branch))


async def count_branch_usage_sliced(
    session: Session,
    context_window: int,
    since: tuple[str, Usage] | None = None,
    branch: Sequence[str] | None = None,
) -> Usage:
    """`count_branch_usage` on the event loop in slices of a few milliseconds
    (`_slices.sliced`): not a worker thread, which would hold the GIL against the GUI
    thread while a branch switch paints."""
    return await sliced(_usage_steps(session, context_window, since, branch))


_USAGE_STEP = 256
"""Assistant lines read between pauses of `_usage_steps`."""


def _usage_steps(
    session: Session,
    context_window: int,
    since: tuple[str, Usage] | None,
    branch: Sequence[str] | None,
) -> Generator[None, None, Usage]:
    ids = list(session.branch_ids(lenient=True) if branch is None else branch)
    tokens, cost, context = 0, 0.0, 0
    if since is not None and since[0] in ids:
        ids = ids[ids.index(since[0]) + 1 :]
        tokens, cost, context = since[1].tokens, since[1].cost, since[1].context_tokens
    ids = [i for i in ids if session.entry_kind(i) == ("message", "assistant")]
    for n, (entry_id, raw) in enumerate(_lines_in_runs(session, ids)):
        if n % _USAGE_STEP == 0:
            yield
        try:
            line = _decode_usage(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            message = session.get_message(entry_id)
            if isinstance(message, AssistantMessage):
                add = Usage().add(message)
                tokens += add.tokens
                cost += add.cost
                if message.stop_reason not in ("error", "aborted"):
                    context = add.context_tokens
            continue
        found = line.message
        u = found.usage if found is not None else None
        if found is None or u is None:
            continue
        parts = _num(u.input) + _num(u.output) + _num(u.cache_read) + _num(u.cache_write)
        total = int(_num(u.total_tokens) or parts)
        tokens += total
        cost += float(_num(u.cost.total) if u.cost is not None else 0)
        if found.stop_reason not in ("error", "aborted"):
            context = total
    return Usage(tokens=tokens, cost=cost, context_tokens=context, context_window=context_window)


# --------------------------------------------------------------------------- save state

SaveStatus = Literal["none", "saving", "saved", "not_saved", "read_only"]


@dataclass(frozen=True)
class SaveState:
    """What the status bar says about saving; ``pending`` entries wait in memory."""

    status: SaveStatus = "none"
    pending: int = 0
    detail: str | None = None
    code: str | None = None
    """Why saving failed (`SessionError` code): ``changed_on_disk`` means another program
    wrote to the file, and only a reload (not a retry) can save."""

    @property
    def label(self) -> str:
        return {
            "none": "",
            "saving": "Saving",
            "saved": "Saved",
            "not_saved": "Not saved",
            "read_only": "Read-only",
        }[self.status]


def entries_phrase(count: int) -> str:
    """ "1 entry", "2 entries"."""
    return f"{count} entr{'y' if count == 1 else 'ies'}"


# --------------------------------------------------------------------------- notices


@dataclass(frozen=True)
class Notice:
    """A line above the chat. ``key`` names its cause: a notice goes when its cause does
    (a new notice with the same key replaces it). ``action`` is e.g. Undo."""

    key: str
    text: str
    """English, with ``{name}`` placeholders for `args` (the GUI translates the text with
    the context ``notices``, then fills them in with `fill`)."""
    action_label: str | None = None
    args: tuple[tuple[str, str], ...] = ()
    """Values of the text's placeholders (paths, counts, messages: never translated)."""
    more: tuple[tuple[str, str], ...] = ()
    """Further buttons: (English label, the key `Workbench.notice_action` runs)."""

    @property
    def english(self) -> str:
        """The text with its values, untranslated (logs, ``--smoke``, comparisons)."""
        return fill(self.text, self.args)


def fill(template: str, args: Iterable[tuple[str, str]]) -> str:
    """``template`` (English or a translation of it) with its ``{name}`` placeholders
    filled; a translation with broken placeholders shows unfilled rather than failing."""
    values = dict(args)
    if not values:
        return template
    try:
        return template.format_map(values)
    except (KeyError, ValueError, IndexError, AttributeError):
        return template + " (" + ", ".join(values.values()) + ")"


# --------------------------------------------------------------------------- sidebar


@dataclass(frozen=True)
class SidebarRow:
    """One session in the sidebar. ``path`` is the session's reference in its store (the
    file's path for JSONL sessions); ``source`` names the list it comes from, so a second
    source (e.g. another program's sessions) can sit beside this app's own."""

    path: str
    id: str
    cwd: str
    title: str
    last_activity: str  # ISO-8601
    problem: str | None = None
    in_trash: bool = False
    source: str = "sessions"
    message_count: int = -1
    """Messages in the session (-1: unknown); 0 marks an empty "New session"."""
    activity: str = ""
    """Its agent's run: "running", "waiting" (for an approval), "failed" or "finished"
    (both until the session is shown), "" (none)."""
    run_started: float | None = None
    """When the running run started (``time.time()``): the sidebar paints the time since."""
    snippet: str = ""
    """Listed for a search: the words around its first hit in the session's text ("" when
    its title matched, or its store searches titles only)."""
    parent: str = ""
    """The session it was forked from (its reference, from the header's ``parentSession``);
    "" for none. The sidebar marks a fork, whose title "… (fork)" is often cut (m16)."""


def newest_first(rows: list[SidebarRow]) -> list[SidebarRow]:
    """Rows of several lists as one, most recent activity first (ISO times of any zone)."""
    return sorted(rows, key=lambda row: time_key(row.last_activity), reverse=True)


@dataclass(frozen=True)
class ModelChoices:
    """The model picker: (key, label) pairs, the current key, thinking levels."""

    models: tuple[tuple[str, str], ...] = ()
    current: str | None = None
    levels: tuple[str, ...] = ("off",)
    """Thinking levels to offer; none: a reasoning model whose server takes no level."""
    level: str = "off"
    pending: str | None = None
    """A model that is still being looked for (its server has not answered yet)."""


def error_attempt_text(message: AssistantMessage) -> str:
    """One line for a failed attempt: what failed, where."""
    info = classify_error(message)
    where = info.url or message.provider
    text = message.error_message or "The request failed."
    if info.kind == "authentication":
        text = f"{text.rstrip('.')}. Check the API key in Settings."  # m10: say what to do
    return f"{message.provider}/{message.model} at {where}: {text}" if where else text
