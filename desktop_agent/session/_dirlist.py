"""Listing a folder of session files as Pi does: every ``*.jsonl`` under the cwd folders,
its header read, newest first; files that cannot be read are reported (`ListProblem`),
never hidden or deleted."""

from __future__ import annotations

import os
from dataclasses import dataclass

from desktop_agent.session._errors import SessionError
from desktop_agent.session._header import encode_cwd, read_header
from desktop_agent.session._ids import iso_to_ms
from desktop_agent.session._storage import SessionMetadata, describe_os_error


@dataclass(frozen=True)
class ListProblem:
    """A file ``list()`` could not read; it is reported, never hidden or deleted."""

    path: str
    reason: str


class SessionList(list[SessionMetadata]):
    """``list()``'s result: the sessions, plus the files that could not be read."""

    problems: list[ListProblem]

    def __init__(self, items: list[SessionMetadata], problems: list[ListProblem]) -> None:
        super().__init__(items)
        self.problems = problems


def list_dir_sessions(root: str, cwd: str | None) -> SessionList:
    """Headers of every session file under ``root`` (Pi's rules), newest first."""
    items: list[SessionMetadata] = []
    problems: list[ListProblem] = []
    try:
        if cwd is not None:
            dirs = [os.path.join(root, encode_cwd(cwd))]
        else:
            with os.scandir(root) as it:
                dirs = [e.path for e in it if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return SessionList([], [])
    except OSError as exc:
        return SessionList([], [ListProblem(root, describe_os_error(exc))])
    for directory in dirs:
        try:
            with os.scandir(directory) as it:
                # Real folders named *.jsonl are skipped as Pi does; anything else with
                # the name (symlinks too) is opened by `read_header`, which reads only
                # regular files and never blocks.
                files = [
                    e.path
                    for e in it
                    if e.name.endswith(".jsonl") and not e.is_dir(follow_symlinks=False)
                ]
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(ListProblem(directory, describe_os_error(exc)))
            continue
        for path in files:
            try:
                items.append(read_header(path))
            except SessionError as exc:
                # not_found: vanished meanwhile, or a symlink to a folder (as in Pi).
                if exc.code != "not_found":
                    problems.append(ListProblem(path, exc.message))
    keyed = [(iso_to_ms(m.created_at), i, m) for i, m in enumerate(items)]
    keyed.sort(key=lambda k: (k[0] is not None, k[0] or 0, -k[1]), reverse=True)
    return SessionList([m for _, _, m in keyed], problems)
