"""Where the app keeps its files: platformdirs, or one folder given with ``--data-dir``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "DesktopAgent"


@dataclass(frozen=True)
class AppDirs:
    """Every folder and file the app owns (nothing is created here)."""

    data: Path
    config: Path
    sessions: Path
    trash: Path
    logs: Path
    index: Path
    tool_output: Path
    state: Path

    @property
    def settings(self) -> Path:
        """``settings.json`` in the config folder."""
        return self.config / "settings.json"

    def forbidden_roots(self) -> list[Path]:
        """Folders the file tools must refuse: the app's own data and config."""
        roots = [self.data]
        if self.config != self.data and not self.config.is_relative_to(self.data):
            roots.append(self.config)
        return roots

    def create(self) -> None:
        """Make the folders (not the files) that do not exist yet."""
        for folder in (self.data, self.config, self.sessions, self.trash, self.logs):
            folder.mkdir(parents=True, exist_ok=True)


def resolve_dirs(data_dir: Path | None) -> AppDirs:
    """The app's folders: platformdirs for ``DesktopAgent``, or everything under ``data_dir``.

    With ``data_dir`` the config lives in ``data_dir/config`` too, so a test or a portable
    install never reads or writes the user's real configuration.
    """
    if data_dir is not None:
        data = Path(data_dir).expanduser().resolve()
        config = data / "config"
    else:
        data = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
        config = Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
    return AppDirs(
        data=data,
        config=config,
        sessions=data / "sessions",
        trash=data / "trash",
        logs=data / "logs",
        index=data / "index.sqlite",
        tool_output=data / "tool-output",
        state=data / "state.json",
    )
