"""`ModelRegistry`: curated catalogue + user-defined models + local-server discovery."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterable, Mapping
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from desktop_agent.ai._models import Api, Model, ModelCompat
from desktop_agent.resources import MODELS, resource

if TYPE_CHECKING:
    import ssl

    import httpx

_log = logging.getLogger("desktop_agent.ai.registry")

CATALOGUE_PATH: Traversable = resource(MODELS)
"""The curated catalogue shipped inside the package (``desktop_agent/resources/models.json``)."""

LOCAL_SERVERS: dict[str, int] = {"ollama": 11434, "lmstudio": 1234, "llama.cpp": 8080, "vllm": 8000}
"""Usual ports of local OpenAI-compatible servers, by provider name."""

LOCAL_COMPAT = ModelCompat(
    supports_usage_in_streaming=True,
    max_tokens_field="max_tokens",
    supports_developer_role=False,
    supports_reasoning_effort=False,
)


class CatalogueError(ValueError):
    """The catalogue file is missing or not valid."""


def load_catalogue(path: Traversable | None = None) -> list[Model]:
    """The models of a catalogue file: ``{"models": [<Model JSON>, ...]}``."""
    path = path or CATALOGUE_PATH
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        entries = raw["models"] if isinstance(raw, dict) else raw
        return [Model.model_validate(entry) for entry in entries]
    except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
        raise CatalogueError(f"cannot read the model catalogue {path}: {exc}") from exc


class ModelRegistry:
    """All models the app can use, keyed by ``(provider, id)``.

    Later sources win over earlier ones: catalogue < discovered local models < user models.
    """

    def __init__(
        self,
        *,
        catalogue: Iterable[Model] | None = None,
        catalogue_path: Traversable | None = None,
        user_models: Iterable[Model | Mapping[str, Any]] = (),
    ) -> None:
        models = list(catalogue) if catalogue is not None else load_catalogue(catalogue_path)
        self._catalogue: dict[tuple[str, str], Model] = {(m.provider, m.id): m for m in models}
        self._sources: dict[str, dict[tuple[str, str], Model]] = {}
        self._discovered: dict[tuple[str, str], Model] = {}
        self._user: dict[tuple[str, str], Model] = {}
        for model in user_models:
            self.add(model)

    # -- lookup ----------------------------------------------------------------------

    def _merged(self) -> dict[tuple[str, str], Model]:
        return {**self._catalogue, **self._discovered, **self._user}

    def all(self) -> list[Model]:
        return list(self._merged().values())

    def find(self, provider: str, model_id: str) -> Model | None:
        key = (provider, model_id)
        return self._user.get(key) or self._discovered.get(key) or self._catalogue.get(key)

    def get(self, key: str) -> Model | None:
        """Look up ``"provider/id"`` (ids may contain slashes; the provider may not)."""
        provider, _, model_id = key.partition("/")
        return self.find(provider, model_id)

    def by_provider(self, provider: str) -> list[Model]:
        return [m for m in self.all() if m.provider == provider]

    def providers(self) -> list[str]:
        return sorted({m.provider for m in self.all()})

    def user_models(self) -> list[Model]:
        return list(self._user.values())

    def discovered_models(self) -> list[Model]:
        return list(self._discovered.values())

    # -- user-defined ----------------------------------------------------------------

    def add(self, model: Model | Mapping[str, Any]) -> Model:
        """Add or replace a user-defined model."""
        if not isinstance(model, Model):
            model = Model.model_validate(model)
        self._user[(model.provider, model.id)] = model
        return model

    def add_openai_compatible(
        self,
        model_id: str,
        base_url: str,
        *,
        provider: str = "custom",
        name: str | None = None,
        reasoning: bool = False,
        images: bool = False,
        context_window: int = 32_768,
        max_tokens: int = 8_192,
        headers: Mapping[str, str] | None = None,
        compat: ModelCompat | None = None,
    ) -> Model:
        """A user-defined model on any OpenAI-compatible server (``base_url`` ends in ``/v1``)."""
        model = Model(
            id=model_id,
            name=name or model_id,
            api="openai-completions",
            provider=provider,
            base_url=base_url.rstrip("/"),
            reasoning=reasoning,
            input=("text", "image") if images else ("text",),
            context_window=context_window,
            max_tokens=max_tokens,
            headers=dict(headers) if headers else None,
            compat=compat or LOCAL_COMPAT,
        )
        return self.add(model)

    def remove(self, provider: str, model_id: str) -> bool:
        return self._user.pop((provider, model_id), None) is not None

    # -- discovery -------------------------------------------------------------------

    def set_discovered(self, source: str, models: Iterable[Model]) -> None:
        """Replace the models found by one discovery ``source`` (a server or a scan)."""
        self._sources[source] = {(m.provider, m.id): m for m in models}
        merged: dict[tuple[str, str], Model] = {}
        for found in self._sources.values():
            merged.update(found)
        self._discovered = merged

    async def discover_local(
        self,
        *,
        host: str = "127.0.0.1",
        servers: Mapping[str, int] | None = None,
        timeout_s: float = 0.5,
    ) -> list[Model]:
        """Ask the usual local servers for their models (``GET /v1/models``).

        Servers that are not running (or answer garbage) are skipped silently. The result
        replaces the models an earlier scan found and is returned.
        """
        servers = LOCAL_SERVERS if servers is None else servers
        # Usually none is running: a plain connect finds that out in microseconds, where
        # an HTTP client (made on a thread, with its TLS context) and four failed
        # requests took ~0.1 s of the GIL at every launch, beside the first paint.
        up = await asyncio.gather(*(_listening(host, port, timeout_s) for port in servers.values()))
        running = {name: port for (name, port), ok in zip(servers.items(), up, strict=True) if ok}
        results: list[list[Model]] = []
        if running:
            async with await _client(timeout_s, {}) as client:
                results = await asyncio.gather(
                    *(
                        self._probe(client, name, f"http://{host}:{port}/v1")
                        for name, port in running.items()
                    )
                )
        found = [model for models in results for model in models]
        self.set_discovered("local-scan", found)
        return found

    async def discover_server(
        self,
        provider: str,
        base_url: str,
        *,
        api: Api = "openai-completions",
        api_key: str | None = None,
        timeout_s: float = 3.0,
        register: bool = True,
    ) -> list[Model]:
        """The models of a server the user set up, at ``base_url`` exactly as typed
        (``register``: they become the registry's models of ``provider``; else only
        returned, as Settings' "Test connection" does).

        OpenAI-compatible servers are asked at ``<url>/models``, then ``<url>/v1/models``
        (the URL the models get is the one that answered); Anthropic-compatible ones at
        ``<url without /v1>/v1/models``. ``api_key`` is sent as a bearer token and as
        ``x-api-key`` (LiteLLM and others need one). Raises `DiscoveryError` with a
        sentence for the user when the server cannot be listed.
        """
        url = base_url.strip().rstrip("/")
        headers = {"x-api-key": api_key, "authorization": f"Bearer {api_key}"} if api_key else {}
        if api == "anthropic-messages":
            root = url[: -len("/v1")] if url.endswith("/v1") else url
            candidates = [(f"{root}/v1/models", url)]
        else:
            candidates = [(f"{url}/models", url)]
            if not url.endswith("/v1"):
                candidates.append((f"{url}/v1/models", f"{url}/v1"))
        problem = "it did not answer"
        async with await _client(timeout_s, headers) as client:
            import httpx  # loaded by _client

            for list_url, model_url in candidates:
                try:
                    response = await client.get(list_url)
                except httpx.TimeoutException:
                    problem = f"it did not answer within {timeout_s:g} s"
                    continue
                except httpx.HTTPError as exc:
                    problem = _unreachable(exc, list_url)
                    continue
                if response.status_code in (401, 403):
                    raise DiscoveryError(
                        f"The server at {base_url} refused the model list"
                        f" ({response.status_code}): check its API key in Settings."
                    )
                if response.status_code != 200:
                    reason = _answer_reason(response)
                    problem = f"listing its models failed: it answered {response.status_code}"
                    problem += f" ({reason})" if reason else ""
                    continue
                models = _models_from(response, provider, model_url, api)
                if models is None:
                    problem = "its answer was not a model list"
                    continue
                if register:
                    self.set_discovered(f"server:{provider}", models)
                return models
        if register:
            self.set_discovered(f"server:{provider}", [])
        raise DiscoveryError(f"Could not list the models of {base_url}: {problem}.")

    @staticmethod
    async def _probe(client: httpx.AsyncClient, name: str, base_url: str) -> list[Model]:
        import httpx  # loaded by _client

        try:
            response = await client.get(f"{base_url}/models")
            response.raise_for_status()
        except httpx.HTTPError as exc:
            _log.debug("no %s server at %s: %s", name, base_url, type(exc).__name__)
            return []
        return _models_from(response, name, base_url, "openai-completions") or []


async def _listening(host: str, port: int, timeout_s: float) -> bool:
    """Whether something accepts a TCP connection at ``host:port``."""
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


_SSL_CONTEXT: ssl.SSLContext | None = None


async def _client(timeout_s: float, headers: Mapping[str, str]) -> httpx.AsyncClient:
    """An HTTP client for discovery, made on a worker thread: importing httpx (~0.1 s)
    and building its TLS context (certifi's CAs, ~0.15 s; once, then shared) ran on the
    event loop at every launch, before the first paint."""

    def make() -> httpx.AsyncClient:
        global _SSL_CONTEXT
        import httpx

        if _SSL_CONTEXT is None:
            _SSL_CONTEXT = httpx.create_ssl_context()
        return httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s),
            trust_env=False,
            headers=dict(headers),
            verify=_SSL_CONTEXT,
        )

    return await asyncio.to_thread(make)


def _unreachable(exc: BaseException, url: str) -> str:
    """Why a server could not be reached, in words (L7: "(ConnectError)" was all it said,
    also when an https:// address pointed at a server that speaks plain HTTP)."""
    chain: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and link not in chain and len(chain) < 8:
        chain.append(link)
        link = link.__cause__ or link.__context__
    words = " ".join(f"{type(e).__name__} {e}" for e in chain).lower()
    if url.startswith("https://") and ("ssl" in words or "tls" in words):
        return "it could not be reached over HTTPS (does its address start with http://?)"
    if "refused" in words or "all connection attempts failed" in words:
        return "it could not be reached: nothing answers at that address and port"
    return f"it could not be reached ({type(exc).__name__})"


def _answer_reason(response: httpx.Response) -> str:
    """The server's own words for a failed answer (LiteLLM: "No connected db."), short."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    reason: Any = None
    if isinstance(payload, dict):
        error = payload.get("error")
        reason = error.get("message") if isinstance(error, dict) else error
        reason = reason or payload.get("message") or payload.get("detail")
    text = reason if isinstance(reason, str) else response.text if payload is None else ""
    text = " ".join(text.split())
    return text[:200] + ("…" if len(text) > 200 else "")


class DiscoveryError(Exception):
    """A configured server could not be listed; ``str()`` is a sentence for the user."""


def _models_from(
    response: httpx.Response, provider: str, base_url: str, api: Api
) -> list[Model] | None:
    """Models of a ``/models`` answer (OpenAI or Anthropic shape); None if it is not one."""
    try:
        payload = response.json()
    except ValueError:
        return None
    entries = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        return None
    models: list[Model] = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        context = _context_window(entry)
        display = entry.get("display_name")
        models.append(
            Model(
                id=entry["id"],
                name=display if isinstance(display, str) and display else entry["id"],
                api=api,
                provider=provider,
                base_url=base_url,
                reasoning=False,
                context_window=context,
                max_tokens=min(8_192, context),
                compat=LOCAL_COMPAT if api == "openai-completions" else None,
            )
        )
    return models


_CONTEXT_FIELDS = (
    "context_window",
    "context_length",
    "max_context_length",
    "max_model_len",
    "max_input_tokens",
    "n_ctx",
    "n_ctx_train",
)


def _context_window(entry: Mapping[str, Any]) -> int:
    """The context window a model list says (vLLM, LM Studio, llama.cpp, OpenRouter,
    LiteLLM's model info...), else 32,768."""
    places: list[Any] = [entry]
    for nested in ("meta", "model_info", "details", "top_provider", "status"):
        value = entry.get(nested)
        if isinstance(value, Mapping):
            places.append(value)
    for key in _CONTEXT_FIELDS:
        for place in places:
            value = place.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return 32_768
