"""Session files are interchangeable with the real Pi package (SESSION_FORMAT.md, decisions).

Pi (npm ``@earendil-works/pi-agent-core@0.74.2``, pinned in ``package-lock.json``) is
driven through ``pi_tool.mjs``, which uses only Pi's public API. Checked both ways:

* a realistic session written by Pi opens in ours with the same leaf, context, labels and
  name, and is listed with the same metadata;
* a session written through our API opens in Pi with the same leaf, context, labels, name
  and entries, and Pi lists it where it expects it; every line is what ``JSON.stringify``
  would write (numbers included), and each entry type has
  Pi's key order;
* Pi can continue a file we wrote, and we can reopen and continue the result;
* our later-v3 additions (header ``metadata``, ``active_tools_change``) do not bother Pi.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ai import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from desktop_agent.session import (
    JsonlSessionRepo,
    Session,
    SessionContext,
    SessionMetadata,
)
from desktop_agent.utils.versions import APP_VERSION
from tests.helpers.pi import PI_VERSION, Pi

pytestmark = pytest.mark.interop

T0 = 1_790_000_000_000
# Text that JSON must escape or keep raw: quotes, backslashes, control characters (ANSI
# colour codes in tool output), DEL, U+2028/U+2029, accents, CJK, non-BMP characters.
ESCAPES = 'say "hi" \\ C:\\tmp\ttab\r\n\x1b[31mred\x1b[0m \x00\x7f \u2028\u2029 é 中文 🙂'
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="


# ----------------------------------------------------------------------------- helpers


def context_json(context: SessionContext) -> dict[str, Any]:
    """Our context in the JSON shape of Pi's ``buildContext()`` result."""
    model = context.model
    return {
        "messages": [m.to_json_dict() for m in context.messages],
        "thinkingLevel": context.thinking_level,
        "model": None if model is None else {"provider": model.provider, "modelId": model.model_id},
    }


async def describe(session: Session) -> dict[str, Any]:
    """Our view of a session, in the shape ``pi_tool.mjs`` reports Pi's view."""
    entries = await session.get_entries()
    ids = [e.id for e in entries]
    labels: dict[str, str] = {}
    for entry_id in ids:
        label = await session.get_label(entry_id)
        if label is not None:
            labels[entry_id] = label
    return {
        "leafId": await session.get_leaf_id(),
        "context": context_json(await session.build_context()),
        "entries": len(entries),
        "entryIds": ids,
        "entryTypes": [e.type for e in entries],
        "branch": [e.id for e in await session.get_branch()],
        "labels": labels,
        "name": await session.get_session_name(),
    }


def pi_view(report: dict[str, Any]) -> dict[str, Any]:
    """The part of a ``pi_tool.mjs`` report that `describe` also produces."""
    assert "error" not in report, f"Pi could not open the file: {report['error']}"
    keys = ("leafId", "context", "entries", "entryIds", "entryTypes", "branch", "labels", "name")
    return {k: report[k] for k in keys}


def assert_same(ours: dict[str, Any], pi: dict[str, Any]) -> None:
    """Compare field by field so that a failure names the field that differs."""
    assert ours.keys() == pi.keys()
    for key in ours:
        if key == "context":
            assert ours[key]["model"] == pi[key]["model"], "context.model"
            assert ours[key]["thinkingLevel"] == pi[key]["thinkingLevel"], "context.thinkingLevel"
            assert len(ours[key]["messages"]) == len(pi[key]["messages"]), "context.messages"
            for i, (a, b) in enumerate(
                zip(ours[key]["messages"], pi[key]["messages"], strict=True)
            ):
                assert a == b, f"context.messages[{i}]"
                assert typed(a) == typed(b), f"context.messages[{i}] (JSON types)"
        else:
            assert ours[key] == pi[key], key


def typed(value: Any) -> Any:
    """`value` with JSON types made explicit: ``True != 1`` but ``1 == 1.0`` (as in JS)."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, int | float):
        return ("number", float(value))
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    return value


def usage(input_: int, output: int, cache_read: int = 0, price: float = 3.0) -> Usage:
    return Usage.model_validate(
        {
            "input": input_,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": 0,
            "totalTokens": input_ + output + cache_read,
            "cost": {
                "input": input_ * price / 1e6,
                "output": output * price * 5 / 1e6,
                "cacheRead": cache_read * price / 10 / 1e6,
                "cacheWrite": 0,
                "total": (input_ * price + output * price * 5 + cache_read * price / 10) / 1e6,
            },
        }
    )


def user(text: str, minute: int) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=T0 + minute * 60_000)


def assistant(
    content: list[Any], stop_reason: str, minute: int, provider: str = "anthropic", **extra: Any
) -> AssistantMessage:
    api, model = (
        ("anthropic-messages", "claude-sonnet-4-5")
        if provider == "anthropic"
        else ("openai-responses", "gpt-5")
    )
    return AssistantMessage.model_validate(
        {
            "role": "assistant",
            "content": [c.to_json_dict() for c in content],
            "api": api,
            "provider": provider,
            "model": model,
            "usage": usage(1000 + minute, 10 + minute, 1000).to_json_dict(),
            "stopReason": stop_reason,
            **extra,
            "timestamp": T0 + minute * 60_000 + 321,
        }
    )


async def write_our_session(session: Session) -> dict[str, str]:
    """Exercise every append method, moves with and without summary; end off the last entry."""
    ids: dict[str, str] = {}
    ids["model1"] = await session.append_model_change("anthropic", "claude-sonnet-4-5")
    ids["think1"] = await session.append_thinking_level_change("low")
    ids["tools1"] = await session.append_active_tools_change(["read", "edit", "bash"])
    ids["u1"] = await session.append_message(user("Wie funktioniert greet()? 👋 — «ça»", 0))
    ids["a1"] = await session.append_message(
        assistant(
            [
                ThinkingContent(thinking="Read it first.", thinking_signature="c2lnLTE="),
                ThinkingContent(thinking="", thinking_signature="UkVEQUNURUQ=", redacted=True),
                TextContent(text="Reading."),
                ToolCall(id="toolu_1", name="read", arguments={"path": "src/greet.ts"}),
            ],
            "toolUse",
            1,
            responseId="msg_1",
        )
    )
    ids["tr1"] = await session.append_message(
        ToolResultMessage(
            tool_call_id="toolu_1",
            tool_name="read",
            content=[TextContent(text=ESCAPES)],
            details={"lines": 1},
            is_error=False,
            timestamp=T0 + 60_000 + 500,
        )
    )
    ids["a2"] = await session.append_message(
        assistant([TextContent(text="It says hi.")], "stop", 2)
    )
    ids["label1"] = await session.append_label(ids["u1"], "question")
    ids["label2"] = await session.append_label(ids["a2"], "answer")
    ids["label3"] = await session.append_label(ids["a2"], None)  # cleared
    ids["name1"] = await session.append_session_name("Our session")
    # A sibling of a2: back to the tool result (no summary), answer again.
    await session.move_to(ids["tr1"])
    ids["a2b"] = await session.append_message(
        assistant([TextContent(text="It greets n.")], "stop", 3)
    )
    ids["label4"] = await session.append_label(ids["a2b"], " better ")
    # Back to a2 with a branch summary, continue on another model.
    ids["bs1"] = str(
        await session.move_to(
            ids["a2"],
            summary={
                "summary": "Tried a second wording.",
                "details": {"readFiles": ["src/greet.ts"], "modifiedFiles": []},
                "fromHook": False,
            },
        )
    )
    ids["model2"] = await session.append_model_change("openai", "gpt-5")
    ids["think2"] = await session.append_thinking_level_change("high")
    ids["u2"] = await session.append_message(
        UserMessage(
            content=[
                TextContent(text="And this screenshot?"),
                ImageContent(data=PNG, mime_type="image/png"),
            ],
            timestamp=T0 + 4 * 60_000,
        )
    )
    ids["a3"] = await session.append_message(
        assistant(
            [TextContent(text="A pixel.", text_signature="msg_abc")], "stop", 5, provider="openai"
        )
    )
    ids["compaction"] = await session.append_compaction(
        "## Goal\nExplain greet().",
        ids["u2"],
        2345,
        details={"readFiles": ["src/greet.ts"], "modifiedFiles": []},
        from_hook=False,
    )
    ids["custom1"] = await session.append_custom_entry("our-state", {"n": 1, "list": [1, None]})
    ids["custom2"] = await session.append_custom_entry("our-marker")
    ids["cm1"] = await session.append_custom_message_entry(
        "our-note", "Keep it short.", True, details={"source": "test"}
    )
    ids["cm2"] = await session.append_custom_message_entry(
        "our-hidden", [TextContent(text="Hidden.")], False
    )
    ids["u3"] = await session.append_message(
        UserMessage(content="String content.", timestamp=T0 + 6 * 60_000)
    )
    ids["a4"] = await session.append_message(
        assistant([], "error", 6, provider="openai", errorMessage="503 Service Unavailable")
    )
    ids["u4"] = await session.append_message(user("Retry.", 7))
    ids["a5"] = await session.append_message(
        assistant([TextContent(text="Done.")], "stop", 8, provider="openai")
    )
    ids["name2"] = await session.append_session_name("  Our session, renamed  ")
    # A second root, then end on a5: the last line is a `leaf` entry.
    ids["bsRoot"] = str(await session.move_to(None, summary={"summary": "From scratch."}))
    ids["u5"] = await session.append_message(user("Another root.", 9))
    await session.move_to(ids["a5"])
    return ids


def path_of(meta: SessionMetadata) -> str:
    assert meta.path is not None
    return meta.path


def copy_into(source: Path, root: Path) -> Path:
    """Copy a session file into ``root`` under its own cwd directory name."""
    target = root / source.parent.name / source.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    return target


@pytest.fixture(scope="module")
def pi_fixture(pi: Pi, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A realistic session written by Pi through its own API (see ``pi_tool.mjs``)."""
    base = tmp_path_factory.mktemp("pi-fixture")
    cwd = base / "project"
    report: dict[str, Any] = pi.run("write-fixture", base / "sessions", cwd)
    report["sessionsRoot"] = base / "sessions"
    report["cwd"] = str(cwd)
    return report


# ----------------------------------------------------------------------------- tests


def test_pinned_pi_is_installed(pi: Pi) -> None:
    report = pi.run("version")
    assert report["packages"] == {
        "@earendil-works/pi-agent-core": PI_VERSION,
        "@earendil-works/pi-ai": PI_VERSION,
        "@earendil-works/pi-coding-agent": PI_VERSION,
    }


@pytest.mark.asyncio
async def test_pi_fixture_opens_in_ours(pi_fixture: dict[str, Any]) -> None:
    # The fixture exercises what it should (so this test cannot pass vacuously).
    types = set(pi_fixture["entryTypes"])
    assert {"model_change", "thinking_level_change", "message", "label", "session_info"} <= types
    assert {"leaf", "branch_summary", "compaction", "custom", "custom_message"} <= types
    assert pi_fixture["entryTypes"][-1] == "leaf"
    assert pi_fixture["leafId"] != pi_fixture["entryIds"][-1]
    roles = [m["role"] for m in pi_fixture["context"]["messages"]]
    assert roles[0] == "compactionSummary"
    assert {"user", "assistant", "toolResult", "custom", "bashExecution"} <= set(roles)

    repo = JsonlSessionRepo(pi_fixture["sessionsRoot"])
    listed = await repo.list()
    assert [Path(path_of(m)) for m in listed] == [Path(pi_fixture["path"])]
    assert [Path(path_of(m)) for m in await repo.list(cwd=pi_fixture["cwd"])] == [
        Path(pi_fixture["path"])
    ]
    meta = listed[0]
    pi_meta = pi_fixture["metadata"]
    assert (meta.id, meta.cwd, meta.parent_session_path) == (pi_meta["id"], pi_meta["cwd"], None)
    assert str(meta.created_at) == pi_meta["createdAt"]

    session = await repo.open(meta)
    try:
        assert_same(await describe(session), pi_view(pi_fixture))
        assert pi_fixture["name"] == "Greeting demo"
        assert pi_fixture["labels"] == {
            pi_fixture["ids"]["u1"]: "question",
            pi_fixture["ids"]["a4b"]: "tests-written",
            pi_fixture["ids"]["a7"]: "final",
        }
    finally:
        await session.close()


@pytest.mark.asyncio
async def test_our_file_opens_in_pi(pi: Pi, tmp_path: Path) -> None:
    root, cwd = tmp_path / "sessions", str(tmp_path / "project")
    repo = JsonlSessionRepo(root)
    session = await repo.create(cwd=cwd)
    try:
        await write_our_session(session)
        live = await describe(session)
    finally:
        await session.close()
    (meta,) = await repo.list()
    reopened = await repo.open(meta)
    try:
        ours = await describe(reopened)
    finally:
        await reopened.close()
    assert_same(ours, live)

    # Pi lists the file where it expects it (directory layout and file name, §4.1).
    report, listed = await pi.abatch(["context", path_of(meta)], ["list", root, cwd])
    assert [s["path"] for s in listed["sessions"]] == [meta.path]
    assert_same(ours, pi_view(report))
    assert report["metadata"] == {
        "id": meta.id,
        "createdAt": str(meta.created_at),
        "cwd": cwd,
        "path": str(meta.path),
        "parentSessionPath": None,
    }


@pytest.mark.asyncio
async def test_our_lines_are_what_pi_writes(pi: Pi, tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path / "sessions")
    session = await repo.create(cwd=str(tmp_path / "project"), metadata={"app": "Desktop Agent"})
    try:
        await write_our_session(session)
    finally:
        await session.close()
    (meta,) = await repo.list()
    report = await pi.arun("canonical", path_of(meta))
    assert report["endsWithNewline"]
    assert not report["hasCarriageReturn"]
    assert report["differences"] == []


@pytest.mark.asyncio
async def test_pi_continues_our_file(pi: Pi, tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path / "sessions")
    session = await repo.create(cwd=str(tmp_path / "project"))
    try:
        ids = await write_our_session(session)
    finally:
        await session.close()
    (meta,) = await repo.list()

    report = await pi.arun("append", path_of(meta), "Pi continues here — ✓")
    appended = report["appendedId"]
    assert report["leafId"] == appended
    assert report["branch"][-2:] == [ids["a5"], appended]

    session = await repo.open(meta)
    try:
        assert_same(await describe(session), pi_view(report))
        # ... and we continue after Pi's entry; Pi sees our continuation.
        ours_id = await session.append_message(user("We continue after Pi.", 20))
        await session.append_label(appended, "from pi")
        ours = await describe(session)
    finally:
        await session.close()
    assert ours["branch"][-3:] == [appended, ours_id, ours["leafId"]]
    assert_same(ours, pi_view(await pi.arun("context", path_of(meta))))


@pytest.mark.asyncio
async def test_pi_tolerates_active_tools_and_header_metadata(pi: Pi, tmp_path: Path) -> None:
    repo = JsonlSessionRepo(tmp_path / "sessions")
    metadata = {"title": "Démo", "workspace": {"trusted": True, "tags": ["a", "b"]}}
    session = await repo.create(cwd=str(tmp_path / "project"), metadata=metadata)
    try:
        await session.append_model_change("anthropic", "claude-sonnet-4-5")
        await session.append_active_tools_change(["read"])
        await session.append_message(user("Hello", 0))
        await session.append_message(assistant([TextContent(text="Hi")], "stop", 1))
        last = await session.append_active_tools_change(["read", "bash"])
        ours = await describe(session)
        context = await session.build_context()
    finally:
        await session.close()
    (meta,) = await repo.list()
    text = await asyncio.to_thread(Path(path_of(meta)).read_text, encoding="utf-8")
    header = json.loads(text.split("\n")[0])
    # what the caller gave, plus which app wrote it: Pi opens and lists it all the same
    assert header["metadata"] == {**metadata, "desktopAgent": {"version": APP_VERSION}}
    assert list(context.active_tool_names or []) == ["read", "bash"]
    assert ours["leafId"] == last

    report, listed = await pi.abatch(["context", path_of(meta)], ["list", tmp_path / "sessions"])
    assert_same(ours, pi_view(report))  # Pi ignores the entry, yet it is the leaf
    assert [s["id"] for s in listed["sessions"]] == [meta.id]


@pytest.mark.asyncio
async def test_labels_and_names_resolve_alike(pi: Pi, tmp_path: Path) -> None:
    """Blank labels and names clear; surrounding spaces are trimmed (§3.4, §6)."""
    repo = JsonlSessionRepo(tmp_path / "sessions")
    session = await repo.create(cwd=str(tmp_path / "project"))
    try:
        first = await session.append_message(user("one", 0))
        await session.append_label(first, "   ")
        second = await session.append_message(user("two", 1))
        await session.append_label(second, "  kept  ")
        await session.append_label(first, "set")
        await session.append_label(first, "")
        await session.append_session_name("name")
        await session.append_session_name("   ")
        ours = await describe(session)
    finally:
        await session.close()
    (meta,) = await repo.list()
    assert ours["labels"] == {second: "kept"}
    assert ours["name"] is None
    assert_same(ours, pi_view(await pi.arun("context", path_of(meta))))


@pytest.mark.asyncio
async def test_we_continue_pi_file(pi: Pi, pi_fixture: dict[str, Any], tmp_path: Path) -> None:
    """We append to a file Pi wrote (moves, labels, a new branch); Pi reopens the result."""
    cwd = pi_fixture["cwd"]
    source = Path(pi_fixture["path"])
    target = await asyncio.to_thread(copy_into, source, tmp_path / "sessions")
    ids = pi_fixture["ids"]
    repo = JsonlSessionRepo(tmp_path / "sessions")
    (meta,) = await repo.list(cwd=cwd)
    session = await repo.open(meta)
    try:
        await session.append_message(user("We continue Pi's session.", 30))
        await session.append_label(ids["u3"], "french")
        await session.move_to(ids["a4"], summary={"summary": "Back to branch A."})
        await session.append_active_tools_change(["read"])
        await session.append_message(
            assistant([TextContent(text="Branch A again.")], "stop", 31, provider="openai")
        )
        ours = await describe(session)
    finally:
        await session.close()
    assert ours["labels"][ids["u3"]] == "french"
    assert_same(ours, pi_view(await pi.arun("context", target)))


@pytest.mark.asyncio
async def test_forks_and_listing_agree_with_pi(pi: Pi, tmp_path: Path) -> None:
    """Our forks (path and whole tree) open in Pi; both list the same sessions (§4)."""
    root, cwd, other_cwd = tmp_path / "sessions", str(tmp_path / "project"), "C:\\Users\\me\\x"
    repo = JsonlSessionRepo(root)
    source = await repo.create(cwd=cwd)
    try:
        ids = await write_our_session(source)
    finally:
        await source.close()
    (source_meta,) = await repo.list()
    forks = [
        await repo.fork(source_meta, cwd=cwd, entry_id=ids["a3"], position="at"),
        await repo.fork(source_meta, cwd=other_cwd, entry_id=ids["u4"], position="before"),
        await repo.fork(source_meta, cwd=cwd),
    ]
    described = []
    for fork in forks:
        try:
            described.append(await describe(fork))
        finally:
            await fork.close()
    *reports, pi_listed, pi_other = await pi.abatch(
        *(["context", path_of(fork.get_metadata())] for fork in forks),
        ["list", root],
        ["list", root, other_cwd],
    )
    for ours, report in zip(described, reports, strict=True):
        assert_same(ours, pi_view(report))
        assert report["metadata"]["parentSessionPath"] == source_meta.path

    def key(m: dict[str, Any]) -> tuple[Any, ...]:
        parent = m.get("parentSessionPath")
        return (m["path"], m["id"], m["createdAt"], m["cwd"], parent)

    ours_listed = [
        {
            "path": m.path,
            "id": m.id,
            "createdAt": m.created_at,
            "cwd": m.cwd,
            "parentSessionPath": m.parent_session_path,
        }
        for m in await repo.list()
    ]
    assert len(ours_listed) == 4
    assert sorted(map(key, ours_listed)) == sorted(map(key, pi_listed["sessions"]))
    assert [m["cwd"] for m in pi_other["sessions"]] == [other_cwd]
    ours_other = [m.path for m in await repo.list(cwd=other_cwd)]
    assert ours_other == [m["path"] for m in pi_other["sessions"]]


@pytest.mark.asyncio
async def test_empty_and_null_leaf_sessions(pi: Pi, tmp_path: Path) -> None:
    """A header-only file, and a leaf moved to ``None`` with nothing after it."""
    repo = JsonlSessionRepo(tmp_path / "sessions")
    empty = await repo.create(cwd=str(tmp_path / "a"), id="our-chosen-id")
    try:
        ours_empty = await describe(empty)
    finally:
        await empty.close()
    moved = await repo.create(cwd=str(tmp_path / "b"))
    try:
        await moved.append_message(user("gone", 0))
        await moved.move_to(None)
        ours_moved = await describe(moved)
    finally:
        await moved.close()
    assert ours_empty["leafId"] is None
    assert ours_moved["leafId"] is None
    assert ours_moved["context"]["messages"] == []
    pi_empty, pi_moved, listed = await pi.abatch(
        ["context", path_of(empty.get_metadata())],
        ["context", path_of(moved.get_metadata())],
        ["list", tmp_path / "sessions", str(tmp_path / "a")],
    )
    assert_same(ours_empty, pi_view(pi_empty))
    assert_same(ours_moved, pi_view(pi_moved))
    assert pi_empty["metadata"]["id"] == "our-chosen-id"
    assert [m["id"] for m in listed["sessions"]] == ["our-chosen-id"]


@pytest.mark.asyncio
async def test_our_numbers_are_written_like_pi(pi: Pi, tmp_path: Path) -> None:
    """Numbers are written as ``JSON.stringify`` writes them (Pi reads either form)."""
    repo = JsonlSessionRepo(tmp_path / "sessions")
    session = await repo.create(cwd=str(tmp_path / "project"))
    try:
        # A realistic cost: 100 cache-read tokens at $0.30 per million.
        await session.append_message(
            assistant(
                [TextContent(text="cheap")], "stop", 0, usage=usage(10, 1, 100).to_json_dict()
            )
        )
        await session.append_custom_entry(
            "numbers", {"small": 1e-7, "whole": 1.0, "zero": 0.0, "big": 1e16, "negzero": -0.0}
        )
    finally:
        await session.close()
    (meta,) = await repo.list()
    report = await pi.arun("canonical", path_of(meta))
    assert report["differences"] == []


def _key_orders(text: str) -> dict[str, list[list[str]]]:
    orders: dict[str, list[list[str]]] = {}
    for line in filter(None, text.split("\n")):  # not splitlines(): U+2028 is no line end
        obj = json.loads(line)
        orders.setdefault(obj["type"], []).append(list(obj))
    return orders


@pytest.mark.asyncio
async def test_entry_key_order_matches_pi(pi_fixture: dict[str, Any], tmp_path: Path) -> None:
    """Header and entries list their keys in the order Pi writes them (§1)."""
    repo = JsonlSessionRepo(tmp_path / "sessions")
    session = await repo.create(cwd=str(tmp_path / "project"))
    try:
        await write_our_session(session)
    finally:
        await session.close()
    (meta,) = await repo.list()
    ours = _key_orders(await asyncio.to_thread(Path(path_of(meta)).read_text, encoding="utf-8"))
    theirs = _key_orders(
        await asyncio.to_thread(Path(pi_fixture["path"]).read_text, encoding="utf-8")
    )
    compared = 0
    for kind, pi_orders in theirs.items():
        for order in ours.get(kind, []):
            same_keys = [o for o in pi_orders if set(o) == set(order)]
            if same_keys:
                compared += 1
                assert order == same_keys[0], kind
    assert compared >= 20
