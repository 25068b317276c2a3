"""Session lines as Pi reads and writes them, without the tree: a JSON codec that agrees
with JavaScript (``JSON.parse`` of big integers and odd constants, ``JSON.stringify``'s
number layout), Pi's validation of an entry line (`parse_line`, `entry_from_obj`) and
the few fields the tree keeps of each entry (`Entry`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

import msgspec

from desktop_agent.session._errors import SessionError

BOOKKEEPING = frozenset(
    (
        "label",
        "leaf",
        "session_info",
        "model_change",
        "thinking_level_change",
        "active_tools_change",
    )
)
"""Entry types whose one value the tree keeps (`Tree.extra`)."""


class Entry(NamedTuple):
    """What the tree keeps of one entry (besides where its line is)."""

    id: str
    parent_id: str | None
    type: str
    timestamp: str
    role: str | None
    """``message.role`` of a ``message`` entry when it is a string, else None."""
    extra: Any
    """The bookkeeping value (see `Tree.extra`), else None."""


class LineError(ValueError):
    """A line is not a valid v3 entry; ``reason`` is Pi's wording."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
    text = bytes(raw).decode("utf-8", "replace")
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


def _extra_of(kind: str, obj: Mapping[str, Any]) -> Any:
    if kind == "label":
        return (obj.get("targetId"), obj.get("label"))
    if kind == "leaf":
        return obj.get("targetId")
    if kind == "session_info":
        return obj.get("name")
    if kind == "model_change":
        return (obj.get("provider"), obj.get("modelId"))
    if kind == "thinking_level_change":
        return obj.get("thinkingLevel")
    if kind == "active_tools_change":
        names = obj.get("activeToolNames")
        if isinstance(names, list):
            return tuple(n for n in names if isinstance(n, str))
        return None
    return None


def entry_from_obj(obj: Any) -> Entry:
    """Validate one entry object exactly as Pi's line validator does."""
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
    role = None
    if kind == "message":
        message = obj.get("message")
        if isinstance(message, dict) and isinstance(message.get("role"), str):
            role = message["role"]
    extra = _extra_of(kind, obj) if kind in BOOKKEEPING else None
    return Entry(entry_id, parent, kind, timestamp, role, extra)


class _MessageHead(msgspec.Struct):
    role: Any = None


class _Envelope(msgspec.Struct):
    """The fields of an entry line the tree needs; everything else is skipped unbuilt.

    Attribute names are the JSON field names (camelCase). The four base fields are
    typed, so msgspec checks them in C; anything unusual goes to the full parser.
    """

    type: str
    id: str
    parentId: str | None
    timestamp: str
    targetId: Any = msgspec.UNSET
    label: Any = msgspec.UNSET
    name: Any = msgspec.UNSET
    provider: Any = msgspec.UNSET
    modelId: Any = msgspec.UNSET
    thinkingLevel: Any = msgspec.UNSET
    activeToolNames: Any = msgspec.UNSET
    message: _MessageHead | msgspec.UnsetType = msgspec.UNSET


decode_envelope = msgspec.json.Decoder(_Envelope).decode
_UNSET = msgspec.UNSET


def envelope_extra(env: _Envelope) -> Any:
    kind = env.type
    if kind == "label":
        target = None if env.targetId is _UNSET else env.targetId
        return (target, None if env.label is _UNSET else env.label)
    if kind == "leaf":
        return env.targetId
    if kind == "session_info":
        return None if env.name is _UNSET else env.name
    if kind == "model_change":
        provider = None if env.provider is _UNSET else env.provider
        return (provider, None if env.modelId is _UNSET else env.modelId)
    if kind == "thinking_level_change":
        return None if env.thinkingLevel is _UNSET else env.thinkingLevel
    names = env.activeToolNames
    if isinstance(names, list):
        return tuple(n for n in names if isinstance(n, str))
    return None


def parse_line(raw: bytes | memoryview) -> Entry:
    """Parse and validate one entry line (without its newline).

    Fast path: msgspec decodes only the envelope (the whole line's syntax is still
    checked; invalid UTF-8 in strings it skips is not, as Pi reads such bytes as U+FFFD
    and `decode_entry` does the same). Anything unusual goes to the full parser, so
    error reasons keep Pi's wording.
    """
    try:
        env = decode_envelope(raw)
    except (msgspec.DecodeError, RecursionError):
        env = None
    if env is not None and env.id and env.timestamp:
        kind = env.type
        if kind == "message":
            head = env.message
            role = head.role if not isinstance(head, msgspec.UnsetType) else None
            return Entry(
                env.id, env.parentId, kind, env.timestamp, role if type(role) is str else None, None
            )
        if kind not in BOOKKEEPING:
            return Entry(env.id, env.parentId, kind, env.timestamp, None, None)
        if kind != "leaf" or env.targetId is None or isinstance(env.targetId, str):
            return Entry(env.id, env.parentId, kind, env.timestamp, None, envelope_extra(env))
    try:
        obj = loads_js(bytes(raw))
    except (ValueError, RecursionError) as exc:
        raise LineError("is not valid JSON") from exc
    return entry_from_obj(obj)


class _IdOnly(msgspec.Struct):
    id: Any = None


_ID_ONLY = msgspec.json.Decoder(_IdOnly).decode


def line_id(raw: bytes) -> Any:
    """The ``id`` field of a line (None if it has none or is not JSON)."""
    try:
        return _ID_ONLY(raw).id
    except (msgspec.DecodeError, RecursionError):
        try:
            obj = loads_js(raw)
        except (ValueError, RecursionError):
            return None
        return obj.get("id") if isinstance(obj, dict) else None


# ------------------------------------------------------------------ writing


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
