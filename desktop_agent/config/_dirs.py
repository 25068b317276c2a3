"""Where the app keeps its files: platformdirs, or one folder given with ``--data-dir``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "DesktopAgent"


class DataDirError(ValueError):
    """The data or config folder would be inside the app's install folder, which an
    update or an uninstall replaces: the app refuses to start with it."""


def install_folders() -> list[Path]:
    """The folders an update or uninstall replaces: the frozen app's executable folder
    and bundle (``sys._MEIPASS``), and the installed ``desktop_agent`` package itself."""
    roots: list[Path] = []
    if getattr(sys, "frozen", False):
        roots.append(Path(sys.executable).resolve().parent)
        bundle = getattr(sys, "_MEIPASS", None)
        if isinstance(bundle, str):
            roots.append(Path(bundle).resolve())
    roots.append(Path(__file__).resolve().parents[1])
    return list(dict.fromkeys(roots))


def check_outside_install(folders: Sequence[Path], install: Sequence[Path]) -> None:
    """Raise `DataDirError` when one of ``folders`` is (inside) an install folder."""
    for folder in folders:
        resolved = folder.resolve()
        for root in install:
            if resolved == root or resolved.is_relative_to(root):
                raise DataDirError(
                    f"The data folder {folder} is inside the app's install folder {root}, "
                    "which an update or uninstall replaces (and your sessions with it). "
                    "Start Desktop Agent with --data-dir set to a folder elsewhere, or "
                    "without --data-dir to use the usual one."
                )


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

    @property
    def key_file(self) -> Path:
        """``keys.json`` in the config folder: keys kept without a keychain (mode 0600)."""
        return self.config / "keys.json"

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


def resolve_dirs(data_dir: Path | None, *, install: Sequence[Path] | None = None) -> AppDirs:
    """The app's folders: platformdirs for ``DesktopAgent``, or everything under ``data_dir``.

    With ``data_dir`` the config lives in ``data_dir/config`` too, so a test or a portable
    install never reads or writes the user's real configuration. Raises `DataDirError`
    when the data or config folder is inside the install folder (``install``, by default
    `install_folders`).
    """
    if data_dir is not None:
        data = Path(data_dir).expanduser().resolve()
        config = data / "config"
    else:
        data = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
        config = Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
    check_outside_install((data, config), install_folders() if install is None else install)
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
