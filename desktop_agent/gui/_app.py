"""The Qt side of start-up: single instance, the qasync loop, the window, --smoke."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtCore import (
    QByteArray,
    QCoreApplication,
    QLibraryInfo,
    QLocale,
    QMessageLogContext,
    QtMsgType,
    QTranslator,
    qInstallMessageHandler,
)
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QApplication

from desktop_agent.gui._heap import freeze_heap, freeze_when_started, lexers_warmed
from desktop_agent.gui._identity import apply_identity, install_help_menu
from desktop_agent.gui._main_window import MainWindow
from desktop_agent.gui._smoke import smoke_payload
from desktop_agent.gui._windows import Windows
from desktop_agent.resources import resource
from desktop_agent.workbench import Workbench

log = logging.getLogger("desktop_agent.gui")


def instance_name(data_dir: str) -> str:
    """One app instance per data directory."""
    digest = hashlib.sha256(data_dir.encode()).hexdigest()[:16]
    return f"desktop-agent-{digest}"


def hand_over(name: str, request: dict[str, Any], timeout_ms: int = 1000) -> bool:
    """Send ``request`` to a running instance; True when one took it."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(timeout_ms):
        return False
    socket.write(QByteArray(json.dumps(request).encode() + b"\n"))
    socket.flush()
    socket.waitForBytesWritten(timeout_ms)
    socket.waitForReadyRead(timeout_ms)
    socket.disconnectFromServer()
    return True


class InstanceServer:
    """Listens for later launches; each hands over its request and exits."""

    def __init__(self, name: str, on_request: Callable[[dict[str, Any]], None]) -> None:
        self.server = QLocalServer()
        self.on_request = on_request
        if not self.server.listen(name):
            # A stale socket of a crashed instance (nobody answered hand_over): take over.
            QLocalServer.removeServer(name)
            self.server.listen(name)
        self.server.newConnection.connect(self._accept)

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._read(s))

    def _read(self, socket: QLocalSocket) -> None:
        data = bytes(socket.readAll().data())
        socket.write(QByteArray(b"ok\n"))
        socket.flush()
        try:
            request = json.loads(data.decode("utf-8").strip() or "{}")
        except ValueError:
            return
        if isinstance(request, dict):
            self.on_request(request)

    def close(self) -> None:
        self.server.close()


TRANSLATIONS = "translations"
"""Our ``desktop_agent_<locale>.qm`` files (and the ``desktop_agent.ts`` template) live in
``desktop_agent/resources/translations/``."""


def install_translators(app: QCoreApplication, locale: QLocale | None = None) -> list[str]:
    """Qt's own translations (``qtbase_*.qm`` from PySide6's translations folder) and ours
    for ``locale`` (the system's by default), each when present. Returns what was loaded."""
    locale = locale or QLocale.system()
    loaded: list[str] = []
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    ours = resource(TRANSLATIONS)
    for name, folder in (("qtbase", qt_dir), ("desktop_agent", str(ours))):
        translator = QTranslator(app)
        if translator.load(locale, name, "_", folder):
            app.installTranslator(translator)
            loaded.append(translator.filePath())
        else:
            translator.deleteLater()
    if loaded:
        log.info("Translations: %s", ", ".join(loaded))
    return loaded


def _qt_message(mode: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """Qt's own messages go to our log (with its redaction), not to stderr."""
    level = {
        QtMsgType.QtDebugMsg: logging.DEBUG,
        QtMsgType.QtInfoMsg: logging.INFO,
        QtMsgType.QtWarningMsg: logging.WARNING,
        QtMsgType.QtCriticalMsg: logging.ERROR,
        QtMsgType.QtFatalMsg: logging.CRITICAL,
    }.get(mode, logging.WARNING)
    if "propagateSizeHints" in message or "support raise()" in message:  # offscreen's notices
        level = logging.DEBUG
    logging.getLogger("qt").log(level, "%s", message)


def run_gui(
    *,
    make_workbench: Callable[[], Awaitable[Workbench]],
    data_dir: str,
    session: str | None,
    new: bool,
    workspace: str | None,
    smoke: bool,
    no_err_windows: bool,
    started: float,
    logs_dir: str | None = None,
    script: str | None = None,
) -> int:
    """Show the window on a qasync loop until it closes; returns the exit code.
    ``script``: a file of commands to carry out once it is shown (`run_script`)."""
    qInstallMessageHandler(_qt_message)
    app = QApplication.instance() or QApplication(["desktop-agent"])
    assert isinstance(app, QApplication)
    apply_identity(app)
    install_translators(app)
    app.setQuitOnLastWindowClosed(False)
    name = instance_name(data_dir)
    request = {"session": session, "new": new, "workspace": workspace}
    if not smoke and hand_over(name, request):
        sys.stdout.write("desktop-agent: handed over to the running window\n")
        return 0
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    holder: dict[str, Windows] = {}
    scripts: list[asyncio.Task[None]] = []

    async def report_smoke(window: MainWindow, painted_ms: int) -> None:
        await window.restored()
        # The window's tasks too (the map's), not the SDK imports for the first request.
        await window.settle_tasks(but_warm_up=True)
        payload = await smoke_payload(window.wb, painted_ms)
        payload["settled_ms"] = round((time.perf_counter() - started) * 1000)
        sys.stdout.write(json.dumps(payload) + "\n")
        sys.stdout.flush()
        window.request_quit(ask=False)

    async def start() -> None:
        workbench = await make_workbench()

        def make_window(view: int, windows: Windows, warm: bool = False) -> MainWindow:
            made = MainWindow(
                workbench, no_err_windows=no_err_windows, warm_up=warm, view=view, windows=windows
            )
            if logs_dir is not None:
                install_help_menu(made, Path(logs_dir))
            return made

        windows = holder["windows"] = Windows(workbench, make_window)
        # --smoke reports the restored, settled window and quits: no SDK warm-up.
        window = make_window(0, windows, warm=not smoke)
        if smoke:
            window.shown.connect(
                lambda: window.spawn(
                    report_smoke(window, round((time.perf_counter() - started) * 1000))
                )
            )
        else:  # (--smoke quits once painted; its report does not wait for the SDK import)
            window.shown.connect(lambda: window.spawn(freeze_when_started(*start_up_work(window))))
        if script is not None:
            from desktop_agent.gui._script import run_script

            def start_script() -> None:
                # Not one of the window's tasks: it waits for them (`settle_tasks`).
                task = asyncio.ensure_future(run_script(window, script))
                scripts.append(task)
                window.closed.connect(task.cancel)  # (it waits for lines until then)

            window.shown.connect(start_script)
        await window.restore(session, new=new, workspace=workspace)
        # The imports and the restored session live as long as the app; the collector
        # stays off until the start-up work is done (`freeze_when_started`).
        freeze_heap(collector=False)
        window.show()

    def on_request(req: dict[str, Any]) -> None:
        window = holder["windows"].current if "windows" in holder else None
        if not isinstance(window, MainWindow):
            return
        window.showNormal()
        window.raise_()
        window.activateWindow()
        if req.get("session"):
            window.spawn(window.do(window.wb.restore(str(req["session"]))))
        elif req.get("new"):
            window.spawn(window.new_session(req.get("workspace")))

    async def main() -> int:
        await start()
        windows = holder["windows"]
        _quit_on_signals(loop, windows)
        await windows.closed()
        await windows.wb.aclose()
        return windows.exit_code

    server = InstanceServer(name, on_request) if not smoke else None
    # One run_until_complete for the whole life of the app: between two of them qasync
    # runs pending task steps with no running loop (sniffio, httpx and others then fail).
    with loop:
        code: int = loop.run_until_complete(main())
    if server is not None:
        server.close()
    return code


def start_up_work(window: MainWindow) -> tuple[Callable[[], Awaitable[object]], ...]:
    """What the app waits for, in order, before it freezes its heap again
    (`freeze_when_started`): the SDK import (it starts once the restored session is
    settled), the common code lexers, the session open, the window's first redraws."""
    return (
        window.warmed_up,
        lexers_warmed,
        window.wb.opened,
        lambda: window.settle_tasks(but_warm_up=True),
    )


def _quit_on_signals(loop: asyncio.AbstractEventLoop, window: Windows) -> None:
    """SIGTERM (logout, shutdown) and SIGINT (Ctrl+C) quit like closing the window."""
    for number in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(number, lambda: window.request_quit(ask=False))
        except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - Windows
            signal.signal(number, lambda *_: window.request_quit(ask=False))
