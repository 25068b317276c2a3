"""``--script FILE``: drive the running window from a file or a pipe, one command a line.

For diagnostics ("does this computer see that one's replies, and how soon?") and for
tests that need several app processes at once (issue 23's two computers on one
database). Each command acts through the window as a person would: `send` puts the text
in the message box and clicks Send. Each command answers with one JSON line on stdout,
with ``at``, the wall-clock time (Unix seconds) it answered, so the lines of two
processes on one machine can be compared. ``FILE`` ``-`` reads standard input: a
program can read each answer before it writes the next command.

Commands (empty lines and lines starting with ``#`` are skipped):

- ``send TEXT``: send TEXT; answers when the run has ended and its entries are saved
  (``{"event": "sent", "reply": the last reply's text, "saved": bool, "save": the save
  state, "saved_at": when saving ended}``), or ``{"event": "error", "error": "not
  sent: why"}`` when the window refuses it (a read-only session, no model yet).
- ``wait TEXT [SECONDS]``: wait (30 s by default) until a message containing TEXT is in
  the transcript (``{"event": "seen", "entry_at": when its entry was written}``), else
  ``{"event": "timeout"}``.
- ``writable [SECONDS]``: wait until the open session may be written here (the computer
  that held it let go) (``{"event": "writable"}``, else ``timeout``).
- ``open REF`` (an id, a path or ``postgres:<id>``), ``new [FOLDER]``: as the menu does.
- ``state``: what ``--smoke`` prints, plus ``ref``, ``read_only`` and the save state.
- ``quit``: close as the window's close button does (a run is stopped; unsaved entries
  go to the recovery folder).

The script starts once the restored session is shown; after its last line the window
stays open (a person may go on). A command it does not know answers ``{"event":
"error"}`` and the script goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import IO, Any, Protocol

from desktop_agent.gui._smoke import smoke_payload
from desktop_agent.gui._window_api import WindowApi
from desktop_agent.utils.text import message_text

log = logging.getLogger("desktop_agent.gui.script")

WAIT_S = 30.0
POLL_S = 0.01


class ScriptedWindow(WindowApi, Protocol):
    """The window as a script drives it: its bindings, and the waits of its start-up."""

    async def open_session(self, ref: str) -> None: ...
    async def restored(self) -> None: ...
    async def settle_tasks(self, *, but_warm_up: bool = False) -> None: ...


def _say(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields, "at": time.time()}) + "\n")
    sys.stdout.flush()


def _read_lines(source: IO[str], put: Callable[[str | None], None]) -> None:
    """On a thread: each line of ``source``, then None at its end."""
    try:
        for line in source:
            put(line.rstrip("\n"))
    except (OSError, ValueError) as exc:
        log.warning("reading the script: %s", exc)
    finally:
        if source is not sys.stdin:
            source.close()
        put(None)


def _open(path: str) -> IO[str]:
    if path == "-":
        return sys.stdin
    return open(path, encoding="utf-8")  # (closed by the reading thread)


def _shown(window: ScriptedWindow, text: str) -> str | None:
    """The entry id (or "" for a card without one) of a settled transcript row whose
    message contains ``text``."""
    for row in window.chat.model.rows():
        if not row.streaming and text in message_text(row.item.message):
            return row.item.entry_id or ""
    return None


def _entry_time(window: ScriptedWindow, entry_id: str) -> float | None:
    session = window.wb.session
    if not entry_id or session is None:
        return None
    try:
        stamp = session.entry_facts(entry_id).timestamp
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except Exception:  # noqa: BLE001 - a fact for the report, never a failure
        return None


async def _until(test: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not test():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(POLL_S)
    return True


def _seconds(words: list[str], default: float) -> float:
    try:
        return float(words[0]) if words else default
    except ValueError:
        return default


async def _send(window: ScriptedWindow, text: str) -> None:
    wb = window.wb
    window.composer.set_text(text)
    window.composer.send_button.click()
    await window.settle_tasks(but_warm_up=True)
    if window.composer.text().strip() == text.strip():
        # Refused (read-only, no model yet, …): the text is left in the message box, and
        # the status bar says why.
        session = wb.session
        read_only = session is not None and session.read_only
        reason = window.status.currentMessage() or ("read-only" if read_only else "")
        window.composer.set_text("")
        _say("error", error=f"not sent: {reason or 'refused'}", text=text)
        return
    saved = await _until(lambda: wb.save.pending == 0 and wb.save.status == "saved", WAIT_S)
    reply = next(
        (
            message_text(row.item.message)
            for row in reversed(window.chat.model.rows())
            if getattr(row.item.message, "role", None) == "assistant"
        ),
        None,
    )
    _say(
        "sent",
        text=text,
        reply=reply,
        saved=saved,
        save={"status": wb.save.status, "pending": wb.save.pending, "detail": wb.save.detail},
        saved_at=time.time(),
    )


async def _state(window: ScriptedWindow) -> None:
    wb = window.wb
    payload = await smoke_payload(wb, 0)
    del payload["startup_ms"]
    session = wb.session
    payload.update(
        ref=wb.ref,
        read_only=session.read_only if session is not None else None,
        save={"status": wb.save.status, "pending": wb.save.pending, "detail": wb.save.detail},
    )
    _say("state", **payload)


async def command(window: ScriptedWindow, line: str) -> bool:
    """Carry out one line; False once the window is closing (``quit``)."""
    name, _, rest = line.strip().partition(" ")
    words = rest.split()
    if name == "send" and rest.strip():
        await _send(window, rest.strip())
    elif name == "wait" and words:
        text, seconds = rest.strip(), WAIT_S
        if len(words) > 1 and _seconds(words[-1:], -1.0) >= 0:
            text, seconds = text.rsplit(" ", 1)[0], _seconds(words[-1:], WAIT_S)
        found: list[str] = []

        def seen() -> bool:
            entry = _shown(window, text)
            if entry is not None:
                found.append(entry)
            return entry is not None

        if await _until(seen, seconds):
            _say("seen", text=text, entry_at=_entry_time(window, found[0]))
        else:
            _say("timeout", text=text)
    elif name == "writable":
        wb = window.wb
        ok = await _until(
            lambda: wb.session is not None and not wb.session.read_only, _seconds(words, WAIT_S)
        )
        _say("writable" if ok else "timeout", ref=wb.ref)
    elif name == "open" and words:
        await window.open_session(rest.strip())
        await window.settle_tasks(but_warm_up=True)
        _say("opened", ref=window.wb.ref)
    elif name == "new":
        await window.new_session(rest.strip() or None)
        await window.settle_tasks(but_warm_up=True)
        _say("opened", ref=window.wb.ref)
    elif name == "state":
        await _state(window)
    elif name == "quit":
        _say("quitting")
        window.request_quit(ask=False)
        return False
    else:
        _say("error", error=f"unknown command or missing text: {line.strip()!r}")
    return True


async def run_script(window: ScriptedWindow, path: str) -> None:
    """Read ``path`` (``-``: standard input) on a thread and carry out its lines in
    order, once the restored session is shown; ends when the window closes."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()
    try:
        source = _open(path)
    except OSError as exc:
        _say("error", error=f"cannot read the script {path}: {exc.strerror}")
        return

    def put(line: str | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the app quit
            loop.call_soon_threadsafe(lines.put_nowait, line)

    reader = threading.Thread(target=_read_lines, args=(source, put), name="script", daemon=True)
    reader.start()
    await window.restored()
    await window.settle_tasks(but_warm_up=True)
    _say("ready", ref=window.wb.ref)
    while (line := await lines.get()) is not None:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not await command(window, line):
            return
