"""App state: round trip, drafts per branch, a bad file never stops the app."""

from __future__ import annotations

import base64
from pathlib import Path

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
