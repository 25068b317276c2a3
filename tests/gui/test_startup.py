"""Start-up through the real `MainWindow` (issue 12, whole app): the SDK warm-up (seconds
of imports on a thread) begins only once the restored session is settled, so it never
competes with the settling of a long session for the GIL."""

from __future__ import annotations

import asyncio
import linecache
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from desktop_agent.workbench import INLINE_ENTRIES, Workbench
from tests.gui.test_flows_long import TURNS, long_session
from tests.helpers.provider_server import ProviderServer
from tests.helpers.window import close, open_window


def test_the_sdk_warm_up_starts_after_the_restored_session_is_settled(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = tmp_path / "data"
    long_session(data, workspace)  # usage counted and the map laid out off the loop
    assert 2 * TURNS > INLINE_ENTRIES
    seen: list[tuple[int, bool, int]] = []
    real = Workbench.warm_up

    async def recording(wb: Workbench) -> None:
        pending = [t for t in wb._tasks if not t.done()]
        seen.append((len(pending), wb.opening is None, wb.usage.tokens))
        linecache.getlines(__file__)  # a source read (as PySide6's import hook does)
        await real(wb)

    monkeypatch.setattr(Workbench, "warm_up", recording)
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    # The SDK imports take seconds in a process that has not imported them yet.
    qtbot.waitUntil(lambda: window.warm_up is not None and window.warm_up.done(), timeout=60_000)
    # Nothing of the workbench was still running; the whole branch's usage was counted.
    assert seen == [(0, True, 15 * TURNS)]
    assert __file__ not in linecache.cache, "the sources read meanwhile are dropped"
    close(qtbot, window)
