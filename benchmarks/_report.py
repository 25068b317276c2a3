"""What every benchmark part is given and prints to: the run's `Options` and the `Report`
(each figure beside its same-run baselines and its target, PASS/FAIL), with the small
helpers the parts share (`mb`, `median`)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Options:
    seed: int
    regenerate: bool = False
    check: bool = False
    profile: bool = False
    only: str | None = None  # one part: session, pi, gui, app, map, pi-sessions, safety, mcp, ...
    huge: bool = False  # the whole-app comparison also restores the ~1 GB session
    open_runs: int = 3
    list_runs: int = 5
    appends: int = 5_000


@dataclass
class Report:
    failures: list[str] = field(default_factory=list)
    passes: list[str] = field(default_factory=list)

    def line(
        self,
        name: str,
        value: float,
        unit: str,
        *,
        baselines: Sequence[tuple[str, float]] = (),
        target: float | None = None,
        target_on_ratio: bool = False,
        digits: int = 3,
    ) -> None:
        """``name: value unit  (baseline: ..., ratio x.xx)  target: <= T  PASS/FAIL``."""
        text = f"{name}: {value:.{digits}f} {unit}"
        if baselines:
            parts = [
                f"{label} {b:.{digits}f} {unit}, ratio {value / b:.2f}" if b > 0 else label
                for label, b in baselines
            ]
            text += "  (baseline: " + "; ".join(parts) + ")"
        if target is not None:
            if target_on_ratio:
                ratio = value / baselines[0][1]
                ok = ratio <= target
                text += f"  target: ratio <= {target:g}  {'PASS' if ok else 'FAIL'}"
            else:
                ok = value <= target
                text += f"  target: <= {target:g} {unit}  {'PASS' if ok else 'FAIL'}"
            (self.passes if ok else self.failures).append(name)
        print(text, flush=True)

    @staticmethod
    def note(text: str) -> None:
        print(f"    {text}", flush=True)

    @staticmethod
    def section(text: str) -> None:
        print(f"\n== {text}", flush=True)


def mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def median(values: Sequence[float]) -> float:
    return statistics.median(values)
