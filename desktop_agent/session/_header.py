"""The header and naming rules of Pi's JSONL session files (SESSION_FORMAT.md §3): the
folder of a cwd (`encode_cwd`), file names, session ids, parsing and validating a header
line with Pi's checks and messages, reading only the header of a file, and a new header.
"""

from __future__ import annotations

import errno
import re
import stat
from typing import Any

from desktop_agent.session._codec import loads_js
from desktop_agent.session._errors import SessionError
from desktop_agent.session._ids import now_iso, uuidv7
from desktop_agent.session._migrate import legacy_version
from desktop_agent.session._platform import OS_FILE_OPS, FileOps, NotRegularFileError, kind_of
from desktop_agent.session._storage import SessionMetadata, describe_os_error
from desktop_agent.utils.versions import header_stamp, is_newer, written_by

_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$", re.IGNORECASE)


def encode_cwd(cwd: str) -> str:
    """Pi's directory name for a cwd: drop one leading slash, ``/\\:`` -> ``-``, wrap."""
    stripped = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + re.sub(r"[/\\:]", "-", stripped) + "--"


def check_session_id(session_id: str) -> None:
    """Refuse ids that could escape the sessions folder or are not portable file names."""
    if not _SAFE_ID.match(session_id) or _WINDOWS_RESERVED.match(session_id):
        raise SessionError(
            "invalid_argument",
            f"Invalid session id {session_id!r}: use letters, digits, '.', '_' or '-'"
            " (at most 128 characters, not starting with '.')",
        )


def _invalid(path: str, reason: str) -> SessionError:
    return SessionError("invalid_session", f"Invalid JSONL session file {path}: {reason}")


def parse_header(line: bytes, path: str, *, allow_legacy: bool = False) -> dict[str, Any]:
    """Validate a header line with Pi's checks and messages.

    ``allow_legacy``: accept the v1/v2 headers the Pi CLI migrates (`legacy_version`).
    """
    try:
        obj = loads_js(line)
    except (ValueError, RecursionError) as exc:
        raise _invalid(path, "first line is not a valid session header") from exc
    if not isinstance(obj, dict) or obj.get("type") != "session":
        raise _invalid(path, "first line is not a valid session header")
    version = obj.get("version")
    v3 = version == 3 and not isinstance(version, bool) and isinstance(version, int | float)
    if not v3 and (not allow_legacy or legacy_version(obj) is None):
        raise _invalid(path, "unsupported session version")
    for key, what in (("id", "id"), ("timestamp", "timestamp"), ("cwd", "cwd")):
        value = obj.get(key)
        if not isinstance(value, str) or not value:
            raise _invalid(path, f"session header is missing {what}")
    if "parentSession" in obj and not isinstance(obj["parentSession"], str):
        raise _invalid(path, "session header parentSession must be a string")
    return obj


def header_metadata(
    obj: dict[str, Any], path: str, format_version: int | None = None
) -> SessionMetadata:
    meta = obj.get("metadata")
    return SessionMetadata(
        id=obj["id"],
        created_at=obj["timestamp"],
        cwd=obj["cwd"],
        path=path,
        parent_session_path=obj.get("parentSession"),
        metadata=meta if isinstance(meta, dict) else None,
        format_version=format_version or legacy_version(obj) or 3,
    )


class LegacyFile(Exception):
    """The header is a v1/v2 one: the file is read through Pi's migration instead."""


def v3_header(line: bytes, path: str) -> dict[str, Any]:
    """The header parser of a scan: a v1/v2 header raises `LegacyFile`."""
    obj = parse_header(line, path, allow_legacy=True)
    if legacy_version(obj) is not None:
        raise LegacyFile()
    return obj


def _read_first_line(ops: FileOps, fd: int, limit: int = 1 << 20) -> bytes:
    """The first physical line (without its newline), reading at most ``limit`` bytes."""
    data = b""
    offset = 0
    while len(data) < limit:
        chunk = ops.pread(fd, 1 << 16, offset)
        if not chunk:
            break
        cut = chunk.find(b"\n")
        if cut >= 0:
            return data + chunk[:cut]
        data += chunk
        offset += len(chunk)
    return data


def open_error(path: str, exc: OSError) -> SessionError:
    """The documented `SessionError` for a session file that cannot be opened for reading."""
    if isinstance(exc, NotRegularFileError):
        if stat.S_ISDIR(exc.mode):
            return SessionError("not_found", f"Session not found: {path} is a folder")
        return _invalid(path, f"it is {kind_of(exc.mode)}, not a regular file")
    if isinstance(exc, FileNotFoundError):
        return SessionError("not_found", f"Session not found: {path}")
    if exc.errno == errno.ELOOP:
        return _invalid(path, "it is a symbolic link that loops")
    return SessionError("storage", f"Failed to read session {path}: {describe_os_error(exc)}")


def open_for_read(path: str, ops: FileOps = OS_FILE_OPS) -> int:
    """A read descriptor of the session file at ``path``: only a regular file, opened
    without blocking; the documented `SessionError` (`open_error`) when it cannot be."""
    try:
        return ops.open_regular(path)
    except OSError as exc:
        raise open_error(path, exc) from exc


def read_header(path: str, ops: FileOps = OS_FILE_OPS) -> SessionMetadata:
    """Read only the first line (as Pi's listing does: a blank first line is no header).

    v1/v2 files (which the Pi CLI migrates) are listed too, with their `format_version`.
    Only a regular file is read, opened without blocking (a FIFO or device named
    ``*.jsonl`` is refused, never waited on). Raises `SessionError` only.
    """
    fd = open_for_read(path, ops)
    try:
        first = _read_first_line(ops, fd)
    except OSError as exc:
        raise open_error(path, exc) from exc
    finally:
        ops.close(fd)
    if not first.strip():
        raise _invalid(path, "missing session header")
    return header_metadata(parse_header(first.rstrip(b"\r"), path, allow_legacy=True), path)


def session_file_name(created_at: str, session_id: str) -> str:
    return f"{created_at.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def new_header(
    *,
    cwd: str,
    session_id: str | None,
    parent_session_path: str | None,
    metadata: dict[str, Any] | None,
) -> dict[str, Any]:
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": session_id or uuidv7(),
        "timestamp": now_iso(),
        "cwd": cwd,
    }
    if parent_session_path is not None:
        header["parentSession"] = parent_session_path
    # Which app wrote it (Pi ignores header keys it does not know, `metadata` included).
    header["metadata"] = {**(metadata or {}), **header_stamp()}
    return header


def newer_writer(header: dict[str, Any]) -> str | None:
    """The version of a newer Desktop Agent that wrote this session header, if one did."""
    meta = header.get("metadata")
    version = written_by(meta if isinstance(meta, dict) else None)
    return version if version is not None and is_newer(version) else None
