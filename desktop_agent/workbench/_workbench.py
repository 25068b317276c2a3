"""`Workbench`: the open session, its harness, and everything a person does with them.

Plain asyncio, no Qt (ARCHITECTURE.md §1). The window calls these operations and listens:
each operation returns a `Changes` and emits it to every listener, and the harness's
streaming events are passed on as they come, so the chat can draw a reply while it
streams. The workbench builds the harness of the open session (the window never does).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

from desktop_agent.agent import TurnStartEvent
from desktop_agent.ai import (
    AgentMessage,
    AssistantMessage,
    DiscoveryError,
    ImageContent,
    Model,
    clamp_thinking_level,
    supported_thinking_levels,
    takes_thinking_level,
    warm_up,
)
from desktop_agent.checkpoints import CheckpointError, CheckpointStore, FolderCheckpoints
from desktop_agent.config import (
    ApprovalRule,
    AppState,
    BranchUsage,
    FollowBranch,
    PiSessionsSettings,
    ProviderSettings,
    SendKey,
    ServerApi,
    Settings,
    StoreKind,
    ThemeMode,
    draft_key,
    server_url_problem,
    settings_from_newer,
)
from desktop_agent.harness import (
    NO_MODEL,
    AgentHarness,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    HarnessError,
    HarnessEvent,
    HarnessSettings,
    MessageSavedEvent,
    NoticeEvent,
    PersistenceErrorEvent,
    PersistenceRestoredEvent,
    SavePointEvent,
    SessionCompactEvent,
    restore_settings,
)
from desktop_agent.prompt import Problem
from desktop_agent.session import (
    RecoveryReport,
    Session,
    SessionError,
    SessionOpening,
    SessionWriteError,
)
from desktop_agent.tools import (
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    Sandbox,
    Tool,
    Workspace,
    built_in_tools,
)
from desktop_agent.utils import Redactor
from desktop_agent.utils.versions import APP_VERSION
from desktop_agent.workbench._changes import NOTHING, Changes
from desktop_agent.workbench._checkpoints import (
    BranchFiles,
    FilesNotices,
    TurnChanges,
    file_marks,
    session_trees,
)
from desktop_agent.workbench._follow import continue_here, take_over
from desktop_agent.workbench._map import (
    MAP_FILTERS,
    BranchMap,
    MapFilter,
    MapUpdate,
    find_entries,
    tooltip_text,
)
from desktop_agent.workbench._mcp import McpServers, mcp_changed
from desktop_agent.workbench._models import Models
from desktop_agent.workbench._pg_store import apply_store_form
from desktop_agent.workbench._project import (
    NO_SESSION,
    Completion,
    ContextView,
    ProjectContext,
    problems_notice,
)
from desktop_agent.workbench._regenerate import regenerate_point
from desktop_agent.workbench._saved_maps import MIN_ROWS, SavedMaps
from desktop_agent.workbench._store import JsonlStore, SessionStore
from desktop_agent.workbench._views import (
    INLINE_ENTRIES,
    BranchItem,
    BranchReader,
    MessageLoader,
    ModelChoices,
    Notice,
    SaveState,
    SidebarRow,
    TailReader,
    Usage,
    branch_items,
    count_branch_usage,
    count_branch_usage_sliced,
    entries_phrase,
    fill,
    is_visible,
    latest_leaf_under,
    newest_first,
    visible_siblings,
)

log = logging.getLogger("desktop_agent.workbench")


def _folder(cwd: str) -> str:
    """A session's folder as the checkpoint store names it."""
    return os.path.abspath(cwd) if cwd else ""


async def _warm_checkpoints(folder: FolderCheckpoints) -> None:
    """The folder's first snapshot, started when a session opens in it (in a worker
    thread), so that the first tool call waits only for what is left of it; a failure
    is said by that tool call's own snapshot."""
    try:
        await folder.warm()
    except CheckpointError as exc:
        log.info("no checkpoint ahead of the first tool call: %s", exc.message)


_T = TypeVar("_T")

DRAFT_SAVE_DELAY_S = 2.0
INDEX_WAIT_S = 1.0
"""How long start-up waits for the index of a sessions folder (ours, Pi's) to come in
line with the files before the window is made; a first index of thousands of sessions
(a new install with sessions copied in, a deleted or damaged index: 10,000 took 6 s
here) goes on in the background and the list fills when it is done (`_start_listing`)."""


def _is_dir(path: str) -> bool:
    return bool(path) and os.path.isdir(path)


class WorkbenchError(Exception):
    """An operation was not possible now; ``str()`` is a sentence for the user."""


@dataclass(frozen=True)
class Attachment:
    """A file to send with a prompt: images go as images, text files as quoted text."""

    name: str
    mime_type: str
    data: bytes

    @property
    def is_image(self) -> bool:
        return self.mime_type.startswith("image/")


@dataclass(frozen=True)
class ApprovalWaitEvent:
    """A tool call waits for the user's approval (``waiting``), or no longer does."""

    tool_call_id: str
    waiting: bool
    type: str = "approval_wait"


@dataclass(frozen=True)
class SettingsForm:
    """The Settings dialog's fields. ``keys``: keys typed now, by provider (never read
    back: ``has_key`` only says whether one is set)."""

    local_url: str | None = None
    local_protocol: ServerApi = "openai-completions"
    discover_local_servers: bool = True
    default_model: str | None = None
    send_key: SendKey = "enter"
    theme: ThemeMode = "system"
    approval: dict[str, ApprovalRule] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    models: tuple[tuple[str, str], ...] = ()
    has_key: dict[str, bool] = field(default_factory=dict)
    keychain_problem: str | None = None
    where_kept: str = ""
    pi_sessions: bool = True
    """Show the Pi coding agent's sessions beside ours."""
    pi_folder: str | None = None
    """Pi's sessions folder as typed (None: where Pi keeps them, ``pi_default_folder``)."""
    pi_default_folder: str = ""
    follow_branch: FollowBranch = "ask"
    """What the folder does when the leaf moves (``checkpoints.follow_branch``)."""
    checkpoints_bytes: int | None = None
    """The checkpoint store's size on disk (None: checkpoints are off)."""
    prune_days: int | None = None
    """"Remove checkpoints older than N days" was asked for (None: keep them all)."""
    shell_network: bool = True
    """Shell commands may use the network (the sandbox's switch)."""
    sandbox_problem: str | None = None
    """Why shell commands run without a sandbox here (None: they run in one)."""
    keys_in_file: bool = False
    """Keep keys in a file only the user can read instead of the keychain."""
    key_file: str | None = None
    """That file (None: the app has none to offer)."""
    store: StoreKind = "jsonl"
    database_url: str = ""
    """The PostgreSQL server of ``store`` "postgres" (as saved: without its password)."""
    database_password: str = ""
    """A password typed now (kept in the keychain, never read back)."""


LOCAL_PROVIDER = "local"

Event: TypeAlias = Changes | HarnessEvent | ApprovalWaitEvent
Listener = Callable[[Event], None]
Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision | None]]


class Workbench:
    """The application layer between the window and the harness (see the module doc)."""

    def __init__(
        self,
        *,
        store: SessionStore,
        models: Models,
        settings: Settings,
        state: AppState,
        save_settings: Callable[[Settings], None],
        save_state: Callable[[AppState], None],
        forbidden_roots: Sequence[Path] = (),
        tool_output_dir: Path | None = None,
        recovery_dir: Path | None = None,
        tools: Callable[[], list[Tool[Any]]] = built_in_tools,
        harness_settings: HarnessSettings | None = None,
        redactor: Redactor | None = None,
        pi: JsonlStore | None = None,
        make_pi: Callable[[PiSessionsSettings], JsonlStore | None] | None = None,
        pi_default_folder: str = "",
        map_dir: Path | None = None,
        prompt_dirs: Sequence[Path] = (),
        home: Path | None = None,
        checkpoints: CheckpointStore | None = None,
        sandbox: Sandbox | None = None,
        mcp: McpServers | None = None,
    ) -> None:
        self.store = store
        self.mcp = mcp or McpServers()
        """The MCP servers (started after the first paint, `start_mcp`); their tools go
        to every harness, their failures become notices (`workbench._mcp`)."""
        self.mcp.keys = models.keystore  # secrets typed in the servers dialog
        self.sandbox = sandbox
        """The shell's OS sandbox (shared with the bash tool): its network switch follows
        Settings; where none works, a notice says so once."""
        self.files = (
            FilesNotices(BranchFiles(checkpoints), self.notify, self.notify_choices)
            if checkpoints is not None
            else None
        )
        """The folder follows the branch (checkpoints; None: off)."""
        self._following: asyncio.Task[None] | None = None
        self.pi = pi
        """The Pi CLI's sessions folder (the "Pi sessions" source; None: off). Its
        sessions open and continue in place; `copy_into_ours` makes our own copy."""
        self._pi_listed = False  # its index is ready (see `_start_pi`)
        self._make_pi = make_pi
        """Builds the Pi source from the setting (Settings changes it live); None: fixed."""
        self.pi_default_folder = pi_default_folder
        self.models = models
        self.settings = settings
        self.state = state
        self._save_settings = save_settings
        self._save_state = save_state
        self.project = ProjectContext(
            settings=lambda: self.settings,
            save_settings=lambda: self._save_settings(self.settings),
            global_dirs=prompt_dirs,
            home=home,
        )
        """The project's context files, skills and templates (``prompt_dirs``: Pi's agent
        folder and the app's config folder; ``home``: for ``~/.agents/skills``)."""
        self.forbidden_roots = list(forbidden_roots)
        self.tool_output_dir = tool_output_dir
        self.recovery_dir = recovery_dir
        self._tools = tools
        self.harness_settings = harness_settings
        self.redactor = redactor
        """Shared with the log filter: secrets (and the app's keys) redacted before saving."""
        self.session: Session | None = None
        self.harness: AgentHarness | None = None
        self.ref: str | None = None
        self.recovery: RecoveryReport | None = None
        """What opening the current session had to work around (shown once)."""
        self.usage = Usage()
        self.save = SaveState()
        self.notices: dict[str, Notice] = {}
        self._actions: dict[str, Callable[[], Coroutine[Any, Any, Changes]]] = {}
        self.rows: list[SidebarRow] = []
        self.trash_rows: list[SidebarRow] = []
        self.query = ""
        self.map = BranchMap()
        """The branch map of the open session (`sync_map` brings it up to date)."""
        if state.map_filter in MAP_FILTERS:
            self.map.set_filter(state.map_filter)
        self._saved_maps = SavedMaps(map_dir) if map_dir is not None else None
        self._saved_map: bytes | None = None
        """The open session's map layout from its last close (`update_map` takes it)."""
        self.map_query = ""
        """The search whose hits the map marks ("" none)."""
        self.running = False
        self.progress = ""
        self.progress_args: tuple[tuple[str, str], ...] = ()
        """Values of ``progress``'s ``{name}`` placeholders (like `Notice.args`)."""
        self.waiting_approval: set[str] = set()
        self.approver: Approver | None = None
        self._listeners: list[Listener] = []
        self._loader: MessageLoader | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._reported = 0  # entries of the open session that listeners know of
        self._restoring_model = False  # the saved model's server has not answered yet
        self._saved_model_key: str | None = None
        self._run: asyncio.Task[Any] | None = None
        self._run_failed = False
        self._run_failures = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._relisting: asyncio.Task[None] | None = None
        self._draft_timer: asyncio.TimerHandle | None = None
        self.opening: SessionOpening | None = None
        """A big session never seen before, being read (its branch's end is shown)."""
        self.opening_ref: str | None = None
        self._opening_task: asyncio.Task[None] | None = None
        self._later: list[str] = []
        """Sessions `start` left out of the list's update: the one a launch restores,
        indexed from what opening it read (`_index_later`)."""
        self._listing: asyncio.Task[list[str]] | None = None
        """Our folder's index still being brought in line after `INDEX_WAIT_S`."""
        self._restored = False  # `restore` ran (what `start` left to it was taken)
        models.changed = self._on_models_changed
        self.mcp.subscribe(lambda: self._changed(mcp_changed(self.mcp, self.notify)))

    # ------------------------------------------------------------ listeners, tasks

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event: Event) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("a workbench listener failed on %s", type(event).__name__)

    def _changed(self, changes: Changes) -> Changes:
        """Add what was appended since the last report, then tell every listener."""
        session = self.session
        if session is not None and session.entry_count > self._reported:
            new = tuple(session.entry_ids(self._reported))  # ids only: no line is read
            self._reported = session.entry_count
            changes = changes | Changes(appended=new)
        if not changes.empty:
            self._emit(changes)
        return changes

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run background work owned by the workbench (awaited by `aclose`)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    async def settled(self) -> None:
        """Wait for the workbench's background work (model discovery, a harness restarted
        for a model that just came, usage counted, a progressive open, Pi's first index);
        each piece is finite (servers have timeouts)."""
        me = asyncio.current_task()
        while pending := [t for t in self._tasks if t is not me]:
            await asyncio.wait(pending)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("background work failed", exc_info=exc)

    async def start(self) -> None:
        """Keys, the store, then model discovery in the background (never awaited here:
        a server that accepts and never answers must not delay the first paint)."""
        await self.models.load_keys()
        if self.sandbox is not None:
            self.sandbox.network = self.settings.shell_network
            self.notify("sandbox", self.sandbox.problem)
        if settings_from_newer(self.settings):
            self.notify(
                "settings_version",
                "Settings were saved by Desktop Agent {saved}, newer than this version"
                " ({version}): they are used, but changes made here are not saved.",
                saved=self.settings.app_version,
                version=APP_VERSION,
            )
        # A big file the list does not know yet was read twice before the window could
        # show it (for the list, then as the session): the one to restore is left to
        # the restore, big new ones are glanced at, and both are indexed once opened.
        last = self.state.last_session_path
        if last and self.settings.restore != "new" and self.store.holds(last):
            self._later = [last]
        self._listing = await self._start_listing(
            self.store.start(list(self._later), glance=True), self._listed
        )
        if self.pi is not None:
            await self._start_pi(self.pi)
        self.spawn(self.models.discover())
        # not one of `spawn`'s: it never ends (`settled` would wait for it); `aclose` ends it
        self._relisting = asyncio.ensure_future(self.models.keep_listing())
        await self.refresh_sessions()

    async def _start_listing(
        self, start: Awaitable[_T], done: Callable[[_T], Awaitable[None]]
    ) -> asyncio.Task[_T] | None:
        """Bring a folder's index in line (``start``): a stat per file when it exists
        (tens of ms for thousands of files), so it is awaited, then ``done``; a first
        index of thousands of files takes seconds, so after `INDEX_WAIT_S` it goes on in
        the background, and ``done`` and a refresh of the list follow when it ends.
        Returns the task still running (None: done in time)."""
        task = asyncio.ensure_future(start)
        finished, _ = await asyncio.wait([task], timeout=INDEX_WAIT_S)
        if finished:
            await done(task.result())
            return None

        async def finish() -> None:
            await done(await task)
            await self.refresh_sessions()

        self.spawn(finish())
        return task

    async def _listed(self, glanced: list[str]) -> None:
        """Our folder's index is in line. Big sessions it only glanced at are indexed
        whole once opened, or by `_index_later` (at once when it ended after the
        restore)."""
        self._listing = None
        self._later += [r for r in glanced if r not in self._later]
        if self._restored and self._later and self.opening is None:
            await self._index_later(None)

    async def _start_pi(self, pi: JsonlStore) -> None:
        """Bring the index of Pi's folder in line (`_start_listing`): the list gets Pi's
        sessions when it is done."""

        async def listed(_: list[str]) -> None:
            self._pi_listed = True

        await self._start_listing(pi.start(), listed)

    async def warm_up(self) -> None:
        """After the first paint: import the SDKs of usable models (seconds, on a thread)."""
        await warm_up(sorted({m.api for m in self.models.usable()}))

    async def aclose(self) -> None:
        """Wait for background work, then close the store."""
        self._cancel_opening()
        if self._relisting is not None:
            self._relisting.cancel()
            await asyncio.wait([self._relisting])
        if self._draft_timer is not None:
            self._draft_timer.cancel()
        if self.files is not None:
            self.files.files.store.stop()  # e.g. a first snapshot of a big folder
        for task in list(self._tasks):
            task.cancel()
        while self._tasks:
            await asyncio.wait(list(self._tasks))
        await self.mcp.close()
        await self.store.close()
        if self.pi is not None:
            await self.pi.close()

    def start_mcp(self) -> None:
        """Start the MCP servers in the background (the window calls it once painted)."""

        async def start() -> None:
            await self.mcp.start()
            self._changed(mcp_changed(self.mcp, self.notify))

        self.spawn(start())

    # ------------------------------------------------------------ views

    @property
    def read_only(self) -> bool:
        return self.session is not None and self.session.read_only

    async def branch(self) -> list[BranchItem]:
        """The current branch for the chat (see `branch_items`)."""
        if self.session is None:
            return []
        return await branch_items(self.session, self._loader)

    def branch_reader(self) -> BranchReader | TailReader | None:
        """The current branch for the chat, read from its end in pages (`BranchReader`);
        while a big file is still being read, the end of its branch (`TailReader`)."""
        if self.session is None:
            return TailReader(self.opening.tail) if self.opening is not None else None
        return BranchReader(self.session, self._loader, at_rest=not self.running)

    async def context_size(self) -> int:
        """How many messages the model would see now (Pi's ``buildSessionContext``)."""
        if self.session is None:
            return 0
        return len((await self.session.build_context(lenient=True)).messages)

    def current_path(self) -> list[str]:
        """Root-first entry ids of the current branch."""
        return self.session.branch_ids(lenient=True) if self.session is not None else []

    # ------------------------------------------------------------ the branch map

    def sync_map(self) -> MapUpdate:
        """Bring `map` in line with the open session (see `BranchMap.sync`)."""
        return self.map.sync(self.session.shape() if self.session is not None else None)

    async def update_map(self) -> MapUpdate:
        """`sync_map`, a relayout in slices on the loop (`BranchMap.update`); the first
        one after an open starts from the layout kept at the last close when it fits."""
        shape = self.session.shape() if self.session is not None else None
        saved, self._saved_map = self._saved_map, None
        if saved is not None and shape is not None and await self.map.restore_saved(shape, saved):
            await self.map.update(shape)  # entries appended since
            return MapUpdate(reset=True)
        return await self.map.update(shape)

    async def _keep_map(self, session: Session, ref: str) -> None:
        """Keep the map's layout of ``session`` (a big one) for its next open."""
        shape = self.map.shape
        if self._saved_maps is None or len(self.map.rows) < MIN_ROWS or shape is None:
            return
        if shape.ids is not session.shape().ids:  # (the map still shows another session)
            return
        try:
            data = self.map.saved()
        except (KeyError, IndexError, ValueError):  # a shortcut only: never in the way
            log.exception("the map layout could not be kept")
            return
        if data is not None:
            await asyncio.to_thread(self._saved_maps.write, ref, data)

    async def set_map_filter(self, name: MapFilter) -> Changes:
        """Which entries the map shows (`MAP_FILTERS`); remembered."""
        self.map.set_filter(name)
        self.state.map_filter = name
        self._save_state(self.state)
        return self._changed(Changes(tree=True))

    async def map_previews(self, entry_ids: Sequence[str]) -> dict[str, str]:
        """One-line previews of map rows (read off the loop once, then kept)."""
        session = self.session
        if session is None:
            return {}
        by_id = session.shape().by_id
        known = [e for e in entry_ids if e in by_id]
        return await session.previews(known)

    def map_tooltip(self, entry_id: str) -> str:
        """The whole message of a map row, for its tooltip (decoded now)."""
        return tooltip_text(self.session, entry_id) if self.session is not None else ""

    async def search_session(self, query: str) -> list[str]:
        """Entries of the open session (every branch) that match ``query``; the map
        marks them (an empty query clears the marks)."""
        self.map_query = query.strip()
        session = self.session
        try:
            hits = await find_entries(session, self.map_query) if session is not None else []
        except SessionError as exc:  # e.g. the file changed under us: no marks, a notice
            log.warning("could not search the session: %s", exc)
            hits = []
        if self.session is session:
            self.map.set_hits(hits)
            self._changed(Changes(tree=True))
        return hits

    def model_key(self) -> str | None:
        model = self.harness.model if self.harness is not None else None
        return model.key if model is not None else None

    def model_choices(self) -> ModelChoices:
        harness = self.harness
        model = harness.model if harness is not None else None
        pending = None
        current = model.key if model is not None else None
        if model is None and self.session is not None:
            current = self._saved_model_key  # kept: shown as connecting or unavailable
            if self._restoring_model:
                pending = current
        levels = tuple(str(x) for x in supported_thinking_levels(model))
        if model is not None and model.reasoning and not takes_thinking_level(model):
            levels = ()  # its server decides how much it thinks (m7)
        return ModelChoices(
            models=tuple(self.models.choices()),
            current=current,
            levels=levels,
            level=harness.thinking_level if harness is not None else "off",
            pending=pending,
        )

    def notice_texts(self) -> list[str]:
        return [n.english for n in self.notices.values()]

    def draft(self) -> str:
        key = self._draft_key()
        return self.state.drafts.get(key, "") if key else ""

    def default_workspace(self) -> str | None:
        if self.session is not None and self.session.metadata.cwd:
            return self.session.metadata.cwd
        return self.state.last_workspace

    def row_for(self, ref: str) -> SidebarRow | None:
        return next((r for r in self.rows if r.path == ref), None)

    def is_pi(self, ref: str | None) -> bool:
        """Whether ``ref`` is a session of the Pi CLI's folder."""
        return ref is not None and self.pi is not None and self.pi.holds(ref)

    def _store_for(self, ref: str) -> SessionStore:
        """The store that holds ``ref``: the Pi CLI's folder, or ours."""
        return self.pi if self.pi is not None and self.pi.holds(ref) else self.store

    @property
    def pi_count(self) -> int:
        """How many sessions of the Pi CLI's folder the list shows."""
        return sum(1 for r in self.rows if r.source == "pi")

    # ------------------------------------------------------------ notices

    def notify(
        self,
        key: str,
        text: str | None,
        action: tuple[str, Callable[[], Coroutine[Any, Any, Changes]]] | None = None,
        **args: object,
    ) -> Changes:
        """Show (or with ``text`` None, drop) the notice of one cause. ``text`` is a fixed
        English text (the GUI translates it) with ``{name}`` placeholders for ``args``."""
        for sub in [k for k in self._actions if k.startswith(key + "/")]:
            del self._actions[sub]  # the buttons of `notify_choices`
        if text is None:
            if self.notices.pop(key, None) is None:
                return NOTHING
            self._actions.pop(key, None)
        else:
            values = tuple((k, str(v)) for k, v in args.items())
            self.notices[key] = Notice(key, text, action[0] if action else None, values)
            if action is not None:
                self._actions[key] = action[1]
            else:
                self._actions.pop(key, None)
        return Changes(notices=True)

    def notify_choices(
        self,
        key: str,
        text: str,
        action: tuple[str, Callable[[], Coroutine[Any, Any, Changes]]],
        more: Sequence[tuple[str, Callable[[], Coroutine[Any, Any, Changes]]]],
        **args: object,
    ) -> Changes:
        """A notice with further buttons besides ``action`` (each run as ``key/label``)."""
        changes = self.notify(key, text, action, **args)
        buttons = tuple((label, f"{key}/{label}") for label, _ in more)
        self.notices[key] = replace(self.notices[key], more=buttons)
        for (_, sub), (_, run) in zip(buttons, more, strict=True):
            self._actions[sub] = run
        return changes

    async def notice_action(self, key: str) -> Changes:
        """Run a notice's action (e.g. Undo; ``key/label`` for its other buttons) once."""
        action = self._actions.pop(key, None)
        changes = self.notify(key.partition("/")[0], None)
        if action is not None:
            changes = changes | await action()
        return self._changed(changes)

    async def dismiss(self, key: str) -> Changes:
        return self._changed(self.notify(key, None))

    # ------------------------------------------------------------ the session list

    async def refresh_sessions(self, query: str | None = None) -> Changes:
        if query is not None:
            self.query = query
        try:
            rows = await self.store.sessions(self.query or None)
            self.trash_rows = await self.store.trash()
        except (OSError, SessionError) as exc:
            log.warning("could not list the sessions: %s", exc)
            rows = [r for r in self.rows if r.source != "pi"]
        if self.pi is not None and self._pi_listed:  # (not while its first index runs)
            try:
                rows = newest_first(rows + await self.pi.sessions(self.query or None))
            except (OSError, SessionError) as exc:
                log.warning("could not list the Pi sessions: %s", exc)
        self.rows = rows
        return self._changed(Changes(sessions=True))

    # ------------------------------------------------------------ opening and closing

    async def restore(
        self, target: str | None = None, *, new: bool = False, workspace: str | None = None
    ) -> Changes:
        """At launch: ``target``, else a new session when asked, else the last session
        (of the last workspace), else a new session in that workspace when it exists,
        else nothing (the start page). ``workspace`` (given on
        the command line) becomes the folder of new sessions."""
        changes = await self._restore(target, new=new, workspace=workspace)
        self._restored = True
        if self._later and self.opening is None:  # it opened another session, or none
            await self._index_later(None)
            changes |= await self.refresh_sessions()
        return changes

    async def _restore(self, target: str | None, *, new: bool, workspace: str | None) -> Changes:
        if workspace:
            self.state.last_workspace = workspace
        if target is not None:
            ref = await self._find(target)
            if ref is None:
                return self._changed(
                    self.notify("open", "No session {target} was found.", target=target)
                )
            return await self.open(ref)
        if new or (self.settings.restore == "new" and (workspace or self.state.last_workspace)):
            return await self.new_session(workspace)
        last = self.state.last_session_path
        if last and not self._in_other_workspace(last, workspace) and await self._find(last):
            return await self.open(last)
        if self._listing is not None:  # the newest session is chosen from the whole list
            await asyncio.wait([self._listing])
            await self.refresh_sessions()
        wanted = workspace or self.state.last_workspace
        rows = [r for r in self.rows if r.cwd == wanted] or self.rows
        if rows:
            return await self.open(rows[0].path)
        exists = bool(wanted) and await asyncio.to_thread(_is_dir, wanted or "")
        if wanted and exists:
            # Nothing to restore but a folder to work in: a new session there, so a
            # prompt typed at once goes to the composer (not to the session search).
            return await self.new_session(wanted)
        return self._changed(Changes.everything())

    def _in_other_workspace(self, ref: str, workspace: str | None) -> bool:
        """Whether the listed session ``ref`` belongs to another folder than the
        ``--workspace`` given (then the last session is not the one to restore: m19)."""
        cwd = next((r.cwd for r in self.rows if r.path == ref), None)
        if not workspace or cwd is None:
            return False
        return os.path.realpath(cwd) != os.path.realpath(workspace)

    async def _find(self, id_or_ref: str) -> str | None:
        """The reference of a session given by id or reference, ours first, then Pi's."""
        if self.pi is not None and self.pi.holds(id_or_ref):
            return await self.pi.find(id_or_ref)
        ref = await self.store.find(id_or_ref)
        if ref is None and self.pi is not None and not id_or_ref.endswith(".jsonl"):
            ref = await self.pi.find(id_or_ref)
        return ref

    async def open(self, ref: str) -> Changes:
        if ref == self.ref or (self.opening is not None and ref == self.opening_ref):
            return NOTHING
        self._check_idle("switching sessions")
        store = self._store_for(ref)
        opening = await store.open_progressive(ref)
        if opening is None:
            session = await store.open(ref)
        elif opening.tail.complete:  # it has an entry index: it is open already
            session = await opening.session()
        else:
            return await self._open_progressively(ref, opening)
        self._cancel_opening()
        await self._leave()
        return await self._adopt(session)

    async def _open_progressively(self, ref: str, opening: SessionOpening) -> Changes:
        """A big file never seen before: the chat shows the end of its current branch
        now (`TailReader`), the status bar how much is read, and the session is adopted
        when the whole file is read off the loop."""
        self._cancel_opening()
        await self._leave()
        self.opening, self.opening_ref = opening, ref
        self.progress = "Reading the session…"
        self._opening_task = self.spawn(self._finish_opening(ref, opening))
        return self._changed(Changes.everything())

    async def _finish_opening(self, ref: str, opening: SessionOpening) -> None:
        try:
            while True:
                try:
                    session = await asyncio.wait_for(opening.session(), 0.25)
                    break
                except TimeoutError:
                    if self.opening is not opening:
                        return
                    self.progress = "Reading the session… {percent}"
                    self.progress_args = (("percent", f"{opening.progress:.0%}"),)
                    self._changed(Changes(running=True))
        except SessionError as exc:
            if self._later:
                await self._index_later(None)
            if self.opening is opening:
                self.opening, self.opening_ref, self.progress = None, None, ""
                notice = self.notify(
                    "open", "Could not open {ref}: {error}", ref=ref, error=exc.message
                )
                self._changed(Changes.everything() | notice)
            return
        if self.opening is not opening:  # another session was opened meanwhile
            opening.cancel()
            return
        self.opening, self.opening_ref, self.progress = None, None, ""
        await self._adopt(session)

    def _cancel_opening(self) -> None:
        if self.opening is not None:
            self.opening.cancel()
            self.opening, self.opening_ref, self.progress = None, None, ""

    async def opened(self) -> None:
        """Wait until a session being opened progressively is open (or failed)."""
        task = self._opening_task
        if task is not None and not task.done():
            await asyncio.wait([task])

    async def new_session(self, cwd: str | None = None) -> Changes:
        """The one way a session starts: it records its model, thinking level and tools."""
        workspace = cwd or self.default_workspace()
        if not workspace:
            raise WorkbenchError("Choose the project folder for the new session first.")
        self._check_idle("starting a new session")
        await self._leave()
        session = await self.store.create(str(workspace))
        changes = await self._adopt(session)
        harness = self.harness
        if harness is not None:
            if harness.model is not None:
                await session.append_model_change(harness.model.provider, harness.model.id)
            await session.append_thinking_level_change(harness.thinking_level)
            if harness.active_tool_names:
                await session.append_active_tools_change(harness.active_tool_names)
            await self._sync(session)
        await self.store.changed(self.ref or "")
        return self._changed(changes | await self.refresh_sessions())

    async def _adopt(self, session: Session) -> Changes:
        """Make ``session`` the open one: its harness, views, and what to remember."""
        self.session = session
        path = session.metadata.path
        self.ref = path if path and self.is_pi(path) else self.store.ref_of(session)
        self.recovery = session.recovery
        self._loader = MessageLoader(session)
        self._reported = session.entry_count
        saved_maps = self._saved_maps
        self._saved_map = await asyncio.to_thread(saved_maps.read, self.ref) if saved_maps else None
        await self._start_harness(session)
        self.save = SaveState("read_only" if session.read_only else "saved")
        self._notify_read_only(session)
        self.state.last_session_path = self.ref
        self.state.last_workspace = session.metadata.cwd or self.state.last_workspace
        self._remember()
        if self._later:
            await self._index_later(session)
        self._follow_files()
        changes = Changes.everything() | await self.refresh_sessions()
        return self._changed(changes)

    async def _index_later(self, session: Session | None) -> None:
        """The sessions `start` left to the restore, brought into the list now: the one
        just opened from what opening it read (`SessionIndex.update_file`)."""
        later, self._later = self._later, []
        for ref in later:
            opened = session if session is not None and ref == self.ref else None
            await self.store.changed(ref, opened)

    async def _start_harness(self, session: Session) -> None:
        """Build the harness with the session's saved model, thinking level and tools.

        A saved model whose server is still being listed is waited for (no fallback, no
        notice yet): the harness then has no model until the server answers."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        context = await session.build_context(lenient=True, messages=False)
        has_thinking = session.branch_has("thinking_level_change", lenient=True)
        tools = self._tools()
        restored = restore_settings(
            context,
            self.models.registry,
            has_key=self.models.has_key,
            available_tools=[t.name for t in tools],
            has_thinking_entry=has_thinking,
            default_model=self.settings.default_model,
            default_thinking_level=self.settings.default_thinking_level,
            server_problem=self.models.problems.get,
        )
        model: Model | None = restored.model
        notice, notice_args = restored.notice_template, dict(restored.notice_args)
        saved = context.model
        self._saved_model_key = f"{saved.provider}/{saved.model_id}" if saved else None
        self._restoring_model = False
        if saved is not None and notice is not None and self.models.pending(saved.provider):
            url = self.models.server_url(saved.provider) or saved.provider
            text = "Connecting to {url} for {saved}…"
            model, notice = None, text
            notice_args = {"url": url, "saved": self._saved_model_key or ""}
            self._restoring_model = True
        cwd = session.metadata.cwd or ""
        workspace: Workspace | None = None
        exists = await asyncio.to_thread(_is_dir, cwd)
        if exists:
            workspace = Workspace(
                cwd,
                forbidden_roots=self.forbidden_roots,
                read_only_roots=self.project.prompt(cwd).skill_roots,
            )
        policy = ApprovalPolicy(self._approve, rules=dict(self.settings.approval))
        harness = AgentHarness(
            session=session,
            model=model,
            tools=tools if workspace is not None else [],
            system_prompt=self.project.prompt(cwd).system_prompt if cwd else None,
            thinking_level=restored.thinking_level,
            active_tool_names=restored.active_tool_names,
            get_api_key=self.models.get_api_key,
            workspace=workspace,
            approval_policy=policy,
            tool_output_dir=self.tool_output_dir,
            settings=self.harness_settings,
            redactor=self.redactor,
            checkpoints=self.files.files.store.folder(cwd) if self.files and workspace else None,
            more_tools=self.mcp.tools,
        )
        self._unsubscribe = harness.subscribe(self._on_harness_event)
        self.harness = harness
        if self._restoring_model and saved is not None and not self.models.pending(saved.provider):
            # The server answered while this harness was being built (the awaits above):
            # its models-changed call found no harness to restart, so restart it now.
            self.spawn(self._restart_harness())
        if "problem" in notice_args:  # its server could not list it: offer to ask again
            self.notify("model", notice, ("Try again", self.retry_servers), **notice_args)
        else:
            self.notify("model", notice, None, **notice_args)
        missing = None
        if workspace is None:
            missing = (
                "The project folder {folder} does not exist here: the agent can chat but not "
                "use its tools."
            )
        self.notify("workspace", missing, folder=cwd)
        if workspace is not None:  # its own MCP servers: used if allowed, offered once
            self.spawn(self._project_mcp(cwd))
        self._count_usage(session, model.context_window if model else 0, context.messages)
        if exists:
            self.spawn(self._check_project(cwd))
            if harness.checkpoints is not None:
                self.spawn(_warm_checkpoints(harness.checkpoints.folder))

    async def _project_mcp(self, folder: str) -> None:
        offer = self.mcp.offer_project(folder, self.state.mcp_projects, self._remember, self.notify)
        self._changed(await offer)

    def _count_usage(
        self, session: Session, context_window: int, context: Sequence[AgentMessage] = ()
    ) -> None:
        """The usage of the current branch. A long branch is counted after the first
        paint, on the loop in slices (it reads the usage of every answer); until then the
        status bar has how full the context is, from the context just built."""
        if session.entry_count <= INLINE_ENTRIES:
            self.usage = count_branch_usage(session, context_window)
            return
        last = next(
            (
                m
                for m in reversed(context)
                if isinstance(m, AssistantMessage) and m.stop_reason not in ("error", "aborted")
            ),
            None,
        )
        start = Usage(context_window=context_window)
        self.usage = start.add(last) if last is not None else start
        start = self.usage
        ref = self.ref
        memo = self.state.branch_usage
        since = None
        if memo is not None and ref is not None and memo.ref == ref:
            counted = Usage(tokens=memo.tokens, cost=memo.cost, context_tokens=memo.context_tokens)
            since = (memo.leaf, counted)

        async def count() -> None:
            branch = session.branch_ids(lenient=True)
            counted = await count_branch_usage_sliced(session, context_window, since, branch)
            leaf = branch[-1] if branch else None
            if self.session is not session or self.ref != ref:
                return
            if ref is not None and leaf is not None:
                self.state.branch_usage = BranchUsage(
                    ref=ref,
                    leaf=leaf,
                    tokens=counted.tokens,
                    cost=counted.cost,
                    context_tokens=counted.context_tokens,
                )
            now = self.usage  # plus what was answered meanwhile
            self.usage = Usage(
                tokens=counted.tokens + now.tokens - start.tokens,
                cost=counted.cost + now.cost - start.cost,
                context_tokens=(now.context_tokens if now != start else counted.context_tokens),
                context_window=now.context_window,
            )
            self._changed(Changes(usage=True))

        self.spawn(count())

    def _on_models_changed(self) -> None:
        """Discovery or a new key: a session waiting for its model may get it now."""
        problems = self.models.problems
        self.notify("servers", " ".join(problems[n] for n in sorted(problems)) or None)
        harness = self.harness
        needs = harness is not None and (harness.model is None or "model" in self.notices)
        if needs and harness is not None and harness.is_idle and self.session is not None:
            self.spawn(self._restart_harness())
        else:
            self._changed(Changes(models=True, notices=True))

    async def retry_servers(self) -> Changes:
        """List the configured servers again (the "Try again" of a model notice): a session
        whose server now answers gets its own model back."""
        await self.models.discover()
        self._on_models_changed()
        return Changes(models=True, notices=True)

    async def _restart_harness(self) -> None:
        if self.session is not None and self.harness is not None and self.harness.is_idle:
            await self._start_harness(self.session)
        self._changed(Changes(models=True, notices=True, usage=True))

    async def _leave(self) -> None:
        """Close the open session (discarding it when it is an empty "New session")."""
        session, ref = self.session, self.ref
        if session is None or ref is None:
            return
        self._remember()
        await self._keep_map(session, ref)
        empty = not any(session.entry_kind(i)[0] == "message" for i in session.entry_ids())
        draft = self.state.drafts.get(self._draft_key() or "", "")
        try:
            await session.close()
        except SessionWriteError:
            pass
        if not session.closed:
            raise WorkbenchError(
                f"{entries_phrase(session.pending_count)} of this session could not be saved:"
                " retry saving, or save a copy, first."
            )
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.session, self.harness, self.ref, self._loader = None, None, None, None
        self.recovery = None
        for key in ("model", "workspace", "save", "read_only"):
            self.notify(key, None)
        store = self._store_for(ref)
        if empty and not draft and not session.read_only and self.store.holds(ref):
            await store.discard(ref)  # never another program's file
        else:
            await store.changed(ref)

    async def close(self) -> Changes:
        """Close the open session (the start page shows)."""
        self._check_idle("closing the session")
        await self._leave()
        self.usage, self.save = Usage(), SaveState()
        return self._changed(Changes.everything() | await self.refresh_sessions())

    # ------------------------------------------------------------ running

    def _check_idle(self, what: str) -> None:
        if self.harness is not None and not self.harness.is_idle:
            raise WorkbenchError(f"Stop the agent before {what}.")

    async def send(self, text: str, attachments: Sequence[Attachment] = ()) -> Changes:
        """Run one prompt to the end (its events reach listeners as they come)."""
        if self.session is not None and self.session.read_only and not await take_over(self):
            raise WorkbenchError(fill(*self._read_only_text(self.session)))
        if self._restoring_model:
            await self.models.settled()
        if self.opening is not None:
            raise self._not_open()  # the prompt stays in the composer
        harness = self.harness
        if harness is None or harness.model is None:
            key = self._draft_key()
            if key:
                self.state.drafts[key] = text
            notice = self.notices.get("model")
            raise WorkbenchError(notice.english if notice is not None else NO_MODEL)
        text = await self._expand(text)
        images: list[ImageContent] = []
        for att in attachments:
            if att.is_image:
                images.append(
                    ImageContent(data=base64.b64encode(att.data).decode(), mime_type=att.mime_type)
                )
            else:
                body = att.data.decode("utf-8", "replace")
                text += f"\n\n<file name={json.dumps(att.name)}>\n{body}\n</file>"
        self.state.drafts.pop(self._draft_key() or "", None)
        return await self._run_with(lambda: harness.prompt(text, images))

    async def retry(self) -> Changes:
        """Send the failed request again (the Retry button of an error card)."""
        harness = self.harness
        if harness is None or not harness.is_idle:
            return NOTHING
        return await self._run_with(harness.continue_run, fold=True)

    async def regenerate(self, entry_id: str | None = None) -> Changes:
        """A new version of the answer ``entry_id`` (default: the last one); a failed
        request is retried (`regenerate_point`)."""
        harness = self.harness
        if harness is None or not harness.is_idle or self.session is None:
            return NOTHING
        prompt = regenerate_point(self.session, entry_id)
        if prompt is None:
            return await self.retry()
        await harness.navigate_tree(prompt, exact=True)
        await self._branch_moved()
        return await self._run_with(harness.continue_run)

    async def _run_with(
        self, start: Callable[[], Awaitable[Any]], *, fold: bool = False
    ) -> Changes:
        """Run the harness; ``fold``: the branch ends in a failure that this run retries."""
        self.running = True
        self._run_failed = fold
        self._run_failures = 0
        self.notify("run", None)
        self.notify("error", None)
        self._changed(Changes(running=True, draft=True, notices=True))
        task = asyncio.ensure_future(start())
        self._run = task
        try:
            await task
        except HarnessError as exc:
            self.notify("run", exc.message)
        finally:
            self._run = None
            self.running = False
            self.progress = ""
            if self.ref:
                await self._store_for(self.ref).changed(self.ref)
            self._follow_files()  # the turns' file marks; a bar the run made moot goes
        # Failed attempts fold into the answer once it came: then the chat redraws the
        # branch; otherwise what streamed in is what the branch is.
        return self._changed(
            Changes(running=True, branch=self._run_failed, save_state=True, notices=True)
            | await self.refresh_sessions()
        )

    async def wait_for_run(self) -> None:
        if self._run is not None:
            await asyncio.wait([self._run])

    async def stop(self) -> Changes:
        if self.harness is not None and not self.harness.is_idle:
            await self.harness.abort()
        return NOTHING

    async def steer(self, text: str) -> Changes:
        if self.harness is not None and not self.harness.is_idle:
            await self.harness.steer(await self._expand(text))
            return self._changed(Changes(notices=True))
        return await self.send(text)

    async def follow_up(self, text: str) -> Changes:
        if self.harness is not None and not self.harness.is_idle:
            await self.harness.follow_up(await self._expand(text))
            return self._changed(Changes(notices=True))
        return await self.send(text)

    # ------------------------------------------------------------ the project (issue 19)

    def _folder(self) -> str | None:
        return (self.session.metadata.cwd or None) if self.session is not None else None

    async def _expand(self, text: str) -> str:
        """``/template args`` and ``/skill:name`` as sent (the session keeps that, as
        Pi's does); files that could not be used are named in a notice."""
        text, problems = await self.project.expand(self._folder(), text)
        self._name_problems(problems)
        return text

    def _name_problems(self, problems: Sequence[Problem]) -> Changes:
        notice = problems_notice(problems)
        if notice is None:
            return self.notify("project_files", None)
        path, problem, more = notice
        return self.notify(
            "project_files",
            "Project file {path} {problem}{more}",
            path=path,
            problem=problem,
            more=more,
        )

    async def _check_project(self, folder: str) -> None:
        """Name the folder's unusable files once it opens, before anything is sent."""
        problems = await self.project.problems(folder)
        if self._folder() == folder:
            self._changed(self._name_problems(problems))

    async def completions(self) -> list[Completion]:
        """The composer's ``/`` list: the app's commands, templates and skills."""
        return await self.project.completions(self._folder())

    async def context_view(self) -> ContextView | None:
        """The Context view of the open session's folder (None: no session)."""
        folder = self._folder()
        if folder is None:
            return None
        tools = self.harness.tool_lines() if self.harness is not None else []
        view = await self.project.view(folder, tools)
        self._changed(self._name_problems(view.report.problems))
        return view

    async def set_instructions(self, text: str) -> Changes:
        """The open folder's Instructions, used from the next turn on."""
        folder = self._folder()
        if folder is None:
            raise WorkbenchError(NO_SESSION)
        self.project.set_instructions(folder, text)  # saved like every setting, on the loop
        return NOTHING

    async def compact(self, instructions: str = "") -> Changes:
        """Compact now: the conversation so far becomes a summary (the compaction card)."""
        harness = self.harness
        if harness is None or harness.model is None:
            raise WorkbenchError(NO_MODEL)
        self._check_idle("compacting")
        return await self._run_with(lambda: harness.compact(instructions or None))

    def _on_harness_event(self, event: HarnessEvent) -> None:
        changes = NOTHING
        if isinstance(event, MessageSavedEvent):
            self._emit(event)
            message = event.message
            if isinstance(message, AssistantMessage):
                self.usage = self.usage.add(message)
                changes = Changes(usage=True)
                # Failed attempts fold into one card: the chat redraws the branch when a
                # failure was retried (a second failure, or an answer after one).
                failed = message.stop_reason == "error"
                self._run_failed |= self._run_failures > 0
                self._run_failures += failed
            item = self._item_for(event.entry_id)
            if item is not None:
                changes = changes | Changes(saved_items=(item,))
            if self.save.status == "not_saved" and self.session is not None:
                self.save = replace(self.save, pending=self.session.pending_count)
                changes = changes | Changes(save_state=True)
            self._changed(changes)
            return
        if isinstance(event, TurnStartEvent) and self.save.status != "not_saved":
            self.save = SaveState("saving")
            changes = Changes(save_state=True)
        elif isinstance(event, SavePointEvent):
            pending = self.session.pending_count if self.session else 0
            if event.saved:
                self.save = SaveState("saved")
            else:
                self.save = SaveState("not_saved", pending, self.save.detail, self.save.code)
            changes = Changes(save_state=True)
        elif isinstance(event, PersistenceErrorEvent):
            pending = self.session.pending_count if self.session else event.pending_count
            self.save = SaveState("not_saved", pending, event.message, event.code)
            changes = Changes(save_state=True)
        elif isinstance(event, PersistenceRestoredEvent):
            self.save = SaveState("saved")
            changes = Changes(save_state=True)
        elif isinstance(event, AutoRetryStartEvent):
            self.progress = (
                "The request failed; retrying in {seconds} s (attempt {n} of {attempts})"
            )
            self.progress_args = (
                ("seconds", f"{event.delay_ms / 1000:.0f}"),
                ("n", str(event.attempt)),
                ("attempts", str(event.max_attempts)),
            )
            changes = Changes(running=True)
        elif isinstance(event, AutoRetryEndEvent | CompactionEndEvent):
            self.progress = ""
            changes = Changes(running=True)
        elif isinstance(event, CompactionStartEvent):
            self.progress = "Compacting the conversation…"
            changes = Changes(running=True)
        elif isinstance(event, SessionCompactEvent):
            changes = Changes(branch=True, usage=True)
        elif isinstance(event, NoticeEvent):  # e.g. files left out of a checkpoint
            changes = self.notify("checkpoint", "{message}", message=event.message)
        self._emit(event)
        self._changed(changes)

    def _item_for(self, entry_id: str | None) -> BranchItem | None:
        """The branch item of a just-saved visible message (with its siblings)."""
        session = self.session
        if session is None or entry_id is None or self._loader is None:
            return None
        if not is_visible(session, entry_id):
            return None
        kind, role = session.entry_kind(entry_id)
        siblings = visible_siblings(session, entry_id)
        return BranchItem(
            entry_id=entry_id,
            kind=kind,
            role=role,
            load=self._loader,
            sibling_index=siblings.index(entry_id) if entry_id in siblings else 0,
            sibling_count=max(1, len(siblings)),
        )

    async def _approve(self, request: ApprovalRequest) -> ApprovalDecision | None:
        self.waiting_approval.add(request.call_id)
        self._emit(ApprovalWaitEvent(request.call_id, True))
        try:
            if self.approver is None:
                return ApprovalDecision.DENY
            return await self.approver(request)
        finally:
            self.waiting_approval.discard(request.call_id)
            self._emit(ApprovalWaitEvent(request.call_id, False))

    # ------------------------------------------------------------ branches

    def _not_open(self) -> WorkbenchError:
        if self.opening is not None:
            return WorkbenchError(
                "The session is still being read: you can continue it in a moment."
            )
        return WorkbenchError("No session is open.")

    def _need_harness(self) -> AgentHarness:
        if self.harness is None:
            raise self._not_open()
        self._check_idle("switching branches")
        return self.harness

    async def navigate(self, entry_id: str, *, summarize: bool = False) -> Changes:
        """Move the leaf onto ``entry_id`` (the one route of every leaf move)."""
        harness = self._need_harness()
        if self.session is not None and entry_id == self.session.leaf_id():
            return NOTHING
        if summarize:
            self.progress = "Summarizing the branch you are leaving…"
            self._changed(Changes(running=True))
        try:
            await harness.navigate_tree(entry_id, summarize=summarize, exact=True)
        finally:
            self.progress = ""
        return await self._branch_moved()

    async def _branch_moved(self) -> Changes:
        session = self.session
        model = self.harness.model if self.harness else None
        if session is not None:
            self._count_usage(session, model.context_window if model else 0)
        self._remember()
        self._follow_files()
        return self._changed(Changes(branch=True, usage=True, draft=True, running=True))

    async def turn_changes(self, entry_id: str) -> TurnChanges | None:
        """The files the turns of the map row of ``entry_id`` changed, with diffs."""
        if self.files is None or self.session is None:
            return None
        return await self.files.changes_at(self.session, self.map, entry_id)

    async def branch_changes(self) -> TurnChanges | None:
        """The files that differ from the branch's state (the files bar's "Show
        changes"), with diffs from the folder to the branch; None: none differ now."""
        if self.files is None:
            return None
        return await self.files.differing()

    async def restore_branch_files(self, paths: Sequence[str] | None = None) -> Changes:
        """Restore files (or ``paths`` of them) of the branch the files bar offered."""
        assert self.files is not None
        return self._changed(await self.files.restore(paths))

    async def revert_changes(
        self, changes: TurnChanges, paths: Sequence[str] | None = None
    ) -> Changes:
        """Put a turn's files (or ``paths`` of them) back as they were before it."""
        self._check_idle("reverting files")
        assert self.files is not None
        return self._changed(await self.files.revert(changes, paths))

    def _follow_files(self) -> None:
        """Compare the folder with the new point's files (in the background)."""
        files, session = self.files, self.session
        if files is not None and session is not None:
            mode = self.settings.checkpoints.follow_branch

            async def follow() -> None:
                marks = self.map.file_marks
                self.map.set_file_marks(await file_marks(session))
                redraw = Changes(tree=self.map.file_marks != marks)
                self._changed(await files.follow(session, mode) | redraw)

            self._following = self.spawn(follow())

    async def navigate_to_branch_of(self, entry_id: str) -> Changes:
        """Move the leaf to the end of the branch through ``entry_id`` (its newest
        continuation), e.g. to show a search hit with what followed it."""
        session = self._need_session()
        return await self.navigate(latest_leaf_under(session, entry_id))

    async def switch_sibling(self, entry_id: str, direction: int) -> Changes:
        """Show the previous (-1) or next (+1) version of a message (``‹ n/m ›``)."""
        session = self.session
        if session is None:
            return NOTHING
        siblings = visible_siblings(session, entry_id)
        if entry_id not in siblings or len(siblings) < 2:
            return NOTHING
        target = siblings[(siblings.index(entry_id) + direction) % len(siblings)]
        return await self.navigate(latest_leaf_under(session, target))

    async def switch_sibling_at_end(self, direction: int) -> Changes:
        reader = self.branch_reader()
        while reader is not None and reader.has_more:  # from the end: a page or two
            for item in reversed(await reader.older()):
                if item.sibling_count > 1:
                    return await self.switch_sibling(item.entry_id, direction)
        return NOTHING

    async def edit_resend(self, entry_id: str, text: str) -> Changes:
        """Send ``text`` as a new version of the prompt ``entry_id`` (a sibling of it)."""
        harness = self._need_harness()
        await harness.navigate_tree(entry_id)
        await self._branch_moved()
        if self._following is not None:  # the files of the point the prompt goes from
            await asyncio.wait([self._following])
        return await self.send(text)

    async def set_label(self, entry_id: str, label: str) -> Changes:
        session = self._need_session()
        await session.append_label(entry_id, label or None)
        await self._sync(session)
        return self._changed(NOTHING)

    def _need_session(self) -> Session:
        if self.session is None:
            raise self._not_open()
        return self.session

    async def _sync(self, session: Session) -> None:
        try:
            await session.sync()
        except SessionWriteError as exc:
            self.save = SaveState("not_saved", session.pending_count, exc.message, exc.code)
            self._changed(Changes(save_state=True))

    # ------------------------------------------------------------ model and thinking

    async def choose_model(self, key: str) -> Changes:
        model = self.models.registry.get(key)
        harness = self.harness
        if model is None and harness is not None:  # typed: /model provider/id
            raise WorkbenchError(
                f"There is no model {key!r}: give it as provider/id, as the model list has it."
            )
        if model is None or harness is None:
            return NOTHING
        self._restoring_model = False
        await harness.set_model(model)
        level = harness.thinking_level
        clamped = clamp_thinking_level(model, level)
        if clamped != level:
            await harness.set_thinking_level(clamped)
        self.notify("model", None)
        self.usage = replace(self.usage, context_window=model.context_window)
        return self._changed(Changes(models=True, usage=True, notices=True))

    async def choose_thinking(self, level: str) -> Changes:
        if self.harness is not None:
            await self.harness.set_thinking_level(level)
        return self._changed(Changes(models=True))

    # ------------------------------------------------------------ drafts and state

    def _draft_key(self) -> str | None:
        session = self.session
        if session is None or self.ref is None:
            return None
        return draft_key(self.ref, session.leaf_id())

    def set_draft(self, text: str) -> None:
        """The composer's unsent text on this branch (kept between runs of the app)."""
        key = self._draft_key()
        if key is None:
            return
        if text:
            self.state.drafts[key] = text
        else:
            self.state.drafts.pop(key, None)
        if self._draft_timer is not None:
            self._draft_timer.cancel()
        with contextlib.suppress(RuntimeError):  # no loop: saved with the next state
            loop = asyncio.get_running_loop()
            self._draft_timer = loop.call_later(DRAFT_SAVE_DELAY_S, self._remember)

    def remember(self, **values: Any) -> None:
        """Keep window facts (geometry, splitter) with the app state."""
        for key, value in values.items():
            setattr(self.state, key, value)
        self._remember()

    def _remember(self) -> None:
        self._draft_timer = None
        try:
            self._save_state(self.state)
        except OSError as exc:
            log.warning("could not save the app state: %s", exc)

    # ------------------------------------------------------------ saving failures

    async def retry_saving(self) -> Changes:
        """Write what waits in memory; when another program changed the file (a retry
        cannot succeed), reload it instead (`reload_from_disk`)."""
        session = self._need_session()
        if self.save.code == "changed_on_disk":
            return await self.reload_from_disk()
        try:
            if self.harness is not None:
                written = await self.harness.retry_persistence()
            else:
                written = await session.retry_persistence()
        except SessionWriteError as exc:
            self.save = SaveState("not_saved", session.pending_count, exc.message, exc.code)
            return self._changed(Changes(save_state=True))
        self.save = SaveState("saved")
        text = "Saved {entries} that were waiting." if written else None
        notice = self.notify("save", text, entries=entries_phrase(written))
        return self._changed(Changes(save_state=True) | notice)

    async def save_copy(self, dest: str) -> Changes:
        """The whole session (saved or not) in a new file, e.g. on another disk."""
        session = self._need_session()
        await session.save_copy(dest)
        return self._changed(
            self.notify("save", "A copy of the whole session is in {path}.", path=dest)
        )

    async def shutdown(self, *, stop: bool) -> int:
        """Settle the run, save everything; returns how many entries could not be saved
        (then the session stays open, for Retry / Save a copy / quitting without them)."""
        harness = self.harness
        if harness is not None and not harness.is_idle:
            if stop:
                await harness.abort()
            else:
                await harness.wait_for_idle()
        await self.wait_for_run()
        self._remember()
        try:
            await self._leave()
        except WorkbenchError:
            return self.session.pending_count if self.session is not None else 0
        return 0

    def write_recovery(self) -> str | None:
        """Everything of the open session, saved or not, in a file beside the data dir."""
        session = self.session
        if session is None or self.recovery_dir is None:
            return None
        stamp = time.strftime("%Y%m%dT%H%M%S")
        dest = self.recovery_dir / f"{session.metadata.id}-{stamp}.jsonl"
        save = getattr(session.get_storage(), "save_copy", None)
        if save is None:
            return None
        save(str(dest))
        return str(dest)

    def abandon(self) -> None:
        """Quit without the entries that could not be saved (the user chose so)."""
        session = self.session
        if session is not None:
            session.get_storage().force_close()
        self.session, self.harness, self.ref = None, None, None

    # ------------------------------------------------------------ session operations

    def _title(self, ref: str) -> str:
        row = self.row_for(ref)
        return row.title if row is not None else "Session"

    async def rename(self, ref: str, name: str) -> Changes:
        name = name.strip()
        if ref == self.ref and self.session is not None:
            await self.session.append_session_name(name)
            await self._sync(self.session)
        else:
            other = await self._store_for(ref).open(ref)
            try:
                await other.append_session_name(name)
            finally:
                await other.close()
        await self._store_for(ref).changed(ref)
        return self._changed(await self.refresh_sessions())

    async def fork(self, ref: str, at: str | None = None) -> Changes:
        """A new session that continues from ``ref``'s current position (or from the
        entry ``at``: the path to it is copied), opened; its title says it is a fork,
        and its name entry gives it its own time."""
        self._check_idle("forking")
        if ref == self.ref and self.session is not None:
            await self._sync(self.session)
            cwd = self.session.metadata.cwd or ""
        else:
            row = self.row_for(ref)
            cwd = row.cwd if row is not None else (self.default_workspace() or "")
        title = self._title(ref)
        if self.is_pi(ref) and at is None:  # a new session of ours, from another program's file
            forked = await self.store.open(await self.store.copy_in(ref))
        else:
            forked = await self.store.fork(ref, cwd, at)
        await forked.append_session_name(f"{title} (fork)")
        await forked.sync()
        await self._leave()
        changes = await self._adopt(forked)
        await self.store.changed(self.ref or "")
        return self._changed(changes | await self.refresh_sessions())

    async def trash(self, ref: str) -> Changes:
        """Move a session to the trash (Undo in the notice brings it back). Trashing the
        open session opens the next one of the list, or none."""
        if self.is_pi(ref):
            raise WorkbenchError(
                "Sessions of the Pi coding agent are deleted with Pi; Desktop Agent leaves"
                " its folder as it is."
            )
        was_open = ref == self.ref
        following: str | None = None
        if was_open:
            self._check_idle("deleting the session")
            cwd = next((r.cwd for r in self.rows if r.path == ref), None)
            # the neighbour in the same project (the list groups by project: m20)
            paths = [r.path for r in self.rows if r.source != "pi" and r.cwd == cwd]
            paths = paths or [r.path for r in self.rows if r.source != "pi"]
            rest = [p for p in paths if p != ref]
            index = paths.index(ref) if ref in paths else 0
            following = rest[min(index, len(rest) - 1)] if rest else None
            await self._leave()
        trash_ref = await self.store.move_to_trash(ref)
        changes = Changes.everything() if was_open else Changes(sessions=True)
        if trash_ref is not None:

            async def undo() -> Changes:
                restored = await self.store.restore(trash_ref)
                return await self.open(restored) if was_open else await self.refresh_sessions()

            changes = changes | self.notify(
                "trash", "The session was moved to the trash.", ("Undo", undo)
            )
        await self.refresh_sessions()
        if was_open:
            if following is not None:
                changes = changes | await self.open(following)
            else:
                self.usage, self.save = Usage(), SaveState()
        return self._changed(changes)

    async def restore_from_trash(self, trash_ref: str) -> Changes:
        ref = await self.store.restore(trash_ref)
        self.notify("trash", None)
        changes = await self.refresh_sessions()
        if self.harness is None or self.harness.is_idle:
            changes = changes | await self.open(ref)
        return self._changed(changes)

    async def delete_for_good(self, trash_refs: Sequence[str] | None = None) -> Changes:
        """Delete sessions in the trash for good (None: empty the trash). The checkpoints
        only they used are removed from the store, in a worker thread: a snapshot another
        session (open, listed or still in the trash) points at is kept."""
        trash = await self.store.trash()
        chosen = [r.path for r in trash if trash_refs is None or r.path in trash_refs]
        gone: dict[str, set[str]] = {}
        for ref in chosen:
            found = await self._trees(self.store.open_trashed(ref))
            await self.store.purge(ref)
            if found is not None and found[0]:
                gone.setdefault(found[0], set()).update(found[1])
        freed = 0
        if self.files is not None and gone:
            left = [r for r in trash if r.path not in chosen]
            in_use = await self._trees_in_use(set(gone), left)
            for cwd, trees in gone.items():
                if cwd not in in_use:
                    continue  # a session there could not be read: keep everything
                try:
                    freed += await self.files.files.store.folder(cwd).forget(trees - in_use[cwd])
                except CheckpointError as exc:
                    log.warning("checkpoints of deleted sessions not removed: %s", exc.message)
        changes = self.notify(
            "trash",
            "Deleted {count} sessions for good ({size} MB of checkpoints freed).",
            count=len(chosen),
            size=f"{freed / 1e6:.1f}",
        )
        return self._changed(changes | await self.refresh_sessions())

    async def _trees(self, opening: Awaitable[Session]) -> tuple[str, set[str]] | None:
        """A session's folder and the snapshots it points at (None: it cannot be read)."""
        try:
            session = await opening
        except SessionError as exc:
            log.warning("a session's checkpoints could not be read: %s", exc)
            return None
        try:
            return _folder(session.metadata.cwd or ""), await session_trees(session)
        finally:
            await session.close()

    async def _trees_in_use(
        self, folders: set[str], trash: Sequence[SidebarRow]
    ) -> dict[str, set[str]]:
        """The snapshots the other sessions in ``folders`` point at, by folder; a folder
        with a session that could not be read is left out."""
        used: dict[str, set[str]] = {cwd: set() for cwd in folders}
        unreadable: set[str] = set()
        rows = [*await self.store.sessions(), *trash]
        for row in rows:
            cwd = _folder(row.cwd)
            if cwd not in folders or row.source == "pi":
                continue
            if row.path == self.ref and self.session is not None:
                used[cwd] |= await session_trees(self.session)
                continue
            opening = (
                self.store.open_trashed(row.path) if row.in_trash else self.store.open(row.path)
            )
            found = await self._trees(opening)
            if found is None:
                unreadable.add(cwd)
            else:
                used[cwd] |= found[1]
        return {cwd: trees for cwd, trees in used.items() if cwd not in unreadable}

    async def repair(self, ref: str) -> Changes:
        """Write the readable entries of a damaged session to a new session, open it."""
        new_ref = await self.store.repair(ref)
        changes = self.notify(
            "repair", "The readable entries are in a new session; the damaged one is unchanged."
        )
        return self._changed(changes | await self.open(new_ref))

    async def convert(self, ref: str | None = None) -> Changes:
        """ "Convert to the current format": a v1/v2 session (read-only here) as a new v3
        file beside the original, which is never rewritten; the new file opens."""
        ref = ref or self.ref
        if ref is None:
            raise WorkbenchError("No session is open.")
        self._check_idle("converting the session")
        new_ref = await self._store_for(ref).convert(ref)
        changes = self.notify("read_only", None) | self.notify(
            "convert",
            "Converted to the current format: this is a new file beside the original,"
            " which is unchanged.",
        )
        await self.refresh_sessions()
        return self._changed(changes | await self.open(new_ref))

    async def copy_into_ours(self, ref: str) -> Changes:
        """ "Copy into Desktop Agent": our own session holding every entry of a Pi
        session (the Pi CLI's file stays as it is), opened."""
        if not self.is_pi(ref):
            raise WorkbenchError("Only sessions of the Pi coding agent can be copied in.")
        self._check_idle("copying the session")
        if ref == self.ref and self.session is not None:
            await self._sync(self.session)  # the copy holds what this window wrote too
        new_ref = await self.store.copy_in(ref)
        changes = self.notify(
            "copy",
            "This is your own copy of the Pi session; the Pi coding agent's file is unchanged.",
        )
        await self.refresh_sessions()
        return self._changed(changes | await self.open(new_ref))

    async def reload_from_disk(self) -> Changes:
        """Another program (the Pi CLI, another tool) wrote to the open session's file:
        take in its entries and keep ours as a branch from where the two diverged."""
        session = self._need_session()
        harness = self.harness
        if harness is None:
            raise WorkbenchError("No session is open.")
        self._check_idle("reloading the session")
        report = await harness.reload_from_disk()
        self._reported = session.entry_count  # the tree is redrawn as a whole
        if report.error is not None:
            self.save = SaveState(
                "not_saved", session.pending_count, report.error.message, report.error.code
            )
        else:
            self.save = SaveState("saved")
        theirs, ours = len(report.taken_in), len(report.kept)
        text = (
            "Reloaded: {theirs} written by another program came in; {ours} of yours are"
            " kept as a branch where the two diverged."
            if ours > 1
            else "Reloaded: {theirs} written by another program came in; {ours} of yours is"
            " kept as a branch where the two diverged."
            if ours
            else "Reloaded: {theirs} written by another program came in."
        )
        self._count_usage(session, harness.model.context_window if harness.model is not None else 0)
        await self._store_for(self.ref or "").changed(self.ref or "")
        changes = Changes(branch=True, tree=True, usage=True, save_state=True, draft=True)
        ours_leaf = report.our_leaf
        action = None
        if ours and ours_leaf is not None and ours_leaf != session.leaf_id():

            async def show_ours() -> Changes:
                return await self.navigate(ours_leaf)

            action = ("Show my branch", show_ours)
        notice = self.notify(
            "save", text, action, theirs=entries_phrase(theirs), ours=entries_phrase(ours)
        )
        return self._changed(changes | notice | await self.refresh_sessions())

    def read_only_text(self) -> str | None:
        """Why the open session cannot be continued (None: it can, or none is open)."""
        session = self.session
        if session is None or not session.read_only:
            return None
        return fill(*self._read_only_text(session))

    def _read_only_text(self, session: Session) -> tuple[str, tuple[tuple[str, str], ...]]:
        """(English template, its values) of why ``session`` is read-only."""
        version = session.metadata.format_version
        if version < 3:
            text = (
                "This session is in an older Pi format (version {version}) and opens"
                " read-only. Convert it to continue it: a new file is written beside it,"
                " the original stays as it is."
            )
            return text, (("version", str(version)),)
        reason = session.read_only_reason or "it cannot be written"
        if session.written_by_newer_app:
            text = "Read-only: {reason}."
        else:
            text = "This session is read-only: {reason}."
        return text, (("reason", reason),)

    def _notify_read_only(self, session: Session) -> None:
        if not session.read_only:
            self.notify("read_only", None)
            return
        ref = self.ref
        action = None
        if session.metadata.format_version < 3 and ref is not None:
            action = ("Convert to the current format", lambda: self.convert(ref))
        elif session.get_storage().read_only_code == "locked":
            action = ("Continue it here", lambda: continue_here(self))
        text, values = self._read_only_text(session)
        self.notify("read_only", text, action, **dict(values))

    async def export(self, ref: str, fmt: str, dest: str) -> Changes:
        """Markdown or HTML of the current branch, or a JSONL copy of the session."""
        from desktop_agent.workbench._export import to_html, to_markdown

        if fmt == "jsonl":
            if ref == self.ref and self.session is not None:
                await self.session.save_copy(dest)
            else:
                await self._store_for(ref).copy_jsonl(ref, dest)
        else:
            own = ref == self.ref and self.session is not None
            session = self.session if own and self.session else await self._store_for(ref).open(ref)
            try:
                render = to_markdown if fmt == "markdown" else to_html
                text = render(session, self._title(ref))
            finally:
                if not own:
                    await session.close()
            from desktop_agent.utils.atomic import atomic_write

            await asyncio.to_thread(atomic_write, dest, text.encode("utf-8"), mode=0o644)
        return self._changed(self.notify("export", "Exported to {path}.", path=dest))

    async def backup(self, dest: str) -> Changes:
        count = await self.store.backup(dest)
        text = (
            "{n} sessions backed up to {path}." if count != 1 else "1 session backed up to {path}."
        )
        return self._changed(self.notify("export", text, n=count, path=dest))

    # ------------------------------------------------------------ settings

    def settings_form(self) -> SettingsForm:
        """What the Settings dialog starts with (no key is ever given out)."""
        local = self.settings.providers.get(LOCAL_PROVIDER)
        keys = self.models.keystore
        return SettingsForm(
            local_url=local.base_url if local else None,
            local_protocol=local.protocol if local else "openai-completions",
            discover_local_servers=self.settings.discover_local_servers,
            default_model=self.settings.default_model,
            send_key=self.settings.send_key,
            theme=self.settings.theme,
            approval=dict(self.settings.approval),
            models=tuple(self.models.choices()),
            has_key={p: bool(self.models.key_of(p)) for p in ("openai", "anthropic", "local")},
            keychain_problem=keys.problem,
            where_kept=keys.where_kept(),
            pi_sessions=self.settings.pi_sessions.enabled,
            pi_folder=self.settings.pi_sessions.folder,
            pi_default_folder=self.pi_default_folder,
            follow_branch=self.settings.checkpoints.follow_branch,
            shell_network=self.settings.shell_network,
            sandbox_problem=self.sandbox.problem if self.sandbox is not None else None,
            keys_in_file=keys.use_file,
            key_file=str(keys.key_file.path) if keys.key_file is not None else None,
            store=self.settings.store,
            database_url=self.settings.database_url,
        )

    async def settings_form_sized(self) -> SettingsForm:
        """`settings_form` with the checkpoint store's size (measured off the loop)."""
        form = self.settings_form()
        if self.files is None:
            return form
        return replace(form, checkpoints_bytes=await self.files.files.store.size())

    async def apply_settings(self, form: SettingsForm) -> Changes:
        """Keys, servers and choices from the Settings dialog, in effect at once."""
        problem = server_url_problem(form.local_url or "")
        if problem is not None:  # (the dialog says so first; nothing is changed)
            raise WorkbenchError(f"The settings were not saved: {problem}")
        notes: list[str] = []
        keystore = self.models.keystore
        keystore.use_file = form.keys_in_file and keystore.key_file is not None
        self.settings.keys_in_file = keystore.use_file
        for provider, key in form.keys.items():
            if key:
                note = await self.models.set_key(provider, key)
                if note:
                    notes.append(note)
        settings = self.settings
        providers = dict(settings.providers)
        if form.local_url:
            providers[LOCAL_PROVIDER] = ProviderSettings(
                base_url=form.local_url, protocol=form.local_protocol
            )
        else:
            providers.pop(LOCAL_PROVIDER, None)
        settings.providers = providers
        settings.discover_local_servers = form.discover_local_servers
        settings.default_model = form.default_model
        settings.send_key = form.send_key
        settings.theme = form.theme
        settings.approval = {**settings.approval, **form.approval}
        settings.shell_network = form.shell_network
        if self.sandbox is not None:
            self.sandbox.network = form.shell_network
        if self.harness is not None and self.harness.approval_policy is not None:
            self.harness.approval_policy.rules.update(settings.approval)
        notes += await apply_store_form(self, form)
        pi = PiSessionsSettings(enabled=form.pi_sessions, folder=form.pi_folder or None)
        pi_changed = pi != settings.pi_sessions
        settings.pi_sessions = pi
        settings.checkpoints.follow_branch = form.follow_branch
        try:
            self._save_settings(settings)
        except OSError as exc:
            notes.append(f"The settings could not be saved: {exc.strerror or exc}.")
        if pi_changed and self._make_pi is not None:
            await self._replace_pi(self._make_pi(pi))
        self.notify("settings", " ".join(notes) or None)
        if form.prune_days is not None and self.files is not None:
            freed = await self.files.files.store.prune(form.prune_days)
            self.notify(
                "checkpoints",
                "Removed the checkpoints older than {days} days ({size} MB freed).",
                days=form.prune_days,
                size=f"{freed / 1e6:.1f}",
            )
        return await self.refresh_models() | self._changed(Changes(sessions=True))

    async def test_server(self, url: str, protocol: str, key: str | None) -> list[str]:
        """The models a server lists, before it is saved (Settings' "Test connection");
        `WorkbenchError` says why not."""
        api: ServerApi = "openai-completions"
        if protocol in ("openai-responses", "anthropic-messages"):
            api = "openai-responses" if protocol == "openai-responses" else "anthropic-messages"
        try:
            return await self.models.test_server(url, api, key)
        except DiscoveryError as exc:
            raise WorkbenchError(str(exc)) from None

    async def refresh_models(self) -> Changes:
        """List every configured server and the usual local ports again ("Refresh
        models", and after Settings)."""
        await self.models.discover()
        problems = [
            self.models.problems[n] for n in self.models.servers() if n in self.models.problems
        ]
        changes = self.notify("servers", " ".join(problems) or None)
        self._on_models_changed()
        return self._changed(changes | Changes(models=True, notices=True))

    async def _replace_pi(self, pi: JsonlStore | None) -> None:
        """The "Pi sessions" source after a Settings change: the list follows at once; an
        open Pi session stays open (it is written through its own file)."""
        old, self.pi = self.pi, pi
        self._pi_listed = False
        if old is not None:
            await old.close()
        if pi is not None:
            await self._start_pi(pi)
        await self.refresh_sessions()
