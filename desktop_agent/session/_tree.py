"""The in-memory tree every storage shares: rows, lookups, labels, leaf, path walks.

A row keeps an entry's JSON line (bytes) plus the few fields the tree and
`build_context` need; the typed model is parsed from the line on demand. That keeps an
open 100 MB session close to 1x its size in memory and opening it one ``json.loads`` per
line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import msgspec

from desktop_agent.session._errors import SessionError


class Row:
    """One entry: its line and the fields the tree and context builder use."""

    __slots__ = ("id", "info", "parent_id", "raw", "timestamp", "type")

    def __init__(
        self,
        id: str,
        parent_id: str | None,
        type: str,
        timestamp: str,
        raw: bytes,
        info: Any,
    ) -> None:
        self.id = id
        self.parent_id = parent_id
        self.type = type
        self.timestamp = timestamp
        self.raw = raw
        # type-specific: message -> (role, provider, model); model_change -> (provider, id);
        # thinking_level_change -> level; label -> (target, label); leaf -> target;
        # session_info -> name; active_tools_change -> tuple of names; else None.
        self.info = info

    def obj(self) -> dict[str, Any]:
        """The entry as a JSON object (parsed from the line each time)."""
        return decode_entry(self.raw)


_DECODE = msgspec.json.Decoder().decode


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _js_int(text: str) -> int | float:
    # JSON.parse reads every number as a double; Python refuses int() of > 4300 digits.
    return int(text) if len(text) <= 4000 else float(text)


def loads_js(raw: bytes) -> Any:
    """``JSON.parse`` of a line as Pi reads it: invalid UTF-8 becomes U+FFFD (Node's
    UTF-8 decoding), NaN/Infinity and a BOM are refused, huge integers become floats.

    Raises ``ValueError`` or ``RecursionError`` (nesting deeper than the interpreter's
    recursion limit) when the line is not readable JSON.
    """
    text = raw.decode("utf-8", "replace")
    return json.loads(text, parse_constant=_reject_constant, parse_int=_js_int)


def decode_entry(raw: bytes) -> dict[str, Any]:
    """The JSON object of an entry line the line validator accepted.

    msgspec first (fast); the JSON fallback reads what it refuses (lone surrogate
    escapes, numbers out of its range, invalid UTF-8). If even that fails the line has
    changed under us: `SessionError` ``invalid_entry``, never another exception.
    """
    try:
        value = _DECODE(raw)
    except (msgspec.DecodeError, RecursionError):
        try:
            value = loads_js(raw)
        except (ValueError, RecursionError) as exc:
            raise SessionError("invalid_entry", f"An entry line is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise SessionError("invalid_entry", "An entry line is not a JSON object")
    return value


def lines_of(rows: Iterable[Row]) -> bytes:
    """The rows as file content: each entry's line followed by a newline."""
    return b"".join([r.raw + b"\n" for r in rows])


class LineError(ValueError):
    """A line is not a valid v3 entry; ``reason`` is Pi's wording."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _info_for(obj: Mapping[str, Any]) -> Any:
    kind = obj["type"]
    if kind == "message":
        msg = obj.get("message")
        if isinstance(msg, dict):
            role = msg.get("role")
            if role == "assistant":
                return (role, msg.get("provider"), msg.get("model"))
            return (role, None, None)
        return (None, None, None)
    if kind == "model_change":
        return (obj.get("provider"), obj.get("modelId"))
    if kind == "thinking_level_change":
        return obj.get("thinkingLevel")
    if kind == "label":
        return (obj.get("targetId"), obj.get("label"))
    if kind == "leaf":
        return obj.get("targetId")
    if kind == "session_info":
        return obj.get("name")
    if kind == "active_tools_change":
        names = obj.get("activeToolNames")
        if isinstance(names, list):
            return tuple(n for n in names if isinstance(n, str))
        return None
    return None


def row_from_obj(obj: Any, raw: bytes) -> Row:
    """Validate one entry object exactly as Pi's line validator does and make its row."""
    if not isinstance(obj, dict):
        raise LineError("is not a valid session entry")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise LineError("is missing entry type")
    entry_id = obj.get("id")
    if not isinstance(entry_id, str) or not entry_id:
        raise LineError("is missing entry id")
    if "parentId" not in obj:
        raise LineError("has invalid parentId")
    parent = obj["parentId"]
    if parent is not None and not isinstance(parent, str):
        raise LineError("has invalid parentId")
    timestamp = obj.get("timestamp")
    if not isinstance(timestamp, str) or not timestamp:
        raise LineError("is missing timestamp")
    if kind == "leaf":
        if "targetId" not in obj:
            raise LineError("has invalid targetId")
        target = obj["targetId"]
        if target is not None and not isinstance(target, str):
            raise LineError("has invalid targetId")
    return Row(entry_id, parent, kind, timestamp, raw, _info_for(obj))


class _MessageHead(msgspec.Struct):
    role: Any = None
    provider: Any = None
    model: Any = None


class _Envelope(msgspec.Struct):
    """The fields of an entry line the tree needs; everything else is skipped unbuilt.

    Attribute names are the JSON field names (camelCase)."""

    type: Any = msgspec.UNSET
    id: Any = msgspec.UNSET
    parentId: Any = msgspec.UNSET
    timestamp: Any = msgspec.UNSET
    targetId: Any = msgspec.UNSET
    label: Any = msgspec.UNSET
    name: Any = msgspec.UNSET
    provider: Any = msgspec.UNSET
    modelId: Any = msgspec.UNSET
    thinkingLevel: Any = msgspec.UNSET
    activeToolNames: Any = msgspec.UNSET
    message: _MessageHead | msgspec.UnsetType = msgspec.UNSET


_ENVELOPE_DECODER = msgspec.json.Decoder(_Envelope)
_ENVELOPE_FIELDS = tuple(f for f in _Envelope.__struct_fields__ if f != "message")


def _parse_envelope(raw: bytes) -> Row | None:
    """Fast path: decode only the envelope (the whole line's syntax is still checked).

    Returns None when the line needs the full parser (any doubt: the full parser decides,
    so error reasons keep Pi's wording). Invalid UTF-8 in strings it skips is not checked:
    Pi reads such bytes as U+FFFD, and `decode_entry` does the same.
    """
    try:
        env = _ENVELOPE_DECODER.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    obj: dict[str, Any] = {}
    for name in _ENVELOPE_FIELDS:
        value = getattr(env, name)
        if value is not msgspec.UNSET:
            obj[name] = value
    head = env.message
    if not isinstance(head, msgspec.UnsetType):
        obj["message"] = {"role": head.role, "provider": head.provider, "model": head.model}
    return row_from_obj(obj, raw)


def parse_line(raw: bytes) -> Row:
    """Parse and validate one entry line (without its newline)."""
    try:
        row = _parse_envelope(raw)
    except LineError:
        row = None
    if row is not None:
        return row
    try:
        obj = loads_js(raw)
    except (ValueError, RecursionError) as exc:
        raise LineError("is not valid JSON") from exc
    return row_from_obj(obj, raw)


def js_number(value: float) -> str:
    """``Number.prototype.toString`` of a finite float (ECMAScript Number::toString).

    Python's ``repr`` gives the same shortest round-trip digits; only the layout differs
    (``1e-07`` vs ``1e-7``, ``3e-05`` vs ``0.00003``, ``1e+16`` vs ``10000000000000000``).
    """
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + exponent  # position of the decimal point within ``digits``
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        exp = f"e{'+' if e >= 0 else '-'}{abs(e)}"
        out = (digits if k == 1 else digits[0] + "." + digits[1:]) + exp
    return sign + out


def _needs_js_floats(obj: Any) -> bool:
    """Whether ``obj`` holds a float that Python's json writes differently from JS."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if item != item or item in (_INF, -_INF):
                return False  # refused later by allow_nan=False
            if repr(item) != js_number(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


_INF = float("inf")


class _JsFloatEncoder(json.JSONEncoder):
    """The pure-Python encoder with JavaScript's float formatting."""

    def iterencode(self, o: Any, _one_shot: bool = False) -> Any:
        def floatstr(value: float) -> str:
            if value != value or value in (_INF, -_INF):
                raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
            return js_number(value)

        encode = (
            json.encoder.py_encode_basestring_ascii
            if self.ensure_ascii
            else json.encoder.py_encode_basestring
        )
        make = json.encoder._make_iterencode  # type: ignore[attr-defined]
        return make(
            {} if self.check_circular else None,
            self.default,
            encode,
            self.indent,
            floatstr,
            self.key_separator,
            self.item_separator,
            self.sort_keys,
            self.skipkeys,
            _one_shot,
        )(o, 0)


def _dumps(obj: Any, *, ensure_ascii: bool) -> str:
    if _needs_js_floats(obj):
        encoder = _JsFloatEncoder(ensure_ascii=ensure_ascii, separators=(",", ":"), allow_nan=False)
        return "".join(encoder.iterencode(obj))
    return json.dumps(obj, ensure_ascii=ensure_ascii, separators=(",", ":"), allow_nan=False)


def serialize(obj: Mapping[str, Any]) -> bytes:
    """One compact JSON line exactly as ``JSON.stringify`` writes it (raw non-ASCII).

    Numbers use JavaScript's layout (``1e-7``, ``0.00003``, ``1`` for ``1.0``). Text that
    cannot be UTF-8 encoded (lone surrogates from undecodable tool output) is written with
    ``\\u`` escapes instead, still valid JSON that reads back the same; NaN and infinities
    are refused because JSON cannot hold them.
    """
    try:
        text = _dumps(obj, ensure_ascii=False)
    except ValueError as exc:
        raise SessionError("invalid_argument", f"entry is not valid JSON: {exc}") from exc
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _dumps(obj, ensure_ascii=True).encode("ascii")


class Tree:
    """Rows in file order with lookups, labels, leaf recovery and path walks."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.by_id: dict[str, Row] = {}
        self.labels: dict[str, str] = {}
        self.leaf_id: str | None = None
        self.name: str | None = None
        self._children: dict[str | None, list[Row]] | None = None
        self.parsed: dict[int, Any] = {}
        """Context messages already parsed, by ``id(row)``; rows are immutable."""
        self.damaged = False
        """Lines of the file could not be read: a missing parent is explained by the
        damage, so path walks end there instead of failing (the readable path)."""

    def add(self, row: Row) -> None:
        self.rows.append(row)
        self.by_id[row.id] = row
        if row.type == "label":
            target, label = row.info
            text = label.strip() if isinstance(label, str) else ""
            if isinstance(target, str):
                if text:
                    self.labels[target] = text
                else:
                    self.labels.pop(target, None)
        elif row.type == "session_info":
            name = row.info
            self.name = name.strip() or None if isinstance(name, str) else None
        self.leaf_id = row.info if row.type == "leaf" else row.id
        if self._children is not None:
            self._children.setdefault(row.parent_id or None, []).append(row)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def get(self, entry_id: str) -> Row | None:
        return self.by_id.get(entry_id)

    def require(self, entry_id: str) -> Row:
        row = self.by_id.get(entry_id)
        if row is None:
            raise SessionError("not_found", f"Entry {entry_id} not found")
        return row

    def current_leaf(self) -> str | None:
        """The leaf id; `invalid_session` if it names an entry that does not exist."""
        leaf = self.leaf_id
        if leaf is not None and leaf not in self.by_id:
            raise SessionError("invalid_session", f"Entry {leaf} not found")
        return leaf

    def path_to_root(self, entry_id: str | None, *, lenient: bool = False) -> list[Row]:
        """Root-first path ending at ``entry_id``: O(path length), cycle-safe.

        ``lenient``: a missing parent ends the path (the orphan becomes a root, as the
        coding-agent reads damaged files) instead of raising ``invalid_session``.
        """
        if entry_id is None:
            return []
        row = self.require(entry_id)
        path = [row]
        by_id = self.by_id
        limit = len(by_id)
        lenient = lenient or self.damaged
        while row.parent_id:
            parent = by_id.get(row.parent_id)
            if parent is None:
                if lenient:
                    break
                raise SessionError("invalid_session", f"Entry {row.parent_id} not found")
            path.append(parent)
            if len(path) > limit:
                raise SessionError(
                    "invalid_session", f"Parent cycle: entry {parent.id} is its own ancestor"
                )
            row = parent
        path.reverse()
        return path

    def children_map(self) -> dict[str | None, list[Row]]:
        """Children of every entry (key None = roots), in file order; built once."""
        if self._children is None:
            children: dict[str | None, list[Row]] = {}
            for row in self.rows:
                children.setdefault(row.parent_id or None, []).append(row)
            self._children = children
        return self._children
