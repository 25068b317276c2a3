"""Canary secrets through every path, then a scan of everything on disk: 0 found (R15).

Canaries (tests/helpers/canaries.py: one of every key shape, fresh each run) are planted in the
user's prompt, in the environment (an ``env`` dump), in a ``.env`` file the agent reads
with cat, read, grep and edit, in tool-call arguments, in the model's own text, in the
text of an exception with ``X-Api-Key`` and ``Authorization`` headers, in a 401 that
echoes the API key, in compaction and branch summaries, in a settings file and in the
API key handed to the SDK, with SDK DEBUG logging on. The real harness runs against the
local provider server with the real tools; then the index is rebuilt, the session is
exported, the real app is started on the same data dir (``--smoke``), and a child
process writes a crash report and dies of SIGSEGV. The scan covers the data dir:
sessions, ``index.sqlite`` (and its WAL), logs, ``crash.log``, tool-output files,
exports and the settings.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import BaseModel

from desktop_agent.ai import AssistantMessage
from desktop_agent.app import setup_logging
from desktop_agent.config import (
    AppDirs,
    AppState,
    Settings,
    resolve_dirs,
    save_settings,
    save_state,
)
from desktop_agent.harness import AgentHarness, HarnessSettings
from desktop_agent.session import JsonlSessionRepo, MessageEntry, SessionIndex
from desktop_agent.tools import (
    ApprovalPolicy,
    Tool,
    ToolContext,
    ToolResult,
    Workspace,
    built_in_tools,
)
from desktop_agent.utils import RedactingFilter, Redactor
from desktop_agent.workbench._export import to_html, to_markdown
from tests.helpers.canaries import Canary, env_lines, env_vars, make_canaries, scan_tree
from tests.helpers.figures import add
from tests.helpers.provider_server import HttpError, ProviderServer, Reply, ToolCallSpec

pytestmark = pytest.mark.slow

SDK_LOGGERS = ["openai", "anthropic", "httpx", "httpx2", "httpcore", "httpcore2"]


class LookupArgs(BaseModel):
    query: str


class LeakyTool(Tool[LookupArgs]):
    """A tool whose failure message carries request headers (as HTTP clients' do)."""

    name = "lookup"
    label = "Lookup"
    description = "Look something up upstream."
    parameters: ClassVar[type[BaseModel]] = LookupArgs

    def __init__(self, headers: str) -> None:
        self.headers = headers

    async def execute(self, call_id: str, args: LookupArgs, ctx: ToolContext) -> ToolResult:
        raise RuntimeError(f"upstream answered 401 for {args.query!r}; sent {self.headers}")


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as s:
        yield s


@pytest.fixture
def logs_to(request: pytest.FixtureRequest) -> Iterator[list[logging.Handler]]:
    """Removes the app's log handlers and SDK DEBUG levels after the test."""
    handlers: list[logging.Handler] = []
    levels = {name: logging.getLogger(name).level for name in ["", *SDK_LOGGERS]}
    yield handlers
    root = logging.getLogger()
    for handler in handlers:
        root.removeHandler(handler)
        handler.close()
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def _app_logging(dirs: AppDirs, redactor: Redactor, handlers: list[logging.Handler]) -> None:
    root = logging.getLogger()
    known = set(root.handlers)
    setup_logging(dirs, RedactingFilter(redactor))  # the app's own set-up
    handlers.extend(h for h in root.handlers if h not in known)
    for name in SDK_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG)


def _by(canaries: list[Canary]) -> dict[str, str]:
    return {c.name: c.value for c in canaries}


@pytest.mark.asyncio
async def test_canaries_through_every_path_are_never_on_disk(
    server: ProviderServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    logs_to: list[logging.Handler],
) -> None:
    canaries = make_canaries()
    c = _by(canaries)
    planted = 0
    dirs = resolve_dirs(tmp_path / "data")
    dirs.create()
    ws_root = tmp_path / "ws"
    (ws_root / "config").mkdir(parents=True)
    (ws_root / ".env").write_text(env_lines(canaries))
    planted += sum(1 for x in canaries if x.env_name)  # .env: cat, read, grep, edit
    for name, value in env_vars(canaries).items():
        monkeypatch.setenv(name, value)  # the app's environment: an `env` dump
    planted += sum(1 for x in canaries if x.env_name)

    api_key = c["anthropic"]
    redactor = Redactor()
    redactor.add_secret(api_key, "anthropic key")  # as app.py does with the keys it read
    _app_logging(dirs, redactor, logs_to)
    planted += 1  # the key handed to the SDK (with SDK DEBUG logging on)

    # Settings "export": a custom model with a key in it is saved without the key.
    save_settings(
        dirs.settings,
        Settings.model_validate(
            {
                "custom_models": [
                    {
                        "provider": "mine",
                        "id": "m",
                        "base_url": "http://127.0.0.1:1/v1",
                        "api_key": c["stripe"],
                    }
                ]
            }
        ),
    )
    planted += 1
    # A draft (a prompt not sent yet) in the app state.
    save_state(dirs.state, AppState(drafts={"s.jsonl#leaf": f"try {c['slack']} next"}))
    planted += 1

    headers = f"X-Api-Key: {c['x-api-key']}; Authorization: Bearer {c['bearer']}"
    repo = JsonlSessionRepo(dirs.sessions, str(dirs.trash))
    session = await repo.create(cwd=str(ws_root))
    harness = AgentHarness(
        session=session,
        model=server.model("anthropic-messages"),
        tools=[*built_in_tools(), LeakyTool(headers)],
        workspace=Workspace(ws_root, forbidden_roots=dirs.forbidden_roots()),
        approval_policy=ApprovalPolicy(rules={"bash": "allow", "write": "allow", "edit": "allow"}),
        get_api_key=lambda m: api_key,
        tool_output_dir=dirs.tool_output,
        redactor=redactor,
        settings=HarnessSettings(retry_enabled=False, keep_recent_tokens=10),
    )
    pem = next(x for x in canaries if x.name == "private key").planted
    db_line = f"DB_PASSWORD={c['password']}"
    database_url = next(x for x in canaries if x.name == "database url").planted
    server.script(
        Reply(
            text=f"Your OpenAI key {c['openai']} is set; running the checks.",
            tool_calls=[
                ToolCallSpec("toolu_env", "bash", {"command": "env"}),
                ToolCallSpec("toolu_cat", "bash", {"command": "cat .env"}),
                ToolCallSpec("toolu_read", "read", {"path": ".env"}),
                ToolCallSpec("toolu_grep", "grep", {"pattern": "KEY|TOKEN|PASSWORD"}),
                ToolCallSpec(
                    "toolu_write",
                    "write",
                    {
                        "path": "config/deploy.py",
                        "content": f'GITHUB_TOKEN = "{c["github"]}"\nKEY = """{pem}"""\n',
                    },
                ),
                ToolCallSpec(
                    "toolu_curl",
                    "bash",
                    {"command": f"echo 'Authorization: Bearer {c['bearer']}'"},
                ),
                ToolCallSpec(
                    "toolu_edit",
                    "edit",
                    {"path": ".env", "old_text": db_line, "new_text": db_line + "-rotated"},
                ),
                ToolCallSpec(
                    "toolu_long", "bash", {"command": "for i in $(seq 300); do cat .env; done"}
                ),
                ToolCallSpec("toolu_leak", "lookup", {"query": "billing"}),
            ],
        ),
        Reply(text=f"Done. The database is {database_url}"),
    )
    planted += 1 + 3 + 2 + 1  # model text; tool arguments; exception headers; model text
    first = await harness.prompt(
        f"Deploy with {c['aws key id']} and {c['slack']}; my password={c['password']}"
    )
    planted += 3
    assert isinstance(first, AssistantMessage) and first.stop_reason == "stop"

    # A 401 that echoes the key and the request headers.
    server.script(HttpError(401, f"Incorrect API key provided: {api_key}. Request had {headers}"))
    failed = await harness.prompt(f"and the google key {c['google']}?")
    assert isinstance(failed, AssistantMessage) and failed.stop_reason == "error"
    planted += 1 + 2 + 1

    # Summaries written by the model.
    server.script(Reply(text=f"Summary: the user shared {c['hugging face']}."))
    await harness.compact()
    planted += 1
    entries = await session.get_entries()
    first_user = next(e for e in entries if isinstance(e, MessageEntry))
    server.script(Reply(text=f"Branch summary: tried {c['jwt']} and {c['github pat']}."))
    await harness.navigate_tree(first_user.id, summarize=True)
    planted += 2
    assert server.validation_errors == []
    await session.close()

    # The tools really ran with the real data.
    assert c["github"] in (ws_root / "config" / "deploy.py").read_text()
    assert (ws_root / ".env").read_text().count("-rotated") == 1
    spilled = list(dirs.tool_output.iterdir())
    assert spilled, "the long output was not written to a file"
    session_text = Path(session.metadata.path or "").read_text()
    for kind in ("anthropic key", "openai key", "github token", "private key", "password"):
        assert f"[redacted: {kind}]" in session_text, kind

    # Derived data and exports.
    index = SessionIndex(dirs.index, repo)
    try:
        await index.reconcile()
        listed = await index.sessions()
        assert listed and listed[0].path == session.metadata.path
    finally:
        index.close()
    exports = dirs.data / "exports"
    exports.mkdir()
    exported = await repo.open(session.metadata.path or "")
    try:  # what the workbench's export writes: Markdown, HTML and a JSONL copy
        (exports / "s.md").write_text(to_markdown(exported, "s"), encoding="utf-8")
        (exports / "s.html").write_text(to_html(exported, "s"), encoding="utf-8")
        await exported.save_copy(str(exports / "s.jsonl"))
    finally:
        await exported.close()
    assert "[redacted: " in (exports / "s.md").read_text()

    log_text = (dirs.logs / "desktop-agent.log").read_text()
    assert "lookup failed unexpectedly" in log_text  # the exception reached the log
    assert any(f" {name}" in log_text for name in ("anthropic", "httpx", "httpcore")), (
        "SDK DEBUG logging wrote nothing: the test would prove nothing"
    )

    for handler in logs_to:
        handler.flush()
    hits = scan_tree([dirs.data, dirs.config], canaries)
    add("canaries planted", planted)
    add("canaries found", sum(len(v) for v in hits.values()))
    assert hits == {}
    # The scan itself finds canaries where they are (the user's own files keep theirs).
    assert scan_tree([ws_root / ".env"], canaries)


SMOKE_ENV_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "DATABASE_URL")


@pytest.mark.asyncio
async def test_the_real_app_keeps_environment_keys_off_disk(
    server: ProviderServer, tmp_path: Path
) -> None:
    """The app started with keys in its environment on a data dir with a session: the
    smoke run restores it, reconciles the index and logs; nothing holds a canary."""
    canaries = make_canaries()
    c = _by(canaries)
    dirs = resolve_dirs(tmp_path / "data")
    repo = JsonlSessionRepo(dirs.sessions, str(dirs.trash))
    session = await repo.create(cwd=str(tmp_path))
    harness = AgentHarness(
        session=session, model=server.model("openai-completions"), get_api_key=lambda m: "k"
    )
    server.script(Reply(text=f"Stored {c['openai']}"))
    await harness.prompt(f"remember {c['anthropic']} and {c['github']}")
    await session.close()
    env = {
        **{k: v for k, v in os.environ.items() if k not in SMOKE_ENV_KEYS},
        **{k: v for k, v in env_vars(canaries).items() if k in SMOKE_ENV_KEYS},
        "QT_QPA_PLATFORM": "offscreen",
    }
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "desktop_agent", "--data-dir", str(dirs.data), "--smoke"],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
        check=True,
    )
    assert '"restored_session"' in done.stdout
    assert dirs.index.exists() and (dirs.logs / "desktop-agent.log").exists()
    hits = scan_tree([dirs.data], canaries)
    add("canaries planted", 3 + len(SMOKE_ENV_KEYS))
    add("canaries found", sum(len(v) for v in hits.values()))
    assert hits == {}


CRASH_CHILD = textwrap.dedent(
    """
    import faulthandler, logging, sys, threading
    from pathlib import Path
    from desktop_agent.app import install_excepthooks, setup_logging
    from desktop_agent.config import resolve_dirs
    from desktop_agent.utils import RedactingFilter, Redactor

    dirs = resolve_dirs(Path(sys.argv[1]))
    dirs.create()
    redactor = Redactor()
    redactor.add_secret(sys.argv[2], "api key")
    setup_logging(dirs, RedactingFilter(redactor))
    install_excepthooks(dirs)
    key, header = sys.argv[2], sys.argv[3]

    def worker():
        raise ConnectionError(f"proxy refused; {header}")

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    try:
        raise PermissionError(f"401 with key {key}")
    except PermissionError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    logging.shutdown()
    secret_local = key  # a local of the crashing frame: faulthandler shows no values
    faulthandler._sigsegv()
    """
)


def test_crash_reports_hold_no_canary(tmp_path: Path) -> None:
    canaries = make_canaries()
    c = _by(canaries)
    header = f"Authorization: Bearer {c['bearer']}; X-Api-Key: {c['x-api-key']}"
    done = subprocess.run(
        [sys.executable, "-c", CRASH_CHILD, str(tmp_path / "data"), c["openai"], header],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0  # it died of the segfault
    dirs = resolve_dirs(tmp_path / "data")
    crash = (dirs.logs / "crash.log").read_text()
    assert "Fatal Python error" in crash  # faulthandler wrote the report
    log_text = (dirs.logs / "desktop-agent.log").read_text()
    assert "Unhandled exception in thread" in log_text and "PermissionError" in log_text
    hits = scan_tree([dirs.data], canaries)
    add("canaries planted", 3)
    add("canaries found", sum(len(v) for v in hits.values()))
    assert hits == {}


PROC_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from desktop_agent.ai import Model
    from desktop_agent.config import KeyStore, make_undumpable, resolve_dirs
    from desktop_agent.harness import AgentHarness, HarnessSettings
    from desktop_agent.session import JsonlSessionRepo, SessionIndex
    from desktop_agent.tools import (
        ApprovalDecision, ApprovalPolicy, BashTool, Sandbox, Workspace, built_in_tools,
        detect_sandbox,
    )
    from desktop_agent.utils import Redactor
    from keyring.backends import fail

    data, ws, model_json, sandboxed, erased = sys.argv[1:6]

    async def allow(request):  # without a sandbox every command is asked for: yes
        return ApprovalDecision.ALLOW_ONCE

    async def main():
        if erased == "yes":  # what app.run and make_workbench do first
            make_undumpable()
            KeyStore(backend=fail.Keyring())
        sandbox = detect_sandbox() if sandboxed == "yes" else Sandbox.none("off")
        dirs = resolve_dirs(Path(data))
        dirs.create()
        repo = JsonlSessionRepo(dirs.sessions, str(dirs.trash))
        session = await repo.create(cwd=ws)
        harness = AgentHarness(
            session=session,
            model=Model.model_validate_json(model_json),
            tools=built_in_tools(bash=BashTool(sandbox=sandbox)),
            workspace=Workspace(ws, forbidden_roots=dirs.forbidden_roots()),
            approval_policy=ApprovalPolicy(allow, rules={"bash": "allow"}),
            get_api_key=lambda m: "k",
            tool_output_dir=dirs.tool_output,
            redactor=Redactor(),
            settings=HarnessSettings(retry_enabled=False),
        )
        await harness.prompt("what does the app's environment hold?")
        await session.close()
        index = SessionIndex(dirs.index, repo)
        try:
            await index.reconcile()
        finally:
            index.close()

    asyncio.run(main())
    """
)

PROC_COMMAND = "tr '\\0' '\\n' < /proc/$PPID/environ | grep -a TOKEN | cut -d= -f2- | rev"
"""The value alone, reversed: no name beside it for the redactor to know it by."""


@pytest.mark.asyncio
async def test_a_token_read_through_proc_ppid_environ_never_reaches_disk(
    server: ProviderServer, tmp_path: Path
) -> None:
    """A ``*_TOKEN`` of the app's own environment block (unknown shape, so only its name
    says it is secret), read by a command through ``/proc/$PPID/environ``: with the app's
    defences (the variable erased from the block, the command in a PID namespace of its
    own) it is nowhere on disk, each defence holds alone, and without both the same
    command does put it in the session (the test can fail)."""
    token = "tk" + os.urandom(12).hex()
    found: dict[tuple[str, str], int] = {}
    for sandboxed, erased in (("yes", "yes"), ("yes", "no"), ("no", "yes"), ("no", "no")):
        ws = tmp_path / f"ws-{sandboxed}-{erased}"
        ws.mkdir()
        data = tmp_path / f"data-{sandboxed}-{erased}"
        model = server.model("openai-completions")
        server.script(
            Reply(tool_calls=[ToolCallSpec("c1", "bash", {"command": PROC_COMMAND})]),
            Reply(text="That is what it holds."),
        )
        env = {**os.environ, "DEPLOY_SERVICE_TOKEN": token}
        await asyncio.to_thread(
            subprocess.run,
            [
                sys.executable,
                "-c",
                PROC_CHILD,
                str(data),
                str(ws),
                model.model_dump_json(),
                sandboxed,
                erased,
            ],
            capture_output=True,
            text=True,
            timeout=90,
            env=env,
            check=True,
        )
        session_text = "".join(p.read_text() for p in (data / "sessions").rglob("*.jsonl"))
        assert "toolResult" in session_text  # the command ran and its result was saved
        hits = scan_tree([data], [Canary("proc token", token[::-1], token, "token")])
        found[sandboxed, erased] = sum(len(v) for v in hits.values())
    add("canaries planted", 1)
    add("canaries found", found["yes", "yes"])
    assert found["yes", "yes"] == 0
    assert found["yes", "no"] == 0  # the sandbox alone: its $PPID is bwrap, not the app
    assert found["no", "yes"] == 0  # the erasure alone (what runs outside the sandbox)
    assert found["no", "no"] > 0, "the command never read the token: the test proves nothing"
