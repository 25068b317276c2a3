"""Sessions of the real Pi CLI (npm ``@earendil-works/pi-coding-agent@0.74.2``) open and
continue in ours, and ours in it (issue 13 item 7).

The CLI writes sessions against the suite's scripted OpenAI-compatible server in print
mode (``pi -p``, ``pi -c -p``) and RPC mode (prompts, ``!cmd`` bash runs, a tree
navigation with a branch summary through ``pi_interop_extension.ts``, model and thinking
changes, a manual compaction, a clone, a name), and its ``SessionManager`` writes every
role directly (bash runs in all their shapes, ``excludeFromContext`` included). Checked
both ways, always with the CLI's own code (``pi_tool.mjs cli-context``: its parser,
``migrateSessionEntries``, ``buildSessionContext`` and ``convertToLlm``):

* what the model is sent (exact JSON, and role + text for readable failures) and the
  leaf are the same for every file the CLI wrote;
* a move of ours (a ``leaf`` entry whose parent is the target) is the CLI's leaf too,
  and ``pi --continue`` carries on from it (pi-agent-core agrees);
* ``pi --continue`` after our turn, and our continue after the CLI's turn;
* an append by the CLI while we have the session open is named (``changed_on_disk``) and
  reloading keeps both histories;
* v1/v2 files open with the messages of Pi's migration and are never changed; a
  converted file opens in both Pi packages and the CLI continues it;
* the CLI never tried to reach anything but 127.0.0.1 (``net_guard.mjs``) and never saw
  the real home.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import (
    Message,
    bash_execution_to_text,
    convert_to_llm,
)
from desktop_agent.harness import AgentHarness
from desktop_agent.session import (
    JsonlSessionRepo,
    Session,
    SessionWriteError,
    encode_cwd,
)
from desktop_agent.tools import ReadTool, ToolContext, Workspace, run_tool
from tests.helpers.pi import Pi
from tests.helpers.pi_cli import MODEL, PROVIDER, PiCli
from tests.helpers.pi_files import v1_file, v2_file
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec
from tests.helpers.wire import user_texts
from tests.helpers.workbench import make_workbench
from tests.interop.test_pi_interop import typed

pytestmark = pytest.mark.interop

HELLO = "hello\nworld\n"


# ----------------------------------------------------------------------------- helpers


def view(messages: list[Message] | list[dict[str, Any]]) -> list[dict[str, str]]:
    """Role and text of each message, in the shape of ``pi_tool.mjs``'s ``llmView``."""
    out = []
    for m in messages:
        obj = m if isinstance(m, dict) else m.to_json_dict()
        content = obj.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        parts = []
        for b in blocks:
            if b.get("type") == "text":
                parts.append(b["text"])
            elif b.get("type") == "toolCall":
                args = json.dumps(b.get("arguments"), separators=(",", ":"), ensure_ascii=False)
                parts.append(f"[toolCall {b['name']} {args}]")
            else:
                parts.append(f"[{b.get('type')}]")
        out.append({"role": obj["role"], "text": "".join(parts)})
    return out


async def ours(path: Path | str) -> dict[str, Any]:
    """What our harness would send for the file, and its leaf and branch."""
    session = await JsonlSessionRepo(Path(path).parent.parent).open(str(path))
    try:
        return await describe(session)
    finally:
        await session.close()


async def describe(session: Session) -> dict[str, Any]:
    context = await session.build_context()
    llm = convert_to_llm(list(context.messages))
    return {
        "leafId": session.leaf_id(),
        "branch": session.branch_ids(),
        "llm": [m.to_json_dict() for m in llm],
        "llmView": view(llm),
        "messages": list(context.messages),
    }


def sent_part(message: dict[str, Any]) -> dict[str, Any]:
    """A message without ``usage``: it is not sent to the model, and we fill in the
    totals an older file lacks (issue 13 item 5)."""
    return {k: v for k, v in message.items() if k != "usage"}


def assert_same_llm(mine: dict[str, Any], cli: dict[str, Any]) -> None:
    assert "error" not in cli, cli
    assert mine["llmView"] == cli["llmView"]
    assert len(mine["llm"]) == len(cli["llm"])
    for i, (a, b) in enumerate(zip(mine["llm"], cli["llm"], strict=True)):
        assert typed(sent_part(a)) == typed(sent_part(b)), f"llm[{i}]"


def cli_branch_without_leaf_entries(cli: dict[str, Any], path: Path) -> list[str]:
    leaf_ids = {
        json.loads(line)["id"]
        for line in path.read_text(encoding="utf-8").splitlines()[1:]
        if '"type":"leaf"' in line
    }
    return [i for i in cli["branch"] if i not in leaf_ids]


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()[1:]]


def message_ids(path: Path, role: str) -> list[str]:
    return [
        e["id"] for e in entries(path) if e["type"] == "message" and e["message"]["role"] == role
    ]


def our_model(server: ProviderServer) -> Any:
    return server.model("openai-completions", MODEL, provider=PROVIDER)


async def our_turn(session: Session, server: ProviderServer, prompt: str, answer: str) -> None:
    """One turn through our harness (the provider server answers ``answer``)."""
    harness = AgentHarness(
        session=session, model=our_model(server), tools=[], get_api_key=lambda m: "local"
    )
    server.script(Reply(text=answer))
    final = await harness.prompt(prompt)
    assert final is not None and final.stop_reason == "stop", final


# ----------------------------------------------------------------------------- the world


@dataclass
class World:
    pi: Pi
    server: ProviderServer
    cli: PiCli
    base: Path
    real_home_pi_existed: bool
    files: dict[str, Path] = field(default_factory=dict)
    requests: dict[str, Any] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)

    def project(self, name: str) -> Path:
        path = self.base / name
        path.mkdir(exist_ok=True)
        (path / "hello.txt").write_text(HELLO, encoding="utf-8")
        return path


@pytest.fixture(scope="module")
def world(pi: Pi, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("pi-cli")
    real_home_pi = Path.home() / ".pi"
    existed = real_home_pi.exists()
    with ProviderServer() as server:
        w = World(pi, server, PiCli(pi, server, base), base, existed)
        _print_session(w)
        _rpc_session(w)
        report = pi.run("cli-write-fixture", w.cli.sessions_dir / "manager", str(base / "m"))
        w.files["manager"] = Path(report["path"])
        w.ids.update({f"manager.{k}": v for k, v in report["ids"].items()})
        yield w


def _print_session(w: World) -> None:
    project = w.project("print")
    w.server.script(
        Reply(tool_calls=[ToolCallSpec("call_1", "read", {"path": "hello.txt"})]),
        Reply(text="It says hello world."),
    )
    w.cli.print("What is in hello.txt?", cwd=project)
    w.server.script(Reply(text="Yes, two lines."))
    w.cli.print("Two lines?", cwd=project, args=("--continue",))
    w.requests["print.continue"] = w.server.last_body()
    (path,) = w.cli.session_files(project)
    w.files["print"] = path


def _rpc_session(w: World) -> None:
    project = w.project("rpc")
    w.server.script(Reply(text="answer one"), Reply(text="answer two"))
    with w.cli.rpc(cwd=project) as rpc:
        rpc.prompt("first prompt")
        bash = rpc.send({"type": "bash", "command": "ls; exit 3"})["data"]
        assert bash["exitCode"] == 3
        rpc.prompt("second prompt")
        w.requests["rpc.after_bash"] = w.server.last_body()
        path = Path(rpc.send({"type": "get_state"})["data"]["sessionFile"])
        first_answer = message_ids(path, "assistant")[0]
        w.server.script(Reply(text="## Goal\nWhat the second prompt tried."))
        nav = rpc.extension(f"interop-nav {first_answer} summarize")
        assert not nav["cancelled"]
        rpc.send({"type": "set_model", "provider": PROVIDER, "modelId": "local-other"})
        rpc.send({"type": "set_thinking_level", "level": "high"})
        w.server.script(Reply(text="## Goal\nCompacted."))
        rpc.send({"type": "compact"})
        w.server.script(Reply(text="answer three"))
        rpc.prompt("third prompt")
        rpc.send({"type": "set_session_name", "name": "RPC session"})
        w.ids["rpc.leaf"] = rpc.extension("interop-leaf")["leaf"]
        rpc.send({"type": "clone"})
        clone = Path(rpc.send({"type": "get_state"})["data"]["sessionFile"])
    w.files["rpc"], w.files["rpc.clone"] = path, clone
    assert clone != path


def copy_session(w: World, name: str, new_name: str) -> Path:
    """A copy of one of the world's files in a workspace of its own (for writing tests)."""
    source = w.files[name]
    project = w.project(new_name)
    folder = w.cli.sessions_dir / encode_cwd(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    shutil.copyfile(source, target)
    return target


# ----------------------------------------------------------------------------- tests


@pytest.mark.parametrize("name", ["print", "rpc", "rpc.clone", "manager"])
@pytest.mark.asyncio
async def test_cli_sessions_send_the_same_messages(world: World, name: str) -> None:
    path = world.files[name]
    before = path.read_bytes()
    cli = world.pi.run("cli-context", path)
    mine = await ours(path)
    assert_same_llm(mine, cli)
    assert mine["leafId"] == cli["leafId"] and mine["branch"] == cli["branch"]
    assert path.read_bytes() == before  # opening (and closing) wrote nothing
    roles = {e["message"]["role"] for e in entries(path) if e["type"] == "message"}
    if name == "rpc":
        assert "bashExecution" in roles
        types = {e["type"] for e in entries(path)}
        assert {"branch_summary", "compaction", "model_change", "session_info"} <= types
        assert mine["leafId"] == world.ids["rpc.leaf"]
    if name == "manager":
        assert sum(1 for m in cli["llmView"] if m["text"].startswith("Ran `")) == 5  # 6 - 1


@pytest.mark.asyncio
async def test_bash_runs_reach_the_model_as_the_cli_sent_them(world: World) -> None:
    """The CLI's own request after ``!cmd`` carries the text we would send."""
    (bash,) = [
        e["message"]
        for e in entries(world.files["rpc"])
        if e["type"] == "message" and e["message"]["role"] == "bashExecution"
    ]
    text = bash_execution_to_text(bash)
    assert text in user_texts(world.requests["rpc.after_bash"])
    assert text.endswith("Command exited with code 3")


@pytest.mark.asyncio
async def test_read_tool_output_is_the_clis(world: World, tmp_path: Path) -> None:
    """Our ``read`` returns exactly what Pi's ``read`` returned for the same file."""
    (result,) = [
        e["message"]
        for e in entries(world.files["print"])
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    pi_text = "".join(b["text"] for b in result["content"] if b["type"] == "text")
    assert pi_text == HELLO
    (tmp_path / "hello.txt").write_text(HELLO, encoding="utf-8")
    context = ToolContext(workspace=Workspace(tmp_path), output_dir=tmp_path / "out")
    mine = await run_tool(ReadTool(), "c", {"path": "hello.txt"}, context)
    assert mine.text_content() == pi_text


@pytest.mark.asyncio
async def test_our_move_is_the_clis_leaf_and_pi_continues_there(world: World) -> None:
    path = copy_session(world, "print", "moved")
    first_answer = message_ids(path, "assistant")[-2]  # "It says hello world."
    repo = JsonlSessionRepo(path.parent.parent)
    session = await repo.open(str(path))
    try:
        await session.move_to(first_answer)
        mine = await describe(session)
    finally:
        await session.close()
    cli = world.pi.run("cli-context", path)
    assert cli_branch_without_leaf_entries(cli, path)[-1] == first_answer
    assert_same_llm(mine, cli)
    core = world.pi.run("context", path)  # pi-agent-core reads targetId: the same leaf
    assert core["leafId"] == first_answer == mine["leafId"]
    assert [m["role"] for m in core["context"]["messages"]] == [m.role for m in mine["messages"]]

    world.server.script(Reply(text="Continued from your move."))
    world.cli.print("From here?", cwd=world.base / "moved", args=("-c",))
    sent = user_texts(world.server.last_body())
    assert sent == [m["text"] for m in mine["llmView"] if m["role"] == "user"] + ["From here?"]
    after = await ours(path)
    assert after["branch"][: len(mine["branch"])] == mine["branch"]
    assert [m["text"] for m in after["llmView"]][-2:] == ["From here?", "Continued from your move."]
    assert_same_llm(after, world.pi.run("cli-context", path))


@pytest.mark.asyncio
async def test_continue_in_each_direction(world: World) -> None:
    """``pi --continue`` after our turn; our turn after the CLI's."""
    path = copy_session(world, "rpc", "both-ways")
    project = world.base / "both-ways"
    repo = JsonlSessionRepo(path.parent.parent)
    session = await repo.open(str(path))
    try:
        await our_turn(session, world.server, "Our question.", "Our answer.")
    finally:
        await session.close()
    mine = await ours(path)
    assert_same_llm(mine, world.pi.run("cli-context", path))

    world.server.script(Reply(text="Pi's answer."))
    world.cli.print("Pi's question.", cwd=project, args=("--continue",))
    assert world.cli.session_files(project) == [path]  # it continued this file
    sent = user_texts(world.server.last_body())
    assert sent[-2:] == ["Our question.", "Pi's question."]
    cli = world.pi.run("cli-context", path)
    after = await ours(path)
    assert_same_llm(after, cli)
    assert after["llmView"][-2:] == [
        {"role": "user", "text": "Pi's question."},
        {"role": "assistant", "text": "Pi's answer."},
    ]

    session = await repo.open(str(path))
    try:
        await our_turn(session, world.server, "And ours again.", "Fine.")
    finally:
        await session.close()
    body = world.server.last_body()
    assert user_texts(body) == [m["text"] for m in cli["llmView"] if m["role"] == "user"] + [
        "And ours again."
    ]
    assert_same_llm(await ours(path), world.pi.run("cli-context", path))


@pytest.mark.asyncio
async def test_the_cli_appending_while_we_are_open_is_named_and_merged(world: World) -> None:
    path = copy_session(world, "print", "concurrent")
    project = world.base / "concurrent"
    repo = JsonlSessionRepo(path.parent.parent)
    session = await repo.open(str(path))
    try:
        world.server.script(Reply(text="Meanwhile in Pi."))
        world.cli.print("Pi was here.", cwd=project, args=("-c",))
        with pytest.raises(SessionWriteError) as err:
            await session.append_message(
                {"role": "user", "content": [{"type": "text", "text": "Ours."}], "timestamp": 9}
            )
        assert err.value.code == "changed_on_disk"
        report = await session.reload_from_disk()
        assert len(report.taken_in) == 2 and len(report.kept) == 1
        mine = await describe(session)
        ours_branch = session.branch_ids(report.our_leaf)
    finally:
        await session.close()
    cli = world.pi.run("cli-context", path)
    assert_same_llm(mine, cli)  # the CLI continues where it left off (their leaf)
    assert mine["llmView"][-1] == {"role": "assistant", "text": "Meanwhile in Pi."}
    assert ours_branch[-1] == report.kept[0] and report.branch_point in ours_branch


@pytest.mark.parametrize(("version", "make"), [(1, v1_file), (2, v2_file)])
@pytest.mark.asyncio
async def test_legacy_files_open_as_pi_migrates_them_and_convert(
    world: World, version: int, make: Any
) -> None:
    project = world.project(f"legacy-v{version}")
    folder = world.cli.sessions_dir / "legacy" / f"v{version}"
    folder.mkdir(parents=True)
    path = folder / f"2025-12-09T00-53-29-825Z_legacy-v{version}.jsonl"
    data = make().replace(b'"/home/u/project"', json.dumps(str(project)).encode())
    path.write_bytes(data)  # (the CLI refuses sessions whose cwd does not exist)
    cli = world.pi.run("cli-context", path)  # Pi's migration, in memory
    assert cli["versionOnDisk"] == version
    mine = await ours(path)
    assert_same_llm(mine, cli)
    if version == 2:  # ids are the file's own; v1 ids are made up (Pi's are random)
        assert mine["branch"] == cli["branch"]
    assert path.read_bytes() == data

    converted = await JsonlSessionRepo(folder.parent).convert(str(path))
    assert converted.path is not None
    new = Path(converted.path)
    written = new.read_bytes()
    core = world.pi.run("context", new)
    assert "error" not in core, core
    assert core["leafId"] == mine["leafId"]
    assert len(core["context"]["messages"]) == len(mine["messages"])
    opened = world.pi.run("cli-open", new)
    assert opened["leafId"] == mine["leafId"] and opened["llmView"] == mine["llmView"]
    assert new.read_bytes() == written  # the CLI had nothing to migrate
    assert path.read_bytes() == data

    world.server.script(Reply(text="Continued the converted session."))
    world.cli.print("Go on.", cwd=project, args=("--session", str(new)))
    sent = user_texts(world.server.last_body())
    assert sent == [m["text"] for m in mine["llmView"] if m["role"] == "user"] + ["Go on."]
    assert path.read_bytes() == data


@pytest.mark.asyncio
async def test_the_pi_source_restores_the_clis_most_recent_session(
    world: World, tmp_path: Path
) -> None:
    """Below the GUI, what ``--smoke`` with the Pi source on restores (the workbench over
    app.py's stores, on a first launch): the most recent session of the CLI's folder, on
    the CLI's leaf."""
    model = world.server.model("openai-completions", MODEL, provider=PROVIDER)
    wb = make_workbench(tmp_path / "data", model, pi_folder=world.cli.sessions_dir)
    await wb.start()
    try:
        await wb.restore()
        pi_paths = {r.path for r in wb.rows if r.source == "pi"}
        assert {str(world.files["print"]), str(world.files["rpc"])} <= pi_paths
        assert wb.ref is not None and wb.is_pi(wb.ref) and wb.session is not None
        assert wb.ref == wb.rows[0].path  # newest activity first, ours and Pi's together
        cli = world.pi.run("cli-context", wb.ref)
        # (the CLI's leaf may be one of our `leaf` entries: its path ends at our leaf)
        assert wb.session.leaf_id() == cli_branch_without_leaf_entries(cli, Path(wb.ref))[-1]
    finally:
        await wb.shutdown(stop=True)
        await wb.aclose()


def test_the_cli_stayed_offline_and_out_of_the_real_home(world: World) -> None:
    assert world.cli.network_attempts == []
    assert world.server.validation_errors == []
    assert (Path.home() / ".pi").exists() == world.real_home_pi_existed
    assert all(p.is_relative_to(world.cli.sessions_dir) for p in world.files.values())
