"""Provider keys leave the app's own environment once read (issue 11 item 6).

A child Python process stands in for the app: it starts with canary keys in its
environment, makes the `KeyStore` the way app.py does, and then runs the real ``bash``
tool with ``cat /proc/$PPID/environ; env`` — what a command the agent runs could read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from desktop_agent.config import KeyStore
from tests.helpers.canaries import env_vars, make_canaries, scan_bytes

CHILD = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from desktop_agent.config import KeyStore
    from desktop_agent.tools import BashTool, Sandbox, ToolContext, Workspace, run_tool

    store = KeyStore(backend=__import__("keyring.backends.fail").backends.fail.Keyring())

    async def main():
        keys = {p: await store.get(p) for p in ("openai", "anthropic")}
        ws = Workspace(sys.argv[1])
        ctx = ToolContext(workspace=ws, output_dir=ws.root / "out")
        cmd = "tr '\\\\0' '\\\\n' < /proc/$PPID/environ; echo ==; env"
        # Outside the sandbox (whose own /proc would hide the app anyway): the erasure.
        result = await run_tool(BashTool(sandbox=Sandbox.none("off")), "c1", {"command": cmd}, ctx)
        with open("/proc/self/environ", "rb") as f:
            own = f.read().decode("utf-8", "replace")
        print(json.dumps({
            "keys": keys,
            "erased": store.erased,
            "tool_output": result.text_content(),
            "own_environ": own,
            "os_environ": dict(os.environ),
        }))

    asyncio.run(main())
    """
)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/environ")
def test_no_provider_key_in_the_app_environment_or_a_tool_process(tmp_path: Path) -> None:
    canaries = make_canaries()
    planted = env_vars(canaries)
    env = {**os.environ, **planted, "SAFE_VARIABLE": "still-here"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    by_name = {c.env_name: c.value for c in canaries if c.env_name}
    # the keys were read before they were removed
    assert result["keys"] == {
        "openai": by_name["OPENAI_API_KEY"],
        "anthropic": by_name["ANTHROPIC_API_KEY"],
    }
    assert set(planted) <= set(result["erased"])
    for where in ("tool_output", "own_environ"):
        text = result[where]
        assert scan_bytes(text.encode(), canaries) == [], where
        assert not [name for name in planted if f"{name}=" in text.replace("\x00", "\n")], where
    assert "SAFE_VARIABLE=still-here" in result["tool_output"]
    assert not set(planted) & set(result["os_environ"])
    assert result["os_environ"]["SAFE_VARIABLE"] == "still-here"


def test_a_given_mapping_loses_its_secrets_and_the_store_keeps_the_keys() -> None:
    canaries = make_canaries()
    environ = {**env_vars(canaries), "HOME": "/home/me", "PATH": "/usr/bin"}
    store = KeyStore(environ=environ, env_vars={"groq": "GROQ_API_KEY"})
    assert environ == {"HOME": "/home/me", "PATH": "/usr/bin"}
    assert "OPENAI_API_KEY" in store.erased and "DATABASE_URL" in store.erased
    kept = KeyStore(environ={"OPENAI_API_KEY": "k" * 20}, take_from_environment=False)
    assert kept.erased == []


UNDUMPABLE_CHILD = textwrap.dedent(
    """
    import ctypes, os, sys
    from desktop_agent.config import make_undumpable

    os.setgid(65534)
    os.setuid(65534)  # now an ordinary user (which made it non-dumpable: undo that)
    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)
    done = make_undumpable() if sys.argv[1] == "yes" else False
    print(os.getpid(), done, flush=True)
    sys.stdin.readline()
    """
)


@pytest.mark.slow
@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="needs Linux and root to run the two processes as another user",
)
@pytest.mark.parametrize("undumpable", [True, False])
def test_a_non_dumpable_app_hides_its_environ_from_the_same_user(undumpable: bool) -> None:
    """The "app" and a reader run as the same ordinary user: the reader gets the app's
    ``/proc/<pid>/environ`` only when the app did not call `make_undumpable`."""
    env = {**os.environ, "APP_MARK": "planted-mark"}
    with subprocess.Popen(
        [sys.executable, "-c", UNDUMPABLE_CHILD, "yes" if undumpable else "no"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    ) as app:
        assert app.stdout is not None and app.stdin is not None
        pid, done = app.stdout.readline().split()
        read = subprocess.run(
            ["cat", f"/proc/{pid}/environ"], capture_output=True, user=65534, group=65534
        )
        app.stdin.write("\n")
        app.stdin.flush()
    assert done == str(undumpable)
    if undumpable:
        assert read.returncode != 0 and b"Permission denied" in read.stderr
    else:
        assert b"APP_MARK=planted-mark" in read.stdout
