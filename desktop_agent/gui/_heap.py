"""The long-lived heap out of the cyclic GC's way, once the app has restored its session.

CPython's cyclic GC scans every tracked object of the oldest generation in a full
collection. After start-up that generation holds the imported modules (Qt, the SDKs,
pydantic), the window and the restored session: hundreds of thousands of objects that
live as long as the app. A full collection then took ~50-225 ms on the GUI thread,
triggered by whatever allocated last (e.g. the branch map laid out again on a click).
`gc.freeze` moves every object alive now to a permanent generation that collections skip
(CPython docs: `gc.freeze`); objects freed by reference counting are freed as before.

A frozen object in a reference cycle is never collected, though: when the app opens
another session, `renew_heap` (called once the new session is shown) gives everything
back to the collector, collects once, and freezes what is alive then, so the closed
session's objects are freed.

`freeze_when_started` freezes once more after the rest of the start-up work: the SDK
import (it starts once the restored session is settled), the common code lexers compiled
(`warm_up_lexers`: a lexer's first use in the middle of a reply stalled it) and the first
redraws. A full collection in the provider's worker thread, while a request was built,
had stalled a streamed reply 170-180 ms (benchmarks/_streamprobe.py records every
collection, in every thread). Only the app's composition root calls these (tests build
many windows per process).
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Awaitable, Callable

from desktop_agent.gui.chat._highlight import warm_up_lexers

log = logging.getLogger("desktop_agent.gui")

_active = False
"""`freeze_heap` was called (the app does; tests and tools that do not are left alone)."""


def freeze_heap(*, collector: bool = True) -> None:
    """Collect the young generations, then freeze every object alive (called after the
    restore and after the SDK warm-up). How many are frozen is logged at debug level
    only: counting walks every frozen object (`gc.get_freeze_count`, ~8 ms of a launch).

    The launcher starts the app without the collector (`desktop_agent._launch.lean_start`);
    it stays off through the first freeze (``collector=False``, before the first paint)
    until the start-up work is done (`freeze_when_started`): laying out or taking the
    branch map of a 100,000-entry session allocates 50,000 rows, and the collections
    that set off took as long again (270 ms instead of 140)."""
    global _active
    _active = True
    if gc.isenabled():
        gc.collect(1)  # young cyclic garbage is not kept forever
    # else the collector was off since the launch: "young" is the whole heap (a 60 ms
    # scan or more) for ~1,300 objects of garbage (~0.3 MB: import-time tracebacks) and
    # what start-up left; they are freed at the next `renew_heap`.
    gc.freeze()
    if collector:
        gc.enable()
    if log.isEnabledFor(logging.DEBUG):
        log.debug("%d objects frozen out of the cyclic GC", gc.get_freeze_count())


def renew_heap() -> None:
    """Another session is shown: unfreeze, collect what the closed one left (one full
    collection, part of opening a session), freeze again. A no-op unless `freeze_heap`
    was called."""
    if not _active:
        return
    gc.unfreeze()
    gc.collect()
    gc.freeze()


async def lexers_warmed() -> None:
    """Once the common code lexers are compiled (started now if they were not)."""
    await asyncio.wrap_future(warm_up_lexers())


async def freeze_when_started(*waits: Callable[[], Awaitable[object]]) -> None:
    """After the start-up work (``waits``, awaited one after the other: the window's
    SDK import, `lexers_warmed`, the session open, the first redraws; see
    `gui._app.start_up_work`): `freeze_heap` again."""
    for wait in waits:
        await wait()
    freeze_heap()
