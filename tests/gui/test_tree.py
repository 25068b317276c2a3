"""Branch tree: rows from a real session, the tree model, and the `BranchTree` widget."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QWidget
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from desktop_agent.ai import AssistantMessage, ContentBlock, TextContent, ToolCall, UserMessage
from desktop_agent.gui.tree import BranchTree, SessionTreeModel, TreeRole
from desktop_agent.session import (
    BranchSummary,
    InMemorySessionRepo,
    TreeRow,
    preview,
    rows_for_entries,
    rows_from_session,
)

SCREENSHOTS = Path(__file__).parent / "screenshots"

pytestmark = [
    pytest.mark.usefixtures("qapp"),
    # offscreen platform, harmless (PLATFORM.md §3 pitfall 10)
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def assistant(text: str, *tools: str) -> AssistantMessage:
    content: list[ContentBlock] = [TextContent(text=text)] if text else []
    content += [ToolCall(id=f"c{i}", name=name) for i, name in enumerate(tools)]
    return AssistantMessage(
        content=content,
        api="openai-completions",
        provider="local",
        model="m",
        stop_reason="stop",
        timestamp=2,
    )


@dataclass
class Sample:
    """A session with two branch points, a label, a compaction and a branch summary.

    u1 → a1 ┬ u2 ┬ a2 ─(label u2)─ u2b
            │    └ bs (summary of the B branch) → u4   ← leaf
            └ u3 → comp → a3
    """

    rows: list[TreeRow]
    path: list[str]
    ids: dict[str, str]


async def _build_sample() -> Sample:
    repo = InMemorySessionRepo()
    s = await repo.create(cwd="/work/project")
    ids: dict[str, str] = {}
    ids["u1"] = await s.append_message(user("fix the tests\nplease, they fail on CI"))
    ids["a1"] = await s.append_message(assistant("Which approach do you want?", "read"))
    ids["u2"] = await s.append_message(user("try approach A"))
    ids["a2"] = await s.append_message(assistant("Approach A is done."))
    ids["label"] = await s.append_label(ids["u2"], "approach-a")
    ids["u2b"] = await s.append_message(user("and then?"))  # parent: the label entry
    await s.move_to(ids["a1"])
    ids["u3"] = await s.append_message(user("try approach B"))
    ids["comp"] = await s.append_compaction("Tried B; tests pass.", ids["u3"], 12000)
    ids["a3"] = await s.append_message(assistant("Approach B is done."))
    bs = await s.move_to(ids["u2"], BranchSummary("B worked but was slow"))
    assert bs is not None
    ids["bs"] = bs
    ids["u4"] = await s.append_message(user("continue with A"))
    rows = await rows_from_session(s)
    return Sample(rows, s.branch_ids(), ids)


@pytest.fixture
def sample() -> Sample:
    return asyncio.run(_build_sample())


def children(model: SessionTreeModel, parent: QModelIndex | None = None) -> list[str]:
    parent = parent if parent is not None else QModelIndex()
    return [str(model.index(r, 0, parent).data(TreeRole.ID)) for r in range(model.rowCount(parent))]


def names(sample: Sample, ids: list[str]) -> list[str]:
    back = {v: k for k, v in sample.ids.items()}
    return [back.get(i, i) for i in ids]


# ---------------------------------------------------------------- rows_from_session


def test_rows_from_session_structure_and_order(sample: Sample) -> None:
    rows = {r.id: r for r in sample.rows}
    ids = sample.ids
    # leaf and label entries are bookkeeping, not nodes
    assert ids["label"] not in rows
    assert all(r.type not in ("leaf", "label") for r in sample.rows)
    assert len(sample.rows) == 10
    # pre-order, siblings oldest first
    assert names(sample, [r.id for r in sample.rows]) == [
        "u1", "a1", "u2", "a2", "u2b", "bs", "u4", "u3", "comp", "a3",
    ]  # fmt: skip
    parent = {
        k: names(sample, [rows[ids[k]].parent_id or "-"])[0]
        for k in rows and ids
        if k in ids and ids[k] in rows
    }
    assert parent == {
        "u1": "-", "a1": "u1", "u2": "a1", "a2": "u2", "u2b": "a2",  # through the label
        "u3": "a1", "comp": "u3", "a3": "comp", "bs": "u2", "u4": "bs",
    }  # fmt: skip
    assert rows[ids["u2"]].label == "approach-a"
    assert rows[ids["u1"]].label is None
    assert rows[ids["u1"]].text == "You: fix the tests please, they fail on CI"
    assert rows[ids["u1"]].role == "user" and rows[ids["u1"]].type == "message"
    assert rows[ids["a1"]].text == "Assistant: Which approach do you want? → read"
    assert rows[ids["comp"]].type == "compaction"
    assert rows[ids["comp"]].text == "Compaction: Tried B; tests pass."
    assert rows[ids["bs"]].type == "branch_summary"
    assert rows[ids["bs"]].text == "Branch summary: B worked but was slow"
    assert names(sample, sample.path) == ["u1", "a1", "u2", "bs", "u4"]


def test_preview_is_one_bounded_line() -> None:
    text = preview("word " * 100)
    assert len(text) == 80 and text.endswith("…") and "\n" not in text
    assert preview("a\n\n  b\tc") == "a b c"


# ---------------------------------------------------------------- model


def test_model_layout_oldest_line_flat_side_branches_nested(sample: Sample) -> None:
    model = SessionTreeModel()
    model.set_rows(sample.rows)
    # the oldest line: u1 a1 u2 a2 u2b, flat
    assert names(sample, children(model)) == ["u1", "a1", "u2", "a2", "u2b"]
    a1 = model.index_for_id(sample.ids["a1"])
    assert names(sample, children(model, a1)) == ["u3"]  # side branch B under its branch point
    u3 = model.index_for_id(sample.ids["u3"])
    assert names(sample, children(model, u3)) == ["comp", "a3"]  # the rest of branch B
    u2 = model.index_for_id(sample.ids["u2"])
    assert names(sample, children(model, u2)) == ["bs"]
    bs = model.index_for_id(sample.ids["bs"])
    assert names(sample, children(model, bs)) == ["u4"]
    for flat in ("u1", "a2", "u2b"):
        assert model.rowCount(model.index_for_id(sample.ids[flat])) == 0
    # moving the leaf does not change the layout
    model.set_current_path([sample.ids["u1"], sample.ids["a1"], sample.ids["u3"]])
    assert names(sample, children(model)) == ["u1", "a1", "u2", "a2", "u2b"]


def test_models_pass_modeltester(sample: Sample, qtmodeltester: ModelTester) -> None:
    model = SessionTreeModel()
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    model.set_rows(sample.rows)
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    model.set_current_path(sample.path)
    model.set_user_only(True)
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    model.set_user_only(False)
    model.set_rows(sample.rows[:4])
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    model.set_rows([*sample.rows, *_odd_rows()])
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]


def _odd_rows() -> list[TreeRow]:
    """An orphan, a self-parented row and a two-row parent cycle."""
    return [
        TreeRow("orphan", "missing", "message", "user", "You: orphan", "2030-01-01T00:00:00Z"),
        TreeRow("self", "self", "custom", None, "Extension data: x", "2030-01-01T00:00:01Z", None),
        TreeRow("c1", "c2", "message", "user", "You: c1", "2030-01-01T00:00:02Z", None),
        TreeRow("c2", "c1", "message", "assistant", "Assistant: c2", "2030-01-01T00:00:03Z", None),
    ]  # fmt: skip


def test_odd_rows_are_all_shown_as_roots() -> None:
    model = SessionTreeModel()
    model.set_rows(_odd_rows())
    shown = [i for i in ("orphan", "self", "c1", "c2") if model.is_shown(i)]
    assert shown == ["orphan", "self", "c1", "c2"]
    assert model.rowCount() >= 3


def test_user_only_filter_reparents_to_nearest_user_message(sample: Sample) -> None:
    model = SessionTreeModel()
    model.set_rows(sample.rows)
    model.set_user_only(True)
    # virtual tree: u1 → (u2 → (u2b via a2, u4 via bs), u3)
    assert names(sample, children(model)) == ["u1", "u2", "u2b"]
    u1 = model.index_for_id(sample.ids["u1"])
    assert names(sample, children(model, u1)) == ["u3"]
    u2 = model.index_for_id(sample.ids["u2"])
    assert names(sample, children(model, u2)) == ["u4"]
    assert not model.is_shown(sample.ids["a1"])
    # the deepest shown node of the current path stands in for the hidden leaf parts
    nearest = model.nearest_shown([sample.ids["u1"], sample.ids["a1"]])
    assert nearest.data(TreeRole.ID) == sample.ids["u1"]
    model.set_user_only(False)
    assert model.is_shown(sample.ids["a1"])


def test_current_path_role_font_and_changed_signal(sample: Sample, qtbot: QtBot) -> None:
    model = SessionTreeModel()
    model.set_rows(sample.rows)
    with qtbot.waitSignal(model.dataChanged):
        model.set_current_path(sample.path)
    on_path = {r.id for r in sample.rows if model.index_for_id(r.id).data(TreeRole.ON_CURRENT_PATH)}
    assert on_path == set(sample.path)
    leaf = model.index_for_id(sample.ids["u4"])
    assert leaf.data(TreeRole.IS_CURRENT_LEAF) is True
    assert model.index_for_id(sample.ids["u1"]).data(TreeRole.IS_CURRENT_LEAF) is False
    font = leaf.data(Qt.ItemDataRole.FontRole)
    assert isinstance(font, QFont) and font.bold()
    assert model.index_for_id(sample.ids["a2"]).data(Qt.ItemDataRole.FontRole) is None
    assert leaf.data(Qt.ItemDataRole.ForegroundRole) is not None
    # compactions and branch summaries: italic and marked
    comp = model.index_for_id(sample.ids["comp"])
    comp_font = comp.data(Qt.ItemDataRole.FontRole)
    assert isinstance(comp_font, QFont) and comp_font.italic() and not comp_font.bold()
    assert comp.data(TreeRole.IS_SUMMARY) is True
    assert model.index_for_id(sample.ids["u2"]).data(TreeRole.LABEL) == "approach-a"
    assert "Label: approach-a" in model.index_for_id(sample.ids["u2"]).data(
        Qt.ItemDataRole.ToolTipRole
    )
    # moving the leaf back updates only what changed
    seen: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda a, b, *_: seen.append((a.row(), b.row())))
    model.set_current_path(sample.path[:2])
    assert seen and model.index_for_id(sample.ids["u4"]).data(TreeRole.ON_CURRENT_PATH) is False


# ---------------------------------------------------------------- widget


def make_tree(qtbot: QtBot, sample: Sample) -> BranchTree:
    tree = BranchTree()
    qtbot.addWidget(tree)
    tree.resize(460, 380)
    tree.set_rows(sample.rows, sample.path)
    tree.show()
    qtbot.waitExposed(tree)
    return tree


def click(qtbot: QtBot, tree: BranchTree, entry_id: str) -> None:
    index = tree.model().index_for_id(entry_id)
    rect = tree.view.visualRect(index)
    assert rect.isValid()
    viewport = tree.view.viewport()
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=rect.center())  # type: ignore[no-untyped-call]


def test_object_names_and_click_emits_node_activated(sample: Sample, qtbot: QtBot) -> None:
    tree = make_tree(qtbot, sample)
    assert tree.objectName() == "branchTree"
    assert tree.findChild(QWidget, "branchTreeView") is tree.view
    assert tree.user_only_box.text() == "User messages only"
    with qtbot.waitSignal(tree.node_activated) as blocker:
        click(qtbot, tree, sample.ids["a3"])
    assert blocker.args == [sample.ids["a3"]]
    # the current leaf is already the position: no move
    with qtbot.assertNotEmitted(tree.node_activated):
        click(qtbot, tree, sample.ids["u4"])
    # Enter on a node activates it too
    tree.view.setCurrentIndex(tree.model().index_for_id(sample.ids["u3"]))
    with qtbot.waitSignal(tree.node_activated) as blocker:
        qtbot.keyClick(tree.view, Qt.Key.Key_Return)  # type: ignore[no-untyped-call]
    assert blocker.args == [sample.ids["u3"]]


def test_set_current_path_selects_and_reveals_leaf(sample: Sample, qtbot: QtBot) -> None:
    tree = make_tree(qtbot, sample)
    assert tree.view.currentIndex().data(TreeRole.ID) == sample.ids["u4"]
    tree.collapse_all()
    a3 = sample.ids["a3"]
    tree.set_current_path(
        [sample.ids["u1"], sample.ids["a1"], sample.ids["u3"], sample.ids["comp"], a3]
    )
    assert tree.view.currentIndex().data(TreeRole.ID) == a3
    index = tree.model().index_for_id(a3)
    assert tree.view.isExpanded(index.parent())
    assert tree.view.visualRect(index).intersects(tree.view.viewport().rect())
    assert index.data(TreeRole.ON_CURRENT_PATH) is True


def test_label_context_actions(
    sample: Sample, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = make_tree(qtbot, sample)
    asked: list[str | None] = []

    def fake_ask(parent: QWidget, current: str | None) -> str | None:
        asked.append(current)
        return "important"

    monkeypatch.setattr(BranchTree, "ask_label", staticmethod(fake_ask))
    menu = tree.context_menu_for(sample.ids["a2"])
    assert menu is not None
    actions = {a.objectName(): a for a in menu.actions() if a.objectName()}
    assert set(actions) == {"goHere", "goHereAndSummarize", "setLabel"}
    with qtbot.waitSignal(tree.label_requested) as blocker:
        actions["setLabel"].trigger()
    assert blocker.args == [sample.ids["a2"], "important"]
    assert asked == [None]
    # a labelled node: edit (current label offered) and remove
    menu = tree.context_menu_for(sample.ids["u2"])
    assert menu is not None
    actions = {a.objectName(): a for a in menu.actions() if a.objectName()}
    assert actions["setLabel"].text() == "Edit label…"
    with qtbot.waitSignal(tree.label_requested) as blocker:
        actions["setLabel"].trigger()
    assert blocker.args == [sample.ids["u2"], "important"] and asked[-1] == "approach-a"
    with qtbot.waitSignal(tree.label_requested) as blocker:
        actions["removeLabel"].trigger()
    assert blocker.args == [sample.ids["u2"], ""]
    # cancelled dialog: nothing
    monkeypatch.setattr(BranchTree, "ask_label", staticmethod(lambda parent, current: None))
    with qtbot.assertNotEmitted(tree.label_requested):
        actions["setLabel"].trigger()


def test_go_here_and_summarize_actions(sample: Sample, qtbot: QtBot) -> None:
    tree = make_tree(qtbot, sample)
    menu = tree.context_menu_for(sample.ids["a3"])
    assert menu is not None
    actions = {a.objectName(): a for a in menu.actions() if a.objectName()}
    with qtbot.waitSignal(tree.summarize_requested) as blocker:
        actions["goHereAndSummarize"].trigger()
    assert blocker.args == [sample.ids["a3"]]
    with qtbot.waitSignal(tree.node_activated) as blocker:
        actions["goHere"].trigger()
    assert blocker.args == [sample.ids["a3"]]
    leaf_menu = tree.context_menu_for(sample.ids["u4"])
    assert leaf_menu is not None
    assert not any(a.isEnabled() for a in leaf_menu.actions() if a.objectName().startswith("go"))


def test_filter_checkbox_and_folds_survive_updates(
    sample: Sample, qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    tree = make_tree(qtbot, sample)
    model = tree.model()
    u3 = model.index_for_id(sample.ids["u3"])
    assert tree.view.isExpanded(u3)
    tree.view.collapse(u3)
    extra = TreeRow(
        "new", sample.ids["u4"], "message", "assistant", "Assistant: ok", "2099-01-01T00:00:00Z"
    )
    tree.set_rows([*sample.rows, extra], [*sample.path, "new"])
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    assert not tree.view.isExpanded(model.index_for_id(sample.ids["u3"]))
    assert tree.view.isExpanded(model.index_for_id(sample.ids["a1"]))
    assert tree.view.currentIndex().data(TreeRole.ID) == "new"
    tree.user_only_box.click()
    assert model.user_only()
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    assert not model.is_shown("new") and model.is_shown(sample.ids["u4"])
    assert tree.view.currentIndex().data(TreeRole.ID) == sample.ids["u4"]
    SCREENSHOTS.mkdir(exist_ok=True)
    assert tree.grab().save(str(SCREENSHOTS / "tree_user_only.png"))
    tree.user_only_box.click()
    assert not tree.view.isExpanded(model.index_for_id(sample.ids["u3"]))
    tree.expand_all()
    assert tree.view.isExpanded(model.index_for_id(sample.ids["u3"]))


def test_screenshot(sample: Sample, qtbot: QtBot) -> None:
    tree = make_tree(qtbot, sample)
    SCREENSHOTS.mkdir(exist_ok=True)
    qtbot.wait(50)
    assert tree.grab().save(str(SCREENSHOTS / "tree.png"))


# ---------------------------------------------------------------- scale


def big_rows(n: int) -> list[TreeRow]:
    """A long conversation with a side branch every 100 entries."""
    rows: list[TreeRow] = []
    parent: str | None = None
    for i in range(n):
        ts = f"2026-01-01T00:{i // 6000:02d}:{(i // 100) % 60:02d}.{i % 100:03d}Z"
        entry_id = f"e{i}"
        if i % 100 == 50 and parent is not None:
            # a sibling of the previous entry: a branch point
            rows.append(
                TreeRow(
                    entry_id, rows[-1].parent_id, "message", "user", f"You: retry {i}", ts, None
                )
            )
            continue
        role = "user" if i % 2 == 0 else "assistant"
        text = f"You: question {i}" if role == "user" else f"Assistant: answer {i}"
        label = "tag" if i % 500 == 0 else None
        rows.append(TreeRow(entry_id, parent, "message", role, text, ts, label))
        parent = entry_id
    return rows


def test_ten_thousand_entries(qtbot: QtBot) -> None:
    rows = big_rows(10_000)
    path = []
    by_id = {r.id: r for r in rows}
    node: str | None = rows[-1].id
    while node is not None:
        path.append(node)
        node = by_id[node].parent_id
    path.reverse()
    tree = BranchTree()
    qtbot.addWidget(tree)
    tree.resize(460, 600)
    tree.show()
    qtbot.waitExposed(tree)
    start = time.perf_counter()
    tree.set_rows(rows, path)
    first = time.perf_counter() - start
    start = time.perf_counter()
    tree.set_rows(rows, path)
    tree.set_current_path(path[:5000])
    again = time.perf_counter() - start
    start = time.perf_counter()
    tree.user_only_box.click()
    tree.user_only_box.click()
    toggles = time.perf_counter() - start
    start = time.perf_counter()
    tree.grab()
    paint = time.perf_counter() - start
    print(f"10k entries: set_rows {first:.3f}s, again+path {again:.3f}s, "
          f"filter on+off {toggles:.3f}s, paint {paint:.3f}s")  # fmt: skip
    assert tree.view.currentIndex().data(TreeRole.ID) == path[4999]
    assert first < 1.0 and again < 1.0 and toggles < 1.0


def _structure(model: SessionTreeModel) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    stack = [QModelIndex()]
    while stack:
        parent = stack.pop()
        key = str(parent.data(TreeRole.ID)) if parent.isValid() else "<root>"
        kids = [model.index(r, 0, parent) for r in range(model.rowCount(parent))]
        out.append((key, [str(k.data(TreeRole.ID)) for k in kids]))
        stack.extend(kids)
    return sorted(out)


def test_appended_rows_land_where_a_full_rebuild_puts_them(
    qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    """Entries appended as a session grows (continuing a line, branching at an older
    entry, labels and leaves in between) give the same tree as building it anew, with
    inserts instead of resets."""

    async def grow() -> tuple[list[list[TreeRow]], list[TreeRow]]:
        repo = InMemorySessionRepo()
        s = await repo.create(cwd="/w")
        steps: list[list[TreeRow]] = []

        async def step(*ids: str) -> None:
            steps.append(await rows_for_entries(s, list(ids)))

        a = await s.append_message(user("one"))
        b = await s.append_message(assistant("two"))
        await step(a, b)
        c = await s.append_message(user("three"))
        await step(c)
        await s.move_to(a)
        leaf = s.leaf_id() or ""
        d = await s.append_message(assistant("another two"))
        await step(leaf, d)
        label = await s.append_label(d, "alt")
        e = await s.append_message(user("after the label"))
        await step(label, e)
        await s.move_to(b)
        f = await s.append_message(user("third version"))
        await step(s.leaf_id() or "", f)
        return steps, await rows_from_session(s)

    steps, full = asyncio.run(grow())
    model = SessionTreeModel()
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    for rows in steps:
        assert model.append_rows(rows)
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    rebuilt = SessionTreeModel()
    rebuilt.set_rows(full)
    assert resets == []
    assert _structure(model) == _structure(rebuilt)
