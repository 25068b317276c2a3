"""Composition root: arguments, directories, logging, hooks, the loop, then the window.

This is the first slice of the app (issue 5 builds the full window): it restores the most
recent session of the workspace on its saved leaf and shows that branch read-only.
"""

from __future__ import annotations

import argparse
import json
import logging
import logging.handlers
import os
import re
import sys
import time
from pathlib import Path
from types import TracebackType

import platformdirs

from desktop_agent.session import JsonlSessionRepo, Session, SessionError, SessionMetadata

APP_NAME = "DesktopAgent"
log = logging.getLogger("desktop_agent")

_SECRET = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9_\-]{16,}|(?i:bearer)\s+[A-Za-z0-9._\-]{12,}"
    r"|(?i:x-api-key|api[_-]?key)[\"':= ]+[A-Za-z0-9._\-]{12,})"
)


class RedactingFilter(logging.Filter):
    """Replace anything shaped like an API key in every record before it is written."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _SECRET.sub("[REDACTED]", message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="desktop-agent", description="Desktop Agent")
    parser.add_argument("--data-dir", type=Path, help="use this folder instead of app data")
    parser.add_argument("--workspace", type=Path, help="the project folder to work in")
    parser.add_argument("--session", help="open this session (id or .jsonl path)")
    parser.add_argument("--new", action="store_true", help="start a new session")
    parser.add_argument(
        "--no-err-windows", action="store_true", help="report errors on stderr, not dialogs"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="restore, print one JSON line after first paint, exit"
    )
    return parser.parse_args(argv)


def setup_logging(log_dir: Path) -> None:
    log_dir.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(
        log_dir / "desktop-agent.log", maxBytes=2_000_000, backupCount=3, encoding="utf-8"
    )
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def install_excepthooks() -> None:
    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        log.critical("Unhandled exception", exc_info=(kind, value, tb))
        sys.__excepthook__(kind, value, tb)

    sys.excepthook = hook


async def restore(repo: JsonlSessionRepo, args: argparse.Namespace) -> Session | None:
    """The session to show: the one asked for, else the most recent of the workspace."""
    target: SessionMetadata | str | None = None
    if args.session:
        target = args.session
        if not str(target).endswith(".jsonl"):
            found = [m for m in await repo.list() if m.id == args.session]
            target = found[0] if found else None
    elif not args.new:
        workspace = str(args.workspace.resolve()) if args.workspace else None
        sessions = await repo.list(cwd=workspace) if workspace else await repo.list()
        target = sessions[0] if sessions else None
    if target is None:
        return None
    try:
        return await repo.open(target)
    except SessionError as exc:
        log.error("Could not open session %s: %s", target, exc.message)
        sys.stderr.write(f"desktop-agent: could not open session: {exc.message}\n")
        return None


def _print_json(payload: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def run(argv: list[str]) -> int:
    started = time.perf_counter()
    args = parse_args(argv)
    data_dir = (
        args.data_dir.resolve()
        if args.data_dir
        else Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    )
    setup_logging(data_dir / "logs")
    install_excepthooks()
    log.info("Starting Desktop Agent, data dir %s", data_dir)

    # Qt is imported only here and in gui/ (import-linter contract).
    from desktop_agent.gui import run_main_window

    repo = JsonlSessionRepo(data_dir / "sessions")
    return run_main_window(
        repo=repo,
        restore=lambda: restore(repo, args),
        smoke=args.smoke,
        started=started,
        report=_print_json,
    )


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("QT_API", "pyside6")
    sys.exit(run(sys.argv[1:]))

__all__ = ["RedactingFilter", "parse_args", "restore", "run"]
