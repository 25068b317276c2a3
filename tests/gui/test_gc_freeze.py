"""After start-up the app freezes its heap for the cyclic GC, and the common code lexers
are compiled before that, so a reply's first Python block loads no lexer (gui/_heap.py)."""

from __future__ import annotations

import asyncio
import gc
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

import desktop_agent.gui._heap as gc_module
from desktop_agent.gui import MainWindow
from desktop_agent.gui._app import start_up_work
from desktop_agent.gui.chat import _highlight as hl
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import (
    ask,
    close,
    new_window,
    run,
    settle,
)

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def test_the_collector_waits_for_the_start_up_work_without_a_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The launch runs without the collector (`_launch.lean_start`): the freeze before
    the first paint leaves it off and does not scan the whole heap as "young"; the one
    after the start-up work turns it on; later ones collect the young generations."""
    calls: list[str] = []
    monkeypatch.setattr(gc_module, "_active", False)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "collect", lambda generation=2: calls.append(f"collect {generation}"))
    gc.disable()
    try:
        gc_module.freeze_heap(collector=False)
        assert not gc.isenabled() and calls == ["freeze"]
        gc_module.freeze_heap()
        assert gc.isenabled() and calls == ["freeze", "freeze"]
        gc_module.freeze_heap()
        assert calls == ["freeze", "freeze", "collect 1", "freeze"]
    finally:
        gc.enable()


def test_start_up_compiles_the_common_lexers_then_freezes(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window: MainWindow = new_window(qtbot, tmp_path, provider, store, workspace)
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.wb.session is not None)
    settle(qtbot, window)
    monkeypatch.setattr(hl, "_LEXERS", {})  # as in a new process: no lexer loaded yet
    frozen: list[dict[str, Any]] = []
    monkeypatch.setattr(gc_module, "_active", False)  # put back: no renewal in later tests
    monkeypatch.setattr(  # the suite's heap stays as it is; record what the app would do
        gc,
        "freeze",
        lambda: frozen.append(
            {
                "warm_up_done": window.warm_up is not None and window.warm_up.done(),
                "lexers": {k for k, v in hl._LEXERS.items() if v is not None},
            }
        ),
    )
    run(qtbot, gc_module.freeze_when_started(*start_up_work(window)))
    assert len(frozen) == 1
    assert frozen[0]["warm_up_done"]  # after the SDK import, not competing with it
    assert set(hl.COMMON_LANGUAGES) <= frozen[0]["lexers"]

    # A reply with a Python block now loads no lexer while it streams.
    loads: list[str] = []
    lexers = sys.modules["pygments.lexers"]
    real = lexers.get_lexer_by_name

    def counting(name: str, **options: Any) -> Any:
        loads.append(name)
        return real(name, **options)

    monkeypatch.setattr(lexers, "get_lexer_by_name", counting)
    reply = "Like this:\n\n```python\nimport os\nprint(os.getcwd())\n```\n\nDone.\n"
    ask(
        qtbot,
        window,
        provider,
        "Show me the working folder",
        Reply(text=[reply[i : i + 8] for i in range(0, len(reply), 8)]),
    )
    assert loads == []
    close(qtbot, window)
