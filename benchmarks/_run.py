"""The benchmark run: the parts (`PARTS`, ``--only NAME`` runs one), the cached data set
they share, and the summary of every target's verdict. Each figure is printed beside a
baseline measured in the same run (`Report`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks._dataset import GENERATOR_VERSION, OUT_DIR, DataSet, ensure_data
from benchmarks._report import Options, Report

Runner = Callable[[DataSet | None, Options, Report], None]


@dataclass(frozen=True)
class Part:
    """One part of the benchmarks: ``--only name`` runs it alone."""

    name: str
    help: str
    run: Runner
    needs_data: bool = False
    """It reads the generated data set (generated first when missing)."""
    in_all: bool = True
    """It runs when no ``--only`` is given (``pi`` runs with ``session`` then)."""


def _data(data: DataSet | None) -> DataSet:
    assert data is not None
    return data


def _session(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._session_bench import bench_session

    bench_session(_data(data), opts, report)
    _pi(data, opts, report)


def _pi(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._vs_pi import bench_vs_pi

    bench_vs_pi(_data(data), report, out_dir=OUT_DIR, seed=opts.seed)


def _gui(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._gui import bench_startup, bench_stream

    bench_startup(_data(data), report)
    bench_stream(report)


def _map(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._map import bench_map

    bench_map(report)


def _pi_sessions(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._pi_sessions import bench_pi_sessions

    bench_pi_sessions(report)


def _app(data: DataSet | None, opts: Options, report: Report) -> None:
    if opts.only is None:
        _app_in_a_fresh_process(opts, report)
        return
    from benchmarks._app_vs_pi import bench_app_vs_pi

    bench_app_vs_pi(_data(data), report, out_dir=OUT_DIR, seed=opts.seed, with_huge=opts.huge)


def _postgres(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._postgres import bench_postgres

    bench_postgres(report)


def _safety(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._safety import bench_safety

    bench_safety(report)


def _highlight(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._highlight import bench_highlight

    bench_highlight(report)


def _prompt(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._prompt import bench_prompt

    bench_prompt(report)


def _checkpoints(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._checkpoints import bench_checkpoints

    bench_checkpoints(report)


def _mcp(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._mcp import bench_mcp_launch

    bench_mcp_launch(report)


def _agents(data: DataSet | None, opts: Options, report: Report) -> None:
    from benchmarks._agents import bench_agents

    bench_agents(report)


PARTS: tuple[Part, ...] = (
    Part("session", "the session layer (with Pi)", _session, needs_data=True),
    Part("pi", "the comparison with Pi", _pi, needs_data=True, in_all=False),
    Part("gui", "the GUI", _gui, needs_data=True),
    Part("map", "the branch map", _map),
    Part("pi-sessions", "the Pi sessions source (thousands of Pi files)", _pi_sessions),
    Part("app", "the whole app against Pi", _app, needs_data=True),
    Part("postgres", "the PostgreSQL store against SQLite and JSONL", _postgres),
    Part("safety", "the safety benchmarks (redaction, contained writes)", _safety),
    Part("highlight", "code highlighting", _highlight),
    Part("prompt", "the system prompt of a turn", _prompt),
    Part("checkpoints", "workspace checkpoints (20,000 files / 1 GB)", _checkpoints),
    Part("mcp", "the launch with MCP servers", _mcp),
    Part("agents", "several agents at once (five sessions running, five open 100 MB)", _agents),
)
"""Every part, in the order a whole run takes them."""


def _app_in_a_fresh_process(opts: Options, report: Report) -> None:
    """``--only app`` in a new interpreter, its figures and verdicts taken into this run.

    On Linux a child starts with its parent's resident set as its peak (``ru_maxrss``
    counts the memory it was forked from): by now this process holds the sessions the
    benchmarks above opened (~300 MB), so every app launch reported at least that as its
    peak RSS, the empty data dir's included. A fresh interpreter forks the launches
    while it is small, as ``--only app`` alone does."""
    command = [sys.executable, "-m", "benchmarks", "--only", "app", "--seed", str(opts.seed)]
    if opts.huge:
        command.append("--huge")
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    summary = False
    for line in child.stdout:
        if line.startswith("== summary"):
            summary = True
        elif summary and line.startswith(("PASS  ", "FAIL  ")):
            (report.passes if line.startswith("PASS") else report.failures).append(
                line[6:].rstrip()
            )
        elif not summary and not line.startswith(("Desktop Agent benchmarks", "data: ")):
            print(line, end="", flush=True)
    if child.wait() != 0:
        report.failures.append("the whole app against Pi (--only app) exited with an error")


def run(opts: Options) -> int:
    started = time.perf_counter()
    print(
        f"Desktop Agent benchmarks (generator v{GENERATOR_VERSION}, seed {opts.seed}, "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs)",
        flush=True,
    )
    parts = [p for p in PARTS if p.name == opts.only or (opts.only is None and p.in_all)]
    needs_data = any(p.needs_data for p in parts)
    data = ensure_data(opts.seed, regenerate=opts.regenerate) if needs_data else None
    report = Report()
    for part in parts:
        part.run(data, opts, report)

    report.section("summary")
    for name in report.passes:
        print(f"PASS  {name}")
    for name in report.failures:
        print(f"FAIL  {name}")
    print(f"(benchmarks took {time.perf_counter() - started:.0f} s)")
    if opts.check and report.failures:
        return 1
    return 0
