"""Real disk faults for tests (Linux, as root): a tmpfs or a bind mount for the length of a
``with``, and filling a file system to the last byte. Where ``mount`` cannot work the test
is skipped, saying why."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def _mount(args: list[str]) -> str | None:
    """Run ``mount``; returns why it could not, or None."""
    if sys.platform != "linux":
        return f"real mounts are tested on Linux only (this is {sys.platform})"
    if os.geteuid() != 0:
        return "mounting needs root (CI runs the suite as root)"
    tool = shutil.which("mount")
    if tool is None:
        return "no `mount` command on this machine"
    done = subprocess.run([tool, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"`mount {' '.join(args)}` failed: {done.stderr.strip()}"
    return None


def _umount(path: Path) -> None:
    tool = shutil.which("umount") or "umount"
    done = subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:  # still busy: detach it now, the kernel frees it later
        subprocess.run([tool, "-l", str(path)], capture_output=True, check=False)
        pytest.fail(f"`umount {path}` failed: {done.stderr.strip()}")


@contextlib.contextmanager
def mounted(target: Path, args: list[str]) -> Iterator[None]:
    target.mkdir(parents=True, exist_ok=True)
    why = _mount([*args, str(target)])
    if why is not None:
        pytest.skip(why)
    try:
        yield
    finally:
        _umount(target)


def _fill(folder: Path) -> Path:
    """Fill the file system of ``folder`` completely; returns the filler file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size) == size:
                    pass
    finally:
        os.close(fd)
    return filler
