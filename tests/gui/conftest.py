"""GUI test fixtures: a running qasync loop (PLATFORM.md §3 pattern C).

Tests here are synchronous pytest-qt tests; coroutines run as tasks on a qasync loop
marked as running, and tests wait with ``qtbot.waitUntil`` (never inside a coroutine).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
import qasync
from PySide6.QtWidgets import QApplication


@pytest.fixture(scope="session")
def _gui_loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """One qasync loop for all GUI tests: a second QEventLoop on the same QApplication
    stops processing its callbacks after the first one closed (seen with qasync 0.28)."""
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.events._set_running_loop(None)
    yield loop
    asyncio.events._set_running_loop(loop)
    try:
        loop.stop()
        loop.close()  # also stops the loop's worker threads
    finally:
        asyncio.events._set_running_loop(None)


@pytest.fixture
def running_qloop(
    qapp: QApplication, _gui_loop: asyncio.AbstractEventLoop
) -> Iterator[asyncio.AbstractEventLoop]:
    """The GUI loop, marked running for this test (so Qt's event processing during
    ``qtbot.waitUntil`` also runs asyncio callbacks), and unmarked afterwards so the
    plain asyncio tests of the suite can start their own loops."""
    loop = _gui_loop
    asyncio.events._set_running_loop(loop)
    asyncio.set_event_loop(loop)
    try:
        yield loop
        # Let tasks started by the test (or by closing its windows) finish.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(not t.done() for t in asyncio.all_tasks(loop)):
            qapp.processEvents()
            time.sleep(0.005)
        leaked = [repr(t) for t in asyncio.all_tasks(loop) if not t.done()]
        for task in asyncio.all_tasks(loop):
            task.cancel()
        if leaked:
            pytest.fail("asyncio tasks still running after the test:\n" + "\n".join(leaked))
    finally:
        asyncio.events._set_running_loop(None)
        asyncio.set_event_loop(None)
