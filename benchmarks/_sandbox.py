"""What the shell's OS sandbox costs per command (issue 24): the real `BashTool` running
``true`` and ``git status`` in a 20,000-file repository, in bubblewrap and without it,
interleaved in the same run (medians)."""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_agent.tools import BashTool, Sandbox, ToolContext, Workspace, detect_sandbox, run_tool

if TYPE_CHECKING:
    from benchmarks._report import Report

REPO_FILES = 20_000
OVERHEAD_MS_TARGET = 50.0
"""The sandbox may add at most 50 ms to a command (bwrap sets up its namespaces and mounts)."""


def _make_repo(root: Path, files: int = REPO_FILES) -> None:
    """A committed git repository of ``files`` small files in 200 folders."""
    for i in range(files):
        folder = root / f"pkg{i % 200:03}"
        if i < 200:
            folder.mkdir()
        (folder / f"mod{i}.py").write_text(f"VALUE = {i}\n")
    git = ["git", "-c", "user.email=b@example.com", "-c", "user.name=bench"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "files"]):
        subprocess.run([*git, *args], cwd=root, check=True)
    (root / "pkg000" / "mod0.py").write_text("VALUE = -1\n")  # one change to report


async def _timings(
    ws: Workspace, command: str, boxes: dict[str, Sandbox], rounds: int
) -> dict[str, float]:
    out_dir = Path(tempfile.mkdtemp(prefix="bench-sh-out-"))
    ctx = ToolContext(workspace=ws, output_dir=out_dir)
    runs: dict[str, list[float]] = {name: [] for name in boxes}
    tools = {name: BashTool(sandbox=box) for name, box in boxes.items()}
    try:
        for tool in tools.values():  # warm the page cache and git's index
            await run_tool(tool, "w", {"command": command}, ctx)
        for _ in range(rounds):
            for name, tool in tools.items():
                start = time.perf_counter()
                result = await run_tool(tool, "c", {"command": command}, ctx)
                runs[name].append(time.perf_counter() - start)
                if result.is_error:
                    raise RuntimeError(f"{command!r} failed ({name}): {result.text_content()}")
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    return {name: statistics.median(values) for name, values in runs.items()}


def bench_sandbox(report: Report, rounds: int = 15) -> None:
    report.section("safety: the shell's sandbox per command (the real bash tool)")
    box = detect_sandbox()
    if not box.available:
        report.note(f"no sandbox on this machine: {box.problem}")
        return
    root = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    try:
        started = time.perf_counter()
        _make_repo(root)
        made = time.perf_counter() - started
        report.note(f"a git repository of {REPO_FILES:,} files made in {made:.1f} s")
        ws = Workspace(root)
        boxes = {"sandboxed": box, "unsandboxed": Sandbox.none("benchmark baseline")}
        for command in ("true", "git status --short"):
            t = asyncio.run(_timings(ws, command, boxes, rounds))
            report.line(
                f"`{command}` in {box.kind}",
                t["sandboxed"] * 1e3,
                "ms",
                baselines=[("the same command unsandboxed", t["unsandboxed"] * 1e3)],
            )
            report.line(
                f"what the sandbox adds to `{command}`",
                (t["sandboxed"] - t["unsandboxed"]) * 1e3,
                "ms",
                baselines=[("the unsandboxed command", t["unsandboxed"] * 1e3)],
                target=OVERHEAD_MS_TARGET,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    from benchmarks._report import Report

    bench_sandbox(Report())
