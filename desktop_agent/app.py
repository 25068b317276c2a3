"""Composition root: arguments, directories, logging, hooks, then every object, once.

Read top to bottom, this is everything that exists at start-up and in which order
(STYLE.md habit 2): command line -> directories -> logging with secret redaction ->
excepthooks -> settings and state -> the Qt application and loop (gui.run_gui) ->
keys, model registry, session repo and index -> the main window.
"""

from __future__ import annotations

import argparse
import faulthandler
import logging
import logging.handlers
import os
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from desktop_agent.ai import Model, ModelRegistry
from desktop_agent.config import (
    AppDirs,
    KeyStore,
    ProviderSettings,
    Settings,
    load_settings,
    load_state,
    resolve_dirs,
    save_settings,
    save_state,
)
from desktop_agent.session import JsonlSessionRepo
from desktop_agent.utils import RedactingFilter

log = logging.getLogger("desktop_agent")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="desktop-agent", description="Desktop Agent")
    parser.add_argument("--data-dir", type=Path, help="use this folder instead of the app data")
    parser.add_argument("--workspace", type=Path, help="the project folder to work in")
    parser.add_argument("--session", help="open this session (id or .jsonl path)")
    parser.add_argument("--new", action="store_true", help="start a new session")
    parser.add_argument(
        "--no-err-windows", action="store_true", help="report errors on stderr, not in dialogs"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="restore, print one JSON line after first paint, exit"
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


def run(argv: list[str]) -> int:
    started = time.perf_counter()
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
    settings = load_settings(dirs.settings)
    state = load_state(dirs.state)
    workspace = str(args.workspace.resolve()) if args.workspace else None
    session_arg: str | None = args.session
    if session_arg and not session_arg.endswith(".jsonl"):
        session_arg = _find_session_by_id(dirs, session_arg)

    async def make_services() -> Any:
        from desktop_agent.gui import AppServices

        keystore = KeyStore()
        registry = ModelRegistry()
        _add_user_models(registry, settings)
        providers = sorted({m.provider for m in registry.all()})
        await keystore.load(providers)
        keys: dict[str, str | None] = {p: await keystore.get(p) for p in providers}
        redactor.add_secrets(keys.values())
        if settings.discover_local_servers:
            try:
                await registry.discover_local()
            except Exception:
                log.exception("local server discovery failed")

        def get_api_key(model: Model) -> str | None:
            if not KeyStore.needs_key(model.provider, model.base_url):
                return "local"
            return keys.get(model.provider)

        def has_key(model: Model) -> bool:
            return get_api_key(model) is not None

        index = None
        try:
            from desktop_agent.session import SessionIndex

            index = SessionIndex(dirs.index, JsonlSessionRepo(dirs.sessions, str(dirs.trash)))
            await index.reconcile()
        except Exception:
            log.exception("session index unavailable")
            index = None

        def persist_state(values: dict[str, Any]) -> None:
            save_state(dirs.state, state.model_validate(values))

        async def open_settings(window: Any) -> None:
            values = settings.model_dump()
            models = [(m.key, f"{m.name} ({m.provider})") for m in registry.all()]
            result = await window.dialogs.settings(values, keystore.problem, models)
            if result is None:
                return
            for provider, field in (("openai", "openai_key"), ("anthropic", "anthropic_key")):
                key = result.get(field)
                if key:
                    keys[provider] = key
                    redactor.add_secrets([key])
                    try:
                        await keystore.set(provider, key)
                    except Exception as exc:  # noqa: BLE001 - kept for this run
                        window.show_notice(f"The key is used for this run only: {exc}")
            updated = settings.model_copy(
                update={
                    "default_model": result.get("default_model") or settings.default_model,
                    "send_key": result.get("send_key") or settings.send_key,
                    "approval": {**settings.approval, **(result.get("approval") or {})},
                    "discover_local_servers": bool(result.get("discover_local_servers")),
                }
            )
            local_url = result.get("local_base_url")
            if local_url:
                updated.providers["local"] = ProviderSettings(base_url=local_url)
                await _discover_at(registry, local_url)
                window._fill_pickers(
                    window.harness.model if window.harness else None,
                    window.harness.thinking_level if window.harness else "off",
                )
            try:
                save_settings(dirs.settings, updated)
            except OSError as exc:
                window.show_notice(f"Settings could not be saved: {exc.strerror}")

        return AppServices(
            repo=JsonlSessionRepo(
                dirs.sessions, str(dirs.trash), entry_index_dir=dirs.data / "cache" / "entries"
            ),
            registry=registry,
            get_api_key=get_api_key,
            has_key=has_key,
            forbidden_roots=list(dirs.forbidden_roots()),
            tool_output_dir=dirs.tool_output,
            default_model=settings.default_model,
            default_thinking_level=settings.default_thinking_level,
            approval_rules=dict(settings.approval),
            send_key=settings.send_key,
            index=index,
            save_state=persist_state,
            state=state.model_dump(),
            open_settings=open_settings,
            keystore_problem=keystore.problem,
            redactor=redactor.redactor,
        )

    # Qt is imported only here and in gui/ (import-linter contract).
    from desktop_agent.gui import run_gui

    return run_gui(
        make_services=make_services,
        data_dir=str(dirs.data),
        session=session_arg,
        new=args.new,
        workspace=workspace,
        smoke=args.smoke,
        no_err_windows=args.no_err_windows or args.smoke,
        started=started,
        logs_dir=str(dirs.logs),
    )


async def _discover_at(registry: ModelRegistry, base_url: str) -> None:
    """Models of a local OpenAI-compatible server the user pointed us at."""
    from urllib.parse import urlparse

    parsed = urlparse(base_url)
    if not parsed.hostname or not parsed.port:
        log.warning("local server URL without host and port: %s", base_url)
        return
    try:
        await registry.discover_local(
            host=parsed.hostname, servers={"local": parsed.port}, timeout_s=1.0
        )
    except Exception:
        log.exception("could not list the models of %s", base_url)


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


def _find_session_by_id(dirs: AppDirs, session_id: str) -> str | None:
    for folder in dirs.sessions.glob("*"):
        for file in folder.glob(f"*_{session_id}.jsonl"):
            return str(file)
    _print_line(f"desktop-agent: no session with id {session_id}")
    return None


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("QT_API", "pyside6")
    sys.exit(run(sys.argv[1:]))
