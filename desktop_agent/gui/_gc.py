"""Keep the start-up heap out of the cyclic garbage collector's full passes.

A full (generation 2) collection walks every tracked object: after start-up that is the
imported SDKs, pydantic's schemas, Qt's wrappers and the restored session, a few hundred
thousand objects that live as long as the app. One such pass took 170-180 ms, and it
runs in whichever thread allocates at that moment (often the provider's worker while a
request is built), holding the GIL, so the window froze in 2 of 10 streamed replies
(benchmarks/_streamprobe.py records every collection, in every thread).

`freeze_when_started` calls `gc.freeze()` once the window is shown, the session restored,
the SDKs imported, the common code lexers compiled (`warm_up_lexers`: a lexer's first use
in the middle of a reply stalled it too) and the first redraws done: what is alive then
moves to the permanent generation, and later full passes walk only what was allocated
since. Objects that die
are still freed by their reference counts; what this gives up is collecting reference
cycles among the frozen objects, i.e. garbage cycles of the first session if it is
closed (sessions, entries and chat rows hold no cycles by design), a bounded, one-time
cost. Only the app's composition root calls it (tests build many windows per process).
"""

from __future__ import annotations

import asyncio
import gc
from typing import TYPE_CHECKING

from desktop_agent.gui.chat._highlight import warm_up_lexers

if TYPE_CHECKING:
    from desktop_agent.gui._main_window import MainWindow


async def freeze_when_started(window: MainWindow) -> int:
    """After the start-up work of ``window`` (the SDK import, the common code lexers
    compiled, the session open, the first redraws): `gc.freeze()`; returns how many
    objects were frozen (`gc.get_freeze_count`)."""
    await window.warmed_up()  # (it starts once the restored session is settled)
    await asyncio.wrap_future(warm_up_lexers())
    await window.wb.opened()
    await window.settle_tasks(but_warm_up=True)
    gc.freeze()
    return gc.get_freeze_count()
