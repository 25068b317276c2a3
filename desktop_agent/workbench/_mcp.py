"""The MCP servers as the workbench uses them: started after the first paint, their
tools handed to every harness, their statuses for the window, their failures as notices.

`McpServers.load` reads ``mcp.json`` (a broken file is a notice, never a failed start),
teaches the redactor every value of the servers' ``env`` and ``headers`` (so they never
reach a session file, the index or the logs) and builds the `McpManager`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from desktop_agent.config import KeyStore, KeyStoreError
from desktop_agent.mcp import (
    KEYCHAIN,
    McpConfig,
    McpConfigError,
    McpManager,
    McpServerConfig,
    ServerStatus,
    load_mcp_config,
    parse_mcp_config,
    save_mcp_config,
)
from desktop_agent.tools import Tool
from desktop_agent.utils import Redactor
from desktop_agent.workbench._changes import Changes

log = logging.getLogger(__name__)

NEW_MCP_ENTRY = '{\n  "command": "",\n  "args": []\n}'
"""What Add shows: a stdio server's entry to fill in."""
STATE_TEXTS = {
    "starting": "{name}: starting…",
    "ready": "{name}: ready ({tools} tools)",
    "failed": "{name}: failed",
    "stopped": "{name}: stopped",
    "disabled": "{name}: disabled",
}


@dataclass(frozen=True)
class McpRow:
    """One server as the servers menu and dialog show it. ``text`` is an English
    template (translated by the GUI) with ``{name}`` placeholders for ``args``."""

    name: str
    state: str
    """``starting``, ``ready``, ``failed``, ``stopped`` or ``disabled``."""
    text: str
    args: tuple[tuple[str, str], ...]
    enabled: bool
    detail: str
    entry: str
    """The server's entry as indented JSON (what Edit shows)."""


def parse_entry(text: str) -> McpServerConfig:
    """One server's JSON object (as pasted into Edit); `McpConfigError` says what is wrong."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise McpConfigError(f"This is not valid JSON ({exc}).") from exc
    if not isinstance(data, dict):
        raise McpConfigError('A server is a JSON object such as {"command": "...", "args": []}.')
    try:
        return McpServerConfig.model_validate(data)
    except ValidationError as exc:
        reasons = "; ".join(
            str(e.get("msg", "invalid")).removeprefix("Value error, ") for e in exc.errors()
        )
        raise McpConfigError(f"This server entry {reasons}.") from exc


class McpServers:
    """The manager, and what the window shows of it."""

    def __init__(
        self,
        manager: McpManager | None = None,
        *,
        path: Path | None = None,
        problems: tuple[str, ...] = (),
    ) -> None:
        self.manager = manager or McpManager()
        self.user = self.manager.config
        """The servers of ``mcp.json`` (without a project's own)."""
        self.project: dict[str, McpServerConfig] = {}
        """The servers of the open session's folder, once the person agreed."""
        self.project_folder: str | None = None
        self.path = path
        """The ``mcp.json`` it was read from (None: no file, as in most tests)."""
        self.problems = problems
        """Why ``mcp.json`` or some of its entries could not be used."""
        self.started = False
        self.kept_in_file = False
        """A secret could not go to the keychain (none): it is in mcp.json."""
        self.keys: KeyStore | None = None
        """Where secret ``env``/``headers`` values typed in the dialog are kept (the file
        then says ``${keychain}``); None: they stay in the file."""
        self._secrets: dict[str, str] = {}
        """Keychain values by `_key_name`, read at start or saved by the dialog."""
        self.redactor: Redactor | None = None
        self.noticed: set[str] = set()
        """The notice keys shown for servers and the file (dropped when resolved)."""

    @classmethod
    def load(cls, path: Path, *, redactor: Redactor | None = None) -> McpServers:
        try:
            config = load_mcp_config(path)
        except McpConfigError as exc:
            log.warning("%s", exc)
            return cls(McpManager(McpConfig()), path=path, problems=(str(exc),))
        if redactor is not None:
            redactor.add_secrets(config.secrets(), kind="MCP server secret")
        problems = tuple(config.problems)
        for problem in problems:
            log.warning("mcp.json: %s", problem)
        servers = cls(McpManager(config), path=path, problems=problems)
        servers.redactor = redactor
        return servers

    async def start(self) -> None:
        """Start the enabled servers in the background (once): the keychain's values are
        read first (only for entries that say ``${keychain}``)."""
        if self.started:
            return
        self.started = True
        await self._read_secrets()
        self.manager.config = self._combined()
        self.manager.start()

    # ------------------------------------------------------------- secrets in the keychain

    @staticmethod
    def _key_name(server: str, where: str, name: str) -> str:
        return f"mcp/{server}/{where}/{name}"

    async def _read_secrets(self) -> None:
        if self.keys is None:
            return
        for server, config in self.user.servers.items():
            for where, values in (("env", config.env), ("headers", config.headers)):
                for name, value in values.items():
                    key = self._key_name(server, where, name)
                    if value == KEYCHAIN and key not in self._secrets:
                        found = await self.keys.get(key)
                        if found:
                            self._secrets[key] = found
                        else:
                            log.warning("The keychain has no value for %s", key)
        self._learn(self._combined())

    def _resolved(self, server: str, config: McpServerConfig) -> McpServerConfig:
        def fill(where: str, values: dict[str, str]) -> dict[str, str]:
            return {
                k: self._secrets.get(self._key_name(server, where, k), v) if v == KEYCHAIN else v
                for k, v in values.items()
            }

        if KEYCHAIN not in (*config.env.values(), *config.headers.values()):
            return config
        return config.model_copy(
            update={"env": fill("env", config.env), "headers": fill("headers", config.headers)}
        )

    async def _stash(
        self, server: str, config: McpServerConfig, old: str | None
    ) -> McpServerConfig:
        """Move the secret values of ``config`` to the keychain (``${keychain}`` in the
        file); without a keychain they stay in the file (and `kept_in_file` says so)."""
        if old is not None and old != server:  # renamed: its keychain values move with it
            for where, values in (("env", config.env), ("headers", config.headers)):
                for name, value in values.items():
                    before = self._secrets.get(self._key_name(old, where, name))
                    if value == KEYCHAIN and before is not None:
                        values[name] = before
        if self.keys is None:
            return config
        env, headers = dict(config.env), dict(config.headers)
        for where, name, value in config.secret_fields():
            if value == KEYCHAIN:
                continue
            key = self._key_name(server, where, name)
            try:
                await self.keys.set(key, value)
            except KeyStoreError as exc:
                log.warning("MCP secret %s stays in mcp.json: %s", key, exc)
                self.kept_in_file = True
                continue
            self._secrets[key] = value
            (env if where == "env" else headers)[name] = KEYCHAIN
        return config.model_copy(update={"env": env, "headers": headers})

    def _learn(self, config: McpConfig) -> None:
        if self.redactor is not None:
            self.redactor.add_secrets(config.secrets(), kind="MCP server secret")

    def tools(self) -> list[Tool[Any]]:
        return [*self.manager.tools()]

    def statuses(self) -> list[ServerStatus]:
        return self.manager.statuses()

    def failures(self) -> dict[str, str]:
        """The failed servers by name, with why (the notices)."""
        return {s.name: s.detail for s in self.statuses() if s.state == "failed"}

    def subscribe(self, listener: Callable[[], object]) -> Callable[[], None]:
        return self.manager.subscribe(listener)

    async def restart(self, name: str) -> None:
        await self.manager.restart(name)

    async def close(self) -> None:
        await self.manager.close()

    # ------------------------------------------------------------- the servers dialog

    def rows(self) -> list[McpRow]:
        out = []
        for status in self.statuses():
            config = self.manager.config.servers.get(status.name)
            enabled = config is not None and not config.disabled
            state = status.state if enabled else "disabled"
            args = (("name", status.name), ("tools", str(status.tools)))
            shown = self.user.servers.get(status.name, config)  # the file's form
            entry = json.dumps(shown.to_json() if shown else {}, indent=2, ensure_ascii=False)
            text = STATE_TEXTS[state]
            out.append(McpRow(status.name, state, text, args, enabled, status.detail, entry))
        return out

    def _combined(self) -> McpConfig:
        """The servers the manager runs: mcp.json's (keychain values filled in), then the
        agreed project's."""
        servers = {name: self._resolved(name, s) for name, s in self.user.servers.items()}
        for name, server in self.project.items():
            servers[f"{name} (project)"] = server
        return McpConfig(servers=servers)

    async def save(self, config: McpConfig) -> Changes:
        """Write ``config`` to ``mcp.json`` (atomically, off the loop) and use it now."""
        if self.path is None:
            raise McpConfigError("There is no mcp.json to save the servers in.")
        try:
            await asyncio.to_thread(save_mcp_config, self.path, config)
        except OSError as exc:
            raise McpConfigError(f"Could not save {self.path}: {exc.strerror or exc}.") from exc
        self.problems = ()
        self.user = config
        self._learn(self._combined())
        await self.manager.apply_config(self._combined())
        return Changes(mcp=True, notices=True)

    def _copy(self) -> McpConfig:
        return McpConfig(servers=dict(self.user.servers))

    def _project_name(self, name: str) -> str | None:
        base = name.removesuffix(" (project)")
        return base if name != base and base in self.project else None

    def _refuse_project(self, name: str) -> None:
        if self._project_name(name) is not None and name not in self.user.servers:
            raise McpConfigError(
                f"{name} comes from the project's own MCP file; change it in that file."
            )

    # ------------------------------------------------------------- a project's own servers

    async def use_project(self, folder: str | None, servers: dict[str, McpServerConfig]) -> None:
        """Run ``servers`` (a project's own, agreed to) beside mcp.json's; none: stop them."""
        if folder == self.project_folder and servers == self.project:
            return
        self.project_folder, self.project = folder, dict(servers)
        self._learn(McpConfig(servers=self.project))
        await self.manager.apply_config(self._combined())

    async def offer_project(
        self, folder: str, answers: dict[str, str], remember: Callable[[], None], notify: Notify
    ) -> Changes:
        """A folder's own MCP servers (``.mcp.json``, ``.pi/mcp.json``): used when the person
        agreed before, offered once (a notice with "Use them") when never offered; a folder
        never starts programs by itself."""
        found = await asyncio.to_thread(find_project_servers, folder)
        if found is None or not found[1].servers:
            await self.use_project(None, {})
            return notify("mcp-project", None)
        file, config = found
        answer = answers.get(folder)
        if answer == "allowed":
            await self.use_project(folder, config.servers)
            return Changes(mcp=True) | notify("mcp-project", None)
        await self.use_project(None, {})
        if answer is not None:
            return notify("mcp-project", None)
        answers[folder] = "offered"
        remember()

        async def allow() -> Changes:
            answers[folder] = "allowed"
            remember()
            await self.use_project(folder, config.servers)
            return Changes(mcp=True) | notify("mcp-project", None)

        return notify(
            "mcp-project",
            "This folder has its own MCP servers in {file}: {names}. They run programs on "
            "this computer; use them only if you trust this folder.",
            ("Use them", allow),
            file=str(file),
            names=", ".join(config.servers),
        )

    async def put(self, name: str, text: str, *, old: str | None = None) -> Changes:
        """Add the server ``name`` (or replace ``old``) with the JSON entry ``text``."""
        name = name.strip()
        if not name:
            raise McpConfigError("A server needs a name.")
        entry = parse_entry(text)
        self._refuse_project(old or name)
        entry = await self._stash(name, entry, old)
        config = self._copy()
        if name != old and name in config.servers:
            raise McpConfigError(f"There is already a server named {name}.")
        if old is not None and old != name:
            config.servers = {(name if k == old else k): v for k, v in config.servers.items()}
        config.servers[name] = entry
        return await self.save(config)

    async def remove(self, name: str) -> Changes:
        self._refuse_project(name)
        config = self._copy()
        config.servers.pop(name, None)
        return await self.save(config)

    async def set_enabled(self, name: str, enabled: bool) -> Changes:
        self._refuse_project(name)
        config = self._copy()
        server = config.servers.get(name)
        if server is None:
            return Changes()
        config.servers[name] = server.model_copy(update={"disabled": not enabled})
        return await self.save(config)

    async def import_file(self, path: Path) -> tuple[list[str], Changes]:
        """Add the servers of a Claude Desktop (or Cursor, Claude Code, Pi) config file;
        a name already used gets `` (imported)``. Returns the names added."""
        try:
            raw = await asyncio.to_thread(Path(path).read_bytes)
            data = json.loads(raw)
        except OSError as exc:
            raise McpConfigError(f"Could not read {path}: {exc.strerror or exc}.") from exc
        except ValueError as exc:
            raise McpConfigError(f"{path} is not valid JSON ({exc}).") from exc
        found = parse_mcp_config(data, str(path))
        config = self._copy()
        added = []
        for name, server in found.servers.items():
            if config.servers.get(name) == server:
                continue
            new = name if name not in config.servers else f"{name} (imported)"
            config.servers[new] = server
            added.append(new)
        if not added:
            return [], Changes()
        return added, await self.save(config)


PROJECT_FILES = (".mcp.json", ".pi/mcp.json")
"""A project's own MCP files: Claude Code's, then Pi's."""


def find_project_servers(folder: str) -> tuple[Path, McpConfig] | None:
    """The first of `PROJECT_FILES` in ``folder`` and its servers (a broken file: None,
    with a warning in the log)."""
    for name in PROJECT_FILES:
        path = Path(folder) / name
        if path.is_file():
            try:
                return path, load_mcp_config(path)
            except McpConfigError as exc:
                log.warning("%s", exc)
                return None
    return None


Action = tuple[str, Callable[[], Coroutine[Any, Any, Changes]]]


class Notify(Protocol):
    def __call__(
        self, key: str, text: str | None, action: Action | None = None, **args: object
    ) -> Changes: ...


def mcp_changed(servers: McpServers, notify: Notify) -> Changes:
    """The notices of failed servers (with Restart) and of ``mcp.json``'s problems, once
    started; ``Changes(mcp=True)`` for the servers menu and Settings."""
    changes = Changes(mcp=True)
    if not servers.started:
        return changes
    shown: set[str] = set()
    for i, problem in enumerate(servers.problems):
        key = f"mcp-config:{i}"
        shown.add(key)
        if key not in servers.noticed:
            changes = changes | notify(key, "mcp.json: {problem}", problem=problem)
    for name, detail in servers.failures().items():
        key = f"mcp:{name}"
        shown.add(key)
        changes = changes | notify(
            key,
            "The MCP server {name} failed: {detail}",
            ("Restart", _restarter(servers, name)),
            name=name,
            detail=detail,
        )
    for key in servers.noticed - shown:
        changes = changes | notify(key, None)
    servers.noticed = shown
    return changes


def _restarter(servers: McpServers, name: str) -> Callable[[], Coroutine[Any, Any, Changes]]:
    async def restart() -> Changes:
        await servers.restart(name)
        return Changes(mcp=True)

    return restart
