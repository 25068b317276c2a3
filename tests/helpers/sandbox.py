"""A workspace for the tools tests with hostile neighbours (symlinks out, loops, the data
dir inside) and a canary outside, and a hash of trees to prove nothing outside changed."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from desktop_agent.tools import ToolContext, ToolResult, Workspace


@dataclass
class Sandbox:
    """A workspace ``ws`` with a data dir inside it, and a canary + config dir outside."""

    base: Path
    root: Path
    outside: Path
    data_dir: Path
    config_dir: Path
    workspace: Workspace
    output_dir: Path
    updates: list[ToolResult]

    def ctx(self) -> ToolContext:
        return ToolContext(
            workspace=self.workspace, on_update=self.updates.append, output_dir=self.output_dir
        )


def tree_hash(*roots: Path) -> str:
    """A hash of names, types, modes, link targets and contents of everything below roots."""
    h = hashlib.sha256()
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames.sort()
            for name in sorted(dirnames + filenames):
                p = Path(dirpath, name)
                st = p.lstat()
                h.update(f"{p.relative_to(root)}|{st.st_mode}|".encode())
                if p.is_symlink():
                    h.update(os.readlink(p).encode())
                elif p.is_file():
                    h.update(p.read_bytes())
    return h.hexdigest()


def make_sandbox(base: Path) -> Sandbox:
    """The workspace ``base/ws`` with every hostile neighbour, and the canaries outside it."""
    outside = base / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.txt").write_text("canary secret\n")
    (outside / "sub" / "x.txt").write_text("canary x\n")
    config_dir = base / "config"
    config_dir.mkdir()
    (config_dir / "settings.json").write_text('{"key": "canary"}\n')

    root = base / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "ok.txt").write_text("hello\nworld\n")
    data_dir = root / ".desktop-agent-data"
    (data_dir / "sessions").mkdir(parents=True)
    (data_dir / "sessions" / "s.jsonl").write_text('{"type":"session"}\n')
    hooks = root / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (root / ".git" / "config").write_text("[core]\n")
    os.symlink(outside / "secret.txt", root / "link_file")
    os.symlink("../outside", root / "link_dir")
    os.symlink("chain2", root / "chain1")
    os.symlink("../outside/secret.txt", root / "chain2")
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    os.symlink(".desktop-agent-data", root / "data_link")
    os.symlink("/etc", root / "abs_link")
    os.symlink("src/ok.txt", root / "inner_link")

    output_dir = base / "tool-output"
    ws = Workspace(root, forbidden_roots=[data_dir, config_dir])
    return Sandbox(base, ws.root, outside, data_dir, config_dir, ws, output_dir, [])
