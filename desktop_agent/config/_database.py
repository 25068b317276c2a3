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
