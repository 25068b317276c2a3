"""A folder that is the user's own git repository, with uncommitted and untracked files,
and a byte-for-byte fingerprint of its ``.git``."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path


def git(folder: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="Person",
        GIT_AUTHOR_EMAIL="person@example.invalid",
        GIT_COMMITTER_NAME="Person",
        GIT_COMMITTER_EMAIL="person@example.invalid",
    )
    done = subprocess.run(
        ["git", *args], cwd=folder, env=env, capture_output=True, check=True, text=True
    )
    return done.stdout


def make_user_repo(folder: Path) -> Path:
    """``folder`` as a git repository: committed files, an uncommitted edit, a staged new
    file, an untracked file, an ignored file and a stash."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "main")
    (folder / "keep.txt").write_text("keep me\n")
    (folder / "readme.md").write_text("# project\n")
    (folder / ".gitignore").write_text("build/\n*.log\n")
    (folder / "src").mkdir()
    (folder / "src" / "app.py").write_text("print('hi')\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "first")
    (folder / "readme.md").write_text("# project\nstashed\n")
    git(folder, "stash", "-q")
    (folder / "readme.md").write_text("# project\nuncommitted edit\n")
    (folder / "staged.txt").write_text("staged\n")
    git(folder, "add", "staged.txt")
    (folder / "mine.txt").write_text("my untracked notes\n")
    (folder / "build").mkdir()
    (folder / "build" / "out.bin").write_bytes(b"\0" * 100)
    (folder / "debug.log").write_text("log\n")
    return folder


def dot_git_fingerprint(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``.git`` (and the set of its directories)."""
    out: dict[str, str] = {}
    root = folder / ".git"
    for dirpath, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(dirpath, name), root) + "/"] = "dir"
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every file outside ``.git`` with its content."""
    out: dict[str, bytes] = {}
    for dirpath, dirs, files in os.walk(folder):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in files:
            path = os.path.join(dirpath, name)
            out[os.path.relpath(path, folder)] = Path(path).read_bytes()
    return out
