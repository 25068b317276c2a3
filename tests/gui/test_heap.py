"""`freeze_heap`: what is alive after the restore leaves the cyclic GC's full scans."""

from __future__ import annotations

import gc

from desktop_agent.gui import _heap, freeze_heap
from desktop_agent.gui._heap import renew_heap


def test_freeze_heap_moves_live_objects_out_of_the_collections() -> None:
    keep = [[i] for i in range(1_000)]  # tracked containers, alive
    try:
        freeze_heap()
        assert gc.get_freeze_count() >= len(keep)
        collected = {id(o) for gen in (0, 1, 2) for o in gc.get_objects(gen)}
        assert not any(id(x) in collected for x in keep)  # no collection looks at them
    finally:
        gc.unfreeze()  # the rest of the suite collects as usual
        _heap._active = False
    assert gc.get_freeze_count() == 0


def test_renew_heap_frees_cycles_that_were_frozen() -> None:
    import weakref

    class Node:
        def __init__(self) -> None:
            self.me = self  # a cycle: only the cyclic GC frees it

    node = Node()
    gone = weakref.ref(node)
    try:
        freeze_heap()
        del node  # garbage now, but frozen: no collection looks at it
        gc.collect()
        assert gone() is not None
        renew_heap()  # another session is shown
        assert gone() is None
        assert gc.get_freeze_count() > 0  # what is alive is frozen again
    finally:
        gc.unfreeze()
        _heap._active = False
