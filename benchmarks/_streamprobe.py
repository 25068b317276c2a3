"""Event-loop stall probe: a reply streams into a 2,000-message session in `MainWindow`.

Run by `benchmarks._gui` as ``python -m benchmarks._streamprobe OUT_JSON`` in a fresh
interpreter with ``QT_QPA_PLATFORM=offscreen``. It

1. writes a 2,000-message session (user/assistant turns with prose, Markdown code blocks
   and some tool calls with their results) into a temp ``--data-dir`` layout,
2. starts `tests.helpers.provider_server.ProviderServer` in a *separate process*
   (``--serve``), so the fake provider's request parsing and validation do not compete
   for this process's GIL (a real provider is remote),
3. opens the session in `desktop_agent.gui.MainWindow` on a real qasync loop,
4. runs a 10 ms `QTimer` probe while ``window.send(...)`` streams a scripted reply of
   300 small deltas (5 ms apart), and the same probe while idle for the same duration.

A watchdog thread samples the GUI thread's Python stack whenever the probe has not
ticked for 30 ms, and ``gc.callbacks`` time every collection, so a stall is attributed
to the call that made it. The results go to OUT_JSON.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MESSAGES = 2_000
DELTAS = 300
DELTA_DELAY_S = 0.005
PROBE_MS = 10
STALL_SAMPLE_S = 0.030  # sample the GUI thread's stack after this long without a tick
PROMPT = "Summarize what we changed in the session layer today, with the open questions."


# --------------------------------------------------------------------------- server


BIG_ARGUMENT_BYTES = 1_000_000


def big_write_replies() -> list[Any]:
    """A ``write`` tool call whose ``content`` argument is ~1 MB of code (streamed in the
    Anthropic dialect's small ``input_json_delta`` pieces), then the closing answer."""
    from tests.helpers.provider_server import Reply, ToolCallSpec

    line = "    value = compute(index, offset)  # a line of generated code\n"
    content = line * (BIG_ARGUMENT_BYTES // len(line) + 1)
    call = ToolCallSpec("call-big-write", "write", {"path": "big_module.py", "content": content})
    return [Reply(tool_calls=[call]), Reply(text=["Written ", "the file."])]


def serve(replies: int) -> None:
    """``--serve N``: a ProviderServer with N scripted replies, then the 1 MB tool call;
    prints the model, waits."""
    from tests.helpers.provider_server import ProviderServer, Reply

    rng = random.Random(7)
    words = ["the", "session", "branch", "append", "entry", "leaf", "sync", "file", "test"]
    with ProviderServer() as server:
        for _ in range(replies):
            deltas = [
                " ".join(rng.choices(words, k=rng.randint(1, 4))) + rng.choice((" ", ", ", ". "))
                for _ in range(DELTAS)
            ]
            for i in range(40, DELTAS, 60):  # some Markdown: a code fence and a list
                deltas[i] = "\n\n```python\ndef f(x):\n    return x\n```\n\n- " + deltas[i]
            server.script(Reply(text=deltas, delay_s=DELTA_DELAY_S))
        for reply in big_write_replies():
            server.script(reply)
        model = server.model("anthropic-messages")
        sys.stdout.write(model.model_dump_json(by_alias=True) + "\n")
        sys.stdout.flush()
        sys.stdin.read()  # until the probe closes our stdin
        sys.stdout.write(json.dumps({"validation_errors": server.validation_errors}) + "\n")
        sys.stdout.flush()


# --------------------------------------------------------------------------- session


def session_messages(n: int, model: Any, seed: int = 5) -> list[dict[str, Any]]:
    """``n`` messages: user prompt, sometimes tool calls + results, then an answer."""
    from benchmarks._pools import FILES, log_uniform, make_pools

    rng = random.Random(seed)
    pools = make_pools(rng)

    def cut(pool: str, size: int) -> str:
        size = min(max(size, 1), len(pool) - 1)
        start = rng.randrange(len(pool) - size)
        return pool[start : start + size].strip() or "ok"

    def call_id() -> str:
        return "toolu_" + "".join(
            rng.choices("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnop0123456789", k=22)
        )

    ts = 1_790_000_000_000
    out: list[dict[str, Any]] = []

    def assistant(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        out_tokens = sum(len(json.dumps(b)) for b in content) // 4
        return {
            "role": "assistant",
            "content": content,
            "api": model.api,
            "provider": model.provider,
            "model": model.id,
            "usage": {
                "input": 40 + len(out) * 30,
                "output": out_tokens,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 40 + len(out) * 30 + out_tokens,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": stop,
            "timestamp": ts,
        }

    while len(out) < n:
        ts += rng.randint(5_000, 120_000)
        text = cut(pools.prose, log_uniform(rng, 20, 900))
        if rng.random() < 0.05:
            text += "\n\n```\n" + cut(pools.code, log_uniform(rng, 200, 3_000)) + "\n```"
        out.append({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts})
        if rng.random() < 0.3 and len(out) + 3 < n:  # a tool step
            path = rng.choice(FILES)
            tool, args = rng.choice(
                (
                    ("read", {"path": path}),
                    ("bash", {"command": "git status --short && git diff --stat"}),
                    ("grep", {"pattern": "def append", "path": "desktop_agent"}),
                )
            )
            cid = call_id()
            ts += rng.randint(1_000, 20_000)
            content: list[dict[str, Any]] = [
                {"type": "text", "text": cut(pools.prose, log_uniform(rng, 20, 300))},
                {"type": "toolCall", "id": cid, "name": tool, "arguments": args},
            ]
            out.append(assistant(content, "toolUse"))
            ts += rng.randint(20, 5_000)
            output = cut(pools.code, log_uniform(rng, 40, 4_000))
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": cid,
                    "toolName": tool,
                    "content": [{"type": "text", "text": output}],
                    "isError": False,
                    "timestamp": ts,
                }
            )
        ts += rng.randint(1_500, 60_000)
        answer = cut(pools.prose, log_uniform(rng, 60, 2_000))
        if rng.random() < 0.3:
            answer += (
                "\n\n```python\n" + cut(pools.code, log_uniform(rng, 100, 1_500)) + "\n```\n\n"
            )
            answer += "- " + cut(pools.prose, 80) + "\n- " + cut(pools.prose, 80)
        out.append(assistant([{"type": "text", "text": answer}], "stop"))
    return out[:n]


async def write_session(data: Path, workspace: Path, model: Any) -> tuple[str, int]:
    from desktop_agent.session import JsonlSessionRepo

    repo = JsonlSessionRepo(str(data / "sessions"), str(data / "trash"))
    session = await repo.create(cwd=str(workspace))
    await session.append_model_change(model.provider, model.id)
    messages = session_messages(MESSAGES, model)
    for message in messages:
        await session.append_message(message)
    await session.close()
    path = session.metadata.path or ""
    return path, await asyncio.to_thread(os.path.getsize, path)


# --------------------------------------------------------------------------- probe


@dataclass
class Window:
    """Gaps (ms) between probe ticks whose end falls in one time window."""

    gaps_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    """The GUI thread's CPU time within each gap: what the gap would be on a quiet
    machine, were the GIL never held elsewhere (the machine's load does not add to it)."""
    ticks: int = 0
    duration_s: float = 0.0

    def summary(self) -> dict[str, float]:
        gaps = sorted(self.gaps_ms) or [0.0]
        return {
            "ticks": self.ticks,
            "duration_s": self.duration_s,
            "max_ms": gaps[-1],
            "p99_ms": gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))],
            "mean_ms": sum(gaps) / len(gaps),
            "over_50": sum(1 for g in gaps if g > 50),
            "max_cpu_ms": max(self.cpu_ms, default=0.0),
        }


class Probe:
    """A 10 ms QTimer recording its ticks, a stack-sampling watchdog, GC timings."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(PROBE_MS)
        self.timer.timeout.connect(self._tick)
        self.ticks: list[float] = []
        self.cpu: list[float] = []  # the GUI thread's CPU time at each tick
        self.samples: list[tuple[float, str]] = []  # (time, stack of the GUI thread)
        self.others: list[tuple[float, list[str]]] = []  # (time, where the other threads are)
        self.gc_pauses: list[tuple[float, float, int]] = []  # (start, seconds, generation)
        self._gc_start = 0.0
        self._main = threading.get_ident()
        self._stop = threading.Event()
        self._watch: threading.Thread | None = None

    def _tick(self) -> None:
        self.ticks.append(time.perf_counter())
        self.cpu.append(time.thread_time())

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        """Every collection, in whichever thread: one in a worker holds the GIL as long
        (the generation is negative for a worker's)."""
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            now = time.perf_counter()
            gen = int(info["generation"])
            if threading.get_ident() != self._main:
                gen = -1 - gen
            self.gc_pauses.append((self._gc_start, now - self._gc_start, gen))

    def _watchdog(self) -> None:
        sampled_for = -1.0
        last_sample = 0.0
        while not self._stop.wait(0.002):
            if not self.ticks:
                continue
            last = self.ticks[-1]
            now = time.perf_counter()
            if now - last > STALL_SAMPLE_S and (last != sampled_for or now - last_sample > 0.02):
                frames = sys._current_frames()
                frame = frames.get(self._main)
                if frame is not None:
                    stack = "".join(traceback.format_stack(frame, limit=14))
                    self.samples.append((now, stack))
                    self.others.append((now, _other_threads(frames, self._main)))
                sampled_for = last
                last_sample = now

    def start(self) -> None:
        self.ticks.clear()
        self.samples.clear()
        self.others.clear()
        self.gc_pauses.clear()
        self.cpu.clear()
        self.ticks.append(time.perf_counter())
        self.cpu.append(time.thread_time())
        gc.callbacks.append(self._gc)
        self.timer.start()
        self._stop.clear()
        self._watch = threading.Thread(target=self._watchdog, daemon=True)
        self._watch.start()

    def stop(self) -> None:
        self.timer.stop()
        self._stop.set()
        if self._watch is not None:
            self._watch.join()
        gc.callbacks.remove(self._gc)

    def window(self, start: float, end: float) -> Window:
        w = Window(duration_s=end - start)
        for i, (a, b) in enumerate(zip(self.ticks, self.ticks[1:], strict=False)):
            if start < b <= end:
                w.gaps_ms.append((b - a) * 1e3)
                w.cpu_ms.append((self.cpu[i + 1] - self.cpu[i]) * 1e3)
                w.ticks += 1
        return w

    def stalls(self, start: float, end: float, over_ms: float = 50.0) -> list[dict[str, Any]]:
        """Every gap over ``over_ms`` in the window, with the stacks sampled and GC inside."""
        out: list[dict[str, Any]] = []
        for a, b in zip(self.ticks, self.ticks[1:], strict=False):
            if start < b <= end and (b - a) * 1e3 > over_ms:
                stacks = [s for t, s in self.samples if a < t <= b]
                others = [o for t, os_ in self.others if a < t <= b for o in os_]
                gcs = [(round(d * 1e3, 1), g) for t, d, g in self.gc_pauses if a <= t <= b]
                out.append(
                    {
                        "at_s": round(a - start, 3),
                        "gap_ms": round((b - a) * 1e3, 1),
                        "gc_ms_gen": gcs,
                        "stacks": _distinct(stacks),
                        "other_threads": _distinct(others, 16),
                    }
                )
        return out

    def gc_in(self, start: float, end: float) -> dict[str, Any]:
        pauses = [(d, g) for t, d, g in self.gc_pauses if start <= t <= end]
        gen2 = [d for d, g in pauses if g in (2, -3)]
        return {
            "collections": len(pauses),
            "gen2": len(gen2),
            "max_ms": max((d for d, _ in pauses), default=0.0) * 1e3,
            "max_gen2_ms": max(gen2, default=0.0) * 1e3,
        }


def _other_threads(frames: dict[int, Any], main: int) -> list[str]:
    """Where every other thread is (innermost frames first): the one running Python
    code, not waiting, is the one that kept the GIL from the GUI thread."""
    names = {t.ident: t.name for t in threading.enumerate()}
    out: list[str] = []
    for ident, frame in frames.items():
        if ident in (main, threading.get_ident()):
            continue
        where = traceback.extract_stack(frame)[-3:]
        out.append(
            f"[{names.get(ident, ident)}] "
            + " <- ".join(
                f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in reversed(where)
            )
        )
    return out


def _distinct(stacks: list[str], limit: int = 4) -> list[str]:
    seen: list[str] = []
    for s in stacks:
        if s not in seen:
            seen.append(s)
    return seen[:limit]


async def settle(seconds: float) -> None:
    await asyncio.sleep(seconds)


class _Marks:
    """When the assistant's first delta and its message_end reached the harness listeners."""

    def __init__(self) -> None:
        self.first_delta: float | None = None
        self.end: float | None = None
        self.text_chars = 0

        self.updates = 0
        self.window: Any = None
        self.painted_versions: set[int] = set()
        self.stops: list[tuple[str, str | None]] = []
        self.text = ""  # the last assistant message's text
        self.argument_bytes = 0  # of the tool calls of the run

    def __call__(self, event: Any) -> None:
        from desktop_agent.agent import MessageEndEvent, MessageUpdateEvent
        from desktop_agent.ai import AssistantMessage, TextContent, ToolCall

        if isinstance(event, MessageUpdateEvent):
            self.updates += 1
            if self.first_delta is None:
                self.first_delta = time.perf_counter()
            if self.window is not None:  # which versions of the streaming card were painted
                chat = self.window.chat
                row = chat.model.row_at(chat.model.last_row())
                shown = chat.delegate.painted.get(row.uid) if row.streaming else None
                if shown is not None:
                    self.painted_versions.add(shown[0])
        elif isinstance(event, MessageEndEvent) and isinstance(event.message, AssistantMessage):
            blocks = event.message.content
            self.stops.append((event.message.stop_reason, event.message.error_message))
            calls = [b for b in blocks if isinstance(b, ToolCall)]
            self.argument_bytes += sum(len(json.dumps(c.arguments)) for c in calls)
            if self.end is None:  # the first assistant message's end: the measured stream
                self.end = time.perf_counter()
                self.text_chars = sum(len(b.text) for b in blocks if isinstance(b, TextContent))
            self.text = "".join(b.text for b in blocks if isinstance(b, TextContent))


def _last_words(text: str, n: int = 4) -> str:
    """The end of a reply as the card shows it (Markdown marks aside)."""
    words = [w for w in text.replace("`", " ").replace("-", " ").split() if w.strip(".,")]
    return " ".join(words[-n:]).rstrip(".,")


def _painted_text(window: Any) -> str:
    """What the chat pane last painted of its last row, if that is its current version."""
    from desktop_agent.gui.chat._parts import DocPart

    chat = window.chat
    row = chat.model.row_at(chat.model.last_row())
    seen = chat.delegate.painted.get(row.uid)
    if seen is None or seen[0] != row.version:
        return ""
    return " ".join(
        " ".join(p.doc.toPlainText().split()) for p in seen[1].parts if isinstance(p, DocPart)
    )


async def _painted_end(window: Any, text: str, timeout_s: float = 5.0) -> float:
    """Seconds until the window has painted the reply's last words (never forced)."""
    want = _last_words(text)
    t = time.perf_counter()
    while want not in _painted_text(window).replace("-", " ").replace("`", " "):
        if time.perf_counter() - t > timeout_s:
            raise AssertionError(f"the reply's end {want!r} was not painted")
        await asyncio.sleep(0.005)
    return time.perf_counter() - t


async def measure_reply(window: Any, probe: Probe, label: str, freeze: bool) -> dict[str, Any]:
    """One prompt -> streamed reply under the probe, then the idle probe as long."""
    marks = _Marks()
    marks.window = window
    unsubscribe = window.wb.harness.subscribe(marks)
    await settle(0.2)
    probe.start()
    await settle(0.05)
    t0 = time.perf_counter()
    cpu0 = time.thread_time()  # the GUI thread's CPU: a figure the machine's load leaves
    profile = _profile_start()
    await window.send(PROMPT)
    _profile_stop(profile, label)
    t_done = time.perf_counter()
    cpu_s = time.thread_time() - cpu0
    painted_s = await _painted_end(window, marks.text)
    await settle(0.05)
    probe.stop()
    unsubscribe()
    _check_reply(label, marks)
    end = marks.end or t_done
    result: dict[str, Any] = {
        "label": label,
        "gc_frozen": freeze,
        "stream": probe.window(t0, end).summary(),
        "after": probe.window(end, t_done).summary(),
        "first_delta_s": (marks.first_delta or t0) - t0,
        "stream_s": end - t0,
        "after_s": t_done - end,
        "text_chars": marks.text_chars,
        "stops": marks.stops,
        "updates": marks.updates,
        "argument_bytes": marks.argument_bytes,
        "painted_end_after_s": painted_s,
        "stream_paints": len(marks.painted_versions),
        "gui_cpu_s": cpu_s,
        "gc": probe.gc_in(t0, end),
        "gc_after": probe.gc_in(end, t_done),
        "stalls": probe.stalls(t0, t_done),
    }
    # Baseline: the same probe while idle, for the same duration.
    await settle(0.2)
    probe.start()
    i0 = time.perf_counter()
    cpu_idle = time.thread_time()
    await settle(end - t0)
    i1 = time.perf_counter()
    result["idle_gui_cpu_s"] = time.thread_time() - cpu_idle
    probe.stop()
    result["idle"] = probe.window(i0, i1).summary()
    result["idle_gc"] = probe.gc_in(i0, i1)
    return result


def _profile_start() -> Any:
    """STREAMPROBE_PROFILE=DIR: cProfile the GUI thread during each reply (a diagnostic:
    it slows the loop, so gaps measured with it are not figures)."""
    folder = os.environ.get("STREAMPROBE_PROFILE")
    if not folder:
        return None
    import cProfile

    profile = cProfile.Profile()
    profile.enable()
    return profile


def _profile_stop(profile: Any, label: str) -> None:
    if profile is not None:
        profile.disable()
        name = "".join(c if c.isalnum() else "-" for c in label)
        profile.dump_stats(os.path.join(os.environ["STREAMPROBE_PROFILE"], f"{name}.prof"))


def _check_reply(label: str, marks: _Marks) -> None:
    """The run measured what it claims: a complete reply (and for `BIG_RUN` a ``write``
    with a 1 MB argument, then the closing answer), not an error card."""
    if not marks.stops or any(stop not in ("stop", "toolUse") for stop, _ in marks.stops):
        raise AssertionError(f"{label}: the reply failed: {marks.stops}")
    if label == BIG_RUN:
        if marks.argument_bytes < BIG_ARGUMENT_BYTES or len(marks.stops) != 2:
            raise AssertionError(f"{label}: no 1 MB tool call ({marks.argument_bytes} bytes)")
    elif marks.text_chars < 1_000:
        raise AssertionError(f"{label}: a short reply ({marks.text_chars} characters)")
    if len(marks.painted_versions) < 10:  # the window painted the reply as it grew
        raise AssertionError(f"{label}: streaming card painted {marks.painted_versions}")


RUNS: tuple[tuple[str, bool], ...] = (
    ("reply 1", False),
    *((f"reply {i}", False) for i in range(2, 11)),
)
"""Ten replies of text (issue 12: under 50 ms in 10 of 10 runs); then one reply that
streams a 1 MB tool-call argument (`big_write_replies`)."""
BIG_RUN = "1 MB tool-call argument (write)"


def main(out_path: str) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from desktop_agent._launch import quick_thread_switches

    quick_thread_switches()  # as the app's launch does (`_launch.lean_start`)
    os.environ.setdefault("QT_API", "pyside6")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks._streamprobe",
            "--serve",
            str(len(RUNS)),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stdin is not None
    try:
        from desktop_agent.ai import Model

        model = Model.model_validate_json(server.stdout.readline())
        with tempfile.TemporaryDirectory(prefix="desktop-agent-bench-") as tmp:
            data = Path(tmp) / "data"
            workspace = Path(tmp) / "project"
            workspace.mkdir()
            t = time.perf_counter()
            path, size = asyncio.run(write_session(data, workspace, model))
            write_s = time.perf_counter() - t
            result = _run_window(data, model, path)
            result.update({"session_bytes": size, "messages": MESSAGES, "write_s": write_s})
        server.stdin.close()
        tail = server.stdout.read().strip().splitlines()
        result["validation_errors"] = json.loads(tail[-1])["validation_errors"] if tail else []
    finally:
        if server.poll() is None:
            server.stdin.close() if not server.stdin.closed else None
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh)


def _run_window(data: Path, model: Any, path: str) -> dict[str, Any]:
    import qasync
    from PySide6.QtWidgets import QApplication

    from desktop_agent.ai import ModelRegistry
    from desktop_agent.config import AppState, KeyStore, Settings
    from desktop_agent.gui import MainWindow
    from desktop_agent.gui._app import start_up_work
    from desktop_agent.gui._heap import freeze_when_started
    from desktop_agent.session import JsonlSessionRepo
    from desktop_agent.workbench import JsonlStore, Models, Workbench

    app = QApplication.instance() or QApplication(["desktop-agent-bench"])
    # The window's quit closes it; the loop must outlive it for the probe's own
    # `workbench.aclose()` (the app's `run_gui` does that after its loop's last window).
    QApplication.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    settings = Settings(
        default_model=model.key,
        approval={"bash": "allow", "write": "allow", "edit": "allow"},
        discover_local_servers=False,
    )
    out: dict[str, Any] = {}

    async def go() -> None:
        keystore = KeyStore(environ={"ANTHROPIC_API_KEY": "sk-bench-not-a-key"})
        workbench = Workbench(
            store=JsonlStore(JsonlSessionRepo(str(data / "sessions"), str(data / "trash")), None),
            models=Models(ModelRegistry(catalogue=[model]), keystore, settings),
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
        t = time.perf_counter()
        await window.open_session(path)
        out["open_s"] = time.perf_counter() - t
        out["items"] = window.chat.item_count()
        out["messages_shown"] = window.messages_shown
        window.chat.view.scrollToBottom()
        await settle(0.5)
        # As the app does (gui/_app.py): once the SDK import after the first paint
        # (`Workbench.warm_up`) is done, the start-up heap is frozen (gui/_heap.py). The
        # runs measure streaming, not a start-up import competing for the GIL.
        # STREAMPROBE_NO_FREEZE=1: the same without it (a diagnostic; see gui/_heap.py).
        freeze = not os.environ.get("STREAMPROBE_NO_FREEZE")
        if freeze:
            await freeze_when_started(*start_up_work(window))
            out["gc_frozen_objects"] = gc.get_freeze_count()
        out["gc_objects"] = len(gc.get_objects())
        probe = Probe()
        runs: list[dict[str, Any]] = []
        for label, _ in RUNS:
            runs.append(await measure_reply(window, probe, label, freeze))
        runs.append(await measure_reply(window, probe, BIG_RUN, freeze))
        out["runs"] = runs
        out["items_after"] = window.chat.item_count()
        window.request_quit(ask=False)
        await window.settle_tasks()
        await workbench.aclose()

    with loop:
        loop.run_until_complete(go())
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(int(sys.argv[2]))
    else:
        main(sys.argv[1])
