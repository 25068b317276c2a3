"""`WorkbenchLimits`: the workbench's sizes and waits, passed to its constructor (like
httpx's ``Limits``), so tests and benchmarks change them without patching modules."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WorkbenchLimits:
    index_wait_s: float = 1.0
    """How long start-up waits for the index of a sessions folder (ours, Pi's) to come in
    line with the files before the window is made; a first index of thousands of
    sessions goes on in the background and the list fills when it is done."""
    map_min_rows: int = 5_000
    """Maps with fewer rows are laid out in a few milliseconds: no layout is kept."""
    maps_kept: int = 32
    """How many big sessions' map layouts are kept between launches."""
    inline_entries: int = 2_000
    """Branches up to this many entries have their usage counted at once on open;
    longer ones on the loop in slices after the first paint."""
    draft_save_delay_s: float = 2.0
    """The app state is saved this long after the last keystroke of a draft."""
