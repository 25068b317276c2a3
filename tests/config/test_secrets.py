"""KeyStore: keychain first, environment fallback, no keychain = a clear message, and a
key never reaches a file, a log record or a repr."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import keyring
import keyring.errors
import pytest
from keyring.backends import chainer, fail, null

from desktop_agent.config import KeyStore, KeyStoreError, backend_problem, is_local_url
from tests.helpers.keyring import MemoryKeyring

SECRET = "sk-ant-test-0123456789abcdefghij"
OTHER = "sk-env-abcdefghijklmnopqrstuvwxyz"


@pytest.mark.asyncio
async def test_round_trip_in_the_keychain(
    memory_keyring: MemoryKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    store = KeyStore(environ={})
    await store.load(["anthropic", "openai"])
    assert store.available and store.problem is None
    assert store.backend_name == "tests.helpers.keyring.MemoryKeyring"
    assert not store.has_key("anthropic")
    await store.set("anthropic", SECRET)
    assert memory_keyring.store == {("DesktopAgent", "anthropic"): SECRET}
    assert store.has_key("anthropic") and store.key_source("anthropic") == "keychain"
    assert await store.get("anthropic") == SECRET
    assert SECRET not in repr(store) and SECRET not in str(store)
    await store.delete("anthropic")
    await store.delete("anthropic")  # already gone: fine
    assert not store.has_key("anthropic")
    assert await store.get("anthropic") is None
    assert SECRET not in caplog.text


@pytest.mark.asyncio
async def test_load_fills_the_cache_from_the_keychain(memory_keyring: MemoryKeyring) -> None:
    memory_keyring.set_password("DesktopAgent", "openai", SECRET)
    store = KeyStore(environ={})
    assert not store.has_key("openai") and not store.available, "nothing known before load"
    await store.load(["openai", "anthropic"])
    assert store.has_key("openai") and not store.has_key("anthropic")


@pytest.mark.asyncio
async def test_environment_is_the_fallback(memory_keyring: MemoryKeyring) -> None:
    store = KeyStore(environ={"OPENAI_API_KEY": OTHER, "GROQ_API_KEY": "g" * 20})
    await store.load(["openai", "anthropic", "groq"])
    assert store.key_source("openai") == "environment"
    assert await store.get("openai") == OTHER
    assert not store.has_key("groq"), "unknown providers have no env var"
    extended = KeyStore(environ={"GROQ_API_KEY": "g" * 20}, env_vars={"groq": "GROQ_API_KEY"})
    assert await extended.get("groq") == "g" * 20
    assert extended.env_var("groq") == "GROQ_API_KEY"
    # The keychain wins over the environment; deleting it falls back again.
    await store.set("openai", SECRET)
    assert await store.get("openai") == SECRET
    await store.delete("openai")
    assert store.key_source("openai") == "environment"


@pytest.mark.asyncio
async def test_no_keychain_reads_env_and_refuses_to_store(
    fail_keyring: fail.Keyring, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = KeyStore(environ={"ANTHROPIC_API_KEY": OTHER})
    await store.load(["anthropic", "openai"])
    assert not store.available
    assert store.backend_name == "keyring.backends.fail.Keyring"
    assert store.problem is not None and "keychain" in store.problem
    assert "ANTHROPIC_API_KEY" in store.problem
    assert store.has_key("anthropic") and not store.has_key("openai")
    assert await store.get("anthropic") == OTHER
    with pytest.raises(KeyStoreError, match="keychain"):
        await store.set("openai", SECRET)
    await store.delete("anthropic")  # nothing to delete; the env key stays readable
    assert store.has_key("anthropic")
    assert list(tmp_path.iterdir()) == [], "never a plaintext fallback file"


@pytest.mark.asyncio
async def test_real_default_backend_here_is_detected(memory_keyring: MemoryKeyring) -> None:
    """An explicitly given backend is used instead of keyring's global one."""
    store = KeyStore(backend=null.Keyring(), environ={})  # type: ignore[no-untyped-call]
    await store.load([])
    assert not store.available and store.backend_name == "keyring.backends.null.Keyring"


def test_backend_problem_classification(monkeypatch: pytest.MonkeyPatch) -> None:
    assert backend_problem(MemoryKeyring()) is None
    unusable = [
        fail.Keyring(),  # type: ignore[no-untyped-call]
        null.Keyring(),  # type: ignore[no-untyped-call]
    ]
    for backend in unusable:
        assert backend_problem(backend) is not None
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [], raising=False)
    empty_chain = chainer.ChainerBackend()  # type: ignore[no-untyped-call]
    assert backend_problem(empty_chain) is not None


class _LockedKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError(f"cannot set {password}")


@pytest.mark.asyncio
async def test_keychain_errors_are_calm_and_keyless(caplog: pytest.LogCaptureFixture) -> None:
    store = KeyStore(backend=_LockedKeyring(), environ={"OPENAI_API_KEY": OTHER})
    with caplog.at_level(logging.WARNING):
        assert await store.get("openai") == OTHER
    with pytest.raises(KeyStoreError) as info:
        await store.set("openai", SECRET)
    assert SECRET not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert SECRET not in caplog.text
    with pytest.raises(KeyStoreError):
        await store.set("openai", "")


def test_local_servers_need_no_key() -> None:
    assert is_local_url("http://localhost:11434/v1")
    assert is_local_url("http://127.0.0.1:1234/v1")
    assert is_local_url("http://[::1]:8080/v1")
    assert not is_local_url("https://api.openai.com/v1")
    assert not is_local_url("http://localhost.evil.test/v1")
    assert not is_local_url(None)
    assert not KeyStore.needs_key("custom", "http://localhost:8000/v1")
    assert KeyStore.needs_key("custom", "https://api.example.test/v1")
    assert not KeyStore.needs_key("ollama")
    assert KeyStore.needs_key("openai")


_FIND = """
import json, sys
import keyring
from desktop_agent.config import platform_keyring
name = lambda backend: type(backend).__module__ + "." + type(backend).__name__
found = name(platform_keyring())
searched = "keyring.backends.macOS" in sys.modules
secret_service = "keyring.backends.SecretService" in sys.modules
print(json.dumps({"found": found, "searched": searched, "secret_service": secret_service,
                  "keyring": name(keyring.get_keyring())}))
"""


def _find_in_a_new_process(tmp_path: Path) -> dict[str, object]:
    """`platform_keyring` in a fresh interpreter (keyring keeps its choice per process)."""
    import json
    import os
    import subprocess
    import sys

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DBUS_", "PYTHON_KEYRING"))}
    clean |= {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _FIND], env=clean, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.slow
@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="Linux backends")
def test_platform_keyring_finds_what_keyring_finds_without_its_search(tmp_path: Path) -> None:
    """No session bus: both give `fail.Keyring`, but only keyring's search imports the
    macOS backend (which runs ldconfig and gcc on Linux); ours does not even import the
    Secret Service's library, which cannot reach anything without the bus."""
    result = _find_in_a_new_process(tmp_path)
    assert result["found"] == result["keyring"] == "keyring.backends.fail.Keyring"
    assert result["searched"] is False
    assert result["secret_service"] is False


def test_platform_keyring_does_not_search_on_linux(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    import keyring.backends.SecretService as secret_service

    import desktop_agent.config._secrets as secrets

    def no_search() -> object:
        raise AssertionError("keyring's own search ran")

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(keyring, "get_keyring", no_search)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")

    class Answering(null.Keyring):
        priority = 5.0

    class RaisingPriority(type(null.Keyring)):  # type: ignore[misc]
        @property
        def priority(cls) -> float:  # keyring's backends raise to say "not here"
            raise RuntimeError("Unable to initialize SecretService")

    class Refusing(null.Keyring, metaclass=RaisingPriority):
        pass

    monkeypatch.setattr(secret_service, "Keyring", Answering)
    assert type(secrets.platform_keyring()) is Answering
    monkeypatch.setattr(secret_service, "Keyring", Refusing)
    assert type(secrets.platform_keyring()) is fail.Keyring
    # No session bus: the Secret Service is not asked (it could not be reached).
    monkeypatch.setattr(secret_service, "Keyring", Answering)
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    assert type(secrets.platform_keyring()) is fail.Keyring


@pytest.mark.parametrize("chosen", ["env", "config", "dbus"])
def test_platform_keyring_leaves_a_choice_to_keyring(
    chosen: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend the user chose, or another Linux backend's module installed: keyring's
    own search decides."""
    import sys

    import desktop_agent.config._secrets as secrets

    searched = null.Keyring()  # type: ignore[no-untyped-call]
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(keyring, "get_keyring", lambda: searched)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name: object() if chosen == "dbus" and name == "dbus" else real_find_spec(name),
    )
    if chosen == "env":
        monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    elif chosen == "config":
        (tmp_path / "python_keyring").mkdir()
        (tmp_path / "python_keyring" / "keyringrc.cfg").write_text(
            "[backend]\ndefault-keyring=keyring.backends.null.Keyring\n"
        )
    assert secrets.platform_keyring() is searched
