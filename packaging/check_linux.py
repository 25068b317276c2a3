"""Acceptance of the Linux packages (issue 10), on this machine: ``packaging/check-linux``.

Runs ``packaging/build-linux`` (unless ``--no-build``), then, each step printing what it saw:

1. the frozen bundle's smoke test: a data dir holding three sessions, the newest written by
   the real Pi package (``tests/interop``), ``--smoke --no-err-windows --data-dir D`` must
   print the JSON line naming Pi's session and leaf and exit 0, twice (still there after a
   restart); ``--self-test URL`` streams one reply through each provider SDK inside the
   bundle from the suite's local SSE server; ``--store postgres`` against a real server
   (tests/helpers/postgres.py): the bundle (psycopg's Python implementation on the
   system's libpq, no psycopg-binary) creates a session and saves a reply there
   (``--script``), then a second data dir restores it (``--smoke``);
2. start-up time: bundle vs ``python -m desktop_agent`` on the same data, interleaved
   (median of ``--runs``), printed with the ratio (target <= 1.2);
3. the tar.gz: ``install.sh`` into a temp prefix, the installed command restores the session,
   an upgrade (install again) keeps it, ``uninstall.sh`` removes every installed file and
   leaves the data dir byte-identical;
4. the .deb (as root): ``apt-get install ./dist/desktop-agent_*.deb``, the installed desktop
   file's ``Exec`` line with ``--smoke --no-err-windows --data-dir D`` restores the session
   (offscreen, and on a real X server under Xvfb when ``xvfb-run`` exists), ``apt-get remove``
   removes /opt/desktop-agent and /usr/bin/desktop-agent and leaves D byte-identical;
5. a fresh venv with ``pip install .`` (no dev extras, from the registry) runs
   ``desktop-agent --smoke``, from outside the source tree.

Exit status 1 if any check fails. About 4-6 minutes here, most of it the build and pip.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_agent.ai import TextContent, UserMessage  # noqa: E402
from desktop_agent.session import JsonlSessionRepo  # noqa: E402

START_RATIO_TARGET = 1.2
failures: list[str] = []


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def check(condition: bool, what: str) -> None:
    say(("  ok   " if condition else "  FAIL ") + what)
    if not condition:
        failures.append(what)


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    base.setdefault("QT_QPA_PLATFORM", "offscreen")
    base.update(extra)
    return base


def smoke(command: list[str], data: Path, **extra: str) -> tuple[dict[str, Any] | None, float]:
    """Run ``command --smoke --no-err-windows --data-dir data``; (its JSON line, seconds)."""
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "--smoke", "--no-err-windows", "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env(**extra),
        cwd=tempfile.gettempdir(),
        check=False,
    )
    elapsed = time.perf_counter() - started
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        say(f"  {' '.join(command)} exited {done.returncode}: {done.stderr[-1500:]}")
        return None, elapsed
    payload = json.loads(lines[-1])
    return payload if isinstance(payload, dict) else None, elapsed


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def make_data(data: Path, work: Path, use_pi: bool) -> tuple[str, str | None]:
    """Two of our sessions, then (newest) one written by Pi; (expected session id, leaf)."""

    async def ours() -> tuple[str, str]:
        repo = JsonlSessionRepo(data / "sessions")
        last = ("", "")
        for n in range(2):
            s = await repo.create(cwd=str(work / f"project-{n}"))
            entry = await s.append_message(
                UserMessage(content=[TextContent(text=f"hello {n}")], timestamp=n + 1)
            )
            await s.close()
            last = (s.metadata.id, entry)
        return last

    expected: tuple[str, str | None] = asyncio.run(ours())
    if use_pi:
        from tests.helpers.pi import Pi

        time.sleep(0.05)
        project = work / "pi-project"
        project.mkdir(exist_ok=True)
        report = Pi.install().run("write-fixture", data / "sessions", str(project))
        header = json.loads(Path(report["path"]).read_text(encoding="utf-8").splitlines()[0])
        expected = (header["id"], report["leafId"])
    return expected


def restored(payload: dict[str, Any] | None, expected: tuple[str, str | None]) -> bool:
    return (
        payload is not None
        and payload.get("restored_session") == expected[0]
        and (expected[1] is None or payload.get("leaf") == expected[1])
        and int(payload.get("messages_shown") or 0) > 0
    )


def check_bundle(bundle: Path, data: Path, expected: tuple[str, str | None]) -> None:
    say("== 1. frozen bundle: smoke test, restart, SDK self-test")
    exe = bundle / "desktop-agent"
    for attempt in ("first start", "after a restart"):
        payload, _ = smoke([str(exe)], data)
        check(restored(payload, expected), f"bundle {attempt} restores {expected}: {payload}")
    from tests.helpers.provider_server import ProviderServer, Reply

    with ProviderServer() as server:
        server.default_reply = Reply(text="bundle ok")
        done = subprocess.run(
            [str(exe), "--self-test", server.url],
            capture_output=True,
            text=True,
            timeout=120,
            env=env(),
            check=False,
        )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    result = json.loads(lines[-1]) if lines else {}
    replies = result.get("replies", {})
    check(
        done.returncode == 0 and len(replies) == 3 and set(replies.values()) == {"bundle ok"},
        f"bundle streams through all three APIs: {replies or done.stderr[-800:]}",
    )
    check(not server.validation_errors, f"requests were valid: {server.validation_errors}")
    check_bundle_postgres(exe, data.parent / "pg")


def check_bundle_postgres(exe: Path, work: Path) -> None:
    """``--store postgres`` in the frozen app, against a real server: one data dir writes a
    session with a reply through the window (``--script``), another restores it."""
    from tests.helpers.postgres import Cluster
    from tests.helpers.provider_server import ProviderServer, Reply

    bundled = sorted(p.name for p in exe.parent.rglob("psycopg_binary*"))
    check(not bundled, f"no psycopg-binary in the bundle (found: {bundled[:3]})")
    cluster = Cluster()
    try:
        url = cluster.url(cluster.database())
        store = ["--store", "postgres", "--database-url", url]
        project = work / "project"
        project.mkdir(parents=True)
        with ProviderServer() as server:
            server.default_reply = Reply(text="Saved on the server by the bundle.")
            first = work / "first"
            (first / "config").mkdir(parents=True)
            (first / "config" / "settings.json").write_text(
                json.dumps(
                    {
                        "providers": {"local": {"base_url": f"{server.url}/v1"}},
                        "discover_local_servers": False,
                    }
                )
            )
            script = work / "steps.txt"
            script.write_text(f"new {project}\nsend Hello from the bundle\nquit\n")
            done = subprocess.run(
                [str(exe), "--data-dir", str(first), *store, "--script", str(script)],
                capture_output=True,
                text=True,
                timeout=180,
                env=env(),
                cwd=tempfile.gettempdir(),
                check=False,
            )
        answers = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
        sent: dict[str, Any] = next((a for a in answers if a.get("event") == "sent"), {})
        check(
            done.returncode == 0
            and sent.get("reply") == "Saved on the server by the bundle."
            and sent.get("saved") is True,
            f"the bundle saves a session and its reply on PostgreSQL: {sent or done.stderr[-800:]}",
        )
        check(cluster.password not in done.stdout + done.stderr, "no password in its output")
        payload, _ = smoke([str(exe), *store], work / "second")
        check(
            payload is not None
            and payload.get("sessions") == 1
            and payload.get("messages_shown") == 2
            and payload.get("restored_session") is not None,
            f"another data dir restores it from the server in the bundle: {payload}",
        )
    finally:
        cluster.close()


def check_start_time(bundle: Path, data: Path, runs: int) -> None:
    say(f"== 2. start to the smoke line, bundle vs python -m desktop_agent (median of {runs})")
    python = [sys.executable, "-m", "desktop_agent"]
    frozen = [str(bundle / "desktop-agent")]
    times: dict[str, list[float]] = {"bundle": [], "python": []}
    pycache = ROOT / "benchmarks" / "out" / "pycache"
    extra = {"PYTHONPYCACHEPREFIX": str(pycache), "PYTHONPATH": str(ROOT)}
    subprocess.run([*python, "--help"], env=env(**extra), capture_output=True, check=False)
    for command in (frozen, python):  # warm-up (page cache, bytecode)
        smoke(command, data, **extra)
    for _ in range(runs):
        for name, command in (("bundle", frozen), ("python", python)):
            payload, seconds = smoke(command, data, **extra)
            if payload is not None:
                times[name].append(seconds)
    if not times["bundle"] or not times["python"]:
        check(False, "start-up timing runs succeeded")
        return
    bundle_s = statistics.median(times["bundle"])
    python_s = statistics.median(times["python"])
    ratio = bundle_s / python_s
    say(
        f"  bundle start: {bundle_s * 1000:.0f} ms  "
        f"(baseline python -m desktop_agent: {python_s * 1000:.0f} ms, ratio {ratio:.2f})  "
        f"target: <= {START_RATIO_TARGET}x"
    )
    check(ratio <= START_RATIO_TARGET, f"start ratio {ratio:.2f} <= {START_RATIO_TARGET}")


def check_tarball(tarball: Path, work: Path, data: Path, expected: tuple[str, str | None]) -> None:
    say(f"== 3. {tarball.name}: install.sh, upgrade, uninstall.sh")
    unpack = work / "tar"
    with tarfile.open(tarball) as archive:
        archive.extractall(unpack, filter="tar")
    (top,) = list(unpack.iterdir())
    prefix = work / "prefix"
    home = work / "home"
    home.mkdir()
    for what in ("install", "upgrade"):
        done = subprocess.run(
            ["bash", str(top / "install.sh"), "--prefix", str(prefix)],
            capture_output=True,
            text=True,
            env=env(HOME=str(home)),
            check=False,
        )
        check(done.returncode == 0, f"install.sh ({what}) exits 0: {done.stderr[-500:]}")
        payload, _ = smoke([str(prefix / "bin" / "desktop-agent")], data)
        check(restored(payload, expected), f"installed command restores the session ({what})")
    desktop = prefix / "share" / "applications" / "desktop-agent.desktop"
    exec_line = desktop_exec(desktop)
    payload, _ = smoke(exec_line, data)
    check(restored(payload, expected), f"the desktop file's Exec {exec_line} restores it")
    before = snapshot(data)
    done = subprocess.run(
        ["bash", str(prefix / "lib" / "desktop-agent" / "uninstall.sh")],
        capture_output=True,
        text=True,
        env=env(HOME=str(home)),
        check=False,
    )
    check(done.returncode == 0, f"uninstall.sh exits 0: {done.stderr[-500:]}")
    caches = {"mimeinfo.cache", "icon-theme.cache"}  # regenerated desktop caches
    left = sorted(
        str(p.relative_to(prefix))
        for p in prefix.rglob("*")
        if not p.is_dir() and p.name not in caches
    )
    check(not left, f"uninstall.sh removed every installed file (left: {left[:5]})")
    check(snapshot(data) == before, "the data dir is byte-identical after uninstall")


def desktop_exec(desktop: Path) -> list[str]:
    for line in desktop.read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec="):
            return [a for a in shlex.split(line[5:]) if not a.startswith("%")]
        if line.startswith("[Desktop Action"):
            break
    raise AssertionError(f"no Exec line in {desktop}")


def check_deb(deb: Path, data: Path, expected: tuple[str, str | None]) -> None:
    say(f"== 4. {deb.name}: apt install, the desktop file's Exec, apt remove")
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        check(False, "root with apt-get to install the .deb")
        return
    apt_env = env(DEBIAN_FRONTEND="noninteractive")
    done = subprocess.run(
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", str(deb)],
        capture_output=True,
        text=True,
        env=apt_env,
        check=False,
    )
    check(done.returncode == 0, f"apt-get install exits 0: {done.stderr[-800:]}")
    desktop = Path("/usr/share/applications/desktop-agent.desktop")
    check(desktop.is_file(), f"{desktop} installed")
    icons = sorted(Path("/usr/share/icons/hicolor").glob("*/apps/desktop-agent.*"))
    check(len(icons) >= 10, f"{len(icons)} hicolor icons installed")
    metainfo = Path("/usr/share/metainfo/io.github.desktopagent.DesktopAgent.metainfo.xml")
    check(metainfo.is_file(), f"{metainfo} installed")
    if desktop.is_file():
        command = desktop_exec(desktop)
        payload, _ = smoke(command, data)
        check(restored(payload, expected), f"Exec {command} restores the session (offscreen)")
        if shutil.which("xvfb-run"):
            payload, _ = smoke(["xvfb-run", "-a", *command], data, QT_QPA_PLATFORM="xcb")
            check(restored(payload, expected), "the same on a real X server (Xvfb, xcb)")
    before = snapshot(data)
    done = subprocess.run(
        ["apt-get", "remove", "-y", "-q", "desktop-agent"],
        capture_output=True,
        text=True,
        env=apt_env,
        check=False,
    )
    check(done.returncode == 0, f"apt-get remove exits 0: {done.stderr[-800:]}")
    check(not Path("/opt/desktop-agent").exists(), "/opt/desktop-agent is gone")
    check(not Path("/usr/bin/desktop-agent").exists(), "/usr/bin/desktop-agent is gone")
    check(not desktop.exists(), "the desktop file is gone")
    check(snapshot(data) == before, "the data dir is byte-identical after apt remove")


def check_pip_install(work: Path, data: Path, expected: tuple[str, str | None]) -> None:
    say("== 5. fresh venv, pip install . (no dev extras), desktop-agent --smoke")
    venv = work / "venv-pip"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    source = work / "source"  # a copy, so no build artefact lands in the worktree
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".venv*", "build", "dist", "node_modules", ".git", "__pycache__", "benchmarks/out"
        ),
    )
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            ".",
        ],
        cwd=source,
        capture_output=True,
        text=True,
        check=False,
    )
    check(done.returncode == 0, f"pip install . exits 0 ({time.perf_counter() - started:.0f} s)")
    payload, _ = smoke([str(venv / "bin" / "desktop-agent")], data)
    check(restored(payload, expected), f"desktop-agent --smoke from the venv: {payload}")
    shutil.rmtree(source, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Linux packaging acceptance (issue 10)")
    parser.add_argument("--no-build", action="store_true", help="use the existing build")
    parser.add_argument("--no-pi", action="store_true", help="no Pi-written session")
    parser.add_argument("--no-deb", action="store_true", help="skip the .deb install (no root)")
    parser.add_argument("--no-pip", action="store_true", help="skip the fresh pip install")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    if not args.no_build:
        subprocess.run([str(ROOT / "packaging" / "build-linux")], check=True)
    version = (
        (ROOT / "build" / "linux" / "pyi-dist" / "desktop-agent" / "VERSION").read_text().strip()
    )
    bundle = ROOT / "build" / "linux" / "pyi-dist" / "desktop-agent"
    dist = ROOT / "dist"
    tarball = next(dist.glob(f"desktop-agent-{version}-linux-*.tar.gz"))
    deb = next(dist.glob(f"desktop-agent_{version}_*.deb"))
    report = json.loads((ROOT / "build" / "linux" / "bundle-report.json").read_text())
    say(f"bundle size unpacked: {report['size_bytes'] / 1e6:.1f} MB (target <= 150 MB)")
    say(f"tar.gz: {tarball.stat().st_size / 1e6:.1f} MB, .deb: {deb.stat().st_size / 1e6:.1f} MB")
    say(f"glibc needed: >= {report['glibc']} (by {', '.join(report['glibc_needed_by'][:3])})")
    with tempfile.TemporaryDirectory(prefix="desktop-agent-check-") as tmp:
        work = Path(tmp)
        data = work / "data"
        expected = make_data(data, work, use_pi=not args.no_pi)
        say(f"data dir {data}: expecting session {expected[0]} on leaf {expected[1]}")
        check_bundle(bundle, data, expected)
        check_start_time(bundle, data, args.runs)
        check_tarball(tarball, work, data, expected)
        if not args.no_deb:
            check_deb(deb, data, expected)
        if not args.no_pip:
            check_pip_install(work, data, expected)
    if failures:
        say(f"{len(failures)} check(s) failed:")
        for failure in failures:
            say(f"  - {failure}")
        return 1
    say("all packaging checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
