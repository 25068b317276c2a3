"""Long pure-Python work on the event loop, a few milliseconds at a time.

Not on a worker thread: the GUI thread gives up the GIL at every Qt call, and a worker
running Python then makes it wait for the GIL each time (measured: 31 ms of painting took
111 ms beside a thread decoding JSON). A generator that yields now and then runs instead
in slices of at most `SLICE_S`, with a turn of the loop (painting, input) between them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Generator
from typing import TypeVar, cast

T = TypeVar("T")

SLICE_S = 0.006
"""Event-loop time a sliced job takes at a time."""


def drain(steps: Generator[None, None, T]) -> T:
    """Run a step generator to its end (no pauses); its result."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return cast(T, stop.value)


async def sliced(steps: Generator[None, None, T], slice_s: float | None = None) -> T:
    """Run a step generator on the loop, giving the loop a turn first (what the caller
    drew just before is painted before this work) and then every ``slice_s``
    (default `SLICE_S`)."""
    budget = SLICE_S if slice_s is None else slice_s
    await asyncio.sleep(0)
    deadline = time.perf_counter() + budget
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return cast(T, stop.value)
        if time.perf_counter() >= deadline:
            await asyncio.sleep(0)
            deadline = time.perf_counter() + budget
