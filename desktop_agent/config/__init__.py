"""Configuration: app folders, settings, app state and API keys (no Qt).

See ARCHITECTURE.md §1, §4 and §6.
"""

from desktop_agent.config._database import (
    DATABASE_KEY,
    DATABASE_PASSWORD_ENV,
    database_url_problem,
    split_password,
)
from desktop_agent.config._dirs import (
    APP_NAME,
    AppDirs,
    DataDirError,
    install_folders,
    resolve_dirs,
)
from desktop_agent.config._environ import make_undumpable
from desktop_agent.config._keyfile import KEY_FILE_NAME, KeyFile, KeyFileError
from desktop_agent.config._pi import (
    PI_AGENT_DIR_ENV,
    PiSessionsSettings,
    default_pi_agent_dir,
    default_pi_sessions_dir,
    pi_sessions_dir,
)
from desktop_agent.config._secrets import (
    ENV_VARS,
    SERVICE,
    KeySource,
    KeyStore,
    KeyStoreError,
    backend_problem,
    is_local_url,
    platform_keyring,
)
from desktop_agent.config._server_url import normalize_server_url, server_url_problem
from desktop_agent.config._settings import (
    CUSTOM_MODEL_FIELDS,
    ApprovalRule,
    CheckpointSettings,
    FollowBranch,
    NewerSettingsError,
    ProviderSettings,
    RestoreMode,
    SendKey,
    ServerApi,
    Settings,
    StoreKind,
    ThemeMode,
    load_settings,
    save_settings,
    settings_from_newer,
)
from desktop_agent.config._state import (
    AppState,
    BranchUsage,
    draft_key,
    load_state,
    save_state,
)
from desktop_agent.utils.atomic import atomic_write

__all__ = [
    "APP_NAME",
    "CUSTOM_MODEL_FIELDS",
    "DATABASE_KEY",
    "DATABASE_PASSWORD_ENV",
    "ENV_VARS",
    "KEY_FILE_NAME",
    "PI_AGENT_DIR_ENV",
    "SERVICE",
    "AppDirs",
    "AppState",
    "ApprovalRule",
    "BranchUsage",
    "CheckpointSettings",
    "DataDirError",
    "FollowBranch",
    "KeyFile",
    "KeyFileError",
    "KeySource",
    "KeyStore",
    "KeyStoreError",
    "NewerSettingsError",
    "PiSessionsSettings",
    "ProviderSettings",
    "RestoreMode",
    "SendKey",
    "ServerApi",
    "Settings",
    "StoreKind",
    "ThemeMode",
    "atomic_write",
    "backend_problem",
    "database_url_problem",
    "default_pi_agent_dir",
    "default_pi_sessions_dir",
    "draft_key",
    "install_folders",
    "is_local_url",
    "load_settings",
    "load_state",
    "make_undumpable",
    "normalize_server_url",
    "pi_sessions_dir",
    "platform_keyring",
    "resolve_dirs",
    "save_settings",
    "save_state",
    "server_url_problem",
    "settings_from_newer",
    "split_password",
]
