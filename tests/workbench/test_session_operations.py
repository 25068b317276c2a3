"""The session operations as workbench operations, without Qt, on every store (JSONL
files, SQLite, and PostgreSQL as a ``slow`` test): rename, fork, trash and undo, restore
from the trash, export, back up, repair, and quitting with unsaved entries (Retry, or a
recovery file). Converting, copying a Pi session in and reloading after another program
wrote are in test_pi_sessions.py (they act on JSONL files). The window's tests
(tests/gui/test_flows_sessions.py) check only that its menus and keys reach these and that
it repaints (issue 22 item 5)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from desktop_agent.session import JsonlSessionRepo, Session
from desktop_agent.workbench import Workbench
from tests.helpers import STORES
from tests.helpers.provider_server import ProviderServer, Reply, tool_call
from tests.helpers.workbench import (
    Recorder,
    answer,
    break_saving,
    damage_second_entry,
    make_workbench,
    seed_async,
    user,
)

pytestmark = pytest.mark.asyncio

Bench = tuple[Workbench, Recorder]


@pytest.fixture(params=[*STORES, pytest.param("postgres", marks=pytest.mark.slow)])
def store(request: pytest.FixtureRequest) -> str:
    """Every store, PostgreSQL too (on the suite's server: ``slow``)."""
    return str(request.param)


@pytest.fixture
def database(request: pytest.FixtureRequest, store: str) -> str | None:
    """The PostgreSQL store's database URL; None for the file stores."""
    return str(request.getfixturevalue("database_url")) if store == "postgres" else None


def opened(wb: Workbench) -> str | None:
    """The open session's reference (a call, so checks after operations are not narrowed)."""
    return wb.ref if wb.session is not None else None


async def test_fork_is_titled_a_fork_with_its_own_time_and_opens(
    bench: Bench, workspace: Path, provider: ProviderServer
) -> None:
    wb, _ = bench
    await wb.new_session(str(workspace))
    provider.script(Reply(text="forty-two"))
    await wb.send("The question")
    source, source_ref = wb.session, wb.ref
    assert source is not None and source_ref is not None
    source_ids = [r[0] for r in source.raw_entries()]
    before = max(r.last_activity for r in wb.rows)
    await wb.fork(source_ref)
    assert wb.ref != source_ref and wb.session is not None
    row = wb.row_for(wb.ref or "")
    assert row is not None and row.title == "The question (fork)"
    assert row.last_activity >= before
    assert [r[0] for r in wb.session.raw_entries()][: len(source_ids)] == source_ids
    assert wb.rows[0].path == wb.ref  # newest first: the fork is on top


async def test_a_relaunch_restores_the_fork_it_opened(
    tmp_path: Path, workspace: Path, provider: ProviderServer, store: str, database: str | None
) -> None:
    data = tmp_path / "data"
    model = provider.model("anthropic-messages")
    wb = make_workbench(data, model, store=store, database_url=database)
    await wb.start()
    await wb.new_session(str(workspace))
    provider.script(Reply(text="forty-two"))
    await wb.send("The question")
    await wb.fork(wb.ref or "")
    fork = wb.ref or ""
    await wb.shutdown(stop=True)
    await wb.aclose()
    again = make_workbench(data, model, store=store, database_url=database)
    await again.start()
    await again.restore()
    assert again.ref == fork
    assert (row := again.row_for(fork)) is not None and row.title == "The question (fork)"
    await again.shutdown(stop=True)
    await again.aclose()


async def test_rename_open_and_closed_sessions(bench: Bench, workspace: Path) -> None:
    wb, _ = bench
    await wb.new_session(str(workspace))
    first = wb.ref or ""
    await wb.rename(first, "  Planning  ")
    assert (row := wb.row_for(first)) is not None and row.title == "Planning"
    wb.set_draft("keep me")  # a draft keeps an empty session
    await wb.new_session(str(workspace))
    await wb.rename(first, "Planning, renamed")
    assert (row := wb.row_for(first)) is not None and row.title == "Planning, renamed"


async def test_trash_the_open_session_opens_the_next_and_undo_brings_it_back(
    bench: Bench, workspace: Path, provider: ProviderServer
) -> None:
    wb, rec = bench
    await wb.new_session(str(workspace))
    provider.script(Reply(text="one"), Reply(text="two"))
    await wb.send("first session")
    first = wb.ref or ""
    await wb.new_session(str(workspace))
    await wb.send("second session")
    second = wb.ref or ""
    rec.clear()
    changes = await wb.trash(second)
    assert changes.session and wb.ref == first  # the next one opened
    assert second not in [r.path for r in wb.rows]
    assert [r.title for r in wb.trash_rows] == ["second session"]
    assert wb.notices["trash"].action_label == "Undo"
    await wb.notice_action("trash")
    assert wb.ref == second and "trash" not in wb.notices
    assert not wb.trash_rows
    await wb.trash(second)
    await wb.trash(first)
    assert opened(wb) is None  # nothing left: the start page
    assert len(wb.trash_rows) == 2 and not wb.rows


async def test_restore_from_the_trash_view(
    bench: Bench, workspace: Path, provider: ProviderServer
) -> None:
    wb, _ = bench
    await wb.new_session(str(workspace))
    provider.script(Reply(text="kept"))
    await wb.send("worth keeping")
    ref = wb.ref or ""
    await wb.trash(ref)
    trashed = wb.trash_rows[0]
    assert trashed.in_trash
    await wb.restore_from_trash(trashed.path)
    assert wb.ref == ref and not wb.trash_rows
    assert [i.role for i in await wb.branch()] == ["user", "assistant"]


async def test_m11_the_trash_preview_of_a_long_session_reads_only_its_start(
    bench: Bench, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session in the trash is previewed from its first messages: the preview stops at
    PREVIEW_CHARS and reads no more of the file than it shows (it decoded every message of
    the branch before, seconds for a 100 MB session, on the window's thread)."""
    from desktop_agent.workbench._operations import PREVIEW_CHARS

    wb, _ = bench

    await wb.new_session(str(workspace))
    session, ref = wb.session, wb.ref or ""
    assert session is not None
    for i in range(1500):
        await session.append_message(user(f"question {i} " + "q" * 80, 2 * i))
        await session.append_message(answer(f"answer {i} " + "a" * 80, 2 * i + 1))
    await wb.trash(ref)
    decoded: list[str] = []
    get_message = Session.get_message

    def counting(self: Session, entry_id: str) -> object:
        decoded.append(entry_id)
        return get_message(self, entry_id)

    monkeypatch.setattr(Session, "get_message", counting)
    preview = await wb.preview_trashed(wb.trash_rows[0].path)
    assert preview.startswith("#### question 0 ") and "answer 0 " in preview
    assert len(preview) <= PREVIEW_CHARS + 10 and preview.endswith("…")
    assert "question 1499" not in preview
    assert 0 < len(decoded) < 100, len(decoded)  # of 3,000


async def test_export_markdown_html_and_jsonl(
    bench: Bench, workspace: Path, provider: ProviderServer, tmp_path: Path
) -> None:
    wb, _ = bench
    await wb.new_session(str(workspace))
    (workspace / "notes.txt").write_text("```inner fence```\nline two\n")
    provider.script(
        tool_call("read", {"path": "notes.txt"}),
        Reply(text="# Findings\n\nThe file has two lines.\n\n```\n# not a heading\n```"),
    )
    await wb.send("Read notes.txt")
    ref = wb.ref or ""
    md = tmp_path / "out.md"
    await wb.export(ref, "markdown", str(md))
    text = md.read_text()
    assert text.startswith("# Read notes.txt\n")
    assert "\n## You" in text and "\n## Assistant (anthropic/claude-test)" in text
    assert "\n### Findings" in text  # the reply's heading, two levels down
    assert "\n# not a heading" in text  # code is left alone
    assert "````text\n```inner fence```\nline two" in text  # tool output in a longer fence
    assert wb.notices["export"].english == f"Exported to {md}."
    page = tmp_path / "out.html"
    await wb.export(ref, "html", str(page))
    assert "<h2>You" in page.read_text() and "&lt;" not in "Read notes.txt"
    copy = tmp_path / "copy.jsonl"
    await wb.export(ref, "jsonl", str(copy))
    lines = [json.loads(line) for line in copy.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    session = wb.session
    assert session is not None
    assert [line["id"] for line in lines[1:]] == [r[0] for r in session.raw_entries()]


async def test_back_up_every_session(
    bench: Bench, workspace: Path, provider: ProviderServer, tmp_path: Path
) -> None:
    wb, _ = bench
    for text in ("one", "two"):
        await wb.new_session(str(workspace))
        provider.script(Reply(text=f"answer {text}"))
        await wb.send(text)
    dest = tmp_path / "backup.zip"
    await wb.backup(str(dest))
    with zipfile.ZipFile(dest) as archive:
        names = archive.namelist()
        assert len(names) == 2 and all(n.endswith(".jsonl") for n in names)
        first = archive.read(names[0]).decode().splitlines()
    assert json.loads(first[0])["type"] == "session"
    assert "2 sessions backed up" in wb.notices["export"].english


async def test_repair_a_damaged_session(
    tmp_path: Path, workspace: Path, provider: ProviderServer
) -> None:
    data = tmp_path / "data"

    async def build(s: Session) -> None:
        await s.append_message(user("one"))
        await s.append_message(answer("two"))
        await s.append_message(user("three"))

    path = await seed_async(data, workspace, build)
    damaged = damage_second_entry(path)
    wb = make_workbench(data, provider.model("anthropic-messages"))
    await wb.start()
    await wb.open(path)
    report = wb.recovery
    assert wb.read_only and report is not None and report.damaged
    await wb.repair(path)
    assert wb.ref != path and wb.session is not None and not wb.session.read_only
    assert Path(path).read_bytes() == damaged  # the damaged file is left as it was
    assert [i.role for i in await wb.branch()] == ["user"]  # "three" (its parent is gone)
    await wb.shutdown(stop=True)
    await wb.aclose()


async def quit_with_unsaved_entries(
    wb: Workbench,
    store: str,
    workspace: Path,
    provider: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, bool]:
    """Start ``wb``, send a prompt on a full disk (until the returned switch's "on" is set
    False) and quit: the prompt and its answer are the two entries left unsaved."""
    await wb.start()
    await wb.new_session(str(workspace))
    broken = break_saving(monkeypatch, store)
    provider.script(Reply(text="the answer is kept in memory"))
    await wb.send("save me")
    assert wb.save.status == "not_saved" and wb.save.pending == 2
    assert await wb.shutdown(stop=True) == 2
    return broken


@pytest.mark.parametrize("store", STORES)
async def test_quitting_with_unsaved_entries_keeps_them_in_a_recovery_file(
    tmp_path: Path,
    workspace: Path,
    provider: ProviderServer,
    store: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wb = make_workbench(tmp_path / "data", provider.model("anthropic-messages"), store=store)
    await quit_with_unsaved_entries(wb, store, workspace, provider, monkeypatch)
    recovery = wb.write_recovery()
    assert recovery is not None and Path(recovery).parent == tmp_path / "data-recovery"
    monkeypatch.undo()
    wb.abandon()
    await wb.aclose()
    copy = await JsonlSessionRepo(tmp_path / "elsewhere").open(recovery)
    roles = [getattr(m, "role", None) for m in (await copy.build_context()).messages]
    assert roles == ["user", "assistant"]
    await copy.close()


@pytest.mark.parametrize("store", STORES)
async def test_quitting_with_unsaved_entries_then_retry_saves_them(
    tmp_path: Path,
    workspace: Path,
    provider: ProviderServer,
    store: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the window's "Retry" does when quitting finds unsaved entries (the person has
    freed some space): every entry is saved, and the next launch has them."""
    data = tmp_path / "data"
    model = provider.model("anthropic-messages")
    wb = make_workbench(data, model, store=store)
    broken = await quit_with_unsaved_entries(wb, store, workspace, provider, monkeypatch)
    session = wb.session
    assert session is not None
    ids = [r[0] for r in session.raw_entries()]
    broken["on"] = False
    await wb.retry_saving()
    assert await wb.shutdown(stop=True) == 0
    assert session.pending_count == 0
    await wb.aclose()
    again = make_workbench(data, model, store=store)
    await again.start()
    await again.restore()
    assert again.session is not None and [r[0] for r in again.session.raw_entries()] == ids
    await again.shutdown(stop=True)
    await again.aclose()


async def test_repair_a_damaged_sqlite_session(
    tmp_path: Path, workspace: Path, provider: ProviderServer
) -> None:
    import sqlite3

    data = tmp_path / "data"

    async def build(s: Session) -> None:
        await s.append_message(user("one"))
        await s.append_message(answer("two"))

    ref = await seed_async(data, workspace, build, "sqlite")
    db = sqlite3.connect(data / "sessions.sqlite")
    db.execute("UPDATE entries SET line = '#not json' WHERE seq = 1")
    db.commit()
    db.close()
    wb = make_workbench(data, provider.model("anthropic-messages"), store="sqlite")
    await wb.start()
    await wb.open(ref)
    assert wb.read_only
    await wb.repair(ref)
    assert wb.ref != ref and wb.session is not None and not wb.session.read_only
    assert [i.role for i in await wb.branch()] == ["user"]
    await wb.shutdown(stop=True)
    await wb.aclose()
