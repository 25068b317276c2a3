"""Composition root: arguments, directories, logging, hooks, then every object, once.

Read top to bottom, this is everything that exists at start-up and in which order
(STYLE.md habit 2): command line -> directories -> logging with secret redaction ->
excepthooks -> settings and state -> the Qt application and loop (gui.run_gui) ->
model registry, keys, the session store -> the workbench (keys loaded, store ready,
model discovery started in the background) -> the main window, given the workbench.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import json
import logging
import logging.handlers
import os
import sys
import threading
import time
from pathlib import Path
from types import TracebackType

from desktop_agent.ai import ModelRegistry
from desktop_agent.checkpoints import CheckpointStore
from desktop_agent.config import (
    DATABASE_KEY,
    DATABASE_PASSWORD_ENV,
    AppDirs,
    KeyFile,
    KeyStore,
    KeyStoreError,
    Settings,
    database_url_problem,
    default_pi_agent_dir,
    default_pi_sessions_dir,
    load_settings,
    load_state,
    make_undumpable,
    pi_sessions_dir,
    platform_keyring,
    resolve_dirs,
    save_settings,
    save_state,
    split_password,
)
from desktop_agent.session import JsonlSessionRepo, SessionIndex, SqliteSessionRepo
from desktop_agent.tools import BashTool, built_in_tools, detect_sandbox
from desktop_agent.utils import RedactingFilter
from desktop_agent.workbench import (
    JsonlStore,
    McpServers,
    Models,
    SessionStore,
    Shared,
    SqliteStore,
    Workbench,
    connect_shared,
    copy_sessions,
)

log = logging.getLogger("desktop_agent")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="desktop-agent", description="Desktop Agent")
    parser.add_argument("--data-dir", type=Path, help="use this folder instead of the app data")
    parser.add_argument("--workspace", type=Path, help="the project folder to work in")
    parser.add_argument("--session", help="open this session (id or .jsonl path)")
    parser.add_argument("--new", action="store_true", help="start a new session")
    parser.add_argument(
        "--store",
        choices=("jsonl", "sqlite", "postgres"),
        help="keep sessions as Pi-compatible JSONL files (default), in one SQLite database,"
        " or on a PostgreSQL server shared by several computers (--database-url)",
    )
    parser.add_argument(
        "--database-url",
        metavar="URL",
        help="the PostgreSQL server of --store postgres (postgresql://user@host/db; a"
        " password in it is kept in the keychain)",
    )
    parser.add_argument(
        "--copy-sessions-from",
        choices=("jsonl", "sqlite", "postgres"),
        metavar="STORE",
        help="copy every session of that store (jsonl, sqlite or postgres) into the one"
        " --store names, entries byte for byte, print what was copied and exit",
    )
    parser.add_argument(
        "--pi-sessions-dir",
        type=Path,
        metavar="DIR",
        help="list the Pi coding agent's sessions from this folder (default: the"
        " pi_sessions setting, else where Pi keeps them; off when it does not exist)",
    )
    parser.add_argument(
        "--no-err-windows", action="store_true", help="report errors on stderr, not in dialogs"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="restore, print one JSON line after first paint, exit"
    )
    parser.add_argument(
        "--script",
        metavar="FILE",
        help="once the window is shown, carry out FILE's commands (- reads standard input),"
        " one a line, each answered with a JSON line on stdout: send TEXT, wait TEXT"
        " [SECONDS], writable [SECONDS], open REF, new [FOLDER], state, quit (see"
        " desktop_agent/gui/_script.py)",
    )
    return parser.parse_args(argv)


def setup_logging(dirs: AppDirs, redactor: RedactingFilter) -> None:
    dirs.logs.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(
        dirs.logs / "desktop-agent.log", maxBytes=2_000_000, backupCount=3, encoding="utf-8"
    )
    handler.addFilter(redactor)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def install_excepthooks(dirs: AppDirs) -> None:
    """Unhandled exceptions (including from qasync slots) are logged, never lost."""

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        log.critical("Unhandled exception", exc_info=(kind, value, tb))
        sys.__excepthook__(kind, value, tb)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        log.critical(
            "Unhandled exception in thread %s",
            args.thread.name if args.thread else "?",
            exc_info=(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback),
        )

    sys.excepthook = hook
    threading.excepthook = thread_hook
    try:
        crash_log = open(dirs.logs / "crash.log", "a", encoding="utf-8")  # noqa: SIM115
        faulthandler.enable(crash_log)
    except OSError:
        pass


def _print_line(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def make_store(kind: str, dirs: AppDirs) -> SessionStore:
    """The session store: JSONL files with their index, or one SQLite database."""
    if kind == "sqlite":
        return SqliteStore(
            SqliteSessionRepo(dirs.data / "sessions.sqlite"), dirs.trash / "sqlite.json"
        )
    repo = JsonlSessionRepo(
        dirs.sessions, str(dirs.trash), entry_index_dir=dirs.data / "cache" / "entries"
    )
    index: SessionIndex | None
    try:
        index = SessionIndex(dirs.index, repo)
    except Exception:
        log.exception("session index unavailable")
        index = None
    return JsonlStore(repo, index)


def make_pi_store(folder: Path | None, dirs: AppDirs) -> JsonlStore | None:
    """The "Pi sessions" source: the Pi CLI's folder, opened in place, with an index kept
    with our data (never in Pi's folder). None when the folder does not exist."""
    if folder is None or not folder.is_dir():
        return None
    repo = JsonlSessionRepo(
        folder, str(dirs.trash / "pi"), entry_index_dir=dirs.data / "cache" / "entries"
    )
    index: SessionIndex | None
    try:
        index = SessionIndex(dirs.data / "cache" / "pi-index.sqlite", repo)
    except Exception:
        log.exception("the index of the Pi sessions is unavailable")
        index = None
    return JsonlStore(repo, index, source="pi")


def run(argv: list[str]) -> int:
    started = time.perf_counter()
    make_undumpable()  # first: no other process of the user may read our memory or environ
    args = parse_args(argv)
    dirs = resolve_dirs(args.data_dir.resolve() if args.data_dir else None)
    try:
        dirs.create()
    except OSError as exc:
        # A read-only data dir: the app still starts; saving errors are shown later.
        sys.stderr.write(f"desktop-agent: cannot create {dirs.data}: {exc.strerror}\n")
    redactor = RedactingFilter()
    try:
        setup_logging(dirs, redactor)
    except OSError as exc:
        sys.stderr.write(f"desktop-agent: logging to stderr only ({exc.strerror})\n")
    install_excepthooks(dirs)
    log.info("Starting Desktop Agent; data dir %s", dirs.data)
    if args.copy_sessions_from:
        return copy_between_stores(args, dirs, redactor)
    settings = load_settings(dirs.settings)
    state = load_state(dirs.state)
    workspace = str(args.workspace.resolve()) if args.workspace else None
    pi_folder = (
        args.pi_sessions_dir.expanduser().resolve()
        if args.pi_sessions_dir
        else pi_sessions_dir(settings.pi_sessions)
    )

    async def make_workbench() -> Workbench:
        # bwrap is tried once (10-20 ms) on a thread while the registry and keys are made.
        detecting = asyncio.ensure_future(
            asyncio.to_thread(detect_sandbox, network=settings.shell_network)
        )
        registry = ModelRegistry()
        _add_user_models(registry, settings)
        keys = KeyStore(
            find_backend=platform_keyring,
            key_file=KeyFile(dirs.key_file),
            use_file=settings.keys_in_file,
            env_vars={DATABASE_KEY: DATABASE_PASSWORD_ENV},
        )
        models = Models(registry, keys, settings, on_secret=lambda key: redactor.add_secrets([key]))
        kind = args.store or settings.store
        try:
            shared = await open_store(
                kind, dirs, args.database_url or settings.database_url, keys, redactor
            )
        finally:  # awaited even when the store fails, so the task never outlives the loop
            sandbox = await detecting
        store = shared.store
        workbench = Workbench(
            store=store,
            sandbox=sandbox,
            tools=lambda: built_in_tools(bash=BashTool(sandbox=sandbox)),
            models=models,
            settings=settings,
            state=state,
            save_settings=lambda s: save_settings(dirs.settings, s),
            save_state=lambda s: save_state(dirs.state, s),
            forbidden_roots=dirs.forbidden_roots(),
            tool_output_dir=dirs.tool_output,
            recovery_dir=dirs.data.parent / f"{dirs.data.name}-recovery",
            redactor=redactor.redactor,
            pi_store=make_pi_store(pi_folder, dirs),
            make_pi=lambda setting: make_pi_store(pi_sessions_dir(setting), dirs),
            pi_default_folder=str(default_pi_sessions_dir(Path.home(), os.environ)),
            map_dir=dirs.data / "cache" / "maps",
            prompt_dirs=[default_pi_agent_dir(Path.home(), os.environ), dirs.config],
            home=Path.home(),
            checkpoints=CheckpointStore(dirs.data / "checkpoints"),
            # Started once the window is painted; the redactor learns their secrets now.
            mcp=McpServers.load(dirs.config / "mcp.json", redactor=redactor.redactor),
        )
        await workbench.start()
        shared.attach(workbench)
        return workbench

    # Qt is imported only here and in gui/ (import-linter contract).
    from desktop_agent.gui import run_gui

    return run_gui(
        make_workbench=make_workbench,
        data_dir=str(dirs.data),
        session=args.session,
        new=args.new,
        workspace=workspace,
        smoke=args.smoke,
        script=args.script,
        no_err_windows=args.no_err_windows or args.smoke,
        started=started,
        logs_dir=str(dirs.logs),
    )


async def open_store(
    kind: str, dirs: AppDirs, database_url: str, keys: KeyStore, redactor: RedactingFilter
) -> Shared:
    """The session store of ``kind``; for a PostgreSQL server, its password comes from
    the URL (then kept in the keychain) or the keychain, and is given to the redactor;
    an unreachable server gives the local files and the reason (`connect_shared`)."""
    local = make_store("jsonl" if kind == "postgres" else kind, dirs)
    if kind != "postgres":
        return Shared(local, None)
    problem = database_url_problem(database_url)
    if problem is not None:  # (said at start-up, as a server that does not answer)
        where = '--database-url or "database_url"'
        return Shared(local, f"its address ({where}) is not valid. {problem.rstrip('.')}")
    url, password = split_password(database_url)
    if password is not None:
        redactor.add_secrets([password])
        await _keep_password(keys, password)
    else:
        password = await keys.get(DATABASE_KEY)
        redactor.add_secrets([password])
    return await connect_shared(
        url, password, fallback=local, cache_dir=dirs.data / "cache" / "postgres"
    )


def copy_between_stores(args: argparse.Namespace, dirs: AppDirs, redactor: RedactingFilter) -> int:
    """``--copy-sessions-from KIND``: every session of that store into ``--store``'s,
    entries byte for byte; prints one JSON line (copied, failed) and exits (1: none
    copied, or the server could not be used)."""
    settings = load_settings(dirs.settings)
    target = args.store or settings.store
    url = args.database_url or settings.database_url
    if args.copy_sessions_from == target:
        _print_line(json.dumps({"error": f"the sessions are already in {target}"}))
        return 2

    async def copy() -> dict[str, object]:
        keys = KeyStore(
            find_backend=platform_keyring, env_vars={DATABASE_KEY: DATABASE_PASSWORD_ENV}
        )
        ends = [
            await open_store(k, dirs, url, keys, redactor)
            for k in (args.copy_sessions_from, target)
        ]
        try:
            problems = [e.problem for e in ends if e.problem is not None]
            if problems:
                return {"error": problems[0]}
            for end in ends:
                await end.store.start()
            report = await copy_sessions(ends[0].store, ends[1].store)
            return {"copied": len(report.copied), "failed": report.failed}
        finally:
            for end in ends:
                await end.store.close()

    result = asyncio.run(copy())
    _print_line(json.dumps(result))
    return 0 if result.get("copied") and not result.get("failed") else 1


async def _keep_password(keys: KeyStore, password: str) -> None:
    """A password typed in the URL goes to the keychain (kept in memory without one)."""
    try:
        await keys.set(DATABASE_KEY, password)
    except KeyStoreError as exc:
        log.info("the session server's password is kept in memory only: %s", exc)


def _add_user_models(registry: ModelRegistry, settings: Settings) -> None:
    """OpenAI-compatible models the user defined in settings (already validated there)."""
    for entry in settings.custom_models:
        try:
            registry.add_openai_compatible(
                str(entry["id"]),
                str(entry["base_url"]),
                provider=str(entry.get("provider", "custom")),
                name=entry.get("name"),
                reasoning=bool(entry.get("reasoning", False)),
                images="image" in (entry.get("input") or []),
                context_window=int(entry.get("context_window") or 32_768),
                max_tokens=int(entry.get("max_tokens") or 8_192),
            )
        except (KeyError, ValueError, TypeError) as exc:
            log.warning("ignoring a custom model in settings: %s", exc)


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("QT_API", "pyside6")
    sys.exit(run(sys.argv[1:]))
