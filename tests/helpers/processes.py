"""Which processes a test starts, so that `tests/conftest.py` can fail a test that starts a
costly one without the ``slow`` marker (``./run-tests -m "not slow"`` is the quick loop).

An audit hook (`sys.addaudithook`: it patches nothing) sees every ``subprocess.Popen``,
which ``asyncio.create_subprocess_exec`` and ``subprocess.run`` go through too, and every
``os.posix_spawn`` and ``os.fork``. Costly are a Python interpreter (the app, an MCP server
over stdio, a SIGKILLed child), Node.js and npm (the real Pi), PostgreSQL's programs and
the packaged app, wherever they stand in the command line (``setpriv … -- pg_ctl``), and
any fork of this interpreter. A single git, bash, bwrap or coreutils command costs
milliseconds: the quick loop keeps the tests that only run those.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import Any

COSTLY = re.compile(
    r"(python[0-9.]*|pythonw|node|npm|npm-cli\.js|npx|initdb|pg_ctl|postgres|psql|pg_dump"
    r"|desktop-agent|DesktopAgent|pyinstaller)(\.exe)?",
    re.IGNORECASE,
)

_started: list[str] | None = None


def _names(executable: Any, argv: Any) -> list[str]:
    words: list[Any] = [executable]
    if isinstance(argv, str | bytes):
        words.append(argv.split()[0] if argv.split() else "")
    elif isinstance(argv, Sequence):
        words.extend(argv)
    return [os.fsdecode(w) for w in words if isinstance(w, str | bytes | os.PathLike)]


def _costly(names: list[str]) -> bool:
    return any(
        name == sys.executable or COSTLY.fullmatch(os.path.basename(name)) is not None
        for name in names
    )


def _audit(event: str, args: tuple[Any, ...]) -> None:
    started = _started
    if started is None:
        return
    if event == "subprocess.Popen" or event == "os.posix_spawn":
        names = _names(args[0], args[1])
        if _costly(names):
            started.append(" ".join(n if "\n" not in n else "<script>" for n in names)[:200])
    elif event in ("os.fork", "os.forkpty"):
        started.append(f"{event} of this interpreter")


sys.addaudithook(_audit)


def record() -> None:
    """Start recording the costly processes started from now on (a test's setup)."""
    global _started
    _started = []


def recorded() -> list[str]:
    """The costly processes started since `record` (their command lines, shortened)."""
    return list(_started or [])


def stop() -> None:
    global _started
    _started = None
