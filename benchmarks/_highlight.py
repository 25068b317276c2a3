"""Code highlighting in the real chat pane (issue 9 item 4): worst event-loop gap.

``python -m benchmarks --only highlight`` runs ``python -m benchmarks._highlight OUT`` in a
fresh interpreter (offscreen), which shows a `ChatPane` and a 5 ms `QTimer` probe, then
in turn, each from inside the event loop:

1. idle (the baseline of the probe itself);
2. a reply with a 1,000-line code block *without* a language (plain monospace: the cost
   of the card and the document layout alone, the same-run baseline);
3. the same block as ``python`` (the first Python block: the lexer loads in the worker);
4. a 1,000-line ``rust`` block;
5. a live switch to a dark palette (every code document rebuilt from cached tokens);
6. a reply streaming a 400-line Python block in 200 deltas (how many times the worker
   tokenized, against the deltas).

Each phase waits until the colours are applied and the loop is quiet again, and records
the gaps between probe ticks. The figures go to OUT as JSON.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks._report import Report

TARGET_MS = 50.0
LINES = 1_000
PROBE_MS = 5
_HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(_HERE)


def python_source(lines: int) -> str:
    """Real Python: this project's chat sources, repeated up to ``lines`` lines."""
    chat = os.path.join(REPO_ROOT, "desktop_agent", "gui", "chat")
    out: list[str] = []
    names = sorted(n for n in os.listdir(chat) if n.endswith(".py"))
    while len(out) < lines:
        for name in names:
            with open(os.path.join(chat, name), encoding="utf-8") as fh:
                out.extend(fh.read().split("\n"))
    return "\n".join(out[:lines])


def rust_source(lines: int, seed: int = 3) -> str:
    """Synthetic but ordinary Rust: structs, impls, matches, strings, comments."""
    rng = random.Random(seed)
    out: list[str] = []
    i = 0
    while len(out) < lines:
        name = f"Item{i}"
        field = rng.choice(["count", "size", "offset", "total"])
        out += [
            f"/// A {field} holder number {i}.",
            "#[derive(Debug, Clone, PartialEq)]",
            f"pub struct {name} {{",
            f"    pub {field}: u64,",
            '    pub label: String, // shown in the "list" view',
            "}",
            "",
            f"impl {name} {{",
            f"    pub fn new({field}: u64) -> Self {{",
            f'        Self {{ {field}, label: format!("{name}-{{}}", {field}) }}',
            "    }",
            "",
            "    pub fn classify(&self) -> &'static str {",
            f"        match self.{field} {{",
            '            0 => "empty",',
            f'            n if n < {rng.randint(10, 999)} => "small",',
            '            _ => "large",',
            "        }",
            "    }",
            "}",
            "",
        ]
        i += 1
    return "\n".join(out[:lines])


def _reply(code: str, lang: str) -> str:
    return f"Here is the file:\n\n```{lang}\n{code}\n```\n\nThat is all of it."


# --------------------------------------------------------------------------- the probe


def main(out_path: str) -> None:
    from PySide6.QtCore import QElapsedTimer, Qt, QTimer
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication

    from desktop_agent.ai import AssistantMessage, TextContent
    from desktop_agent.gui.chat import ChatItem, ChatPane

    app = QApplication.instance() or QApplication(["desktop-agent-bench"])
    assert isinstance(app, QApplication)
    pane = ChatPane()
    pane.resize(1000, 800)
    pal = QPalette(pane.palette())
    pal.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.Text, QColor("#1a1a1a"))
    pane.setPalette(pal)
    pane.show()
    colorizer = pane.delegate.docs.colorizer
    clock = QElapsedTimer()
    clock.start()
    ticks: list[float] = []
    probe = QTimer()
    probe.setTimerType(Qt.TimerType.PreciseTimer)
    probe.setInterval(PROBE_MS)
    probe.timeout.connect(lambda: ticks.append(clock.nsecsElapsed() / 1e6))
    probe.start()
    stalls = _watchdog(ticks, clock)

    def message(body: str) -> AssistantMessage:
        return AssistantMessage(
            content=[TextContent(text=body)],
            api="anthropic-messages",
            provider="anthropic",
            model="bench",
            stop_reason="stop",
            timestamp=1_760_000_000_000,
        )

    def wait(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.001)

    def quiet() -> None:
        """Until the colours are applied, then 300 ms more (late paints count too)."""
        deadline = time.perf_counter() + 30
        while colorizer.busy() and time.perf_counter() < deadline:
            wait(0.02)
        wait(0.3)

    def phase(name: str, action: Any) -> dict[str, Any]:
        wait(0.3)
        ticks.clear()
        started = clock.nsecsElapsed() / 1e6
        cpu0 = time.thread_time()
        QTimer.singleShot(0, action)
        wait(0.05)
        quiet()
        seen = [started, *ticks]
        gaps = sorted(b - a for a, b in itertools.pairwise(seen)) or [0.0]
        return {
            "name": name,
            "cpu_ms": (time.thread_time() - cpu0) * 1e3,
            "max_ms": gaps[-1],
            "p99_ms": gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))],
            "ticks": len(ticks),
            "duration_ms": (ticks[-1] if ticks else started) - started,
        }

    results: list[dict[str, Any]] = []
    uid = [0]

    def show(body: str) -> None:
        uid[0] += 1
        pane.set_items([ChatItem(f"a{uid[0]}", message(body))])
        pane.view.scrollToBottom()

    py = python_source(LINES)
    rs = rust_source(LINES)
    # Warm-up, not measured: fonts, the Markdown parser, both lexers, first paints.
    for warm in (_reply(py[:2000], "python"), _reply(rs[:2000], "rust"), _reply(py[:500], "")):
        show(warm)
        wait(0.2)
        quiet()
    stalls.clear()
    results.append(phase("idle", lambda: None))
    results.append(phase("plain", lambda: show(_reply(py, ""))))
    before = dict(colorizer.stats)
    results.append(phase("python", lambda: show(_reply(py, "python"))))
    results.append(phase("rust", lambda: show(_reply(rs, "rust"))))
    results.append(phase("python again (cached tokens)", lambda: show(_reply(py, "python"))))
    dark = QPalette(pane.palette())
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1f22"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e6e6e6"))
    dark.setColor(QPalette.ColorRole.Window, QColor("#2b2d30"))
    results.append(phase("theme switch to dark", lambda: pane.setPalette(dark)))
    tokenized = colorizer.stats["tokenized"] - before["tokenized"]

    # Streaming: 200 deltas of two lines each, 10 ms apart, into one growing block; once
    # without a language (the baseline: the card and document work alone), once as Python.
    stream_lines = python_source(400).split("\n")
    deltas = 200

    def stream_phase(lang: str) -> dict[str, Any]:
        jobs_before = colorizer.stats["tokenized"]
        superseded_before = colorizer.stats["superseded"]
        state = {"i": 0}
        timer = QTimer()
        timer.setInterval(10)

        def step() -> None:
            i = state["i"]
            body = f"Streaming:\n\n```{lang}\n" + "\n".join(stream_lines[: 2 * (i + 1)])
            if i == 0:
                pane.set_items([])
                pane.begin_stream(message(body))
            else:
                pane.update_stream(message(body))
            pane.view.viewport().repaint()  # the next frame (offscreen has no vsync)
            state["i"] = i + 1
            if state["i"] >= deltas:
                timer.stop()

        timer.timeout.connect(step)
        wait(0.3)
        ticks.clear()
        started = clock.nsecsElapsed() / 1e6
        cpu0 = time.thread_time()
        QTimer.singleShot(0, timer.start)
        wait(0.05)
        deadline = time.perf_counter() + 60
        while timer.isActive() and time.perf_counter() < deadline:
            wait(0.02)
        quiet()
        pane.end_stream(message("done"), None)
        seen = [started, *ticks]
        gaps = sorted(b - a for a, b in itertools.pairwise(seen)) or [0.0]
        return {
            "name": f"stream a 400-line {lang or 'plain'} block ({deltas} deltas)",
            "cpu_ms": (time.thread_time() - cpu0) * 1e3,
            "max_ms": gaps[-1],
            "p99_ms": gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))],
            "ticks": len(ticks),
            "duration_ms": (ticks[-1] if ticks else started) - started,
            "jobs": colorizer.stats["tokenized"] - jobs_before,
            "deltas": deltas,
            "superseded": colorizer.stats["superseded"] - superseded_before,
        }

    results.append(stream_phase(""))
    results.append(stream_phase("python"))
    probe.stop()
    pane.close()
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(
            {
                "phases": results,
                "tokenized_outside_stream": tokenized,
                "lines": LINES,
                "stalls": list(stalls),
            },
            fh,
        )


def _watchdog(ticks: list[float], clock: Any) -> list[str]:
    """Sample the GUI thread's stack when the probe has not ticked for 30 ms."""
    import threading
    import traceback

    main_id = threading.main_thread().ident
    stalls: list[str] = []

    def run() -> None:
        last_seen = -1.0
        while True:
            time.sleep(0.01)
            now = clock.nsecsElapsed() / 1e6
            last = ticks[-1] if ticks else now
            if now - last > 30 and last != last_seen and main_id is not None:
                last_seen = last
                frame = sys._current_frames().get(main_id)
                if frame is not None:
                    where = traceback.extract_stack(frame)[-4:]
                    stalls.append(" <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}"
                                              for f in reversed(where)))  # fmt: skip

    threading.Thread(target=run, daemon=True).start()
    return stalls


# --------------------------------------------------------------------------- report


def bench_highlight(report: Report) -> None:
    report.section(
        f"Code highlighting in the chat pane: a {LINES:,}-line block (this project's Python; "
        "synthetic Rust), 5 ms QTimer probe, offscreen, fresh interpreter"
    )
    fd, out = tempfile.mkstemp(prefix="desktop-agent-highlight-", suffix=".json")
    os.close(fd)
    try:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["QT_QPA_PLATFORM"] = "offscreen"
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks._highlight", out],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"highlight probe failed: {proc.stderr.strip()[-3000:]}")
        with open(out, encoding="utf-8") as fh:
            result: dict[str, Any] = json.load(fh)
    finally:
        os.unlink(out)
    phases = {p["name"]: p for p in result["phases"]}
    idle = phases["idle"]["max_ms"]
    plain = phases["plain"]["max_ms"]
    report.line("baseline: max gap, idle", idle, "ms", digits=1)
    report.line(
        f"baseline: max gap showing the {LINES:,}-line block uncoloured (no language)",
        plain,
        "ms",
        baselines=[("idle", idle)],
        digits=1,
    )
    for name in ("python", "rust", "python again (cached tokens)", "theme switch to dark"):
        p = phases[name]
        report.line(
            f"max gap: {name}, until coloured ({p['duration_ms']:.0f} ms, {p['ticks']} ticks)",
            p["max_ms"],
            "ms",
            baselines=[("uncoloured", plain), ("idle", idle)],
            target=TARGET_MS,
            digits=1,
        )
    streams = [p for p in result["phases"] if p["name"].startswith("stream")]
    plain_stream, stream = streams
    report.line(
        f"baseline: max gap, {plain_stream['name']}",
        plain_stream["max_ms"],
        "ms",
        baselines=[("idle", idle)],
        digits=1,
    )
    report.line(
        f"max gap: {stream['name']}",
        stream["max_ms"],
        "ms",
        baselines=[("uncoloured stream", plain_stream["max_ms"]), ("idle", idle)],
        target=TARGET_MS,
        digits=1,
    )
    report.line(
        "p99 gap while the python block streams",
        stream["p99_ms"],
        "ms",
        baselines=[("uncoloured stream", plain_stream["p99_ms"])],
        digits=1,
    )
    report.line(
        "GUI-thread CPU while the python block streams (load-independent)",
        stream["cpu_ms"],
        "ms",
        baselines=[("uncoloured stream", plain_stream["cpu_ms"])],
        digits=0,
    )
    for where in dict.fromkeys(result["stalls"]):
        report.note(f"GUI thread during a gap over 30 ms: {where}")
    report.note(
        f"while streaming, the worker tokenized the growing block {stream['jobs']} times for "
        f"{stream['deltas']} deltas ({stream['superseded']} older texts superseded)"
    )


if __name__ == "__main__":
    main(sys.argv[1])
