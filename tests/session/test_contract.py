"""One contract for every session backend (SESSION_FORMAT.md §11, [v3] rows + our decisions)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from desktop_agent.ai import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from desktop_agent.session import (
    CustomEntry,
    InMemorySessionRepo,
    JsonlSessionRepo,
    LabelEntry,
    LeafEntry,
    MessageEntry,
    ModelRef,
    PostgresSessionRepo,
    Session,
    SessionError,
    SqliteSessionRepo,
)
from desktop_agent.utils.versions import header_stamp

CWD = "/home/demo/project"


@pytest_asyncio.fixture(
    params=["memory", "jsonl", "sqlite", pytest.param("postgres", marks=pytest.mark.slow)]
)
async def repo(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield InMemorySessionRepo()
    elif request.param == "jsonl":
        yield JsonlSessionRepo(tmp_path / "sessions")
    elif request.param == "postgres":
        pg_repo = PostgresSessionRepo(request.getfixturevalue("database_url"))
        yield pg_repo
        await pg_repo.close()
    else:
        sqlite_repo = SqliteSessionRepo(tmp_path / "sessions.sqlite")
        yield sqlite_repo
        await sqlite_repo.close()


def user(text: str, ts: int = 1) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=ts)


def assistant(text: str, *, stop: str = "stop", model: str = "m1", provider: str = "p1") -> Any:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="openai-completions",
        provider=provider,
        model=model,
        stop_reason=stop,
        usage=Usage(input=10, output=5, total_tokens=15),
        timestamp=2,
    )


async def reopen(repo: Any, session: Session) -> Session:
    """The same session as a fresh reader sees it (memory repo: the same object)."""
    if isinstance(repo, InMemorySessionRepo):
        return session
    meta = session.metadata
    await session.close()
    reopened: Session = await repo.open(meta)
    return reopened


def texts(ctx: Any) -> list[str]:
    out = []
    for m in ctx.messages:
        content = getattr(m, "content", None)
        if isinstance(content, list) and content and isinstance(content[0], TextContent):
            out.append(content[0].text)
        else:
            out.append(m.role)
    return out


@pytest.mark.asyncio
async def test_empty_session_context(repo: Any) -> None:  # 45, 85, 86
    s = await repo.create(cwd=CWD)
    assert await s.get_leaf_id() is None
    ctx = await s.build_context()
    assert ctx.messages == [] and ctx.thinking_level == "off" and ctx.model is None
    assert ctx.active_tool_names is None
    assert await s.get_branch() == []
    await s.close()


@pytest.mark.asyncio
async def test_linear_chain_and_leaf(repo: Any) -> None:  # 46, 47, 83, 85, 86
    s = await repo.create(cwd=CWD)
    ids = [
        await s.append_message(user("q1")),
        await s.append_message(assistant("a1")),
        await s.append_message(user("q2")),
        await s.append_message(assistant("a2")),
    ]
    assert await s.get_leaf_id() == ids[-1]
    entries = await s.get_entries()
    assert [e.parent_id for e in entries] == [None, *ids[:-1]]
    assert len(set(ids)) == 4 and all(len(i) == 8 for i in ids)
    s = await reopen(repo, s)
    assert texts(await s.build_context()) == ["q1", "a1", "q2", "a2"]
    assert [e.id for e in await s.get_branch(ids[1])] == ids[:2]
    await s.close()


@pytest.mark.asyncio
async def test_settings_from_path(repo: Any) -> None:  # 48, 49, 50, 84
    s = await repo.create(cwd=CWD)
    await s.append_thinking_level_change("high")
    await s.append_model_change("anthropic", "claude")
    await s.append_message(user("q"))
    ctx = await s.build_context()
    assert ctx.thinking_level == "high" and len(ctx.messages) == 1
    assert ctx.model == ModelRef("anthropic", "claude")
    await s.append_message(assistant("a", model="gpt", provider="openai"))
    s = await reopen(repo, s)
    ctx = await s.build_context()
    assert ctx.model == ModelRef("openai", "gpt")
    await s.append_model_change("anthropic", "opus")
    ctx = await s.build_context()
    assert ctx.model == ModelRef("anthropic", "opus")
    await s.close()


@pytest.mark.asyncio
async def test_settings_only_context_and_branch_has(repo: Any) -> None:
    """``build_context(messages=False)``: the same settings without the messages (the
    harness is built from them at every open); `branch_has` looks at the branch only."""
    s = await repo.create(cwd=CWD)
    q = await s.append_message(user("q"))
    assert not s.branch_has("thinking_level_change")
    await s.append_thinking_level_change("high")
    await s.append_active_tools_change(["read"])
    await s.append_message(assistant("a", model="gpt", provider="openai"))
    full, settings = await s.build_context(), await s.build_context(messages=False)
    assert len(full.messages) == 2 and list(settings.messages) == []
    assert (settings.thinking_level, settings.model, settings.active_tool_names) == (
        full.thinking_level,
        full.model,
        full.active_tool_names,
    )
    assert s.branch_has("thinking_level_change") and s.branch_has("message")
    await s.move_to(q)
    assert not s.branch_has("thinking_level_change", lenient=True)
    assert (await s.build_context(messages=False)).thinking_level == "off"
    await s.close()


@pytest.mark.asyncio
async def test_active_tools_last_on_path_wins(repo: Any) -> None:
    s = await repo.create(cwd=CWD)
    q = await s.append_message(user("q"))
    await s.append_active_tools_change(["read", "bash"])
    await s.append_active_tools_change(["read"])
    assert (await s.build_context()).active_tool_names == ["read"]
    await s.move_to(q)
    assert (await s.build_context()).active_tool_names is None
    await s.close()


@pytest.mark.asyncio
async def test_compaction_context(repo: Any) -> None:  # 51, 52, 53
    s = await repo.create(cwd=CWD)
    await s.append_message(user("old"))
    await s.append_message(assistant("old answer"))
    kept = await s.append_message(user("kept"))
    await s.append_message(assistant("kept answer"))
    await s.append_compaction("summary one", kept, 1234, {"readFiles": [], "modifiedFiles": []})
    await s.append_message(user("after"))
    s = await reopen(repo, s)
    ctx = await s.build_context()
    assert ctx.messages[0].role == "compactionSummary"
    assert ctx.messages[0].summary == "summary one"  # type: ignore[union-attr]
    assert texts(ctx)[1:] == ["kept", "kept answer", "after"]
    # A second compaction: only the latest one's summary and range count.
    after2 = await s.append_message(assistant("after answer"))
    await s.append_compaction("summary two", after2, 99)
    ctx = await s.build_context()
    assert [m.role for m in ctx.messages] == ["compactionSummary", "assistant"]
    assert ctx.messages[0].summary == "summary two"  # type: ignore[union-attr]
    await s.close()


@pytest.mark.asyncio
async def test_compaction_unknown_first_kept_keeps_nothing_before(repo: Any) -> None:
    s = await repo.create(cwd=CWD)
    await s.append_message(user("old"))
    await s.append_compaction("sum", "nope", 1)
    await s.append_message(user("new"))
    assert texts(await s.build_context())[1:] == ["new"]
    await s.close()


@pytest.mark.asyncio
async def test_branching_and_branch_summary(repo: Any) -> None:  # 54, 55, 88, 90, 94
    s = await repo.create(cwd=CWD)
    q1 = await s.append_message(user("q1"))
    a1 = await s.append_message(assistant("a1"))
    await s.append_message(user("abandoned"))
    await s.move_to(a1)
    assert texts(await s.build_context()) == ["q1", "a1"]
    q2 = await s.append_message(user("other"))
    assert (await s.get_entry(q2)).parent_id == a1
    summary_id = await s.move_to(q1, {"summary": "explored things", "details": {"x": 1}})
    assert summary_id is not None and await s.get_leaf_id() == summary_id
    entry = await s.get_entry(summary_id)
    assert entry is not None and entry.parent_id == q1
    s = await reopen(repo, s)
    ctx = await s.build_context()
    assert [m.role for m in ctx.messages] == ["user", "branchSummary"]
    assert ctx.messages[1].from_id == q1  # type: ignore[union-attr]
    children = await s.get_children(a1)
    # "abandoned", "other", and the `leaf` entry of the move, whose parent is its target
    assert [c.type for c in children] == ["message", "leaf", "message"]
    assert children[1].target_id == a1  # type: ignore[union-attr]
    await s.close()


@pytest.mark.asyncio
async def test_move_to_root_and_unknown(repo: Any) -> None:  # 89, 91, 132
    s = await repo.create(cwd=CWD)
    await s.append_message(user("q"))
    with pytest.raises(SessionError) as err:
        await s.move_to("missing")
    assert err.value.code == "not_found"
    with pytest.raises(SessionError):
        await s.move_to("missing", {"summary": "x"})
    await s.move_to(None)
    assert await s.get_leaf_id() is None
    assert (await s.build_context()).messages == []
    new_root = await s.append_message(user("fresh"))
    assert (await s.get_entry(new_root)).parent_id is None
    summary = await s.move_to(None, "from root")
    entry = await s.get_entry(summary or "")
    assert entry is not None and entry.from_id == "root"
    with pytest.raises(SessionError) as err:
        await s.get_branch("missing")
    assert err.value.code == "not_found"
    await s.close()


@pytest.mark.asyncio
async def test_leaf_entry_written_and_restored(repo: Any) -> None:  # our decision
    s = await repo.create(cwd=CWD)
    q = await s.append_message(user("q"))
    await s.append_message(assistant("a"))
    await s.move_to(q)
    last = (await s.get_entries())[-1]
    assert isinstance(last, LeafEntry) and last.target_id == q
    s = await reopen(repo, s)
    assert await s.get_leaf_id() == q
    assert texts(await s.build_context()) == ["q"]
    await s.close()


@pytest.mark.asyncio
async def test_labels(repo: Any) -> None:  # 72, 73, 74, 78, 79
    s = await repo.create(cwd=CWD)
    q = await s.append_message(user("q"))
    await s.append_label(q, "first")
    await s.append_label(q, "  second  ")
    assert await s.get_label(q) == "second"
    await s.append_message(assistant("a"))
    s = await reopen(repo, s)
    assert await s.get_label(q) == "second"
    await s.append_label(q)
    assert await s.get_label(q) is None
    assert texts(await s.build_context()) == ["q", "a"]
    labels = [e for e in await s.get_entries() if isinstance(e, LabelEntry)]
    assert labels[-1].label is None and "label" not in labels[-1].to_json_dict()
    with pytest.raises(SessionError) as err:
        await s.append_label("missing", "x")
    assert err.value.code == "not_found"
    await s.close()


@pytest.mark.asyncio
async def test_session_name(repo: Any) -> None:  # 24, 133
    s = await repo.create(cwd=CWD)
    await s.append_session_name("  My work ")
    assert await s.get_session_name() == "My work"
    s = await reopen(repo, s)
    assert await s.get_session_name() == "My work"
    await s.append_session_name("   ")
    assert await s.get_session_name() is None
    await s.close()


@pytest.mark.asyncio
async def test_custom_entries(repo: Any) -> None:  # 13, 82
    s = await repo.create(cwd=CWD)
    await s.append_message(user("q"))
    c1 = await s.append_custom_entry("state")
    c2 = await s.append_custom_entry("state", {"deep": {"list": [1, 2, {"x": None}]}})
    await s.append_custom_message_entry("note", "remember this", True, {"src": "t"})
    await s.append_custom_message_entry("hidden", [{"type": "text", "text": "t"}], False)
    nxt = await s.append_message(user("q2"))
    s = await reopen(repo, s)
    e1, e2 = await s.get_entry(c1), await s.get_entry(c2)
    assert isinstance(e1, CustomEntry) and "data" not in e1.to_json_dict()
    assert isinstance(e2, CustomEntry) and e2.data == {"deep": {"list": [1, 2, {"x": None}]}}
    assert (await s.get_entry(nxt)).parent_id != c2  # type: ignore[union-attr]
    ctx = await s.build_context()
    assert [m.role for m in ctx.messages] == ["user", "custom", "custom", "user"]
    assert ctx.messages[1].details == {"src": "t"}  # type: ignore[union-attr]
    await s.close()


@pytest.mark.asyncio
async def test_every_stop_reason_round_trips(repo: Any) -> None:  # 28
    s = await repo.create(cwd=CWD)
    await s.append_message(user("q"))
    last = ""
    for reason in ("stop", "length", "toolUse", "error", "aborted"):
        msg = assistant(reason, stop=reason)
        if reason in ("error", "aborted"):
            msg.error_message = f"{reason} happened"
        last = await s.append_message(msg)
    s = await reopen(repo, s)
    assert await s.get_leaf_id() == last
    msgs = (await s.build_context()).messages
    assert [m.stop_reason for m in msgs[1:]] == [  # type: ignore[union-attr]
        "stop",
        "length",
        "toolUse",
        "error",
        "aborted",
    ]
    await s.close()


@pytest.mark.asyncio
async def test_messages_round_trip_exactly(repo: Any) -> None:
    s = await repo.create(cwd=CWD)
    call = ToolCall(id="call_1", name="read", arguments={"path": "a.txt"})
    asst = AssistantMessage(
        content=[ThinkingContent(thinking="hmm", thinking_signature="sig=="), call],
        api="anthropic-messages",
        provider="anthropic",
        model="claude",
        stop_reason="toolUse",
        timestamp=5,
    )
    result = ToolResultMessage(
        tool_call_id="call_1",
        tool_name="read",
        content=[TextContent(text="héllo ✓ \u2028")],
        details={"lines": 1},
        is_error=False,
        timestamp=6,
    )
    await s.append_message(user("q"))
    await s.append_message(asst)
    await s.append_message(result)
    s = await reopen(repo, s)
    msgs = (await s.build_context()).messages
    assert msgs[1].to_json_dict() == asst.to_json_dict()
    assert msgs[2].to_json_dict() == result.to_json_dict()
    await s.close()


@pytest.mark.asyncio
async def test_concurrent_appends_are_serialised(repo: Any) -> None:  # Q6, 139
    s = await repo.create(cwd=CWD)
    ids = await asyncio.gather(*(s.append_message(user(f"m{i}")) for i in range(30)))
    entries = await s.get_entries()
    assert len(set(ids)) == 30
    parents = [e.parent_id for e in entries]
    assert len(set(parents)) == 30  # a chain: no two siblings
    assert len(await s.get_branch()) == 30
    await s.close()


@pytest.mark.asyncio
async def test_tree_and_children_order(repo: Any) -> None:  # 87
    s = await repo.create(cwd=CWD)
    assert await s.get_tree() == []
    q = await s.append_message(user("q"))
    a = await s.append_message(assistant("a"))
    await s.move_to(q)
    b = await s.append_message(assistant("b"))
    roots = await s.get_tree()
    assert len(roots) == 1 and roots[0].entry.id == q
    kids = [n.entry.id for n in roots[0].children]
    assert kids[:1] == [a] and b in kids
    assert next(c.id for c in await s.get_children(q)) == a
    await s.close()


@pytest.mark.asyncio
async def test_fork_whole_and_paths(repo: Any) -> None:  # 29, 31, 32, 34, 135
    s = await repo.create(cwd=CWD)
    q1 = await s.append_message(user("q1"))
    a1 = await s.append_message(assistant("a1"))
    q2 = await s.append_message(user("q2"))
    await s.append_message(assistant("a2"))
    await s.move_to(a1)
    meta = s.metadata
    await s.sync()
    if not isinstance(repo, InMemorySessionRepo):
        await s.close()

    whole = await repo.fork(meta, cwd=CWD)
    assert await whole.get_leaf_id() == a1
    assert len(await whole.get_entries()) == 5
    at = await repo.fork(meta, cwd=CWD, entry_id=q2, position="at")
    assert texts(await at.build_context()) == ["q1", "a1", "q2"]
    before = await repo.fork(meta, cwd=CWD, entry_id=q2)
    assert texts(await before.build_context()) == ["q1", "a1"]
    empty = await repo.fork(meta, cwd=CWD, entry_id=q1)
    assert await empty.get_leaf_id() is None
    for bad, pos in ((a1, "before"), ("missing", "at")):
        with pytest.raises(SessionError) as err:
            await repo.fork(meta, cwd=CWD, entry_id=bad, position=pos)
        assert err.value.code == "invalid_fork_target"
    if isinstance(repo, JsonlSessionRepo):
        assert whole.metadata.parent_session_path == meta.path
    for forked in (whole, at, before, empty):
        await forked.close()


@pytest.mark.asyncio
async def test_list_delete_open(repo: Any) -> None:  # 24, 25, 137
    a = await repo.create(cwd=CWD, metadata={"title": "A"})
    await a.append_message(user("q"))
    b = await repo.create(cwd="/other")
    metas = {m.id: m for m in await repo.list()}
    assert {a.metadata.id, b.metadata.id} <= set(metas)
    # the app's version stamp is added to what the caller gave (issue 10 item 5)
    assert metas[a.metadata.id].metadata == {"title": "A", **header_stamp()}
    assert [m.id for m in await repo.list(cwd="/other")] == [b.metadata.id]
    meta_b = b.metadata
    await b.close()
    if not isinstance(repo, InMemorySessionRepo):
        await a.close()
    await repo.delete(meta_b)
    assert meta_b.id not in {m.id for m in await repo.list()}
    with pytest.raises(SessionError) as err:
        await repo.open(meta_b)
    assert err.value.code == "not_found"
    await repo.delete(meta_b)  # deleting again is fine
    reopened = await repo.open(metas[a.metadata.id])
    assert texts(await reopened.build_context()) == ["q"]
    await reopened.close()


@pytest.mark.asyncio
async def test_custom_session_id(repo: Any) -> None:  # 59, 60
    s = await repo.create(cwd=CWD, id="my-session-1")
    assert s.metadata.id == "my-session-1"
    t = await repo.create(cwd=CWD, parent_session_path="/x.jsonl")
    assert t.metadata.id
    await s.close()
    await t.close()


@pytest.mark.asyncio
async def test_invalid_message_refused_before_writing(repo: Any) -> None:  # A10
    s = await repo.create(cwd=CWD)
    with pytest.raises(SessionError) as err:
        await s.append_message({"role": "assistant", "content": None})
    assert err.value.code == "invalid_argument"
    with pytest.raises(SessionError):
        await s.append_custom_entry("x", {"n": float("nan")})
    assert await s.get_entries() == []
    await s.close()


@pytest.mark.asyncio
async def test_unencodable_text_is_kept(repo: Any) -> None:  # R12
    s = await repo.create(cwd=CWD)
    weird = "bad \udcff byte and NUL \x00 end"
    await s.append_message(user(weird))
    s = await reopen(repo, s)
    entry = (await s.get_entries())[0]
    assert isinstance(entry, MessageEntry)
    assert entry.message.content[0].text == weird  # type: ignore[union-attr]
    await s.close()


@pytest.mark.asyncio
async def test_closed_session_refuses_writes(repo: Any) -> None:
    s = await repo.create(cwd=CWD)
    await s.close()
    if isinstance(repo, InMemorySessionRepo):
        return
    with pytest.raises(SessionError):
        await s.append_message(user("late"))
