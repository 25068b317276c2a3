"""`Models`: which models can be used now: the registry, API keys, and servers the user runs.

A server the user set up (``providers.<name>.base_url`` in settings, e.g. ``local``) is
listed at every start with its URL exactly as typed and its key, if it has one; until it
answered, its models are *pending* (a session saved with one waits instead of falling
back). The usual local ports are scanned too, when the setting allows. Neither ever
delays the first paint: both run in the background and report through `changed`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from urllib.parse import urlsplit

from desktop_agent.ai import LOCAL_SERVERS, DiscoveryError, Model, ModelRegistry
from desktop_agent.config import (
    KeyStore,
    KeyStoreError,
    ProviderSettings,
    ServerApi,
    Settings,
    normalize_server_url,
    server_url_problem,
)

log = logging.getLogger("desktop_agent.workbench")

BUILT_IN_PROVIDERS = frozenset({"openai", "anthropic"})
DISCOVERY_TIMEOUT_S = 3.0
RELIST_INTERVAL_S = 5.0
"""How often a configured server that could not be listed is tried again."""


class Models:
    """Keys and models for the workbench (one per app, built by the composition root)."""

    def __init__(
        self,
        registry: ModelRegistry,
        keystore: KeyStore,
        settings: Settings,
        *,
        on_secret: Callable[[str], None] | None = None,
    ) -> None:
        self.registry = registry
        self.keystore = keystore
        self.settings = settings
        self._on_secret = on_secret or (lambda _s: None)
        self._keys: dict[str, str | None] = {}
        self._pending: set[str] = set(self.servers())  # listed by `discover`, soon
        self.problems: dict[str, str] = {}
        """Provider -> why its server could not be listed (a sentence for the user)."""
        self.changed: Callable[[], None] = lambda: None
        """Called (by the workbench) whenever the usable models may have changed."""
        self._settled = asyncio.Event()
        self.relist_interval_s = RELIST_INTERVAL_S

    # ------------------------------------------------------------------ keys

    def servers(self) -> dict[str, ProviderSettings]:
        """The servers the user runs: providers with a URL that are not built in."""
        return {
            name: p
            for name, p in self.settings.providers.items()
            if p.base_url and p.enabled and name not in BUILT_IN_PROVIDERS
        }

    def key_providers(self) -> list[str]:
        names = {m.provider for m in self.registry.all()} | set(self.servers())
        return sorted(names)

    async def load_keys(self) -> None:
        """Read every provider's key once (keychain, then environment)."""
        providers = self.key_providers()
        await self.keystore.load(providers)
        for provider in providers:
            key = await self.keystore.get(provider)
            self._keys[provider] = key
            if key:
                self._on_secret(key)

    def key_of(self, provider: str) -> str | None:
        return self._keys.get(provider)

    def get_api_key(self, model: Model) -> str | None:
        """The key sent with a request (None: the provider adapter sends none/a dummy)."""
        return self._keys.get(model.provider)

    def has_key(self, model: Model) -> bool:
        """Whether ``model`` can be used: a key, or a local server that needs none."""
        if self._keys.get(model.provider):
            return True
        if model.provider in self.servers():
            return True  # the user's own server: with or without a key
        return not KeyStore.needs_key(model.provider, model.base_url)

    async def set_key(self, provider: str, key: str) -> str | None:
        """Use ``key`` for ``provider`` now and keep it; returns a sentence when it could
        only be kept in memory (no keychain)."""
        self._keys[provider] = key
        self._on_secret(key)
        try:
            await self.keystore.set(provider, key)
        except KeyStoreError as exc:
            return f"The key for {provider} is used until you quit: {exc}"
        return None

    # ------------------------------------------------------------------ models

    def usable(self) -> list[Model]:
        return [m for m in self.registry.all() if self.has_key(m)]

    def choices(self) -> list[tuple[str, str]]:
        """(key, label) of every usable model, e.g. ("local/fake-model", "fake-model (local)")."""
        return [(m.key, label_of(m)) for m in self.usable()]

    def pending(self, provider: str) -> bool:
        """Whether ``provider``'s server is still being listed."""
        return provider in self._pending

    def server_url(self, provider: str) -> str | None:
        server = self.servers().get(provider)
        return server.base_url if server is not None else None

    async def discover(self) -> None:
        """List every configured server (concurrently), then scan the usual local ports."""
        servers = self.servers()
        self._pending |= set(servers)
        if self._settled.is_set():
            self._settled = asyncio.Event()
        self.changed()
        try:
            await asyncio.gather(*(self._list(name, s) for name, s in servers.items()))
        finally:
            self._settled.set()
        if self.settings.discover_local_servers:
            await self.scan_local()

    async def test_server(self, url: str, protocol: ServerApi, key: str | None) -> list[str]:
        """The ids of the models a server (not saved yet) lists; raises `DiscoveryError`
        with a sentence for the user (Settings' "Test connection")."""
        problem = server_url_problem(url)
        if problem is not None:
            raise DiscoveryError(problem)
        models = await self.registry.discover_server(
            "local",
            normalize_server_url(url),
            api=protocol,
            api_key=key or self._keys.get("local"),
            timeout_s=DISCOVERY_TIMEOUT_S,
            register=False,
        )
        return [m.id for m in models]

    async def keep_listing(self) -> None:
        """Until cancelled: list again, every `relist_interval_s`, each configured server
        that could not be listed (LM Studio or Ollama started after the app, FIRST_HOUR.md
        M4); `changed` is called only when one answers or its problem changes."""
        while True:
            await asyncio.sleep(self.relist_interval_s)
            failed = {
                n: s
                for n, s in self.servers().items()
                if n in self.problems and n not in self._pending
            }
            if failed:
                before = dict(self.problems)
                await asyncio.gather(*(self._list(n, s, quiet=True) for n, s in failed.items()))
                if self.problems != before:
                    self.changed()

    async def _list(self, name: str, server: ProviderSettings, *, quiet: bool = False) -> None:
        url = server.base_url or ""
        try:
            await self.registry.discover_server(
                name,
                url,
                api=server.protocol,
                api_key=self._keys.get(name),
                timeout_s=DISCOVERY_TIMEOUT_S,
            )
            self.problems.pop(name, None)
        except DiscoveryError as exc:
            self.problems[name] = str(exc)
        except Exception:
            log.exception("listing the models of %s failed", url)
            self.problems[name] = f"Could not list the models of {url}."
        finally:
            self._pending.discard(name)
            if not quiet:
                self.changed()

    async def scan_local(self) -> None:
        """Models of Ollama, LM Studio, llama.cpp and vLLM on their usual ports."""
        taken = {urlsplit(s.base_url or "").port for s in self.servers().values()}
        ports = {name: port for name, port in LOCAL_SERVERS.items() if port not in taken}
        try:
            await self.registry.discover_local(servers=ports)
        except Exception:
            log.exception("local server discovery failed")
        self.changed()

    async def settled(self) -> None:
        """Wait until the configured servers answered or gave up (each has a timeout)."""
        if self._pending:
            await self._settled.wait()


def label_of(model: Model) -> str:
    """The picker's label: "name (provider)", once ("fake-model (local)")."""
    suffix = f"({model.provider})"
    name = model.name or model.id
    return name if name.endswith(suffix) else f"{name} {suffix}"
