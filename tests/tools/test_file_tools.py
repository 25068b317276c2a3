"""read, write and edit."""

from __future__ import annotations

import asyncio
import base64
import os

import pytest

from desktop_agent.ai import ImageContent, TextContent
from desktop_agent.tools import EditTool, ReadTool, WriteParams, WriteTool, run_tool
from tests.helpers.sandbox import Sandbox

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 20
IMAGES = {
    "a.png": (PNG, "image/png"),
    "b.jpg": (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x01" * 10, "image/jpeg"),
    "c.gif": (b"GIF89a" + b"\x01\x00\x01\x00" + b"\x00" * 10, "image/gif"),
    "d.webp": (b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 10, "image/webp"),
}


def _lines(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


# ----------------------------------------------------------------------------- read


@pytest.mark.asyncio
async def test_read_whole_small_file(sandbox: Sandbox) -> None:
    result = await run_tool(ReadTool(), "c", {"path": "src/ok.txt"}, sandbox.ctx())
    assert not result.is_error
    assert result.text_content() == "hello\nworld\n"  # exact: the final newline is kept
    assert result.details == {
        "path": "src/ok.txt",
        "startLine": 1,
        "endLine": 2,
        "totalLines": 2,
        "truncated": False,
    }


@pytest.mark.asyncio
async def test_read_offset_and_limit(sandbox: Sandbox) -> None:
    (sandbox.root / "f.txt").write_text(_lines(10))
    result = await run_tool(
        ReadTool(), "c", {"path": "f.txt", "offset": 3, "limit": 2}, sandbox.ctx()
    )
    text = result.text_content()
    assert text.startswith("line 3\nline 4\n\n[Showing lines 3-4 of 10. Use offset=5 to continue.]")
    assert result.details is not None and result.details["truncated"] is True
    tail = await run_tool(ReadTool(), "c", {"path": "f.txt", "offset": 9}, sandbox.ctx())
    assert tail.text_content() == "line 9\nline 10\n"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "content", ["no newline", "one\n", "two\n\n", "\n", "x\n\ny", "é\n", "a\nb\n\n\n"]
)
async def test_read_gives_the_file_exactly(sandbox: Sandbox, content: str) -> None:
    (sandbox.root / "exact.txt").write_text(content, encoding="utf-8")
    result = await run_tool(ReadTool(), "c", {"path": "exact.txt"}, sandbox.ctx())
    assert result.text_content() == content


@pytest.mark.asyncio
async def test_read_offset_beyond_end_is_an_error(sandbox: Sandbox) -> None:
    result = await run_tool(ReadTool(), "c", {"path": "src/ok.txt", "offset": 5}, sandbox.ctx())
    assert result.is_error
    assert "beyond the end" in result.text_content()
    bad = await run_tool(ReadTool(), "c", {"path": "src/ok.txt", "offset": 0}, sandbox.ctx())
    assert bad.is_error and "Invalid arguments" in bad.text_content()


@pytest.mark.asyncio
async def test_read_truncates_by_lines_and_bytes_with_a_note(sandbox: Sandbox) -> None:
    (sandbox.root / "many.txt").write_text(_lines(5000))
    result = await run_tool(ReadTool(), "c", {"path": "many.txt"}, sandbox.ctx())
    text = result.text_content()
    assert text.count("\n") < 2100
    assert "line 1\n" in text and "line 2001\n" not in text
    assert text.endswith(
        "[Showing lines 1-2000 of 5000 (output limit reached). Use offset=2001 to continue.]"
    )
    (sandbox.root / "wide.txt").write_text(("x" * 999 + "\n") * 200)
    wide = await run_tool(ReadTool(), "c", {"path": "wide.txt"}, sandbox.ctx())
    assert wide.details is not None
    assert wide.details["endLine"] == 51
    assert len(wide.text_content().encode()) < 52 * 1024
    assert "Use offset=52 to continue" in wide.text_content()


@pytest.mark.asyncio
async def test_read_cuts_a_single_huge_line(sandbox: Sandbox) -> None:
    (sandbox.root / "one.txt").write_text("y" * 200_000)
    result = await run_tool(ReadTool(), "c", {"path": "one.txt"}, sandbox.ctx())
    assert not result.is_error
    assert "is longer than 50 KB and was cut" in result.text_content()
    assert len(result.text_content()) < 52 * 1024


@pytest.mark.asyncio
async def test_read_crlf_and_empty_files(sandbox: Sandbox) -> None:
    (sandbox.root / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    crlf = await run_tool(ReadTool(), "c", {"path": "crlf.txt"}, sandbox.ctx())
    assert crlf.text_content() == "a\nb\n"  # line ends normalised, the last one kept
    (sandbox.root / "empty.txt").write_bytes(b"")
    empty = await run_tool(ReadTool(), "c", {"path": "empty.txt"}, sandbox.ctx())
    assert not empty.is_error
    assert "is empty" in empty.text_content()


@pytest.mark.asyncio
@pytest.mark.parametrize("name", sorted(IMAGES))
async def test_read_images_as_image_content(sandbox: Sandbox, name: str) -> None:
    data, mime = IMAGES[name]
    (sandbox.root / name).write_bytes(data)
    result = await run_tool(ReadTool(), "c", {"path": name}, sandbox.ctx())
    assert not result.is_error
    image = result.content[1]
    assert isinstance(image, ImageContent)
    assert image.mime_type == mime
    assert base64.b64decode(image.data) == data
    assert image.to_json_dict()["mimeType"] == mime


@pytest.mark.asyncio
async def test_read_refuses_binary_files(sandbox: Sandbox) -> None:
    (sandbox.root / "blob.bin").write_bytes(b"ELF\x00\x01\x02" * 100)
    result = await run_tool(ReadTool(), "c", {"path": "blob.bin"}, sandbox.ctx())
    assert result.is_error
    assert "binary" in result.text_content()


@pytest.mark.asyncio
async def test_read_missing_file_and_directory(sandbox: Sandbox) -> None:
    missing = await run_tool(ReadTool(), "c", {"path": "nope.txt"}, sandbox.ctx())
    assert missing.is_error and missing.text_content() == "File not found: nope.txt"
    directory = await run_tool(ReadTool(), "c", {"path": "src"}, sandbox.ctx())
    assert directory.is_error and "is a directory" in directory.text_content()


# ----------------------------------------------------------------------------- write


@pytest.mark.asyncio
async def test_write_creates_parents_and_overwrites(sandbox: Sandbox) -> None:
    args = {"path": "new/deep/file.txt", "content": "one\n"}
    created = await run_tool(WriteTool(), "c", args, sandbox.ctx())
    assert not created.is_error
    assert created.details == {"path": "new/deep/file.txt", "bytes": 4, "created": True}
    target = sandbox.root / "new" / "deep" / "file.txt"
    assert target.read_text() == "one\n"
    os.chmod(target, 0o640)
    again = await run_tool(WriteTool(), "c", {**args, "content": "two\n"}, sandbox.ctx())
    assert again.details is not None and again.details["created"] is False
    assert target.read_text() == "two\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.txt"]


@pytest.mark.asyncio
async def test_write_is_atomic_when_the_write_fails(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = sandbox.root / "keep.txt"
    target.write_text("original\n")

    def failing_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    result = await run_tool(
        WriteTool(), "c", {"path": "keep.txt", "content": "replacement\n"}, sandbox.ctx()
    )
    assert result.is_error
    assert "No space left" in result.text_content()
    assert target.read_text() == "original\n"
    assert sorted(p.name for p in sandbox.root.iterdir() if p.name.startswith(".keep")) == []


@pytest.mark.asyncio
async def test_concurrent_reader_sees_old_or_new_content_only(sandbox: Sandbox) -> None:
    target = sandbox.root / "big.txt"
    old, new = "a" * 1_000_000, "b" * 1_000_000
    target.write_text(old)
    seen: set[str] = set()

    async def reader() -> None:
        for _ in range(50):
            data = await asyncio.to_thread(target.read_text)
            seen.add("old" if data == old else "new" if data == new else "torn")

    write = run_tool(WriteTool(), "c", {"path": "big.txt", "content": new}, sandbox.ctx())
    await asyncio.gather(reader(), write)
    assert "torn" not in seen
    assert target.read_text() == new


def test_write_preview_shows_a_diff(sandbox: Sandbox) -> None:
    tool = WriteTool()
    preview = tool.preview(WriteParams(path="src/ok.txt", content="hello\nthere\n"), sandbox.ctx())
    assert "overwrite" in preview.summary
    assert preview.diff is not None and "-world\n+there\n" in preview.diff


# ----------------------------------------------------------------------------- edit


@pytest.mark.asyncio
async def test_edit_one_match_replaces_and_returns_a_diff(sandbox: Sandbox) -> None:
    (sandbox.root / "code.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    args = {"path": "code.py", "old_text": "    return 2\n", "new_text": "    return 3\n"}
    result = await run_tool(EditTool(), "c", args, sandbox.ctx())
    assert not result.is_error, result.text_content()
    assert (sandbox.root / "code.py").read_text().endswith("def g():\n    return 3\n")
    assert result.details is not None
    assert result.details["path"] == "code.py"
    assert result.details["firstChangedLine"] == 6
    diff = result.details["diff"]
    assert diff.startswith("--- a/code.py\n+++ b/code.py\n@@")
    assert "-    return 2\n+    return 3\n" in diff
    assert "(+1 -1 lines)" in result.text_content()


@pytest.mark.asyncio
@pytest.mark.parametrize(("old", "count"), [("absent", 0), ("return", 2), ("aa", 2)])
async def test_edit_zero_or_several_matches_change_nothing(
    sandbox: Sandbox, old: str, count: int
) -> None:
    original = "return 1\nreturn 2\naaa\n"
    (sandbox.root / "x.txt").write_text(original)
    args = {"path": "x.txt", "old_text": old, "new_text": "zzz"}
    result = await run_tool(EditTool(), "c", args, sandbox.ctx())
    assert result.is_error
    assert f"found {count} times" in result.text_content()
    assert "exactly once" in result.text_content()
    assert (sandbox.root / "x.txt").read_text() == original


@pytest.mark.asyncio
async def test_edit_keeps_crlf_and_bom(sandbox: Sandbox) -> None:
    target = sandbox.root / "win.txt"
    target.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    args = {"path": "win.txt", "old_text": "two\nthree", "new_text": "2\n3"}
    result = await run_tool(EditTool(), "c", args, sandbox.ctx())
    assert not result.is_error, result.text_content()
    assert target.read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n3\r\n"


@pytest.mark.asyncio
async def test_edit_errors(sandbox: Sandbox) -> None:
    ctx = sandbox.ctx()
    same = await run_tool(
        EditTool(), "c", {"path": "src/ok.txt", "old_text": "a", "new_text": "a"}, ctx
    )
    assert same.is_error and "the same" in same.text_content()
    empty = await run_tool(
        EditTool(), "c", {"path": "src/ok.txt", "old_text": "", "new_text": "a"}, ctx
    )
    assert empty.is_error and "empty" in empty.text_content()
    missing = await run_tool(
        EditTool(), "c", {"path": "nope.txt", "old_text": "a", "new_text": "b"}, ctx
    )
    assert missing.is_error and "File not found" in missing.text_content()
    (sandbox.root / "latin1.txt").write_bytes(b"caf\xe9\n")
    latin = await run_tool(
        EditTool(), "c", {"path": "latin1.txt", "old_text": "caf", "new_text": "x"}, ctx
    )
    assert latin.is_error and "not UTF-8" in latin.text_content()
    unknown = await run_tool(EditTool(), "c", {"path": "x", "oldText": "a"}, ctx)
    assert unknown.is_error and "Invalid arguments" in unknown.text_content()


def test_result_blocks_are_ai_message_blocks(sandbox: Sandbox) -> None:
    result = asyncio.run(run_tool(ReadTool(), "c", {"path": "src/ok.txt"}, sandbox.ctx()))
    assert isinstance(result.content[0], TextContent)
    message = result.to_message("call-9", "read", timestamp=5)
    assert message.to_json_dict() == {
        "role": "toolResult",
        "toolCallId": "call-9",
        "toolName": "read",
        "content": [{"type": "text", "text": "hello\nworld\n"}],
        "details": result.details,
        "isError": False,
        "timestamp": 5,
    }
