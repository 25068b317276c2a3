"""Session sidebar: grouping, order, relative times, search, actions, trash, and scale."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLineEdit, QMenu, QPushButton, QTreeView
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from desktop_agent.gui.sidebar import (
    SessionListModel,
    SessionSidebar,
    SidebarRole,
    relative_time,
)
from desktop_agent.workbench import SidebarRow

SCREENSHOTS = Path(__file__).parent / "screenshots"
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)

pytestmark = [
    pytest.mark.usefixtures("qapp"),
    # offscreen platform, harmless (PLATFORM.md §3 pitfall 10)
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).isoformat().replace("+00:00", "Z")


def row(name: str, cwd: str, when: str, **extra: object) -> SidebarRow:
    return SidebarRow(
        path=f"/data/sessions/{name}.jsonl",
        id=name,
        cwd=cwd,
        title=extra.pop("title", name.replace("-", " ")),  # type: ignore[arg-type]
        last_activity=when,
        **extra,  # type: ignore[arg-type]
    )


ROWS = [
    row("fix-flaky-tests", "/home/ann/projects/api", ago(minutes=5)),
    row("add-login-page", "/home/ann/projects/web", ago(hours=3)),
    row("refactor-db-layer", "/home/ann/projects/api", ago(days=1, hours=1)),
    row("write-release-notes", "/home/ann/projects/api", ago(days=3)),
    row("old-experiment", "/home/ann/projects/api", "2025-12-01T09:00:00Z"),
    row("broken", "/home/ann/projects/web", ago(days=2), problem="line 3 is not JSON"),
    row("other-api", "/srv/clients/api", ago(days=20), title="Client API question"),
]


def path_of(name: str) -> str:
    return f"/data/sessions/{name}.jsonl"


def titles(model: SessionListModel, parent: QModelIndex) -> list[str]:
    return [str(model.index(r, 0, parent).data()) for r in range(model.rowCount(parent))]


def groups(model: SessionListModel) -> list[str]:
    return titles(model, QModelIndex())


def make_sidebar(
    qtbot: QtBot, rows: list[SidebarRow] = ROWS, *, answers_searches: bool = False
) -> SessionSidebar:
    sidebar = SessionSidebar(now=lambda: NOW, answers_searches=answers_searches)
    qtbot.addWidget(sidebar)
    sidebar.resize(320, 520)
    sidebar.set_sessions(rows, path_of("refactor-db-layer"))
    sidebar.show()
    qtbot.waitExposed(sidebar)
    return sidebar


# ---------------------------------------------------------------- model


def test_relative_time_is_the_workbenchs_age_translated() -> None:
    """(The ages themselves: tests/workbench/test_time.py.)"""
    assert relative_time(ago(minutes=5), NOW) == "5 min ago"
    assert relative_time(ago(days=1, hours=1), NOW) == "yesterday"
    assert relative_time("not a date", NOW) == ""


def test_grouped_by_workspace_newest_first(qtmodeltester: ModelTester) -> None:
    model = SessionListModel(now=lambda: NOW)
    model.set_rows(ROWS)
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    assert groups(model) == ["api (projects)", "web", "api (clients)"]
    api = model.index(0, 0)
    assert api.data(Qt.ItemDataRole.ToolTipRole) == "/home/ann/projects/api"
    assert titles(model, api) == [
        "fix flaky tests",
        "refactor db layer",
        "write release notes",
        "old experiment",
    ]
    times = [str(model.index(r, 1, api).data()) for r in range(4)]
    assert times == ["5 min ago", "yesterday", "3 days ago", "2025-12-01"]
    assert model.index(0, 1).data() == "4"  # session count on the group row
    web = model.index(1, 0)
    assert titles(model, web) == ["add login page", "broken"]
    broken = model.index(1, 0, web)
    assert "line 3 is not JSON" in broken.data(Qt.ItemDataRole.ToolTipRole)
    assert broken.data(Qt.ItemDataRole.ForegroundRole) is not None  # greyed
    assert model.index(0, 0, web).data(Qt.ItemDataRole.ForegroundRole) is None
    assert broken.data(SidebarRole.ROW).problem == "line 3 is not JSON"
    assert broken.data(SidebarRole.PATH) == path_of("broken")


def test_current_is_bold_and_never_reorders(qtbot: QtBot, qtmodeltester: ModelTester) -> None:
    model = SessionListModel(now=lambda: NOW)
    model.set_rows(ROWS)
    before = [titles(model, model.index(g, 0)) for g in range(model.rowCount())]
    with qtbot.waitSignal(model.dataChanged):
        model.set_current(path_of("old-experiment"))
    index = model.index_for_path(path_of("old-experiment"))
    font = index.data(Qt.ItemDataRole.FontRole)
    assert isinstance(font, QFont) and font.bold()
    assert index.data(SidebarRole.IS_CURRENT) is True
    assert [titles(model, model.index(g, 0)) for g in range(model.rowCount())] == before
    model.set_filter("release")
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    assert groups(model) == ["api (projects)"]
    model.set_filter("")
    model.set_rows([])
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]


# ---------------------------------------------------------------- widget


def test_object_names_and_layout(qtbot: QtBot) -> None:
    sidebar = make_sidebar(qtbot)
    assert sidebar.objectName() == "sessionSidebar"
    search = sidebar.findChild(QLineEdit, "sessionSearch")
    assert search is not None and search.placeholderText() == "Search sessions (Ctrl+K)"
    button = sidebar.findChild(QPushButton, "newSessionButton")
    assert button is not None and button.toolTip().startswith("New session")
    assert not button.icon().isNull()
    assert sidebar.findChild(QTreeView, "sessionList") is sidebar.view
    with qtbot.waitSignal(sidebar.new_session_requested):
        button.click()
    sidebar.focus_search()
    assert sidebar.focusWidget() is sidebar.search
    SCREENSHOTS.mkdir(exist_ok=True)
    assert sidebar.grab().save(str(SCREENSHOTS / "sidebar.png"))


def test_click_and_keyboard(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    sidebar = make_sidebar(qtbot)
    index = sidebar.model().index_for_path(path_of("add-login-page"))
    rect = sidebar.view.visualRect(index)
    viewport = sidebar.view.viewport()
    with qtbot.waitSignal(sidebar.session_activated) as blocker:
        qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=rect.center())  # type: ignore[no-untyped-call]
    assert blocker.args == [path_of("add-login-page")]
    # the open session: clicking it again does nothing
    current = sidebar.model().index_for_path(path_of("refactor-db-layer"))
    with qtbot.assertNotEmitted(sidebar.session_activated):
        qtbot.mouseClick(  # type: ignore[no-untyped-call]
            viewport, Qt.MouseButton.LeftButton, pos=sidebar.view.visualRect(current).center()
        )
    sidebar.view.setCurrentIndex(index)
    with qtbot.waitSignal(sidebar.session_activated) as blocker:
        qtbot.keyClick(sidebar.view, Qt.Key.Key_Return)  # type: ignore[no-untyped-call]
    assert blocker.args == [path_of("add-login-page")]
    with qtbot.waitSignal(sidebar.delete_requested) as blocker:
        qtbot.keyClick(sidebar.view, Qt.Key.Key_Delete)  # type: ignore[no-untyped-call]
    assert blocker.args == [path_of("add-login-page")]
    asked: list[str] = []

    def fake_ask(parent: object, title: str, label: str, text: str) -> str | None:
        asked.append(text)
        return "  Login page  "

    monkeypatch.setattr(SessionSidebar, "ask_text", staticmethod(fake_ask))
    with qtbot.waitSignal(sidebar.rename_requested) as blocker:
        qtbot.keyClick(sidebar.view, Qt.Key.Key_F2)  # type: ignore[no-untyped-call]
    assert blocker.args == [path_of("add-login-page"), "Login page"]
    assert asked == ["add login page"]
    monkeypatch.setattr(SessionSidebar, "ask_text", staticmethod(lambda *a: None))
    with qtbot.assertNotEmitted(sidebar.rename_requested):
        qtbot.keyClick(sidebar.view, Qt.Key.Key_F2)  # type: ignore[no-untyped-call]
    # a click on a workspace folds it
    group = sidebar.model().index(0, 0)
    assert sidebar.view.isExpanded(group)
    qtbot.mouseClick(  # type: ignore[no-untyped-call]
        viewport, Qt.MouseButton.LeftButton, pos=sidebar.view.visualRect(group).center()
    )
    assert not sidebar.view.isExpanded(group)


def test_context_menu_actions(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    sidebar = make_sidebar(qtbot)
    monkeypatch.setattr(SessionSidebar, "ask_text", staticmethod(lambda *a: "New name"))
    p = path_of("fix-flaky-tests")
    menu = sidebar.context_menu_for(p)
    assert menu is not None
    actions = {a.objectName(): a for a in menu.actions() if a.objectName()}
    export_menu = menu.findChild(QMenu, "exportMenu")
    assert export_menu is not None and export_menu.title() == "Export"
    actions.update({a.objectName(): a for a in export_menu.actions()})
    expected = [
        ("openSession", sidebar.session_activated, [p]),
        ("renameSession", sidebar.rename_requested, [p, "New name"]),
        ("forkSession", sidebar.fork_requested, [p]),
        ("revealSession", sidebar.reveal_requested, [p]),
        ("deleteSession", sidebar.delete_requested, [p]),
        ("backupSessions", sidebar.backup_requested, []),
        ("export_markdown", sidebar.export_requested, [p, "markdown"]),
        ("export_html", sidebar.export_requested, [p, "html"]),
        ("export_jsonl", sidebar.export_requested, [p, "jsonl"]),
    ]
    for name, signal, args in expected:
        with qtbot.waitSignal(signal) as blocker:
            actions[name].trigger()
        assert blocker.args == args, name
    with qtbot.waitSignal(sidebar.backup_requested):
        sidebar.backup_button.click()
    # the open session cannot be "opened" again
    current_menu = sidebar.context_menu_for(path_of("refactor-db-layer"))
    assert current_menu is not None
    open_action = next(a for a in current_menu.actions() if a.objectName() == "openSession")
    assert not open_action.isEnabled()


def test_search_filters_at_once_then_debounced_signal(qtbot: QtBot) -> None:
    sidebar = make_sidebar(qtbot, answers_searches=True)  # as in the main window
    model = sidebar.model()
    searches: list[str] = []
    sidebar.search_changed.connect(searches.append)
    with qtbot.waitSignal(sidebar.search_changed, timeout=2000) as blocker:
        qtbot.keyClicks(sidebar.search, "release")  # type: ignore[no-untyped-call]
        # filtered locally right away, before the debounced signal
        assert model.session_count() == 1
        assert groups(model) == ["api (projects)"]
    assert blocker.args == ["release"] and searches == ["release"]  # once, debounced
    # the main window answers with full-text results: shown as given
    hits = [ROWS[0], ROWS[3]]
    sidebar.set_sessions(hits, None)
    assert model.session_count() == 2
    # typing again filters the shown rows locally until the next answer
    qtbot.keyClicks(sidebar.search, "x")  # type: ignore[no-untyped-call]
    assert model.session_count() == 0
    sidebar.search.clear()
    assert model.session_count() == 2


def test_search_nobody_answers_always_filters_by_title(qtbot: QtBot) -> None:
    sidebar = make_sidebar(qtbot)
    sidebar.search_changed.connect(lambda _query: None)  # a listener alone changes nothing
    sidebar.search.setText("LOGIN")
    assert sidebar.model().session_count() == 1
    qtbot.wait(200)  # the debounce fires, nobody answers
    sidebar.set_sessions(ROWS, None)
    assert sidebar.model().session_count() == 1
    with qtbot.waitSignal(sidebar.search_changed, timeout=2000) as blocker:
        sidebar.search.setText("")
    assert blocker.args == [""]
    assert sidebar.model().session_count() == len(ROWS)


def test_set_sessions_keeps_selection_folds_and_scroll(
    qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    many = [
        row(f"s{i}", f"/home/ann/w{i % 3}", ago(minutes=10 + i), title=f"Session {i}")
        for i in range(80)
    ]
    sidebar = make_sidebar(qtbot, many)
    view = sidebar.view
    target = sidebar.model().index_for_path(path_of("s40"))
    view.setCurrentIndex(target)
    view.collapse(sidebar.model().index_for_cwd("/home/ann/w2"))
    view.scrollTo(target)
    scroll = view.verticalScrollBar().value()
    assert scroll > 0
    reset_count: list[int] = []
    sidebar.model().modelReset.connect(lambda: reset_count.append(1))
    sidebar.set_sessions([*many, row("new", "/home/ann/w1", ago(minutes=1))], None)
    qtmodeltester.check(sidebar.model())  # type: ignore[no-untyped-call]
    assert reset_count == [1]
    assert view.currentIndex().data(SidebarRole.PATH) == path_of("s40")
    assert not view.isExpanded(sidebar.model().index_for_cwd("/home/ann/w2"))
    assert view.isExpanded(sidebar.model().index_for_cwd("/home/ann/w1"))
    assert view.verticalScrollBar().value() == scroll
    # opening a session only marks it
    order = [r.path for r in sidebar.model().rows()]
    sidebar.set_current(path_of("s70"))
    assert [r.path for r in sidebar.model().rows()] == order
    assert view.currentIndex().data(SidebarRole.PATH) == path_of("s70")


def test_trash(qtbot: QtBot, qtmodeltester: ModelTester, monkeypatch: pytest.MonkeyPatch) -> None:
    sidebar = make_sidebar(qtbot)
    trashed = [
        row("deleted-one", "/home/ann/projects/api", ago(days=2), in_trash=True),
        row("deleted-two", "/home/ann/projects/web", ago(minutes=30), in_trash=True),
    ]
    sidebar.set_trash(trashed)
    qtmodeltester.check(sidebar.trash_model())  # type: ignore[no-untyped-call]
    assert sidebar.trash_toggle.text() == "Trash (2)"
    assert not sidebar.trash_view.isVisible()
    sidebar.trash_toggle.click()
    assert sidebar.trash_view.isVisible() and not sidebar.view.isVisible()
    menu = sidebar.context_menu_for(path_of("deleted-one"), trash=True)
    assert menu is not None
    actions = {a.objectName(): a for a in menu.actions() if a.objectName()}
    assert set(actions) == {"restoreSession", "revealSession", "purgeSession", "emptyTrash"}
    with qtbot.waitSignal(sidebar.restore_requested) as blocker:
        actions["restoreSession"].trigger()
    assert blocker.args == [path_of("deleted-one")]
    assert sidebar.view.isVisible(), "restored: back to the list, where it opens (m11)"
    sidebar.trash_toggle.click()
    asked: list[str] = []
    answer = False

    def confirm(parent: object, title: str, text: str) -> bool:
        asked.append(text)
        return answer

    monkeypatch.setattr(type(sidebar), "confirm", staticmethod(confirm))
    with qtbot.assertNotEmitted(sidebar.purge_requested):
        actions["purgeSession"].trigger()  # answered No
    answer = True
    with qtbot.waitSignal(sidebar.purge_requested) as blocker:
        actions["purgeSession"].trigger()
    assert blocker.args == [path_of("deleted-one")]
    with qtbot.waitSignal(sidebar.purge_requested) as blocker:
        actions["emptyTrash"].trigger()
    assert blocker.args == [""]  # every session in the trash
    assert asked[1].startswith("Delete this session for good")
    assert asked[2].startswith("Delete every session in the trash for good")
    sidebar.trash_view.setCurrentIndex(sidebar.trash_model().index_for_path(path_of("deleted-two")))
    with qtbot.waitSignal(sidebar.restore_requested) as blocker:
        qtbot.keyClick(sidebar.trash_view, Qt.Key.Key_Return)  # type: ignore[no-untyped-call]
    assert blocker.args == [path_of("deleted-two")]
    assert sidebar.view.isVisible()
    sidebar.trash_toggle.click()
    with qtbot.assertNotEmitted(sidebar.delete_requested):
        qtbot.keyClick(sidebar.trash_view, Qt.Key.Key_Delete)  # type: ignore[no-untyped-call]
    assert sidebar.grab().save(str(SCREENSHOTS / "sidebar_trash.png"))
    sidebar.trash_toggle.click()
    assert sidebar.view.isVisible()
    sidebar.set_trash([])
    assert sidebar.trash_toggle.text() == "Trash"


def test_thousand_sessions_fast(qtbot: QtBot) -> None:
    rows = [
        row(f"s{i}", f"/home/ann/work/project-{i % 25}", ago(minutes=i * 7), title=f"Task {i}")
        for i in range(1000)
    ]
    sidebar = make_sidebar(qtbot, rows[:10])
    start = time.perf_counter()
    sidebar.set_sessions(rows, path_of("s500"))
    first = time.perf_counter() - start
    start = time.perf_counter()
    sidebar.set_sessions(list(reversed(rows)), path_of("s501"))
    again = time.perf_counter() - start
    start = time.perf_counter()
    sidebar.search.setText("Task 99")
    search = time.perf_counter() - start
    start = time.perf_counter()
    sidebar.grab()
    paint = time.perf_counter() - start
    print(f"1,000 sessions: set_sessions {first:.3f}s, again {again:.3f}s, "
          f"local search {search:.3f}s, paint {paint:.3f}s")  # fmt: skip
    assert sidebar.model().session_count() == 19  # Task 99, 199 … 899, 990 … 999


PI_ROWS = [
    SidebarRow(
        path="/home/ann/.pi/agent/sessions/--api--/a.jsonl",
        id="pi-a",
        cwd="/home/ann/projects/api",
        title="Pi: speed up the parser",
        last_activity=ago(minutes=1),  # newer than any of ours: still after them
        source="pi",
    ),
    SidebarRow(
        path="/home/ann/.pi/agent/sessions/--infra--/b.jsonl",
        id="pi-b",
        cwd="/home/ann/projects/infra",
        title="Pi: deploy timeout",
        last_activity=ago(days=4),
        source="pi",
    ),
]


def test_pi_sessions_follow_ours_under_a_section_grouped_by_workspace(qtbot: QtBot) -> None:
    model = SessionListModel(now=lambda: NOW)
    ModelTester(qtbot).check(model)  # type: ignore[no-untyped-call]
    model.set_rows(ROWS + PI_ROWS)
    assert groups(model) == [
        *("api (projects)", "web", "api (clients)"),
        *("Pi sessions", "api (projects)", "infra"),
    ]
    section = model.section_index()
    assert section.row() == 3 and model.rowCount(section) == 0
    assert section.siblingAtColumn(1).data() == "2" and section.data(SidebarRole.IS_SECTION)
    assert not model.flags(section) & Qt.ItemFlag.ItemIsSelectable
    assert model.source_count("pi") == 2 and model.source_count("sessions") == len(ROWS)
    # The same workspace in both sources: two groups, told apart by their key.
    ours, theirs = model.index(0, 0), model.index(4, 0)
    assert ours.data(SidebarRole.CWD) == theirs.data(SidebarRole.CWD)
    assert ours.data(SidebarRole.GROUP_KEY) != theirs.data(SidebarRole.GROUP_KEY)
    pi = model.index_for_path(PI_ROWS[0].path)
    assert pi.parent() == theirs and pi.data(SidebarRole.SOURCE) == "pi"
    assert "Pi coding agent" in str(pi.data(Qt.ItemDataRole.ToolTipRole))
    # A filter that matches none of Pi's sessions hides the section too.
    model.set_filter("flaky")
    assert groups(model) == ["api (projects)"] and not model.section_index().isValid()
    model.set_filter("deploy")
    assert groups(model) == ["Pi sessions", "infra"]


def test_a_pi_session_has_copy_and_no_delete_or_fork(qtbot: QtBot) -> None:
    sidebar = make_sidebar(qtbot, ROWS + PI_ROWS)
    menu = sidebar.context_menu_for(PI_ROWS[1].path)
    assert menu is not None
    names = [a.objectName() for a in menu.actions() if a.objectName()]
    assert "copySession" in names and "openSession" in names
    assert "deleteSession" not in names and "forkSession" not in names
    copied: list[str] = []
    sidebar.copy_requested.connect(copied.append)
    next(a for a in menu.actions() if a.objectName() == "copySession").trigger()
    assert copied == [PI_ROWS[1].path]
    ours = sidebar.context_menu_for(path_of("add-login-page"))
    assert ours is not None and "copySession" not in [a.objectName() for a in ours.actions()]
    # Del on a Pi session does nothing (Pi's folder is Pi's); folding a Pi group leaves
    # our group of the same workspace open.
    deleted: list[str] = []
    sidebar.delete_requested.connect(deleted.append)
    sidebar.view.setFocus()
    sidebar.set_current(PI_ROWS[0].path)
    qtbot.keyClick(sidebar.view, Qt.Key.Key_Delete)  # type: ignore[no-untyped-call]
    assert deleted == []
    model = sidebar.model()
    pi_group = model.index_for_path(PI_ROWS[0].path).parent()
    sidebar.set_current(path_of("add-login-page"))  # (a selected row's group unfolds)
    sidebar.view.collapse(pi_group)
    sidebar.set_sessions(ROWS + PI_ROWS, None)
    assert not sidebar.view.isExpanded(model.index_for_path(PI_ROWS[0].path).parent())
    assert sidebar.view.isExpanded(model.index_for_path(path_of("fix-flaky-tests")).parent())


def test_a_run_state_change_repaints_its_row_and_a_move_resets(
    qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    """Rows that keep their places are updated in place (a run starting, waiting, ending
    in another session costs one row's repaint, not a reset and relayout of the list);
    the once-a-second tick repaints the running rows' time only; a row that moves resets."""
    sidebar = SessionSidebar()
    qtbot.addWidget(sidebar)
    model = sidebar.model()
    model.set_clock(lambda: NOW)
    sidebar.set_sessions(ROWS, path_of("add-login-page"))
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    resets: list[int] = []
    changed: list[tuple[str, str, int, int]] = []
    model.modelReset.connect(lambda: resets.append(1))
    model.dataChanged.connect(
        lambda a, b, _roles=(): changed.append(
            (str(a.data(SidebarRole.PATH)), str(b.data(SidebarRole.PATH)), a.column(), b.column())
        )
    )
    running = [
        replace(r, activity="running", run_started=NOW.timestamp() - 65)
        if r.id == "refactor-db-layer"
        else r
        for r in ROWS
    ]
    sidebar.set_sessions(running, path_of("add-login-page"))
    target = path_of("refactor-db-layer")
    assert resets == [] and changed == [(target, target, 0, 1)]
    assert "running 1:05" in str(model.index_for_path(target).siblingAtColumn(1).data())
    assert sidebar.view.currentIndex().data(SidebarRole.PATH) == path_of("add-login-page")

    changed.clear()
    model.refresh_running()
    assert changed == [(target, target, 1, 1)]  # the running row's time, no other row

    changed.clear()
    sidebar.set_sessions(running, path_of("fix-flaky-tests"))  # another is shown
    assert resets == []
    assert sidebar.view.currentIndex().data(SidebarRole.PATH) == path_of("fix-flaky-tests")

    moved = [replace(r, last_activity=ago(minutes=1)) if r.path == target else r for r in running]
    sidebar.set_sessions(moved, path_of("fix-flaky-tests"))  # the run ended: it moves up
    assert resets == [1]
    api = model.index_for_cwd("/home/ann/projects/api")
    assert model.index(0, 0, api).data(SidebarRole.PATH) == target
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
