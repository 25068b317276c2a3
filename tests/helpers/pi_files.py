"""Session files in the Pi CLI's formats, written by hand: v1 and v2 files (older Pi
formats, read-only until converted) placed in a sessions folder the way Pi lays it out, v3
sessions in a Pi folder, and the line the Pi CLI appends when it continues a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from desktop_agent.ai import TextContent, UserMessage
from desktop_agent.session import JsonlSessionRepo, encode_cwd
from tests.helpers.workbench import answer, user

CWD = "/home/u/project"
T = "2025-12-08T22:41:0{}.000Z"


def line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def msg(role: str, text: str, n: int, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        body.update(
            api="anthropic-messages",
            provider="anthropic",
            model="claude-opus-4-5",
            usage={"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0},
            stopReason="stop",
        )
    body.update(extra)
    body["timestamp"] = 1765233665000 + n
    return {"type": "message", "timestamp": T.format(n), "message": body}


V1_HEADER = {
    "type": "session",
    "id": "ffae836b-9420-4060-ac13-7745215f90ff",
    "timestamp": "2025-12-09T00:53:29.825Z",
    "cwd": CWD,
    "provider": "anthropic",
    "modelId": "claude-opus-4-5",
    "thinkingLevel": "off",
}


def v1_file() -> bytes:
    """Header (line 0), 4 messages, a compaction keeping from index 3, one more turn."""
    entries = [
        msg("user", "first question", 1),
        msg("assistant", "first answer", 2),
        msg("user", "second question", 3),  # index 3: kept by the compaction
        msg("assistant", "second answer", 4),
        {
            "type": "compaction",
            "timestamp": T.format(5),
            "summary": "## Goal\nAnswer questions.",
            "firstKeptEntryIndex": 3,
            "tokensBefore": 1234,
        },
        msg("user", "third question", 6),
        msg("assistant", "third answer", 7),
    ]
    return line(V1_HEADER) + b"".join(line(e) for e in entries)


def v2_file() -> bytes:
    header = {"type": "session", "version": 2, "id": "v2-session", "timestamp": T.format(0)}
    header["cwd"] = CWD
    e: list[dict[str, Any]] = [
        {**msg("user", "hi", 1), "id": "u1", "parentId": None},
        {**msg("assistant", "hello", 2), "id": "a1", "parentId": "u1"},
        {**msg("user", "abandoned", 3), "id": "u2", "parentId": "a1"},
        {
            "type": "message",
            "id": "h1",
            "parentId": "a1",
            "timestamp": T.format(4),
            "message": {
                "role": "hookMessage",
                "customType": "reminder",
                "content": "A hook said this.",
                "display": True,
                "timestamp": 1765233665004,
            },
        },
        {**msg("user", "after the hook", 5), "id": "u3", "parentId": "h1"},
        {**msg("assistant", "done", 6), "id": "a3", "parentId": "u3"},
    ]
    return line(header) + b"".join(line(x) for x in e)


def place(root: Path, name: str, data: bytes) -> Path:
    path = root / encode_cwd(CWD) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


async def pi_session(folder: Path, cwd: Path, *texts: str) -> str:
    """A v3 session in the Pi folder (the layout and format the Pi CLI writes)."""
    session = await JsonlSessionRepo(folder).create(cwd=str(cwd))
    for n, text in enumerate(texts):
        await session.append_message(user(text, 2 * n + 1))
        await session.append_message(answer(f"answer to {text}", 2 * n + 2))
    await session.close()
    return session.metadata.path or ""


def outside_append(path: str, parent: str | None, text: str, entry_id: str) -> None:
    """What the Pi CLI does when it continues the file: one more line, no lock."""
    line = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2099-01-01T10:00:00.000Z",
        "message": UserMessage(content=[TextContent(text=text)], timestamp=5).to_json_dict(),
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, separators=(",", ":")) + "\n")
