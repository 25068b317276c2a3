"""One measurement of the session layer in a fresh process (for `benchmarks._vs_pi`).

``python -m benchmarks._sessionprobe open <session file> <entry index dir | ->`` prints
one JSON object: the seconds of ``repo.open`` + ``build_context`` (imports excluded, as
for Pi), the bytes of the file read, and the peak RSS of the operation (VmHWM reset right
before it, minus the RSS then) and of the process. ``progressive`` measures
``open_progressive`` instead: until the branch's end is known, and until the session is
complete. ``append <session file> <messages.json> <count>`` appends through `Session` (our
app as the "other process" that grew the file).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import time
from typing import Any

from benchmarks._memprobe import peak_rss, reset_hwm, rss_now, status_kb
from desktop_agent.ai import parse_message
from desktop_agent.session import JsonlSessionRepo
from desktop_agent.session._platform import FileOps


class _Counting(FileOps):
    def __init__(self) -> None:
        self.read = 0

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        data = super().pread(fd, size, offset)
        self.read += len(data)
        return data


def _repo(path: str, index_dir: str, ops: FileOps) -> JsonlSessionRepo:
    root = os.path.dirname(os.path.dirname(path))
    return JsonlSessionRepo(
        root, entry_index_dir=None if index_dir == "-" else index_dir, file_ops=ops
    )


async def _open(path: str, index_dir: str, progressive: bool) -> dict[str, Any]:
    ops = _Counting()
    repo = _repo(path, index_dir, ops)
    await asyncio.to_thread(lambda: None)  # start the worker thread before measuring
    gc.collect()
    hwm_reset = reset_hwm()
    before = rss_now()
    result: dict[str, Any] = {"file_bytes": await asyncio.to_thread(os.path.getsize, path)}
    start = time.perf_counter()
    if progressive:
        opening = await repo.open_progressive(path, tail=50)
        result["tail_s"] = time.perf_counter() - start
        result["tail_messages"] = len(opening.tail.messages)
        session = await opening.session()
    else:
        session = await repo.open(path)
    opened = time.perf_counter()
    context = await session.build_context()
    done = time.perf_counter()
    hwm = status_kb("VmHWM") if hwm_reset else None
    result.update(
        open_s=opened - start,
        build_s=done - opened,
        total_s=done - start,
        messages=len(context.messages),
        entries=session.entry_count,
        bytes_read=ops.read,
        rss_before=before,
        peak_delta=(hwm if hwm is not None else peak_rss()) - before,
        peak_rss=hwm if hwm is not None else peak_rss(),
        held=rss_now() - before,
    )
    await session.close()
    return result


async def _append(path: str, messages_file: str, count: int) -> dict[str, Any]:
    raw = json.loads(await asyncio.to_thread(_read, messages_file))
    messages = [parse_message(m) for m in raw]
    session = await JsonlSessionRepo(os.path.dirname(os.path.dirname(path))).open(path)
    start = time.perf_counter()
    for i in range(count):
        await session.append_message(messages[i % len(messages)])
    await session.close()
    return {"appended": count, "seconds": time.perf_counter() - start}


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] in ("open", "progressive"):
        result = asyncio.run(_open(argv[1], argv[2], argv[0] == "progressive"))
    elif len(argv) == 4 and argv[0] == "append":
        result = asyncio.run(_append(argv[1], argv[2], int(argv[3])))
    else:
        print(__doc__)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
