"""Sessions of Pi's older formats (v1, v2), migrated in memory, never rewritten.

The Pi CLI (pi-coding-agent 0.74.2, ``core/session-manager.js``) migrates such files on
load and rewrites them in place: header ``version`` missing (or null) means 1; v1 -> v2
gives every entry an id and ``parentId`` = the previous entry (one linear chain) and turns
a compaction's ``firstKeptEntryIndex`` (an index into the file's parsed lines, the header
being 0) into ``firstKeptEntryId``; v2 -> v3 renames the message role ``hookMessage`` to
``custom``; the header's ``version`` becomes 3. Lines that are not JSON are skipped.

`migrate_legacy` does exactly that to the bytes of a file and returns the v3 file Pi
would write, which the loader then reads like any other. Two differences, both on
purpose: v1 ids are derived from the session id and the entry's position (Pi draws
random ones), so opening the same file twice, or converting it, gives the same ids; and
lines that are not JSON objects are reported as damaged instead of being kept.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from desktop_agent.session._codec import loads_js, serialize
from desktop_agent.session._errors import SessionError
from desktop_agent.session._storage import DamagedLine

CURRENT_VERSION = 3


def legacy_version(header: Mapping[str, Any]) -> int | None:
    """1 or 2 for a header the Pi CLI migrates, None for anything else (v3 included)."""
    version = header.get("version")
    if version is None:
        return 1  # Pi: ``header.version ?? 1``
    if isinstance(version, bool) or not isinstance(version, int | float):
        return None
    if version in (1, 2):
        return int(version)
    return None


@dataclass(frozen=True)
class MigratedFile:
    """A legacy file as Pi's migration leaves it (in memory)."""

    version: int
    """The format version the file is in on disk (1 or 2)."""
    data: bytes
    """The v3 file: header line, then one line per entry, each ending with a newline."""
    origins: tuple[tuple[int, int, bytes], ...]
    """(physical line number, byte offset, original bytes) of each entry line of ``data``."""
    skipped: tuple[DamagedLine, ...]
    """Lines Pi's migration skips (not JSON objects), reported as damage."""

    def original_damage(self, damaged: list[DamagedLine]) -> list[DamagedLine]:
        """``damaged`` (line numbers of ``data``) mapped back to the original file, plus
        the lines the migration skipped, in file order."""
        out = list(self.skipped)
        for d in damaged:
            index = d.line_number - 2  # line 1 of ``data`` is the header
            if 0 <= index < len(self.origins):
                number, offset, raw = self.origins[index]
                out.append(DamagedLine(number, offset, d.reason, raw))
            else:
                out.append(d)
        out.sort(key=lambda d: d.line_number)
        return out


def _legacy_id(session_id: str, position: int, taken: set[str]) -> str:
    """An 8-hex-character id that depends only on the session and the entry's position."""
    salt = 0
    while True:
        seed = f"{session_id}\0{position}\0{salt}".encode()
        candidate = hashlib.sha256(seed).hexdigest()[:8]
        if candidate not in taken:
            taken.add(candidate)
            return candidate
        salt += 1


def _index(value: Any, length: int) -> int | None:
    """``entries[value]`` in JavaScript: an integral number within range, else nothing."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    index = int(value)
    return index if 0 <= index < length else None


def _migrate_v1_to_v2(entries: list[dict[str, Any]]) -> None:
    """Pi's ``migrateV1ToV2``, in place (ids: `_legacy_id`)."""
    session_id = str(entries[0].get("id", ""))
    taken: set[str] = set()
    previous: str | None = None
    for position, entry in enumerate(entries):
        if entry.get("type") == "session":
            entry["version"] = 2
            continue
        entry["id"] = _legacy_id(session_id, position, taken)
        entry["parentId"] = previous
        previous = entry["id"]
        if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
            raw_index = entry["firstKeptEntryIndex"]
            if isinstance(raw_index, bool) or not isinstance(raw_index, int | float):
                continue  # Pi leaves a non-number index where it is
            index = _index(raw_index, len(entries))
            if index is not None:
                target = entries[index]
                if target.get("type") != "session" and "id" in target:
                    entry["firstKeptEntryId"] = target["id"]
            del entry["firstKeptEntryIndex"]


def _migrate_v2_to_v3(entries: list[dict[str, Any]]) -> None:
    """Pi's ``migrateV2ToV3``, in place."""
    for entry in entries:
        if entry.get("type") == "session":
            entry["version"] = CURRENT_VERSION
            continue
        message = entry.get("message")
        if (
            entry.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "hookMessage"
        ):
            message["role"] = "custom"


def migrate_legacy(path: str, data: bytes) -> MigratedFile:
    """The v3 file Pi's migration makes of ``data`` (a v1 or v2 session file).

    Raises ``invalid_session`` when the first non-blank line is not a legacy header.
    """
    entries: list[dict[str, Any]] = []
    origins: list[tuple[int, int, bytes]] = []
    skipped: list[DamagedLine] = []
    offset = 0
    for number, piece in enumerate(data.split(b"\n"), start=1):
        start = offset
        offset += len(piece) + 1
        if not piece.strip():
            continue
        try:
            obj = loads_js(piece)
        except (ValueError, RecursionError):
            obj = None
            reason = "is not valid JSON"
        else:
            reason = "is not a valid session entry"
        if not isinstance(obj, dict):
            if not entries:
                raise SessionError(
                    "invalid_session",
                    f"Invalid JSONL session file {path}: first line is not a valid session header",
                )
            skipped.append(DamagedLine(number, start, reason, piece))
            continue
        entries.append(obj)
        origins.append((number, start, piece))
    if not entries or entries[0].get("type") != "session":
        raise SessionError(
            "invalid_session",
            f"Invalid JSONL session file {path}: first line is not a valid session header",
        )
    version = legacy_version(entries[0])
    if version is None:
        raise SessionError(
            "invalid_session", f"Invalid JSONL session file {path}: unsupported session version"
        )
    if version < 2:
        _migrate_v1_to_v2(entries)
    _migrate_v2_to_v3(entries)
    try:
        lines = [serialize(entries[0])]
    except SessionError as exc:
        raise SessionError(
            "invalid_session",
            f"Invalid JSONL session file {path}: first line is not a valid session header",
        ) from exc
    kept: list[tuple[int, int, bytes]] = []
    for entry, origin in zip(entries[1:], origins[1:], strict=True):
        if entry.get("type") == "session":
            continue  # a second header: Pi keeps it out of the entries as well
        try:
            line = serialize(entry)
        except SessionError:
            # A number JSON cannot hold (1e999): reported, like a line that is not JSON.
            number, offset, raw = origin
            skipped.append(DamagedLine(number, offset, "is not a valid session entry", raw))
            continue
        lines.append(line)
        kept.append(origin)
    return MigratedFile(
        version=version,
        data=b"".join(line + b"\n" for line in lines),
        origins=tuple(kept),
        skipped=tuple(skipped),
    )


def is_legacy_header(line: bytes) -> bool:
    """Whether ``line`` (a file's first non-blank line) is a v1 or v2 session header."""
    try:
        header = loads_js(line)
    except (ValueError, RecursionError):
        return False
    return (
        isinstance(header, dict)
        and header.get("type") == "session"
        and legacy_version(header) is not None
    )


def first_line(data: bytes) -> tuple[bytes, bool] | None:
    """The first non-blank line of ``data`` (without copying the rest) and whether a
    newline ends it. A last piece without a newline comes as it is, blank or not: the
    line may go on past ``data``. None: only blank lines."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            return data[start:], False
        piece = data[start:end]
        start = end + 1
        if piece.strip():
            return piece, True
    return None


def migrated_if_legacy(path: str, data: bytes) -> bytes:
    """``data`` itself, or the v3 file Pi's migration makes of it if it is v1 or v2."""
    found = first_line(data)
    if found is None or not is_legacy_header(found[0]):
        return data
    try:
        return migrate_legacy(path, data).data
    except SessionError:
        return data
