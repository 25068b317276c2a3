"""``--script FILE``: the window carries out a file of commands, one JSON answer each."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.provider_server import ProviderServer, Reply

pytestmark = pytest.mark.slow  # the real app, in processes of its own


def test_a_script_file_sends_through_the_window_reports_each_step_and_quits(
    tmp_path: Path,
) -> None:
    data, workspace = tmp_path / "data", tmp_path / "project"
    (data / "config").mkdir(parents=True)
    workspace.mkdir()
    script = tmp_path / "steps.txt"
    script.write_text(
        "# a comment, then an empty line\n\n"
        f"new {workspace}\n"
        "send Hello there\n"
        "wait Hi, from the script's model. 5\n"
        "wait Never said 0.2\n"
        "frobnicate\n"
        "state\n"
        "quit\n"
    )
    with ProviderServer() as provider:
        (data / "config" / "settings.json").write_text(
            json.dumps(
                {
                    "providers": {"local": {"base_url": f"{provider.url}/v1"}},
                    "discover_local_servers": False,
                }
            )
        )
        provider.script(Reply(text="Hi, from the script's model."))
        done = subprocess.run(
            [sys.executable, "-m", "desktop_agent", "--data-dir", str(data), "--script", script],
            capture_output=True,
            text=True,
            timeout=90,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
            check=False,
        )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    events = [a["event"] for a in answers]
    assert events == ["ready", "opened", "sent", "seen", "timeout", "error", "state", "quitting"]
    assert answers[0]["ref"] is None  # an empty data folder: nothing to restore
    sent = answers[2]
    assert sent["text"] == "Hello there" and sent["reply"] == "Hi, from the script's model."
    assert sent["saved"] and sent["save"]["pending"] == 0
    assert answers[3]["entry_at"] <= answers[3]["at"]
    assert "frobnicate" in answers[5]["error"]
    state = answers[6]
    assert state["messages_shown"] == 2 and state["read_only"] is False
    assert state["ref"] == answers[1]["ref"] and state["sessions"] == 1
    assert all(a["at"] <= b["at"] for a, b in itertools.pairwise(answers))
    (saved,) = (data / "sessions").rglob("*.jsonl")
    assert "Hello there" in saved.read_text()
