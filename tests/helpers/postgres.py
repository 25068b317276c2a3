"""A real PostgreSQL cluster for the tests: Debian's ``postgresql`` package, `initdb` and
`pg_ctl` in a temp folder, listening on 127.0.0.1 and a socket in that folder, run as the
unprivileged ``nobody`` when the tests run as root. Password authentication over TCP
(a random password per cluster), so the app is tested the way a server is used."""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path

import psycopg


def _bin_dir() -> Path:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise RuntimeError(
        "PostgreSQL's initdb was not found: install the Debian package `postgresql`"
        " (scripts/system-packages lists it; ./run-tests installs it as root)"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """One server; `url(db)` names a database on it, `database()` makes a fresh one."""

    user = "postgres"

    def __init__(self, options: Sequence[str] = ("-c", "fsync=off")) -> None:
        """``options``: the server's settings (tests: no fsync, which a process crash
        does not need; benchmarks: the defaults)."""
        self.bin = _bin_dir()
        self.options = tuple(options)
        self.base = Path(tempfile.mkdtemp(prefix="da-pg-"))
        self.data = self.base / "data"
        self.log = self.base / "server.log"
        self.password = secrets.token_hex(12)
        self.port = _free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.base, nobody.pw_uid, nobody.pw_gid)
            self._as = [
                "setpriv",
                f"--reuid={nobody.pw_uid}",
                f"--regid={nobody.pw_gid}",
                "--clear-groups",
            ]
        pwfile = self.base / "pw"
        pwfile.write_text(self.password + "\n")
        if self._as:
            os.chown(pwfile, pwd.getpwnam("nobody").pw_uid, -1)
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            self.user,
            "--pwfile",
            str(pwfile),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        pwfile.unlink()
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": "/"}
        proc = subprocess.run(
            [*self._as, str(self.bin / tool), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.base,
            check=False,
            timeout=120,
        )
        if proc.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{tool} failed: {proc.stdout}{proc.stderr}\n{log[-2000:]}")

    def start(self) -> None:
        opts = " ".join(
            [
                f"-p {self.port}",
                f"-k {self.base}",
                "-c listen_addresses=127.0.0.1",
                "-c max_connections=200",
                *self.options,
            ]
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def processes(self) -> list[int]:
        """The server's processes: the postmaster (first), then its children."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # (gone meanwhile)
            if int(fields[1]) == postmaster:
                children.append(int(stat.parent.name))
        return [postmaster, *children]

    def pause(self) -> None:
        """Freeze the server (SIGSTOP to every process of it): its connections stay open
        and the kernel still acknowledges what is sent, but nothing answers."""
        for pid in self.processes():
            os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in reversed(self.processes()):
            os.kill(pid, signal.SIGCONT)

    def url(self, database: str = "postgres", *, password: bool = True) -> str:
        secret = f":{self.password}" if password else ""
        return f"postgresql://{self.user}{secret}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new empty database; returns its name."""
        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return name

    def close(self) -> None:
        try:
            self.stop("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.base, ignore_errors=True)
