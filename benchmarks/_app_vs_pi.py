"""The whole app against Pi 0.74.2, on the same files, in the same run (issue 12, Acceptance).

For each Pi-format session (the generated 10 MB and 100 MB ones, the ~120 MB one written
through Pi's own API that issue 12 names, and the ~1 GB one with ``--huge``), a data dir
holding only that session is restored by the real app: ``python -m desktop_agent
--data-dir D --smoke``, timed from the spawn to the line it prints (Qt start-up, imports
and the first paint included), on

- the first launch (no entry index, no state: the file was never seen),
- the second launch (the file unchanged since the first),
- a launch after another process (Pi, through its own API) appended 1,000 entries,

each beside Pi's own open + ``buildContext`` of the same file (`benchmarks/pi_probe.mjs`,
timed inside Node: Node's start-up is not counted, which favours Pi). Both sides are the
median of `ROUNDS` runs (one for the 1 GB file): a launch here moves by 0.1-0.3 s from
run to run, and one run of each side made the ratios move by as much. The launch after an
append is measured in `ROUNDS` rounds of (Pi appends 1,000 entries, Pi opens the grown
file, the app is launched), each round growing the file again. Peak RSS of the app
with the 100 MB session restored is compared with 1.5x the file size plus Qt's own: the
peak RSS of the same app on an empty data dir, measured in the same run.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from benchmarks._dataset import DataSet
from benchmarks._gui import child_env, warm_bytecode
from benchmarks._vs_pi import APPENDED, ProbeError, huge, ours_append, pi, pi_written

FIRST_TARGET = 1.5
SECOND_TARGET = 0.6
APPENDED_TARGET = 0.7
RSS_FILE_FACTOR = 1.5
SMOKE_TIMEOUT_S = 1800.0
ROUNDS = 3
SECOND_ROUNDS = 10
OWN_ROUNDS = 5
OWN_TARGET = {"10 MB": 0.15, "100 MB": 0.4}
"""The session's own cost (second launch minus an empty launch), by the case's size."""

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Launch:
    to_line_s: float
    """Spawn to the ``--smoke`` JSON line."""
    wall_s: float
    """Spawn to exit."""
    peak_rss: int
    """Peak resident set of the app's process, bytes."""
    payload: dict[str, Any]


def smoke(data_dir: str, env: dict[str, str]) -> Launch:
    """One ``--smoke`` launch, timed to its JSON line; peak RSS from the child's rusage."""
    import json

    cmd = [sys.executable, "-m", "desktop_agent", "--data-dir", data_dir, "--smoke"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    line_at: float | None = None
    payload: dict[str, Any] = {}
    for line in proc.stdout:
        if line.startswith("{") and line_at is None:
            line_at = time.perf_counter()
            payload = json.loads(line)
    stderr = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 or line_at is None:
        raise RuntimeError(f"--smoke failed ({proc.returncode}): {stderr[-2000:]}")
    return Launch(line_at - start, wall, usage.ru_maxrss * 1024, payload)


def _median(launches: list[Launch]) -> Launch:
    """The launch of median time to the line (the upper one of an even number)."""
    return sorted(launches, key=lambda x: x.to_line_s)[len(launches) // 2]


def _data_dir(root: str, session: str) -> tuple[str, str]:
    """A fresh data dir holding only ``session`` (copied); returns (data dir, its copy)."""
    shutil.rmtree(root, ignore_errors=True)
    folder = os.path.join(root, "sessions", os.path.basename(os.path.dirname(session)))
    os.makedirs(folder)
    return root, shutil.copy(session, folder)


def _mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


def bench_app_vs_pi(
    data: DataSet, report: Any, *, out_dir: str, seed: int, with_huge: bool
) -> None:
    from benchmarks._vs_pi import pi_node

    report.section(
        "whole app against Pi 0.74.2: spawn to the `--smoke` line (offscreen), restoring a "
        "Pi-format session, beside Pi's open + buildContext of the same file"
    )
    try:
        node = pi_node()
    except Exception as exc:  # noqa: BLE001 - reported as a failed figure, not a crash
        report.note(f"Pi could not be run: {exc}")
        report.failures.append("Pi 0.74.2 available")
        return
    env = child_env()
    warm_bytecode(env)
    messages = os.path.join(data.root, "append-messages.json")
    scratch = tempfile.mkdtemp(prefix="desktop-agent-app-vs-pi-", dir=out_dir)
    try:
        empty = [smoke(os.path.join(scratch, f"empty-{i}"), env) for i in range(3)]
        qt_own = max(e.peak_rss for e in empty)
        empty_s = statistics.median(e.to_line_s for e in empty)
        report.line("baseline: the app on an empty data dir, spawn to the line", empty_s, "s")
        report.line(
            "baseline: peak RSS of the app on an empty data dir", qt_own / 1e6, "MB", digits=0
        )
        # The acceptance names the Pi-written file (long branches: ~58% of it is the
        # current branch); the generated 100 MB one (compacted, short context) is kept,
        # labelled, beside it.
        cases = [
            ("10 MB (generated)", data.medium.path, True),
            ("100 MB (generated)", data.big.path, True),
            ("100 MB (written by Pi)", pi_written(node, data, out_dir), True),
        ]
        empty_dir = os.path.join(scratch, "empty-paired")
        if with_huge:
            cases.append(("1 GB", huge(out_dir, seed), True))
        else:
            report.note("the ~1 GB case runs with `--huge` (minutes)")
        for name, source, memory in cases:
            _case(node, name, source, scratch, env, messages, report, memory, qt_own, empty_dir)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _case(
    node: str,
    name: str,
    source: str,
    scratch: str,
    env: dict[str, str],
    messages: str,
    report: Any,
    memory: bool,
    qt_own: int,
    empty_dir: str,
) -> None:
    size = os.path.getsize(source)
    report.note(f"-- {name} session ({_mb(size)}, {os.path.basename(source)})")
    data_dir, path = _data_dir(os.path.join(scratch, "data"), source)
    rounds = 1 if size > 600_000_000 else ROUNDS
    pi_s: float | None = None
    pi_process: float | None = None
    try:
        pi_runs = [pi(node, "open", path) for _ in range(rounds)]
        pi_s = statistics.median(r["total_s"] for r in pi_runs)
        pi_process = statistics.median(r["process_s"] for r in pi_runs)
        report.line(f"Pi: open + buildContext, {name}", pi_s, "s")
        report.line(
            f"  diagnostic: Pi's whole process (Node's start-up and Pi's import too), {name}",
            pi_process,
            "s",
        )
    except ProbeError as exc:
        report.note(f"Pi could not open this file: {exc}")
    base = [("Pi", pi_s)] if pi_s is not None else []

    def figure(
        label: str,
        launch: Launch,
        target: float,
        baseline: list[Any],
        process: float | None = pi_process,
        targeted: bool = True,
    ) -> None:
        report.line(
            f"{label}, {name}",
            launch.to_line_s,
            "s",
            baselines=baseline,
            target=target if baseline and targeted else None,
            target_on_ratio=True,
        )
        if process is not None:
            report.line(
                f"  diagnostic: the same against Pi's whole process, {name}",
                launch.to_line_s,
                "s",
                baselines=[("Pi's process", process)],
            )
        p = launch.payload
        settling = (float(p.get("settled_ms", 0)) - float(p.get("startup_ms", 0))) / 1000
        report.line(
            f"  diagnostic: spawn to the first paint (the end of the branch shown), {name}",
            launch.to_line_s - settling,
            "s",
            baselines=baseline,
        )
        report.note(
            f"startup_ms (run() to the first paint) {p.get('startup_ms')}, settled_ms (to the"
            f" line: every redraw, the tree pane's included) {p.get('settled_ms')}, spawn to exit "
            f"{launch.wall_s:.1f} s, peak RSS {launch.peak_rss / 1e6:,.0f} MB, "
            f"context messages {p.get('messages_shown')}, leaf {p.get('leaf')}"
        )

    size_class = next((k for k in OWN_TARGET if name.startswith(k)), None)
    big = size_class == "100 MB"
    # The 10 MB ratios are diagnostics (restated by issue 25 as the session's own cost).
    first = smoke(data_dir, env)
    figure("first launch (file never seen)", first, FIRST_TARGET, base, targeted=big)
    second = _median([smoke(data_dir, env) for _ in range(rounds)])
    figure("second launch (file unchanged)", second, SECOND_TARGET, base, targeted=big)
    if size_class is not None:
        _own_cost(name, data_dir, empty_dir, env, report, OWN_TARGET[size_class])
    if big and pi_s is not None:
        _second_rounds(node, name, path, data_dir, env, report)
    if memory:
        limit = RSS_FILE_FACTOR * size + qt_own
        report.line(
            f"peak RSS of the app with the {name} session restored (second launch)",
            second.peak_rss / 1e6,
            "MB",
            baselines=[("1.5x file + Qt's own", limit / 1e6)],
            target=limit / 1e6,
            digits=0,
        )
    grown: list[Launch] = []
    grown_pi: list[float] = []
    grown_process: list[float] = []
    # Pi appends through its own API; to a file Pi cannot open (the 1 GB one) our own
    # session layer appends in a process of its own, as another window of the app would.
    writer = "Pi" if pi_s is not None else "our own session layer"
    for _ in range(rounds):
        try:
            if pi_s is not None:
                pi(node, "append", path, messages, str(APPENDED))
            else:
                ours_append(path, messages)
        except ProbeError as exc:
            report.note(f"appending through {writer} failed: {exc}")
            return
        if pi_s is not None:
            try:
                opened = pi(node, "open", path)
                grown_pi.append(opened["total_s"])
                grown_process.append(opened["process_s"])
            except ProbeError as exc:
                report.note(f"Pi could not open the grown file: {exc}")
        grown.append(smoke(data_dir, env))
    grown_base = [("Pi on the grown file", statistics.median(grown_pi))] if grown_pi else []
    figure(
        f"after {writer} appended {APPENDED:,} entries",
        _median(grown),
        APPENDED_TARGET,
        grown_base,
        statistics.median(grown_process) if grown_process else None,
        targeted=big,
    )


def _own_cost(
    name: str, data_dir: str, empty_dir: str, env: dict[str, str], report: Any, target: float
) -> None:
    """The session's own cost: `OWN_ROUNDS` pairs of (a launch on an empty data dir, the
    second launch of the session), their median difference against ``target``."""
    pairs: list[tuple[float, float]] = []
    for _ in range(OWN_ROUNDS):
        shutil.rmtree(empty_dir, ignore_errors=True)
        empty = smoke(empty_dir, env).to_line_s
        pairs.append((empty, smoke(data_dir, env).to_line_s))
    diffs = sorted(s - e for e, s in pairs)
    report.line(
        f"the session's own cost (second launch minus an empty launch, median of"
        f" {OWN_ROUNDS} pairs), {name}",
        statistics.median(diffs),
        "s",
        baselines=[("the empty launch", statistics.median(e for e, _ in pairs))],
        target=target,
    )
    report.note("pairs (empty, session) s: " + ", ".join(f"({e:.3f}, {s:.3f})" for e, s in pairs))


def _second_rounds(
    node: str, name: str, path: str, data_dir: str, env: dict[str, str], report: Any
) -> None:
    """`SECOND_ROUNDS` rounds of (Pi's open + build, the app's second launch): the ratio
    of each round must pass, not only their median."""
    ratios: list[float] = []
    for _ in range(SECOND_ROUNDS):
        try:
            pi_s = pi(node, "open", path)["total_s"]
        except ProbeError as exc:
            report.note(f"Pi could not open this file: {exc}")
            return
        ratios.append(smoke(data_dir, env).to_line_s / pi_s)
    passed = sum(r <= SECOND_TARGET for r in ratios)
    report.line(
        f"rounds whose second launch is <= {SECOND_TARGET:g}x Pi's open + build of the"
        f" same round, {name}",
        passed,
        f"of {SECOND_ROUNDS}",
        baselines=[("every round", float(SECOND_ROUNDS))],
        digits=0,
    )
    ok = passed == SECOND_ROUNDS
    (report.passes if ok else report.failures).append(
        f"second launch <= {SECOND_TARGET:g}x Pi in {SECOND_ROUNDS} of {SECOND_ROUNDS}"
        f" rounds, {name}"
    )
    print(
        f"    ratios: {', '.join(f'{r:.2f}' for r in ratios)}"
        f"  target: every round  {'PASS' if ok else 'FAIL'}",
        flush=True,
    )
