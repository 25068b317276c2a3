"""The file tools: `read`, `write` and `edit`."""

from __future__ import annotations

import asyncio
import base64
import codecs
import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pydantic import Field

from desktop_agent.ai import ImageContent, TextContent
from desktop_agent.tools._base import CallPreview, Tool, ToolContext, ToolParams, ToolResult
from desktop_agent.tools._errors import ToolError
from desktop_agent.tools._workspace import Workspace

MAX_READ_LINES = 2000
MAX_READ_BYTES = 50 * 1024
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_EDIT_BYTES = 20 * 1024 * 1024
MAX_PREVIEW_DIFF_LINES = 400
_SNIFF_BYTES = 8192


def image_mime_type(head: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP image from its first bytes."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _not_found(ws: Workspace, real: Path) -> ToolError:
    return ToolError(f"File not found: {ws.display(real)}")


# ----------------------------------------------------------------------------- read


class ReadParams(ToolParams):
    path: str = Field(description="File path, relative to the workspace root.")
    offset: int | None = Field(
        default=None, ge=1, description="First line to read (1-based). Default: 1."
    )
    limit: int | None = Field(
        default=None, ge=1, description=f"Number of lines to read (at most {MAX_READ_LINES})."
    )


class ReadTool(Tool[ReadParams]):
    name = "read"
    label = "Read"
    description = (
        "Read a file in the workspace. Text files are returned as text, at most "
        f"{MAX_READ_LINES} lines or {MAX_READ_BYTES // 1024} KB per call (use offset/limit "
        "for more); PNG, JPEG, GIF and WebP images are returned as images."
    )
    parameters = ReadParams

    def __init__(self, max_lines: int = MAX_READ_LINES, max_bytes: int = MAX_READ_BYTES) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes

    async def execute(self, call_id: str, args: ReadParams, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._read, args, ctx.workspace)

    def _read(self, args: ReadParams, ws: Workspace) -> ToolResult:
        real = ws.resolve_read(args.path)  # a skill's file may lie outside the workspace
        shown = ws.display(real)
        try:
            fd = ws.open_file(real)
        except FileNotFoundError:
            raise _not_found(ws, real) from None
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(_SNIFF_BYTES)
            mime = image_mime_type(head)
            if mime is not None:
                if size > MAX_IMAGE_BYTES:
                    raise ToolError(
                        f"{shown} is an image of {size} bytes; images over "
                        f"{MAX_IMAGE_BYTES // (1024 * 1024)} MB are not read"
                    )
                data = head + f.read()
                return ToolResult(
                    [
                        TextContent(text=f"Read image file {shown} [{mime}]"),
                        ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime),
                    ],
                    {"path": shown, "mimeType": mime, "bytes": len(data)},
                )
            if b"\x00" in head:
                raise ToolError(
                    f"{shown} looks like a binary file ({size} bytes); it is not shown as text"
                )
            return self._read_text(f, head, args, shown)

    def _read_text(self, f: BinaryIO, head: bytes, args: ReadParams, shown: str) -> ToolResult:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        first = args.offset or 1
        max_lines = min(args.limit or self.max_lines, self.max_lines)
        out: list[str] = []
        used = 0
        total = 0
        cut_by_size = False
        long_line = False
        pending = ""
        chunk = head
        ends_with_newline = False
        while True:
            text = pending + decoder.decode(chunk, final=not chunk)
            if not chunk:
                ends_with_newline = text == ""  # nothing after the last "\n"
            lines = text.split("\n")
            pending = lines.pop() if chunk else ""
            if not chunk and lines == [""]:
                lines = []
            for line in lines:
                total += 1
                if line.endswith("\r"):
                    line = line[:-1]
                if total < first or len(out) >= max_lines or cut_by_size:
                    continue
                size = len(line.encode("utf-8")) + 1
                if used + size > self.max_bytes:
                    if not out:
                        line = line.encode("utf-8")[: self.max_bytes].decode("utf-8", "ignore")
                        out.append(line)
                        long_line = True
                    cut_by_size = True
                    continue
                out.append(line)
                used += size
            if not chunk:
                break
            chunk = f.read(1 << 16)
        if total and first > total:
            raise ToolError(f"Offset {first} is beyond the end of {shown} ({total} lines)")
        if total == 0:
            return ToolResult.text(
                f"({shown} is empty)", {"path": shown, "totalLines": 0, "truncated": False}
            )
        last = first + len(out) - 1
        body = "\n".join(out)
        truncated = last < total
        if not truncated and not long_line and ends_with_newline:
            body += "\n"  # the file's own final newline: the output is the file, exactly
        if long_line:
            body += (
                f"\n\n[Line {first} is longer than {self.max_bytes // 1024} KB and was cut. "
                f"Use bash (e.g. head -c) to see more of it.]"
            )
        elif truncated:
            why = "" if args.limit and len(out) == args.limit else " (output limit reached)"
            body += (
                f"\n\n[Showing lines {first}-{last} of {total}{why}. "
                f"Use offset={last + 1} to continue.]"
            )
        details = {
            "path": shown,
            "startLine": first,
            "endLine": last,
            "totalLines": total,
            "truncated": truncated or long_line,
        }
        return ToolResult.text(body, details)


# ----------------------------------------------------------------------------- write


class WriteParams(ToolParams):
    path: str = Field(description="File path, relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


def _existing_text(ws: Workspace, real: Path) -> str | None:
    try:
        data = ws.read_bytes(real, MAX_EDIT_BYTES + 1)
    except (FileNotFoundError, ToolError):
        return None
    return data.decode("utf-8", "replace")


def _diff(old: str, new: str, shown: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{shown}",
        tofile=f"b/{shown}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _clip_diff(diff: str) -> str:
    lines = diff.splitlines(keepends=True)
    if len(lines) <= MAX_PREVIEW_DIFF_LINES:
        return diff
    more = len(lines) - MAX_PREVIEW_DIFF_LINES
    return "".join(lines[:MAX_PREVIEW_DIFF_LINES]) + f"[... {more} more diff lines]\n"


class WriteTool(Tool[WriteParams]):
    name = "write"
    label = "Write"
    description = (
        "Create or overwrite a file in the workspace with the given content. Parent "
        "directories are created. The file is replaced atomically."
    )
    parameters = WriteParams
    execution_mode = "sequential"
    needs_approval = True

    async def execute(self, call_id: str, args: WriteParams, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._write, args, ctx.workspace)

    def _write(self, args: WriteParams, ws: Workspace) -> ToolResult:
        real = ws.resolve(args.path, for_write=True)
        data = args.content.encode("utf-8", "surrogateescape")
        created = ws.atomic_write(real, data)
        shown = ws.display(real)
        verb = "Created" if created else "Wrote"
        return ToolResult.text(
            f"{verb} {shown} ({len(data)} bytes)",
            {"path": shown, "bytes": len(data), "created": created},
        )

    def preview(self, args: WriteParams, ctx: ToolContext) -> CallPreview:
        ws = ctx.workspace
        real = ws.resolve(args.path, for_write=True)
        shown = ws.display(real)
        old = _existing_text(ws, real)
        size = len(args.content.encode("utf-8", "surrogateescape"))
        what = "new file" if old is None else "overwrite"
        return CallPreview(
            summary=f"write {shown} ({size} bytes, {what})",
            diff=_clip_diff(_diff(old or "", args.content, shown)),
        )


# ----------------------------------------------------------------------------- edit


class EditParams(ToolParams):
    path: str = Field(description="File path, relative to the workspace root.")
    old_text: str = Field(
        description="Exact text to replace; must occur exactly once, whitespace included."
    )
    new_text: str = Field(description="The replacement text.")


def count_occurrences(text: str, needle: str) -> tuple[int, int]:
    """How often ``needle`` occurs in ``text`` (overlaps counted) and the first index."""
    first = text.find(needle)
    count = 0
    i = first
    while i != -1:
        count += 1
        i = text.find(needle, i + 1)
    return count, first


@dataclass(frozen=True, slots=True)
class _EditPlan:
    real: Path
    shown: str
    data: bytes
    diff: str
    first_line: int
    added: int
    removed: int


def _plan_edit(ws: Workspace, args: EditParams) -> _EditPlan:
    real = ws.resolve(args.path, for_write=True)
    shown = ws.display(real)
    if not args.old_text:
        raise ToolError("old_text is empty; give the exact text to replace")
    if args.old_text == args.new_text:
        raise ToolError("old_text and new_text are the same; nothing to change")
    try:
        raw = ws.read_bytes(real, MAX_EDIT_BYTES + 1)
    except FileNotFoundError:
        raise _not_found(ws, real) from None
    if len(raw) > MAX_EDIT_BYTES:
        raise ToolError(f"{shown} is larger than {MAX_EDIT_BYTES // (1024 * 1024)} MB")
    bom = raw.startswith(codecs.BOM_UTF8)
    try:
        text = raw[3 if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not UTF-8 text; edit does not rewrite it") from None
    crlf = "\r\n" in text
    if crlf:
        text = text.replace("\r\n", "\n")
    old = args.old_text.replace("\r\n", "\n")
    new = args.new_text.replace("\r\n", "\n")
    count, index = count_occurrences(text, old)
    if count == 0:
        raise ToolError(
            f"old_text was found 0 times in {shown}; it must match exactly once, "
            "including whitespace and indentation. Read the file and copy the text exactly."
        )
    if count > 1:
        raise ToolError(
            f"old_text was found {count} times in {shown}; it must match exactly once. "
            "Include more surrounding lines to make it unique."
        )
    updated = text[:index] + new + text[index + len(old) :]
    diff = _diff(text, updated, shown)
    added = sum(1 for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---"))
    if crlf:
        updated = updated.replace("\n", "\r\n")
    data = (codecs.BOM_UTF8 if bom else b"") + updated.encode("utf-8")
    first_line = text.count("\n", 0, index) + 1
    return _EditPlan(real, shown, data, diff, first_line, added, removed)


class EditTool(Tool[EditParams]):
    name = "edit"
    label = "Edit"
    description = (
        "Edit a file in the workspace by replacing old_text with new_text. old_text must "
        "match exactly once (whitespace included); otherwise nothing is changed and the "
        "error says how many matches there were."
    )
    parameters = EditParams
    execution_mode = "sequential"
    needs_approval = True

    async def execute(self, call_id: str, args: EditParams, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._edit, args, ctx.workspace)

    def _edit(self, args: EditParams, ws: Workspace) -> ToolResult:
        plan = _plan_edit(ws, args)
        ws.atomic_write(plan.real, plan.data)
        return ToolResult.text(
            f"Edited {plan.shown}: replaced 1 occurrence (+{plan.added} -{plan.removed} lines)",
            {"path": plan.shown, "diff": plan.diff, "firstChangedLine": plan.first_line},
        )

    def preview(self, args: EditParams, ctx: ToolContext) -> CallPreview:
        plan = _plan_edit(ctx.workspace, args)
        return CallPreview(summary=f"edit {plan.shown}", diff=_clip_diff(plan.diff))
