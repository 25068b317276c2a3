"""The "Pi sessions" setting: Pi's folder by Pi's own rules, off when it does not exist.

Home and environment are always temp values here: the real home is never looked at."""

from __future__ import annotations

from pathlib import Path

from desktop_agent.config import (
    PiSessionsSettings,
    Settings,
    default_pi_sessions_dir,
    load_settings,
    pi_sessions_dir,
    save_settings,
)


def test_default_folder_follows_the_pi_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert default_pi_sessions_dir(home, {}) == home / ".pi" / "agent" / "sessions"
    env = {"PI_CODING_AGENT_DIR": "~/elsewhere/agent"}
    assert default_pi_sessions_dir(home, env) == home / "elsewhere" / "agent" / "sessions"
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "abs")}
    assert default_pi_sessions_dir(home, env) == tmp_path / "abs" / "sessions"


def test_on_by_default_but_only_when_the_folder_exists(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = Settings().pi_sessions
    assert settings.enabled and settings.folder is None
    assert pi_sessions_dir(settings, home=home, environ={}) is None
    folder = home / ".pi" / "agent" / "sessions"
    folder.mkdir(parents=True)
    assert pi_sessions_dir(settings, home=home, environ={}) == folder
    off = PiSessionsSettings(enabled=False)
    assert pi_sessions_dir(off, home=home, environ={}) is None


def test_a_chosen_folder(tmp_path: Path) -> None:
    chosen = tmp_path / "my-pi"
    chosen.mkdir()
    settings = PiSessionsSettings(folder=str(chosen))
    assert pi_sessions_dir(settings, home=tmp_path, environ={}) == chosen
    relative = PiSessionsSettings(folder="~/my-pi")
    assert pi_sessions_dir(relative, home=tmp_path, environ={}) == chosen
    missing = PiSessionsSettings(folder=str(tmp_path / "gone"))
    assert pi_sessions_dir(missing, home=tmp_path, environ={}) is None


def test_the_setting_is_saved_and_loaded(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    settings = Settings(pi_sessions=PiSessionsSettings(enabled=False, folder="/x"))
    save_settings(path, settings)
    again = load_settings(path)
    assert again.pi_sessions == PiSessionsSettings(enabled=False, folder="/x")
