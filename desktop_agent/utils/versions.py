"""Which app version wrote a file, and whether that version is newer than this one.

Data safety across versions (issue 10 item 5): a session, index or settings file written by
a newer Desktop Agent may hold what this version does not understand, so it is read but
never rewritten here. Session headers carry ``metadata.desktopAgent.version``, settings
files ``app_version``, the indexes a schema/format number of their own.
"""

from __future__ import annotations

import re
from typing import Any

from desktop_agent import __version__

APP_VERSION: str = __version__
HEADER_KEY = "desktopAgent"
"""The key of the app's own object in a session header's ``metadata``."""

_RANKS = {"dev": 0, "a": 1, "alpha": 1, "b": 2, "beta": 2, "c": 3, "rc": 3, "pre": 3}
_VERSION = re.compile(r"^\s*v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|dev)\.?(\d*))?")


def version_key(version: str) -> tuple[tuple[int, ...], int, int] | None:
    """A sortable key of a PEP 440-like version ("1.2", "1.2.3rc1", "0.4.0.dev2"), or None
    for text that is not one. Trailing zeros do not count: "1.2" == "1.2.0"."""
    m = _VERSION.match(version)
    if m is None:
        return None
    release = tuple(int(p) for p in m.group(1).split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    tag, number = m.group(2), m.group(3)
    if tag is None:
        return release, len(_RANKS), 0  # a final release sorts after its pre-releases
    return release, _RANKS[tag], int(number or 0)


def is_newer(version: str | None, than: str = APP_VERSION) -> bool:
    """Whether ``version`` is a newer app version than ``than`` (unparsable: no)."""
    if not version:
        return False
    mine, theirs = version_key(than), version_key(version)
    return mine is not None and theirs is not None and theirs > mine


def header_stamp() -> dict[str, Any]:
    """What a new session header's ``metadata`` says about the app that wrote it."""
    return {HEADER_KEY: {"version": APP_VERSION}}


def written_by(metadata: dict[str, Any] | None) -> str | None:
    """The app version a session header's ``metadata`` names, if any."""
    if not isinstance(metadata, dict):
        return None
    ours = metadata.get(HEADER_KEY)
    version = ours.get("version") if isinstance(ours, dict) else None
    return version if isinstance(version, str) else None


def newer_reason(what: str, version: str) -> str:
    """The read-only reason of a file a newer version wrote (finishes "read-only: ...")."""
    return (
        f"{what} was written by Desktop Agent {version}, newer than this version "
        f"({APP_VERSION}); it is never changed here: update Desktop Agent to continue it"
    )


__all__ = [
    "APP_VERSION",
    "HEADER_KEY",
    "header_stamp",
    "is_newer",
    "newer_reason",
    "version_key",
    "written_by",
]
