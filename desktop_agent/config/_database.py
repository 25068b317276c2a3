"""The session server's address (``--database-url``, ``"database_url"``) and its password.

The password never goes to settings.json or the logs: `split_password` takes it out of
what the user typed, the app keeps it in the keychain under `DATABASE_KEY` (or reads
``PGPASSWORD``, which the key store then removes from the environment of commands the
agent runs) and hands it to the store apart from the URL.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from desktop_agent.config._server_url import url_parts

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
    parts = url_parts(
        url, kind="PostgreSQL", schemes=_SCHEMES, port_hint="PostgreSQL's own is 5432"
    )
    return parts if isinstance(parts, str) else None


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
