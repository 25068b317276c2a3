"""Where sessions come from: our own folder, and the Pi CLI's (issue 13 item 6).

A `SessionSource` is one folder of Pi-v3 session files with its repo (and, when the app
keeps one, its `SessionIndex`). `SessionSources` puts several side by side for the
sidebar: one list, grouped by workspace like ours, newest activity first; `open` opens a
session in place from whichever folder holds it (the Pi CLI and we both continue it,
SESSION_FORMAT decisions), and `copy_into_ours` makes our own copy ("Copy into Desktop
Agent"). Qt-free: the sidebar only shows what this returns.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from desktop_agent.session._errors import SessionError
from desktop_agent.session._ids import iso_to_ms
from desktop_agent.session._index import IndexedSession, SessionIndex
from desktop_agent.session._jsonl import read_header
from desktop_agent.session._repos import JsonlSessionRepo
from desktop_agent.session._session import Session
from desktop_agent.session._storage import SessionMetadata, describe_os_error

SourceKind: TypeAlias = Literal["desktop_agent", "pi"]


@dataclass(frozen=True)
class SessionSource:
    """One folder of session files: ours, or the Pi CLI's (``~/.pi/agent/sessions``)."""

    kind: SourceKind
    label: str
    repo: JsonlSessionRepo
    index: SessionIndex | None = None

    @property
    def root(self) -> str:
        return self.repo.sessions_root

    def holds(self, path: str) -> bool:
        """Whether ``path`` is a file inside this source's folder."""
        root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        return real != root and os.path.commonpath([root, real]) == root


@dataclass(frozen=True)
class SourcedSession:
    """One session of the combined list."""

    source: SessionSource
    path: str
    id: str
    cwd: str | None
    created_at: str
    title: str
    last_activity: str
    problem: str | None = None
    parent_session_path: str | None = None

    @property
    def kind(self) -> SourceKind:
        return self.source.kind

    def metadata(self) -> SessionMetadata:
        return SessionMetadata(
            id=self.id,
            created_at=self.created_at,
            cwd=self.cwd,
            path=self.path,
            parent_session_path=self.parent_session_path,
        )

    def _sort_key(self) -> tuple[int, int, str]:
        last = iso_to_ms(self.last_activity) or 0
        return (last, iso_to_ms(self.created_at) or 0, self.path)


@dataclass(frozen=True)
class WorkspaceGroup:
    """The sessions of one workspace (``cwd``), from every source, newest first."""

    cwd: str | None
    sessions: tuple[SourcedSession, ...]

    @property
    def last_activity(self) -> str:
        return self.sessions[0].last_activity if self.sessions else ""


def _from_index(source: SessionSource, item: IndexedSession) -> SourcedSession:
    return SourcedSession(
        source=source,
        path=item.path,
        id=item.id,
        cwd=item.cwd,
        created_at=item.created_at,
        title=item.title,
        last_activity=item.last_activity or item.created_at,
        problem=item.problem,
        parent_session_path=item.parent_session_path,
    )


def _from_metadata(source: SessionSource, meta: SessionMetadata) -> SourcedSession:
    return SourcedSession(
        source=source,
        path=meta.path or "",
        id=meta.id,
        cwd=meta.cwd,
        created_at=meta.created_at,
        title="New session",
        last_activity=meta.created_at,
        parent_session_path=meta.parent_session_path,
    )


class SessionSources:
    """Our sessions and other programs', side by side. The first source is ours: the one
    new sessions and copies go to."""

    def __init__(self, sources: Sequence[SessionSource]) -> None:
        if not sources or sources[0].kind != "desktop_agent":
            raise ValueError("the first session source must be Desktop Agent's own")
        kept: list[SessionSource] = []
        for source in sources:  # the same folder twice (a setting pointing at ours) is one
            if all(os.path.realpath(s.root) != os.path.realpath(source.root) for s in kept):
                kept.append(source)
        self.sources: tuple[SessionSource, ...] = tuple(kept)

    @classmethod
    def with_pi(
        cls,
        ours: SessionSource,
        pi_folder: str | os.PathLike[str] | None,
        *,
        index_path: str | os.PathLike[str] | None = None,
        trash_root: str | None = None,
    ) -> SessionSources:
        """Ours plus the Pi CLI's folder (``config.pi_sessions_dir``; None: ours only).

        ``index_path``: an index for Pi's folder, kept with our data (never in Pi's
        folder); ``trash_root``: where sessions deleted from Pi's folder go (default: a
        ``pi`` folder in our trash)."""
        if pi_folder is None:
            return cls([ours])
        trash = trash_root or os.path.join(ours.repo.trash_root, "pi")
        repo = JsonlSessionRepo(pi_folder, trash)
        index = SessionIndex(index_path, repo) if index_path is not None else None
        return cls([ours, SessionSource("pi", "Pi", repo, index)])

    def close(self) -> None:
        """Close the indexes of the other sources (ours belongs to its owner)."""
        for source in self.sources[1:]:
            if source.index is not None:
                source.index.close()

    @property
    def ours(self) -> SessionSource:
        return self.sources[0]

    def source(self, kind: SourceKind) -> SessionSource | None:
        return next((s for s in self.sources if s.kind == kind), None)

    def source_of(self, path: str) -> SessionSource | None:
        """The source whose folder holds ``path`` (None: a file elsewhere)."""
        return next((s for s in self.sources if s.holds(path)), None)

    async def reconcile(self) -> None:
        """Bring every source's index in line with its folder."""
        for source in self.sources:
            if source.index is not None:
                await source.index.reconcile()

    async def sessions(
        self, cwd: str | None = None, query: str | None = None
    ) -> list[SourcedSession]:
        """Every session of every source, most recent activity first.

        ``query`` searches sources with an index (those without one list nothing for a
        query: their files would have to be read in full)."""
        out: list[SourcedSession] = []
        for source in self.sources:
            if source.index is not None:
                items = await source.index.sessions(cwd=cwd, query=query)
                out.extend(_from_index(source, i) for i in items)
            elif not (query and query.strip()):
                out.extend(_from_metadata(source, m) for m in await source.repo.list(cwd=cwd))
        out.sort(key=SourcedSession._sort_key, reverse=True)
        return out

    async def grouped(self, query: str | None = None) -> list[WorkspaceGroup]:
        """`sessions` grouped by workspace; groups ordered by their newest session."""
        groups: dict[str | None, list[SourcedSession]] = {}
        for item in await self.sessions(query=query):
            groups.setdefault(item.cwd, []).append(item)
        return [WorkspaceGroup(cwd, tuple(items)) for cwd, items in groups.items()]

    async def most_recent(self, workspace: str | None = None) -> SourcedSession | None:
        """The session to restore: the most recent of ``workspace`` (if it has any), else
        the most recent of all; sessions with a problem only when there is nothing else."""
        found = await self.sessions()
        if workspace is not None:
            found = [s for s in found if s.cwd == workspace] or found
        healthy = [s for s in found if s.problem is None] or found
        return healthy[0] if healthy else None

    async def open(self, item: SourcedSession | str) -> Session:
        """Open a session in place, from the source that holds it (or any path)."""
        path = item if isinstance(item, str) else item.path
        source = self.source_of(path) or self.ours
        return await source.repo.open(path)

    async def copy_into_ours(self, item: SourcedSession | str) -> SessionMetadata:
        """ "Copy into Desktop Agent": our own copy of another program's session, every
        entry as it is (a v1/v2 file becomes v3), its header naming the original as
        ``parentSession``. The original is not touched. Returns the copy's metadata."""
        path = item if isinstance(item, str) else item.path
        source = self.source_of(path)
        if source is not None and source.kind == "desktop_agent":
            raise SessionError("invalid_argument", f"{path} is already a Desktop Agent session")
        try:
            meta = await asyncio.to_thread(read_header, path)
        except FileNotFoundError as exc:
            raise SessionError("not_found", f"Session not found: {path}") from exc
        except OSError as exc:
            raise SessionError(
                "storage", f"Failed to read session {path}: {describe_os_error(exc)}"
            ) from exc
        copy = await self.ours.repo.fork(meta, cwd=meta.cwd or "", parent_session_path=path)
        try:
            copied = copy.metadata
        finally:
            await copy.close()
        if self.ours.index is not None and copied.path:
            await self.ours.index.update_file(copied.path)
        return copied
