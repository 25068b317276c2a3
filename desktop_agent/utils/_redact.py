"""Secret redaction: known secret shapes become a visible ``[redacted: <kind>]`` marker.

One set of patterns for everything the app writes: session entries (through the harness),
tool-output files (through the tools), logs (`RedactingFilter`) and the environment of
tool processes (`is_secret_variable`). Recognised, in any text:

- provider and service keys by shape: OpenAI (``sk-...``, ``sk-proj-...``), Anthropic
  (``sk-ant-...``), GitHub (``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``/``github_pat_``),
  GitLab (``glpat-``), AWS access key ids (``AKIA...``), Slack tokens (``xox?-``) and
  webhooks, Google API keys (``AIza...``), OAuth tokens (``ya29.``) and client secrets
  (``GOCSPX-``), Hugging Face (``hf_``), Stripe (``sk_live_``...), JSON Web Tokens;
- ``Bearer <token>``, ``Authorization:``/``X-Api-Key:`` style header values;
- PEM private key blocks (``-----BEGIN ... PRIVATE KEY-----`` to its END line, or to the
  end of the text when the END line is missing);
- the password of a URL (``postgres://user:<password>@host``, as in ``DATABASE_URL``);
- the value of an assignment whose name ends in a secret word (``password=``,
  ``DB_PASSWORD=...``, ``"api_key": "..."``, ``aws_secret_access_key = ...``,
  ``--token value``), unless the value is plainly code (``token = get_token()``,
  ``password=password``, ``self.secret``, ``None``...);
- literal values registered with `Redactor.add_secret` (the app's own API keys), whatever
  their shape.

Redaction is idempotent (a marker is never redacted again) and keeps everything around a
secret byte for byte (a header's name, a URL's user and host, an assignment's quotes).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MARKER_PREFIX = "[redacted: "


def marker(kind: str) -> str:
    """The text that replaces a secret of ``kind``: ``[redacted: anthropic key]``."""
    return f"{MARKER_PREFIX}{kind}]"


# ------------------------------------------------------------------------ patterns
#
# Each rule is a regex that starts with a literal where it can (the regex engine then
# scans for that literal at C speed), run only when one of its lower-case trigger strings
# occurs in the text. Word boundaries are checked by a look-behind *after* the literal.


def _after(prefix: str, width: int, chars: str = "A-Za-z0-9_-") -> str:
    """The regex ``prefix`` (``width`` characters long), not preceded by a word character.

    The look-behind comes after the prefix so that the regex starts with a literal.
    """
    return prefix + f"(?<![{chars}].{{{width}}})"


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    triggers: tuple[str, ...]
    regex: re.Pattern[str]
    """A context rule's regex has a group ``v``: the value redacted (the rest is kept)."""


def _shape(kind: str, triggers: tuple[str, ...], pattern: str, flags: int = 0) -> _Rule:
    return _Rule(kind, triggers, re.compile(pattern, flags))


def _context(kind: str, triggers: tuple[str, ...], prefix: str, value: str) -> _Rule:
    return _Rule(kind, triggers, re.compile(f"{prefix}(?P<v>{value})"))


_TOKEN_END = r"(?![A-Za-z0-9_-])"

_SHAPE_RULES: tuple[_Rule, ...] = (
    _shape(
        "private key",
        ("-----begin",),
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
        re.DOTALL,
    ),
    _shape("anthropic key", ("sk-ant-",), _after(r"sk-ant-", 7) + r"[A-Za-z0-9_-]{20,}"),
    _shape("openai key", ("sk-",), _after(r"sk-", 3) + r"(?!ant-)[A-Za-z0-9_-]{20,}"),
    _shape("stripe key", ("sk_",), _after(r"sk_(?:live|test)_", 8) + r"[A-Za-z0-9]{16,}"),
    _shape("stripe key", ("rk_",), _after(r"rk_(?:live|test)_", 8) + r"[A-Za-z0-9]{16,}"),
    _shape(
        "github token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        _after(r"gh[pousr]_", 4)
        + r"[A-Za-z0-9]{30,}|"
        + _after(r"github_pat_", 11)
        + r"[A-Za-z0-9_]{30,}",
    ),
    _shape("gitlab token", ("glpat-",), _after(r"glpat-", 6) + r"[A-Za-z0-9_-]{20,}"),
    _shape(
        "aws access key",
        ("akia", "asia", "abia", "acca"),
        _after(r"A(?:KIA|SIA|BIA|CCA)", 4, "A-Za-z0-9") + r"[0-9A-Z]{16}(?![A-Za-z0-9])",
    ),
    _shape("slack token", ("xox",), _after(r"xox", 3) + r"[abposre]-[A-Za-z0-9-]{10,}"),
    _shape(
        "slack webhook",
        ("hooks.slack.com",),
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,}",
    ),
    _shape("google api key", ("aiza",), _after(r"AIza", 4) + r"[0-9A-Za-z_-]{35}" + _TOKEN_END),
    _shape("google oauth token", ("ya29.",), _after(r"ya29\.", 5) + r"[0-9A-Za-z_-]{20,}"),
    _shape("google client secret", ("gocspx-",), _after(r"GOCSPX-", 7) + r"[A-Za-z0-9_-]{20,}"),
    _shape("hugging face token", ("hf_",), _after(r"hf_", 3) + r"[A-Za-z0-9]{30,}"),
    _shape(
        "jwt",
        ("eyj",),
        _after(r"eyJ", 3) + r"[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
)

# Matched against the lower-cased text (same offsets), so that each regex starts with a
# literal; the kept prefix and the value are then taken from the original text.
_CONTEXT_RULES: tuple[_Rule, ...] = (
    _context(
        "bearer token", ("bearer",), _after("bearer", 6, "a-z0-9") + r"\s+", r"[a-z0-9._~+/-]{8,}=*"
    ),
    _context(
        "credentials",
        ("authorization",),
        _after("authorization", 13, "a-z0-9")
        + r"[\"']?\s*[:=]\s*[\"']?(?:(?:basic|token|digest|apikey)\s+)?",
        r"(?!bearer\s)[a-z0-9._~+/-]{8,}=*",
    ),
    _context(
        "api key",
        ("api-key", "auth-token"),
        r"(?:api-key|auth-token)[\"']?\s*[:=]\s*[\"']?",
        r"[^\s\"',;]{8,}",
    ),
    _context(
        "secret",
        ("--",),
        _after("--", 2)
        + r"(?:password|passwd|passphrase|token|api-key|apikey|secret|access-key|secret-key"
        r"|client-secret|auth-token)\s+",
        r"\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'-][^\s\"']*",
    ),
)
_URL_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")
_URL_REST = re.compile(r"[^\s:/@\"'<>]*:(?P<v>[^\s@/\"'<>]+)@")

# Assignments: found from the secret word (longest alternatives first), then checked.
_SECRET_WORD = (
    r"passphrase|password|passwd|client[_-]?secret|secret[_-]?key|secret|access[_-]?key"
    r"|private[_-]?key|auth[_-]?key|api[_-]?key|apikey|credentials|credential|token"
)
_WORD_TRIGGERS = ("pass", "secret", "key", "credential", "token")
_WORD_IN = re.compile(_SECRET_WORD, re.IGNORECASE)
_ENDS_IN_WORD = re.compile(f"(?:{_SECRET_WORD})\\Z", re.IGNORECASE)
_STEM_RES = tuple(
    re.compile(stem + r"[a-z0-9_]*(?P<q>[\"']?)(?P<sep>[ \t]*[:=](?!=)[ \t]*)")
    for stem in _WORD_TRIGGERS
)
"""Each stem of a secret word, up to the end of its name and an assignment sign."""
_KV_VALUE = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&|()\[\]{}<>]+")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")

_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")

_CODE_WORDS = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "required",
        "optional",
        "str",
        "string",
        "int",
        "bytes",
        "bool",
        "any",
        "object",
        "self",
        "this",
        "new",
        "await",
        "os",
        "env",
    }
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_COLOR = re.compile(r"#[0-9A-Fa-f]{3,8}")
_PROSE_AFTER = re.compile(r"[ \t]+[A-Za-z(]")
_ANNOTATION_AFTER = re.compile(r"[ \t]*[|=]")


def _shape_kind(value: str, *, whole: bool) -> str | None:
    """The kind of a known key shape in ``value`` (all of it with ``whole``)."""
    low = value.lower()
    for rule in _SHAPE_RULES:
        if any(t in low for t in rule.triggers):
            m = rule.regex.fullmatch(value) if whole else rule.regex.search(value)
            if m is not None:
                return rule.kind
    return None


def _kv_kind(name: str) -> str:
    low = name.lower().strip("\"'-")
    if low.startswith("aws"):
        return "aws secret key"
    words = _WORD_IN.findall(name)
    last = words[-1].lower().replace("_", " ").replace("-", " ") if words else "secret"
    if last.startswith("pass"):
        return "password"
    if last in ("apikey", "api key"):
        return "api key"
    if last.startswith("credential"):
        return "credentials"
    if last in ("client secret", "secret key", "secret"):
        return "secret"
    return last


def _plain_code(value: str, name: str, sep: str, rest: str) -> bool:
    """Whether an unquoted assigned value is code or prose rather than a literal secret.

    ``rest`` is the text after the value (a few characters).
    """
    ident = _IDENT.fullmatch(value) is not None
    if ident and rest[:1] in ("(", "[", "."):
        return True  # a call, an index or an attribute: code
    if value[:1] == "/" and _BASE64_KEY.fullmatch(value) and _mixed(value):
        return False  # base64 that begins with "/": an AWS secret key, not a path
    if value[:1] in ("$", "%", "*", "#", "@", "!", "&", "`", "\\", "/", "~") or value[:2] in (
        "{{",
        "<%",
    ):
        return True  # a variable reference, a template, a masked value, a path
    if not any(c.isalnum() for c in value):
        return True  # "...", "-"
    if value.lower() in _CODE_WORDS:
        return True
    if value.isdigit():
        return len(value) < 4  # token = 0; a PIN of 4+ digits is a secret
    if not ident:
        return False  # punctuation inside: a literal
    if "." in value:
        return True  # dotted access: self.token, settings.API_KEY
    if _WORD_IN.search(value) is not None:
        return True  # password=password, token = auth_token
    if any(c.isdigit() for c in value):
        return False  # hunter2
    if len(value) < 4 or rest[:1] in (",", ")") or _PROSE_AFTER.match(rest):
        return True  # token: i, / Token: foreground, / "token: A reference to ..."
    if _ANNOTATION_AFTER.match(rest):
        return True  # password: HiddenText | None = None
    # A bare word: code in ``name=word`` / ``name = word`` with a name not in capitals
    # (keyword arguments, assignments); a literal after ":" or in ``NAME=word`` (.env).
    return ":" not in sep and not name.isupper()


_BASE64_KEY = re.compile(r"[A-Za-z0-9+/]{32,}={0,2}")
"""A key in base64 (an AWS secret key is 40 such characters, "/" and "+" included)."""


def _mixed(value: str) -> bool:
    """Upper case, lower case and digits: random characters (a path of that length
    without a dot, a dash or an underscore is not)."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


_Span = tuple[int, int, str, str]
"""(start, end, replacement, kind)"""


def _context_span(text: str, start: int, vstart: int, vend: int, kind: str) -> list[_Span]:
    """The span of a header/URL/flag secret whose value is ``text[vstart:vend]``."""
    value = text[vstart:vend]
    if text.startswith(MARKER_PREFIX, vstart):
        return []
    quote = value[0] if value[:1] in ("'", '"') and value[-1:] == value[0] else ""
    inner = value[1:-1] if quote else value
    if not inner or inner.startswith(MARKER_PREFIX):
        return []
    plain = inner[:1] == "$" or _IDENT.fullmatch(inner) is not None
    if kind == "secret" and not quote and plain and not any(c.isdigit() for c in inner):
        return []  # "--token $TOKEN", "the --password option"
    kind = _shape_kind(inner, whole=True) or kind
    return [(start, vend, text[start:vstart] + quote + marker(kind) + quote, kind)]


def _assignments(text: str, plain: str, low: str) -> list[_Span]:
    """``name = value`` secrets; matched in ``plain`` (``text`` in ASCII, same offsets),
    replacements cut from ``text``."""
    spans: list[_Span] = []
    candidates: dict[int, tuple[int, str, int]] = {}  # name end -> (stem start, sep, value)
    for stem_re in _STEM_RES:
        for m in stem_re.finditer(low):
            candidates.setdefault(m.start("q"), (m.start(), m.group("sep"), m.end()))
    for end in sorted(candidates):
        stem_start, sep, value_start = candidates[end]
        start = stem_start
        while start > 0 and end - start < 128 and plain[start - 1] in _NAME_CHARS:
            start -= 1
        name = plain[start:end]
        if _ENDS_IN_WORD.search(name) is None:
            continue
        value = _KV_VALUE.match(plain, value_start)
        if value is None:
            continue
        raw = value.group(0)
        quote = raw[0] if raw[0] in ("'", '"') else ""
        inner = raw[1:-1] if quote else raw
        if (
            not inner
            or inner.startswith((MARKER_PREFIX, "${", "$(", "{{", "<%"))
            or _COLOR.fullmatch(inner)
        ):
            continue
        if not quote:
            rest = plain[value.end() : value.end() + 4]
            if _plain_code(raw, name, sep, rest):
                continue
        kind = _shape_kind(inner, whole=False) or _kv_kind(name)
        replacement = text[start : value.start()] + quote + marker(kind) + quote
        spans.append((start, value.end(), replacement, kind))
    return spans


def _spans(text: str) -> list[_Span]:
    """Every secret in ``text`` as non-overlapping spans, in order (leftmost-longest)."""
    # Every pattern is ASCII: match in an ASCII copy (same offsets, fast to lower-case
    # and to scan), cut the replacements from the text itself.
    plain = text if text.isascii() else text.encode("ascii", "replace").decode("ascii")
    low = plain.lower()
    found: list[_Span] = []
    # Each regex starts with a literal, so scanning for it is as fast as a trigger test.
    for rule in _SHAPE_RULES:
        for m in rule.regex.finditer(plain):
            found.append((m.start(), m.end(), marker(rule.kind), rule.kind))
    for rule in _CONTEXT_RULES:
        for m in rule.regex.finditer(low):
            found.extend(_context_span(text, m.start(), m.start("v"), m.end("v"), rule.kind))
    i = low.find("://")
    while i != -1:
        start = i
        while start > 0 and i - start < 32 and low[start - 1] in _URL_SCHEME_CHARS:
            start -= 1
        rest = _URL_REST.match(plain, i + 3)
        if start < i and low[start].isalpha() and rest is not None:
            found.extend(_context_span(text, start, rest.start("v"), rest.end("v"), "password"))
        i = low.find("://", i + 3)
    found.extend(_assignments(text, plain, low))
    if len(found) < 2:
        return found
    found.sort(key=lambda s: (s[0], -s[1]))
    kept: list[_Span] = []
    for span in found:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def _apply(text: str, spans: list[_Span]) -> str:
    parts: list[str] = []
    at = 0
    for start, end, replacement, _kind in spans:
        parts.append(text[at:start])
        parts.append(replacement)
        at = end
    parts.append(text[at:])
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret found in a text: where it is and what kind it is."""

    start: int
    end: int
    kind: str


class Redactor:
    """Replaces secrets in text (see the module docstring for what is recognised).

    Safe to share between threads; `add_secret` may be called at any time (the app
    registers its API keys once it has read them).
    """

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        """``secrets``: literal values (at least 8 characters) -> kind shown in the marker."""
        self._literals: dict[str, str] = {}
        self._literal_re: re.Pattern[str] | None = None
        for value, kind in (secrets or {}).items():
            self.add_secret(value, kind)

    def __repr__(self) -> str:
        return f"Redactor(literal_secrets={len(self._literals)})"

    def add_secret(self, value: str | None, kind: str = "api key") -> None:
        """Always redact this exact value (values under 8 characters are ignored)."""
        if not value or len(value) < 8 or value in self._literals:
            return
        literals = {**self._literals, value: kind}
        ordered = sorted(literals, key=len, reverse=True)
        self._literal_re = re.compile("|".join(re.escape(v) for v in ordered))
        self._literals = literals

    def add_secrets(self, values: Iterable[str | None], kind: str = "api key") -> None:
        for value in values:
            self.add_secret(value, kind)

    # ----------------------------------------------------------------- text

    def redact(self, text: str, *, shapes: bool = True) -> str:
        """``text`` with every secret replaced by its marker (the same object if none).

        ``shapes=False`` replaces only the registered literal values.
        """
        if not text:
            return text
        out = text
        literal, literals = self._literal_re, self._literals
        if literal is not None:
            out = literal.sub(lambda m: marker(literals[m.group(0)]), out)
        if shapes:
            spans = _spans(out)
            if spans:
                out = _apply(out, spans)
        return text if out == text else out

    def findings(self, text: str) -> list[Finding]:
        """Every secret in ``text`` (kinds as in the markers), in order."""
        found: list[Finding] = []
        literal, literals = self._literal_re, self._literals
        if literal is not None:
            found = [
                Finding(m.start(), m.end(), literals[m.group(0)]) for m in literal.finditer(text)
            ]
        taken = [(f.start, f.end) for f in found]
        for start, end, _r, kind in _spans(text):
            if not any(a < end and start < b for a, b in taken):
                found.append(Finding(start, end, kind))
        found.sort(key=lambda f: f.start)
        return found

    def contains_secret(self, text: str) -> bool:
        return self.redact(text) is not text

    # ----------------------------------------------------------------- JSON values

    def redact_json(
        self,
        value: Any,
        *,
        skip: Callable[[str, Mapping[str, Any]], bool] | None = None,
        shapes: bool = True,
    ) -> Any:
        """A JSON value with every string redacted; the same object when nothing changed.

        Dict keys are kept. ``skip(key, parent)`` keeps a field untouched (ids,
        signatures, image data...).
        """
        if isinstance(value, str):
            return self.redact(value, shapes=shapes)
        if isinstance(value, list):
            items = [self.redact_json(v, skip=skip, shapes=shapes) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items
        if isinstance(value, Mapping):
            changed = False
            out: dict[str, Any] = {}
            for key, item in value.items():
                if skip is not None and skip(key, value):
                    out[key] = item
                    continue
                new = self.redact_json(item, skip=skip, shapes=shapes)
                changed = changed or new is not item
                out[key] = new
            return out if changed else value
        return value

    def stream(self, *, shapes: bool = True) -> StreamRedactor:
        """A redactor of a byte stream (a command's output written to a file)."""
        return StreamRedactor(self, shapes=shapes)


class StreamRedactor:
    """Redacts a byte stream on line boundaries; bytes that are not UTF-8 pass unchanged.

    `feed` returns what can be written now (complete lines; a line longer than 64 KiB in
    pieces, never cutting through a secret), `finish` the rest. A private key block that
    spans several feeds is replaced by one marker, everything up to its END line dropped.
    """

    LONG_LINE = 64 * 1024
    OVERLAP = 4096

    def __init__(self, redactor: Redactor, *, shapes: bool = True) -> None:
        self._redactor = redactor
        self._shapes = shapes
        self._pending = ""
        self._in_pem = False

    def feed(self, data: bytes) -> bytes:
        self._pending += data.decode("utf-8", "surrogateescape")
        return self._drain(final=False)

    def finish(self) -> bytes:
        return self._drain(final=True)

    def _drain(self, *, final: bool) -> bytes:
        text = self._pending
        out: list[str] = []
        if self._in_pem and self._shapes:
            end = _PEM_END.search(text)
            if end is None:
                self._pending = "" if final else text[-self.OVERLAP :]
                return b""
            text = text[end.end() :]
            self._in_pem = False
        if final:
            cut = len(text)
        else:
            cut = text.rfind("\n") + 1
            if cut == 0 and len(text) > self.LONG_LINE:
                cut = len(text) - self.OVERLAP
                for found in self._redactor.findings(text) if self._shapes else ():
                    if found.start < cut < found.end:
                        cut = found.end
        head, self._pending = text[:cut], text[cut:]
        if head:
            out.append(self._redactor.redact(head, shapes=self._shapes))
            if self._shapes and not final:
                begins = list(_PEM_BEGIN.finditer(head))
                if begins and _PEM_END.search(head, begins[-1].end()) is None:
                    self._in_pem = True  # the marker is written; drop until END
        return "".join(out).encode("utf-8", "surrogateescape")


# ------------------------------------------------------------------------ environment

SECRET_VARIABLE_NAMES = frozenset(
    {
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "AZURE_OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "MISTRAL_API_KEY",
        "GROQ_API_KEY",
        "OPENROUTER_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "HF_TOKEN",
        "DATABASE_URL",
    }
)
"""Variable names always treated as secret."""

_SECRET_NAME = re.compile(
    r"(?:_API_KEY|APIKEY|_TOKEN|_SECRET|_SECRET_KEY|_ACCESS_KEY|_PASSWORD|_PASSWD"
    r"|_PASSPHRASE|_CREDENTIALS?|_PRIVATE_KEY|_DSN)$|^(?:API_KEY|TOKEN|SECRET|PASSWORD)$",
    re.IGNORECASE,
)
"""Name shapes of secret variables (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ...)."""

PROXY_VARIABLES = frozenset(
    {"http_proxy", "https_proxy", "all_proxy", "ftp_proxy", "no_proxy", "socks_proxy"}
)
"""Proxy settings: kept even with credentials in their URL (network tools need them)."""

_DEFAULT = Redactor()


def is_secret_variable(name: str, value: str) -> bool:
    """Whether an environment variable holds a key, token, password or credentials.

    By name (`SECRET_VARIABLE_NAMES`, ``*_API_KEY``, ``*_TOKEN``, ``*_PASSWORD``...) or by
    value (any secret `Redactor` recognises, e.g. a URL with a password as in
    ``DATABASE_URL``); proxy variables are kept (`PROXY_VARIABLES`).
    """
    if name.lower() in PROXY_VARIABLES:
        return False
    if name.upper() in SECRET_VARIABLE_NAMES or _SECRET_NAME.search(name) is not None:
        return True
    return bool(value) and _DEFAULT.contains_secret(value)


# ------------------------------------------------------------------------ logging


class RedactingFilter(logging.Filter):
    """Redacts every log record (message, arguments, exception text) before it is written.

    Attach it to the handlers that write to disk. ``redactor`` is shared with the rest
    of the app, so keys registered there (`Redactor.add_secret`) are redacted here too.
    """

    def __init__(self, redactor: Redactor | None = None) -> None:
        super().__init__()
        self.redactor = redactor if redactor is not None else Redactor()

    def add_secrets(self, values: Iterable[str | None]) -> None:
        self.redactor.add_secrets(values)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken format string must not lose the record
            message = f"{record.msg!r} % {record.args!r}"
        redacted = self.redactor.redact(message)
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            cleaned = self.redactor.redact(text)
            if cleaned is not text:
                redacted += "\n" + cleaned
                record.exc_info = None
                record.exc_text = None
        elif record.exc_text:
            record.exc_text = self.redactor.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.redact(record.stack_info)
        if redacted is not message:
            record.msg, record.args = redacted, None
        return True
