"""The session server's address (``--database-url``, ``"database_url"``) and its password.

The password never goes to settings.json or the logs: `split_password` takes it out of
what the user typed, the app keeps it in the keychain under `DATABASE_KEY` (or reads
``PGPASSWORD``, which the key store then removes from the environment of commands the
agent runs) and hands it to the store apart from the URL.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, urlsplit, urlunsplit

DATABASE_KEY = "session-database"
"""The keychain entry of the session server's password."""
DATABASE_PASSWORD_ENV = "PGPASSWORD"

_KV_PASSWORD = re.compile(r"(?:^|\s)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)")
_KV_PAIRS = re.compile(r"\s*(?:[A-Za-z_]+\s*=\s*(?:'(?:[^'\\]|\\.)*'|[^\s']+)\s*)+")
_SCHEMES = ("postgresql", "postgres")
_EXAMPLE = "postgresql://me@db.example/agent or host=db.example dbname=agent"


def database_url_problem(text: str) -> str | None:
    """Why ``text`` is not a PostgreSQL server's address (a ``postgresql://`` URL or a
    ``key=value`` conninfo), in words; None when it can be used (or is empty)."""
    url = text.strip()
    if not url:
        return None
    if any(not c.isprintable() for c in url):
        return "The server's address holds a character that cannot be typed (a control character)."
    if "://" not in url:
        if _KV_PAIRS.fullmatch(url) is None:
            return f"Not a PostgreSQL server's address: write {_EXAMPLE}."
        return None
    scheme = url.split("://", 1)[0]
    if scheme.lower() not in _SCHEMES:
        return f"A PostgreSQL URL starts with postgresql://, not {scheme}://."
    if any(c.isspace() for c in url):
        return "A PostgreSQL URL has no spaces (write them as %20)."
    try:
        parts = urlsplit(url)
    except ValueError:
        return "The server's name between [ and ] is not an IPv6 address."
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return "The port must be a number from 1 to 65535 (PostgreSQL's own is 5432)."
    return None


def split_password(url: str) -> tuple[str, str | None]:
    """(the URL or conninfo without its password, the password or None)."""
    text = url.strip()
    if "://" in text:
        parts = urlsplit(text)
        if parts.password is None:
            return text, None
        user = quote(unquote(parts.username or ""), safe="")
        host = parts.netloc.rpartition("@")[2]
        netloc = f"{user}@{host}" if user else host
        clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
        return clean, unquote(parts.password)
    m = _KV_PASSWORD.search(text)
    if m is None:
        return text, None
    value = m.group(1)
    if value.startswith("'"):
        value = re.sub(r"\\(.)", r"\1", value[1:-1])
    clean = (text[: m.start()] + text[m.end() :]).strip()
    return re.sub(r"\s{2,}", " ", clean), value
