"""The Settings dialog's form: what it starts with (`settings_form`, never a key) and
what applying it changes, in effect at once (`apply_settings`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from desktop_agent.ai import DiscoveryError
from desktop_agent.config import (
    ApprovalRule,
    FollowBranch,
    PiSessionsSettings,
    ProviderSettings,
    SendKey,
    ServerApi,
    StoreKind,
    ThemeMode,
    database_url_problem,
    server_url_problem,
)
from desktop_agent.workbench._changes import Changes
from desktop_agent.workbench._open import WorkbenchError
from desktop_agent.workbench._pg_store import apply_store_form

if TYPE_CHECKING:
    from desktop_agent.workbench._workbench import Workbench

LOCAL_PROVIDER = "local"


@dataclass(frozen=True)
class SettingsForm:
    """The Settings dialog's fields. ``keys``: keys typed now, by provider (never read
    back: ``has_key`` only says whether one is set)."""

    local_url: str | None = None
    local_protocol: ServerApi = "openai-completions"
    discover_local_servers: bool = True
    default_model: str | None = None
    send_key: SendKey = "enter"
    theme: ThemeMode = "system"
    approval: dict[str, ApprovalRule] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    models: tuple[tuple[str, str], ...] = ()
    has_key: dict[str, bool] = field(default_factory=dict)
    keychain_problem: str | None = None
    where_kept: str = ""
    pi_sessions: bool = True
    """Show the Pi coding agent's sessions beside ours."""
    pi_folder: str | None = None
    """Pi's sessions folder as typed (None: where Pi keeps them, ``pi_default_folder``)."""
    pi_default_folder: str = ""
    follow_branch: FollowBranch = "ask"
    """What the folder does when the leaf moves (``checkpoints.follow_branch``)."""
    checkpoints_bytes: int | None = None
    """The checkpoint store's size on disk (None: checkpoints are off)."""
    prune_days: int | None = None
    """"Remove checkpoints older than N days" was asked for (None: keep them all)."""
    shell_network: bool = True
    """Shell commands may use the network (the sandbox's switch)."""
    sandbox_problem: str | None = None
    """Why shell commands run without a sandbox here (None: they run in one)."""
    keys_in_file: bool = False
    """Keep keys in a file only the user can read instead of the keychain."""
    key_file: str | None = None
    """That file (None: the app has none to offer)."""
    store: StoreKind = "jsonl"
    database_url: str = ""
    """The PostgreSQL server of ``store`` "postgres" (as saved: without its password)."""
    database_password: str = ""
    """A password typed now (kept in the keychain, never read back)."""


def settings_form(wb: Workbench) -> SettingsForm:
    """What the Settings dialog starts with (no key is ever given out)."""
    settings, models = wb.settings, wb.models
    local = settings.providers.get(LOCAL_PROVIDER)
    keys = models.keystore
    return SettingsForm(
        local_url=local.base_url if local else None,
        local_protocol=local.protocol if local else "openai-completions",
        discover_local_servers=settings.discover_local_servers,
        default_model=settings.default_model,
        send_key=settings.send_key,
        theme=settings.theme,
        approval=dict(settings.approval),
        models=tuple(models.choices()),
        has_key={p: bool(models.key_of(p)) for p in ("openai", "anthropic", "local")},
        keychain_problem=keys.problem,
        where_kept=keys.where_kept(),
        pi_sessions=settings.pi_sessions.enabled,
        pi_folder=settings.pi_sessions.folder,
        pi_default_folder=wb.listing.pi_default_folder,
        follow_branch=settings.checkpoints.follow_branch,
        shell_network=settings.shell_network,
        sandbox_problem=wb.sandbox.problem if wb.sandbox is not None else None,
        keys_in_file=keys.use_file,
        key_file=str(keys.key_file.path) if keys.key_file is not None else None,
        store=settings.store,
        database_url=settings.database_url,
    )


async def settings_form_sized(wb: Workbench) -> SettingsForm:
    """`settings_form` with the checkpoint store's size (measured off the loop)."""
    form = settings_form(wb)
    if wb.files is None:
        return form
    return replace(form, checkpoints_bytes=await wb.files.files.store.size())


async def apply_settings(wb: Workbench, form: SettingsForm) -> Changes:
    """Keys, servers and choices from the Settings dialog, in effect at once."""
    problem = server_url_problem(form.local_url or "")
    if problem is None and form.store == "postgres":
        problem = database_url_problem(form.database_url)
    if problem is not None:  # (the dialog says so first; nothing is changed)
        raise WorkbenchError(f"The settings were not saved: {problem}")
    notes: list[str] = []
    keystore = wb.models.keystore
    keystore.use_file = form.keys_in_file and keystore.key_file is not None
    wb.settings.keys_in_file = keystore.use_file
    for provider, key in form.keys.items():
        if key:
            note = await wb.models.set_key(provider, key)
            if note:
                notes.append(note)
    settings = wb.settings
    providers = dict(settings.providers)
    if form.local_url:
        providers[LOCAL_PROVIDER] = ProviderSettings(
            base_url=form.local_url, protocol=form.local_protocol
        )
    else:
        providers.pop(LOCAL_PROVIDER, None)
    settings.providers = providers
    settings.discover_local_servers = form.discover_local_servers
    settings.default_model = form.default_model
    settings.send_key = form.send_key
    settings.theme = form.theme
    settings.approval = {**settings.approval, **form.approval}
    settings.shell_network = form.shell_network
    if wb.sandbox is not None:
        wb.sandbox.network = form.shell_network
    for opened in wb.open_sessions.values():
        harness = opened.harness
        if harness is not None and harness.approval_policy is not None:
            harness.approval_policy.rules.update(settings.approval)
    notes += await apply_store_form(wb, form)
    pi = PiSessionsSettings(enabled=form.pi_sessions, folder=form.pi_folder or None)
    pi_changed = pi != settings.pi_sessions
    settings.pi_sessions = pi
    settings.checkpoints.follow_branch = form.follow_branch
    try:
        wb._save_settings(settings)
    except OSError as exc:
        notes.append(f"The settings could not be saved: {exc.strerror or exc}.")
    if pi_changed and wb.listing.make_pi is not None:
        await wb.listing.replace_pi(wb.listing.make_pi(pi))
        await wb.refresh_sessions()
    wb.notify("settings", " ".join(notes) or None)
    if form.prune_days is not None and wb.files is not None:
        freed = await wb.files.files.store.prune(form.prune_days)
        wb.notify(
            "checkpoints",
            "Removed the checkpoints older than {days} days ({size} MB freed).",
            days=form.prune_days,
            size=f"{freed / 1e6:.1f}",
        )
    return await wb.refresh_models() | wb._changed(Changes(sessions=True))


async def test_server(wb: Workbench, url: str, protocol: str, key: str | None) -> list[str]:
    """The models a server lists, before it is saved (Settings' "Test connection");
    `WorkbenchError` says why not."""
    api: ServerApi = "openai-completions"
    if protocol in ("openai-responses", "anthropic-messages"):
        api = "openai-responses" if protocol == "openai-responses" else "anthropic-messages"
    try:
        return await wb.models.test_server(url, api, key)
    except DiscoveryError as exc:
        raise WorkbenchError(str(exc)) from None
