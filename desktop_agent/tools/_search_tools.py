"""The read-only listing tools: `ls`, `grep` and `find`.

Walks never follow directory symlinks, never enter ``.git`` or the app's protected
directories, and skip symlinked files (like ripgrep and fd by default). They run on
directory descriptors (``os.fwalk`` from a directory opened with ``O_NOFOLLOW`` at every
step from the workspace root), and grep opens each file relative to its directory's
descriptor, so a symlink swapped in during a walk is never followed. Work runs in a
thread that checks a stop flag between files, so a cancelled call stops soon.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import threading
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import Field

from desktop_agent.tools._base import Tool, ToolContext, ToolParams, ToolResult
from desktop_agent.tools._errors import ToolError
from desktop_agent.tools._workspace import Workspace

MAX_LS_ENTRIES = 500
MAX_GREP_MATCHES = 100
MAX_FIND_RESULTS = 1000
MAX_GREP_FILE_BYTES = 10 * 1024 * 1024
MAX_LINE_CHARS = 500
_SNIFF_BYTES = 8192

T = TypeVar("T")


async def _run_stoppable(fn: Callable[[threading.Event], T]) -> T:
    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def _is_git(name: str) -> bool:
    return name.casefold() == ".git"


def _is_real_dir(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _walk(
    ws: Workspace, top: Path, stop: threading.Event
) -> Iterator[tuple[Path, list[str], list[str], int]]:
    """(dir, subdirs, files, dir descriptor) under ``top``, sorted, pruned, symlinked dirs
    not entered (they are listed with the files)."""
    top_fd = ws.open_dir(top)
    try:
        walker = os.fwalk(".", dir_fd=top_fd, follow_symlinks=False)
        try:
            for dirpath, dirnames, filenames, dir_fd in walker:
                if stop.is_set():
                    return
                here = top if dirpath == "." else top / os.path.normpath(dirpath)
                links = [d for d in dirnames if not _is_real_dir(d, dir_fd)]
                dirnames[:] = sorted(
                    d
                    for d in dirnames
                    if d not in links and not _is_git(d) and not ws.is_protected(here / d)
                )
                yield here, dirnames, sorted(filenames + links), dir_fd
        finally:
            cast(Generator[Any, None, None], walker).close()  # its descriptors, now
    finally:
        os.close(top_fd)


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"


# ----------------------------------------------------------------------------- ls


class LsParams(ToolParams):
    path: str = Field(default=".", description="Directory, relative to the workspace root.")
    limit: int = Field(default=MAX_LS_ENTRIES, ge=1, le=10_000, description="Maximum entries.")


class LsTool(Tool[LsParams]):
    name = "ls"
    label = "List"
    description = (
        "List a directory of the workspace, sorted by name; directories end with '/', "
        "symbolic links with '@'. Dotfiles are included."
    )
    parameters = LsParams

    async def execute(self, call_id: str, args: LsParams, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._ls, args, ctx.workspace)

    def _ls(self, args: LsParams, ws: Workspace) -> ToolResult:
        real = ws.resolve(args.path)
        shown = ws.display(real)
        if not real.exists():
            raise ToolError(f"Directory not found: {shown}")
        if not real.is_dir():
            raise ToolError(f"{shown} is not a directory")
        names: list[str] = []
        fd = ws.open_dir(real)  # listed through a descriptor: a swapped symlink is refused
        try:
            with os.scandir(fd) as it:
                for entry in it:
                    if entry.is_symlink():
                        names.append(entry.name + "@")
                    elif entry.is_dir(follow_symlinks=False):
                        if ws.is_protected(real / entry.name):
                            continue
                        names.append(entry.name + "/")
                    else:
                        names.append(entry.name)
        finally:
            os.close(fd)
        names.sort(key=lambda n: (n.casefold(), n))
        total = len(names)
        shown_names = names[: args.limit]
        text = "\n".join(shown_names) if shown_names else "(empty directory)"
        if total > args.limit:
            text += f"\n\n[{total - args.limit} more entries; limit of {args.limit} reached]"
        details = {"path": shown, "entries": total, "truncated": total > args.limit}
        return ToolResult.text(text, details)


# ----------------------------------------------------------------------------- find


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A glob (``*``, ``?``, ``[...]``, ``{a,b}``, ``**``) as a full-match regex."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                if pattern.startswith("**/", i):
                    out.append("(?:.*/)?")
                    i += 3
                else:
                    out.append(".*")
                    i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern.startswith("[!", i) else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{":
            end = pattern.find("}", i)
            if end == -1:
                out.append(re.escape(c))
            else:
                alts = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(glob_to_regex(a).pattern[4:-3] for a in alts) + ")")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("(?s:" + "".join(out) + r")\Z")


class FindParams(ToolParams):
    pattern: str = Field(
        description=(
            "Glob pattern. Without '/', matched against file names (e.g. '*.py'); with '/', "
            "against paths relative to `path` (e.g. 'src/**/*.ts')."
        )
    )
    path: str = Field(default=".", description="Directory to search, relative to the root.")
    limit: int = Field(default=MAX_FIND_RESULTS, ge=1, le=100_000, description="Maximum results.")


class FindTool(Tool[FindParams]):
    name = "find"
    label = "Find"
    description = (
        "Find files and directories in the workspace by glob pattern. Results are paths "
        "relative to the workspace root, sorted; directories end with '/'. .git is skipped."
    )
    parameters = FindParams

    async def execute(self, call_id: str, args: FindParams, ctx: ToolContext) -> ToolResult:
        ws = ctx.workspace
        return await _run_stoppable(lambda stop: self._find(args, ws, stop))

    def _find(self, args: FindParams, ws: Workspace, stop: threading.Event) -> ToolResult:
        try:
            regex = glob_to_regex(args.pattern)
        except re.error as exc:
            raise ToolError(f"Invalid glob pattern {args.pattern!r}: {exc}") from None
        by_path = "/" in args.pattern.strip("/")
        top = ws.resolve(args.path)
        if not top.is_dir():
            raise ToolError(f"{ws.display(top)} is not a directory")
        found: list[str] = []
        truncated = False
        for here, dirs, files, _fd in _walk(ws, top, stop):
            rel_dir = os.path.relpath(here, top).replace(os.sep, "/")
            prefix = "" if rel_dir == "." else rel_dir + "/"
            for name, is_dir in [(d, True) for d in dirs] + [(f, False) for f in files]:
                subject = (prefix + name) if by_path else name
                if regex.match(subject):
                    shown = ws.display(here / name)
                    found.append(shown + "/" if is_dir else shown)
                    if len(found) > args.limit:
                        truncated = True
                        break
            if truncated:
                break
        found = sorted(found[: args.limit])
        text = "\n".join(found) if found else "(no matches)"
        if truncated:
            text += f"\n\n[Result limit of {args.limit} reached; narrow the pattern or path]"
        return ToolResult.text(text, {"results": len(found), "truncated": truncated})


# ----------------------------------------------------------------------------- grep


class GrepParams(ToolParams):
    pattern: str = Field(description="Regular expression (Python syntax) to search for.")
    path: str = Field(default=".", description="File or directory, relative to the root.")
    glob: str | None = Field(
        default=None, description="Only search files whose name matches this glob, e.g. '*.py'."
    )
    ignore_case: bool = Field(default=False, description="Case-insensitive search.")
    literal: bool = Field(default=False, description="Treat the pattern as plain text.")
    limit: int = Field(default=MAX_GREP_MATCHES, ge=1, le=10_000, description="Maximum matches.")


class GrepTool(Tool[GrepParams]):
    name = "grep"
    label = "Grep"
    description = (
        "Search file contents in the workspace with a regular expression. Prints "
        "'path:line: text' per matching line. Binary files, files over 10 MB and .git are "
        "skipped."
    )
    parameters = GrepParams

    async def execute(self, call_id: str, args: GrepParams, ctx: ToolContext) -> ToolResult:
        ws = ctx.workspace
        return await _run_stoppable(lambda stop: self._grep(args, ws, stop))

    def _grep(self, args: GrepParams, ws: Workspace, stop: threading.Event) -> ToolResult:
        source = re.escape(args.pattern) if args.literal else args.pattern
        try:
            regex = re.compile(source, re.IGNORECASE if args.ignore_case else 0)
        except re.error as exc:
            raise ToolError(f"Invalid regular expression {args.pattern!r}: {exc}") from None
        name_filter = glob_to_regex(args.glob) if args.glob else None
        top = ws.resolve(args.path)
        if top.is_file():
            # One named file: a refusal is an error, not "no matches".
            text = _text(ws.read_bytes(ws.resolve(str(top)), MAX_GREP_FILE_BYTES + 1))
            found: Iterator[tuple[Path, str | None]] = iter([(top, text)])
        elif top.is_dir():
            found = (
                (here / f, _read_in(ws, dir_fd, f, here / f))
                for here, _dirs, files, dir_fd in _walk(ws, top, stop)
                for f in files
                if name_filter is None or name_filter.match(f)
            )
        else:
            raise ToolError(f"Path not found: {ws.display(top)}")
        matches: list[str] = []
        searched = 0
        truncated = False
        for path, text in found:
            if stop.is_set():
                break
            if text is None:
                continue
            searched += 1
            shown = ws.display(path)
            for number, line in enumerate(text.splitlines(), start=1):
                if regex.search(line):
                    if len(matches) >= args.limit:
                        truncated = True
                        break
                    matches.append(f"{shown}:{number}: {_clip(line)}")
            if truncated:
                break
        body = "\n".join(matches) if matches else "(no matches)"
        if truncated:
            body += f"\n\n[Match limit of {args.limit} reached; narrow the pattern or path]"
        details = {"matches": len(matches), "truncated": truncated, "filesSearched": searched}
        return ToolResult.text(body, details)


def _read_in(ws: Workspace, dir_fd: int, name: str, path: Path) -> str | None:
    """A walked file's text for grep, or ``None`` if it is refused, binary, too big or
    unreadable (opened from its directory's descriptor: symlinks, FIFOs, devices and
    hard-linked files are skipped)."""
    try:
        fd = ws.open_in(dir_fd, name, ws.display(path))
    except (ToolError, OSError):
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_GREP_FILE_BYTES + 1)
        except OSError:
            return None
    return _text(data)


def _text(data: bytes) -> str | None:
    if len(data) > MAX_GREP_FILE_BYTES or b"\x00" in data[:_SNIFF_BYTES]:
        return None
    return data.decode("utf-8", "replace")
