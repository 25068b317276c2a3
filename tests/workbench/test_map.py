"""The branch map's layout (Qt-free): lanes like a commit graph, markers, filters, hits,
incremental appends, and the Branches list."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from desktop_agent.ai import (
    AssistantMessage,
    ContentBlock,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from desktop_agent.session import InMemorySessionRepo, Session
from desktop_agent.workbench import MAP_FILTERS, BranchMap, MapFilter, query_words, text_matches
from desktop_agent.workbench._search import search_entries, tooltip_text


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def answer(text: str, *tools: str) -> AssistantMessage:
    content: list[ContentBlock] = [TextContent(text=text)]
    content += [ToolCall(id=f"c{i}", name=n) for i, n in enumerate(tools)]
    return AssistantMessage(
        content=content, api="openai-completions", provider="local", model="m",
        stop_reason="toolUse" if tools else "stop", timestamp=2,
    )  # fmt: skip


def run(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(coro)


async def _session() -> Session:
    return await InMemorySessionRepo().create(cwd="/work/p")


def names(bmap: BranchMap, ids: dict[str, str]) -> list[str]:
    back = {v: k for k, v in ids.items()}
    return [back.get(r.entry_id, "?") for r in bmap.rows]


def check_no_crossing(bmap: BranchMap) -> None:
    """Every line joins a node to its parent without passing through another node."""
    rows = bmap.rows
    for r, row in enumerate(rows):
        if row.parent < 0:
            continue
        parent = rows[row.parent]
        assert row.parent < r
        for k in range(row.parent + 1, r):
            assert rows[k].lane != parent.lane, "a node sits on a line it does not belong to"
            assert (parent.lane, parent.color) in bmap.through(k)
        if row.lane == parent.lane:
            assert row.up and row.from_lane == -1
        else:
            assert row.from_lane == parent.lane and row.lane > parent.lane


async def _forked() -> tuple[Session, dict[str, str]]:
    """u1 a1 ┬ u2 a2 ┬ u3 a3          (the first line)
    │       └ u3b a3b       (a retry of u3)
    └ u2b a2b ← leaf        (an edit of u2)
    """
    s = await _session()
    ids: dict[str, str] = {}
    ids["u1"] = await s.append_message(user("first"))
    ids["a1"] = await s.append_message(answer("one"))
    ids["u2"] = await s.append_message(user("second"))
    ids["a2"] = await s.append_message(answer("two"))
    ids["u3"] = await s.append_message(user("third"))
    ids["a3"] = await s.append_message(answer("three"))
    await s.move_to(ids["a2"])
    ids["u3b"] = await s.append_message(user("third again"))
    ids["a3b"] = await s.append_message(answer("three b"))
    await s.move_to(ids["a1"])
    ids["u2b"] = await s.append_message(user("second, edited"))
    ids["a2b"] = await s.append_message(answer("two b"))
    return s, ids


def test_lanes_follow_the_tree_and_switching_moves_nothing() -> None:
    """The newest child goes on in its lane, alternatives follow their fork; switching
    branches (m12) moves no row and changes no colour: only the current path changes."""

    async def go() -> None:
        s, ids = await _forked()
        bmap = BranchMap()
        assert bmap.sync(s.shape()).reset
        # a fork's alternatives come right after it, then its line goes on
        assert names(bmap, ids) == ["u1", "a1", "u2", "a2", "u3", "a3", "u3b", "a3b", "u2b", "a2b"]
        lanes = {n: bmap.rows[i].lane for i, n in enumerate(names(bmap, ids))}
        assert [lanes[n] for n in ("u1", "a1", "u2b", "a2b")] == [0, 0, 0, 0]
        assert lanes["u2"] == lanes["a2"] == 1
        # in the block, the newest child continues the line; the older one nests further
        assert lanes["u3b"] == lanes["a3b"] == 1 and lanes["u3"] == lanes["a3"] == 2
        assert [bmap.on_path(r) for r in range(len(bmap))] == [r.lane == 0 for r in bmap.rows]
        check_no_crossing(bmap)
        assert bmap.rows[-1].entry_id == ids["a2b"] and bmap.leaf_row == len(bmap) - 1
        # colours: lane 0 is 0, a block keeps one colour keyed by its head
        assert {bmap.rows[i].color for i in (2, 3)} == {bmap.rows[2].color} != {0}
        before = [(r.entry_id, r.lane, r.color) for r in bmap.rows]
        spans = [bmap.through(k) for k in range(len(bmap))]
        # Switching: nothing moves, the current path is another one
        await s.move_to(ids["a3"])
        update = bmap.sync(s.shape())
        assert update.path and not update.reset and update.first_new < 0
        assert [(r.entry_id, r.lane, r.color) for r in bmap.rows] == before
        assert [bmap.through(k) for k in range(len(bmap))] == spans
        assert bmap.leaf_row == names(bmap, ids).index("a3")
        on_path = [n for r, n in enumerate(names(bmap, ids)) if bmap.on_path(r)]
        assert on_path == ["u1", "a1", "u2", "a2", "u3", "a3"]
        assert [t.current for t in bmap.tips()].count(True) == 1
        assert next(t for t in bmap.tips() if t.current).leaf_id == ids["a3"]
        # the fork's line passes the block that hangs on it
        assert (0, 0) in bmap.through(2) and bmap.rows[2].from_lane == 0
        # a prompt sent on that older branch: its rows go into the block, by a relayout
        await s.append_message(user("on the old branch"))
        assert bmap.sync(s.shape()).reset
        assert names(bmap, ids)[6] == "?" and bmap.rows[6].lane == 2
        assert bmap.leaf_row == 6
        check_no_crossing(bmap)

    run(go())


def test_compactions_summaries_labels_and_the_default_filter() -> None:
    async def go() -> None:
        s = await _session()
        ids: dict[str, str] = {}
        ids["u1"] = await s.append_message(user("read the file"))
        ids["a1"] = await s.append_message(answer("", "read"))
        ids["t1"] = await s.append_message(
            ToolResultMessage(tool_call_id="c0", tool_name="read", content=[], timestamp=3)
        )
        ids["a1b"] = await s.append_message(answer("done reading"))
        ids["model"] = await s.append_model_change("local", "other")
        ids["think"] = await s.append_thinking_level_change("high")
        ids["u2"] = await s.append_message(user("go on"))
        ids["comp"] = await s.append_compaction("the story so far", ids["u2"], 9000)
        await s.append_label(ids["u2"], "milestone")
        ids["a2"] = await s.append_message(answer("after compaction"))
        bmap = BranchMap()
        bmap.sync(s.shape())
        assert names(bmap, ids) == ["u1", "a1", "a1b", "u2", "comp", "a2"]
        kinds = [r.kind for r in bmap.rows]
        assert kinds == ["user", "assistant", "assistant", "user", "compaction", "assistant"]
        assert bmap.label(3) == "milestone"
        # hidden entries keep connectivity: u2 hangs on a1b (through model/thinking)
        assert bmap.rows[3].parent == 2 and bmap.rows[3].up
        assert bmap.row_of(ids["t1"]) == 1 and bmap.row_of(ids["think"]) == 2
        bmap.set_filter("all")
        bmap.sync(s.shape())
        assert names(bmap, ids) == [
            "u1", "a1", "t1", "a1b", "model", "think", "u2", "comp", "a2",
        ]  # fmt: skip
        assert {bmap.rows[4].kind, bmap.rows[5].kind} == {"setting"}
        bmap.set_filter("user")
        bmap.sync(s.shape())
        assert names(bmap, ids) == ["u1", "u2"] and bmap.rows[1].parent == 0
        bmap.set_filter("labeled")
        bmap.sync(s.shape())
        assert names(bmap, ids) == ["u2"]
        with pytest.raises(ValueError):
            bmap.set_filter("nonsense")  # type: ignore[arg-type]

    run(go())


def test_branch_summary_marker_and_nested_forks_never_cross() -> None:
    async def go() -> None:
        s = await _session()
        ids: dict[str, str] = {}
        ids["r"] = await s.append_message(user("root"))
        ids["ra"] = await s.append_message(answer("root answer"))
        for k in range(4):  # four retries of one prompt under ra, each with a sub-fork
            await s.move_to(ids["ra"])
            ids[f"u{k}"] = await s.append_message(user(f"try {k}"))
            ids[f"x{k}"] = await s.append_message(answer(f"answer {k}"))
            ids[f"y{k}"] = await s.append_message(user(f"deeper {k}"))
            await s.move_to(ids[f"x{k}"])
            ids[f"z{k}"] = await s.append_message(user(f"sideways {k}"))
        from desktop_agent.session import BranchSummary

        await s.move_to(ids["y1"], summary=BranchSummary("left branch 3"))
        bmap = BranchMap()
        bmap.sync(s.shape())
        check_no_crossing(bmap)
        kinds = [r.kind for r in bmap.rows]
        assert "summary" in kinds and bmap.rows[bmap.leaf_row].kind == "summary"
        assert max(r.lane for r in bmap.rows) == 2
        # the newest try goes on in lane 0 (the layout is the tree's, not the path's)
        assert bmap.rows[bmap.row_of(ids["u3"])].lane == 0
        assert bmap.on_path(bmap.leaf_row) and bmap.on_path(bmap.row_of(ids["u1"]))
        # keyboard helpers
        ra = bmap.row_of(ids["ra"])
        kids = bmap.children(ra)
        assert len(kids) == 4 and bmap.siblings(kids[0]) == kids
        assert bmap.continuation(ra) == bmap.row_of(ids["u3"])  # the newest try
        tips = bmap.tips()
        assert len(tips) == 8 and tips[0].current
        assert [t.timestamp for t in tips[1:]] == sorted(
            (t.timestamp for t in tips[1:]), reverse=True
        )

    run(go())


def test_appending_on_the_leaf_adds_rows_without_a_relayout() -> None:
    async def go() -> None:
        s, ids = await _forked()
        bmap = BranchMap()
        bmap.sync(s.shape())
        before = [(r.entry_id, r.lane, bmap.through(k)) for k, r in enumerate(bmap.rows)]
        n = len(bmap)
        u = await s.append_message(user("more"))
        update = bmap.sync(s.shape())
        assert not update.reset and update.first_new == n and update.changed == (n - 1,)
        assert bmap.rows[-1].entry_id == u and bmap.rows[-1].up and bmap.rows[n - 1].down
        await s.append_message(
            ToolResultMessage(tool_call_id="x", tool_name="bash", content=[], timestamp=3)
        )
        update = bmap.sync(s.shape())
        assert update.empty
        await s.append_label(ids["u1"], "start")
        assert bmap.sync(s.shape()).labels and bmap.label(0) == "start"
        assert [(r.entry_id, r.lane, bmap.through(k)) for k, r in enumerate(bmap.rows)][
            :n
        ] == before
        fresh = BranchMap()
        fresh.sync(s.shape())

        def drawn(m: BranchMap) -> list[object]:
            return [
                (r.entry_id, r.lane, r.up, r.down, r.tip, m.through(k))
                for k, r in enumerate(m.rows)
            ]

        assert drawn(fresh) == drawn(bmap)
        # a leaf move only repaints (m12)
        await s.move_to(ids["a3"])
        update = bmap.sync(s.shape())
        assert update.path and not update.reset and drawn(fresh) == drawn(bmap)
        assert bmap.sync(None).reset and len(bmap) == 0

    run(go())


def test_search_hits_mark_rows_and_hidden_hits_mark_their_row() -> None:
    async def go() -> None:
        s, ids = await _forked()
        bmap = BranchMap()
        bmap.sync(s.shape())
        changed = bmap.set_hits([ids["u3"], ids["a2b"]])
        assert bmap.hits == {bmap.row_of(ids["u3"]), bmap.row_of(ids["a2b"])}
        assert set(changed) == bmap.hits
        await s.move_to(ids["a3"])
        bmap.sync(s.shape())  # hits follow the rows after a relayout
        assert bmap.hits == {bmap.row_of(ids["u3"]), bmap.row_of(ids["a2b"])}
        assert bmap.set_hits([]) and not bmap.hits

    run(go())


def test_query_words() -> None:
    words = query_words("Café  TESTS")
    assert words == ["cafe", "tests"]
    assert text_matches(words, "the tests at the CAFÉ")
    assert not text_matches(words, "the tests") and not text_matches([], "x")


def test_update_lays_out_in_slices_like_sync() -> None:
    async def go() -> None:
        s, ids = await _forked()
        threaded, direct = BranchMap(), BranchMap()
        assert (await threaded.update(s.shape())).reset
        direct.sync(s.shape())
        await s.move_to(ids["a3b"])
        await s.append_message(user("on an older branch"))  # a row in a block: relayout
        assert (await threaded.update(s.shape())).reset
        direct.sync(s.shape())

        def drawn(m: BranchMap) -> list[object]:
            return [
                (r.entry_id, r.lane, r.up, r.from_lane, m.through(k)) for k, r in enumerate(m.rows)
            ]

        assert drawn(threaded) == drawn(direct)
        await s.move_to(ids["a2b"])  # the end of the last row's line
        u = await s.append_message(user("appended"))
        update = await threaded.update(s.shape())
        assert not update.reset and threaded.rows[-1].entry_id == u
        assert (await threaded.update(None)).reset and len(threaded) == 0

    run(go())


def test_a_big_relayout_gives_the_loop_turns_and_stays_on_its_thread() -> None:
    """A prompt on an older branch of a big session lays the map out again: on the event
    loop's thread (no worker holding the GIL against the GUI), in slices with turns
    of the loop between them, and the same rows as `sync`."""
    import threading

    from desktop_agent.workbench import _map_layout, _slices

    async def go() -> None:
        s = await _session()
        answers: list[str] = []
        for i in range(1_500):
            if i % 50 == 49:
                await s.move_to(answers[-10])
            await s.append_message(user(f"q{i}"))
            answers.append(await s.append_message(answer(f"a{i}")))
        bmap, direct = BranchMap(), BranchMap()
        bmap.sync(s.shape())
        await s.move_to(answers[len(answers) // 2])
        await s.append_message(user("on an older branch"))
        direct.sync(s.shape())
        threads: set[int] = set()
        real = _map_layout._emit_steps

        def watched(*args: Any) -> Any:
            threads.add(threading.get_ident())
            return (yield from real(*args))

        turns = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal turns
            while not stop.is_set():
                turns += 1
                await asyncio.sleep(0)

        _map_layout._emit_steps = watched  # type: ignore[assignment]
        old_slice, _slices.SLICE_S = _slices.SLICE_S, 0.0  # a turn after every step
        task = asyncio.ensure_future(ticker())
        try:
            assert (await bmap.update(s.shape())).reset
        finally:
            stop.set()
            await task
            _map_layout._emit_steps = real
            _slices.SLICE_S = old_slice
        assert threads == {threading.get_ident()}
        assert turns >= len(bmap) // _map_layout.STEP  # the loop ran between the steps
        assert [(r.entry_id, r.lane, r.color) for r in bmap.rows] == [
            (r.entry_id, r.lane, r.color) for r in direct.rows
        ]
        assert [bmap.through(k) for k in range(len(bmap))] == [
            direct.through(k) for k in range(len(direct))
        ]
        assert bmap.tips() == direct.tips() and len(bmap.tips()) > 20  # made in the steps

    run(go())


def test_search_entries_reads_every_branch_tool_output_and_ignores_accents() -> None:

    async def go() -> None:
        s, ids = await _forked()
        cafe = await s.append_message(user("Meet at the Café Zürich"))
        call = await s.append_message(answer("", "bash"))
        out = await s.append_message(
            ToolResultMessage(
                tool_call_id="c0",
                tool_name="bash",
                timestamp=3,
                content=[TextContent(text="walrus detected")],
            )
        )
        assert await search_entries(s, "cafe zurich") == [cafe]
        assert await search_entries(s, "CAFÉ") == [cafe]
        assert await search_entries(s, "walrus") == [out]
        assert await search_entries(s, "three") == [ids["a3"], ids["a3b"]]  # both branches
        assert await search_entries(s, "   ") == [] and await search_entries(s, "nothing") == []
        assert tooltip_text(s, cafe) == "Meet at the Café Zürich"
        assert tooltip_text(s, call) == "→ bash"  # the tool call (its arguments when any)
        assert tooltip_text(s, "no-such-entry") == ""
        long = await s.append_message(user("word " * 1000))
        text = tooltip_text(s, long, limit=50)
        assert len(text) == 50 and text.endswith("…")

    run(go())


def test_the_chats_versions_are_the_maps_siblings_across_labels_and_settings() -> None:
    """A label, a leaf move or a settings entry between two messages hides in the map (a
    child hangs on its nearest shown ancestor); the chat's ``‹ n/m ›`` counts the same."""

    async def go() -> None:
        from desktop_agent.workbench import BranchReader, visible_siblings

        s = await _session()
        ids: dict[str, str] = {}
        ids["u1"] = await s.append_message(user("first"))
        ids["a1"] = await s.append_message(answer("one"))
        ids["u2"] = await s.append_message(user("second"))
        await s.move_to(ids["a1"])
        await s.append_label(ids["a1"], "before the fork")  # a label entry under a1
        ids["u2b"] = await s.append_message(user("second, again"))
        await s.move_to(ids["a1"])
        await s.append_thinking_level_change("high")  # a settings entry under a1
        ids["u2c"] = await s.append_message(user("second, third time"))
        ids["a2c"] = await s.append_message(answer("two c"))
        bmap = BranchMap()
        bmap.sync(s.shape())
        on_map = [bmap.rows[r].entry_id for r in bmap.siblings(bmap.row_of(ids["u2c"]))]
        assert sorted(on_map) == sorted([ids["u2"], ids["u2b"], ids["u2c"]])
        assert visible_siblings(s, ids["u2c"]) == [ids["u2"], ids["u2b"], ids["u2c"]]
        assert visible_siblings(s, ids["u2"]) == visible_siblings(s, ids["u2c"])
        assert visible_siblings(s, ids["a2c"]) == [ids["a2c"]]
        assert visible_siblings(s, ids["u1"]) == [ids["u1"]]
        items = await BranchReader(s).older()
        shown = [(i.entry_id, i.sibling_index, i.sibling_count) for i in items]
        assert shown == [(ids["u1"], 0, 1), (ids["a1"], 0, 1), (ids["u2c"], 2, 3),
                         (ids["a2c"], 0, 1)]  # fmt: skip

    run(go())


def _state(m: BranchMap) -> list[object]:
    """Everything a layout holds (rows, lines, tips and what appends build on)."""
    rows = [(r.entry, r.entry_id, r.kind, r.lane, r.color, r.parent, r.up, r.from_lane,
             r.down, r.tip) for r in m.rows]  # fmt: skip
    return [rows, m._spans, m.tips(), m._vis, m._vparent, m._kids(), m._row_of, m._path, m._n]


def test_a_saved_layout_is_taken_only_for_the_entries_it_was_made_for() -> None:
    """A launch takes the layout kept at the last close instead of laying the map out
    again (0.2-0.4 s for 100,000 entries): the same state as a layout; entries
    appended since are added as by `update`; another tree, filter or path, or damaged
    bytes, are refused (and the map lays out as usual)."""

    async def go() -> None:
        s, ids = await _forked()
        await s.append_label(ids["u3"], "keep")
        for name in ("conversation", "labeled", "all"):
            made = BranchMap(filter=name)
            await made.update(s.shape())
            saved = made.saved()
            assert saved is not None
            taken = BranchMap(filter=name)
            assert await taken.restore_saved(s.shape(), saved)
            assert _state(taken) == _state(made), name
            assert not await BranchMap(filter="user").restore_saved(s.shape(), saved)
            assert not await BranchMap(filter=name).restore_saved(s.shape(), saved[:-9])
            assert not await BranchMap(filter=name).restore_saved(s.shape(), b"\x00junk")
            flipped = bytearray(saved)
            flipped[len(saved) // 2] ^= 0x10
            assert not await BranchMap(filter=name).restore_saved(s.shape(), bytes(flipped))
        made = BranchMap()
        await made.update(s.shape())
        saved = made.saved()
        assert saved is not None
        n_saved = len(s.shape().ids)
        # Entries appended since: taken, then laid out as `update` does.
        await s.append_message(user("appended"))
        taken, fresh = BranchMap(), BranchMap()
        assert await taken.restore_saved(s.shape(), saved)
        await taken.update(s.shape())
        await fresh.update(s.shape())
        assert _state(taken) == _state(fresh)
        # The leaf moved elsewhere: the path it was made for is gone.
        await s.move_to(ids["a3b"])
        assert not await BranchMap().restore_saved(s.shape(), saved)
        # Another tree as long, on the same path: refused by the checksum.
        other, _ = await _forked()
        while len(other.shape().ids) < n_saved:
            await other.append_message(user("more"))
        assert not await BranchMap().restore_saved(other.shape(), saved)

    run(go())


def test_a_sync_that_changes_nothing_keeps_the_tips(monkeypatch: pytest.MonkeyPatch) -> None:
    """The launch syncs the map once more after taking its saved layout: with nothing
    new, the Branches list found (or taken from the saved layout) is not made again
    (40 ms for 100,000 entries); a new entry or another leaf makes it again."""
    import desktop_agent.workbench._map_layout as layout_module

    made: list[int] = []
    real = layout_module.tips_steps

    def counted(*args: Any) -> Any:
        made.append(1)
        return real(*args)

    monkeypatch.setattr(layout_module, "tips_steps", counted)

    async def go() -> None:
        s, ids = await _forked()
        bmap = BranchMap()
        await bmap.update(s.shape())
        tips = bmap.tips()
        assert len(made) == 1
        assert (await bmap.update(s.shape())).empty and bmap.sync(s.shape()).empty
        assert bmap.tips() == tips and len(made) == 1
        saved = bmap.saved()
        assert saved is not None
        taken = BranchMap()
        assert await taken.restore_saved(s.shape(), saved)
        assert (await taken.update(s.shape())).empty
        assert taken.tips() == tips and len(made) == 1
        await s.append_message(user("one more"))
        assert not (await taken.update(s.shape())).empty
        assert taken.tips() != tips and len(made) == 2
        await s.move_to(ids["a3b"])
        taken.sync(s.shape())
        assert [t.leaf_id for t in taken.tips() if t.current] == [ids["a3b"]]
        assert len(made) == 3

    run(go())


@pytest.mark.parametrize("name", MAP_FILTERS)
def test_every_sync_draws_what_a_fresh_layout_draws(name: MapFilter) -> None:
    """Random sessions (prompts, answers with tool calls, tool results, labels, the leaf
    moved to any entry, often a fork): after each change, the map brought up to date by
    `sync` holds what a map laid out from scratch holds. Appends below the last row add
    rows (no reset); a moved leaf never lays out again (the layout is the tree's, m12)."""
    import random

    async def go() -> None:
        rng = random.Random(f"map-{name}")
        s = await _session()
        bmap = BranchMap(filter=name)
        entries: list[str] = []
        moved = appended_at_end = 0
        for step in range(260):
            roll = rng.random()
            at_end = len(bmap) > 0 and bmap.leaf_row == len(bmap) - 1
            if roll < 0.12 and entries:
                await s.move_to(rng.choice(entries))
                moved += 1
            elif roll < 0.17 and entries:
                await s.append_label(rng.choice(entries), rng.choice(["x", "keep", ""]))
            else:
                if roll < 0.55:
                    message: Any = user(f"prompt {step}")
                elif roll < 0.85:
                    message = answer(f"answer {step}", *(["bash"] if rng.random() < 0.3 else []))
                else:
                    message = ToolResultMessage(
                        tool_call_id="c0", tool_name="bash", content=[], timestamp=3
                    )
                entries.append(await s.append_message(message))
            update = bmap.sync(s.shape())
            if roll < 0.12:
                assert not update.reset, f"step {step}: a moved leaf laid the map out"
            elif roll >= 0.17 and at_end and name != "labeled":
                assert not update.reset, f"step {step}: an append at the end laid it out"
                appended_at_end += 1
            fresh = BranchMap(filter=name)
            fresh.sync(s.shape())
            assert _state(bmap) == _state(fresh), f"step {step}"
        assert moved > 20
        if name != "labeled":  # (there a prompt is a row only once labelled)
            assert appended_at_end > 40, appended_at_end

    run(go())


def test_l6_retries_of_a_failed_reply_are_one_row_and_tool_turns_are_not() -> None:
    """A reply whose parent is a reply is a retry (only a failed request is retried so):
    the run is the first attempt's row, in every filter that shows replies; a reply after
    its tools' results is its own row."""

    async def go() -> None:
        s = await _session()
        ids: dict[str, str] = {}
        ids["u1"] = await s.append_message(user("first"))
        ids["t1"] = await s.append_message(answer("calling", "bash"))
        await s.append_message(
            ToolResultMessage(tool_call_id="c0", tool_name="bash", content=[], timestamp=3)
        )
        ids["t2"] = await s.append_message(answer("done"))
        ids["u2"] = await s.append_message(user("second"))
        ids["f1"] = await s.append_message(answer("partial"))
        ids["f2"] = await s.append_message(answer(""))
        ids["f3"] = await s.append_message(answer("recovered"))
        for name in ("conversation", "all"):
            bmap = BranchMap(filter=name)
            bmap.sync(s.shape())
            shown = [n for n in names(bmap, ids) if n != "?"]
            assert shown == ["u1", "t1", "t2", "u2", "f1"], (name, shown)
            run_row = bmap.row_of(ids["f1"])
            assert bmap.attempts(run_row) == [ids["f1"], ids["f2"], ids["f3"]]
            assert bmap.row_of(ids["f3"]) == run_row
            assert bmap.attempts(bmap.row_of(ids["t2"])) == []
            assert [t.entry_id for t in bmap.tips()] == [ids["f1"]]
        # appended one by one, the run grows on its row (no new row)
        bmap = BranchMap()
        bmap.sync(s.shape())
        run_row = bmap.row_of(ids["f1"])
        assert len(bmap.attempts(run_row)) == 3
        ids["f4"] = await s.append_message(answer("again"))
        update = bmap.sync(s.shape())
        assert update.first_new < 0 and not update.reset
        assert update.changed == (run_row,)  # its row says one more attempt
        assert bmap.attempts(run_row)[-1] == ids["f4"]

    run(go())
