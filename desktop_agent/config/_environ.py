"""Removing variables from this process's environment, including what the OS shows.

``os.environ.pop`` (``unsetenv``) only drops the variable from the C ``environ`` array:
on Linux the original ``NAME=value`` string stays in the process's initial environment
block, and ``/proc/<pid>/environ`` (readable by every process of the same user, such as
a command the agent runs) keeps showing it. So after ``unsetenv`` the original strings
inside that block (``env_start``..``env_end`` of ``/proc/self/stat``) are overwritten
with NUL bytes. Strings outside the block (set later with ``setenv``) are not shown by
the OS and are left alone. On Windows, removing the variable updates the block other
processes read, so ``os.environ.pop`` is enough; on macOS ``ps -E`` shows the block of
one's own processes, and only ``unsetenv`` is done (not verified on a Mac).
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
from collections.abc import Iterable

log = logging.getLogger("desktop_agent.config.environ")


def erase_environment_variables(names: Iterable[str]) -> list[str]:
    """Remove ``names`` from the environment of this process; the names removed.

    Child processes started afterwards do not inherit them, and on Linux they are gone
    from ``/proc/<pid>/environ`` too (their bytes are zeroed in the original block).
    """
    wanted = sorted({n for n in names if n in os.environ})
    if not wanted:
        return []
    originals = _original_strings(wanted) if sys.platform.startswith("linux") else []
    for name in wanted:
        os.environ.pop(name, None)
    for address, size in originals:
        ctypes.memset(address, 0, size)
    return wanted


def _original_strings(names: list[str]) -> list[tuple[int, int]]:
    """(address, length) of each ``NAME=value`` string of ``names`` inside the initial
    environment block, found through the C ``environ`` array (before ``unsetenv``)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rindex(b")") + 2 :].split()
        env_start, env_end = int(fields[47]), int(fields[48])
        libc = ctypes.CDLL(None)
        environ = ctypes.POINTER(ctypes.c_void_p).in_dll(libc, "environ")
    except (OSError, ValueError, IndexError, AttributeError) as exc:
        log.warning("cannot clear the environment block of this process: %s", exc)
        return []
    prefixes = tuple(os.fsencode(n) + b"=" for n in names)
    found: list[tuple[int, int]] = []
    i = 0
    while True:
        address = environ[i]
        if not address:
            break
        i += 1
        entry = ctypes.string_at(address)
        if entry.startswith(prefixes) and env_start <= address < env_end:
            found.append((address, min(len(entry), env_end - address)))
    return found


PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


def make_undumpable() -> bool:
    """Make this process non-dumpable (Linux ``prctl(PR_SET_DUMPABLE, 0)``).

    Then the user's other processes (a command the agent runs outside the sandbox, any
    program of the same user) can no longer read its ``/proc/<pid>/environ`` or memory, nor
    attach a debugger; only root can. Core dumps are off too. Returns whether it is in
    effect (False elsewhere than Linux, or when the call failed; logged, never raised).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        return int(libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError) as exc:
        log.warning("cannot make this process non-dumpable: %s", exc)
        return False
