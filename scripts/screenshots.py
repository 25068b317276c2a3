"""Pictures of the real app for the README (issue 9 item 7); run by ``scripts/screenshots``.

Starts ``python -m desktop_agent`` in a real X window (Xvfb + openbox, as scripts/try-in-xvfb
does) against the test suite's scripted local server (tests/helpers/provider_server.py, in this
process), drives it with the keyboard through xdotool, and writes PNGs:

1. first launch (the start page), 2. a streamed reply with code and a table, 3. a tool
approval, 4. the branch map with three branches, 5. dark mode (``"theme": "dark"`` in
settings.json, first paint), 6. a save error: the data folder on a full tmpfs (mounted in a
user and mount namespace of its own with ``unshare``, so no root is needed).

Panes are found by objectName only through the app itself; the script knows only windows
and keys, so it keeps working when a pane is replaced (the branch map).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec  # noqa: E402

PY = ROOT / ".venv" / "bin" / "python"
SCREEN = "1440x900x24"
SHOWN = "The window is shown"

CODE_AND_TABLE = (
    "Here is a small function and what it returns.\n\n"
    '```python\ndef fizzbuzz(n: int) -> str:\n    if n % 15 == 0:\n        return "FizzBuzz"\n'
    '    if n % 3 == 0:\n        return "Fizz"\n    if n % 5 == 0:\n        return "Buzz"\n'
    "    return str(n)\n```\n\n"
    "| n | fizzbuzz(n) |\n| --- | --- |\n| 3 | Fizz |\n| 5 | Buzz |\n| 15 | FizzBuzz |\n"
    "| 7 | 7 |\n\nEvery multiple of 15 is caught first, so the order of the tests matters."
)


def deltas(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class Shots:
    def __init__(self, out: Path, work: Path, server: ProviderServer) -> None:
        self.out = out
        self.work = work
        self.server = server
        self.data = work / "data"
        self.project = work / "project"
        self.app: subprocess.Popen[bytes] | None = None
        self.env = dict(os.environ, QT_QPA_PLATFORM="xcb", PYTHONPATH=str(ROOT))
        self.env.pop("QT_STYLE_OVERRIDE", None)
        self.written: list[Path] = []
        self.window = ""

    # ---------------------------------------------------------------- plumbing

    def settings(self, **extra: object) -> None:
        config = self.data / "config"
        config.mkdir(parents=True, exist_ok=True)
        settings = {
            "providers": {"local": {"base_url": f"{self.server.url}/v1"}},
            "discover_local_servers": False,
            "default_model": "local/fake-model",
            "approval": {"bash": "ask", "write": "ask", "edit": "ask"},
            **extra,
        }
        (config / "settings.json").write_text(json.dumps(settings, indent=2))

    def launch(self, *args: str, wrap: list[str] | None = None) -> None:
        """Start the app; wait for its "window is shown" log line (or, when its data
        folder is out of our sight in a namespace, for its window)."""
        log = self.data / "logs" / "desktop-agent.log"
        if log.exists():
            log.write_text("")
        cmd = [str(PY), "-m", "desktop_agent", "--data-dir", str(self.data), *args]
        self.app = subprocess.Popen(
            [*(wrap or []), *cmd], env=self.env, cwd=ROOT, start_new_session=True
        )
        if wrap is None:
            self.wait_for(lambda: log.exists() and SHOWN in log.read_text(errors="replace"), 60)
        time.sleep(1.0)
        self.window = self.find_window("Desktop Agent")
        subprocess.run(["xdotool", "windowactivate", "--sync", self.window], check=False)
        subprocess.run(["xdotool", "windowsize", self.window, "1280", "800"], check=False)
        subprocess.run(["xdotool", "windowmove", self.window, "40", "30"], check=False)
        time.sleep(0.8)

    def quit(self, *, kill: bool = False) -> None:
        """SIGTERM (the app saves and quits), or end the process group we started."""
        app, self.app = self.app, None
        if app is None:
            return
        if not kill:
            app.send_signal(signal.SIGTERM)
            try:
                app.wait(30)
                return
            except subprocess.TimeoutExpired:
                pass
        os.killpg(app.pid, signal.SIGKILL)
        app.wait()

    @staticmethod
    def wait_for(ok: Callable[[], bool], timeout: float, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ok():
                return
            time.sleep(0.1)
        raise SystemExit(f"screenshots: timed out waiting {what or 'for the app'}")

    @staticmethod
    def find_window(name: str, timeout: float = 20) -> str:
        found: list[str] = []

        def look() -> bool:
            run = subprocess.run(
                ["xdotool", "search", "--onlyvisible", "--name", name],
                capture_output=True,
                text=True,
                check=False,
            )
            found[:] = run.stdout.split()
            return bool(found)

        Shots.wait_for(look, timeout, f"for the window {name!r}")
        return found[-1]

    def keys(self, *keys: str) -> None:
        for key in keys:
            subprocess.run(["xdotool", "key", "--clearmodifiers", key], check=True)
            time.sleep(0.25)

    def type(self, text: str) -> None:
        subprocess.run(["xdotool", "type", "--delay", "15", text], check=True)

    def shot(self, name: str, window: str | None = None) -> None:
        """The main window (or the whole screen, with dialogs) as ``<name>.png``."""
        time.sleep(0.6)
        path = self.out / f"{name}.png"
        target = window or "root"
        subprocess.run(["import", "-window", target, str(path)], check=True)
        if target == "root":  # the part of the screen the window and its dialogs are on
            x, y, w, h = self.frame()
            subprocess.run(
                ["convert", str(path), "-crop", f"{w}x{h}+{x}+{y}", "+repage", str(path)],
                check=True,
            )
        self.written.append(path)
        sys.stdout.write(f"screenshot: {path}\n")

    def frame(self) -> tuple[int, int, int, int]:
        """x, y, width, height of the main window with its title bar (openbox's frame)."""
        out = subprocess.run(
            ["xdotool", "getwindowgeometry", "--shell", self.window],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        geo = dict(line.split("=", 1) for line in out.split() if "=" in line)
        title = 24
        return (
            max(0, int(geo["X"]) - 1),
            max(0, int(geo["Y"]) - title),
            int(geo["WIDTH"]) + 2,
            int(geo["HEIGHT"]) + title + 1,
        )

    def wait_saved(self, text: str, timeout: float = 30) -> None:
        """Until ``text`` is in a session file (the reply has streamed and was saved)."""

        def saved() -> bool:
            files = (self.data / "sessions").rglob("*.jsonl")
            return any(text in f.read_text(errors="replace") for f in files)

        self.wait_for(saved, timeout, f"for {text!r} to be saved")
        time.sleep(0.8)  # the last repaint

    # ---------------------------------------------------------------- the tour

    def run(self) -> None:
        self.project.mkdir(parents=True)
        (self.project / "fizzbuzz.py").write_text("print('fizz')\n")
        (self.project / "README.md").write_text("# A project\n")
        self.settings()
        self.launch("--workspace", str(self.project))
        self.shot("1-first-launch", self.window)

        self.server.script(Reply(text=deltas(CODE_AND_TABLE), delay_s=0.02))
        self.keys("ctrl+n")
        time.sleep(1.0)
        self.type("Write fizzbuzz in Python and show a few values in a table")
        self.keys("Return")
        self.wait_saved("order of the tests matters")
        self.shot("2-streamed-reply", self.window)

        self.server.script(
            Reply(tool_calls=[ToolCallSpec("call_1", "bash", {"command": "ls -la"})]),
            Reply(text="There are two files: `README.md` and `fizzbuzz.py`."),
        )
        self.type("Which files are in this folder?")
        self.keys("Return")
        dialog = self.find_window("Allow bash")
        self.shot("3-tool-approval")
        subprocess.run(["xdotool", "windowactivate", "--sync", dialog], check=False)
        self.keys("alt+o")  # Allow once
        self.wait_saved("There are two files")

        for i, question in enumerate(("Which Python files are here?", "How big is README.md?")):
            self.server.script(Reply(text=f"Answer {i + 2}: see the listing above."))
            self.keys("ctrl+l", "ctrl+e")  # edit the last prompt: a new branch
            time.sleep(0.8)
            self.keys("ctrl+a")
            self.type(question)
            self.keys("ctrl+Return")
            self.wait_saved(f"Answer {i + 2}:")
        self.shot("4-branch-map", self.window)
        self.quit()

        self.settings(theme="dark")
        self.launch()
        self.shot("5-dark", self.window)
        self.quit()

        self.save_error()

    def save_error(self) -> None:
        """The data folder on a 3 MB tmpfs that is kept full once the window is up."""
        if shutil.which("unshare") is None:
            sys.stderr.write("screenshots: no unshare; 6-save-error not made\n")
            return
        self.settings(theme="light")
        mnt = self.work / "full"
        mnt.mkdir()
        go = self.work / "fill-now"
        inner = (
            f'mount -t tmpfs -o size=3m tmpfs "{mnt}" && cp -a "{self.data}/." "{mnt}/" && '
            f'("$@" &) && while [ ! -e "{go}" ]; do sleep 0.1; done; '
            # fill every free page, and again whenever some come free (SQLite's WAL shrinks)
            f"i=0; while true; do i=$((i+1)); "
            f'dd if=/dev/zero of="{mnt}/filler$i" bs=4k 2>/dev/null; sleep 0.3; done'
        )
        wrap = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", inner, "sh"]
        real_data = self.data
        self.data = mnt  # the app's --data-dir, inside the namespace
        try:
            # Longer than the slack of the session file's last page, so its line cannot
            # be written once the filler has taken every free page of the tmpfs.
            table = "\n".join(f"    {i}: {i * i}," for i in range(1500))
            long = f"The squares up to 1,500:\n\n```python\nSQUARES = {{\n{table}\n}}\n```"
            self.server.script(Reply(text=deltas(long, 400)))
            # The same conversation, from its copy on the tmpfs (state.json names the
            # original file, outside it).
            session = next((real_data / "sessions").rglob("*.jsonl"))
            copy = mnt / session.relative_to(real_data)
            self.launch("--session", str(copy), wrap=wrap)
            go.touch()
            time.sleep(1.5)
            self.keys("ctrl+l")
            self.type("One more question")
            self.keys("Return")
            try:
                self.find_window("could not be saved", timeout=30)
            finally:
                self.shot("6-save-error")
        finally:
            self.data = real_data
            self.quit(kill=True)  # the namespace, its tmpfs and the app go together


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tmp_dir = tempfile.TemporaryDirectory(prefix="desktop-agent-shots-")
    with tmp_dir as tmp, ProviderServer() as server:
        server.models = ["fake-model"]
        shots = Shots(args.out, Path(tmp), server)
        try:
            shots.run()
        finally:
            shots.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
