"""`freeze_heap`: what is alive after the restore leaves the cyclic GC's full scans."""

from __future__ import annotations

import gc

from desktop_agent.gui import freeze_heap


def test_freeze_heap_moves_live_objects_out_of_the_collections() -> None:
    keep = [[i] for i in range(1_000)]  # tracked containers, alive
    try:
        frozen = freeze_heap()
        assert frozen == gc.get_freeze_count() >= len(keep)
        collected = {id(o) for gen in (0, 1, 2) for o in gc.get_objects(gen)}
        assert not any(id(x) in collected for x in keep)  # no collection looks at them
    finally:
        gc.unfreeze()  # the rest of the suite collects as usual
    assert gc.get_freeze_count() == 0
