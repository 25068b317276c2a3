"""Building a real `Workbench` for tests: a temp data dir, either store, scripted models.

Used by the Qt-free workbench tests and by the window tests (which parametrize over the
store: the same flows run on JSONL files and on the SQLite database).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import AssistantMessage, Model, ModelRegistry, TextContent, UserMessage
from desktop_agent.checkpoints import CheckpointStore
from desktop_agent.config import (
    AppState,
    KeyFile,
    KeyStore,
    PiSessionsSettings,
    Settings,
    load_settings,
    load_state,
    pi_sessions_dir,
    save_settings,
    save_state,
)
from desktop_agent.harness import HarnessSettings
from desktop_agent.session import JsonlSessionRepo, Session, SessionIndex, SqliteSessionRepo
from desktop_agent.tools import (
    ApprovalDecision,
    ApprovalRequest,
    BashTool,
    Sandbox,
    built_in_tools,
)
from desktop_agent.workbench import (
    Changes,
    Event,
    JsonlStore,
    McpServers,
    Models,
    SessionStore,
    SqliteStore,
    Workbench,
    WorkbenchLimits,
)
from tests.helpers import STORES as STORES  # the stores every store-parametrized test runs on
from tests.helpers.keyring import MemoryKeyring


def sqlite_path(data: Path) -> Path:
    return data / "sessions.sqlite"


def make_store(data: Path, kind: str, database_url: str | None = None) -> SessionStore:
    if kind == "postgres":
        from desktop_agent.session import PostgresSessionRepo
        from desktop_agent.workbench import PostgresStore

        assert database_url is not None, "the postgres store needs the database_url fixture"
        return PostgresStore(PostgresSessionRepo(database_url))
    if kind == "sqlite":
        return SqliteStore(SqliteSessionRepo(sqlite_path(data)), data / "trash" / "sqlite.json")
    repo = JsonlSessionRepo(data / "sessions", str(data / "trash"))
    return JsonlStore(repo, SessionIndex(data / "index.sqlite", repo))


def make_pi_store(data: Path, pi_folder: Path) -> JsonlStore:
    """The "Pi sessions" source over ``pi_folder`` (a temp folder: never the real ~/.pi),
    its index kept in ``data`` (as app.make_pi_store does)."""
    repo = JsonlSessionRepo(pi_folder, str(data / "trash" / "pi"))
    return JsonlStore(repo, SessionIndex(data / "cache" / "pi-index.sqlite", repo), source="pi")


def make_workbench(
    data: Path,
    models: Model | list[Model],
    *,
    store: str = "jsonl",
    settings: Settings | None = None,
    keyring: MemoryKeyring | None = None,
    pi_folder: Path | None = None,
    prompt_dirs: list[Path] | None = None,
    home: Path | None = None,
    checkpoints: bool = False,
    sandbox: Sandbox | None = None,
    database_url: str | None = None,
    mcp: McpServers | None = None,
    limits: WorkbenchLimits | None = None,
) -> Workbench:
    """A workbench over ``data`` whose registry holds ``models`` (default model: the
    first); ``pi_folder``: the Pi CLI's sessions folder beside ours; ``prompt_dirs``:
    the global folders of context files, skills and templates (default: the app's config
    folder in ``data``, as app.py has it; never the real ~/.pi); ``mcp``: its MCP
    servers (none by default); ``limits``: its sizes and waits (default: the app's)."""
    data.mkdir(parents=True, exist_ok=True)
    listed = models if isinstance(models, list) else [models]
    settings_file = data / "config" / "settings.json"
    if settings is None and settings_file.exists():
        settings = load_settings(settings_file)
    settings = settings or Settings(
        default_model=listed[0].key if listed else None,
        approval={"bash": "allow", "write": "allow", "edit": "allow"},
        discover_local_servers=False,
    )
    state = load_state(data / "state.json")
    keystore = KeyStore(
        backend=keyring or MemoryKeyring(),
        environ={},
        key_file=KeyFile(data / "config" / "keys.json"),
        use_file=settings.keys_in_file,
    )
    return Workbench(
        limits=limits,
        store=make_store(data, store, database_url),
        models=Models(ModelRegistry(catalogue=listed), keystore, settings),
        settings=settings,
        state=state,
        save_settings=lambda s: save_settings(settings_file, s),
        save_state=lambda s: save_state(data / "state.json", s),
        forbidden_roots=[data],
        tool_output_dir=data / "tool-output",
        recovery_dir=data.parent / f"{data.name}-recovery",
        harness_settings=HarnessSettings(base_delay_ms=10, max_delay_ms=50),
        pi_store=make_pi_store(data, pi_folder) if pi_folder is not None else None,
        make_pi=lambda setting: _pi_from_setting(data, setting, pi_folder),
        pi_default_folder=str(pi_folder or ""),
        map_dir=data / "cache" / "maps",
        prompt_dirs=prompt_dirs if prompt_dirs is not None else [data / "config"],
        home=home,
        checkpoints=CheckpointStore(data / "checkpoints") if checkpoints else None,
        sandbox=sandbox,
        tools=built_in_tools
        if sandbox is None
        else lambda: built_in_tools(bash=BashTool(sandbox=sandbox)),
        mcp=mcp,
    )


def _pi_from_setting(
    data: Path, setting: PiSessionsSettings, default: Path | None
) -> JsonlStore | None:
    """What app.py builds from the pi_sessions setting; the default folder is the test's
    (``home`` is the data dir, so the real ~/.pi is never looked at)."""
    folder = pi_sessions_dir(setting, home=data, environ={}) if setting.folder else default
    if not setting.enabled or folder is None or not folder.is_dir():
        return None
    return make_pi_store(data, folder)


def saved_state(data: Path) -> AppState:
    return load_state(data / "state.json")


def user(text: str, timestamp: int = 1) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)


def answer(text: str, timestamp: int = 2) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-test",
        stop_reason="stop",
        timestamp=timestamp,
    )


async def seed_async(
    data: Path,
    workspace: Path,
    build: Callable[[Session], Coroutine[Any, Any, None]],
    store: str = "jsonl",
) -> str:
    """A session made with the store's repo; returns its reference in that store."""
    if store == "sqlite":
        repo = SqliteSessionRepo(sqlite_path(data))
        session = await repo.create(cwd=str(workspace))
        await build(session)
        await session.close()
        await repo.close()
        return f"sqlite:{session.metadata.id}"
    jsonl = JsonlSessionRepo(data / "sessions", str(data / "trash"))
    session = await jsonl.create(cwd=str(workspace))
    await build(session)
    await session.close()
    return session.metadata.path or ""


def seed(
    data: Path,
    workspace: Path,
    build: Callable[[Session], Coroutine[Any, Any, None]],
    store: str = "jsonl",
) -> str:
    """`seed_async` from a thread of its own (a GUI test's qasync loop is running here)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, seed_async(data, workspace, build, store)).result()


def damage_second_entry(path: str) -> bytes:
    """Break the JSON of a session file's second entry (mid-file damage); returns the
    damaged bytes, which opening must leave exactly as they are."""
    lines = Path(path).read_bytes().split(b"\n")
    lines[2] = b"#" + lines[2][1:]
    damaged = b"\n".join(lines)
    Path(path).write_bytes(damaged)
    return damaged


class Recorder:
    """Every event a workbench emitted, and the union of its `Changes`."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def changes(self) -> Changes:
        total = Changes()
        for event in self.events:
            if isinstance(event, Changes):
                total = total | event
        return total

    def clear(self) -> None:
        self.events.clear()


class Approver:
    """Answers the workbench's approval requests in the person's place (set as
    ``wb.approver``): records each request and, once `release` is called (at once with
    ``hold=False``), answers ``decision``; the card meanwhile shows it waiting."""

    def __init__(
        self, decision: ApprovalDecision = ApprovalDecision.ALLOW_ONCE, *, hold: bool = True
    ) -> None:
        self.asked: list[ApprovalRequest] = []
        self.decision = decision
        self._released = asyncio.Event()
        if not hold:
            self._released.set()

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        await self._released.wait()
        return self.decision

    def release(self) -> None:
        self._released.set()


def break_saving(monkeypatch: pytest.MonkeyPatch, store: str) -> dict[str, bool]:
    """Make the store's writes fail with a full disk until ``["on"]`` is set False."""
    from desktop_agent.session._platform import OS_FILE_OPS
    from desktop_agent.session._sqlite import SqliteStorage

    broken = {"on": True}
    if store == "jsonl":
        real = OS_FILE_OPS.write_all

        def write_all(fd: int, data: bytes) -> None:
            if broken["on"]:
                raise OSError(28, "No space left on device")
            real(fd, data)

        monkeypatch.setattr(OS_FILE_OPS, "write_all", write_all)
    else:
        real_write = SqliteStorage._write

        def write(self: SqliteStorage, rows: list[object]) -> None:
            if broken["on"]:
                raise OSError(28, "No space left on device")
            real_write(self, rows)  # type: ignore[arg-type]

        monkeypatch.setattr(SqliteStorage, "_write", write)
    return broken
