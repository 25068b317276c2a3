"""Start-up failures are visible; a windowed build (no stdout/stderr) never crashes on them."""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

import desktop_agent.app
from desktop_agent import _launch
from desktop_agent.gui import InstanceServer, instance_name

ROOT = Path(__file__).resolve().parents[2]

# A child whose streams are None, as in a windowed PyInstaller build or pythonw.
WINDOWED = (
    "import sys\n"
    "sys.stdout = None\n"
    "sys.stderr = None\n"
    "{prelude}\n"
    "from desktop_agent._launch import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


def fake_dialog_tool(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A ``zenity`` on PATH that records its arguments (the Linux native message box)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "zenity-args.json"
    tool = bin_dir / "zenity"
    tool.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n",
        encoding="utf-8",
    )
    tool.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", DISPLAY=":97")
    env.pop("WAYLAND_DISPLAY", None)
    return env, record


def run_windowed(
    args: list[str], env: dict[str, str], prelude: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WINDOWED.format(prelude=prelude), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
        check=False,
    )


@pytest.mark.slow
def test_missing_qt_shows_the_native_box_with_the_log_path(tmp_path: Path) -> None:
    """PySide6 cannot load (say libGL is missing): the OS box names the log, exit 1."""
    env, record = fake_dialog_tool(tmp_path)
    data = tmp_path / "data"
    done = run_windowed(
        ["--data-dir", str(data)], env, prelude="sys.modules['PySide6'] = None  # no Qt"
    )
    assert done.returncode == 1, done
    log = data / "logs" / "desktop-agent.log"
    text = log.read_text(encoding="utf-8")
    assert "Desktop Agent could not start" in text and "ModuleNotFoundError" in text
    assert "Traceback" in text
    args = json.loads(record.read_text(encoding="utf-8"))
    assert "--error" in args
    message = next(a for a in args if a.startswith("--text="))
    assert "could not start" in message and str(log) in message and "PySide6" in message


@pytest.mark.slow
def test_argument_error_in_a_windowed_build_is_shown(tmp_path: Path) -> None:
    """argparse's usage went to a missing stderr: the box shows it, the exit status stays 2."""
    env, record = fake_dialog_tool(tmp_path)
    done = run_windowed(["--data-dir", str(tmp_path / "d"), "--bogus"], env)
    assert done.returncode == 2
    message = next(
        a for a in json.loads(record.read_text(encoding="utf-8")) if a.startswith("--text=")
    )
    assert "unrecognized arguments: --bogus" in message


@pytest.mark.slow
def test_second_launch_without_streams_hands_over(
    qtbot: QtBot, qapp: QApplication, tmp_path: Path
) -> None:
    """The windowed build's second launch wrote "handed over" to a None stdout (AttributeError)."""
    data = (tmp_path / "data").resolve()
    received: list[dict[str, Any]] = []
    server = InstanceServer(instance_name(str(data)), received.append)
    try:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        with subprocess.Popen(
            [sys.executable, "-c", WINDOWED.format(prelude=""), "--data-dir", str(data), "--new"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as child:
            deadline = time.monotonic() + 60
            while child.poll() is None and time.monotonic() < deadline:
                qapp.processEvents()
                time.sleep(0.01)
            out, err = child.communicate(timeout=5)
            assert child.returncode == 0, err
        assert out == b"" and err == b""  # nothing reached the (missing) streams
        qtbot.waitUntil(lambda: bool(received), timeout=5000)
        assert received[0]["new"] is True
    finally:
        server.close()


def test_guard_streams_gives_missing_streams_a_sink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", None)
    sinks = _launch.guard_streams()
    assert len(sinks) == 2
    print("to stdout")
    sys.stderr.write("x" * 10_000 + "tail")
    assert sinks[0].tail() == "to stdout\n"
    assert sinks[1].tail().endswith("tail") and len(sinks[1].tail()) == 8192


def test_failure_before_the_window_shows_a_qt_box(
    qtbot: QtBot, qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(argv: list[str]) -> int:
        raise RuntimeError("settings exploded")

    monkeypatch.setattr(desktop_agent.app, "run", broken)
    monkeypatch.setattr(_launch, "show_native_box", lambda *a: pytest.fail("Qt box expected"))
    seen: dict[str, Any] = {}

    def close_box() -> None:
        box = next(
            (w for w in qapp.topLevelWidgets() if w.objectName() == "startupFailureBox"), None
        )
        if box is None:
            QTimer.singleShot(20, close_box)
            return
        assert isinstance(box, QMessageBox)
        seen["text"] = box.text()
        seen["buttons"] = [b.text() for b in box.buttons()]
        box.reject()

    QTimer.singleShot(20, close_box)
    status = _launch.main(["--data-dir", str(tmp_path)])
    assert status == 1
    log = tmp_path / "logs" / "desktop-agent.log"
    assert "RuntimeError: settings exploded" in seen["text"] and str(log) in seen["text"]
    assert "Open log" in seen["buttons"]
    assert "settings exploded" in log.read_text(encoding="utf-8")


def test_no_err_windows_reports_on_stderr_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(argv: list[str]) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(desktop_agent.app, "run", broken)
    monkeypatch.setattr(_launch, "show_qt_box", lambda *a: pytest.fail("no box expected"))
    monkeypatch.setattr(_launch, "show_native_box", lambda *a: pytest.fail("no box expected"))
    assert _launch.main(["--data-dir", str(tmp_path), "--no-err-windows"]) == 1
    assert gc.isenabled()  # a failed start gives the collector back
    err = capsys.readouterr().err
    assert "could not start" in err and "No space left on device" in err
    assert str(tmp_path / "logs" / "desktop-agent.log") in err


def test_unwritable_data_dir_logs_to_the_temp_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    path = _launch.log_failure("boom", ValueError("bad"), ["--data-dir", str(blocker / "d")])
    assert path == tmp_path / _launch.FALLBACK_LOG_NAME
    assert "ValueError: bad" in path.read_text(encoding="utf-8")


def test_native_box_commands() -> None:
    command = _launch.native_box_command("T", "text")
    if sys.platform.startswith("linux") and command is not None:
        assert Path(command[0]).name in {"zenity", "kdialog", "xmessage"}


@pytest.mark.slow
def test_lean_start_pauses_the_collector_and_skips_the_httpx_cli() -> None:
    """The launch starts without the cyclic GC (the app turns it on once its session is
    shown), without httpx's command-line tool, which imports rich and click, and with the
    1 ms GIL switch interval that keeps the GUI thread responsive."""
    assert importlib.util.find_spec("rich") and importlib.util.find_spec("click")  # (dev venv)
    code = (
        "import gc, json, sys\n"
        "from desktop_agent._launch import lean_start\n"
        "was_on = lean_start()\n"
        "import httpx\n"
        "print(json.dumps([was_on, gc.isenabled(), sorted({'rich', 'click'} & set(sys.modules)),"
        " callable(httpx.main), sys.getswitchinterval()]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == [True, False, [], True, 0.001]
