"""Hostile paths for every file tool, and the rename race (issue 11 item 7, RELIABILITY R16).

Every case runs each of read, write, edit, ls, grep and find; a case counts as refused
when every tool answers with an error result, shows no canary content and the canary
trees outside the workspace (and the app's own directories) hash the same afterwards.
The race tests rename a directory out of the workspace while writes run (a thread in a
loop, then at each step of the write deterministically). ``DESKTOP_AGENT_LONG_TESTS=1``
runs 10,000 race writes and 10,000 swap attempts instead of 300 and 1,000.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.tools import (
    EditTool,
    FindTool,
    GrepTool,
    LsTool,
    PathRefused,
    ReadTool,
    Tool,
    ToolError,
    Workspace,
    WriteTool,
    run_tool,
)
from tests.helpers.figures import add
from tests.helpers.sandbox import Sandbox, tree_hash
from tests.tools.test_paths import HOSTILE_PATHS

LONG = os.environ.get("DESKTOP_AGENT_LONG_TESTS") == "1"
RACE_WRITES = 10_000 if LONG else 300
SWAPS = 10_000 if LONG else 1_000

TOOLS: list[Tool[Any]] = [ReadTool(), WriteTool(), EditTool(), LsTool(), GrepTool(), FindTool()]


def arguments(tool: Tool[Any], path: str) -> dict[str, Any]:
    if tool.name == "write":
        return {"path": path, "content": "pwned\n"}
    if tool.name == "edit":
        return {"path": path, "old_text": "canary", "new_text": "pwned"}
    if tool.name == "grep":
        return {"pattern": "canary", "path": path}
    if tool.name == "find":
        return {"pattern": "*", "path": path}
    return {"path": path}


def protected(sb: Sandbox) -> list[Path]:
    return [sb.outside, sb.config_dir, sb.data_dir, sb.root / ".git"]


@pytest.fixture
def hostile(sandbox: Sandbox) -> Iterator[Sandbox]:
    """The sandbox plus hard links, a FIFO, a socket and (as root) a device file."""
    root = sandbox.root
    os.link(sandbox.outside / "secret.txt", root / "hard_out")
    os.link(sandbox.config_dir / "settings.json", root / "hard_config")
    os.mkfifo(root / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "sock"))
    try:
        os.mknod(root / "null_dev", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        pass  # not root: no device node (the absolute /dev paths are still tried)
    (root / "hooks_link").symlink_to(".git/hooks")
    (root / "git_link").symlink_to(".git")
    try:
        yield sandbox
    finally:
        sock.close()


EXTRA_PATHS = [
    "hard_out",
    "hard_config",
    "fifo",
    "sock",
    "null_dev",
    "/dev/zero",
    "/dev/null",
    "/dev/stdin",
    "/proc/self/environ",
    "hooks_link/pre-commit",
    "git_link/hooks/post-checkout",
    ".git/hooks/../hooks/pre-push",
    ".GIT/HOOKS/pre-commit",
    ".git/config",  # readable, but never written or edited (checked below)
    "{data}",
    "{data}/../.desktop-agent-data/sessions",
    "{config}/../config/settings.json",
]


def expand(sb: Sandbox, path: str) -> str:
    return path.format(outside=sb.outside, config=sb.config_dir, data=sb.data_dir)


async def refused_by_every_tool(sb: Sandbox, path: str) -> bool:
    before = tree_hash(*protected(sb))
    ok = True
    for tool in TOOLS:
        if path == ".git/config" and tool.name in ("read", "grep", "ls", "find"):
            continue  # reading git's config is allowed; writing it is not
        if path == "null_dev" and not (sb.root / "null_dev").exists():
            continue
        result = await run_tool(tool, "c1", arguments(tool, path), sb.ctx())
        text = result.text_content()
        if not result.is_error or "canary" in text or "pwned" in text:
            ok = False
    return ok and tree_hash(*protected(sb)) == before


@pytest.mark.asyncio
async def test_every_hostile_path_is_refused_by_every_tool(hostile: Sandbox) -> None:
    cases = [expand(hostile, p) for p in [*HOSTILE_PATHS, *EXTRA_PATHS]]
    failed = []
    for path in cases:
        if not await refused_by_every_tool(hostile, path):
            failed.append(path.replace(str(hostile.base), "<base>")[:80])
    add("hostile paths tried", len(cases))
    add("hostile paths refused", len(cases) - len(failed))
    assert failed == []


@pytest.mark.asyncio
async def test_walks_skip_hostile_entries_without_blocking(hostile: Sandbox) -> None:
    """A directory with a FIFO, a socket, hard links and links out: grep neither blocks
    nor reads any of them, find and ls list names only."""
    before = tree_hash(*protected(hostile))
    started = time.monotonic()
    grep = await run_tool(GrepTool(), "c", {"pattern": "canary|key"}, hostile.ctx())
    assert time.monotonic() - started < 10
    assert not grep.is_error and grep.text_content() == "(no matches)"
    for tool in (FindTool(), LsTool()):
        args = {"pattern": "*"} if tool.name == "find" else {}
        result = await run_tool(tool, "c", args, hostile.ctx())
        assert "canary" not in result.text_content()
        assert ".desktop-agent-data" not in result.text_content()
    assert tree_hash(*protected(hostile)) == before


# ------------------------------------------------------------------ swapped after the check


def swap_after_resolve(
    monkeypatch: pytest.MonkeyPatch, sb: Sandbox, swap: Callable[[], None]
) -> list[int]:
    """Make `Workspace.resolve` run ``swap`` right after its check passed (the TOCTOU
    window of every tool), once."""
    original = Workspace.resolve
    done: list[int] = []

    def resolve(self: Workspace, path: str, *, for_write: bool = False) -> Path:
        real = original(self, path, for_write=for_write)
        if not done:
            done.append(1)
            swap()
        return real

    monkeypatch.setattr(Workspace, "resolve", resolve)
    return done


def dir_to_link(sb: Sandbox) -> Callable[[], None]:
    def swap() -> None:
        os.rename(sb.root / "d", sb.base / "d-away")
        os.symlink(sb.outside, sb.root / "d")

    return swap


def file_to_link(sb: Sandbox) -> Callable[[], None]:
    def swap() -> None:
        (sb.root / "d" / "secret.txt").unlink()
        os.symlink(sb.outside / "secret.txt", sb.root / "d" / "secret.txt")

    return swap


@pytest.mark.asyncio
@pytest.mark.parametrize("which", ["directory", "file"])
@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
async def test_symlink_swapped_between_check_and_open(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tool: Tool[Any], which: str
) -> None:
    (sandbox.root / "d").mkdir()
    (sandbox.root / "d" / "secret.txt").write_text("inside canary\n")
    target = "d" if tool.name in ("ls", "grep", "find") and which == "directory" else "d/secret.txt"
    swap = dir_to_link(sandbox) if which == "directory" else file_to_link(sandbox)
    before = tree_hash(*protected(sandbox))
    done = swap_after_resolve(monkeypatch, sandbox, swap)
    result = await run_tool(tool, "c1", arguments(tool, target), sandbox.ctx())
    assert done, "the swap did not happen"
    text = result.text_content()
    add("hostile paths tried")
    assert "canary secret" not in text, (tool.name, text)
    if tool.name in ("ls", "find") and which == "file":
        assert result.is_error  # "d/secret.txt" is not a directory, whatever it is now
    else:
        assert result.is_error, (tool.name, text)
    assert tree_hash(*protected(sandbox)) == before
    add("hostile paths refused")


def test_swap_race_with_a_thread(sandbox: Sandbox) -> None:
    """A thread flips a directory between a real one and a link out while reads and
    writes run: nothing outside is read or written."""
    ws = sandbox.workspace
    d = sandbox.root / "d"
    hidden = sandbox.root / "d-hidden"
    d.mkdir()
    (d / "f.txt").write_text("inside\n")
    before = tree_hash(*protected(sandbox))
    stop = threading.Event()
    swaps = 0

    def reset() -> None:
        try:
            if d.is_symlink():
                d.unlink()
            elif d.is_dir() and hidden.exists():
                shutil.rmtree(d)  # the writer made a new d meanwhile
            if hidden.exists() and not d.exists():
                os.rename(hidden, d)
        except OSError:
            pass

    def racer() -> None:
        nonlocal swaps
        while not stop.is_set():
            try:
                os.rename(d, hidden)
                os.symlink(sandbox.outside, d)
                os.unlink(d)
                os.rename(hidden, d)
                swaps += 1
            except OSError:
                reset()

    thread = threading.Thread(target=racer)
    thread.start()
    leaked = attempts = 0
    deadline = time.monotonic() + (120 if LONG else 20)
    try:
        while swaps < SWAPS and time.monotonic() < deadline:
            attempts += 1
            try:
                data = ws.read_bytes(ws.resolve("d/secret.txt"))
                leaked += b"canary" in data
            except (ToolError, OSError):
                pass
            try:
                ws.atomic_write(ws.resolve("d/f.txt", for_write=True), b"written\n")
            except (ToolError, OSError):
                pass
    finally:
        stop.set()
        thread.join()
    add("swap attempts", swaps)
    assert swaps >= min(SWAPS, 100), "the racer hardly ran: the test proved nothing"
    assert leaked == 0
    assert tree_hash(*protected(sandbox)) == before


# ------------------------------------------------------------------ the rename race


def test_rename_race_no_write_lands_outside(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread renames ``ws/d`` out of the workspace (to ``outside/gen-N``) and makes a
    new ``d``, again and again, while writes to ``d/sub/f<i>`` run. A write is outside
    when its file is found in a moved-out directory that had already left before the
    write's last containment check began (a directory moved after that check takes
    along a file that was written inside). Must be 0."""
    ws = sandbox.workspace
    away = sandbox.outside / "moved"
    away.mkdir()
    (sandbox.root / "d").mkdir()
    last_check: dict[int, float] = {}
    original = Workspace._still_inside

    def still_inside(self: Workspace, dirs: list[str], dir_fd: int, shown: str) -> bool:
        last_check[threading.get_ident()] = time.monotonic()
        return original(self, dirs, dir_fd, shown)

    monkeypatch.setattr(Workspace, "_still_inside", still_inside)
    moved_at: dict[int, float] = {}
    stop = threading.Event()
    rng = random.Random(7)

    def racer() -> None:
        n = 0
        while not stop.is_set():
            try:
                os.rename(sandbox.root / "d", away / f"gen-{n}")
                moved_at[n] = time.monotonic()
                n += 1
                os.mkdir(sandbox.root / "d")
            except OSError:
                pass
            time.sleep(rng.random() * 0.0005)

    checked_at: dict[int, float] = {}
    refused = 0
    thread = threading.Thread(target=racer)
    thread.start()
    try:
        for i in range(RACE_WRITES):
            try:
                ws.atomic_write(ws.resolve(f"d/sub/f{i}.txt", for_write=True), b"x%d\n" % i)
                checked_at[i] = last_check[threading.get_ident()]
            except PathRefused:
                refused += 1
            except OSError:
                refused += 1  # e.g. the directory vanished between two steps
    finally:
        stop.set()
        thread.join()
    outside = 0
    moved_later = 0
    for gen in away.iterdir():
        n = int(gen.name.split("-")[1])
        for file in gen.rglob("f*.txt"):
            i = int(file.stem[1:])
            if i not in checked_at:
                outside += 1  # a refused write left its file outside
            elif moved_at[n] < checked_at[i]:
                outside += 1  # written into a directory that had already left
            else:
                moved_later += 1
        assert not list(gen.rglob(".*.tmp")) and not list(gen.rglob(".*.old"))
    add("race writes tried", RACE_WRITES)
    add("race writes outside", outside)
    assert outside == 0
    assert len(moved_at) > 10, "the racer hardly ran: the test proved nothing"
    assert refused + len(checked_at) == RACE_WRITES


# ------------------------------------------------------------------ each step of a write


def move_out(sb: Sandbox) -> None:
    os.rename(sb.root / "d", sb.outside / "d-moved")


STEPS = ["after the walk", "before the rename", "after the rename"]


@pytest.mark.parametrize("existing", [False, True], ids=["new file", "overwrite"])
@pytest.mark.parametrize("step", STEPS)
def test_directory_moved_out_at_each_step_of_a_write(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, step: str, existing: bool
) -> None:
    ws = sandbox.workspace
    (sandbox.root / "d" / "sub").mkdir(parents=True)
    if existing:
        (sandbox.root / "d" / "sub" / "f.txt").write_text("old content\n")
    real = ws.resolve("d/sub/new/f.txt" if not existing else "d/sub/f.txt", for_write=True)
    original_check = Workspace._still_inside
    original_walk = Workspace._walk
    calls = {"walk": 0, "check": 0}

    def walk(self: Workspace, dirs: list[str], shown: str, *, create: bool) -> Any:
        chain = original_walk(self, dirs, shown, create=create)
        calls["walk"] += 1
        if step == "after the walk" and calls["walk"] == 1:
            move_out(sandbox)
        return chain

    def check(self: Workspace, dirs: list[str], dir_fd: int, shown: str) -> bool:
        calls["check"] += 1
        inside = original_check(self, dirs, dir_fd, shown)
        if step == "before the rename" and calls["check"] == 1:
            move_out(sandbox)  # the check passed; the rename comes after the move
        return inside

    monkeypatch.setattr(Workspace, "_walk", walk)
    monkeypatch.setattr(Workspace, "_still_inside", check)
    original_rename = os.rename

    def rename(src: Any, dst: Any, **kwargs: Any) -> None:
        original_rename(src, dst, **kwargs)
        first = not (sandbox.outside / "d-moved").exists()
        if step == "after the rename" and kwargs.get("src_dir_fd") is not None and first:
            move_out(sandbox)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(PathRefused, match="moved out of the workspace"):
        ws.atomic_write(real, b"new content\n")
    monkeypatch.undo()
    moved = sandbox.outside / "d-moved" / "sub"
    names = sorted(p.name for p in moved.rglob("*"))
    if existing:
        assert names == ["f.txt"]  # no temporary file, no backup left behind
        assert (moved / "f.txt").read_text() == "old content\n"  # the old file is back
    else:
        assert names == []  # the directory made by the write was removed too
    add("hostile paths tried")
    add("hostile paths refused")


def test_without_the_checks_the_move_lets_the_write_out(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Control: the same injection with the containment checks disabled does write
    outside, so the tests above can fail."""
    ws = sandbox.workspace
    (sandbox.root / "d").mkdir()
    real = ws.resolve("d/f.txt", for_write=True)
    original_walk = Workspace._walk

    def walk(self: Workspace, dirs: list[str], shown: str, *, create: bool) -> Any:
        chain = original_walk(self, dirs, shown, create=create)
        if not (sandbox.outside / "d-moved").exists():
            move_out(sandbox)
        return chain

    monkeypatch.setattr(Workspace, "_walk", walk)
    monkeypatch.setattr(Workspace, "_still_inside", lambda *a: True)
    ws.atomic_write(real, b"escaped\n")
    assert (sandbox.outside / "d-moved" / "f.txt").read_text() == "escaped\n"
