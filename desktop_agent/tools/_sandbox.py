"""The OS sandbox around the agent's shell commands: bubblewrap on Linux, Seatbelt on macOS.

Inside the sandbox a command may write only to the workspace and to a private temporary
folder made for it (``$TMPDIR``, removed when it ends; ``/tmp`` itself is read-only); the
rest of the file system is read-only; the app's own data and config folders
(`Workspace.forbidden_roots`) and the keychain files are not visible; it runs in a new PID
namespace with its own ``/proc`` (Linux), so it cannot see the app or read any other
process's environment. The network is on unless `Sandbox.network` is turned off.

Inside the workspace, ``.git/hooks`` and ``.git/config`` stay read-only: either would let a
command run code of its choice at the user's next ``git commit`` or ``git status``, outside
the sandbox.

`detect_sandbox` finds what this machine offers, once, by running the sandbox on ``true``.
Where none works (Windows; Linux without bubblewrap or without user namespaces),
`Sandbox.available` is false and `Sandbox.problem` says why in a sentence for the user; the
app then asks before every shell command.

The Seatbelt profile (`seatbelt_profile`) is written for macOS's ``sandbox-exec`` but was
never run on a Mac by these tests: only its text is checked.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

log = logging.getLogger("desktop_agent.tools.sandbox")

SandboxKind: TypeAlias = Literal["bubblewrap", "seatbelt", "none"]
BlockKind: TypeAlias = Literal["write", "hidden", "network"]

BWRAP_MISSING = (
    "Shell commands cannot run in a sandbox: bubblewrap (bwrap) is not installed. Install the "
    "'bubblewrap' package (apt install bubblewrap, dnf install bubblewrap) and restart "
    "Desktop Agent. Until then you are asked before every shell command."
)
WINDOWS_NONE = (
    "Shell commands cannot run in a sandbox on Windows: you are asked before every shell command."
)
SEATBELT_MISSING = (
    "Shell commands cannot run in a sandbox: sandbox-exec was not found. You are asked "
    "before every shell command."
)


def keychain_paths(home: Path) -> tuple[Path, ...]:
    """Files and folders where desktop keychains keep their secrets (hidden in the sandbox)."""
    return (
        home / ".local" / "share" / "keyrings",
        home / ".local" / "share" / "kwalletd",
        home / "Library" / "Keychains",
    )


@dataclass
class Sandbox:
    """What runs shell commands confined, and how; `wrap` gives the argv to run."""

    kind: SandboxKind
    program: str | None = None
    """``bwrap`` or ``sandbox-exec`` (absolute path)."""
    problem: str | None = None
    """Why there is no sandbox (a sentence for the user), when ``kind`` is ``none``."""
    network: bool = True
    """Whether commands may use the network (a Settings switch)."""
    hidden: tuple[Path, ...] = field(default_factory=lambda: keychain_paths(Path.home()))
    """Hidden besides the workspace's forbidden roots (the keychain files)."""

    @classmethod
    def none(cls, problem: str) -> Sandbox:
        return cls("none", problem=problem, hidden=())

    @property
    def available(self) -> bool:
        return self.kind != "none"

    def environment(self, env: Mapping[str, str], tmpdir: Path | None) -> dict[str, str]:
        """``env`` for a sandboxed command: its private temporary folder, no session bus."""
        out = dict(env)
        out.pop("DBUS_SESSION_BUS_ADDRESS", None)
        if tmpdir is not None:
            for name in ("TMP", "TEMP"):
                out.pop(name, None)
            out["TMPDIR"] = str(tmpdir)
            # Caches that live in the read-only home: into the private folder instead
            # (npm, pip and Go cannot install anything without one).
            for name, sub in _CACHES.items():
                out[name] = str(tmpdir / sub)
        return out

    def wrap(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        forbidden: Sequence[Path] = (),
        tmpdir: Path | None = None,
    ) -> tuple[str, ...]:
        """The argv that runs ``argv`` in the sandbox (``argv`` itself when there is none).

        ``tmpdir`` is the command's private temporary folder (writable; made by the caller).
        """
        if self.kind == "none" or self.program is None:
            return tuple(argv)
        hidden = [*forbidden, *self.hidden]
        if self.kind == "bubblewrap":
            return (
                self.program,
                *bwrap_arguments(workspace, hidden, network=self.network, tmpdir=tmpdir),
                "--",
                *argv,
            )
        # Seatbelt matches real paths (/var is /private/var on macOS).
        real_tmp = os.path.realpath(tmpdir or "/tmp")
        params: list[str] = [f"-DWORKSPACE={os.path.realpath(workspace)}", f"-DTMPDIR={real_tmp}"]
        existing = [Path(os.path.realpath(p)) for p in hidden if p.exists()]
        for i, path in enumerate(existing):
            params.append(f"-DHIDDEN_{i}={path}")
        profile = seatbelt_profile(len(existing), network=self.network)
        return (self.program, "-p", profile, *params, *argv)

    def blocked(
        self, output: str, exit_code: int | None, hidden: Sequence[Path]
    ) -> BlockKind | None:
        """What the sandbox seems to have blocked, judging by a failed command's output."""
        if not self.available or exit_code in (0, None):
            return None
        if _READ_ONLY.search(output):
            return "write"
        if not self.network and _NO_NETWORK.search(output):
            return "network"
        for path in [*hidden, *self.hidden]:
            if str(path) in output:
                return "hidden"
        return None

    def explain(self, kind: BlockKind, workspace: Path) -> str:
        """The plain words the tool result ends with when the sandbox blocked something."""
        where = (
            f"Only the workspace ({workspace}) and a private temporary folder ($TMPDIR, "
            "emptied after each command) are writable; the rest of the file system, /tmp "
            "included, is read-only, and so are .git/hooks and .git/config."
        )
        what = {
            "write": "This command tried to write outside the places it may write to, and the "
            "sandbox refused. " + where,
            "hidden": "This command tried to read the app's own data or configuration (or the "
            "keychain), which the sandbox hides.",
            "network": "This command tried to use the network, which is turned off for shell "
            "commands in Settings.",
        }[kind]
        return (
            f"[Blocked by the sandbox: {what} Do not work around it: tell the user what the "
            "command needs. They can let it run outside the sandbox once.]"
        )


_CACHES = {
    "XDG_CACHE_HOME": ".cache",  # pip, Go's build cache, most Linux tools
    "npm_config_cache": ".npm",  # npm's cache and its logs
    "GOMODCACHE": "go-mod",
    "YARN_CACHE_FOLDER": ".yarn-cache",
}
"""Cache folders a package manager writes in the home folder, moved into ``$TMPDIR``."""

_READ_ONLY = re.compile(r"Read-only file system|EROFS|\[Errno 30\]")
_NO_NETWORK = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|"
    r"getaddrinfo|ENETUNREACH|EAI_AGAIN"
)


def bwrap_arguments(
    workspace: Path,
    hidden: Sequence[Path],
    *,
    network: bool = True,
    tmpdir: Path | None = None,
) -> list[str]:
    """bubblewrap's options (before ``--``) for a command confined to ``workspace``.

    The order matters (later mounts cover earlier ones): the whole tree read-only, fresh
    ``/dev`` and ``/proc``, the workspace and ``tmpdir`` writable, its ``.git`` hooks and
    config read-only again, then every hidden folder under an empty tmpfs (a hidden file
    under ``/dev/null``). Hidden paths that do not exist need nothing.
    """
    ws = str(workspace)
    args = [
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    run_user = Path(f"/run/user/{os.getuid()}") if hasattr(os, "getuid") else None
    if run_user is not None and run_user.is_dir():
        args += ["--tmpfs", str(run_user)]  # the session bus, keyring and agent sockets
    if not network:
        args.append("--unshare-net")
    real = [Path(os.path.realpath(p)) for p in hidden]
    around = [p for p in real if workspace.is_relative_to(p)]  # a workspace inside one
    for path in around:
        args += ["--tmpfs", str(path)]  # under the workspace's own mount, not over it
    args += ["--bind", ws, ws]
    if tmpdir is not None:
        args += ["--bind", str(tmpdir), str(tmpdir)]
    git = workspace / ".git"
    for name in ("hooks", "config"):
        if (git / name).exists() and not (git / name).is_symlink():
            args += ["--ro-bind", str(git / name), str(git / name)]
    for path in real:
        if path in around:
            continue
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    args += ["--chdir", ws]
    return args


def seatbelt_profile(hidden_count: int, *, network: bool = True) -> str:
    """The Seatbelt profile for ``sandbox-exec -p`` (paths come as ``-D`` parameters).

    Everything allowed but: writes outside the workspace, the temporary folder and the
    terminal devices; reading or writing the hidden folders; the network when it is off;
    looking into other processes. Written for macOS; not run by these tests.
    """
    lines = [  # the last rule that matches wins
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        "(allow file-write*",
        '  (subpath (param "WORKSPACE"))',
        '  (subpath (param "TMPDIR"))',
        '  (literal "/dev/null")',
        '  (literal "/dev/zero")',
        '  (regex #"^/dev/tty")',
        '  (regex #"^/dev/fd/"))',
        '(deny file-write* (subpath (string-append (param "WORKSPACE") "/.git/hooks")))',
        '(deny file-write* (literal (string-append (param "WORKSPACE") "/.git/config")))',
        "(deny process-info* (target others))",
    ]
    for i in range(hidden_count):
        lines.append(f'(deny file-read* file-write* (subpath (param "HIDDEN_{i}")))')
    if not network:
        lines.append("(deny network*)")
    return "\n".join(lines) + "\n"


def _probe(argv: Sequence[str]) -> str | None:
    """None if ``argv`` runs and exits 0, else a short reason."""
    try:
        done = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            env={"PATH": os.environ.get("PATH", os.defpath)},  # nothing of the app's
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode == 0:
        return None
    err = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return err[-1] if err else f"exit code {done.returncode}"


@functools.cache
def default_sandbox() -> Sandbox:
    """`detect_sandbox` once per process (for tools made without a sandbox of their own)."""
    return detect_sandbox()


def detect_sandbox(
    *,
    platform: str = sys.platform,
    which: Callable[[str], str | None] = shutil.which,
    network: bool = True,
) -> Sandbox:
    """The sandbox this machine offers, checked by running it once (see the module doc)."""
    if platform == "win32":
        return Sandbox.none(WINDOWS_NONE)
    here = Path.cwd() if os.path.isdir(os.getcwd()) else Path("/")
    if platform == "darwin":
        program = which("sandbox-exec")
        if program is None:
            return Sandbox.none(SEATBELT_MISSING)
        sandbox = Sandbox("seatbelt", program, network=network)
        # The profile was never run by the tests (no Mac): one that macOS refuses means
        # asking before every command, not every command failing.
        reason = _probe(sandbox.wrap(["/usr/bin/true"], workspace=here, tmpdir=here))
        if reason is not None:
            log.warning("no sandbox for shell commands: sandbox-exec failed: %s", reason)
            return Sandbox.none(
                f"Shell commands cannot run in a sandbox: sandbox-exec refused ({reason}). "
                "You are asked before every shell command."
            )
        return sandbox
    program = which("bwrap")
    if program is None:
        log.warning("no sandbox for shell commands: bwrap not found")
        return Sandbox.none(BWRAP_MISSING)
    sandbox = Sandbox("bubblewrap", program, network=network)
    reason = _probe(sandbox.wrap(["true"], workspace=here))
    if reason is not None:
        log.warning("no sandbox for shell commands: bwrap failed: %s", reason)
        return Sandbox.none(
            "Shell commands cannot run in a sandbox: bubblewrap is installed but cannot run "
            f"here ({reason}); it needs user namespaces, which this system seems to turn off. "
            "You are asked before every shell command."
        )
    return sandbox


__all__ = [
    "BWRAP_MISSING",
    "BlockKind",
    "Sandbox",
    "SandboxKind",
    "bwrap_arguments",
    "default_sandbox",
    "detect_sandbox",
    "keychain_paths",
    "seatbelt_profile",
]
