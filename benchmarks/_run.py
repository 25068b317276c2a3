"""The measurements: each figure is printed beside a baseline measured in the same run.

The session layer is measured here, the GUI in `benchmarks._gui`.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks._generate import (
    GENERATOR_VERSION,
    DataSet,
    dumps,
    generate,
    load_manifest,
    save_manifest,
)
from desktop_agent.ai import AgentMessage, parse_message
from desktop_agent.session import (
    InMemorySessionRepo,
    JsonlSessionRepo,
    Session,
    SqliteSessionRepo,
)
from desktop_agent.session._jsonl import JsonlStorage

# Targets of issue 2 (Acceptance).
OPEN_TARGET_S = 1.0
LIST_TARGET_S = 0.3
APPEND_TARGET_MS = 0.2
MEMORY_TARGET_RATIO = 3.0

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


# --------------------------------------------------------------------------- data


def ensure_data(opts: Options) -> DataSet:
    """The cached data set for this generator version and seed (generated if missing)."""
    root = os.path.join(OUT_DIR, f"data-v{GENERATOR_VERSION}-s{opts.seed}")
    manifest = os.path.join(root, "manifest.json")
    if not opts.regenerate and os.path.exists(manifest):
        try:
            data = load_manifest(manifest)
            if (
                os.path.getsize(data.big.path) == data.big.bytes
                and os.path.getsize(data.medium.path) == data.medium.bytes
            ):
                print(f"data: cached in {os.path.relpath(root, REPO_ROOT)}", flush=True)
                return data
        except (OSError, ValueError, KeyError, TypeError):
            pass
    print(f"data: generating into {os.path.relpath(root, REPO_ROOT)} (seed {opts.seed})")
    shutil.rmtree(root, ignore_errors=True)
    if os.path.isdir(OUT_DIR):  # data of older generator versions is never used again
        for name in os.listdir(OUT_DIR):
            if name.startswith("data-v") and not name.startswith(f"data-v{GENERATOR_VERSION}-"):
                shutil.rmtree(os.path.join(OUT_DIR, name), ignore_errors=True)
    os.makedirs(root)
    start = time.perf_counter()
    data = generate(root, opts.seed)
    asyncio.run(_sanity_check(data))
    save_manifest(data, manifest)
    print(f"data: generated and checked in {time.perf_counter() - start:.1f} s", flush=True)
    return data


async def _sanity_check(data: DataSet) -> None:
    """The generated files open cleanly with `JsonlSessionRepo` and match the generator."""
    for f in (data.big, data.medium):
        repo = JsonlSessionRepo(os.path.dirname(os.path.dirname(f.path)))
        session = await repo.open(f.path)
        try:
            assert not session.read_only, session.read_only_reason
            assert session.recovery is None, session.recovery
            assert session.entry_count == f.entries, (session.entry_count, f.entries)
            assert session.leaf_id() == f.leaf, (session.leaf_id(), f.leaf)
            assert len(session.branch_ids()) == f.path_length
            context = await session.build_context()
            assert context.messages
        finally:
            await session.close()
    many = JsonlSessionRepo(data.many_root)
    listed = await many.list()
    assert len(listed) == data.many_count and not listed.problems, listed.problems
    for meta in random.Random(1).sample(list(listed), 25):
        session = await many.open(meta)
        assert not session.read_only and session.recovery is None
        await session.build_context()
        await session.close()
    # The generator writes exactly what `Session` writes for the same message.
    memory = await InMemorySessionRepo().create(cwd="/tmp")
    for message in data.append_messages[:500]:
        entry_id = await memory.append_message(message)
        row = memory.get_storage().tree.get(entry_id)
        assert row is not None
        obj = json.loads(row.raw)
        expected = dumps(
            {
                "type": "message",
                "id": obj["id"],
                "parentId": obj["parentId"],
                "timestamp": obj["timestamp"],
                "message": message,
            }
        )
        assert row.raw == expected, (row.raw[:200], expected[:200])


# --------------------------------------------------------------------------- open


def _read_bytes(path: str) -> float:
    start = time.perf_counter()
    with open(path, "rb") as fh:
        fh.read()
    return time.perf_counter() - start


def _read_and_loads(path: str) -> float:
    start = time.perf_counter()
    with open(path, "rb") as fh:
        data = fh.read()
    for line in data.split(b"\n"):
        if line:
            json.loads(line)
    return time.perf_counter() - start


async def _open_and_build(path: str) -> tuple[float, float, Session, int]:
    repo = JsonlSessionRepo(os.path.dirname(os.path.dirname(path)))
    gc.collect()
    t0 = time.perf_counter()
    session = await repo.open(path)
    t1 = time.perf_counter()
    context = await session.build_context()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, session, len(context.messages)


async def bench_open(data: DataSet, opts: Options, report: Report) -> None:
    big = data.big
    report.section(
        f"open + build_context: {big.entries:,}-entry session ({_mb(big.bytes)}, "
        f"{big.stats['compactions']} compactions, {big.stats['branches']} branch switches, "
        f"{big.stats['long_outputs']} tool outputs of 10-200 KB)"
    )
    read_s = _median([_read_bytes(big.path) for _ in range(opts.open_runs)])
    loads_s = _median([_read_and_loads(big.path) for _ in range(opts.open_runs)])
    report.line("baseline: read the file's bytes", read_s, "s")
    report.line("baseline: read + json.loads of every line", loads_s, "s")

    opens: list[float] = []
    builds: list[float] = []
    n_messages = 0
    for _ in range(opts.open_runs):
        open_s, build_s, session, n_messages = await _open_and_build(big.path)
        opens.append(open_s)
        builds.append(build_s)
        await session.close()
        del session
    totals = [a + b for a, b in zip(opens, builds, strict=True)]
    baselines = [("json.loads of every line", loads_s), ("read bytes", read_s)]
    report.line("open", _median(opens), "s", baselines=baselines[:1])
    report.line("build_context", _median(builds), "s")
    report.line(
        "open + build_context",
        _median(totals),
        "s",
        baselines=baselines,
        target=OPEN_TARGET_S,
    )
    report.note(
        f"runs: {', '.join(f'{t:.3f}' for t in totals)} s; path {big.path_length:,} entries, "
        f"context {n_messages} messages (after the last compaction)"
    )
    paused: list[float] = []
    for _ in range(opts.open_runs):
        gc.collect()
        gc.disable()
        try:
            open_s, build_s, session, _ = await _open_and_build(big.path)
        finally:
            gc.enable()
        paused.append(open_s + build_s)
        await session.close()
        del session
    report.line(
        "open + build_context with the cyclic GC paused (diagnostic, no target)",
        _median(paused),
        "s",
        baselines=baselines[:1],
    )

    # build_context is eager (validated pydantic messages); touch each one anyway.
    _, _, session, _ = await _open_and_build(big.path)
    start = time.perf_counter()
    context = await session.build_context()
    touched = sum(len(json.dumps(m.to_json_dict(), ensure_ascii=False)) for m in context.messages)
    touch_s = time.perf_counter() - start
    report.line(
        "build_context + to_json_dict of every context message",
        touch_s,
        "s",
        baselines=[("build_context alone", _median(builds))],
    )
    report.note(f"{len(context.messages)} messages, {_mb(touched)} of JSON; build_context is eager")
    start = time.perf_counter()
    ids = session.branch_ids()
    report.line("branch_ids (path walk only, no parsing)", time.perf_counter() - start, "s")
    report.note(f"{len(ids):,} entries on the path")
    await session.close()
    del session, context
    gc.collect()

    med = data.medium
    report.section(
        f"open + build_context: {med.entries:,}-entry session without compaction "
        f"({_mb(med.bytes)}; every message of the {med.path_length:,}-entry path is in the context)"
    )
    loads_m = _median([_read_and_loads(med.path) for _ in range(opts.open_runs)])
    opens = []
    builds = []
    for _ in range(opts.open_runs):
        open_s, build_s, session, n_messages = await _open_and_build(med.path)
        opens.append(open_s)
        builds.append(build_s)
        await session.close()
    report.line("baseline: read + json.loads of every line", loads_m, "s")
    report.line("open", _median(opens), "s", baselines=[("json.loads of every line", loads_m)])
    report.line("build_context", _median(builds), "s")
    report.note(f"{n_messages:,} context messages, all parsed and validated")
    totals = [a + b for a, b in zip(opens, builds, strict=True)]
    report.line(
        "open + build_context",
        _median(totals),
        "s",
        baselines=[("json.loads of every line", loads_m)],
    )


# --------------------------------------------------------------------------- list


def _scan_headers(root: str) -> int:
    count = 0
    with os.scandir(root) as it:
        dirs = [e.path for e in it if e.is_dir(follow_symlinks=False)]
    for directory in dirs:
        with os.scandir(directory) as it:
            files = [e.path for e in it if e.name.endswith(".jsonl")]
        for path in files:
            with open(path, "rb") as fh:
                fh.readline()
            count += 1
    return count


async def bench_list(data: DataSet, opts: Options, report: Report) -> None:
    report.section(
        f"list(): {data.many_count:,} sessions in 20 cwd folders ({_mb(data.many_bytes)})"
    )
    repo = JsonlSessionRepo(data.many_root)
    assert _scan_headers(data.many_root) == data.many_count  # warm the cache
    baseline: list[float] = []
    for _ in range(opts.list_runs):
        start = time.perf_counter()
        _scan_headers(data.many_root)
        baseline.append(time.perf_counter() - start)
    times: list[float] = []
    listed = await repo.list()
    for _ in range(opts.list_runs):
        gc.collect()
        start = time.perf_counter()
        listed = await repo.list()
        times.append(time.perf_counter() - start)
    assert len(listed) == data.many_count and not listed.problems
    base = _median(baseline)
    report.line("baseline: os.scandir + read the first line of each file", base, "s")
    report.line(
        "list()",
        _median(times),
        "s",
        baselines=[("scandir + first line", base)],
        target=LIST_TARGET_S,
    )
    report.note(f"runs: {', '.join(f'{t:.3f}' for t in times)} s")
    start = time.perf_counter()
    one = await repo.list("/home/dev/projects/desktop-agent")
    report.line(f"list(cwd) of one folder ({len(one)} sessions)", time.perf_counter() - start, "s")


# --------------------------------------------------------------------------- append


async def _time_appends(session: Session, messages: Sequence[AgentMessage]) -> list[float]:
    durations: list[float] = []
    clock = time.perf_counter
    for message in messages:
        start = clock()
        await session.append_message(message)
        durations.append(clock() - start)
    return durations


def _describe(durations: Sequence[float]) -> str:
    ordered = sorted(durations)
    p50 = ordered[len(ordered) // 2] * 1e3
    p99 = ordered[int(len(ordered) * 0.99)] * 1e3
    return (
        f"{len(durations):,} appends; p50 {p50:.3f} ms, p99 {p99:.3f} ms, "
        f"max {ordered[-1] * 1e3:.2f} ms"
    )


def _raw_write_ms(path: str, lines: Sequence[bytes]) -> float:
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o644)
    try:
        clock = time.perf_counter
        total = 0.0
        for line in lines:
            start = clock()
            os.write(fd, line)
            total += clock() - start
    finally:
        os.close(fd)
    return total / len(lines) * 1e3


def _raw_sync_ms(path: str, lines: Sequence[bytes], per_turn: int, turns: int) -> float:
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o644)
    times: list[float] = []
    try:
        for t in range(turns):
            for line in lines[t * per_turn : (t + 1) * per_turn]:
                os.write(fd, line)
            start = time.perf_counter()
            os.fsync(fd)
            times.append(time.perf_counter() - start)
    finally:
        os.close(fd)
    return _median(times) * 1e3


async def _turn_syncs(
    session: Session, messages: Sequence[AgentMessage], per_turn: int, turns: int
) -> float:
    times: list[float] = []
    for t in range(turns):
        for message in messages[t * per_turn : (t + 1) * per_turn]:
            await session.append_message(message)
        start = time.perf_counter()
        await session.sync()
        times.append(time.perf_counter() - start)
    return _median(times) * 1e3


def _appended_lines(path: str, skip: int, count: int) -> list[bytes]:
    """The ``count`` lines after the header and the first ``skip`` entries."""
    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")[1 + skip : 1 + skip + count]
    return [line + b"\n" for line in lines]


async def bench_append(data: DataSet, opts: Options, report: Report) -> None:
    n = opts.appends
    raw_messages = data.append_messages[:n]
    messages = [parse_message(m) for m in raw_messages]  # as the harness hands them over
    size = sum(len(json.dumps(m, ensure_ascii=False)) for m in raw_messages)
    report.section(
        f"append_message: {n:,} realistic messages ({_mb(size)}; user, assistant with "
        "thinking/text/toolCalls, tool results), no fsync"
    )
    scratch = os.path.join(OUT_DIR, f"scratch-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    try:
        # JSONL, continuing the 10,000-entry session (as after a restart).
        sessions_root = os.path.join(scratch, "sessions")
        med = data.medium
        copy = os.path.join(sessions_root, os.path.basename(os.path.dirname(med.path)))
        os.makedirs(copy)
        copy = shutil.copy(med.path, copy)
        repo = JsonlSessionRepo(sessions_root)
        session = await repo.open(copy)
        gc.collect()
        durations = await _time_appends(session, messages)
        start = time.perf_counter()
        await session.sync()
        sync_all_ms = (time.perf_counter() - start) * 1e3
        turn_sync_ms = await _turn_syncs(session, messages[:120], 6, 20)
        await session.close()
        lines = _appended_lines(copy, med.entries, n + 120)
        raw_ms = _raw_write_ms(os.path.join(scratch, "raw.jsonl"), lines[:n])
        raw_sync_ms = _raw_sync_ms(os.path.join(scratch, "raw-sync.jsonl"), lines[n:], 6, 20)

        report.line("baseline: os.write of the same line on an O_APPEND fd", raw_ms, "ms")
        jsonl_ms = sum(durations) / len(durations) * 1e3
        report.line(
            f"JSONL append (session of {med.entries:,} entries)",
            jsonl_ms,
            "ms",
            baselines=[("raw os.write", raw_ms)],
            target=APPEND_TARGET_MS,
        )
        report.note(_describe(durations))

        session = await repo.create(cwd="/home/dev/projects/bench-new")
        gc.collect()
        durations = await _time_appends(session, messages)
        await session.close()
        report.line(
            "JSONL append (new session)",
            sum(durations) / len(durations) * 1e3,
            "ms",
            baselines=[("raw os.write", raw_ms)],
        )
        report.note(_describe(durations))

        sqlite = SqliteSessionRepo(os.path.join(scratch, "sessions.sqlite"))
        session = await sqlite.create(cwd="/home/dev/projects/bench-new")
        gc.collect()
        durations = await _time_appends(session, messages)
        await session.close()
        await sqlite.close()
        report.line(
            "SQLite append (WAL, synchronous=FULL: every append is a durable commit)",
            sum(durations) / len(durations) * 1e3,
            "ms",
            baselines=[("raw os.write", raw_ms)],
        )
        report.note(_describe(durations))

        memory = await InMemorySessionRepo().create(cwd="/home/dev/projects/bench-new")
        gc.collect()
        durations = await _time_appends(memory, messages)
        report.line(
            "in-memory append",
            sum(durations) / len(durations) * 1e3,
            "ms",
            baselines=[("raw os.write", raw_ms)],
        )
        report.note(_describe(durations))

        report.section("sync() (fsync of the JSONL session file)")
        report.line("baseline: os.fsync after writing a turn (6 lines)", raw_sync_ms, "ms")
        report.line(
            "sync() after a turn of 6 appends (median of 20)",
            turn_sync_ms,
            "ms",
            baselines=[("raw os.fsync", raw_sync_ms)],
        )
        report.line(f"sync() after {n:,} appends ({_mb(size)})", sync_all_ms, "ms")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# --------------------------------------------------------------------------- memory


def _probe(mode: str, path: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks._memprobe", mode, path],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"memory probe failed: {proc.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def bench_memory(data: DataSet, report: Report) -> None:
    big = data.big
    report.section(f"peak memory of open + build_context ({_mb(big.bytes)} session, fresh process)")
    rss = _probe("rss", big.path)
    traced = _probe("tracemalloc", big.path)
    file_mb = rss["file_bytes"] / 1e6
    before = rss["rss_before"]
    delta_mb = (rss["peak_after"] - before) / 1e6
    # ru_maxrss is the true peak of the open only if the open raised it (see _memprobe).
    inherited = rss["peak_after"] <= rss["peak_before"]
    hwm = rss.get("hwm_after")
    report.line(
        "peak RSS delta (ru_maxrss - RSS before opening)",
        delta_mb,
        "MB",
        baselines=[("file size", file_mb)],
        target=None if inherited and hwm else MEMORY_TARGET_RATIO,
        target_on_ratio=True,
        digits=1,
    )
    if hwm:
        report.line(
            "peak RSS delta (VmHWM of the probe process - RSS before opening)",
            (hwm - before) / 1e6,
            "MB",
            baselines=[("file size", file_mb)],
            target=MEMORY_TARGET_RATIO if inherited else None,
            target_on_ratio=True,
            digits=1,
        )
    if inherited:
        report.note(
            "ru_maxrss was not raised by the open (it holds the parent's peak), so the target"
            " uses VmHWM, reset right before opening"
        )
    else:
        report.note("the target uses the ru_maxrss delta")
    report.note(
        f"RSS before opening {before / 1e6:.1f} MB (after imports); "
        f"still held with the session open: {rss['rss_retained'] / 1e6:.1f} MB "
        f"({rss['rss_retained'] / rss['file_bytes']:.2f}x the file)"
    )
    report.line(
        "tracemalloc peak (no target; Python allocations only)",
        traced["traced_peak"] / 1e6,
        "MB",
        baselines=[("file size", file_mb)],
        digits=1,
    )
    report.note(f"held after build_context: {traced['traced_current'] / 1e6:.1f} MB")


# --------------------------------------------------------------------------- profile


async def _profile_open(path: str) -> None:
    # JsonlSessionRepo.open parses in a worker thread, which cProfile would not see:
    # profile the same work synchronously.
    profiler = cProfile.Profile()
    profiler.enable()
    storage = JsonlStorage.open(path, lock=False)
    session = Session(storage)
    await session.build_context()
    profiler.disable()
    storage.force_close()
    _print_stats("open (JsonlStorage.open) + build_context", profiler)


def _print_stats(title: str, profiler: cProfile.Profile) -> None:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(15)
    print(f"\n-- profile: {title}, by own time")
    print("\n".join(out.getvalue().splitlines()[4:]))


async def _profile_append(data: DataSet, opts: Options) -> None:
    messages = [parse_message(m) for m in data.append_messages[: opts.appends]]
    scratch = os.path.join(OUT_DIR, f"scratch-profile-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        repo = JsonlSessionRepo(os.path.join(scratch, "sessions"))
        session = await repo.create(cwd="/home/dev/projects/bench-profile")
        profiler = cProfile.Profile()
        profiler.enable()
        for message in messages:
            await session.append_message(message)
        profiler.disable()
        await session.close()
        _print_stats(f"{len(messages):,} JSONL appends", profiler)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# --------------------------------------------------------------------------- main


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
    no_data = (
        "safety",
        "map",
        "highlight",
        "pi-sessions",
        "prompt",
        "checkpoints",
        "postgres",
        "mcp",
    )
    data = ensure_data(opts) if opts.only not in no_data else None
    report = Report()

    def step(coro: Callable[[], Coroutine[Any, Any, None]]) -> None:
        asyncio.run(coro())

    if opts.only in (None, "session"):
        assert data is not None
        # Memory first, while this process is still small (see _memprobe on ru_maxrss).
        bench_memory(data, report)
        step(lambda: bench_open(data, opts, report))
        step(lambda: bench_list(data, opts, report))
        step(lambda: bench_append(data, opts, report))
        if opts.profile:
            step(lambda: _profile_open(data.big.path))
            step(lambda: _profile_append(data, opts))
    if opts.only in (None, "session", "pi"):
        from benchmarks._vs_pi import bench_vs_pi

        assert data is not None
        bench_vs_pi(data, report, out_dir=OUT_DIR, seed=opts.seed)
    if opts.only in (None, "gui"):
        from benchmarks._gui import bench_startup, bench_stream

        assert data is not None
        bench_startup(data, report)
        bench_stream(report)

    if opts.only in (None, "map"):
        from benchmarks._map import bench_map

        bench_map(report)
    if opts.only in (None, "pi-sessions"):
        from benchmarks._pi_sessions import bench_pi_sessions

        bench_pi_sessions(report)
    if opts.only == "app":
        from benchmarks._app_vs_pi import bench_app_vs_pi

        assert data is not None
        bench_app_vs_pi(data, report, out_dir=OUT_DIR, seed=opts.seed, with_huge=opts.huge)
    elif opts.only is None:
        _app_in_a_fresh_process(opts, report)

    if opts.only in (None, "postgres"):
        from benchmarks._postgres import bench_postgres

        bench_postgres(report)

    if opts.only in (None, "safety"):
        from benchmarks._safety import bench_safety

        bench_safety(report)

    if opts.only in (None, "highlight"):
        from benchmarks._highlight import bench_highlight

        bench_highlight(report)

    if opts.only in (None, "prompt"):
        from benchmarks._prompt import bench_prompt

        bench_prompt(report)

    if opts.only in (None, "checkpoints"):
        from benchmarks._checkpoints import bench_checkpoints

        bench_checkpoints(report)

    if opts.only in (None, "mcp"):
        from benchmarks._mcp import bench_mcp_launch

        bench_mcp_launch(report)

    report.section("summary")
    for name in report.passes:
        print(f"PASS  {name}")
    for name in report.failures:
        print(f"FAIL  {name}")
    print(f"(benchmarks took {time.perf_counter() - started:.0f} s)")
    if opts.check and report.failures:
        return 1
    return 0
