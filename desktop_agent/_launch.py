"""The process entry around `desktop_agent.app.run`: guarded streams, visible start-up failures.

Two things every launch needs before anything else runs:

- **Streams that exist.** A windowed build (PyInstaller ``console=False`` on Windows,
  ``pythonw``) starts with ``sys.stdout`` and ``sys.stderr`` set to ``None``, so any
  ``sys.stdout.write`` (the second launch's "handed over" line, ``--smoke``'s JSON line,
  argparse's usage, logging's last-resort handler) raised ``AttributeError``. `guard_streams`
  gives each missing stream a handle the parent passed (a pipe or file inherited through the
  Windows std handles, so ``--smoke`` still prints its line to CI), or else a sink that keeps
  the last few kilobytes written, to show them if start-up fails.
- **A failure you can see.** An exception (or a non-zero exit) that escapes ``run`` is logged
  with its traceback to the app's log (or, when the data folder cannot be written, to a log
  in the temp folder), and shown in a native message box that names the log file and opens
  it with one click: Qt's box when Qt works, else the OS's own (``MessageBoxW`` on Windows,
  ``osascript`` on macOS, ``zenity``/``kdialog``/``xmessage`` on Linux). With
  ``--no-err-windows`` or ``--smoke`` the same text goes to stderr only; the exit status is 1.

And one thing that makes it quicker, `lean_start`: the cyclic garbage collector waits
until the restored session is shown (`desktop_agent.gui.freeze_heap` freezes what start-up
built and turns it back on). Start-up allocates hundreds of thousands of objects that live
as long as the app (modules, classes, the window, the session's columns), so each of the
~500 collections it triggered rescanned them for nothing: 0.2-0.25 s of a 100 MB session's
restore. The pattern is the one the CPython docs give for `gc.freeze` (disable early,
freeze, enable). Reference counting frees everything else as usual.
"""

from __future__ import annotations

import gc
import io
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TextIO

log = logging.getLogger("desktop_agent.launch")

TITLE = "Desktop Agent"
LOG_NAME = "desktop-agent.log"
FALLBACK_LOG_NAME = "desktop-agent-startup.log"


class Sink(io.TextIOBase):
    """A text stream for a process that has none: accepts everything, keeps the tail."""

    def __init__(self, keep: int = 8192) -> None:
        super().__init__()
        self._keep = keep
        self._text = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._text = (self._text + text)[-self._keep :]
        return len(text)

    def tail(self) -> str:
        return self._text


def _inherited_windows_stream(std_handle: int) -> TextIO | None:
    """The console/pipe/file handle a parent gave a GUI-subsystem process, as a text stream."""
    if sys.platform == "win32":
        import ctypes
        import msvcrt

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.GetStdHandle(std_handle)
        if handle in (0, None, -1, ctypes.c_void_p(-1).value):
            return None
        if kernel32.GetFileType(handle) == 0:  # FILE_TYPE_UNKNOWN: not a real handle
            return None
        try:
            fd = msvcrt.open_osfhandle(handle, os.O_WRONLY | os.O_TEXT)
            return open(fd, "w", encoding="utf-8", errors="replace", buffering=1)
        except OSError:
            return None
    return None


def guard_streams() -> list[Sink]:
    """Give ``sys.stdout``/``sys.stderr`` a stream when they are ``None``; returns the sinks."""
    sinks: list[Sink] = []
    for name, std_handle in (("stdout", -11), ("stderr", -12)):
        if getattr(sys, name) is not None:
            continue
        stream: TextIO | None = _inherited_windows_stream(std_handle)
        if stream is None:
            sink = Sink()
            sinks.append(sink)
            stream = sink  # type: ignore[assignment]
        setattr(sys, name, stream)
    return sinks


def _wants_no_windows(argv: Sequence[str]) -> bool:
    return "--no-err-windows" in argv or "--smoke" in argv


def _data_dir_arg(argv: Sequence[str]) -> Path | None:
    for i, arg in enumerate(argv):
        if arg == "--data-dir" and i + 1 < len(argv):
            return Path(argv[i + 1])
        if arg.startswith("--data-dir="):
            return Path(arg.split("=", 1)[1])
    return None


def _file_handler_path() -> Path | None:
    """The app's log file, when ``run`` got as far as setting its handler up."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler) and handler.baseFilename.endswith(LOG_NAME):
            return Path(handler.baseFilename)
    return None


def _redactor() -> logging.Filter | None:
    try:
        from desktop_agent.utils import RedactingFilter
    except Exception:  # noqa: BLE001 - the import itself may be what failed
        return None
    return RedactingFilter()


def _candidate_logs(argv: Sequence[str]) -> list[Path]:
    candidates: list[Path] = []
    try:
        from desktop_agent.config import resolve_dirs

        data_dir = _data_dir_arg(argv)
        candidates.append(resolve_dirs(data_dir.resolve() if data_dir else None).logs / LOG_NAME)
    except Exception:  # noqa: BLE001 - fall back to the temp folder below
        pass
    candidates.append(Path(tempfile.gettempdir()) / FALLBACK_LOG_NAME)
    return candidates


def log_failure(message: str, error: BaseException | None, argv: Sequence[str]) -> Path | None:
    """Write ``message`` (and the traceback) to the app's log; returns the log file's path.

    The app's own log handler is used when ``run`` got as far as setting it up; otherwise
    the log file of the data folder named on the command line (or the default one), and
    when that cannot be written, one in the temp folder.
    """
    exc_info = (type(error), error, error.__traceback__) if error is not None else None
    path = _file_handler_path()
    if path is not None:
        log.critical("%s", message, exc_info=exc_info)
        for handler in logging.getLogger().handlers:
            handler.flush()
        return path
    redactor = _redactor()
    for candidate in _candidate_logs(argv):
        try:
            candidate.parent.mkdir(parents=True, exist_ok=True)
            handler = logging.FileHandler(candidate, encoding="utf-8")
        except OSError:
            continue
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        if redactor is not None:
            handler.addFilter(redactor)
        log.addHandler(handler)
        try:
            log.critical("%s", message, exc_info=exc_info)
        finally:
            log.removeHandler(handler)
            handler.close()
        return candidate
    return None


def failure_text(error: BaseException | None, detail: str, log_path: Path | None) -> str:
    lines = ["Desktop Agent could not start."]
    if error is not None:
        lines += ["", "".join(traceback.format_exception_only(type(error), error)).strip()]
    if detail.strip():
        lines += ["", detail.strip()[-2000:]]
    if log_path is not None:
        lines += ["", f"The details are in the log: {log_path}"]
    else:
        lines += ["", "No log could be written (the data and temp folders are not writable)."]
    return "\n".join(lines)


# ------------------------------------------------------------------ message boxes


def _has_display() -> bool:
    """Whether a window can be shown: Qt aborts the process when it cannot connect."""
    if sys.platform in ("win32", "darwin") or os.environ.get("QT_QPA_PLATFORM"):
        return True
    wayland = os.environ.get("WAYLAND_DISPLAY")
    if wayland:
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        if os.path.isabs(wayland) or os.path.exists(os.path.join(runtime, wayland)):
            return True
    display = os.environ.get("DISPLAY", "")
    match = re.fullmatch(r":(\d+)(\.\d+)?", display)
    if match:  # a local X server listens on its socket (a stale DISPLAY would abort Qt)
        return os.path.exists(f"/tmp/.X11-unix/X{match.group(1)}")
    return bool(display)  # remote (ssh -X): trust it


def show_qt_box(title: str, text: str, log_path: Path | None) -> bool:
    """Qt's critical message box with "Open log" (False when Qt cannot be used)."""
    if not _has_display():  # Qt would abort the process without a display
        return False
    try:
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices
        from PySide6.QtWidgets import QApplication, QMessageBox
    except Exception:  # noqa: BLE001 - missing Qt libraries are one of the failures we report
        return False
    app = QApplication.instance() or QApplication(["desktop-agent"])
    try:
        from desktop_agent.gui._identity import apply_identity

        if isinstance(app, QApplication):
            apply_identity(app)
    except Exception:  # noqa: BLE001 - a box without our icon is still a box
        pass
    box = QMessageBox(QMessageBox.Icon.Critical, title, text)
    box.setObjectName("startupFailureBox")
    open_log = None
    if log_path is not None:
        open_log = box.addButton("Open log", QMessageBox.ButtonRole.ActionRole)
        open_log.setObjectName("openLogButton")
    box.addButton(QMessageBox.StandardButton.Close)
    box.exec()
    if open_log is not None and box.clickedButton() is open_log and log_path is not None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_path)))
    return True


def native_box_command(title: str, text: str) -> list[str] | None:
    """The OS's own dialog command for macOS and Linux (None when there is none)."""
    if sys.platform == "darwin":
        script = (
            "on run argv\n"
            "display alert (item 1 of argv) message (item 2 of argv) as critical\n"
            "end run"
        )
        return ["osascript", "-e", script, title, text]
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return None
    for tool, args in (
        ("zenity", ["--error", "--no-markup", f"--title={title}", f"--text={text}"]),
        ("kdialog", ["--title", title, "--error", text]),
        ("xmessage", ["-center", "-title", title, text]),
    ):
        found = shutil.which(tool)
        if found:
            return [found, *args]
    return None


def show_native_box(title: str, text: str) -> bool:
    if sys.platform == "win32":
        import ctypes

        MB_ICONERROR, MB_TOPMOST = 0x10, 0x40000
        ctypes.windll.user32.MessageBoxW(None, text, title, MB_ICONERROR | MB_TOPMOST)
        return True
    command = native_box_command(title, text)
    if command is None:
        return False
    try:
        subprocess.run(command, check=False, timeout=3600)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def report_failure(
    error: BaseException | None, argv: Sequence[str], sinks: Sequence[Sink] = ()
) -> int:
    """Log, print and show a start-up failure; the process's exit status (1)."""
    detail = "".join(sink.tail() for sink in sinks)
    log_path = log_failure("Desktop Agent could not start", error, argv)
    text = failure_text(error, detail, log_path)
    try:
        sys.stderr.write(f"desktop-agent: {text}\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass
    if not _wants_no_windows(argv) and not show_qt_box(TITLE, text, log_path):
        show_native_box(TITLE, text)
    return 1


def self_test(server_url: str | None = None) -> dict[str, object]:
    """What a frozen bundle must be able to load though ``--smoke`` never touches it.

    The provider SDKs (imported by name on first use), their clients and TLS set-up, the
    packaged resources and the keyring backend. With ``server_url`` (a local test server
    speaking the three wire APIs, tests/helpers/provider_server.py) one reply is also streamed
    through each API, so the SDKs' lazily imported streaming code is exercised too.
    """
    import asyncio
    import ssl

    import anthropic
    import openai

    from desktop_agent.ai import load_catalogue
    from desktop_agent.config import platform_keyring
    from desktop_agent.resources import ICON_SVG, resource

    openai.AsyncOpenAI(api_key="self-test", base_url="http://127.0.0.1:9/v1")
    anthropic.AsyncAnthropic(api_key="self-test", base_url="http://127.0.0.1:9")
    httpx2 = sys.modules["httpx2"]  # both SDKs import it
    httpx2.create_ssl_context()
    ssl.create_default_context()
    backend = platform_keyring()
    result: dict[str, object] = {
        "self_test": "ok",
        "openai": openai.__version__,
        "anthropic": anthropic.__version__,
        "models": len(load_catalogue()),
        "icon_bytes": len(resource(ICON_SVG).read_bytes()),
        "keyring": f"{type(backend).__module__}.{type(backend).__name__}",
        "frozen": bool(getattr(sys, "frozen", False)),
    }
    if server_url is not None:
        result["replies"] = asyncio.run(_stream_each_api(server_url.rstrip("/")))
    return result


async def _stream_each_api(url: str) -> dict[str, str]:
    from desktop_agent.ai import (
        AssistantMessage,
        LlmContext,
        Model,
        StreamOptions,
        TextContent,
        UserMessage,
        stream,
    )

    apis: tuple[
        tuple[Literal["anthropic-messages", "openai-responses", "openai-completions"], str, str],
        ...,
    ] = (
        ("anthropic-messages", "anthropic", url),
        ("openai-responses", "openai", f"{url}/v1"),
        ("openai-completions", "local", f"{url}/v1"),
    )
    replies: dict[str, str] = {}
    for api, provider, base_url in apis:
        model = Model(
            id="self-test",
            name="self-test",
            api=api,
            provider=provider,
            base_url=base_url,
            context_window=8192,
            max_tokens=1024,
        )
        context = LlmContext(
            messages=[UserMessage(content=[TextContent(text="self-test")], timestamp=1)]
        )
        async with stream(model, context, StreamOptions(api_key="self-test")) as events:
            async for _event in events:
                pass
        final = events.final_message
        if not isinstance(final, AssistantMessage) or final.stop_reason == "error":
            raise RuntimeError(f"{api}: {getattr(final, 'error_message', final)}")
        replies[api] = "".join(b.text for b in final.content if isinstance(b, TextContent))
    return replies


def main(argv: Sequence[str] | None = None) -> int:
    """Run the app; a failure that escapes it is logged and shown, never silent."""
    sinks = guard_streams()
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--self-test"] and len(args) <= 2:  # packaging/check_linux.py
        import json

        sys.stdout.write(json.dumps(self_test(args[1] if len(args) == 2 else None)) + "\n")
        sys.stdout.flush()
        return 0
    collecting = lean_start()
    try:
        from desktop_agent.app import run

        return run(args)
    except SystemExit as exc:
        if exc.code in (0, None):
            return 0
        if not sinks:  # a terminal saw argparse's message already
            raise
        report_failure(None, args, sinks)
        return exc.code if isinstance(exc.code, int) else 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the whole point: nothing escapes unseen
        return report_failure(exc, args, sinks)
    finally:
        if collecting:
            gc.enable()  # (the app did once its session was shown; a failed start did not)


SWITCH_INTERVAL_S = 0.001


def quick_thread_switches() -> None:
    """Provider requests and index scans run on worker threads; a shorter GIL switch
    interval than CPython's 5 ms hands the GIL back to the GUI thread sooner (measured:
    121 ms worst gap while a reply streamed into a 2,000-message session, 30 ms with
    1 ms). For the whole interpreter, so it is set here, at the launch, not by a window."""
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))


def lean_start() -> bool:
    """Start-up without the cyclic GC (see the module's docstring) and without httpx's
    command-line tool: ``import httpx`` imports ``httpx._main`` (rich, click) when both
    happen to be installed (import-linter brings them into a developer's venv; a user's
    Python may have them too), 50-60 ms the app never uses; with quick thread switches
    (`quick_thread_switches`). Returns whether the GC was on."""
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    quick_thread_switches()
    collecting = gc.isenabled()
    gc.disable()
    return collecting
