"""App folders: --data-dir keeps everything (config too) under one folder."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

import desktop_agent.config as config
from desktop_agent.config import AppDirs, resolve_dirs


def test_data_dir_holds_every_folder_and_file(tmp_path: Path) -> None:
    dirs = resolve_dirs(tmp_path / "d")
    data = (tmp_path / "d").resolve()
    assert dirs == AppDirs(
        data=data,
        config=data / "config",
        sessions=data / "sessions",
        trash=data / "trash",
        logs=data / "logs",
        index=data / "index.sqlite",
        tool_output=data / "tool-output",
        state=data / "state.json",
    )
    assert dirs.settings == data / "config" / "settings.json"
    assert dirs.forbidden_roots() == [data]
    assert not data.exists(), "resolving creates nothing"
    dirs.create()
    assert dirs.sessions.is_dir() and dirs.config.is_dir() and dirs.logs.is_dir()


def test_default_dirs_come_from_platformdirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Point platformdirs at tmp_path so nothing real is even looked at.
    monkeypatch.setattr(
        platformdirs, "user_data_dir", lambda name, appauthor: str(tmp_path / "data" / name)
    )
    monkeypatch.setattr(
        platformdirs, "user_config_dir", lambda name, appauthor: str(tmp_path / "conf" / name)
    )
    dirs = resolve_dirs(None)
    assert dirs.data == tmp_path / "data" / "DesktopAgent"
    assert dirs.config == tmp_path / "conf" / "DesktopAgent"
    assert dirs.sessions == dirs.data / "sessions"
    assert dirs.forbidden_roots() == [dirs.data, dirs.config]


def test_public_names_are_exported() -> None:
    public = {n for n in vars(config) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(config, n)).__name__ == "module"}
    assert set(config.__all__) == public - modules
