"""The benchmarks' data set (`generate`): a 100,000-entry session with compactions, a
10,000-entry one without, 1,000 small sessions in 20 folders and messages to append,
written deterministically from a seed and cached with a manifest (`save_manifest`,
`load_manifest`) under ``out/data-v<GENERATOR_VERSION>-s<seed>/``."""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import time
from dataclasses import dataclass
from typing import Any, Final

from benchmarks._pools import Pools, log_uniform, make_pools
from benchmarks._writer import (
    Profile,
    SessionStats,
    SessionWriter,
    dumps,
    session_path,
    uuidv7_from,
    write_session,
)
from desktop_agent.session import InMemorySessionRepo, JsonlSessionRepo

GENERATOR_VERSION: Final = 3
DEFAULT_SEED: Final = 20261129

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BIG_ENTRIES: Final = 100_000
MEDIUM_ENTRIES: Final = 10_000
MANY_SESSIONS: Final = 1_000
MANY_FOLDERS: Final = 20
_PROJECTS = [
    "desktop-agent",
    "pi-mono",
    "website",
    "api-server",
    "data-pipeline",
    "infra",
    "mobile-app",
    "cli-tools",
    "ml-experiments",
    "docs",
    "game-engine",
    "compiler",
    "blog",
    "home-automation",
    "scraper",
    "notebook",
    "billing",
    "auth-service",
    "design-system",
    "thesis",
]


@dataclass
class SessionFile:
    """One generated session and what the generator knows about it."""

    path: str
    entries: int
    bytes: int
    leaf: str | None
    path_length: int
    stats: dict[str, Any]


@dataclass
class DataSet:
    """Everything the benchmarks read, cached under ``out/data-v<version>-s<seed>/``."""

    root: str
    big: SessionFile  # 100,000 entries, ~106 MB, with compactions
    medium: SessionFile  # 10,000 entries, no compaction (every path message in context)
    many_root: str  # sessions root holding 1,000 small sessions in 20 cwd folders
    many_count: int
    many_bytes: int
    append_messages: list[dict[str, Any]]  # realistic messages to append, in order


def _session_file(path: str, stats: SessionStats) -> SessionFile:
    info = {k: v for k, v in stats.__dict__.items() if k not in ("leaf", "types")}
    info["types"] = dict(stats.types)
    return SessionFile(path, stats.entries, stats.bytes, stats.leaf, stats.path_length, info)


def _append_messages(rng: random.Random, pools: Pools, count: int) -> list[dict[str, Any]]:
    """Messages as a harness appends them: user, assistant (thinking/text/toolCalls), results."""
    import io

    buf = io.BytesIO()
    writer = SessionWriter(
        buf, rng, pools, start_ms=1_790_000_000_000, limit=count * 2, profile=Profile()
    )
    writer.run()
    out: list[dict[str, Any]] = []
    for line in buf.getvalue().splitlines():
        obj = json.loads(line)
        if obj["type"] == "message":
            out.append(obj["message"])
            if len(out) == count:
                break
    return out


def generate(root: str, seed: int, log: Any = print) -> DataSet:
    """Write the whole data set under ``root`` (which must not exist yet)."""
    rng = random.Random(seed)
    pools = make_pools(rng)
    base_ms = 1_767_225_600_000  # 2026-01-01T00:00:00Z

    cwd = "/home/dev/projects/desktop-agent"
    created = base_ms + 300 * 86_400_000
    sid = uuidv7_from(rng, created)
    big_path = session_path(os.path.join(root, "big", "sessions"), cwd, created, sid)
    log(f"  generating {BIG_ENTRIES:,}-entry session ...")
    big = write_session(
        big_path,
        rng=rng,
        pools=pools,
        cwd=cwd,
        entries=BIG_ENTRIES,
        created_ms=created,
        session_id=sid,
        metadata={"title": "Session layer", "app": "desktop-agent"},
    )

    created = base_ms + 310 * 86_400_000
    sid = uuidv7_from(rng, created)
    medium_path = session_path(os.path.join(root, "medium", "sessions"), cwd, created, sid)
    log(f"  generating {MEDIUM_ENTRIES:,}-entry session ...")
    medium = write_session(
        medium_path,
        rng=rng,
        pools=pools,
        cwd=cwd,
        entries=MEDIUM_ENTRIES,
        created_ms=created,
        session_id=sid,
        profile=Profile(compaction=False),
    )

    log(f"  generating {MANY_SESSIONS:,} small sessions in {MANY_FOLDERS} folders ...")
    many_root = os.path.join(root, "many", "sessions")
    small_profile = Profile(long_output_p=0.002, image_p=0.0)
    many_bytes = 0
    for i in range(MANY_SESSIONS):
        project = _PROJECTS[i % MANY_FOLDERS]
        session_cwd = f"/home/dev/projects/{project}"
        created = base_ms + rng.randrange(330 * 86_400_000)
        sid = uuidv7_from(rng, created)
        path = session_path(many_root, session_cwd, created, sid)
        metadata = {"title": f"{project} #{i}"} if rng.random() < 0.05 else None
        stats = write_session(
            path,
            rng=rng,
            pools=pools,
            cwd=session_cwd,
            entries=log_uniform(rng, 4, 120),
            created_ms=created,
            session_id=sid,
            profile=small_profile,
            metadata=metadata,
        )
        many_bytes += stats.bytes
        # Every session our app has opened has its advisory-lock file beside it.
        with open(path + ".lock", "wb"):
            pass

    log("  generating messages to append ...")
    messages = _append_messages(rng, pools, 6_000)
    return DataSet(
        root,
        _session_file(big_path, big),
        _session_file(medium_path, medium),
        many_root,
        MANY_SESSIONS,
        many_bytes,
        messages,
    )


def save_manifest(data: DataSet, path: str) -> None:
    """Write the manifest last: its presence marks a complete data set (paths relative)."""
    root = data.root

    def rel(f: SessionFile) -> dict[str, Any]:
        return {**f.__dict__, "path": os.path.relpath(f.path, root)}

    obj = {
        "generator_version": GENERATOR_VERSION,
        "big": rel(data.big),
        "medium": rel(data.medium),
        "many_root": os.path.relpath(data.many_root, root),
        "many_count": data.many_count,
        "many_bytes": data.many_bytes,
    }
    with open(os.path.join(root, "append-messages.json"), "w", encoding="utf-8") as fh:
        json.dump(data.append_messages, fh, ensure_ascii=False)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=1)


def load_manifest(path: str) -> DataSet:
    root = os.path.dirname(os.path.abspath(path))
    with open(path, encoding="utf-8") as fh:
        obj = json.load(fh)
    if obj.get("generator_version") != GENERATOR_VERSION:
        raise ValueError("data set of another generator version")
    with open(os.path.join(root, "append-messages.json"), encoding="utf-8") as fh:
        messages = json.load(fh)

    def load(f: dict[str, Any]) -> SessionFile:
        return SessionFile(**{**f, "path": os.path.join(root, f["path"])})

    return DataSet(
        root,
        load(obj["big"]),
        load(obj["medium"]),
        os.path.join(root, obj["many_root"]),
        obj["many_count"],
        obj["many_bytes"],
        messages,
    )


# --------------------------------------------------------------------------- the cache


def ensure_data(seed: int, *, regenerate: bool = False) -> DataSet:
    """The cached data set for this generator version and seed (generated if missing)."""
    root = os.path.join(OUT_DIR, f"data-v{GENERATOR_VERSION}-s{seed}")
    manifest = os.path.join(root, "manifest.json")
    if not regenerate and os.path.exists(manifest):
        try:
            data = load_manifest(manifest)
            if (
                os.path.getsize(data.big.path) == data.big.bytes
                and os.path.getsize(data.medium.path) == data.medium.bytes
            ):
                print(f"data: cached in {os.path.relpath(root, REPO_ROOT)}", flush=True)
                return data
        except (OSError, ValueError, KeyError, TypeError):
            pass
    print(f"data: generating into {os.path.relpath(root, REPO_ROOT)} (seed {seed})")
    shutil.rmtree(root, ignore_errors=True)
    if os.path.isdir(OUT_DIR):  # data of older generator versions is never used again
        for name in os.listdir(OUT_DIR):
            if name.startswith("data-v") and not name.startswith(f"data-v{GENERATOR_VERSION}-"):
                shutil.rmtree(os.path.join(OUT_DIR, name), ignore_errors=True)
    os.makedirs(root)
    start = time.perf_counter()
    data = generate(root, seed)
    asyncio.run(_sanity_check(data))
    save_manifest(data, manifest)
    print(f"data: generated and checked in {time.perf_counter() - start:.1f} s", flush=True)
    return data


async def _sanity_check(data: DataSet) -> None:
    """The generated files open cleanly with `JsonlSessionRepo` and match the generator."""
    for f in (data.big, data.medium):
        repo = JsonlSessionRepo(os.path.dirname(os.path.dirname(f.path)))
        session = await repo.open(f.path)
        try:
            assert not session.read_only, session.read_only_reason
            assert session.recovery is None, session.recovery
            assert session.entry_count == f.entries, (session.entry_count, f.entries)
            assert session.leaf_id() == f.leaf, (session.leaf_id(), f.leaf)
            assert len(session.branch_ids()) == f.path_length
            context = await session.build_context()
            assert context.messages
        finally:
            await session.close()
    many = JsonlSessionRepo(data.many_root)
    listed = await many.list()
    assert len(listed) == data.many_count and not listed.problems, listed.problems
    for meta in random.Random(1).sample(list(listed), 25):
        session = await many.open(meta)
        assert not session.read_only and session.recovery is None
        await session.build_context()
        await session.close()
    # The generator writes exactly what `Session` writes for the same message.
    memory = await InMemorySessionRepo().create(cwd="/tmp")
    for message in data.append_messages[:500]:
        entry_id = await memory.append_message(message)
        row = memory.get_storage().tree.get(entry_id)
        assert row is not None
        obj = json.loads(row.raw)
        expected = dumps(
            {
                "type": "message",
                "id": obj["id"],
                "parentId": obj["parentId"],
                "timestamp": obj["timestamp"],
                "message": message,
            }
        )
        assert row.raw == expected, (row.raw[:200], expected[:200])
