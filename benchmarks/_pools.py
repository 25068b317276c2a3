"""Text pools the generated sessions are sliced from (`make_pools`: source code, logs,
prose and base64, about 2.5 MB), and the word lists, file names, tools, models and labels
they are made of (the writer and the stream probe pick from them too)."""

from __future__ import annotations

import base64
import math
import random
from dataclasses import dataclass

_WORDS = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "as",
    "this",
    "be",
    "are",
    "by",
    "not",
    "or",
    "file",
    "function",
    "test",
    "value",
    "error",
    "return",
    "import",
    "module",
    "class",
    "session",
    "entry",
    "branch",
    "context",
    "tool",
    "output",
    "line",
    "path",
    "config",
    "cache",
    "build",
    "run",
    "check",
    "update",
    "change",
    "fix",
    "add",
    "remove",
    "handle",
    "parse",
    "read",
    "write",
    "open",
    "close",
    "list",
    "model",
    "token",
    "message",
    "user",
    "assistant",
    "result",
    "thinking",
    "summary",
    "label",
    "compaction",
    "leaf",
    "parent",
    "child",
    "tree",
    "index",
    "lock",
    "append",
    "sync",
    "data",
    "memory",
    "time",
    "size",
    "count",
    "first",
    "last",
    "next",
    "previous",
    "new",
    "old",
    "current",
    "default",
    "option",
    "setting",
    "window",
    "widget",
    "signal",
    "slot",
    "event",
    "loop",
    "task",
    "thread",
    "process",
    "worker",
    "queue",
    "request",
    "response",
    "stream",
    "chunk",
    "buffer",
    "offset",
    "length",
    "header",
    "body",
    "field",
    "key",
    "type",
    "schema",
    "version",
    "migration",
    "database",
    "table",
    "row",
    "column",
    "query",
    "commit",
    "rollback",
    "retry",
    "timeout",
    "failure",
    "success",
    "warning",
    "debug",
    "info",
    "trace",
    "because",
    "should",
    "would",
    "could",
    "might",
    "probably",
    "actually",
    "instead",
    "however",
    "therefore",
    "then",
    "now",
    "let",
    "me",
    "look",
    "at",
    "where",
    "why",
    "how",
    "what",
    "when",
    "which",
    "seems",
    "looks",
    "like",
    "need",
    "want",
    "try",
    "again",
    "so",
    "we",
    "can",
    "see",
    "here",
    "there",
    "this",
    "that",
    "those",
    "these",
    "it's",
    "doesn't",
    "isn't",
    "can't",
    "won't",
    "I'll",
]
_UNICODE = ("café", "naïve", "→", "—", "✓", "日本語", "Grüße", "🎉", "π", "µs", "…", "≤", "Ünïcödé")
IDENTS = [
    "session",
    "entry",
    "tree",
    "row",
    "leaf",
    "parent_id",
    "raw",
    "obj",
    "data",
    "path",
    "repo",
    "storage",
    "ctx",
    "msg",
    "line",
    "result",
    "items",
    "count",
    "offset",
    "size",
    "fd",
    "lock",
    "tmp",
    "cfg",
    "model",
    "provider",
    "usage",
    "cost",
    "text",
    "block",
    "tool_call",
    "args",
    "kwargs",
    "value",
    "key",
    "node",
    "children",
    "labels",
    "by_id",
    "pending",
    "loop",
    "task",
]
_TYPES = ("str", "int", "bytes", "bool", "float", "None", "list[str]", "dict[str, Any]", "Row")
FILES = [
    "desktop_agent/session/_jsonl.py",
    "desktop_agent/session/_tree.py",
    "desktop_agent/ai/_messages.py",
    "desktop_agent/harness/_harness.py",
    "desktop_agent/gui/main_window.py",
    "src/index.ts",
    "src/server/routes.ts",
    "README.md",
    "pyproject.toml",
    "tests/session/test_contract.py",
    "package.json",
    "docs/architecture.md",
    "scripts/build.sh",
    "src/lib/utils.rs",
    "Cargo.toml",
]
TOOLS = ("read", "bash", "edit", "write", "grep", "find", "ls")
TOOL_WEIGHTS = (30, 30, 15, 5, 10, 5, 5)
MODELS: tuple[tuple[str, str, str, tuple[float, float, float, float]], ...] = (
    # (api, provider, model, $ per 1M tokens: input, output, cacheRead, cacheWrite)
    ("anthropic-messages", "anthropic", "claude-sonnet-4-5", (3.0, 15.0, 0.3, 3.75)),
    ("openai-responses", "openai", "gpt-5", (1.25, 10.0, 0.125, 0.0)),
    ("openai-completions", "local", "qwen3-coder-30b", (0.0, 0.0, 0.0, 0.0)),
)
LABELS = ("checkpoint", "good state", "before refactor", "tests green", "try B", "  ", "")


@dataclass(frozen=True)
class Pools:
    code: str
    prose: str
    b64: str


def make_pools(rng: random.Random) -> Pools:
    """Text pools the sessions are sliced from (about 2.5 MB, generated in ~0.5 s)."""

    def words(n: int) -> str:
        out = rng.choices(_WORDS, k=n)
        if rng.random() < 0.08:
            out[rng.randrange(n)] = rng.choice(_UNICODE)
        return " ".join(out)

    def ident() -> str:
        return rng.choice(IDENTS)

    code_lines: list[str] = []
    for _ in range(36_000):
        r = rng.random()
        if r < 0.12:
            line = (
                f"def {ident()}_{ident()}({ident()}: {rng.choice(_TYPES)}) -> {rng.choice(_TYPES)}:"
            )
        elif r < 0.35:
            line = f"    {ident()} = {ident()}.{ident()}({ident()}, {rng.randint(0, 4096)})"
        elif r < 0.42:
            line = f'        raise SessionError("{ident()}", f"{words(6)} {{{ident()}!r}}")'
        elif r < 0.50:
            line = f"    return {ident()}"
        elif r < 0.58:
            line = (
                f"{rng.choice(FILES)}:{rng.randint(1, 900)}:{rng.randint(1, 80)}: "
                f"error: {words(rng.randint(4, 12))}  [{ident()}]"
            )
        elif r < 0.68:
            line = (
                f"2026-11-{rng.randint(1, 29):02d}T{rng.randint(0, 23):02d}:"
                f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z "
                f"{rng.choice(('INFO', 'DEBUG', 'WARN', 'ERROR'))} {ident()}: {words(8)}"
            )
        elif r < 0.76:
            line = (
                f"tests/{ident()}/test_{ident()}.py::test_{ident()}_{ident()} "
                f"{rng.choice(('PASSED', 'PASSED', 'PASSED', 'FAILED', 'SKIPPED'))} "
                f"[{rng.randint(0, 100):3d}%]"
            )
        elif r < 0.82:
            line = (
                f"-rw-r--r-- 1 dev dev {rng.randint(0, 99999):6d} Nov 29 18:04 "
                f"{ident()}_{ident()}.py"
            )
        elif r < 0.88:
            line = f'  "{ident()}": "{words(2)}",\t"path": "C:\\\\Users\\\\dev\\\\{ident()}"'
        elif r < 0.94:
            line = f"    # {words(rng.randint(5, 14))}"
        else:
            line = ""
        code_lines.append(line)
    code = "\n".join(code_lines)

    sentences: list[str] = []
    for _ in range(20_000):
        s = words(rng.randint(5, 18))
        s = s[0].upper() + s[1:] + rng.choice((".", ".", ".", "?", ":"))
        if rng.random() < 0.1:
            s += f" `{rng.choice(FILES)}`"
        if rng.random() < 0.08:
            s += "\n\n- " + words(6) + "\n- " + words(5) + "\n"
        sentences.append(s)
    prose = " ".join(sentences)

    b64 = base64.b64encode(rng.randbytes(600_000)).decode("ascii")
    return Pools(code, prose, b64)


def log_uniform(rng: random.Random, lo: float, hi: float) -> int:
    """A size between ``lo`` and ``hi``, small ones as likely per decade as big ones."""
    return int(math.exp(rng.uniform(math.log(lo), math.log(hi))))
