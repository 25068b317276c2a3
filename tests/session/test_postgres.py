"""The PostgreSQL store against a real server the suite starts (tests/helpers/postgres.py):
failures of the server, one writer per session, following a writer, a newer schema,
search, trash, and copies between stores byte for byte. The common contract is in
test_contract.py."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import pytest_asyncio

from desktop_agent.ai import AssistantMessage, TextContent, Usage, UserMessage
from desktop_agent.session import (
    JsonlSessionRepo,
    PostgresSessionRepo,
    SessionError,
    SessionWriteError,
)
from desktop_agent.session._postgres import (
    KEEPALIVE_IDLE_S,
    TCP_USER_TIMEOUT_MS,
    Listener,
    PostgresStorage,
    _RowSource,
)
from tests.helpers.postgres import Cluster

CWD = "/home/demo/project"


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def assistant(text: str) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="openai-completions",
        provider="p",
        model="m",
        stop_reason="stop",
        usage=Usage(input=1, output=1, total_tokens=2),
        timestamp=2,
    )


@pytest_asyncio.fixture
async def repo(database_url: str) -> AsyncIterator[PostgresSessionRepo]:
    pg = PostgresSessionRepo(database_url)
    yield pg
    await pg.close()


async def texts(session: Any) -> list[str]:
    return [m.content[0].text for m in (await session.build_context()).messages]


@pytest.mark.slow
@pytest.mark.asyncio
async def test_lost_server_is_a_failed_save_and_retry_writes_exactly_the_rest(
    repo: PostgresSessionRepo, postgres_cluster: Cluster
) -> None:
    s = await repo.create(cwd=CWD)
    await s.append_message(user("q1"))
    postgres_cluster.stop("immediate")
    try:
        with pytest.raises(SessionWriteError) as err:
            await s.append_message(assistant("a1"))
        assert err.value.code == "storage"
        assert "database server cannot be reached" in err.value.message
        assert "Nothing is lost" in err.value.message
        assert postgres_cluster.password not in err.value.message
        with pytest.raises(SessionWriteError):
            await s.append_message(user("q2"))  # queued behind the first
        assert s.pending_count == 2
        with pytest.raises(SessionWriteError):
            await s.retry_persistence()  # still away: still kept
        assert s.pending_count == 2
    finally:
        postgres_cluster.start()
    assert await s.retry_persistence() == 2
    assert s.pending_count == 0
    meta = s.metadata
    await s.close()
    again = await repo.open(meta)
    assert await texts(again) == ["q1", "a1", "q2"]
    assert not again.read_only  # the lock was taken again with the new connection
    await again.close()


def _server_processes(cluster: Cluster) -> list[int]:
    """The postmaster and its children (the backends serving our connections)."""
    main = int((cluster.data / "postmaster.pid").read_text().split()[0])
    pids = [main]
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == main:
            pids.append(int(name))
    return pids


@pytest.mark.asyncio
async def test_a_partitioned_server_never_blocks_the_event_loop(
    repo: PostgresSessionRepo, postgres_cluster: Cluster
) -> None:
    """The server stops answering (every process of it stopped: a network partition as
    the client sees it): an append waits for it on a worker thread while the event loop
    goes on, then completes once the server answers again."""
    s = await repo.create(cwd=CWD)
    await s.append_message(user("q1"))
    storage = s.get_storage()
    assert isinstance(storage, PostgresStorage) and storage._writer is not None
    given = storage._writer.info.get_parameters()
    assert given["keepalives_idle"] == str(KEEPALIVE_IDLE_S)
    assert given["tcp_user_timeout"] == str(TCP_USER_TIMEOUT_MS)
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.02)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    def resume() -> None:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)

    ticker = asyncio.create_task(tick())
    pids = _server_processes(postgres_cluster)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    # Resumed by a thread, not the loop: a write on the loop would stall it ~1.5 s.
    waker = threading.Timer(1.5, resume)
    waker.start()
    try:
        append = asyncio.create_task(s.append_message(assistant("a1")))
        await asyncio.sleep(1.0)
        assert not append.done()  # waiting for the server, off the loop
        assert s.pending_count == 1
    finally:
        await asyncio.to_thread(waker.join)
    await asyncio.wait_for(append, 30)
    done.set()
    await ticker
    assert max(gaps) < 0.5, f"the event loop stalled for {max(gaps):.2f} s"
    assert s.pending_count == 0
    meta = s.metadata
    await s.close()
    again = await repo.open(meta, write=False)
    assert await texts(again) == ["q1", "a1"]
    await again.close()


def test_connection_settings_in_the_url_win(database_url: str) -> None:
    from desktop_agent.session._postgres import _connect

    with _connect(database_url + "?keepalives_idle=42") as conn:
        given = conn.info.get_parameters()
    assert given["keepalives_idle"] == "42"
    assert given["keepalives_count"] == "3"


@pytest.mark.asyncio
async def test_retry_after_a_lost_answer_writes_nothing_twice(repo: PostgresSessionRepo) -> None:
    """The commit landed but its answer was lost: the retry finds the same rows (same ids
    and lines) and writes nothing twice."""
    s = await repo.create(cwd=CWD)
    await s.append_message(user("q1"))
    await s.append_message(assistant("a1"))
    storage: Any = s.get_storage()
    # As after a lost answer: the storage believes the last entry is not written yet.
    storage._written -= 1
    storage.pending.append(len(storage.tree) - 1)
    assert await s.retry_persistence() == 1
    await s.append_message(user("q2"))
    meta = s.metadata
    await s.close()
    again = await repo.open(meta)
    assert await texts(again) == ["q1", "a1", "q2"]
    assert len(await again.get_entries()) == 3
    await again.close()


@pytest.mark.asyncio
async def test_another_writers_rows_are_never_overwritten(repo: PostgresSessionRepo) -> None:
    s = await repo.create(cwd=CWD)
    await s.append_message(user("q1"))
    storage: Any = s.get_storage()
    storage._written -= 1  # our numbering is stale: row 0 holds another entry than ours
    with pytest.raises(SessionWriteError) as err:
        await s.append_message(user("q2"))
    assert "another Desktop Agent wrote entry 1" in err.value.message
    assert s.pending_count == 1  # kept in memory
    meta = s.metadata
    s.get_storage().force_close()
    again = await repo.open(meta)
    assert await texts(again) == ["q1"]
    await again.close()


@pytest.mark.asyncio
async def test_reopening_reads_the_tree_columns_kept_on_this_computer(
    database_url: str, tmp_path: Path
) -> None:
    """Opening a session keeps its tree columns locally; a reopen uses them while the
    session has the same rows, and reads the server again once another computer
    appended (or the file is damaged)."""
    here = PostgresSessionRepo(database_url, cache_dir=tmp_path / "here")
    there = PostgresSessionRepo(database_url, cache_dir=tmp_path / "there")
    assert here._cache is not None
    try:
        s = await there.create(cwd=CWD)
        await s.append_message(user("q1"))
        await s.append_message(assistant("a1"))
        await s.append_session_name("named")
        meta = s.metadata
        await s.close()

        async def reopened() -> tuple[list[str], str | None]:
            again = await here.open(meta)
            found = (await texts(again), await again.get_session_name())
            await again.close()
            return found

        assert await reopened() == (["q1", "a1"], "named")
        assert here._cache.hits == 0
        assert await reopened() == (["q1", "a1"], "named")
        assert here._cache.hits == 1
        s = await there.open(meta)
        await s.append_message(user("q2"))
        await s.close()
        assert await reopened() == (["q1", "a1", "q2"], "named")
        assert here._cache.hits == 1  # another computer appended: read from the server
        assert await reopened() == (["q1", "a1", "q2"], "named")
        assert here._cache.hits == 2
        [kept] = list((tmp_path / "here").iterdir())
        data = bytearray(kept.read_bytes())
        data[-3] ^= 0xFF
        kept.write_bytes(bytes(data))
        assert await reopened() == (["q1", "a1", "q2"], "named")
        assert here._cache.hits == 2  # damaged: ignored, written again
        assert await reopened() == (["q1", "a1", "q2"], "named")
        assert here._cache.hits == 3
        assert postgres_password_free(kept.read_bytes(), database_url)
    finally:
        await here.close()
        await there.close()


@pytest.mark.slow
@pytest.mark.asyncio
async def test_an_opened_session_reads_its_branch_ahead_so_the_loop_never_waits_for_the_server(
    repo: PostgresSessionRepo, postgres_cluster: Cluster
) -> None:
    """Opening reads the current branch's rows on a thread of its own (newest first);
    once it is done, the context and every message come from memory: with the server
    frozen (SIGSTOP), reading them all on the loop still takes no time."""
    s = await repo.create(cwd=CWD)
    for n in range(300):
        await s.append_message(user(f"q{n}") if n % 2 == 0 else assistant(f"a{n}"))
    meta = s.metadata
    await s.close()
    again = await repo.open(meta, write=False)
    source = again.get_storage().tree.source
    assert isinstance(source, _RowSource)
    assert await asyncio.to_thread(source.prefetched.wait, 30)
    before = source.server_reads
    postgres_cluster.pause()
    try:
        started = time.monotonic()
        found = await texts(again)
        assert time.monotonic() - started < 1.0  # (a read would wait for the server)
    finally:
        postgres_cluster.resume()
    assert found == [f"q{n}" if n % 2 == 0 else f"a{n}" for n in range(300)]
    assert source.server_reads == before  # (the open read the first prompt, on its thread)
    again.get_storage().force_close()


def postgres_password_free(data: bytes, url: str) -> bool:
    password = psycopg.conninfo.conninfo_to_dict(url).get("password")
    return not password or str(password).encode() not in data


@pytest.mark.asyncio
async def test_one_writer_others_follow_and_take_over(database_url: str) -> None:
    first, second = PostgresSessionRepo(database_url), PostgresSessionRepo(database_url)
    try:
        s = await first.create(cwd=CWD)
        await s.append_message(user("q1"))
        follower = await second.open(s.metadata)
        assert follower.read_only
        storage: Any = follower.get_storage()
        assert storage.read_only_code == "locked"
        with pytest.raises(SessionWriteError) as err:
            await follower.append_message(user("mine"))
        assert err.value.code == "locked"
        follower.get_storage().pending.clear()
        follower.get_storage().tree.truncate(1)
        await s.append_message(assistant("a1"))
        assert len(storage.pull()) == 1
        assert await texts(follower) == ["q1", "a1"]
        assert not storage.try_writable()  # the first still holds it
        await s.close()
        assert storage.try_writable()
        await follower.append_message(user("q2"))
        await follower.close()
        third = await first.open(s.metadata)
        assert await texts(third) == ["q1", "a1", "q2"]
        assert not third.read_only
        await third.close()
    finally:
        await first.close()
        await second.close()


@pytest.mark.asyncio
async def test_notifications_reach_a_listener_within_a_second(
    repo: PostgresSessionRepo,
) -> None:
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    listener = Listener(repo, lambda k, i: events.put_nowait((k, i)), loop)
    listener.start()
    try:
        assert await asyncio.wait_for(events.get(), 10) == ("connected", "")
        started = time.monotonic()
        s = await repo.create(cwd=CWD)
        assert await asyncio.wait_for(events.get(), 1) == ("created", s.metadata.id)
        await s.append_message(user("q"))
        assert await asyncio.wait_for(events.get(), 1) == ("entries", s.metadata.id)
        await s.close()
        assert await asyncio.wait_for(events.get(), 1) == ("released", s.metadata.id)
        assert time.monotonic() - started < 3
    finally:
        await asyncio.to_thread(listener.stop)


@pytest.mark.asyncio
async def test_newer_schema_opens_read_only(database_url: str) -> None:
    repo = PostgresSessionRepo(database_url)
    s = await repo.create(cwd=CWD)
    await s.append_message(user("q"))
    meta = s.metadata
    await s.close()
    await repo.close()
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE desktop_agent.meta SET value = '99' WHERE key = 'schema_version'")
    newer = PostgresSessionRepo(database_url)
    try:
        await newer.connect()
        assert newer.read_only_reason is not None and "newer" in newer.read_only_reason
        opened = await newer.open(meta)
        assert opened.read_only and opened.written_by_newer_app
        assert await texts(opened) == ["q"]
        with pytest.raises(SessionError) as err:
            await newer.create(cwd=CWD)
        assert err.value.code == "read_only"
        await opened.close()
    finally:
        await newer.close()
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT value FROM desktop_agent.meta WHERE key = 'schema_version'"
        ).fetchone()
    assert row == ("99",)  # never migrated down


@pytest.mark.asyncio
async def test_unreachable_server_says_so_without_the_password(postgres_cluster: Cluster) -> None:
    url = postgres_cluster.url().replace(f":{postgres_cluster.port}/", ":1/")
    repo = PostgresSessionRepo(url)
    started = time.monotonic()
    with pytest.raises(SessionError) as err:
        await repo.connect()
    assert time.monotonic() - started < 10
    assert err.value.code == "storage"
    assert "cannot be reached" in err.value.message
    assert postgres_cluster.password not in err.value.message
    await repo.close()


@pytest.mark.asyncio
async def test_wrong_password_is_a_clear_error(postgres_cluster: Cluster) -> None:
    repo = PostgresSessionRepo(postgres_cluster.url(password=False), password="wrong")
    with pytest.raises(SessionError) as err:
        await repo.connect()
    assert "password authentication failed" in err.value.message
    await repo.close()
    good = PostgresSessionRepo(
        postgres_cluster.url(password=False), password=postgres_cluster.password
    )
    await good.connect()
    await good.close()


@pytest.mark.asyncio
async def test_list_search_counts_and_trash(repo: PostgresSessionRepo) -> None:
    a = await repo.create(cwd=CWD)
    await a.append_message(user("How do pelicans fly?"))
    await a.append_message(assistant("Pelicans soar on thermals over the ocean."))
    b = await repo.create(cwd=CWD)
    await b.append_message(user("Fix the build"))
    await b.append_session_name("Build fixes")
    rows = {r.id: r for r in await repo.listed()}
    assert rows[a.metadata.id].title == "How do pelicans fly?"
    assert rows[a.metadata.id].message_count == 2
    assert rows[b.metadata.id].title == "Build fixes"
    assert [r.id for r in await repo.listed("thermals")] == [a.metadata.id]
    # where the words were found, from a few words before the hit (m6); none for a title
    (found,) = await repo.listed("thermals")
    assert found.snippet is not None and "soar on thermals over the ocean" in found.snippet
    assert "\x02" not in found.snippet and "\x03" not in found.snippet
    assert [r.id for r in await repo.listed("build")] == [b.metadata.id]
    assert await repo.listed("nothing-like-this") == []
    assert await repo.set_trashed(a.metadata.id, "2026-01-01T00:00:00Z")
    assert [r.id for r in await repo.listed()] == [b.metadata.id]
    assert [r.id for r in await repo.listed(trashed=True)] == [a.metadata.id]
    assert await repo.set_trashed(a.metadata.id, None)
    assert {r.id for r in await repo.listed()} == {a.metadata.id, b.metadata.id}
    assert rows[a.metadata.id].parent is None
    fork = await repo.fork(a.metadata, cwd=CWD)
    listed_fork = {r.id: r for r in await repo.listed()}[fork.metadata.id]
    assert listed_fork.parent == "postgres:" + a.metadata.id  # the sidebar's fork mark (m16)
    await fork.close()
    await a.close()
    await b.close()


@pytest.mark.asyncio
async def test_copies_between_stores_are_byte_exact(
    repo: PostgresSessionRepo, tmp_path: Path
) -> None:
    files = JsonlSessionRepo(tmp_path / "sessions")
    src = await files.create(cwd=CWD)
    q = await src.append_message(user("héllo ✓ \u2028 and \x00"))
    await src.append_message(assistant("a"))
    await src.move_to(q)
    await src.append_message(assistant("b"))
    await src.append_label(q, "start")
    await src.close()
    path = src.metadata.path
    assert path is not None
    original = Path(path).read_bytes().split(b"\n", 1)[1]
    copies = await files.read_entries(path)
    copied = await repo.create_from_entries(copies, cwd=CWD, parent_session_path=path)
    meta = copied.metadata
    await copied.close()
    reopened = await repo.open(meta)
    out = tmp_path / "export.jsonl"
    await reopened.save_copy(str(out))
    await reopened.close()
    assert out.read_bytes().split(b"\n", 1)[1] == original
    back = await files.read_entries(str(out))
    assert [raw for _, raw in back] == [raw for _, raw in copies]


@pytest.mark.asyncio
async def test_statement_timeout_from_the_url_is_a_failed_save_then_retry(
    database_url: str,
) -> None:
    """``options=-c statement_timeout=…`` in the URL works as for any libpq client: a
    write that waits longer is cancelled by the server, kept in memory, and retried."""
    repo = PostgresSessionRepo(database_url + "?options=-c%20statement_timeout%3D300")
    try:
        s = await repo.create(cwd=CWD)
        await s.append_message(user("q1"))
        with psycopg.connect(database_url) as blocker:
            blocker.execute("LOCK TABLE desktop_agent.entries IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(SessionWriteError) as err:
                await s.append_message(assistant("a1"))
            assert "timed out" in err.value.message
            assert s.pending_count == 1
            blocker.rollback()
        assert await s.retry_persistence() == 1
        meta = s.metadata
        await s.close()
        again = await repo.open(meta)
        assert await texts(again) == ["q1", "a1"]
        await again.close()
    finally:
        await repo.close()


def _self_signed(folder: Path, name: str) -> tuple[Path, Path]:
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@pytest.mark.asyncio
async def test_tls_from_the_url_is_used_and_a_wrong_certificate_refused(
    database_url: str, postgres_cluster: Cluster, tmp_path: Path
) -> None:
    """``sslmode``/``sslrootcert`` in the URL work as for any libpq client."""
    cert, key = _self_signed(postgres_cluster.base, "server")
    other, _ = _self_signed(tmp_path, "other")
    owner = postgres_cluster.base.stat()
    os.chown(cert, owner.st_uid, owner.st_gid)
    os.chown(key, owner.st_uid, owner.st_gid)
    key.chmod(0o600)
    settings = {"ssl": "on", "ssl_cert_file": str(cert), "ssl_key_file": str(key)}
    with psycopg.connect(database_url, autocommit=True) as admin:
        for name, value in settings.items():
            admin.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        admin.execute("SELECT pg_reload_conf()")
    try:
        await asyncio.sleep(0.5)  # the server reads its configuration again
        url = f"{database_url}?sslmode=verify-full&sslrootcert={cert}"
        repo = PostgresSessionRepo(url)
        try:
            s = await repo.create(cwd=CWD)
            await s.append_message(user("over TLS"))
            await s.close()
        finally:
            await repo.close()
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            assert row.fetchone() == (True,)
        wrong = PostgresSessionRepo(f"{database_url}?sslmode=verify-full&sslrootcert={other}")
        with pytest.raises(SessionError) as err:
            await wrong.connect()
        assert "certificate verify failed" in err.value.message
        assert postgres_cluster.password not in err.value.message
        await wrong.close()
    finally:
        with psycopg.connect(database_url, autocommit=True) as admin:
            for name in settings:
                admin.execute(f"ALTER SYSTEM RESET {name}")
            admin.execute("SELECT pg_reload_conf()")


@pytest.mark.asyncio
async def test_a_login_that_may_only_read_lists_and_opens_but_never_writes(
    database_url: str, postgres_cluster: Cluster
) -> None:
    """A team member granted SELECT only: the app starts (no schema change is tried
    when the schema is current), lists and shows sessions; a write is a failed save
    that names the refusal, and nothing is lost."""
    writer = PostgresSessionRepo(database_url)
    s = await writer.create(cwd=CWD)
    await s.append_message(user("Shared question"))
    meta = s.metadata
    await s.close()
    await writer.close()
    role = "reader_" + uuid.uuid4().hex[:8]
    secret = uuid.uuid4().hex
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{secret}'")
        admin.execute(f"GRANT USAGE ON SCHEMA desktop_agent TO {role}")
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA desktop_agent TO {role}")
    url = database_url.replace(f"{postgres_cluster.user}:{postgres_cluster.password}@", f"{role}@")
    reader = PostgresSessionRepo(url, password=secret)
    try:
        assert [r.title for r in await reader.listed()] == ["Shared question"]
        opened = await reader.open(meta)
        assert await texts(opened) == ["Shared question"]
        with pytest.raises(SessionWriteError) as err:
            await opened.append_message(user("mine"))
        assert "permission denied" in err.value.message and opened.pending_count == 1
        opened.get_storage().force_close()
    finally:
        await reader.close()


@pytest.mark.asyncio
async def test_the_workbench_store_lists_trashes_exports_and_backs_up(
    database_url: str, tmp_path: Path
) -> None:
    import zipfile

    from desktop_agent.workbench import PostgresStore

    store = PostgresStore(PostgresSessionRepo(database_url))
    try:
        await store.start()
        s = await store.create(CWD)
        await s.append_message(user("Exported question"))
        await s.append_message(assistant("Exported answer"))
        lines = [raw for *_, raw in s.raw_entries()]
        ref = store.ref_of(s)
        await s.close()
        assert store.holds(ref) and await store.find(s.metadata.id) == ref
        assert [r.title for r in await store.sessions("answer")] == ["Exported question"]
        dest = tmp_path / "export.jsonl"
        await store.copy_jsonl(ref, str(dest))
        assert dest.read_bytes().splitlines()[1:] == lines
        assert await store.backup(str(tmp_path / "backup.zip")) == 1
        with zipfile.ZipFile(tmp_path / "backup.zip") as archive:
            (name,) = archive.namelist()
            assert archive.read(name).splitlines()[1:] == lines
        trash_ref = await store.move_to_trash(ref)
        assert trash_ref is not None and await store.sessions() == []
        assert [r.path for r in await store.trash()] == [trash_ref]
        with pytest.raises(SessionError):
            await store.open(trash_ref)
        assert await store.restore(trash_ref) == ref
        forked = await store.fork(ref, CWD)
        assert [raw for *_, raw in forked.raw_entries()] == lines
        await forked.close()
        await store.discard(store.ref_of(forked))
        assert [r.path for r in await store.sessions()] == [ref]
    finally:
        await store.close()
