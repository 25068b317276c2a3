"""Text files read once and again only when they change (mtime, size, inode).

Every read that cannot be used whole says why, naming the file: over the size limit (cut at
a character boundary), not UTF-8, unreadable, a symlink loop, not a regular file. Folder
listings are cached the same way, by the folder's own mtime.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")


class _FromFile(Protocol):
    @property
    def file_path(self) -> str: ...


F = TypeVar("F", bound=_FromFile)

MAX_CONTEXT_BYTES = 64 * 1024
"""A context file or appended prompt longer than this is cut (and the cut is named)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """Something about a file the user should hear of: ``message`` says what and what
    the app did about it (cut, skipped, default used)."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True, slots=True)
class FileText:
    """One read of a file: ``text`` None when it could not be used (``problem`` says why)."""

    path: str
    text: str | None
    size: int
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Listing:
    """A folder's entries, each with whether it is a folder and whether it is a file
    (symlinks followed; a dangling link is neither, as Pi skips it)."""

    entries: tuple[tuple[str, bool, bool], ...]
    broken: tuple[tuple[str, str], ...] = ()
    """Entries that could not be looked at (a symlink loop, no permission): name, why."""

    def problems(self, folder: str) -> list[Problem]:
        return [
            Problem(os.path.join(folder, name), why)
            for name, why in self.broken
            if not name.startswith(".")
        ]


def describe_os_error(exc: OSError) -> str:
    """A short English reason for a failed stat or read."""
    if exc.errno == errno.ELOOP:
        return "is a symlink loop: skipped"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "cannot be read (permission denied): skipped"
    reason = exc.strerror or type(exc).__name__
    return f"cannot be read ({reason}): skipped"


def _cut_utf8(data: bytes) -> bytes:
    """``data`` without a character split at its end (at most 3 bytes dropped)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(data) - 3 and exc.end == len(data):
            return data[: exc.start]
    return data


class FileCache:
    """Reads and listings keyed by (mtime, size, inode); safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[tuple[str, int | None], tuple[tuple[int, int, int], FileText]] = {}
        self._dirs: dict[str, tuple[int, Listing]] = {}
        self.reads = 0
        """Files actually read from disk (a cache miss); the benchmark and tests use it."""

    def stat(self, path: str) -> os.stat_result | OSError | None:
        """The file's stat (symlinks followed), None when it does not exist, or the error
        (a loop, a permission problem) for the caller to report."""
        try:
            return os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            return exc

    def read(
        self,
        path: str,
        *,
        limit: int | None = None,
        found: os.stat_result | OSError | None = None,
    ) -> FileText:
        """The file's text, from the cache when it did not change since the last read.

        ``limit`` (bytes): a longer file is cut at a character boundary and the cut is
        its ``problem``; its ``text`` is still used. ``found``: the file's `stat` when the
        caller has it (one system call less)."""
        if found is None:
            found = self.stat(path)
        if found is None:
            return FileText(path, None, 0, "does not exist any more: skipped")
        if isinstance(found, OSError):
            return FileText(path, None, 0, describe_os_error(found))
        if not stat.S_ISREG(found.st_mode):
            return FileText(path, None, 0, "is not a regular file: skipped")
        key = (found.st_mtime_ns, found.st_size, found.st_ino)
        with self._lock:
            cached = self._files.get((path, limit))
        if cached is not None and cached[0] == key:
            return cached[1]
        result = self._read(path, found.st_size, limit)
        with self._lock:
            self.reads += 1
            self._files[(path, limit)] = (key, result)
        return result

    def _read(self, path: str, size: int, limit: int | None) -> FileText:
        try:
            with open(path, "rb") as handle:
                data = handle.read() if limit is None else handle.read(limit + 1)
        except OSError as exc:
            return FileText(path, None, size, describe_os_error(exc))
        problem = None
        if limit is not None and len(data) > limit:
            data = _cut_utf8(data[:limit])
            problem = (
                f"is {size:,} bytes, over the {limit // 1024} KB limit: only its first "
                f"{len(data):,} bytes are used"
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return FileText(path, None, size, f"is not UTF-8 text (byte {exc.start:,}): skipped")
        return FileText(path, text, size, problem)

    def entries(self, folder: str, problems: list[Problem]) -> tuple[tuple[str, bool, bool], ...]:
        """`listing`'s entries; a folder or entry that cannot be looked at is named."""
        listing = self.listing(folder)
        if listing is None:
            return ()
        if isinstance(listing, OSError):
            problems.append(Problem(folder, describe_os_error(listing)))
            return ()
        problems.extend(listing.problems(folder))
        return listing.entries

    def listing(self, folder: str) -> Listing | OSError | None:
        """The folder's entries (None: no such folder; an error to report)."""
        found = self.stat(folder)
        if found is None:
            return None
        if isinstance(found, OSError):
            return found
        if not stat.S_ISDIR(found.st_mode):
            return None
        with self._lock:
            cached = self._dirs.get(folder)
        if cached is not None and cached[0] == found.st_mtime_ns:
            return cached[1]
        entries: list[tuple[str, bool, bool]] = []
        broken: list[tuple[str, str]] = []
        try:
            with os.scandir(folder) as scan:
                for entry in scan:
                    try:
                        entries.append((entry.name, entry.is_dir(), entry.is_file()))
                    except OSError as exc:  # a loop: Pi leaves it out silently, we say so
                        broken.append((entry.name, describe_os_error(exc)))
        except OSError as exc:
            return exc
        entries.sort()
        listing = Listing(tuple(entries), tuple(sorted(broken)))
        with self._lock:
            self._dirs[folder] = (found.st_mtime_ns, listing)
        return listing


class ParsedFiles(Generic[T]):
    """What ``parse`` made of each file, made again only when the file changed."""

    def __init__(
        self, cache: FileCache, parse: Callable[[FileText], tuple[T | None, tuple[Problem, ...]]]
    ) -> None:
        self.cache = cache
        self._parse = parse
        self._parsed: dict[str, tuple[FileText, T | None, tuple[Problem, ...]]] = {}

    def get(self, path: str) -> tuple[T | None, tuple[Problem, ...]]:
        read = self.cache.read(path)
        cached = self._parsed.get(path)
        if cached is None or cached[0] is not read:
            cached = (read, *self._parse(read))
            self._parsed[path] = cached
        return cached[1], cached[2]


def keep_first(by_name: dict[str, F], name: str, item: F, what: str) -> Problem | None:
    """Keep ``item`` under ``name`` unless one came first (Pi's rule), else the `Problem`
    naming the one skipped (``what``: "skill named 'x'", "prompt template named /x")."""
    first = by_name.get(name)
    if first is None:
        by_name[name] = item
        return None
    return Problem(item.file_path, f"a second {what}: skipped ({first.file_path} is used)")
