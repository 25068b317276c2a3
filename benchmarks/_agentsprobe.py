"""Several agents at once (issue 22, Acceptance), measured in fresh interpreters.

``python -m benchmarks._agentsprobe gap OUT_JSON``: `MainWindow` (offscreen, a real qasync
loop) with a 10 ms `QTimer` probe; the worst gap between ticks while one session's reply
streams (the baseline), then while five sessions' replies stream at once (four started
and left for a new session with Ctrl+N's route, the fifth shown). The provider test
server runs in its own process (``--serve``), so its request parsing does not compete for
this process's GIL (a real provider is remote); every request gets the same long reply.

``python -m benchmarks._agentsprobe memory N DATA_DIR OUT_JSON``: a Qt-free workbench over
DATA_DIR (whose sessions folder holds the big sessions) opens N of them, each kept open by
a run that waits on the server (a session not shown is released once idle); the peak RSS
of the process goes to OUT_JSON. One process per N, so each peak is its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SESSIONS = 5
DELTAS = 600
DELTA_DELAY_S = 0.005


def serve(hold: bool) -> None:
    """``--serve [hold]``: a ProviderServer whose every answer is the same long reply (or
    one that holds its connection until stdin closes); prints the model, then waits."""
    from tests.helpers.provider_server import ProviderServer, Reply

    with ProviderServer() as server:
        if hold:
            server.default_reply = Reply(text=["held ", "reply"], hold_after=1)
        else:
            words = [f"word{i} " for i in range(DELTAS)]
            for i in range(0, DELTAS, 60):
                words[i] = "\n\nA paragraph of the answer: " + words[i]
            server.default_reply = Reply(text=words, delay_s=DELTA_DELAY_S)
        sys.stdout.write(server.model("anthropic-messages").model_dump_json() + "\n")
        sys.stdout.flush()
        sys.stdin.read()  # until the probe is done
        server.release.set()
        sys.stdout.write(json.dumps({"validation_errors": server.validation_errors}) + "\n")


def _server(hold: bool) -> tuple[subprocess.Popen[str], Any]:
    from desktop_agent.ai import Model

    args = [sys.executable, "-m", "benchmarks._agentsprobe", "--serve"] + (["hold"] if hold else [])
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, Model.model_validate_json(proc.stdout.readline())


def _stop_server(proc: subprocess.Popen[str]) -> list[str]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    tail = proc.stdout.read().strip().splitlines()
    proc.wait(10)
    errors: list[str] = json.loads(tail[-1])["validation_errors"] if tail else []
    return errors


async def _until(predicate: Any, limit_s: float = 60.0) -> None:
    for _ in range(int(limit_s * 100)):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise TimeoutError(f"waited {limit_s} s")


# --------------------------------------------------------------------------- gaps


def gap(out_path: str) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtWidgets import QApplication

    from benchmarks._streamprobe import Probe
    from desktop_agent.gui import MainWindow
    from tests.helpers.workbench import make_workbench

    sys.setswitchinterval(0.001)  # as the app's launch does
    proc, model = _server(hold=False)
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # the loop ends with main(), not with the window
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    probe = Probe()  # a 10 ms QTimer, a watchdog sampling the stack of every stall
    result: dict[str, Any] = {}

    def worst(start: float, end: float) -> float:
        return float(probe.window(start, end).summary()["max_ms"])

    async def main() -> None:
        tmp = Path(tempfile.mkdtemp(prefix="agents-gap-"))
        workspace = tmp / "project"
        workspace.mkdir()
        wb = make_workbench(tmp / "data", model)
        await wb.start()
        window = MainWindow(wb, no_err_windows=True)
        window.resize(1200, 760)
        window.show()
        await window.do(wb.new_session(str(workspace)))
        await window.settle_tasks()
        probe.start()
        # warm-up: the SDK's import and the first connection are not what is measured
        await window.send("warm up")
        await window.settle_tasks()

        start = time.perf_counter()
        await window.send("one session alone")
        await window.presenter.settled()
        result["one"] = {"max_ms": worst(start, time.perf_counter())}
        result["one"]["seconds"] = time.perf_counter() - start

        runs: list[asyncio.Task[Any]] = []
        start = time.perf_counter()
        for i in range(SESSIONS):
            await window.do(wb.new_session(str(workspace)))
            runs.append(window.spawn(window.send(f"session {i} of five")))
            await _until(lambda: wb.running)
        overlap_from = time.perf_counter()
        all_running = wb.runs_active
        await asyncio.wait(runs)
        await window.presenter.settled()
        end = time.perf_counter()
        result["stalls"] = probe.stalls(start, end)
        result["five_cpu_ms"] = probe.window(start, end).summary()["max_cpu_ms"]
        result["five"] = {
            "max_ms": worst(start, end),
            "max_ms_all_running": worst(overlap_from, end),
            "seconds": end - start,
            "runs_active_at_once": all_running,
        }
        result["stop_reasons"] = [_last_stop(r.path) for r in wb.rows[:SESSIONS]]
        probe.stop()
        window.request_quit(ask=False)
        await _until(lambda: window._closed_ok)
        await window.settle_tasks()
        await wb.aclose()

    with loop:
        loop.run_until_complete(main())
    result["validation_errors"] = _stop_server(proc)
    Path(out_path).write_text(json.dumps(result))


def _last_stop(path: str) -> str | None:
    entry = json.loads(Path(path).read_text().splitlines()[-1])
    reason: str | None = entry.get("message", {}).get("stopReason")
    return reason


# --------------------------------------------------------------------------- memory


def memory(count: int, data_dir: str, out_path: str) -> None:
    from tests.helpers.workbench import make_workbench

    proc, model = _server(hold=True)

    async def main() -> dict[str, Any]:
        wb = make_workbench(Path(data_dir), model)
        await wb.start()
        refs = sorted(r.path for r in wb.rows)[:count]
        runs = []
        for ref in refs:
            await wb.open(ref)
            await wb.opened()
            await _until(lambda ref=ref: wb.ref == ref)
            await wb.choose_model(model.key)  # (the generated sessions name other models)
            runs.append(asyncio.ensure_future(wb.send("keep this session open")))
            await _until(lambda: wb.running)
        await wb.settled()
        rss = _rss_mb()
        open_now = len(wb.open_sessions)
        await wb.shutdown(stop=True)
        await asyncio.wait(runs)
        await wb.aclose()
        return {"sessions": count, "open": open_now, "rss_mb": rss}

    result = asyncio.run(main())
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["validation_errors"] = _stop_server(proc)
    Path(out_path).write_text(json.dumps(result))


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(hold=sys.argv[2:] == ["hold"])
    elif sys.argv[1] == "gap":
        gap(sys.argv[2])
    else:
        memory(int(sys.argv[2]), sys.argv[3], sys.argv[4])
