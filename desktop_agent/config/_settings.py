"""User settings (``settings.json``): pydantic-validated, never holding a secret.

API keys live in the OS keychain (`KeyStore`); nothing here may carry one, so custom
model entries keep only their known, non-secret fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from desktop_agent.ai import THINKING_LEVELS
from desktop_agent.config._files import load_model, save_model
from desktop_agent.config._pi import PiSessionsSettings
from desktop_agent.config._server_url import normalize_server_url, server_url_problem
from desktop_agent.utils.versions import APP_VERSION, is_newer

ApprovalRule: TypeAlias = Literal["allow", "ask", "deny"]
SendKey: TypeAlias = Literal["enter", "ctrl+enter"]
ThemeMode: TypeAlias = Literal["system", "light", "dark"]
"""``system`` follows the desktop's light/dark setting, live."""
RestoreMode: TypeAlias = Literal["last", "new"]
StoreKind: TypeAlias = Literal["jsonl", "sqlite", "postgres"]
ServerApi: TypeAlias = Literal["openai-completions", "openai-responses", "anthropic-messages"]
FollowBranch: TypeAlias = Literal["ask", "always", "never"]
"""When the leaf moves to a point whose files differ from the folder: ask (a bar with
Restore files / Keep / Show changes), always restore, or never."""

CUSTOM_MODEL_FIELDS: tuple[str, ...] = (
    "provider",
    "id",
    "name",
    "base_url",
    "context_window",
    "max_tokens",
    "reasoning",
    "input",
)
"""The keys a custom model entry keeps; anything else (an ``api_key``…) is dropped."""


def _check_custom_model(entry: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-compatible user model: provider, id and base_url required."""
    for key in ("provider", "id", "base_url"):
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"a custom model needs a non-empty {key!r}")
    if "/" in entry["provider"]:
        raise ValueError("a provider name may not contain '/'")
    out: dict[str, Any] = {
        "provider": entry["provider"],
        "id": entry["id"],
        "name": entry.get("name") if isinstance(entry.get("name"), str) else entry["id"],
        "base_url": entry["base_url"].rstrip("/"),
    }
    for key in ("context_window", "max_tokens"):
        value = entry.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{key} must be a positive integer")
            out[key] = value
    reasoning = entry.get("reasoning", False)
    if not isinstance(reasoning, bool):
        raise ValueError("reasoning must be true or false")
    out["reasoning"] = reasoning
    kinds = entry.get("input", ["text"])
    if not isinstance(kinds, list) or not kinds or any(k not in ("text", "image") for k in kinds):
        raise ValueError('input must be a list of "text" and "image"')
    out["input"] = list(kinds)
    return out


CustomModel: TypeAlias = Annotated[dict[str, Any], AfterValidator(_check_custom_model)]


class ProviderSettings(BaseModel):
    """Per-provider options (no key: keys are in the keychain).

    For a server the user runs (``providers.local`` and other names that are not a
    built-in provider), ``base_url`` is kept as typed (``http://`` added when it has no
    scheme) and ``protocol`` says which wire
    API it speaks; its models are listed from the server at every start.
    """

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    base_url: str | None = None
    enabled: bool = True
    protocol: ServerApi = "openai-completions"

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        problem = server_url_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return normalize_server_url(value)


class CheckpointSettings(BaseModel):
    """Workspace checkpoints (``checkpoints`` in settings.json)."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    follow_branch: FollowBranch = "ask"


def _default_approval() -> dict[str, ApprovalRule]:
    return {"bash": "ask", "write": "ask", "edit": "ask"}


class Settings(BaseModel):
    """Everything the settings dialog edits. Unknown keys are ignored (with a warning
    when loaded from a file)."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    custom_models: list[CustomModel] = Field(default_factory=list)
    default_model: str | None = None
    """``provider/id``."""
    default_thinking_level: str = "medium"
    approval: dict[str, ApprovalRule] = Field(default_factory=_default_approval)
    send_key: SendKey = "enter"
    theme: ThemeMode = "system"
    restore: RestoreMode = "last"
    fsync_every_entry: bool = False
    discover_local_servers: bool = True
    shell_network: bool = True
    """Whether the agent's shell commands may use the network inside their sandbox."""
    keys_in_file: bool = False
    """Keep API keys typed in Settings in ``keys.json`` (0600, config folder) instead of
    the system keychain; for machines without one. The keys never go in this file."""
    pi_sessions: PiSessionsSettings = Field(default_factory=PiSessionsSettings)
    """The Pi CLI's sessions beside ours (`pi_sessions_dir`)."""
    instructions: dict[str, str] = Field(default_factory=dict)
    """Per project folder (its path): text the agent is told at every turn, kept by the
    app for people without an ``AGENTS.md`` (the Context view edits it)."""
    store: StoreKind = "jsonl"
    """Where sessions are kept: Pi-compatible JSONL files, one SQLite database, or a
    PostgreSQL server (``database_url``)."""
    database_url: str = ""
    """The PostgreSQL server of ``"store": "postgres"``, e.g.
    ``postgresql://me@db.example/agent?sslmode=verify-full``; its password is kept in the
    keychain, never here (a password typed here is used, and moved to the keychain)."""
    checkpoints: CheckpointSettings = Field(default_factory=CheckpointSettings)
    app_version: str | None = None
    """The Desktop Agent that last saved the file (set by `save_settings`). A file a newer
    version saved is read but never saved here (`NewerSettingsError`)."""

    @field_validator("default_model")
    @classmethod
    def _model_key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        provider, slash, model_id = value.partition("/")
        if not provider or not slash or not model_id:
            raise ValueError('default_model must be "provider/id"')
        return value

    @field_validator("default_thinking_level")
    @classmethod
    def _thinking_level(cls, value: str) -> str:
        if value not in THINKING_LEVELS:
            raise ValueError(f"thinking level must be one of {', '.join(THINKING_LEVELS)}")
        return value


def load_settings(path: Path) -> Settings:
    """Settings from ``path``: defaults if missing; bad keys reset after a ``.BAK`` copy."""
    return load_model(path, Settings, "settings")


class NewerSettingsError(OSError):
    """The settings file was saved by a newer Desktop Agent: it is not overwritten."""


def settings_from_newer(settings: Settings) -> bool:
    """Whether ``settings`` came from a file a newer app version saved."""
    return is_newer(settings.app_version)


def save_settings(path: Path, settings: Settings) -> None:
    """Write ``settings`` atomically (temp file, fsync, rename), stamped with this app's
    version; refuses (`NewerSettingsError`) when they came from a newer version's file,
    whose keys this version may not know and would drop."""
    if settings_from_newer(settings):
        raise NewerSettingsError(
            f"{Path(path).name} was saved by Desktop Agent {settings.app_version}, newer than"
            f" this version ({APP_VERSION}), and is kept as it is"
        )
    settings.app_version = APP_VERSION
    save_model(path, settings)
