"""``python -m benchmarks.index``: timings of `SessionIndex` over 1,000 small sessions.

Targets (the session index brief): first index < 3 s, reconcile of unchanged files
< 0.1 s, ``sessions()`` < 20 ms. The sessions are generated into a temp folder (4-120
entries each, 20 workspaces) and removed afterwards. ``--check`` exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from desktop_agent.session import JsonlSessionRepo, SessionIndex, encode_cwd

_TEXT = (
    "refactor parser module tests failing because config loader reads environment variable"
    " before defaults window layout sidebar search index sqlite database migration async"
    " thread event loop stall timeout retry network provider model token cost budget"
)
WORDS = _TEXT.split(" ")


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def generate(root: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for s in range(count):
        cwd = f"/home/bench/project{s % 20}"
        folder = root / encode_cwd(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        created = f"2026-01-{1 + s % 28:02}T{s % 24:02}:00:00.000Z"
        sid = f"bench-{s:05}"
        parts = [
            _line({"type": "session", "version": 3, "id": sid, "timestamp": created, "cwd": cwd})
        ]
        parent = None
        for i in range(rng.randint(4, 120)):
            role = ("user", "assistant", "toolResult")[i % 3]
            block = {"type": "text", "text": _sentence(rng, rng.randint(5, 80))}
            entry = {
                "type": "message",
                "id": f"{s:04x}{i:04x}",
                "parentId": parent,
                "timestamp": f"2026-02-01T00:{i // 60:02}:{i % 60:02}.000Z",
                "message": {"role": role, "content": [block], "timestamp": i},
            }
            parent = entry["id"]
            parts.append(_line(entry))
        (folder / f"{created.replace(':', '-').replace('.', '-')}_{sid}.jsonl").write_bytes(
            b"".join(parts)
        )


def _append(path: str, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


async def _time(fn: Callable[[], Awaitable[Any]], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def measure(count: int) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="index-bench-"))
    try:
        generate(tmp / "sessions", count)
        repo = JsonlSessionRepo(tmp / "sessions")
        figures: dict[str, float] = {}
        index = SessionIndex(tmp / "index.sqlite", repo)
        t0 = time.perf_counter()
        report = await index.reconcile()
        figures["first index"] = time.perf_counter() - t0
        assert len(report.added) == count, report
        figures["reconcile, unchanged"] = await _time(index.reconcile, 5)
        figures["sessions()"] = await _time(index.sessions, 10)
        figures["sessions(cwd=...)"] = await _time(
            lambda: index.sessions(cwd="/home/bench/project3"), 10
        )
        figures["sessions(query='sqlite migration')"] = await _time(
            lambda: index.sessions(query="sqlite migration"), 10
        )
        target = (await index.sessions())[0].path
        rename = {
            "type": "session_info",
            "id": "renamed1",
            "parentId": None,
            "timestamp": "2027-01-01T00:00:00.000Z",
            "name": "Renamed",
        }
        _append(target, _line(rename))
        figures["reconcile, one file changed"] = await _time(index.reconcile, 1)
        figures["update_file(one)"] = await _time(lambda: index.update_file(target), 5)
        index.close()
        # A restart: a fresh object on the existing index.
        index = SessionIndex(tmp / "index.sqlite", repo)
        figures["reconcile after restart (open + unchanged)"] = await _time(index.reconcile, 1)
        index.close()
        os.unlink(tmp / "index.sqlite")
        return figures
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


TARGETS = {"first index": 3.0, "reconcile, unchanged": 0.1, "sessions()": 0.02}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.index")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target fails")
    args = parser.parse_args(argv)
    figures = asyncio.run(measure(args.count))
    failed = False
    for name, seconds in figures.items():
        target = TARGETS.get(name)
        verdict = ""
        if target is not None:
            ok = seconds <= target
            failed |= not ok
            verdict = f"  target: <= {target * 1000:.0f} ms  {'PASS' if ok else 'FAIL'}"
        print(f"{name}: {seconds * 1000:.1f} ms{verdict}")
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
