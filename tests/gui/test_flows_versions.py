"""Files from a newer Desktop Agent through the real `MainWindow` (issue 10 item 5): the
window says so in its notice bar, and nothing is rewritten."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pytestqt.qtbot import QtBot

from desktop_agent.session import Session
from desktop_agent.utils.versions import APP_VERSION
from tests.helpers.provider_server import ProviderServer
from tests.helpers.window import close, open_window, run, settle
from tests.helpers.workbench import answer, make_workbench, seed, user

NEWER = "99.2.0"


def test_a_session_from_a_newer_version_shows_a_notice_and_is_not_rewritten(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"

    async def build(s: Session) -> None:
        await s.append_message(user("question from the future"))
        await s.append_message(answer("answer from the future"))

    path = Path(seed(data, workspace, build))
    lines = path.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    header["metadata"]["desktopAgent"]["version"] = NEWER
    lines[0] = json.dumps(header, separators=(",", ":")).encode()
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()
    wb = make_workbench(data, provider.model("anthropic-messages"))
    window = open_window(qtbot, data, [], workbench=wb, restore=False)
    run(qtbot, window.open_session(str(path)))
    settle(qtbot, window)
    notes = window.notices.texts()
    assert any(NEWER in t and APP_VERSION in t and "Read-only" in t for t in notes), notes
    assert window.notices.isVisible()
    assert window.status.save.text() == "Read-only"
    assert window.chat.item_count() == 2
    close(qtbot, window)
    assert path.read_bytes() == before


def test_settings_from_a_newer_version_are_used_with_a_notice_and_not_saved(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
) -> None:
    data = tmp_path / "data"
    settings_file = data / "config" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    model = provider.model("anthropic-messages")
    raw = json.dumps(
        {
            "app_version": NEWER,
            "default_model": model.key,
            "send_key": "ctrl+enter",
            "discover_local_servers": False,
            "approval": {"bash": "allow", "write": "allow", "edit": "allow"},
            "theme": "dark",
        }
    ).encode()
    settings_file.write_bytes(raw)
    window = open_window(qtbot, data, model)
    assert window.wb.settings.send_key == "ctrl+enter"  # read and used
    notes = window.notices.texts()
    assert any("Settings were saved by Desktop Agent " + NEWER in t for t in notes), notes
    close(qtbot, window)
    assert settings_file.read_bytes() == raw
