"""Figures the reliability tests report, printed in one summary at the end of the run.

A test calls ``add("kills", 1)`` / ``add("entries lost", 0)``; `tests/conftest.py` prints
every figure recorded in the run under "reliability summary" (RELIABILITY.md §8). Names are
plain words so the summary reads as a sentence list; a figure recorded with 0 is still
printed (a "must be 0" figure must show that it was measured).
"""

from __future__ import annotations

_FIGURES: dict[str, int] = {}


def add(name: str, value: int = 1) -> None:
    """Add ``value`` to the figure ``name`` (created at 0)."""
    _FIGURES[name] = _FIGURES.get(name, 0) + value


def figures() -> dict[str, int]:
    """Every figure recorded so far in this process, in the order first recorded."""
    return dict(_FIGURES)
