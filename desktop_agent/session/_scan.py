"""Reading a JSONL session file: one streaming pass that decodes only each line's envelope.

`scan` reads the file in chunks of a few MB (memory stays bounded whatever the file's
size, and no line is copied into the tree: it keeps offsets), validates every line with
Pi's rules (`_codec.parse_line`), appends the entries to a `Tree` column by column, and
classifies what is not an entry:

- the torn tail: the last line when it has no newline or is not a valid entry, or, after
  a power cut that kept a later page of unsynced data but not an earlier one, everything
  from the first damaged line on when what follows it is damaged too (`_torn_from`);
- mid-file damage: any other line that is not a valid entry.

A scan can start after a prefix that is already indexed (a file that only grew): then
only the new bytes are read.
"""

from __future__ import annotations

import gc
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from desktop_agent.session._codec import (
    BOOKKEEPING,
    LineError,
    decode_envelope,
    envelope_extra,
    parse_line,
)
from desktop_agent.session._columns import intern_text
from desktop_agent.session._errors import SessionError
from desktop_agent.session._platform import FileOps
from desktop_agent.session._storage import DamagedLine
from desktop_agent.session._tree import Tree

CHUNK = 8 << 20
PAGE = 4096


def invalid(path: str, reason: str) -> SessionError:
    return SessionError("invalid_session", f"Invalid JSONL session file {path}: {reason}")


HeaderParser = Callable[[bytes, str], dict[str, Any]]
"""Validates a header line (``_header.parse_header``)."""


@dataclass
class _Bad:
    line_number: int
    offset: int
    raw: bytes
    reason: str


@dataclass
class ScanResult:
    """What one pass over (a part of) a file found."""

    size: int
    """File size the scan went up to."""
    header: dict[str, Any] | None = None
    header_raw: bytes = b""
    clean_end: int = 0
    """End of the last whole line before any torn tail (where appends continue)."""
    lines: int = 0
    """Physical lines before ``clean_end``."""
    torn_offset: int | None = None
    damaged: list[DamagedLine] = field(default_factory=list)
    bytes_read: int = 0


@dataclass
class _State:
    line_no: int
    bad: list[_Bad]
    last_bad: bool = False  # the last non-blank whole line was not an entry


def scan(
    ops: FileOps,
    fd: int,
    path: str,
    tree: Tree,
    *,
    size: int,
    start: int = 0,
    lines: int = 0,
    header: HeaderParser | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ScanResult:
    """Scan ``[start, size)`` of the file into ``tree`` (see the module doc).

    ``header``: the scan starts at the beginning of the file and must find the header
    first, and validate it with this parser (`SessionError` ``invalid_session`` if there
    is none). Without it ``start`` is the end of an indexed clean prefix that holds
    ``lines`` physical lines. ``progress(bytes done, total)`` is called per chunk (from
    the scanning thread).
    """
    result = ScanResult(size=size)
    state = _State(lines, [])
    first_row = len(tree)
    offset = start  # file offset of buf[0]
    buf = b""
    need_header = header is not None
    gc_was_enabled = gc.isenabled()
    gc.disable()  # entries hold no cycles: the cyclic GC would only slow the scan
    try:
        read_at = start
        while True:
            chunk = ops.pread(fd, min(CHUNK, size - read_at), read_at) if read_at < size else b""
            result.bytes_read += len(chunk)
            read_at += len(chunk)
            if progress is not None:
                progress(read_at, size)
            eof = not chunk
            data = buf + chunk if buf else chunk
            if header is not None and need_header:
                got = _find_header(data, path, eof, header)
                if got is None:
                    buf = data
                    if eof:
                        raise invalid(path, "missing session header")
                    continue
                consumed, result.header, result.header_raw, header_lines = got
                state.line_no += header_lines
                need_header = False
                if consumed > len(data):  # the header has no newline: nothing else follows
                    result.clean_end = offset + len(data)
                    result.lines = state.line_no
                    return result
                data = data[consumed:]
                offset += consumed
            last_nl = data.rfind(b"\n")
            if last_nl >= 0:
                _scan_lines(data, last_nl, offset, tree, state)
                offset += last_nl + 1
                buf = data[last_nl + 1 :]
            else:
                buf = data
            if eof:
                break
    finally:
        if gc_was_enabled:
            gc.enable()

    clean_end = offset
    lines_before = state.line_no
    bad = state.bad
    if buf:
        # An unterminated last piece: torn, even when it is a valid entry (its newline
        # never reached the disk), and a run of only whitespace too.
        result.torn_offset = offset
    elif state.last_bad and bad:
        torn = bad.pop()
        result.torn_offset = torn.offset
        clean_end = torn.offset
        lines_before = torn.line_number - 1
    cut = _torn_from(tree, first_row, bad, size)
    if cut is not None:
        first = bad[cut]
        keep = bisect_right(tree.offsets, first.offset - 1, lo=first_row)
        tree.truncate(keep)
        result.torn_offset = first.offset
        clean_end = first.offset
        lines_before = first.line_number - 1
        del bad[cut:]
    tree.finish_bulk(first_row)
    result.damaged = [DamagedLine(b.line_number, b.offset, b.reason, b.raw) for b in bad]
    if result.damaged:
        tree.damaged = True
    result.clean_end = clean_end
    result.lines = lines_before
    return result


def _find_header(
    data: bytes, path: str, eof: bool, parse_header: HeaderParser
) -> tuple[int, dict[str, Any], bytes, int] | None:
    """The header (first non-blank line) in ``data``: (bytes consumed, header, raw line,
    physical lines consumed).

    None when ``data`` does not hold it whole yet. A header without a newline at the end
    of the file is consumed as ``len(data) + 1``.
    """
    pos = 0
    lines = 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            piece = data[pos:]
            if not eof or not piece.strip():
                return None
            raw = piece.rstrip(b"\r")
            return len(data) + 1, parse_header(raw, path), raw, lines + 1
        lines += 1
        piece = data[pos:nl]
        if piece.strip():
            raw = piece.rstrip(b"\r")
            return nl + 1, parse_header(raw, path), raw, lines
        pos = nl + 1


def _scan_lines(data: bytes, stop: int, base: int, tree: Tree, state: _State) -> None:
    """Parse the whole lines of ``data[:stop + 1]`` (``base``: file offset of data[0])."""
    view = memoryview(data)
    find = data.find
    decode = decode_envelope
    ids, parents, types, stamps, roles = (
        tree.ids,
        tree.growing("parents"),
        tree.types,
        tree.growing("timestamps"),
        tree.roles,
    )
    offsets, lengths, extra = tree.offsets, tree.lengths, tree.extra
    bad = state.bad
    line_no = state.line_no
    last_bad = state.last_bad
    message_type = intern_text("message")
    known: dict[str, str] = {}
    pos = 0
    while pos <= stop:
        nl = find(b"\n", pos, stop + 1)
        line_no += 1
        end = nl
        if end > pos and data[end - 1] == 13:  # CRLF
            end -= 1
        if end == pos:
            pos = nl + 1
            continue
        env: Any = None
        if data[pos] == 123:  # "{": the fast path
            try:
                env = decode(view[pos:end])
            except (msgspec.DecodeError, RecursionError):
                env = None
        if env is not None and env.id and env.timestamp:
            kind = env.type
            role = None
            value: Any = None
            if kind == "message":
                kind = message_type
                head = env.message
                if not isinstance(head, msgspec.UnsetType) and type(head.role) is str:
                    role = known.get(head.role) or known.setdefault(
                        head.role, intern_text(head.role)
                    )
            elif kind in BOOKKEEPING:
                if kind == "leaf" and not (env.targetId is None or type(env.targetId) is str):
                    env = None
                else:
                    value = envelope_extra(env)
            if env is not None:
                i = len(ids)
                ids.append(env.id)
                parents.append(env.parentId)
                types.append(known.get(kind) or known.setdefault(kind, intern_text(kind)))
                stamps.append(env.timestamp)
                roles.append(role)
                offsets.append(base + pos)
                lengths.append(end - pos)
                if value is not None or kind in BOOKKEEPING:
                    extra[i] = value
                last_bad = False
                pos = nl + 1
                continue
        raw = bytes(view[pos:end])
        if not raw.strip():
            pos = nl + 1
            continue
        try:
            entry = parse_line(raw)
        except LineError as exc:
            bad.append(_Bad(line_no, base + pos, raw, exc.reason))
            last_bad = True
            pos = nl + 1
            continue
        i = len(ids)
        ids.append(entry.id)
        parents.append(entry.parent_id)
        types.append(intern_text(entry.type))
        stamps.append(entry.timestamp)
        roles.append(intern_text(entry.role) if entry.role is not None else None)
        offsets.append(base + pos)
        lengths.append(end - pos)
        if entry.type in BOOKKEEPING:
            extra[i] = entry.extra
        last_bad = False
        pos = nl + 1
    state.line_no = line_no
    state.last_bad = last_bad


def _torn_from(tree: Tree, first_row: int, bad: list[_Bad], size: int) -> int | None:
    """Index in ``bad`` where a power-cut tail starts, if the first damage is one.

    The first damaged line starts a torn tail (instead of being mid-file damage) when
    every line after it is damaged too, or when it holds a run of NUL bytes that ends on
    a 4 KiB page boundary (a page of unsynced data that never reached the disk while a
    later one did) and no entry after it descends from an entry before it (their parents
    were in the lost page). A byte flipped in the middle of a file is neither: it stays
    mid-file damage and the file is not touched.
    """
    if not bad:
        return None
    first = bad[0]
    offsets = tree.offsets
    after = bisect_right(offsets, first.offset, lo=first_row)
    if after >= len(offsets):
        return 0  # nothing but damage after it
    if not _holds_lost_page(first, size):
        return None
    before = set(tree.ids[:after])
    for i in range(after, len(offsets)):
        parent = tree.parent_at(i)
        if parent is None or parent in before:
            return None  # attached to the readable tree: real entries, keep them
    return 0


def _holds_lost_page(line: _Bad, size: int) -> bool:
    """Whether the line holds a NUL run ending on a page boundary (or at the end)."""
    start, end = line.offset, line.offset + len(line.raw)
    raw = line.raw
    boundary = (start // PAGE + 1) * PAGE
    while boundary <= end:
        if raw[boundary - 1 - start] == 0:
            return True
        boundary += PAGE
    return end == size and raw[-1:] == b"\x00"
