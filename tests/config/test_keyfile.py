"""Keys in a 0600 file (no keychain): written atomically, read back, narrowed, refused."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from keyring.backends import fail

from desktop_agent.config import KeyFile, KeyFileError, KeyStore, KeyStoreError
from tests.helpers.real_fs import _fill, mounted


def test_keys_are_written_0600_atomically_and_removed(tmp_path: Path) -> None:
    keys = KeyFile(tmp_path / "config" / "keys.json")
    assert keys.load() == {}
    keys.set("local", "k1")
    keys.set("openai", "k2")
    assert stat.S_IMODE(keys.path.stat().st_mode) == 0o600
    assert json.loads(keys.path.read_text()) == {"local": "k1", "openai": "k2"}
    keys.set("local", None)
    assert keys.load() == {"openai": "k2"}
    assert [p.name for p in keys.path.parent.iterdir()] == ["keys.json"]  # no temp left
    assert "k2" not in repr(keys)


def test_a_file_others_can_read_is_narrowed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "keys.json"
    path.write_text('{"local": "k"}')
    os.chmod(path, 0o644)
    with caplog.at_level("WARNING", logger="desktop_agent.config.keyfile"):
        assert KeyFile(path).load() == {"local": "k"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "narrowed to 0600" in caplog.text


def test_bad_files_are_errors_that_keep_the_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text("{not json")
    with pytest.raises(KeyFileError, match="not valid JSON; it is left as it is"):
        KeyFile(path).load()
    with pytest.raises(KeyFileError):
        KeyFile(path).set("local", "k")
    assert path.read_text() == "{not json"
    blocked = KeyFile(tmp_path / "a-file" / "keys.json")
    (tmp_path / "a-file").write_text("")
    with pytest.raises(KeyFileError, match="Not a directory"):
        blocked.set("local", "k")


@pytest.mark.asyncio
async def test_a_full_disk_keeps_the_old_file(tmp_path: Path) -> None:
    """A real full tmpfs: saving a new key fails with a sentence, the old keys stay."""
    disk = tmp_path / "disk"
    with mounted(disk, ["-t", "tmpfs", "-o", "size=64k", "tmpfs"]):
        keys = KeyFile(disk / "keys.json")
        keys.set("local", "old")
        store = KeyStore(
            backend=fail.Keyring(),  # type: ignore[no-untyped-call]
            environ={},
            key_file=keys,
            use_file=True,
        )
        filler = _fill(disk)
        with pytest.raises(KeyStoreError, match="was not saved"):
            await store.set("local", "new-" + "k" * 8000)
        assert keys.load() == {"local": "old"}
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "keys.json"]
        assert await store.get("local") == "old" and store.key_source("local") == "file"
        assert "only you can read" in store.where_kept()
        filler.unlink()


@pytest.mark.asyncio
async def test_the_local_server_has_an_environment_variable(tmp_path: Path) -> None:
    environ = {"DESKTOP_AGENT_LOCAL_API_KEY": "env-key", "HOME": "/h"}
    store = KeyStore(backend=fail.Keyring(), environ=environ)  # type: ignore[no-untyped-call]
    assert await store.get("local") == "env-key"
    assert store.key_source("local") == "environment"
    assert "DESKTOP_AGENT_LOCAL_API_KEY" not in environ  # taken from the environment
    assert store.problem is not None and "DESKTOP_AGENT_LOCAL_API_KEY" in store.problem
