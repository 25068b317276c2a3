"""The session-file fuzzer: mutations of real files (ours and Pi's) and one file check.

`check_file` is the oracle every fuzzed file, and every file of the regression corpus
(``tests/corpus/*.jsonl``), goes through: opening raises nothing but `SessionError`, the
bytes are unchanged (except a torn tail moved byte-exact into a sidecar), every reading
method of `Session` answers or raises `SessionError`, a writable session takes an append
and reopens cleanly, and the listing and the session index read the file without
raising, all within 2 s. A file that fails is written to the corpus's ``new/`` folder
(or ``$DESKTOP_AGENT_FUZZ_OUT``) so it can join the regression corpus.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop_agent.session import Session, SessionError
from desktop_agent.session._dirlist import list_dir_sessions
from desktop_agent.session._entryindex import EntryIndex
from desktop_agent.session._facts_scan import read_facts
from desktop_agent.session._jsonl import JsonlStorage
from tests.session._faults import NO_SYNC
from tests.session._workload import LONG

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
SEEDS = CORPUS / "seeds"
TIME_LIMIT_S = 2.0


class FuzzFailure(AssertionError):
    pass


def failures_dir() -> Path:
    return Path(os.environ.get("DESKTOP_AGENT_FUZZ_OUT") or CORPUS / "new")


def save_failure(data: bytes, why: str) -> Path:
    """Keep a failing input for the regression corpus; returns where it went."""
    folder = failures_dir()
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(data).hexdigest()[:16]
    path = folder / f"{name}.jsonl"
    path.write_bytes(data)
    (folder / f"{name}.txt").write_text(why[-4000:], encoding="utf-8")
    return path


async def _exercise(session: Session) -> None:
    """Every reading method; each may raise `SessionError` only."""
    calls: list[Callable[[], Any]] = [
        session.build_context,
        lambda: session.build_context(lenient=True),
        session.get_entries,
        session.get_tree,
        session.get_branch,
        session.get_leaf_id,
        session.get_session_name,
        lambda: session.find_entries("message"),
    ]
    for call in calls:
        try:
            await call()
        except SessionError:
            pass
    try:
        ids = session.branch_ids(lenient=True)
    except SessionError:
        ids = []
    for entry_id in ids[-5:]:
        for sync_call in (
            lambda i=entry_id: session.entry_kind(i),
            lambda i=entry_id: session.child_ids(i),
            lambda i=entry_id: session.get_message(i),
            lambda i=entry_id: session.label_of(i),
        ):
            try:
                sync_call()
            except SessionError:
                pass
        try:
            await session.get_entry(entry_id)
            await session.get_children(entry_id)
            await session.get_label(entry_id)
        except SessionError:
            pass
    session.raw_entries()


async def check_file(data: bytes, work: Path) -> None:
    """The oracle (module doc); raises `FuzzFailure` with the reason."""
    shutil.rmtree(work, ignore_errors=True)
    folder = work / "sessions" / "--fuzz--"
    folder.mkdir(parents=True)
    path = folder / "2026-01-01T00-00-00-000Z_fuzz.jsonl"
    path.write_bytes(data)
    try:
        elapsed = await _check(path, data)
        if path.exists():
            try:
                _check_index(path, work / "cache")
            except SessionError:
                pass  # refused, as the plain open was
        listed = list_dir_sessions(str(work / "sessions"), None)
        assert len(listed) + len(listed.problems) >= 1 or not data.strip()
        facts = read_facts(str(path))
        assert facts.size == len(path.read_bytes())
    except FuzzFailure:
        raise
    except AssertionError as exc:
        raise FuzzFailure(f"oracle: {exc}\n{traceback.format_exc()}") from exc
    except SessionError:
        raise
    except Exception as exc:
        raise FuzzFailure(f"crash: {exc!r}\n{traceback.format_exc()}") from exc
    if elapsed > TIME_LIMIT_S:
        raise FuzzFailure(f"too slow: opening took {elapsed:.2f} s")


def _snapshot(storage: JsonlStorage) -> tuple[Any, ...]:
    tree = storage.tree
    report = storage.recovery
    return (
        list(tree.ids),
        list(tree.parents),
        list(tree.types),
        list(tree.roles),
        list(tree.offsets),
        tree.leaf_id,
        dict(tree.labels),
        tree.name,
        report.describe() if report is not None else None,
        [d.line_number for d in report.damaged_lines] if report is not None else [],
        storage.read_only_reason,
    )


def _check_index(path: Path, cache: Path) -> None:
    """Opening through the entry index (built, then used) sees what a scan sees."""
    plain = JsonlStorage.open(str(path), lock=False, ops=NO_SYNC)
    expected = _snapshot(plain)
    plain.force_close()
    index = EntryIndex(cache, NO_SYNC)
    for _ in range(2):  # the first open writes the index on close, the second uses it
        storage = JsonlStorage.open(str(path), lock=False, ops=NO_SYNC, index=index)
        got = _snapshot(storage)
        storage.close()
        assert got == expected, "the entry index disagrees with a scan"


async def _check(path: Path, data: bytes) -> float:
    """Open and exercise the file; returns how long opening (+ build_context) took."""
    started = time.perf_counter()
    try:
        storage = JsonlStorage.open(str(path), ops=NO_SYNC)
    except SessionError as exc:
        assert exc.code in ("not_found", "invalid_session", "storage"), exc.code  # noqa: PT017 - one allowed outcome
        assert path.read_bytes() == data, "a refused file was changed"
        return time.perf_counter() - started
    session = Session(storage)
    try:
        try:
            await session.build_context()
        except SessionError:
            pass
        elapsed = time.perf_counter() - started
        after = path.read_bytes()
        report = storage.recovery
        if report is not None and report.quarantine_path is not None:
            assert after == data[: len(after)], "changed beyond the torn tail"
            assert Path(report.quarantine_path).read_bytes() == data[len(after) :]
        else:
            assert after == data, "opening changed the file"
        if report is not None:
            report.describe()
        await _exercise(session)
        if storage.read_only:
            return elapsed
        count = len(storage.tree)
        try:
            await session.append_message(
                {"role": "user", "content": [{"type": "text", "text": "fuzz"}], "timestamp": 1}
            )
        except SessionError as exc:
            assert exc.code == "invalid_session", exc  # e.g. the leaf names no entry  # noqa: PT017 - one allowed outcome
            assert path.read_bytes() == after
            return elapsed
        await session.close()
        again = JsonlStorage.open(str(path), lock=False, ops=NO_SYNC)
        try:
            assert again.recovery is None, f"unclean after an append: {again.recovery}"
            assert len(again.tree) == count + 1
        finally:
            again.force_close()
        return elapsed
    finally:
        storage.force_close()


# ----------------------------------------------------------------------- mutations

_HOSTILE: list[Any] = [
    None,
    "",
    "x",
    0,
    -1,
    1.5,
    1e308,
    True,
    [],
    {},
    [1, "a", None],
    {"type": "text", "text": 5},
    {"role": "assistant"},
    "\ud800",
    "é" * 50,
]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _join(lines: list[bytes]) -> bytes:
    return b"\n".join(lines)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    value[path[0]] = _set(value[path[0]], path[1:], new)
    return value


def _dumps(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def _mutate_value(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    try:
        obj = json.loads(lines[i])
    except (ValueError, RecursionError):
        return data
    paths = _paths(obj)
    target = rng.choice(paths)
    choice = rng.random()
    if choice < 0.6:
        new: Any = rng.choice(_HOSTILE)
    elif choice < 0.7:  # Python cannot even build it: splice the digits into the text
        digits = b"9" * rng.choice((20, 400, 5000))
        lines[i] = _dumps(_set(obj, target, "__BIG__")).replace(b'"__BIG__"', digits)
        return _join(lines)
    elif choice < 0.8:
        new = "s" * rng.choice((1000, 100_000))
    elif choice < 0.9:
        depth = rng.choice((50, 900, 3000, 100_000))
        new = json.loads("[" * depth + "]" * depth) if depth < 900 else None
        if new is None:  # json.loads cannot build it either: splice the text
            raw = _dumps(_set(obj, target, "__DEEP__"))
            lines[i] = raw.replace(b'"__DEEP__"', b"[" * depth + b"]" * depth)
            return _join(lines)
    else:
        if isinstance(obj, dict) and obj:
            del obj[rng.choice(list(obj))]
            lines[i] = _dumps(obj)
            return _join(lines)
        new = None
    lines[i] = _dumps(_set(obj, target, new))
    return _join(lines)


def _textual(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    line = lines[i]
    pick = rng.randrange(9)
    if pick == 0:
        lines[i] = line.replace(b":", b':NaN,"x":', 1)
    elif pick == 1:
        lines[i] = line.replace(b"{", b'{"type":"session","type":', 1)
    elif pick == 2:
        lines[i] = b"\xef\xbb\xbf" + line
    elif pick == 3:
        lines[i] = line.replace(b'"', b"'", 1)
    elif pick == 4:
        lines[i] = line.replace(b"a", b"\\ud83d", 1)
    elif pick == 5:
        lines[i] = line + b"\r"
    elif pick == 6:
        return data.replace(b"\n", b"\r")
    elif pick == 7:
        cut = rng.randrange(len(line) + 1)
        lines[i] = line[:cut] + bytes([rng.choice((0x80, 0xC3, 0xE2, 0xF0, 0xFF))]) + line[cut:]
    else:
        lines[i] = line.replace(b'"parentId"', b'"parentid"', 1)
    return _join(lines)


def _structural(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    pick = rng.randrange(8)
    i = rng.randrange(len(lines))
    j = rng.randrange(len(lines))
    if pick == 0:
        del lines[i]
    elif pick == 1:
        lines.insert(j, lines[i])
    elif pick == 2:
        lines[i], lines[j] = lines[j], lines[i]
    elif pick == 3:
        lines.insert(i, b"")
    elif pick == 4:
        lines.insert(i, b"\x00" * rng.choice((1, 700, 4096)))
    elif pick == 5:
        lines.insert(i, rng.randbytes(rng.randrange(1, 200)))
    elif pick == 6:
        ids = [m for m in (_entry_id(x) for x in lines) if m]
        if len(ids) >= 2:  # a parent cycle, or a leaf pointing nowhere
            a, b = rng.sample(ids, 2)
            lines[i] = lines[i].replace(b'"parentId":', f'"parentId":"{a}","p":'.encode(), 1)
            lines.append(
                _dumps({"type": "leaf", "id": b, "parentId": a, "timestamp": "t", "targetId": "?"})
            )
    else:  # one very long line (R11: 50 MB in the long run)
        head = _dumps({"type": "message", "id": "big", "parentId": None, "timestamp": "t"})
        body = b"y" * (50 << 20 if LONG else 1 << 20)
        lines.append(head[:-1] + b',"message":{"role":"user","content":"' + body + b'"}}')
    return _join(lines)


def _entry_id(line: bytes) -> str | None:
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    value = obj.get("id") if isinstance(obj, dict) else None
    return value if isinstance(value, str) else None


def _bytes(data: bytes, rng: random.Random) -> bytes:
    pick = rng.randrange(4)
    if not data:
        return rng.randbytes(10)
    pos = rng.randrange(len(data))
    if pick == 0:
        return data[:pos]
    if pick == 1:
        flipped = bytearray(data)
        flipped[pos] ^= 1 << rng.randrange(8)
        return bytes(flipped)
    if pick == 2:
        return data[:pos] + rng.randbytes(rng.randrange(1, 16)) + data[pos:]
    return data[:pos] + data[pos + rng.randrange(1, 64) :]


MUTATORS = (_mutate_value, _mutate_value, _textual, _structural, _bytes)


def mutate(seed: bytes, rng: random.Random) -> bytes:
    data = seed
    for _ in range(rng.choice((1, 1, 2, 3))):
        data = rng.choice(MUTATORS)(data, rng)
    return data
