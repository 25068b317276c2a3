"""Branch map probe: a 10,000-entry, 500-branch session in `MainWindow`'s branch map.

Run by `benchmarks._map` as ``python -m benchmarks._mapprobe OUT_JSON`` in a fresh
interpreter with ``QT_QPA_PLATFORM=offscreen``. It writes the session (user prompts and
answers of a few sentences, some tool calls with results, 499 forks off recent answers,
labels, two compactions) into a temp ``--data-dir`` layout, opens it in a real window on
a qasync loop, and with the 10 ms `QTimer` probe of `benchmarks._streamprobe` running
measures: laying out and painting the map from scratch, its previews arriving for the
rows on screen, scrolling it top to bottom a page at a time, and clicks on nodes of other
branches (each writes a ``leaf`` entry, the chat and the map redraw), and live theme
switches (dark, light, dark, light: every pane repaints). The same probe while idle is
the baseline. Results go to OUT_JSON.

``MAPPROBE_PROFILE=DIR`` (inherited by the child) also writes a cProfile of the GUI
thread for each phase (``DIR/<phase>.pstats``: build, scroll, click, theme) and prints
the top functions by cumulative time to stderr.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._streamprobe import Probe, settle

ENTRIES = 10_000
BRANCHES = 500
CLICKS = 8
WORDS = [
    *("the", "session", "branch", "append", "entry", "leaf", "sync", "file", "test"),
    *("lane", "fork", "answer", "prompt", "map", "window", "retry", "edit", "summary"),
    *("label", "compaction", "token", "model", "tool", "result", "path", "view"),
]


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(lo, hi))).capitalize() + "."


async def write_session(data: Path, workspace: Path) -> tuple[str, int, int]:
    """The session; returns (path, entries, leaves)."""
    from desktop_agent.ai import (
        AssistantMessage,
        TextContent,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )
    from desktop_agent.session import JsonlSessionRepo

    rng = random.Random(9)
    repo = JsonlSessionRepo(str(data / "sessions"), str(data / "trash"))
    session = await repo.create(cwd=str(workspace))

    def answer(text: str, calls: list[ToolCall] | None = None) -> AssistantMessage:
        content: list[Any] = [TextContent(text=text), *(calls or [])]
        return AssistantMessage(
            content=content, api="anthropic-messages", provider="anthropic",
            model="claude", stop_reason="toolUse" if calls else "stop", timestamp=1,
        )  # fmt: skip

    answers: list[str] = []
    forks = 0
    turn = 0
    while session.entry_count < ENTRIES:
        turn += 1
        left = ENTRIES - session.entry_count
        if answers and forks < BRANCHES - 1 and rng.random() < BRANCHES / (ENTRIES / 2.2) * 1.1:
            await session.move_to(answers[max(0, len(answers) - rng.randint(1, 60))])
            forks += 1
        await session.append_message(UserMessage(content=_text(rng, 4, 30), timestamp=1))
        if rng.random() < 0.2 and left > 6:
            call = ToolCall(id=f"call{turn}", name="read", arguments={"path": "README.md"})
            await session.append_message(answer(_text(rng, 3, 12), [call]))
            output: list[Any] = [TextContent(text=_text(rng, 20, 80))]
            result = ToolResultMessage(
                tool_call_id=call.id, tool_name="read", content=output, timestamp=1
            )
            await session.append_message(result)
        answers.append(await session.append_message(answer(_text(rng, 10, 60))))
        if turn % 400 == 0:
            await session.append_label(answers[-1], f"milestone {turn // 400}")
        if turn in (1500, 3000):
            await session.append_compaction(_text(rng, 30, 60), answers[-20], 150_000)
    await session.close()
    path = session.metadata.path or ""
    leaves = forks + 1
    return path, session.entry_count, leaves


class _CpuProbe(Probe):
    """`Probe`, also noting the GUI thread's CPU time at each tick: a gap's CPU time is
    what the GUI thread itself ran in it (the rest of a long gap was the machine running
    something else, or this thread waiting for the GIL), which on a loaded or CPU-stolen
    machine tells our work from the noise."""

    def __init__(self) -> None:
        super().__init__()
        self.cpu: list[float] = []

    def _tick(self) -> None:
        super()._tick()
        self.cpu.append(time.thread_time())

    def start(self) -> None:
        super().start()
        self.cpu.clear()
        self.cpu.append(time.thread_time())

    def worst_cpu_ms(self, start: float, end: float) -> float:
        """The most GUI-thread CPU time of any gap ending in the window."""
        worst = 0.0
        ticks, cpu = self.ticks, self.cpu
        for k in range(1, min(len(ticks), len(cpu))):
            if start < ticks[k] <= end:
                worst = max(worst, cpu[k] - cpu[k - 1])
        return worst * 1e3


class _Profile:
    """cProfile of the GUI thread per phase when ``MAPPROBE_PROFILE`` names a folder."""

    def __init__(self) -> None:
        self.folder = os.environ.get("MAPPROBE_PROFILE", "")
        self._prof: Any = None

    def start(self) -> None:
        if self.folder:
            import cProfile

            self._prof = cProfile.Profile()
            self._prof.enable()

    def stop(self, phase: str) -> None:
        if self._prof is None:
            return
        import pstats

        self._prof.disable()
        os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, f"{phase}.pstats")
        self._prof.dump_stats(path)
        print(f"== {phase}: {path}", file=sys.stderr)
        pstats.Stats(path, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
        self._prof = None


async def until(done: Any, step_s: float = 0.002) -> None:
    """Poll ``done()`` while the loop runs (what a person waits for on screen)."""
    while not done():  # noqa: ASYNC110 - a condition of widgets, no event to wait on
        await asyncio.sleep(step_s)


def _run_window(data: Path, path: str) -> dict[str, Any]:
    import qasync
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from desktop_agent.ai import ModelRegistry
    from desktop_agent.config import AppState, KeyStore, Settings
    from desktop_agent.gui import MainWindow, freeze_heap
    from desktop_agent.session import JsonlSessionRepo
    from desktop_agent.workbench import BranchMap, JsonlStore, MapUpdate, Models, Workbench

    app = QApplication.instance() or QApplication(["desktop-agent-bench"])
    # The window's quit closes it; the loop must outlive it for the probe's own
    # `workbench.aclose()` (the app's `run_gui` does that after its loop's last window).
    QApplication.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    settings = Settings(discover_local_servers=False)
    out: dict[str, Any] = {}

    async def go() -> None:
        workbench = Workbench(
            store=JsonlStore(JsonlSessionRepo(str(data / "sessions"), str(data / "trash")), None),
            models=Models(ModelRegistry(catalogue=[]), KeyStore(environ={}), settings),
            settings=settings,
            state=AppState(),
            save_settings=lambda s: None,
            save_state=lambda s: None,
            forbidden_roots=[data],
            tool_output_dir=data / "tool-output",
        )
        await workbench.start()
        window = MainWindow(workbench, no_err_windows=True)
        window.resize(1280, 800)
        window.show()
        await settle(0.3)
        await window.open_session(path)
        await window.settle_tasks()  # the SDK warm-up included
        freeze_heap()  # as the app does after the restore and the warm-up (`gui.run_gui`)
        await settle(0.5)
        pane, view = window.map_pane, window.map_pane.view
        probe = _CpuProbe()
        profile = _Profile()

        def gaps(start: float, end: float) -> dict[str, float]:
            summary = probe.window(start, end).summary()
            summary["max_cpu_ms"] = probe.worst_cpu_ms(start, end)
            return summary

        # The Qt-free layout alone, and touching every entry once (its floor).
        session = workbench.session
        assert session is not None
        shape = session.shape()
        t = time.perf_counter()
        kinds: dict[str, int] = {}
        for i in range(len(shape.ids)):
            kinds[shape.types[i]] = shape.parents[i]
        out["touch_ms"] = (time.perf_counter() - t) * 1e3
        fresh = BranchMap(workbench.map.filter)
        t = time.perf_counter()
        fresh.sync(shape)
        out["layout_ms"] = (time.perf_counter() - t) * 1e3
        out["rows"] = len(fresh)
        out["lanes"] = fresh.max_lane() + 1
        out["tips"] = len(fresh.tips())

        # Baseline: the idle loop.
        gc.collect()
        probe.start()
        started = t0 = time.perf_counter()
        await settle(1.0)
        out["idle"] = gaps(t0, time.perf_counter())

        # Layout built and painted from scratch, in the window.
        await settle(0.1)
        pane.previews.forget()
        painted_before = view.map_delegate.painted
        profile.start()
        t0 = time.perf_counter()
        workbench.map = BranchMap(workbench.map.filter)
        pane.apply(workbench.map, await workbench.update_map())
        view.viewport().repaint()
        out["build_paint_ms"] = (time.perf_counter() - t0) * 1e3
        out["rows_painted"] = view.map_delegate.painted - painted_before
        # ... and its previews arriving for the rows on screen
        top = view.rowAt(0)
        bottom = view.rowAt(view.viewport().height() - 1)
        visible = list(range(max(top, 0), (bottom if bottom >= 0 else len(workbench.map) - 1) + 1))
        await until(lambda: all(pane.previews.get(workbench.map.rows[r].entry_id) for r in visible))
        await window.settle_tasks()
        view.viewport().repaint()
        t1 = time.perf_counter()
        out["previews_ms"] = (t1 - t0) * 1e3
        profile.stop("build")
        await settle(0.1)
        out["build"] = gaps(t0, time.perf_counter())

        # Scrolling top to bottom a page at a time (previews load as it goes).
        bar = view.verticalScrollBar()
        bar.setValue(0)
        await settle(0.2)
        profile.start()
        t0 = time.perf_counter()
        pages = 0
        paint_ms: list[float] = []
        while bar.value() < bar.maximum():
            bar.setValue(bar.value() + bar.pageStep())
            p0 = time.perf_counter()
            view.viewport().repaint()
            paint_ms.append((time.perf_counter() - p0) * 1e3)
            pages += 1
            await asyncio.sleep(0.016)
        await window.settle_tasks()
        t1 = time.perf_counter()
        profile.stop("scroll")
        out["scroll"] = gaps(t0, t1)
        out["scroll_pages"] = pages
        out["scroll_paint_ms"] = sorted(paint_ms)[len(paint_ms) // 2], max(paint_ms)
        out["scroll_s"] = t1 - t0

        # Clicks on nodes of other branches: leaf entry, chat and map redrawn.
        map_ms: list[float] = []
        apply = pane.apply

        def timed_apply(bmap: Any, update: Any) -> None:
            t = time.perf_counter()
            apply(bmap, update)
            map_ms.append((time.perf_counter() - t) * 1e3)

        pane.apply = timed_apply  # type: ignore[method-assign]
        rng = random.Random(3)
        clicks: list[float] = []
        profile.start()
        t0 = time.perf_counter()
        for _ in range(CLICKS):
            bmap = workbench.map
            others = [
                r for r, row in enumerate(bmap.rows) if row.lane > 0 and row.kind == "assistant"
            ]
            target = others[rng.randrange(len(others))]
            view.scrollTo(pane.model().index(target, 0))
            view.viewport().repaint()
            await settle(0.05)
            before = session.leaf_id()
            c0 = time.perf_counter()
            rect = view.visualRect(pane.model().index(target, 0))
            QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
            await until(lambda before=before: session.leaf_id() != before)
            await window.settle_tasks()
            view.viewport().repaint()
            clicks.append((time.perf_counter() - c0) * 1e3)
            await settle(0.1)
        out["click"] = gaps(t0, time.perf_counter())
        profile.stop("click")
        # A live theme switch (dark, then light again): every pane repaints, the chat's
        # code re-coloured in place, the map's colours made again.
        colorizer = window.chat.delegate.docs.colorizer
        theme_ms: list[float] = []
        await settle(0.2)
        profile.start()
        t0 = time.perf_counter()
        for mode in ("dark", "light", "dark", "light"):
            s0 = time.perf_counter()
            window.theme.set_mode(mode)
            want_dark = mode == "dark"
            await until(lambda d=want_dark: view.map_delegate.colors.dark == d)
            await until(lambda: not colorizer.busy())
            window.repaint()
            theme_ms.append((time.perf_counter() - s0) * 1e3)
            await settle(0.2)
        out["theme"] = gaps(t0, time.perf_counter())
        out["theme_ms"] = theme_ms
        profile.stop("theme")
        out["click_ms"] = clicks
        out["click_apply_ms"] = map_ms
        pane.apply = apply  # type: ignore[method-assign]
        # An appended entry on the leaf: one row, no relayout.
        t = time.perf_counter()
        await session.append_label(session.leaf_id() or "", "bench")
        update = workbench.sync_map()
        out["append_ms"] = (time.perf_counter() - t) * 1e3
        out["append_reset"] = update.reset
        assert isinstance(update, MapUpdate)
        out["stalls"] = probe.stalls(started, time.perf_counter())
        probe.stop()
        window.request_quit(ask=False)
        await window.settle_tasks()
        await workbench.aclose()

    with loop:
        loop.run_until_complete(go())
    return out


def main(out_path: str) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from desktop_agent._launch import quick_thread_switches

    quick_thread_switches()  # as the app's launch does (`_launch.lean_start`)
    with tempfile.TemporaryDirectory(prefix="desktop-agent-bench-") as tmp:
        data = Path(tmp) / "data"
        workspace = Path(tmp) / "project"
        workspace.mkdir()
        t = time.perf_counter()
        path, entries, leaves = asyncio.run(write_session(data, workspace))
        write_s = time.perf_counter() - t
        result = _run_window(data, path)
        result.update({"entries": entries, "branches": leaves, "write_s": write_s})
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    main(sys.argv[1])
