"""Version safety of the config (issue 10 item 5): settings from a newer version are read
but never saved; the data folder is never inside the install folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from desktop_agent.config import (
    DataDirError,
    NewerSettingsError,
    Settings,
    install_folders,
    load_settings,
    resolve_dirs,
    save_settings,
    settings_from_newer,
)
from desktop_agent.utils.versions import APP_VERSION, is_newer, version_key


@pytest.mark.parametrize(
    ("newer", "older"),
    [
        ("0.2.0", "0.1.0"),
        ("0.1.1", "0.1"),
        ("1.0.0", "0.99.9"),
        ("0.2.0", "0.2.0rc1"),
        ("0.2.0rc1", "0.2.0b3"),
        ("0.2.0b1", "0.2.0a9"),
        ("0.2.0a1", "0.2.0.dev5"),
        ("10.0", "9.9"),
    ],
)
def test_versions_compare(newer: str, older: str) -> None:
    assert is_newer(newer, than=older)
    assert not is_newer(older, than=newer)


def test_equal_and_unparsable_versions_are_not_newer() -> None:
    assert version_key("0.1") == version_key("0.1.0")
    assert not is_newer(APP_VERSION)
    assert not is_newer("not a version") and not is_newer("") and not is_newer(None)


def test_saving_stamps_the_app_version(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    save_settings(path, Settings(send_key="ctrl+enter"))
    assert json.loads(path.read_text())["app_version"] == APP_VERSION
    loaded = load_settings(path)
    assert loaded.send_key == "ctrl+enter" and not settings_from_newer(loaded)
    save_settings(path, loaded)  # our own file: saved again


def test_settings_from_a_newer_version_are_read_but_never_saved(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    data = json.dumps(
        {"app_version": "99.0.0", "send_key": "ctrl+enter", "a_future_option": {"x": 1}}
    ).encode()
    path.write_bytes(data)
    settings = load_settings(path)
    assert settings.send_key == "ctrl+enter"  # read and used
    assert settings_from_newer(settings)
    settings.send_key = "enter"
    with pytest.raises(NewerSettingsError) as err:
        save_settings(path, settings)
    assert "99.0.0" in str(err.value) and APP_VERSION in str(err.value)
    assert path.read_bytes() == data  # the newer version's keys are all still there


def test_data_dir_inside_the_install_folder_is_refused(tmp_path: Path) -> None:
    install = tmp_path / "opt" / "desktop-agent"
    install.mkdir(parents=True)
    for inside in (install, install / "data", install / "_internal" / "x"):
        with pytest.raises(DataDirError) as err:
            resolve_dirs(inside, install=[install])
        assert str(install) in str(err.value) and "--data-dir" in str(err.value)
    resolve_dirs(tmp_path / "data", install=[install])  # beside it is fine
    resolve_dirs(tmp_path / "opt" / "desktop-agent-data", install=[install])  # a prefix only


def test_the_frozen_apps_folders_are_install_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = tmp_path / "app"
    (app / "_internal").mkdir(parents=True)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(app / "desktop-agent"))
    monkeypatch.setattr(sys, "_MEIPASS", str(app / "_internal"), raising=False)
    folders = install_folders()
    assert app.resolve() in folders and (app / "_internal").resolve() in folders
    with pytest.raises(DataDirError):
        resolve_dirs(app / "sessions-here")
    resolve_dirs(tmp_path / "elsewhere")


def test_the_package_folder_is_an_install_folder(tmp_path: Path) -> None:
    import desktop_agent

    package = Path(desktop_agent.__file__).resolve().parent
    assert package in install_folders()
    with pytest.raises(DataDirError):
        resolve_dirs(package / "data")


def test_a_symlink_into_the_install_folder_is_refused(tmp_path: Path) -> None:
    install = tmp_path / "install"
    install.mkdir()
    link = tmp_path / "data-link"
    link.symlink_to(install, target_is_directory=True)
    with pytest.raises(DataDirError):
        resolve_dirs(link, install=[install.resolve()])
