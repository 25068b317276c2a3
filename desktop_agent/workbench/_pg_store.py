"""`PostgresStore`: every session on a PostgreSQL server shared by several computers.

A session is named ``postgres:<id>`` (``postgres-trash:<id>`` in the trash). The list,
titles, counts and full-text search come from the server (`PostgresSessionRepo.listed`);
the trash is a column there, so every computer sees the same trash. `watch` starts
listening for what other computers do (`Follower` turns it into views' changes).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Collection, Coroutine
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from desktop_agent.config import DATABASE_KEY, KeyStoreError, database_url_problem, split_password
from desktop_agent.session import Session, SessionError, SessionMetadata, SessionOpening
from desktop_agent.workbench._changes import Changes
from desktop_agent.workbench._follow import Follower
from desktop_agent.workbench._store import (
    NEW_SESSION_TITLE,
    OneDatabase,
    SessionStore,
)
from desktop_agent.workbench._views import SidebarRow

if TYPE_CHECKING:
    from desktop_agent.session import ListedSession, PostgresSessionRepo
    from desktop_agent.session._postgres import Listener
    from desktop_agent.workbench._workbench import SettingsForm, Workbench

log = logging.getLogger("desktop_agent.workbench")

PREFIX = "postgres:"
TRASH_PREFIX = "postgres-trash:"


def _meta(session_id: str) -> SessionMetadata:
    return SessionMetadata(id=session_id, created_at="")


class PostgresStore(OneDatabase["PostgresSessionRepo"]):
    """Sessions on a PostgreSQL server (see the module doc)."""

    kind = "postgres"
    prefix = PREFIX

    def __init__(self, repo: PostgresSessionRepo) -> None:
        self.repo = repo
        self._listener: Listener | None = None

    @staticmethod
    def _id(ref: str) -> str:
        return ref.removeprefix(PREFIX).removeprefix(TRASH_PREFIX)

    async def start(self, later: Collection[str] = (), *, glance: bool = False) -> list[str]:
        await self.repo.connect()
        return []

    def watch(self, on_event: Callable[[str, str], None]) -> None:
        """Call ``on_event(kind, session_id)`` on this loop for what other computers do
        (see `desktop_agent.session._postgres.Listener`)."""
        from desktop_agent.session._postgres import Listener

        if self._listener is None:

            def deliver(kind: str, session_id: str) -> None:
                if self._listener is not None:  # (none once the store is closed)
                    on_event(kind, session_id)

            self._listener = Listener(self.repo, deliver, asyncio.get_running_loop())
            self._listener.start()

    @staticmethod
    def _row(listed: ListedSession, trash: bool) -> SidebarRow:
        return SidebarRow(
            path=(TRASH_PREFIX if trash else PREFIX) + listed.id,
            id=listed.id,
            cwd=listed.cwd or "",
            title=listed.title or NEW_SESSION_TITLE,
            last_activity=(listed.trashed_at if trash else None) or listed.last_activity,
            in_trash=trash,
            message_count=listed.message_count,
            parent=listed.parent or "",  # ("postgres:<id>": this store's own reference)
            snippet=listed.snippet or "",
        )

    async def sessions(self, query: str | None = None) -> list[SidebarRow]:
        return [self._row(r, False) for r in await self.repo.listed(query or None)]

    async def trash(self) -> list[SidebarRow]:
        return [self._row(r, True) for r in await self.repo.listed(trashed=True)]

    async def create(self, cwd: str) -> Session:
        return await self.repo.create(cwd=cwd)

    async def open(self, ref: str) -> Session:
        if ref.startswith(TRASH_PREFIX):
            raise SessionError("not_found", "This session is in the trash")
        return await self.repo.open(_meta(self._id(ref)))

    async def open_progressive(self, ref: str) -> SessionOpening | None:
        return None  # a database session opens from its rows

    def holds(self, ref: str) -> bool:
        return ref.startswith((PREFIX, TRASH_PREFIX))

    async def find(self, id_or_ref: str) -> str | None:
        wanted = self._id(id_or_ref)
        return PREFIX + wanted if await self.repo.exists(wanted) else None

    async def fork(self, ref: str, cwd: str, at: str | None = None) -> Session:
        return await self.repo.fork(_meta(self._id(ref)), cwd=cwd, entry_id=at, position="at")

    async def move_to_trash(self, ref: str) -> str | None:
        session_id = self._id(ref)
        if not await self.repo.set_trashed(session_id, datetime.now(UTC).isoformat()):
            return None
        return TRASH_PREFIX + session_id

    async def restore(self, trash_ref: str) -> str:
        session_id = self._id(trash_ref)
        if not await self.repo.set_trashed(session_id, None):
            raise SessionError("not_found", f"{trash_ref} is no longer in the trash")
        return PREFIX + session_id

    async def discard(self, ref: str) -> None:
        await self.repo.delete(_meta(self._id(ref)))

    async def _trashed(self, trash_ref: str) -> str:
        session_id = self._id(trash_ref)
        listed = await self.repo.listed(trashed=True)
        if not trash_ref.startswith(TRASH_PREFIX) or all(r.id != session_id for r in listed):
            raise SessionError("not_found", f"{trash_ref} is no longer in the trash")
        return session_id

    async def open_trashed(self, trash_ref: str) -> Session:
        return await self.repo.open(_meta(await self._trashed(trash_ref)), write=False)

    async def purge(self, trash_ref: str) -> None:
        await self.repo.delete(_meta(await self._trashed(trash_ref)))

    async def repair(self, ref: str) -> str:
        source = await self.repo.open(_meta(self._id(ref)), write=False)
        cwd = source.metadata.cwd or ""
        source.get_storage().force_close()
        repaired = await self.repo.fork(_meta(self._id(ref)), cwd=cwd)
        new_ref = self.ref_of(repaired)
        await repaired.close()
        return new_ref

    async def copy_jsonl(self, ref: str, dest: str) -> None:
        session = await self.repo.open(_meta(self._id(ref)), write=False)
        try:
            await session.save_copy(dest)
        finally:
            session.get_storage().force_close()

    async def changed(self, ref: str, opened: Session | None = None) -> None:
        """The server keeps the list's facts with the entries: nothing to do."""

    async def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await asyncio.to_thread(listener.stop)
        await self.repo.close()


class Shared:
    """The outcome of `connect_shared`: the store to use, and what to tell the user (and
    how to reach the server again when it could not be reached)."""

    def __init__(
        self,
        store: SessionStore,
        problem: str | None,
        *,
        url: str = "",
        password: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.store = store
        self.problem = problem
        self.url, self.password, self.cache_dir = url, password, cache_dir

    def attach(self, workbench: Workbench) -> None:
        """Once the workbench is started: follow other computers, or say why the
        sessions are local files for now and offer the choice: keep working on them, or
        try the server again."""
        if isinstance(self.store, PostgresStore):
            self.store.watch(Follower(workbench).on_event)
        elif self.problem is not None:

            async def keep_local() -> Changes:
                return Changes(notices=True)

            async def try_again() -> Changes:
                return await self.retry(workbench)

            actions: list[tuple[str, Callable[[], Coroutine[Any, Any, Changes]]]] = []
            if self.url.strip():
                actions.append(("Try the server again", try_again))
            workbench.notify_choices(
                "store",
                "The session server cannot be used: {problem}. Work on local session files"
                " for now, or try the server again?",
                ("Work on local files", keep_local),
                actions,
                problem=self.problem,
            )
            workbench._changed(Changes(notices=True))

    async def retry(self, workbench: Workbench) -> Changes:
        """Reach the server again: when it answers, the open local session is closed and
        the sessions come from the server; otherwise the notice says why, again."""
        from desktop_agent.session import PostgresSessionRepo

        repo = PostgresSessionRepo(self.url, password=self.password, cache_dir=self.cache_dir)
        try:
            await repo.connect()
        except SessionError as exc:
            await repo.close()
            log.warning("the session server still cannot be used: %s", exc.message)
            self.problem = exc.message
            self.attach(workbench)
            return Changes(notices=True)
        changes = Changes()
        try:
            if workbench.session is not None:
                changes = await workbench.close()
        except BaseException:
            await repo.close()
            raise
        local, workbench.store = workbench.store, PostgresStore(repo)
        await local.close()
        self.store, self.problem = workbench.store, None
        self.attach(workbench)
        return changes | await workbench.refresh_sessions()


async def connect_shared(
    url: str,
    password: str | None,
    *,
    fallback: SessionStore,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Shared:
    """A `PostgresStore` on ``url`` once the server answers (its schema brought up to
    date); otherwise ``fallback`` (local files) and the reason, said at start-up.
    ``cache_dir``: where opened sessions' tree columns are kept on this computer."""
    from desktop_agent.session import PostgresSessionRepo

    if not url.strip():
        return Shared(fallback, 'no server is set (--database-url or "database_url")')
    repo = PostgresSessionRepo(url, password=password, cache_dir=cache_dir)
    try:
        await repo.connect()
    except SessionError as exc:
        await repo.close()
        log.warning("the session server cannot be used: %s", exc.message)
        return Shared(fallback, exc.message, url=url, password=password, cache_dir=cache_dir)
    await fallback.close()
    return Shared(PostgresStore(repo), None)


STORE_NAMES = {
    "jsonl": "as Pi-compatible files on this computer",
    "sqlite": "in one SQLite database on this computer",
    "postgres": "on the PostgreSQL server",
}


async def apply_store_form(wb: Workbench, form: SettingsForm) -> list[str]:
    """Where sessions are kept, from the Settings dialog: saved for the next start; a
    password (typed apart, or in the URL) goes to the keychain, never to the settings."""
    notes: list[str] = []
    settings = wb.settings
    if database_url_problem(form.database_url) is None:
        url, in_url = split_password(form.database_url)
    else:  # (sessions are not going to the server: apply_settings refuses it then)
        url, in_url = settings.database_url, None  # the disabled field's text is not used
    password = form.database_password or in_url
    if password:
        if wb.redactor is not None:
            wb.redactor.add_secret(password, "password")
        try:
            await wb.models.keystore.set(DATABASE_KEY, password)
        except KeyStoreError as exc:
            notes.append(f"The server's password was not kept: {exc}")
    if (form.store, url) != (settings.store, settings.database_url):
        settings.store, settings.database_url = form.store, url
        notes.append(
            f"Sessions will be kept {STORE_NAMES.get(form.store, form.store)} from the next"
            " start of the app."
        )
    return notes
