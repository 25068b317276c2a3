"""Safety benchmarks (issue 11 items 6-7): what redaction and confined writes cost.

- Redaction of what a session append writes, against the serialization that append does
  anyway (``json.dumps`` of the same message), on tool results made of this repository's
  own source files (code is where false triggers such as ``token``, ``key`` and ``://``
  are dense) plus ``env``-style dumps with secrets.
- The stream redactor of tool-output files against writing the same bytes unredacted.
- `Workspace.atomic_write` with its containment checks (a walk from the root before and
  after the rename) against the same write with the checks skipped.
"""

from __future__ import annotations

import glob
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from typing import TYPE_CHECKING

from desktop_agent.ai import TextContent, ToolResultMessage
from desktop_agent.harness import SessionRedaction
from desktop_agent.session import InMemorySessionRepo
from desktop_agent.tools import Workspace
from desktop_agent.utils import Redactor

if TYPE_CHECKING:
    from benchmarks._report import Report

_HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(_HERE)

REDACT_MS_PER_MB_TARGET = 150.0
"""Redaction of code-heavy text: at most 150 ms per MB (a 50 KB tool result in 7.5 ms)."""
STREAM_MB_S_TARGET = 8.0
CHECKS_MS_TARGET = 0.5
"""The two containment checks of one write (4 directories deep): at most 0.5 ms."""


def _sources() -> list[str]:
    files = sorted(
        glob.glob(os.path.join(REPO_ROOT, "desktop_agent", "**", "*.py"), recursive=True)
    )
    texts = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    return texts


def _env_dump(rng: random.Random) -> str:
    alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

    def rand(n: int) -> str:
        return "".join(rng.choice(alnum) for _ in range(n))

    lines = [f"VAR_{i}=/usr/local/lib/thing-{i}" for i in range(60)]
    lines += [
        "OPENAI_API_KEY=sk-" + "proj-" + rand(48),
        "GITHUB_TOKEN=gh" + "p_" + rand(36),
        "DATABASE_URL=postgres://app:" + rand(16) + "@db:5432/app",
        "DB_PASSWORD=" + rand(14),
    ]
    return "\n".join(lines)


def _messages() -> list[ToolResultMessage]:
    rng = random.Random(11)
    texts = _sources()
    out = []
    for i in range(400):
        if i % 4 == 3:
            text = _env_dump(rng)
        else:
            source = texts[i % len(texts)]
            start = rng.randrange(max(1, len(source) - 2000))
            text = source[start : start + rng.randint(2_000, 50_000)]
        out.append(
            ToolResultMessage(
                tool_call_id=f"call_{i}",
                tool_name="read",
                content=[TextContent(text=text)],
                details={"path": f"src/f{i}.py"},
                timestamp=i,
            )
        )
    return out


def _best(fn: object, runs: int = 3) -> float:
    assert callable(fn)
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def bench_redaction(report: Report) -> None:
    import asyncio

    report.section("safety: secret redaction")
    messages = _messages()
    size = sum(len(json.dumps(m.to_json_dict())) for m in messages)
    session = asyncio.run(InMemorySessionRepo().create(cwd="/tmp"))
    redaction = SessionRedaction(session, Redactor())

    def redact() -> None:
        for m in messages:
            redaction.message(m)

    def serialize() -> None:
        for m in messages:
            json.dumps(m.to_json_dict())

    r = _best(redact)
    s = _best(serialize)
    mb = size / 1e6
    report.line(
        f"redact {len(messages)} tool results, per MB ({mb:.1f} MB of code and env dumps)",
        r * 1e3 / mb,
        "ms",
        baselines=[("json.dumps of the same messages", s * 1e3 / mb)],
        target=REDACT_MS_PER_MB_TARGET,
        digits=1,
    )
    report.note(f"{mb / r:.1f} MB/s redacted, {mb / s:.1f} MB/s serialized")

    blob = (
        "\n".join(m.content[0].text for m in messages if isinstance(m.content[0], TextContent))
    ).encode()
    blob = blob * max(1, 20_000_000 // len(blob))
    chunks = [blob[i : i + 65536] for i in range(0, len(blob), 65536)]
    out_dir = tempfile.mkdtemp(prefix="bench-safety-")
    try:
        path = os.path.join(out_dir, "out.log")

        def stream_redacted() -> None:
            stream = Redactor().stream()
            with open(path, "wb") as f:
                for chunk in chunks:
                    f.write(stream.feed(chunk))
                f.write(stream.finish())

        def stream_raw() -> None:
            with open(path, "wb") as f:
                for chunk in chunks:
                    f.write(chunk)

        red = _best(stream_redacted, 2)
        raw = _best(stream_raw, 2)
        mb = len(blob) / 1e6
        report.line(
            f"tool-output file of {mb:.0f} MB through the stream redactor",
            red,
            "s",
            baselines=[("the same bytes written unredacted", raw)],
        )
        ok = mb / red >= STREAM_MB_S_TARGET
        report.note(
            f"{mb / red:.1f} MB/s; target: >= {STREAM_MB_S_TARGET:g} MB/s  "
            f"{'PASS' if ok else 'FAIL'}"
        )
        (report.passes if ok else report.failures).append("stream redactor throughput")
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def bench_confined_writes(report: Report, rounds: int = 6, writes: int = 60) -> None:
    report.section("safety: workspace writes through directory handles")
    root = tempfile.mkdtemp(prefix="bench-ws-")
    original = Workspace._still_inside
    try:
        ws = Workspace(root)
        data = b"x" * 4096
        dirs = ["src", "pkg", "mod", "sub"]
        target = ws.resolve("/".join([*dirs, "f.py"]), for_write=True)
        ws.atomic_write(target, data)
        # Interleaved rounds, medians: the fsync of each write varies a lot on a busy disk.
        timings: dict[str, list[float]] = {"checked": [], "unchecked": []}
        for _ in range(rounds):
            for mode in ("checked", "unchecked"):
                if mode == "unchecked":
                    Workspace._still_inside = lambda *a: True  # type: ignore[method-assign]
                start = time.perf_counter()
                for _ in range(writes):
                    ws.atomic_write(target, data)
                timings[mode].append((time.perf_counter() - start) / writes)
                Workspace._still_inside = original  # type: ignore[method-assign]
        checked = statistics.median(timings["checked"])
        unchecked = statistics.median(timings["unchecked"])
        report.line(
            "atomic_write of 4 KB, 4 levels deep, with its containment checks",
            checked * 1e3,
            "ms",
            baselines=[("the same write without the checks", unchecked * 1e3)],
        )
        chain = ws._walk(dirs, "bench", create=False)
        try:
            n = 2000
            start = time.perf_counter()
            for _ in range(n):
                ws._still_inside(dirs, chain.fd, "bench")
            check = (time.perf_counter() - start) / n
        finally:
            chain.close()
        report.line(
            "the two containment checks of one write",
            2 * check * 1e3,
            "ms",
            baselines=[("the unchecked write", unchecked * 1e3)],
            target=CHECKS_MS_TARGET,
        )
    finally:
        Workspace._still_inside = original  # type: ignore[method-assign]
        shutil.rmtree(root, ignore_errors=True)


def bench_safety(report: Report) -> None:
    from benchmarks._sandbox import bench_sandbox

    bench_redaction(report)
    bench_confined_writes(report)
    bench_sandbox(report)
