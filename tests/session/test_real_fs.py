"""Real disk faults (Linux, as root): a full tmpfs and a read-only bind mount.

The fault layer simulates these everywhere; here the kernel produces them. CI runs as
root on a fresh Debian, where ``mount`` works; elsewhere the tests are skipped, saying
why.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import JsonlSessionRepo, SessionIndex, SessionWriteError, encode_cwd
from tests.helpers.real_fs import _fill, _mount, mounted

CWD = "/home/demo/project"


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


@pytest.mark.asyncio
async def test_full_tmpfs_keeps_entries_and_retry_writes_them(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    with mounted(disk, ["-t", "tmpfs", "-o", "size=256k", "tmpfs"]):
        repo = JsonlSessionRepo(disk / "sessions")
        s = await repo.create(cwd=CWD)
        await s.append_message(user("before"))
        await s.sync()
        filler = _fill(disk)
        failures = 0
        for i in range(5):
            try:
                await s.append_message(user(f"during {i} " + "x" * 3000))
            except SessionWriteError as exc:
                failures += 1
                assert exc.os_error is not None and exc.os_error.errno == errno.ENOSPC  # noqa: PT017 - one allowed outcome
                assert "the disk is full" in exc.message  # noqa: PT017 - one allowed outcome
        assert failures >= 1 and s.pending_count >= 1
        on_disk = Path(s.metadata.path or "").read_bytes()
        assert on_disk.endswith(b"\n")  # no partial line left behind
        filler.unlink()
        written = await s.retry_persistence()
        assert written == failures and s.pending_count == 0
        await s.close()
        again = await repo.open(s.metadata)
        texts = [m.content[0].text[:8] for m in (await again.build_context()).messages]  # type: ignore[union-attr]
        assert texts == ["before", *[f"during {i}"[:8] for i in range(5)]]
        assert again.recovery is None
        await again.close()


@pytest.mark.asyncio
async def test_torn_tail_on_a_full_tmpfs_opens_read_only_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    disk = tmp_path / "disk"
    with mounted(disk, ["-t", "tmpfs", "-o", "size=256k", "tmpfs"]):
        repo = JsonlSessionRepo(disk / "sessions")
        s = await repo.create(cwd=CWD)
        await s.append_message(user("kept"))
        path = Path(s.metadata.path or "")
        await s.close()
        torn = b'{"type":"message","id":"torn","parentId":null,"times'
        with path.open("ab") as fh:
            fh.write(torn)
        before = path.read_bytes()
        filler = _fill(disk)
        s = await repo.open(s.metadata)
        report = s.recovery
        assert s.read_only and report is not None and report.quarantine_error is not None
        assert "disk is full" in report.quarantine_error and "ENOSPC" in report.quarantine_error
        assert "could not be set aside" in report.describe()
        assert path.read_bytes() == before
        assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no empty sidecar
        with pytest.raises(SessionWriteError):
            await s.append_message(user("waits in memory"))
        filler.unlink()
        assert await s.retry_persistence() == 1
        assert s.recovery is not None and s.recovery.quarantine_path is not None
        assert Path(s.recovery.quarantine_path).read_bytes() == torn
        await s.close()
        again = await repo.open(s.metadata)
        assert again.recovery is None and len(await again.get_entries()) == 2
        await again.close()


@pytest.mark.asyncio
async def test_read_only_bind_mount_opens_read_only_with_a_notice(tmp_path: Path) -> None:
    source = tmp_path / "data"
    repo = JsonlSessionRepo(source / "sessions")
    s = await repo.create(cwd=CWD)
    await s.append_message(user("readable"))
    await s.close()
    view = tmp_path / "view"
    with mounted(view, ["--bind", str(source)]):
        why = _mount(["-o", "remount,bind,ro", str(view)])
        if why is not None:
            pytest.skip(why)
        ro = JsonlSessionRepo(view / "sessions")
        listed = await ro.list()
        assert [m.id for m in listed] == [s.metadata.id] and not listed.problems
        path = view / "sessions" / encode_cwd(CWD) / Path(s.metadata.path or "").name
        opened = await ro.open(str(path))
        assert opened.read_only
        reason = opened.read_only_reason or ""
        assert "read-only" in reason and "EROFS" in reason
        context = await opened.build_context()
        assert [m.content[0].text for m in context.messages] == ["readable"]  # type: ignore[union-attr]
        with pytest.raises(SessionWriteError) as err:
            await opened.append_message(user("cannot be written"))
        assert err.value.code == "read_only" and err.value.pending_count == 1
        await opened.close()  # keeps the unsaved entry (and the file) open: nothing lost
        assert not opened.closed
        opened.get_storage().force_close()
        index = SessionIndex(tmp_path / "index.sqlite", ro)
        try:
            report = await index.reconcile()
            assert report.added == (str(path),) and not report.unreadable
        finally:
            index.close()
