"""App state: round trip, drafts per branch, a bad file never stops the app."""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path

import pytest

from desktop_agent.config import AppState, draft_key, load_state, save_state


def test_round_trip_and_draft_keys(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    assert load_state(path) == AppState()
    geometry = base64.b64encode(b"\x01\xd9\xd0\xcb\x00\x03").decode()
    state = AppState(
        last_workspace="/home/me/project",
        last_session_path="/data/sessions/--x--/a.jsonl",
        drafts={draft_key("/data/s.jsonl", "e1"): "half a thought ü"},
        window_geometry=geometry,
    )
    save_state(path, state)
    loaded = load_state(path)
    assert loaded == state
    assert loaded.drafts["/data/s.jsonl#e1"] == "half a thought ü"
    assert draft_key("/data/s.jsonl", None) == "/data/s.jsonl#"
    assert base64.b64decode(loaded.window_geometry or "") == b"\x01\xd9\xd0\xcb\x00\x03"


def test_corrupt_state_keeps_good_keys(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"last_workspace": "/w", "drafts": {"a#b": 5, "c#d": "ok"}}')
    state = load_state(path)
    assert state.last_workspace == "/w"
    assert state.drafts == {"c#d": "ok"}
    assert len(list(tmp_path.glob("state.json.BAK-*"))) == 1


def test_an_older_file_s_tree_visible_is_read_as_map_visible(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The branch map's visibility was saved as ``tree_visible``: a state file from then
    keeps the pane hidden, with no "unknown keys" warning and no backup copy, and is
    written back under the new name."""
    path = tmp_path / "state.json"
    path.write_text('{"last_workspace": "/w", "tree_visible": false}')
    with caplog.at_level(logging.WARNING):
        state = load_state(path)
    assert state.map_visible is False and state.last_workspace == "/w"
    assert caplog.records == []
    assert list(tmp_path.glob("state.json.BAK-*")) == []
    save_state(path, state)
    saved = json.loads(path.read_text())
    assert saved["map_visible"] is False and "tree_visible" not in saved
    assert load_state(path).map_visible is False
    # both names (a file written by an older and a newer version): the new one wins
    path.write_text('{"tree_visible": false, "map_visible": true}')
    assert load_state(path).map_visible is True
    assert list(tmp_path.glob("state.json.BAK-*")) == []
