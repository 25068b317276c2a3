"""Peak memory of open + build_context, measured in a fresh process.

Run as ``python -m benchmarks._memprobe rss|tracemalloc <session file>``; prints one JSON
object. ``rss``: peak RSS (``ru_maxrss``) minus the RSS right before opening (after every
import). ``tracemalloc``: the peak of Python allocations while opening (run separately,
because tracing itself costs memory and time).

Caveat handled here: on Linux a child's ``ru_maxrss`` starts at its *parent's* peak RSS
(the kernel carries the pre-exec high-water mark over), so a probe started by a process
that already opened big sessions would report the parent's peak. The probe therefore
also reads ``VmHWM`` (the high-water mark of this process image only, reset to the current
RSS right before opening through ``/proc/self/clear_refs``) and reports both.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import resource
import sys
import time
import tracemalloc
from typing import Any

from desktop_agent.session import JsonlSessionRepo


def rss_now() -> int:
    """Current resident set size in bytes (Linux /proc; else the peak so far)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return peak_rss()


def status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def reset_hwm() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


async def _probe(mode: str, path: str) -> dict[str, Any]:
    repo = JsonlSessionRepo(os.path.dirname(os.path.dirname(path)))
    file_bytes = await asyncio.to_thread(os.path.getsize, path)
    await asyncio.to_thread(lambda: None)  # start the worker thread before measuring
    gc.collect()
    hwm_reset = reset_hwm()
    before = rss_now()
    peak_before = peak_rss()
    if mode == "tracemalloc":
        tracemalloc.start()
    start = time.perf_counter()
    session = await repo.open(path)
    context = await session.build_context()
    elapsed = time.perf_counter() - start
    result: dict[str, Any] = {
        "mode": mode,
        "file_bytes": file_bytes,
        "rss_before": before,
        "peak_before": peak_before,
        "seconds": elapsed,
        "messages": len(context.messages),
        "entries": session.entry_count,
    }
    if mode == "tracemalloc":
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        result["traced_current"] = current
        result["traced_peak"] = peak
    else:
        result["peak_after"] = peak_rss()
        hwm = status_kb("VmHWM")
        result["hwm_after"] = hwm if hwm_reset else None
        result["rss_retained"] = rss_now() - before
    await session.close()
    return result


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("rss", "tracemalloc"):
        print("usage: python -m benchmarks._memprobe rss|tracemalloc <session file>")
        return 2
    print(json.dumps(asyncio.run(_probe(argv[0], argv[1]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
