"""Frozen smoke test of a built app, for every platform (build-windows.ps1, build-macos.sh, CI).

``python packaging/smoke.py EXECUTABLE [--bundle DIR] [--max-mb N]`` writes a data dir with
two sessions (the newest moved back to its first entry, so the saved leaf is not the last
line), starts ``EXECUTABLE --smoke --no-err-windows --data-dir D`` and checks the exit code
and the JSON line (the newest session on its saved leaf), starts it again to see the session
is still there, and prints the bundle's size and the start time. Run it with a Python that
has the project installed (the build venv). Exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import JsonlSessionRepo


async def write_sessions(data: Path, work: Path) -> tuple[str, str]:
    repo = JsonlSessionRepo(data / "sessions")
    older = await repo.create(cwd=str(work / "older"))
    await older.append_message(UserMessage(content=[TextContent(text="old")], timestamp=1))
    await older.close()
    await asyncio.sleep(0.02)
    newest = await repo.create(cwd=str(work / "newest"))
    first = await newest.append_message(UserMessage(content=[TextContent(text="q1")], timestamp=2))
    await newest.append_message(UserMessage(content=[TextContent(text="q2")], timestamp=3))
    await newest.move_to(first)
    await newest.close()
    return newest.metadata.id, first


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="frozen smoke test")
    parser.add_argument("executable", type=Path)
    parser.add_argument("--bundle", type=Path, help="the folder whose size to print and check")
    parser.add_argument("--max-mb", type=float, default=0.0, help="fail above this size")
    args = parser.parse_args(argv)
    failures = []
    with tempfile.TemporaryDirectory(prefix="desktop-agent-smoke-") as tmp:
        work = Path(tmp)
        data = work / "data"
        session_id, leaf = asyncio.run(write_sessions(data, work))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        if sys.platform.startswith("linux"):
            env.setdefault("QT_QPA_PLATFORM", "offscreen")
        for attempt in ("first start", "restart"):
            started = time.perf_counter()
            done = subprocess.run(
                [str(args.executable), "--smoke", "--no-err-windows", "--data-dir", str(data)],
                capture_output=True, text=True, timeout=180, env=env, check=False,
            )  # fmt: skip
            seconds = time.perf_counter() - started
            lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
            payload = json.loads(lines[-1]) if lines else None
            ok = (
                done.returncode == 0
                and payload is not None
                and payload.get("restored_session") == session_id
                and payload.get("leaf") == leaf
                and payload.get("messages_shown") == 1
            )
            sys.stdout.write(
                f"smoke ({attempt}): exit {done.returncode}, {seconds * 1000:.0f} ms to exit, "
                f"line {payload}\n"
            )
            if not ok:
                failures.append(f"{attempt}: {done.stderr[-2000:]}")
    if args.bundle is not None:
        size_mb = folder_size(args.bundle) / 1e6
        sys.stdout.write(f"bundle size unpacked: {size_mb:.1f} MB\n")
        if args.max_mb and size_mb > args.max_mb:
            failures.append(f"bundle is {size_mb:.1f} MB, over {args.max_mb} MB")
    for failure in failures:
        sys.stderr.write(f"smoke: FAILED {failure}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
