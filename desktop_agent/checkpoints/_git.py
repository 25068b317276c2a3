"""The `git` program run against a shadow repository, never the user's own ``.git``.

Every call gets ``GIT_DIR`` (the shadow store), ``GIT_WORK_TREE`` (the user's folder) and
``GIT_INDEX_FILE`` (the shadow index) and no other ``GIT_*`` variable of the app's
environment, no system or global configuration (so no user hook, attribute filter or
fsmonitor runs) and literal pathspecs (a file named ``*`` is that file).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

GIT_TIMEOUT_S = 600.0


class CheckpointError(Exception):
    """A snapshot or restore could not be done at all (git missing, the store unwritable,
    the folder gone); ``message`` says which in plain words."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def git_environment(git_dir: Path, work_tree: Path, index_file: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_INDEX_FILE=str(index_file),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_LITERAL_PATHSPECS="1",
        GIT_OPTIONAL_LOCKS="0",
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME="Desktop Agent",
        GIT_AUTHOR_EMAIL="checkpoints@desktop-agent.invalid",
        GIT_COMMITTER_NAME="Desktop Agent",
        GIT_COMMITTER_EMAIL="checkpoints@desktop-agent.invalid",
        LC_ALL="C",
    )
    return env


class Git:
    """Runs ``git`` with one shadow repository's environment (blocking: callers run it in a
    worker thread)."""

    def __init__(self, git_dir: Path, work_tree: Path, index_file: Path) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.index_file = index_file
        self.env = git_environment(git_dir, work_tree, index_file)
        self._running: set[subprocess.Popen[bytes]] = set()
        self._guard = threading.Lock()
        self._stopped = threading.Event()

    def stop(self) -> None:
        """End the git processes running now and refuse new ones (the app quits: a first
        snapshot of a big folder, taken ahead, does not keep it waiting)."""
        with self._guard:
            self._stopped.set()
            for proc in self._running:
                with contextlib.suppress(OSError):
                    proc.kill()

    def run(
        self,
        args: Sequence[str],
        *,
        input: bytes | None = None,
        index_file: Path | None = None,
        check: bool = True,
    ) -> bytes:
        env = self.env
        if index_file is not None:
            env = {**env, "GIT_INDEX_FILE": str(index_file)}
        try:
            with self._guard:
                if self._stopped.is_set():
                    raise CheckpointError("stopped", "Checkpoints were stopped (the app quits)")
                proc = subprocess.Popen(
                    ["git", *args],
                    stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                    cwd=self.work_tree,
                )
                self._running.add(proc)
            try:
                stdout, stderr = proc.communicate(input, timeout=GIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise
            finally:
                with self._guard:
                    self._running.discard(proc)
        except FileNotFoundError as exc:
            if not self.work_tree.is_dir():
                raise CheckpointError(
                    "no_folder", f"The folder {self.work_tree} is not there any more"
                ) from exc
            raise CheckpointError(
                "no_git", "Checkpoints need the git program, which was not found"
            ) from exc
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CheckpointError("git_failed", f"git {args[0]} failed: {exc}") from exc
        if self._stopped.is_set() and proc.returncode < 0:
            # Killed by `stop` halfway: its lock on the shadow index is left behind.
            with contextlib.suppress(OSError):
                os.unlink(env["GIT_INDEX_FILE"] + ".lock")
            raise CheckpointError("stopped", "Checkpoints were stopped (the app quits)")
        if check and proc.returncode != 0:
            detail = stderr.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(
                "git_failed",
                f"git {args[0]} failed: {detail[-1] if detail else f'exit {proc.returncode}'}",
            )
        return stdout
