"""R11: fuzzed session files (hypothesis plus mutations of real files, ours and Pi's).

1,000 files per run (``DESKTOP_AGENT_LONG_TESTS=1``: 100,000), each through the oracle
of `tests.session._fuzz.check_file`: no exception but `SessionError`, bytes unchanged
except the torn tail set aside, within 2 s, and the whole run within 500 MB of peak RSS.
Every input that ever failed is kept in ``tests/corpus/`` and checked on every run.
"""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_agent.session import JsonlSessionRepo
from tests.helpers import figures
from tests.session._fuzz import CORPUS, SEEDS, FuzzFailure, check_file, mutate, save_failure
from tests.session._workload import CWD, LONG, run_workload

FILES = 100_000 if LONG else 1_000
HYPOTHESIS_FILES = 200
MEMORY_LIMIT = 500 * 1024 * 1024


def _peak_rss() -> int:
    if sys.platform == "win32":  # pragma: no cover
        return 0
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


async def _our_seeds(tmp_path: Path) -> list[bytes]:
    repo = JsonlSessionRepo(tmp_path / "seed-sessions")
    session = await repo.create(cwd=CWD, metadata={"title": "seed"})
    await run_workload(session, turns=3, big=5_000)
    await session.append_message(
        {
            "role": "toolResult",
            "toolCallId": "t1",
            "toolName": "bash",
            "content": [{"type": "text", "text": "undecodable \udcff output"}],
            "isError": True,
            "timestamp": 2,
        }
    )
    await session.move_to(None)
    await session.append_message(
        {"role": "user", "content": [{"type": "text", "text": "a new root"}], "timestamp": 3}
    )
    path = Path(session.metadata.path or "")
    await session.close()
    small = await repo.create(cwd=CWD)
    small_path = Path(small.metadata.path or "")
    await small.close()
    return [path.read_bytes(), small_path.read_bytes()]


def _corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.jsonl"))


async def _run(data: bytes, work: Path, failures: list[str]) -> None:
    try:
        await check_file(data, work)
    except FuzzFailure as exc:
        where = save_failure(data, str(exc))
        failures.append(f"{where}: {str(exc).splitlines()[0]}")


@pytest.mark.slow
@pytest.mark.asyncio
async def test_mutated_real_files(tmp_path: Path) -> None:
    seeds = await _our_seeds(tmp_path)
    seeds += [p.read_bytes() for p in sorted(SEEDS.glob("*.jsonl"))]
    assert len(seeds) >= 3
    rng = random.Random(20261201)
    failures: list[str] = []
    count = FILES - HYPOTHESIS_FILES
    before = _peak_rss()
    for _ in range(count):
        await _run(mutate(rng.choice(seeds), rng), tmp_path / "work", failures)
    grown = _peak_rss() - before
    figures.add("fuzz files", count)
    figures.add("fuzz crashes", len(failures))
    assert not failures, "\n".join(failures[:10])
    assert grown < MEMORY_LIMIT, f"peak RSS grew by {grown / 1e6:.0f} MB"


_json: Any = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_KINDS = st.sampled_from(
    [
        "message",
        "compaction",
        "branch_summary",
        "custom_message",
        "custom",
        "label",
        "leaf",
        "session_info",
        "model_change",
        "thinking_level_change",
        "active_tools_change",
        "unknown_kind",
    ]
)
_FIELDS = st.sampled_from(
    [
        "message",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "fromId",
        "content",
        "display",
        "details",
        "targetId",
        "label",
        "name",
        "provider",
        "modelId",
        "thinkingLevel",
        "activeToolNames",
        "customType",
        "data",
    ]
)
_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "toolResult", "custom", "bashExecution", "x"])},
    optional={
        "content": _json
        | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _json})),
        "timestamp": _json,
        "provider": _json,
        "model": _json,
        "usage": _json,
        "stopReason": _json,
    },
)


@st.composite
def _files(draw: Any) -> bytes:
    import json

    ids = [f"e{i}" for i in range(draw(st.integers(0, 12)))]
    lines = [{"type": "session", "version": 3, "id": "h", "timestamp": "t", "cwd": "/w"}]
    for i, entry_id in enumerate(ids):
        entry: dict[str, Any] = {
            "type": draw(_KINDS),
            "id": entry_id,
            "parentId": draw(st.sampled_from([None, *ids[:i], "missing"])) if i else None,
            "timestamp": draw(st.sampled_from(["2026-01-01T00:00:00.000Z", "t", "x"])),
        }
        if entry["type"] == "message":
            entry["message"] = draw(_MESSAGE | _json)
        for name in draw(st.lists(_FIELDS, max_size=4)):
            entry[name] = draw(_json | st.sampled_from([*ids, "root"]) if ids else _json)
        if entry["type"] == "leaf" and draw(st.booleans()):
            entry["targetId"] = draw(st.sampled_from([None, *ids, "nope"]))
        lines.append(entry)
    text = "".join(json.dumps(x, ensure_ascii=draw(st.booleans())) + "\n" for x in lines)
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return data


_hypothesis_failures: list[str] = []


@pytest.mark.slow
@settings(
    max_examples=HYPOTHESIS_FILES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=_files())
def test_generated_files(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    work = tmp_path_factory.getbasetemp() / "hypothesis-work"
    failures: list[str] = []
    asyncio.run(_run(data, work, failures))
    figures.add("fuzz files")
    figures.add("fuzz crashes", len(failures))
    assert not failures, failures[0]


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.name)
@pytest.mark.asyncio
async def test_regression_corpus(tmp_path: Path, path: Path) -> None:
    failures: list[str] = []
    await _run(path.read_bytes(), tmp_path / "work", failures)
    assert not failures, failures[0]
