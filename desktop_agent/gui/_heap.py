"""The long-lived heap out of the cyclic GC's way, once the app has restored its session.

CPython's cyclic GC scans every tracked object of the oldest generation in a full
collection. After start-up that generation holds the imported modules (Qt, the SDKs,
pydantic), the window and the restored session: hundreds of thousands of objects that
live as long as the app. A full collection then took ~50-225 ms on the GUI thread,
triggered by whatever allocated last (e.g. the branch map laid out again on a click).
`gc.freeze` moves every object alive now to a permanent generation that collections skip
(CPython docs: `gc.freeze`); objects freed by reference counting are freed as before.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger("desktop_agent.gui")


def freeze_heap() -> int:
    """Collect the young generations, then freeze every object alive; returns how many
    objects are frozen in all (called after the restore and after the SDK warm-up)."""
    gc.collect(1)  # young cyclic garbage is not kept forever
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.debug("%d objects frozen out of the cyclic GC", frozen)
    return frozen
