"""API keys: the OS keychain through ``keyring``, or a file only the user can read
(`KeyFile`, chosen in Settings, for machines without a keychain), environment variables
as a fallback.

Keys are never written to ``settings.json``, never logged, and never shown by a
``repr``. Every keyring call runs in a worker thread: Secret Service and D-Bus can block
or raise an unlock prompt.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import keyring
import keyring.backend
import keyring.errors
from keyring.backends import chainer, fail, null

from desktop_agent.ai import LOCAL_SERVERS
from desktop_agent.config._environ import erase_environment_variables
from desktop_agent.config._keyfile import KeyFile, KeyFileError
from desktop_agent.utils import is_secret_variable

log = logging.getLogger("desktop_agent.config.secrets")

SERVICE = "DesktopAgent"

ENV_VARS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "local": "DESKTOP_AGENT_LOCAL_API_KEY",
}
"""Environment variable read for each provider when the keychain has no key."""

_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})

KeySource = Literal["keychain", "file", "environment"]


class KeyStoreError(Exception):
    """A key could not be stored or removed; ``str()`` is a sentence for the user."""


def is_local_url(base_url: str | None) -> bool:
    """Whether ``base_url`` points at this machine (a local server needs no key)."""
    if not base_url:
        return False
    try:
        host = urlsplit(base_url).hostname
    except ValueError:
        return False
    return host is not None and (host in _LOCAL_HOSTS or host.endswith(".localhost"))


def platform_keyring() -> keyring.backend.KeyringBackend:
    """The system keychain: the platform's own backend when it answers, else ``fail``.

    ``keyring.get_keyring()`` finds the same one by importing every backend it knows
    and asking each; on Linux the macOS one alone runs ``ldconfig`` and ``gcc`` three
    times, and the search took 70-100 ms of every launch here. So keyring's own search
    is used only where it can find something else: the user chose a backend
    (``PYTHON_KEYRING_BACKEND`` or keyring's ``keyringrc.cfg``), or the modules of the
    other Linux backends (KWallet through ``dbus``, libsecret through ``gi``) are
    installed, or the platform is none of Linux, macOS, Windows.
    """
    from keyring.util import platform_

    if (
        os.environ.get("PYTHON_KEYRING_BACKEND")
        or (Path(platform_.config_root()) / "keyringrc.cfg").exists()
    ):
        return keyring.get_keyring()
    own: type[keyring.backend.KeyringBackend]
    if sys.platform == "darwin":
        from keyring.backends import macOS

        own = macOS.Keyring
    elif sys.platform == "win32":
        from keyring.backends import Windows

        own = Windows.WinVaultKeyring
    elif sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")) and not any(
        importlib.util.find_spec(name) for name in ("dbus", "gi")
    ):
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            # The Secret Service is reached only through the session bus, which its
            # library finds by this variable alone: without it, importing that library
            # (25-45 ms of a launch) could only end in "not viable".
            return fail.Keyring()  # type: ignore[no-untyped-call]
        from keyring.backends import SecretService

        own = SecretService.Keyring
    else:
        return keyring.get_keyring()
    try:
        viable = float(own.priority) > 0
    except Exception:  # noqa: BLE001 - keyring's priorities raise to say "not here"
        viable = False
    return own() if viable else fail.Keyring()  # type: ignore[no-untyped-call]


def backend_problem(backend: keyring.backend.KeyringBackend) -> str | None:
    """Why ``backend`` cannot keep secrets, or None if it can."""
    if isinstance(backend, fail.Keyring | null.Keyring):
        usable = False
    elif isinstance(backend, chainer.ChainerBackend):
        try:
            usable = bool(backend.backends) and float(backend.priority) > 0
        except Exception:  # noqa: BLE001 - a backend's priority may raise anything
            usable = False
    else:
        usable = True
    if usable:
        return None
    return (
        "No system keychain was found (on Linux it takes a Secret Service such as GNOME"
        " Keyring or KeePassXC, or KWallet), so API keys cannot be saved: a key typed in"
        ' Settings is kept in memory until you quit. To keep one, tick "Keep keys in a file'
        ' only you can read" in Settings, or set OPENAI_API_KEY, ANTHROPIC_API_KEY or (for'
        " the local or custom server) DESKTOP_AGENT_LOCAL_API_KEY in the environment."
    )


class KeyStore:
    """Provider API keys by provider name.

    Reading: the keychain first, then the provider's environment variable (`ENV_VARS`,
    extendable with ``env_vars``). Writing: the keychain only; without one, `set` raises
    `KeyStoreError` and nothing is written anywhere. ``has_key`` answers from a cache
    that `load` fills and `get`/`set`/`delete` keep current.

    The keychain is ``backend`` when given, else what ``find_backend`` returns, asked
    once on a worker thread (keyring's own search by default; the app passes
    `platform_keyring`).

    The environment is read once, when the store is made: the provider keys are kept
    here, and then (``take_from_environment``, the default) they and every other
    secret-looking variable (`desktop_agent.utils.is_secret_variable`) are removed from
    ``environ``; for the real ``os.environ`` also from the block the OS shows other
    processes (``/proc/<pid>/environ``), so a command the agent runs cannot read them.
    """

    def __init__(
        self,
        *,
        service: str = SERVICE,
        env_vars: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
        backend: keyring.backend.KeyringBackend | None = None,
        find_backend: Callable[[], keyring.backend.KeyringBackend] = keyring.get_keyring,
        take_from_environment: bool = True,
        key_file: KeyFile | None = None,
        use_file: bool = False,
    ) -> None:
        self._service = service
        self.key_file = key_file
        """Where keys are kept when `use_file` (read whenever it exists)."""
        self.use_file = use_file and key_file is not None
        """Keep keys typed in Settings in `key_file` instead of the keychain."""
        self._env_vars = {**ENV_VARS, **(env_vars or {})}
        source = environ if environ is not None else os.environ
        self._env_keys: dict[str, str] = {}
        for provider, name in self._env_vars.items():
            value = source.get(name)
            if value:
                self._env_keys[provider] = value
        self.erased: list[str] = []
        """The variables removed from the environment when the store was made."""
        if take_from_environment:
            self.erased = _take_secrets(source, set(self._env_vars.values()))
        self._backend = backend
        self._find_backend = find_backend
        self._problem: str | None = None
        self._resolved = False
        self._sources: dict[str, KeySource | None] = {}

    def __repr__(self) -> str:
        with_keys = sorted(p for p, s in self._sources.items() if s)
        return (
            f"KeyStore(backend={self.backend_name!r}, available={self.available},"
            f" providers_with_keys={with_keys})"
        )

    # ------------------------------------------------------------------ state

    @property
    def available(self) -> bool:
        """Whether keys can be saved in a keychain (known after `load`)."""
        return self._resolved and self._problem is None

    @property
    def can_keep(self) -> bool:
        """Whether a key typed now is kept across restarts (keychain or key file)."""
        return self.use_file or self.available

    @property
    def backend_name(self) -> str:
        if self._backend is None:
            return "unknown"
        cls = type(self._backend)
        return f"{cls.__module__}.{cls.__qualname__}"

    @property
    def problem(self) -> str | None:
        """A sentence for the user when no usable keychain exists, else None."""
        return self._problem

    def where_kept(self) -> str:
        """Where a key typed now will be kept (for the key fields of Settings)."""
        if self.use_file and self.key_file is not None:
            return f"saved in {self.key_file.path}, which only you can read"
        if self.available:
            return "saved in the system keychain"
        return "kept in memory until you quit (no system keychain)"

    def env_var(self, provider: str) -> str | None:
        """The environment variable read for ``provider``, if any."""
        return self._env_vars.get(provider)

    def has_key(self, provider: str) -> bool:
        """Whether a key for ``provider`` was found (cached; see `load`)."""
        return self._sources.get(provider) is not None

    def key_source(self, provider: str) -> KeySource | None:
        """Where the cached key of ``provider`` comes from."""
        return self._sources.get(provider)

    @staticmethod
    def needs_key(provider: str, base_url: str | None = None) -> bool:
        """False for local OpenAI-compatible servers (localhost base URL, or a known
        local server such as Ollama without another base URL)."""
        if base_url is not None:
            return not is_local_url(base_url)
        return provider not in LOCAL_SERVERS

    # ------------------------------------------------------------------- async

    async def load(self, providers: Iterable[str]) -> None:
        """Find the keychain (once) and fill the ``has_key`` cache for ``providers``."""
        await self._ensure_backend()
        for provider in providers:
            await self.get(provider)

    async def get(self, provider: str) -> str | None:
        """The key of ``provider``: keychain, else environment, else None."""
        await self._ensure_backend()
        key: str | None = None
        if self._problem is None:
            key = await asyncio.to_thread(self._keyring_get, provider)
        if key:
            self._sources[provider] = "keychain"
            return key
        key = await asyncio.to_thread(self._file_get, provider)
        if key:
            self._sources[provider] = "file"
            return key
        env_key = self._env_keys.get(provider)
        self._sources[provider] = "environment" if env_key else None
        return env_key or None

    async def set(self, provider: str, key: str) -> None:
        """Save ``key`` in the keychain (or the key file when `use_file`); `KeyStoreError`
        when there is neither."""
        if not key:
            raise KeyStoreError("An empty key cannot be saved; use Remove instead.")
        if self.use_file and self.key_file is not None:
            try:
                await asyncio.to_thread(self.key_file.set, provider, key)
            except KeyFileError as exc:
                raise KeyStoreError(str(exc)) from None
            self._sources[provider] = "file"
            return
        await self._ensure_backend()
        if self._problem is not None:
            raise KeyStoreError(self._problem)
        backend = self._backend
        assert backend is not None
        try:
            await asyncio.to_thread(backend.set_password, self._service, provider, key)
        except keyring.errors.KeyringError as exc:
            raise KeyStoreError(
                f"The system keychain refused to save the key for {provider}"
                f" ({type(exc).__name__})."
            ) from None
        self._sources[provider] = "keychain"

    async def delete(self, provider: str) -> None:
        """Remove the keychain entry and the key-file entry of ``provider`` (a missing
        entry is fine)."""
        await self._ensure_backend()
        if self._problem is None:
            backend = self._backend
            assert backend is not None
            try:
                await asyncio.to_thread(backend.delete_password, self._service, provider)
            except keyring.errors.PasswordDeleteError:
                pass
            except keyring.errors.KeyringError as exc:
                raise KeyStoreError(
                    f"The system keychain refused to remove the key for {provider}"
                    f" ({type(exc).__name__})."
                ) from None
        if self.key_file is not None:
            try:
                await asyncio.to_thread(self.key_file.set, provider, None)
            except KeyFileError as exc:
                raise KeyStoreError(str(exc)) from None
        self._sources[provider] = "environment" if self._env_keys.get(provider) else None

    # --------------------------------------------------------------- internals

    async def _ensure_backend(self) -> None:
        if self._resolved:
            return
        if self._backend is None:
            self._backend = await asyncio.to_thread(self._find_backend)
        self._problem = backend_problem(self._backend)
        self._resolved = True
        if self._problem is not None:
            log.info("No usable keychain (%s); keys come from the environment", self.backend_name)

    def _file_get(self, provider: str) -> str | None:
        if self.key_file is None:
            return None
        try:
            return self.key_file.load().get(provider)
        except KeyFileError as exc:
            log.warning("%s", exc)
            return None

    def _keyring_get(self, provider: str) -> str | None:
        backend = self._backend
        assert backend is not None
        try:
            return backend.get_password(self._service, provider)
        except keyring.errors.KeyringError as exc:
            # Locked keychain, dismissed prompt...: no key, and say so (never the key).
            log.warning("Could not read the key for %s: %s", provider, type(exc).__name__)
            return None


def _take_secrets(environ: Mapping[str, str], names: set[str]) -> list[str]:
    """Remove ``names`` and every secret-looking variable from ``environ``."""
    doomed = sorted(n for n, v in environ.items() if n in names or is_secret_variable(n, v))
    if environ is os.environ:
        return erase_environment_variables(doomed)
    if isinstance(environ, MutableMapping):
        for name in doomed:
            environ.pop(name, None)
        return doomed
    return []
