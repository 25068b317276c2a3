"""Where the Pi CLI keeps its sessions, for the "Pi sessions" source (issue 13 item 6).

Pi (pi-coding-agent 0.74.2, ``config.js``) uses ``$PI_CODING_AGENT_DIR/sessions`` when
that variable is set (``~`` expanded), else ``~/.pi/agent/sessions``; sessions sit in one
folder per workspace (``--<encoded cwd>--``), the layout `JsonlSessionRepo` reads. The
source is on by default and off whenever the folder does not exist. Home and environment
are parameters, so tests never look at the real home.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

PI_AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


class PiSessionsSettings(BaseModel):
    """The "Pi sessions" source in the sidebar."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    enabled: bool = True
    """Show the Pi CLI's sessions beside ours (only when the folder exists)."""
    folder: str | None = None
    """Pi's sessions folder; None = where the Pi CLI keeps them (`default_pi_sessions_dir`)."""


def _expand(path: str, home: Path) -> Path:
    if path == "~":
        return home
    if path.startswith("~/"):
        return home / path[2:]
    return Path(path)


def default_pi_agent_dir(home: Path, environ: Mapping[str, str]) -> Path:
    """The Pi CLI's agent folder (its global ``AGENTS.md``, skills, prompts, sessions)."""
    agent_dir = environ.get(PI_AGENT_DIR_ENV)
    if agent_dir:
        return _expand(agent_dir, home)
    return home / ".pi" / "agent"


def default_pi_sessions_dir(home: Path, environ: Mapping[str, str]) -> Path:
    """The folder the Pi CLI writes its sessions to."""
    return default_pi_agent_dir(home, environ) / "sessions"


def pi_sessions_dir(
    settings: PiSessionsSettings,
    *,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path | None:
    """The folder of the "Pi sessions" source, or None when it is off or does not exist.

    ``home`` and ``environ`` default to the real ones (the app); tests pass their own.
    """
    if not settings.enabled:
        return None
    home = home if home is not None else Path.home()
    environ = environ if environ is not None else os.environ
    folder = (
        _expand(settings.folder, home)
        if settings.folder
        else default_pi_sessions_dir(home, environ)
    )
    folder = folder if folder.is_absolute() else home / folder
    return folder if folder.is_dir() else None
