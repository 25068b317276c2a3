"""A server URL as people type it (``localhost:1234``, the way LM Studio and Ollama show
their address): ``http://`` is added when no scheme is given, and what cannot be a server
URL gets one sentence that says what to type instead (FIRST_HOUR.md M3, L2)."""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def normalize_server_url(text: str) -> str:
    """``text`` stripped, with ``http://`` in front when it has no scheme."""
    text = text.strip()
    if text and not _SCHEME.match(text):
        return "http://" + text.lstrip("/")
    return text


def url_parts(
    url: str, *, kind: str, schemes: tuple[str, ...], port_hint: str
) -> SplitResult | str:
    """The parts of ``url`` (one of ``schemes``), or why it has none, in one sentence about
    a ``kind`` URL: another scheme, a space, a bracket that holds no IPv6 address, a port
    outside 1-65535 (``port_hint`` says what to type)."""
    scheme = url.split("://", 1)[0]
    if scheme.lower() not in schemes:
        starts = " or ".join(f"{s}://" for s in schemes)
        return f"A {kind} URL starts with {starts}, not {scheme}://."
    if any(c.isspace() for c in url):
        return f"A {kind} URL has no spaces."
    try:
        parts = urlsplit(url)
    except ValueError:
        return "The server's name between [ and ] is not an IPv6 address (for example [::1])."
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return f"The port must be a number from 1 to 65535 ({port_hint})."
    return parts


def server_url_problem(text: str) -> str | None:
    """Why ``text`` (after `normalize_server_url`) is not a server URL, or None."""
    url = normalize_server_url(text)
    if not url:
        return None
    parts = url_parts(
        url, kind="server", schemes=("http", "https"), port_hint="for example localhost:1234"
    )
    if isinstance(parts, str):
        return parts
    if not parts.hostname:
        return "Type the server's address, for example localhost:1234 or http://127.0.0.1:11434/v1."
    return None
