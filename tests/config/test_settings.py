"""Settings: defaults, round trip, bad files backed up with only the bad keys reset."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from desktop_agent.config import ProviderSettings, Settings, load_settings, save_settings

SECRET = "sk-test-0123456789abcdefghijklmnop"


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".BAK-*"))


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "settings.json")
    assert settings == Settings()
    assert settings.approval == {"bash": "ask", "write": "ask", "edit": "ask"}
    assert settings.send_key == "enter"
    assert settings.restore == "last"
    assert settings.default_thinking_level == "medium"
    assert settings.fsync_every_entry is False
    assert settings.discover_local_servers is True
    assert not list(tmp_path.iterdir()), "loading never creates files"


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "settings.json"
    settings = Settings(
        providers={"openai": ProviderSettings(base_url="https://example.test/v1", enabled=False)},
        custom_models=[
            {
                "provider": "ollama",
                "id": "qwen3:8b",
                "base_url": "http://localhost:11434/v1/",
                "context_window": 40960,
                "input": ["text", "image"],
            }
        ],
        default_model="ollama/qwen3:8b",
        default_thinking_level="high",
        approval={"bash": "deny", "write": "allow"},
        send_key="ctrl+enter",
        restore="new",
        fsync_every_entry=True,
        discover_local_servers=False,
    )
    save_settings(path, settings)
    loaded = load_settings(path)
    assert loaded == settings
    assert loaded.custom_models[0] == {
        "provider": "ollama",
        "id": "qwen3:8b",
        "name": "qwen3:8b",
        "base_url": "http://localhost:11434/v1",
        "context_window": 40960,
        "reasoning": False,
        "input": ["text", "image"],
    }
    assert not backups(path)


@pytest.mark.parametrize("content", [b"{not json", b"", b"[1, 2]", b"\xff\xfe", b"null"])
def test_corrupt_file_is_backed_up_and_defaults_used(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="desktop_agent.config"):
        assert load_settings(path) == Settings()
    [bak] = backups(path)
    assert bak.read_bytes() == content
    assert path.read_bytes() == content, "the original is left alone until the next save"
    assert "using defaults" in caplog.text


def test_invalid_keys_reset_valid_keys_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    raw: dict[str, Any] = {
        "send_key": "shift+enter",  # invalid
        "restore": "new",  # valid
        "default_thinking_level": "extreme",  # invalid
        "default_model": "no-slash",  # invalid
        "fsync_every_entry": True,  # valid
        "approval": {"bash": "allow", "write": "sometimes"},  # one bad value
        "providers": {
            "openai": {"base_url": "https://x.test/v1", "enabled": True},
            "anthropic": {"enabled": "maybe"},  # bad provider entry
            "local": "not an object",
        },
        "custom_models": [
            {"provider": "a", "id": "m1", "base_url": "http://localhost:1/v1"},
            {"provider": "b", "id": "", "base_url": "http://x"},  # bad: empty id
            "junk",
            {"provider": "c", "id": "m3", "base_url": "http://x", "max_tokens": -1},
            {"provider": "d", "id": "m4", "base_url": "http://x"},
        ],
        "future_option": 42,  # unknown
    }
    path.write_text(json.dumps(raw))
    with caplog.at_level(logging.WARNING, logger="desktop_agent.config"):
        settings = load_settings(path)
    assert settings.send_key == "enter"
    assert settings.restore == "new"
    assert settings.default_thinking_level == "medium"
    assert settings.default_model is None
    assert settings.fsync_every_entry is True
    assert settings.approval == {"bash": "allow"}
    assert settings.providers == {"openai": ProviderSettings(base_url="https://x.test/v1")}
    assert [m["id"] for m in settings.custom_models] == ["m1", "m4"]
    [bak] = backups(path)
    assert json.loads(bak.read_text()) == raw
    for key in ("send_key", "future_option", "approval.write", "providers.anthropic"):
        assert key in caplog.text


def test_unknown_keys_only_warn_and_back_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"restore": "new", "colour_scheme": "dark"}))
    with caplog.at_level(logging.WARNING, logger="desktop_agent.config"):
        assert load_settings(path) == Settings(restore="new")
    assert "colour_scheme" in caplog.text
    assert len(backups(path)) == 1


def test_theme_is_system_light_or_dark(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    assert Settings().theme == "system"
    path.write_text(json.dumps({"theme": "dark"}))
    assert load_settings(path).theme == "dark"
    path.write_text(json.dumps({"theme": "purple", "restore": "new"}))
    loaded = load_settings(path)
    assert loaded.theme == "system" and loaded.restore == "new"  # only the bad key resets


def test_two_bad_loads_make_two_backups(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b"{")
    load_settings(path)
    load_settings(path)
    assert len(backups(path)) == 2


def test_unreadable_path_gives_defaults(tmp_path: Path) -> None:
    (tmp_path / "settings.json").mkdir()
    assert load_settings(tmp_path / "settings.json") == Settings()


def test_assignment_is_validated() -> None:
    settings = Settings()
    with pytest.raises(ValidationError):
        settings.send_key = "space"  # type: ignore[assignment]
    with pytest.raises(ValidationError):
        settings.default_thinking_level = "max"


def test_settings_never_hold_secrets(tmp_path: Path) -> None:
    """No field is meant for a key, and a key smuggled into the file is not kept or re-saved."""
    fields = set(Settings.model_fields) | set(ProviderSettings.model_fields)
    assert not {
        f
        for f in fields
        if any(w in f for w in ("api", "secret", "token", "password", "credential"))
    }
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "api_key": SECRET,
                "providers": {"openai": {"api_key": SECRET, "enabled": True}},
                "custom_models": [
                    {
                        "provider": "p",
                        "id": "m",
                        "base_url": "http://x/v1",
                        "api_key": SECRET,
                        "headers": {"Authorization": f"Bearer {SECRET}"},
                    }
                ],
            }
        )
    )
    settings = load_settings(path)
    assert SECRET not in repr(settings)
    assert SECRET not in settings.model_dump_json()
    save_settings(path, settings)
    assert SECRET not in path.read_text()
    assert settings.custom_models[0]["id"] == "m"
