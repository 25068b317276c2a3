"""A server URL as people type it (``localhost:1234``, the way LM Studio and Ollama show
their address): ``http://`` is added when no scheme is given, and what cannot be a server
URL gets one sentence that says what to type instead (FIRST_HOUR.md M3, L2)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def normalize_server_url(text: str) -> str:
    """``text`` stripped, with ``http://`` in front when it has no scheme."""
    text = text.strip()
    if text and not _SCHEME.match(text):
        return "http://" + text.lstrip("/")
    return text


def server_url_problem(text: str) -> str | None:
    """Why ``text`` (after `normalize_server_url`) is not a server URL, or None."""
    url = normalize_server_url(text)
    if not url:
        return None
    if not url.lower().startswith(("http://", "https://")):
        scheme = url.split("://", 1)[0]
        return f"A server URL starts with http:// or https://, not {scheme}://."
    if any(c.isspace() for c in url):
        return "A server URL has no spaces."
    try:
        parts = urlsplit(url)
    except ValueError:
        return "The server's name between [ and ] is not an IPv6 address (for example http://[::1]:1234)."
    try:
        port = parts.port
    except ValueError:
        return "The port must be a number from 1 to 65535 (for example localhost:1234)."
    if not parts.hostname:
        return "Type the server's address, for example localhost:1234 or http://127.0.0.1:11434/v1."
    if port == 0:
        return "The port must be a number from 1 to 65535 (for example localhost:1234)."
    return None
