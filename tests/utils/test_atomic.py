"""The atomic-replace helper: old content survives every failure, no temp file is left."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from desktop_agent.utils.atomic import atomic_file, atomic_write


def test_writes_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.json"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert os.listdir(target.parent) == ["f.json"]
    if os.name == "posix":
        assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_disk_full_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.json"
    atomic_write(target, b"old")

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError, match="No space"):
        atomic_write(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.json"]


def test_failing_rename_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.json"
    atomic_write(target, b"old")

    def refuse(src: object, dst: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError):
        atomic_write(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.json"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_real_enospc_from_dev_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real ENOSPC: the temp file's descriptor is swapped for one on /dev/full."""
    target = tmp_path / "f.json"
    atomic_write(target, b"old")
    real_open = os.open

    def open_full(path: str, flags: int, mode: int = 0o777) -> int:
        fd = real_open(path, flags, mode)
        if ".tmp-" in os.fspath(path):
            full = real_open("/dev/full", os.O_WRONLY)
            os.dup2(full, fd)
            os.close(full)
        return fd

    monkeypatch.setattr(os, "open", open_full)
    with pytest.raises(OSError) as info:
        atomic_write(target, b"new" * 10_000)
    monkeypatch.undo()
    assert info.value.errno == errno.ENOSPC
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.json"]


def test_atomic_file_streams_and_keeps_the_old_file_on_error(tmp_path: Path) -> None:
    target = tmp_path / "archive.zip"
    atomic_write(target, b"old")

    def write_half() -> None:
        with atomic_file(target) as fh:
            fh.write(b"half of the new")
            raise RuntimeError("the zip writer failed")

    with pytest.raises(RuntimeError):
        write_half()
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["archive.zip"]
    with atomic_file(target, mode=0o644) as fh:
        fh.write(b"new")
    assert target.read_bytes() == b"new"


def test_durable_false_skips_both_fsyncs_but_still_replaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    target = tmp_path / "cache" / "f.bin"
    atomic_write(target, b"one", durable=False)
    atomic_write(target, b"two", durable=False)
    assert synced == []
    assert target.read_bytes() == b"two"
    assert os.listdir(target.parent) == ["f.bin"]
    atomic_write(target, b"three")
    assert len(synced) == 2  # the file and its folder
