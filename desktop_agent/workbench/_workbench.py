"""`Workbench`: the façade the window calls; the application layer without Qt.

Plain asyncio, no Qt (ARCHITECTURE.md §1). The window calls these operations and listens:
each operation returns a `Changes` and emits it to every listener, and the streaming
events of the session shown are passed on as they come, so the chat can draw a reply
while it streams. The state lives with its owner: the list and the stores in
`SessionList`, the notices in `Notices`, each open session with its harness and run in
an `OpenSession`, the session operations in `_operations`, the Settings form in
`_settings_form`. Several sessions can be open at once, each with its own run: one is
shown; the others are open only while they run (or wait for an approval), and their
rows say how they are doing (`SidebarRow.activity`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from desktop_agent.ai import (
    ImageContent,
    supported_thinking_levels,
    takes_thinking_level,
    warm_up,
)
from desktop_agent.checkpoints import CheckpointStore
from desktop_agent.config import AppState, PiSessionsSettings, Settings, settings_from_newer
from desktop_agent.harness import NO_MODEL, AgentHarness, HarnessEvent, HarnessSettings
from desktop_agent.session import RecoveryReport, Session, SessionOpening
from desktop_agent.tools import (
    ApprovalAnswer,
    ApprovalDecision,
    ApprovalRequest,
    Sandbox,
    Tool,
    built_in_tools,
)
from desktop_agent.utils import Redactor
from desktop_agent.utils.versions import APP_VERSION
from desktop_agent.workbench import (
    _files_ops,
    _map_ops,
    _model_ops,
    _operations,
    _project_ops,
    _settings_form,
)
from desktop_agent.workbench._changes import NOTHING, Changes
from desktop_agent.workbench._checkpoints import BranchFiles, FilesNotices
from desktop_agent.workbench._follow import take_over
from desktop_agent.workbench._limits import WorkbenchLimits
from desktop_agent.workbench._listing import SessionList
from desktop_agent.workbench._map import BranchMap
from desktop_agent.workbench._map_layout import MAP_FILTERS
from desktop_agent.workbench._map_saved import SavedMaps
from desktop_agent.workbench._mcp import McpServers, mcp_changed
from desktop_agent.workbench._models import Models
from desktop_agent.workbench._notices import Action, Notices
from desktop_agent.workbench._open import ApprovalWaitEvent, OpenSession, WorkbenchError
from desktop_agent.workbench._pg_store import PREFIX as PG_PREFIX
from desktop_agent.workbench._project import (
    ProjectContext,
)
from desktop_agent.workbench._regenerate import regenerate_point
from desktop_agent.workbench._sessions import OpenSessions, RaiseViewEvent, RunEndedEvent
from desktop_agent.workbench._settings_form import SettingsForm as SettingsForm
from desktop_agent.workbench._store import JsonlStore, SessionStore
from desktop_agent.workbench._views import (
    BranchItem,
    BranchReader,
    ModelChoices,
    SaveState,
    SidebarRow,
    TailReader,
    Usage,
    branch_items,
    entries_phrase,
    fill,
    latest_leaf_under,
)

log = logging.getLogger("desktop_agent.workbench")


@dataclass(frozen=True)
class Attachment:
    """A file to send with a prompt: images go as images, text files as quoted text."""

    name: str
    mime_type: str
    data: bytes

    @property
    def is_image(self) -> bool:
        return self.mime_type.startswith("image/")


Event: TypeAlias = Changes | HarnessEvent | ApprovalWaitEvent | RunEndedEvent | RaiseViewEvent
Listener = Callable[[Event], None]
Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision | ApprovalAnswer | None]]


class Workbench:
    """The application layer between the window and the harnesses (see the module doc)."""

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
        pi_store: JsonlStore | None = None,
        make_pi: Callable[[PiSessionsSettings], JsonlStore | None] | None = None,
        pi_default_folder: str = "",
        map_dir: Path | None = None,
        prompt_dirs: Sequence[Path] = (),
        home: Path | None = None,
        checkpoints: CheckpointStore | None = None,
        sandbox: Sandbox | None = None,
        mcp: McpServers | None = None,
        limits: WorkbenchLimits | None = None,
    ) -> None:
        self.limits = limits or WorkbenchLimits()
        self.listing = SessionList(
            store,
            pi_store=pi_store,
            make_pi=make_pi,
            pi_default_folder=pi_default_folder,
            limits=self.limits,
            spawn=self.spawn,
            refresh=self.refresh_sessions,
            opening=lambda: self.sessions.opening is not None,
        )
        self.notices = Notices()
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
        self.sessions = OpenSessions(self, self._new_map())
        """The open sessions: those shown (one per view: a window), and those whose run
        goes on elsewhere."""
        self._maps = SavedMaps(map_dir, keep=self.limits.maps_kept) if map_dir is not None else None
        self.map_query = ""
        """The search whose hits the map marks ("" none)."""
        self.approvers: dict[int, Approver] = {}
        """Who answers an approval, per view (the window that shows the session)."""
        self._listeners: list[tuple[Listener, int | None]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._relisting: asyncio.Task[None] | None = None
        self._draft_timer: asyncio.TimerHandle | None = None
        models.changed = self._on_models_changed
        self.mcp.subscribe(lambda: self._changed(mcp_changed(self.mcp, self.notify)))

    # ------------------------------------------------------------ views (windows)

    def _new_map(self) -> BranchMap:
        branch_map = BranchMap()
        if self.state.map_filter in MAP_FILTERS:
            branch_map.set_filter(self.state.map_filter)
        return branch_map

    @property
    def map(self) -> BranchMap:
        """The branch map of the active view's session (`sync_map` brings it up to date)."""
        return self.sessions.map

    @map.setter
    def map(self, branch_map: BranchMap) -> None:
        self.sessions.views[self.sessions.active].map = branch_map

    def map_of(self, view: int) -> BranchMap:
        """The branch map of ``view`` (a window's)."""
        where = self.sessions.views.get(view)
        return where.map if where is not None else self.map

    @property
    def approver(self) -> Approver | None:
        """Who answers the approvals of the first window's session."""
        return self.approvers.get(0)

    @approver.setter
    def approver(self, approver: Approver | None) -> None:
        if approver is None:
            self.approvers.pop(0, None)
        else:
            self.approvers[0] = approver

    @property
    def active_view(self) -> int:
        """The view (window) the operations act on (`OpenSessions.active`)."""
        return self.sessions.active

    def add_view(self) -> int:
        """A view for a new window (it shows nothing until a session is opened in it)."""
        return self.sessions.add_view(self._new_map())

    def activate_view(self, view: int) -> Changes:
        """The person works in the window of ``view``: the operations act on its session."""
        return self._changed(self.sessions.activate(view))

    def viewing(self, view: int) -> contextlib.AbstractContextManager[None]:
        """Read the session of ``view`` for a moment, synchronously (a window drawing)."""
        return self.sessions.viewing(view)

    def view_showing(self, ref: str) -> int | None:
        """The view (window) that shows the session ``ref``, None when none does."""
        return self.sessions.showing(ref)

    async def close_view(self, view: int) -> Changes:
        """A window closes: its session is left (a run goes on: its row says running)."""
        self.approvers.pop(view, None)
        return await self.sessions.close_view(view)

    # ------------------------------------------------------------ the shown session

    @property
    def shown(self) -> OpenSession | None:
        return self.sessions.shown

    @property
    def open_sessions(self) -> dict[str, OpenSession]:
        return self.sessions.open_sessions

    @property
    def saves_to_server(self) -> bool:
        """The shown session lives on a PostgreSQL server: a failed save is the server's
        or the network's to fix, not the disk's."""
        return (self.ref or "").startswith(PG_PREFIX)

    @property
    def opening(self) -> SessionOpening | None:
        """A big session never seen before, being read in the active view (its branch's
        end is shown there)."""
        sessions = self.sessions
        return sessions.opening if sessions.opening_view == sessions.active else None

    @property
    def opening_ref(self) -> str | None:
        return self.sessions.opening_ref

    @property
    def session(self) -> Session | None:
        return self.shown.session if self.shown is not None else None

    @property
    def harness(self) -> AgentHarness | None:
        return self.shown.harness if self.shown is not None else None

    @property
    def ref(self) -> str | None:
        return self.shown.ref if self.shown is not None else None

    @property
    def usage(self) -> Usage:
        return self.shown.usage if self.shown is not None else Usage()

    @property
    def save(self) -> SaveState:
        return self.shown.save if self.shown is not None else SaveState()

    @save.setter
    def save(self, value: SaveState) -> None:
        if self.shown is not None:
            self.shown.save = value

    @property
    def recovery(self) -> RecoveryReport | None:
        return self.shown.recovery if self.shown is not None else None

    def take_recovery(self) -> RecoveryReport | None:
        """What opening the shown session worked around, told once."""
        shown = self.shown
        if shown is None:
            return None
        report, shown.recovery = shown.recovery, None
        return report

    @property
    def running(self) -> bool:
        return self.shown is not None and self.shown.running

    @property
    def runs_active(self) -> int:
        """How many open sessions run (the one shown and the others)."""
        return sum(1 for o in self.open_sessions.values() if not o.idle)

    @property
    def progress(self) -> str:
        if self.opening is not None:
            return self.sessions.opening_progress
        return self.shown.progress if self.shown is not None else ""

    @property
    def progress_args(self) -> tuple[tuple[str, str], ...]:
        if self.opening is not None:
            return self.sessions.opening_args
        return self.shown.progress_args if self.shown is not None else ()

    @property
    def waiting_approval(self) -> set[str]:
        return self.shown.waiting_approval if self.shown is not None else set()

    @property
    def read_only(self) -> bool:
        return self.session is not None and self.session.read_only

    def find_open(self, ref: str | None) -> OpenSession | None:
        """The open session ``ref`` (shown or running elsewhere), None when closed."""
        return self.sessions.find_open(ref)

    def _need_open(self) -> OpenSession:
        if self.shown is None:
            raise self._not_open()
        return self.shown

    def _not_open(self) -> WorkbenchError:
        if self.opening is not None:
            return WorkbenchError(
                "The session is still being read: you can continue it in a moment."
            )
        return WorkbenchError("No session is open.")

    # ------------------------------------------------------------ the list (SessionList)

    @property
    def store(self) -> SessionStore:
        return self.listing.store

    @store.setter
    def store(self, store: SessionStore) -> None:
        self.listing.store = store

    @property
    def pi_store(self) -> JsonlStore | None:
        return self.listing.pi_store

    @property
    def rows(self) -> list[SidebarRow]:
        """The list's rows, each with its session's run (running, waiting, failed,
        finished and not yet seen)."""
        return self.sessions.rows(self.listing.rows)

    @property
    def trash_rows(self) -> list[SidebarRow]:
        return self.listing.trash_rows

    @property
    def query(self) -> str:
        return self.listing.query

    def row_for(self, ref: str) -> SidebarRow | None:
        row = self.listing.row_for(ref)
        return self.sessions.with_activity(row) if row is not None else None

    def is_pi(self, ref: str | None) -> bool:
        return self.listing.is_pi(ref)

    @property
    def pi_count(self) -> int:
        return self.listing.pi_count

    async def refresh_sessions(self, query: str | None = None) -> Changes:
        await self.listing.refresh(query)
        return self._changed(Changes(sessions=True))

    # ------------------------------------------------------------ listeners, tasks

    def subscribe(self, listener: Listener, view: int | None = None) -> Callable[[], None]:
        """Hear the workbench: with ``view``, what concerns that view's session and what
        every view shares (the list, notices, models); without, everything."""
        entry = (listener, view)
        self._listeners.append(entry)
        return lambda: self._listeners.remove(entry) if entry in self._listeners else None

    def _emit(self, event: Event, to: int | None = None) -> None:
        """Tell the listeners of view ``to`` (None: every listener)."""
        for listener, view in list(self._listeners):
            if to is None or view is None or view == to:
                self._tell(listener, event)

    def _tell(self, listener: Listener, event: Event) -> None:
        try:
            listener(event)
        except Exception:
            log.exception("a workbench listener failed on %s", type(event).__name__)

    def _changed(self, changes: Changes) -> Changes:
        """Add what was appended to the active view's session since the last report,
        then tell the listeners: that view's hear everything, the other views' what
        they share (`Changes.shared`)."""
        shown = self.shown
        if shown is not None and shown.session.entry_count > shown.entries_told:
            new = tuple(shown.session.entry_ids(shown.entries_told))  # ids only: no line read
            shown.entries_told = shown.session.entry_count
            changes = changes | Changes(appended=new)
        if changes.empty:
            return changes
        shared = changes.shared()
        active = self.sessions.active
        for listener, view in list(self._listeners):
            if view is None or view == active:
                self._tell(listener, changes)
            elif not shared.empty:
                self._tell(listener, shared)
        return changes

    def _session_changed(self, opened: OpenSession, changes: Changes) -> Changes:
        """What an open session reports: a shown one's goes to the views of its window;
        another's only changes its row (when its run starts, waits or ends)."""
        view = self.sessions.view_of(opened)
        if view is None:
            return NOTHING
        with self.viewing(view):
            return self._changed(changes)

    def _session_event(self, opened: OpenSession, event: Event) -> None:
        view = self.sessions.view_of(opened)
        if view is not None:
            self._emit(event, to=view)

    def _activity_changed(self, opened: OpenSession) -> None:
        """A run started or ended: the rows say so (in every window, when there are several)."""
        if opened is not self.shown or len(self.sessions.views) > 1:
            self._changed(Changes(sessions=True))

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

    # ------------------------------------------------------------ start and end

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
        last = self.state.last_session_path
        await self.listing.start(last if self.settings.restore != "new" else None)
        self.spawn(self.models.discover())
        # not one of `spawn`'s: it never ends (`settled` would wait for it); `aclose` ends it
        self._relisting = asyncio.ensure_future(self.models.keep_listing())
        await self.refresh_sessions()

    async def warm_up(self) -> None:
        """After the first paint: import the SDKs of usable models (seconds, on a thread)."""
        await warm_up(sorted({m.api for m in self.models.usable()}))

    def start_mcp(self) -> None:
        """Start the MCP servers in the background (the window calls it once painted)."""

        async def start() -> None:
            await self.mcp.start()
            self._changed(mcp_changed(self.mcp, self.notify))

        self.spawn(start())

    async def aclose(self) -> None:
        """Wait for background work, then close the store."""
        self.sessions.cancel_opening()
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
        await self.listing.close()

    def write_recovery(self) -> str | None:
        """Everything of the shown session, saved or not, in a file beside the data dir."""
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

    # ------------------------------------------------------------ views

    async def branch(self) -> list[BranchItem]:
        """The current branch for the chat (see `branch_items`)."""
        shown = self.shown
        return await branch_items(shown.session, shown.loader) if shown is not None else []

    def branch_reader(self) -> BranchReader | TailReader | None:
        """The current branch for the chat, read from its end in pages (`BranchReader`);
        while a big file is still being read, the end of its branch (`TailReader`)."""
        shown = self.shown
        if shown is None:
            return TailReader(self.opening.tail) if self.opening is not None else None
        return BranchReader(shown.session, shown.loader, at_rest=not shown.running)

    async def context_size(self) -> int:
        """How many messages the model would see now (Pi's ``buildSessionContext``)."""
        if self.session is None:
            return 0
        return len((await self.session.build_context(lenient=True)).messages)

    def current_path(self) -> list[str]:
        """Root-first entry ids of the current branch."""
        return self.session.branch_ids(lenient=True) if self.session is not None else []

    def model_key(self) -> str | None:
        model = self.harness.model if self.harness is not None else None
        return model.key if model is not None else None

    def model_choices(self) -> ModelChoices:
        shown = self.shown
        harness = shown.harness if shown is not None else None
        model = harness.model if harness is not None else None
        pending = None
        current = model.key if model is not None else None
        if model is None and shown is not None:
            current = shown.saved_model_key  # kept: shown as connecting or unavailable
            if shown.waiting_for_model:
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

    def default_workspace(self) -> str | None:
        if self.session is not None and self.session.metadata.cwd:
            return self.session.metadata.cwd
        return self.state.last_workspace

    # ------------------------------------------------------------ the branch map (_map_ops)

    sync_map = _map_ops.sync_map
    update_map = _map_ops.update_map
    _keep_map = _map_ops._keep_map
    set_map_filter = _map_ops.set_map_filter
    map_previews = _map_ops.map_previews
    map_tooltip = _map_ops.map_tooltip
    search_session = _map_ops.search_session

    # ------------------------------------------------------------ notices (Notices)

    def notify(
        self, key: str, text: str | None, action: tuple[str, Action] | None = None, **args: object
    ) -> Changes:
        """Show (or with ``text`` None, drop) the notice of one cause (`Notices.notify`)."""
        return self.notices.notify(key, text, action, **args)

    def notify_choices(
        self,
        key: str,
        text: str,
        action: tuple[str, Action],
        more: Sequence[tuple[str, Action]],
        **args: object,
    ) -> Changes:
        return self.notices.notify_choices(key, text, action, more, **args)

    def notice_texts(self) -> list[str]:
        return self.notices.texts()

    async def notice_action(self, key: str) -> Changes:
        """Run a notice's action (e.g. Undo; ``key/label`` for its other buttons) once."""
        changes, action = self.notices.take(key)
        if action is not None:
            changes = changes | await action()
        return self._changed(changes)

    async def dismiss(self, key: str) -> Changes:
        return self._changed(self.notify(key, None))

    # ------------------------------------------------------------ opening and closing

    async def restore(
        self, target: str | None = None, *, new: bool = False, workspace: str | None = None
    ) -> Changes:
        """At launch: ``target``, else a new session when asked, else the last one (see
        `OpenSessions.restore`)."""
        return await self.sessions.restore(target, new=new, workspace=workspace)

    async def open(self, ref: str, *, take: bool = False) -> Changes:
        """Show the session ``ref`` (a run elsewhere goes on: its session stays open);
        one shown in another window brings that window forward instead of showing it
        twice, unless ``take`` (then it moves here: `OpenSessions.open`)."""
        return await self.sessions.open(ref, take=take)

    async def opened(self) -> None:
        """Wait until a session being opened progressively is open (or failed)."""
        await self.sessions.opened()

    async def new_session(self, cwd: str | None = None) -> Changes:
        """The one way a session starts (`OpenSessions.new_session`)."""
        return await self.sessions.new_session(cwd)

    async def close(self) -> Changes:
        """Stop showing the session (the start page shows)."""
        return await self.sessions.close()

    async def shutdown(self, *, stop: bool) -> int:
        """Settle every run, save everything (`OpenSessions.shutdown`)."""
        return await self.sessions.shutdown(stop=stop)

    def abandon(self) -> None:
        """Quit without the entries that could not be saved (the user chose so)."""
        self.sessions.abandon()

    # ------------------------------------------------------------ runs

    async def send(self, text: str, attachments: Sequence[Attachment] = ()) -> Changes:
        """Run one prompt to the end (its events reach listeners as they come)."""
        if self.session is not None and self.session.read_only and not await take_over(self):
            raise WorkbenchError(self.read_only_text() or "")
        if self.shown is not None and self.shown.waiting_for_model:
            await self.models.settled()
        if self.opening is not None:
            raise self._not_open()  # the prompt stays in the composer
        if self.shown is not None and not self.shown.ready.is_set():
            await self.shown.ready.wait()  # (a session being made or opened right now)
        shown = self.shown
        harness = self.harness
        if shown is None or harness is None or harness.model is None:
            if shown is not None:
                self.state.drafts[shown.draft_key()] = text
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
        self.state.drafts.pop(shown.draft_key(), None)
        return await shown.run_with(lambda: harness.prompt(text, images))

    async def retry(self) -> Changes:
        """Send the failed request again (the Retry button of an error card)."""
        shown = self.shown
        if shown is None or shown.harness is None or not shown.idle:
            return NOTHING
        return await shown.run_with(shown.harness.continue_run, fold=True)

    async def regenerate(self, entry_id: str | None = None) -> Changes:
        """A new version of the answer ``entry_id`` (default: the last one); a failed
        request is retried (`regenerate_point`)."""
        shown = self.shown
        if shown is None or shown.harness is None or not shown.idle:
            return NOTHING
        prompt = regenerate_point(shown.session, entry_id)
        if prompt is None:
            return await self.retry()
        await shown.harness.navigate_tree(prompt, exact=True)
        await shown.branch_moved()
        return await shown.run_with(shown.harness.continue_run)

    async def wait_for_run(self) -> None:
        run = self.shown.run if self.shown is not None else None
        if run is not None:
            await asyncio.wait([run])

    async def stop(self) -> Changes:
        """Stop the run of the session shown (never another session's); a run that is
        starting is stopped once its harness has started it."""
        shown = self.shown
        harness = shown.harness if shown is not None else None
        if shown is None or harness is None:
            return NOTHING
        for _ in range(100):  # (the run's task takes its first step on the next tick)
            if not harness.is_idle or not shown.running:
                break
            await asyncio.sleep(0)
        if not harness.is_idle:
            await harness.abort()
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

    async def compact(self, instructions: str = "") -> Changes:
        """Compact now: the conversation so far becomes a summary (the compaction card)."""
        shown = self._need_open()
        harness = shown.harness
        if harness is None or harness.model is None:
            raise WorkbenchError(NO_MODEL)
        shown.check_idle("compacting")
        return await shown.run_with(lambda: harness.compact(instructions or None))

    # ------------------------------------------------------------ the project (_project_ops)

    _folder = _project_ops._folder
    _expand = _project_ops._expand
    _name_problems = _project_ops._name_problems
    _check_project = _project_ops._check_project
    _project_mcp = _project_ops._project_mcp
    completions = _project_ops.completions
    context_view = _project_ops.context_view
    set_instructions = _project_ops.set_instructions

    # ------------------------------------------------------------ branches (OpenSession)

    def _need_harness(self) -> OpenSession:
        shown = self._need_open()
        shown.need_harness()
        return shown

    async def navigate(self, entry_id: str, *, summarize: bool = False) -> Changes:
        """Move the leaf onto ``entry_id`` (the one route of every leaf move)."""
        return await self._need_harness().navigate(entry_id, summarize=summarize)

    async def navigate_to_branch_of(self, entry_id: str) -> Changes:
        """Move the leaf to the end of the branch through ``entry_id`` (its newest
        continuation), e.g. to show a search hit with what followed it."""
        return await self.navigate(latest_leaf_under(self._need_open().session, entry_id))

    async def switch_sibling(self, entry_id: str, direction: int) -> Changes:
        """Show the previous (-1) or next (+1) version of a message (``‹ n/m ›``)."""
        shown = self.shown
        return await shown.switch_sibling(entry_id, direction) if shown is not None else NOTHING

    async def switch_sibling_at_end(self, direction: int) -> Changes:
        reader = self.branch_reader()
        while reader is not None and reader.has_more:  # from the end: a page or two
            for item in reversed(await reader.older()):
                if item.sibling_count > 1:
                    return await self.switch_sibling(item.entry_id, direction)
        return NOTHING

    async def edit_resend(self, entry_id: str, text: str) -> Changes:
        """Send ``text`` as a new version of the prompt ``entry_id`` (a sibling of it)."""
        shown = self._need_harness()
        assert shown.harness is not None
        await shown.harness.navigate_tree(entry_id)
        await shown.branch_moved()
        if self._following is not None:  # the files of the point the prompt goes from
            await asyncio.wait([self._following])
        return await self.send(text)

    async def set_label(self, entry_id: str, label: str) -> Changes:
        shown = self._need_open()
        await shown.session.append_label(entry_id, label or None)
        await shown.sync()
        return self._changed(NOTHING)

    # ------------------------------------------------------------ the folder's files (_files_ops)

    turn_changes = _files_ops.turn_changes
    branch_changes = _files_ops.branch_changes
    restore_branch_files = _files_ops.restore_branch_files
    revert_changes = _files_ops.revert_changes
    _check_idle = _files_ops._check_idle
    _check_folder_free = _files_ops._check_folder_free
    _follow_files = _files_ops._follow_files

    # ------------------------------------------------------------ model and thinking (_model_ops)

    choose_model = _model_ops.choose_model
    choose_thinking = _model_ops.choose_thinking
    _on_models_changed = _model_ops._on_models_changed
    retry_servers = _model_ops.retry_servers
    refresh_models = _model_ops.refresh_models

    # ------------------------------------------------------------ drafts and state

    def draft(self) -> str:
        return self.state.drafts.get(self.shown.draft_key(), "") if self.shown else ""

    def set_draft(self, text: str) -> None:
        """The composer's unsent text on this branch (kept between runs of the app)."""
        if self.shown is None:
            return
        key = self.shown.draft_key()
        if text:
            self.state.drafts[key] = text
        else:
            self.state.drafts.pop(key, None)
        if self._draft_timer is not None:
            self._draft_timer.cancel()
        with contextlib.suppress(RuntimeError):  # no loop: saved with the next state
            loop = asyncio.get_running_loop()
            self._draft_timer = loop.call_later(self.limits.draft_save_delay_s, self._remember)

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
        shown = self._need_open()
        if shown.save.code == "changed_on_disk":
            return await self.reload_from_disk()
        written = await shown.retry_saving()
        if written is None:
            return self._changed(Changes(save_state=True))
        text = "Saved {entries} that were waiting." if written else None
        notice = self.notify("save", text, entries=entries_phrase(written))
        return self._changed(Changes(save_state=True) | notice)

    async def save_copy(self, dest: str) -> Changes:
        """The whole session (saved or not) in a new file, e.g. on another disk."""
        await self._need_open().session.save_copy(dest)
        return self._changed(
            self.notify("save", "A copy of the whole session is in {path}.", path=dest)
        )

    def read_only_text(self) -> str | None:
        """Why the shown session cannot be continued (None: it can, or none is shown)."""
        shown = self.shown
        if shown is None or not shown.session.read_only:
            return None
        return fill(*shown.read_only_text())

    def _notify_read_only(self, session: Session) -> None:
        if self.shown is not None and self.shown.session is session:
            self.shown.notify_read_only()

    # ------------------------------------------------------------ session operations

    rename = _operations.rename
    fork = _operations.fork
    trash = _operations.trash
    restore_from_trash = _operations.restore_from_trash
    preview_trashed = _operations.preview_trashed
    delete_for_good = _operations.delete_for_good
    repair = _operations.repair
    convert = _operations.convert
    copy_into_ours = _operations.copy_into_ours
    reload_from_disk = _operations.reload_from_disk
    export = _operations.export
    backup = _operations.backup

    # ------------------------------------------------------------ settings

    settings_form = _settings_form.settings_form
    settings_form_sized = _settings_form.settings_form_sized
    apply_settings = _settings_form.apply_settings
    test_server = _settings_form.test_server
