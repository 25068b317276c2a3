"""Deterministic writer of realistic Pi-v3 session files (`write_session`, `SessionWriter`).

The lines are written directly (no `Session` round trip, for speed) in exactly the shape
`desktop_agent.session.Session` writes them: key order ``type, id, parentId, timestamp``
then the type's fields, compact JSON with raw non-ASCII (``_codec.serialize``), message
objects as ``AgentMessage.to_json_dict()`` produces them for models built by the harness,
8-hex-char entry ids, ``leaf`` entries for every branch switch (``Session.move_to``).

Content is sliced from pre-generated pools (source code, logs, prose, base64) so that a
100 MB session is written in a few seconds while still looking like a coding-agent
transcript: escapes (newlines, quotes, backslashes), some non-ASCII, tool outputs from a
few bytes to 200 KB, thinking blocks with provider signatures, realistic usage and cost.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

from benchmarks._pools import FILES, IDENTS, LABELS, MODELS, TOOL_WEIGHTS, TOOLS, Pools, log_uniform
from desktop_agent.session import encode_cwd
from desktop_agent.session._codec import serialize


def iso(ms: int) -> str:
    """``new Date(ms).toISOString()``."""
    dt = datetime.fromtimestamp(ms // 1000, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def dumps(obj: dict[str, Any]) -> bytes:
    """One line exactly as `Session` writes it (its own serializer: JS number layout)."""
    return serialize(obj)


def uuidv7_from(rng: random.Random, ms: int) -> str:
    h = f"{ms:012x}" + f"{rng.getrandbits(80):020x}"
    h = h[:12] + "7" + h[13:16] + "8" + h[17:]
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


class _Full(Exception):
    """The session reached its entry count."""


@dataclass
class Profile:
    """Knobs of one session's shape (sizes are in bytes / characters)."""

    long_output_p: float = 0.0037  # tool outputs of 10-200 KB
    medium_output_p: float = 0.04  # 2-6 KB
    branch_p: float = 0.05  # per turn: go back and continue elsewhere
    compaction_tokens: int = 160_000  # compact when the context reaches this
    compaction: bool = True
    image_p: float = 0.004  # user message with a screenshot


@dataclass
class SessionStats:
    entries: int = 0
    bytes: int = 0
    leaf: str | None = None
    path_length: int = 0
    messages: int = 0
    tool_results: int = 0
    long_outputs: int = 0
    branches: int = 0
    branch_summaries: int = 0
    labels: int = 0
    compactions: int = 0
    types: dict[str, int] = field(default_factory=dict)


@dataclass
class _PathItem:
    id: str
    tag: str  # "user" | "assistant" | "toolResult" | entry type
    size: int


class SessionWriter:
    """Writes one session file line by line, tracking the tree like `Session` does."""

    def __init__(
        self,
        fh: IO[bytes],
        rng: random.Random,
        pools: Pools,
        *,
        start_ms: int,
        limit: int,
        profile: Profile,
    ) -> None:
        self.fh = fh
        self.rng = rng
        self.pools = pools
        self.ms = start_ms
        self.limit = limit
        self.profile = profile
        self.ids: set[str] = set()
        self.leaf: str | None = None
        self.path: list[_PathItem] = []
        self.cum: list[int] = [0]  # cumulative message bytes along the path
        self.kept_from: list[tuple[int, int]] = []  # (compaction index, first kept index)
        self.stats = SessionStats()
        self.model = MODELS[0]
        self.read_files: list[str] = []
        self.modified_files: list[str] = []

    # ------------------------------------------------------------------ low level

    def _id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def _tick(self, lo: int, hi: int) -> int:
        self.ms += self.rng.randint(lo, hi)
        return self.ms

    def _line(self, obj: dict[str, Any]) -> int:
        line = dumps(obj) + b"\n"
        self.fh.write(line)
        st = self.stats
        st.entries += 1
        st.bytes += len(line)
        st.types[obj["type"]] = st.types.get(obj["type"], 0) + 1
        return len(line)

    def _push(self, entry_id: str, tag: str, size: int) -> None:
        self.path.append(_PathItem(entry_id, tag, size))
        counted = size if tag in ("user", "assistant", "toolResult") else 0
        self.cum.append(self.cum[-1] + counted)
        self.leaf = entry_id
        if self.stats.entries >= self.limit:
            raise _Full

    def append(self, kind: str, fields: dict[str, Any], tag: str | None = None) -> str:
        """`Session._append`: a child of the leaf that becomes the leaf."""
        entry_id = self._id()
        obj: dict[str, Any] = {
            "type": kind,
            "id": entry_id,
            "parentId": self.leaf,
            "timestamp": iso(self._tick(5, 400)),
        }
        obj.update(fields)
        size = self._line(obj)
        self._push(entry_id, tag or kind, size)
        return entry_id

    def move_to(self, index: int | None, summary: dict[str, Any] | None) -> None:
        """`Session.move_to`: a ``leaf`` entry, then optionally a ``branch_summary``."""
        target = self.path[index].id if index is not None else None
        self._line(
            {
                "type": "leaf",
                "id": self._id(),
                "parentId": target,  # as `Session.move_to` writes it (the target)
                "timestamp": iso(self._tick(1000, 30_000)),
                "targetId": target,
            }
        )
        keep = index + 1 if index is not None else 0
        del self.path[keep:]
        del self.cum[keep + 1 :]
        while self.kept_from and self.kept_from[-1][0] >= keep:
            self.kept_from.pop()
        self.leaf = target
        self.stats.branches += 1
        if self.stats.entries >= self.limit:
            raise _Full
        if summary is not None:
            entry_id = self._id()
            obj: dict[str, Any] = {
                "type": "branch_summary",
                "id": entry_id,
                "parentId": target,
                "timestamp": iso(self._tick(2000, 20_000)),
                "fromId": target if target is not None else "root",
            }
            obj.update(summary)
            self.stats.branch_summaries += 1
            self._push(entry_id, "branch_summary", self._line(obj))

    # ------------------------------------------------------------------ content

    def code(self, n: int) -> str:
        pool = self.pools.code
        n = min(n, len(pool) - 1)
        start = self.rng.randrange(len(pool) - n)
        return pool[start : start + n]

    def prose(self, n: int) -> str:
        pool = self.pools.prose
        n = min(max(n, 1), len(pool) - 1)
        start = self.rng.randrange(len(pool) - n)
        return pool[start : start + n].strip() or "ok"

    def b64(self, n: int) -> str:
        pool = self.pools.b64
        out: list[str] = []
        while n > 0:
            k = min(n, len(pool) - 1)
            start = self.rng.randrange(len(pool) - k)
            out.append(pool[start : start + k])
            n -= k
        return "".join(out)

    def context_tokens(self) -> int:
        start = self.kept_from[-1][1] if self.kept_from else 0
        return (self.cum[-1] - self.cum[start]) // 4

    def usage(self, output_chars: int) -> dict[str, Any]:
        rng = self.rng
        ctx = self.context_tokens() + 3_000
        fresh = rng.randint(50, 3_000)
        cache_read = max(ctx - fresh, 0)
        cache_write = fresh if self.model[1] == "anthropic" else 0
        output = max(output_chars // 4, 1) + rng.randint(0, 200)
        p_in, p_out, p_cr, p_cw = self.model[3]
        cost = {
            "input": fresh * p_in / 1e6,
            "output": output * p_out / 1e6,
            "cacheRead": cache_read * p_cr / 1e6,
            "cacheWrite": cache_write * p_cw / 1e6,
        }
        cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
        # JSON.stringify writes 0.0 as 0, and so does Session (its numbers are int | float).
        cost = {k: int(v) if v.is_integer() else v for k, v in cost.items()}
        return {
            "input": fresh,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "totalTokens": fresh + output + cache_read + cache_write,
            "cost": cost,
        }

    def thinking_block(self) -> dict[str, Any]:
        rng = self.rng
        block: dict[str, Any] = {
            "type": "thinking",
            "thinking": self.prose(log_uniform(rng, 20, 700)),
        }
        api = self.model[0]
        if api == "anthropic-messages":
            block["thinkingSignature"] = self.b64(rng.randint(100, 350))
        elif api == "openai-responses":
            item = {
                "type": "reasoning",
                "id": "rs_" + self.b64(24),
                "encrypted_content": self.b64(rng.randint(100, 300)),
            }
            block["thinkingSignature"] = json.dumps(item, separators=(",", ":"))
        return block

    def tool_args(self, tool: str) -> dict[str, Any]:
        rng = self.rng
        path = rng.choice(FILES)
        if tool == "read":
            args: dict[str, Any] = {"path": path}
            if rng.random() < 0.3:
                args["offset"] = rng.randint(1, 800)
                args["limit"] = 200
            self.read_files.append(path)
            return args
        if tool == "bash":
            cmd = rng.choice(
                (
                    "cd /home/dev/project && .venv/bin/pytest -x -q tests/session",
                    "git status --short && git diff --stat",
                    "ruff check . && mypy desktop_agent",
                    'grep -rn "def append" desktop_agent | head -50',
                    "ls -la desktop_agent/session",
                    "npm test -- --reporter=dot",
                )
            )
            return {"command": cmd, "timeout": 120}
        if tool == "edit":
            self.modified_files.append(path)
            return {
                "path": path,
                "oldText": self.code(log_uniform(rng, 30, 500)),
                "newText": self.code(log_uniform(rng, 30, 700)),
            }
        if tool == "write":
            self.modified_files.append(path)
            return {"path": path, "content": self.code(log_uniform(rng, 200, 4_000))}
        if tool == "grep":
            return {"pattern": rng.choice(IDENTS), "path": "desktop_agent", "ignoreCase": False}
        if tool == "find":
            return {"pattern": "*.py", "path": "."}
        return {"path": "."}

    def tool_output(self) -> str:
        rng = self.rng
        r = rng.random()
        p = self.profile
        if r < p.long_output_p:
            self.stats.long_outputs += 1
            return self.code(log_uniform(rng, 10_000, 200_000))
        if r < p.long_output_p + p.medium_output_p:
            return self.code(log_uniform(rng, 2_000, 6_000))
        return self.code(log_uniform(rng, 20, 1_000))

    # ------------------------------------------------------------------ messages

    def user(self) -> str:
        rng = self.rng
        text = self.prose(log_uniform(rng, 20, 900))
        if rng.random() < 0.03:
            text += "\n\n```\n" + self.code(log_uniform(rng, 500, 12_000)) + "\n```"
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if rng.random() < self.profile.image_p:
            content.append(
                {
                    "type": "image",
                    "data": self.b64(log_uniform(rng, 20_000, 150_000)),
                    "mimeType": "image/png",
                }
            )
        message = {"role": "user", "content": content, "timestamp": self._tick(2000, 120_000)}
        self.stats.messages += 1
        return self.append("message", {"message": message}, "user")

    def assistant(self, tool_calls: list[dict[str, Any]], final: bool) -> str:
        rng = self.rng
        api, provider, model, _ = self.model
        content: list[dict[str, Any]] = []
        if rng.random() < (0.9 if final else 0.6) * (0.5 if provider == "local" else 1.0):
            content.append(self.thinking_block())
        if final:
            content.append({"type": "text", "text": self.prose(log_uniform(rng, 60, 2_000))})
        elif rng.random() < 0.4:
            content.append({"type": "text", "text": self.prose(log_uniform(rng, 20, 300))})
        content.extend(tool_calls)
        out_chars = sum(len(json.dumps(b)) for b in content)
        stop = "toolUse" if tool_calls else "stop"
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": api,
            "provider": provider,
            "model": model,
        }
        if provider != "local":
            message["responseId"] = ("msg_" if provider == "anthropic" else "resp_") + self.b64(
                24
            ).replace("/", "x").replace("+", "y")
        message["usage"] = self.usage(out_chars)
        r = rng.random()
        if final and r < 0.01:
            stop = "error"
        elif final and r < 0.015:
            stop = "aborted"
        message["stopReason"] = stop
        if stop == "error":
            message["errorMessage"] = "529 overloaded_error: Overloaded"
        elif stop == "aborted":
            message["errorMessage"] = "Request was aborted"
        message["timestamp"] = self._tick(1500, 60_000)
        self.stats.messages += 1
        return self.append("message", {"message": message}, "assistant")

    def tool_result(self, call: dict[str, Any]) -> str:
        rng = self.rng
        output = self.tool_output()
        is_error = rng.random() < 0.06
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": [{"type": "text", "text": output}],
        }
        if call["name"] == "bash":
            details: dict[str, Any] = {"exitCode": 1 if is_error else 0}
            if len(output) > 50_000:
                details["truncation"] = {"truncated": True, "totalBytes": len(output) * 3}
                details["fullOutputPath"] = f"/tmp/pi-bash-{self.b64(8)}.log".replace("/", "/")
            message["details"] = details
        elif call["name"] == "edit":
            message["details"] = {"diff": self.code(rng.randint(100, 1_500))}
        message["isError"] = is_error
        message["timestamp"] = self._tick(20, 20_000)
        self.stats.messages += 1
        self.stats.tool_results += 1
        return self.append("message", {"message": message}, "toolResult")

    def tool_call(self) -> dict[str, Any]:
        tool = self.rng.choices(TOOLS, TOOL_WEIGHTS)[0]
        call_id = (
            "toolu_" + self.b64(22).replace("/", "A").replace("+", "B")
            if self.model[1] == "anthropic"
            else "call_" + self.b64(24).replace("/", "A").replace("+", "B")
        )
        return {"type": "toolCall", "id": call_id, "name": tool, "arguments": self.tool_args(tool)}

    # ------------------------------------------------------------------ structure

    def files_details(self) -> dict[str, Any]:
        read = sorted(set(self.read_files[-30:]))
        modified = sorted(set(self.modified_files[-30:]))
        return {"readFiles": read, "modifiedFiles": modified}

    def turn(self) -> None:
        rng = self.rng
        self.user()
        steps = min(int(rng.expovariate(1 / 4.5)), 40)
        for _ in range(steps):
            n_calls = 1 if rng.random() < 0.85 else rng.randint(2, 4)
            calls = [self.tool_call() for _ in range(n_calls)]
            self.assistant(calls, final=False)
            for call in calls:
                self.tool_result(call)
        self.assistant([], final=True)

    def compact(self) -> None:
        """A compaction keeping the recent ~20k tokens, cut at a user/assistant message."""
        keep_bytes = 80_000
        i = len(self.path) - 1
        acc = 0
        start = self.kept_from[-1][1] if self.kept_from else 0
        while i > start and (acc < keep_bytes or self.path[i].tag not in ("user", "assistant")):
            acc += self.path[i].size
            i -= 1
        tokens_before = self.context_tokens()
        fields: dict[str, Any] = {
            "summary": "## Goal\n"
            + self.prose(self.rng.randint(200, 600))
            + "\n\n## Progress\n"
            + self.prose(self.rng.randint(500, 3_000))
            + "\n\n## Next steps\n"
            + self.prose(self.rng.randint(100, 600)),
            "firstKeptEntryId": self.path[i].id,
            "tokensBefore": tokens_before,
            "details": self.files_details(),
        }
        if self.rng.random() < 0.7:
            fields["fromHook"] = False
        self.append("compaction", fields)
        self.kept_from.append((len(self.path) - 1, i))
        self.stats.compactions += 1

    def branch(self) -> None:
        """Go back a few turns (to a user message's parent or an assistant) and go on."""
        rng = self.rng
        lo = max(len(self.path) - 60, 0)
        candidates = [
            j for j in range(lo, len(self.path) - 1) if self.path[j].tag in ("user", "assistant")
        ]
        if not candidates:
            return
        j = rng.choice(candidates)
        if self.path[j].tag == "user":
            j -= 1  # navigating to a user message puts the leaf on its parent
        summary: dict[str, Any] | None = None
        if rng.random() < 0.5:
            summary = {"summary": self.prose(rng.randint(200, 2_500))}
            if rng.random() < 0.8:
                summary["details"] = self.files_details()
        self.move_to(j if j >= 0 else None, summary)

    def extras(self) -> None:
        rng = self.rng
        r = rng.random()
        if r < 0.06:
            lo = max(len(self.path) - 50, 0)
            if lo < len(self.path):
                target = self.path[rng.randrange(lo, len(self.path))].id
                label = rng.choice(LABELS)
                fields: dict[str, Any] = {"targetId": target}
                if label.strip():
                    fields["label"] = label
                self.append("label", fields)
                self.stats.labels += 1
        elif r < 0.075:
            self.model = rng.choice(MODELS)
            self.append("model_change", {"provider": self.model[1], "modelId": self.model[2]})
        elif r < 0.085:
            level = rng.choice(("off", "low", "medium", "high"))
            self.append("thinking_level_change", {"thinkingLevel": level})
        elif r < 0.09:
            names = rng.sample(TOOLS, rng.randint(2, len(TOOLS)))
            self.append("active_tools_change", {"activeToolNames": names})
        elif r < 0.10:
            self.append(
                "custom",
                {"customType": "desktop-agent.ui", "data": {"scroll": rng.randint(0, 9999)}},
            )
        elif r < 0.105:
            self.append(
                "custom_message",
                {
                    "customType": "desktop-agent.note",
                    "content": self.prose(rng.randint(40, 400)),
                    "display": True,
                    "details": {"source": "user"},
                },
            )
        elif r < 0.107:
            self.append("session_info", {"name": self.prose(rng.randint(10, 40))})

    def run(self) -> SessionStats:
        rng = self.rng
        try:
            self.append("model_change", {"provider": self.model[1], "modelId": self.model[2]})
            self.append("thinking_level_change", {"thinkingLevel": "medium"})
            self.turn()
            self.append("session_info", {"name": self.prose(rng.randint(10, 50))})
            while True:
                if (
                    self.profile.compaction
                    and self.context_tokens() > self.profile.compaction_tokens
                ):
                    self.compact()
                if rng.random() < self.profile.branch_p:
                    self.branch()
                self.extras()
                self.turn()
        except _Full:
            pass
        self.stats.leaf = self.leaf
        self.stats.path_length = len(self.path)
        return self.stats


def write_session(
    path: str,
    *,
    rng: random.Random,
    pools: Pools,
    cwd: str,
    entries: int,
    created_ms: int,
    profile: Profile | None = None,
    metadata: dict[str, Any] | None = None,
    session_id: str | None = None,
) -> SessionStats:
    """Write a whole session file: header plus exactly ``entries`` entries."""
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": session_id or uuidv7_from(rng, created_ms),
        "timestamp": iso(created_ms),
        "cwd": cwd,
    }
    if metadata is not None:
        header["metadata"] = metadata
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb", buffering=1 << 20) as fh:
        head = dumps(header) + b"\n"
        fh.write(head)
        writer = SessionWriter(
            fh,
            rng,
            pools,
            start_ms=created_ms + 50,
            limit=entries,
            profile=profile or Profile(),
        )
        stats = writer.run()
    stats.bytes += len(head)
    return stats


def session_path(root: str, cwd: str, created_ms: int, session_id: str) -> str:
    """Pi's layout: ``<root>/--<cwd>--/<createdAt, ':' '.' -> '-'>_<id>.jsonl``."""
    stamp = iso(created_ms).replace(":", "-").replace(".", "-")
    return os.path.join(root, encode_cwd(cwd), f"{stamp}_{session_id}.jsonl")
