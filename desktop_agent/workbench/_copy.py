"""Copying sessions from one store into another (JSONL files, SQLite, PostgreSQL).

Each session goes through its Pi JSONL form (`SessionStore.copy_jsonl`) into the other
store (`SessionStore.copy_in`): every entry is kept byte for byte, with its id, parent and
time, so the copy builds the same context and exports to the same Pi file. The copy is a
new session of the other store (its own id); the original is left as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field

from desktop_agent.session import SessionError
from desktop_agent.workbench._store import SessionStore


@dataclass
class CopyReport:
    copied: dict[str, str] = field(default_factory=dict)
    """Source reference -> the copy's reference."""
    failed: dict[str, str] = field(default_factory=dict)
    """Source reference -> why it could not be copied (nothing was written for it)."""


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


async def copy_sessions(
    source: SessionStore, dest: SessionStore, refs: Iterable[str] | None = None
) -> CopyReport:
    """Copy ``refs`` (default: every session of ``source``, not the trash) into ``dest``."""
    if refs is None:
        refs = [row.path for row in await source.sessions()]
    report = CopyReport()
    with tempfile.TemporaryDirectory(prefix="desktop-agent-copy-") as tmp:
        for n, ref in enumerate(refs):
            path = os.path.join(tmp, f"{n}.jsonl")
            try:
                await source.copy_jsonl(ref, path)
                report.copied[ref] = await dest.copy_in(path)
            except (OSError, SessionError) as exc:
                report.failed[ref] = exc.message if isinstance(exc, SessionError) else str(exc)
            finally:
                await asyncio.to_thread(_remove, path)
    return report
