"""A power-loss simulator: an in-memory file system under the real JSONL store.

`SimFS` is a `FileOps` that keeps, per file, what is *durable* (as of its last fsync)
and what is only in the page cache, and per folder which names are durable (as of its
last directory fsync). After every operation that changes something it records a
`Snapshot`; `crash_states` turns a snapshot into the disks a power cut at that moment may
leave (the ALICE model, RELIABILITY.md §8): only the synced data; everything; the
unsynced tail cut at 4 KiB pages and in thirds; the unsynced tail as zeros or garbage;
and reordered pages (a later page of the tail reached the disk, an earlier one did not).
A new name that was never directory-fsynced may be missing; a rename may not have
happened.
"""

from __future__ import annotations

import errno
import os
import random
import stat as stat_module
from collections.abc import Iterator
from dataclasses import dataclass, field

from desktop_agent.session._platform import FileOps, FileStat

PAGE = 4096


@dataclass
class _Inode:
    ino: int
    data: bytearray = field(default_factory=bytearray)
    durable: bytes = b""


@dataclass
class _Dir:
    names: dict[str, int] = field(default_factory=dict)
    durable: dict[str, int] = field(default_factory=dict)


@dataclass
class _Open:
    ino: int
    append: bool
    pos: int = 0


@dataclass(frozen=True)
class Snapshot:
    """The simulated disk right after operation ``step`` (``op``)."""

    step: int
    op: str
    files: dict[int, tuple[bytes, bytes]]  # ino -> (durable, current)
    dirs: dict[str, tuple[dict[str, int], dict[str, int]]]  # path -> (durable, current)
    acked: tuple[str, ...]
    header_acked: bool


@dataclass(frozen=True)
class CrashState:
    """One disk a power cut may leave: folder path -> file name -> content."""

    snapshot: Snapshot
    mode: str
    tree: dict[str, dict[str, bytes]]


class SimFS(FileOps):
    """In-memory files and folders with durable and volatile state; single-threaded use."""

    def __init__(self, fail_fsync_at: int | None = None) -> None:
        self._inodes: dict[int, _Inode] = {}
        self._dirs: dict[str, _Dir] = {}
        self._fds: dict[int, _Open] = {}
        self._next_ino = 1
        self._next_fd = 1000
        self._clock = 1_000_000_000
        self._locks: dict[int, int] = {}  # ino -> fd holding it
        self.snapshots: list[Snapshot] = []
        self.acked: tuple[str, ...] = ()
        self.header_acked = False
        self.fsyncs = 0
        self.fail_fsync_at = fail_fsync_at
        self.failed_fsyncs = 0

    # ------------------------------------------------------------------ internals

    def _split(self, path: str) -> tuple[_Dir, str]:
        folder, name = os.path.split(os.path.normpath(path))
        directory = self._dirs.get(folder)
        if directory is None:
            raise FileNotFoundError(errno.ENOENT, f"no folder {folder}")
        return directory, name

    def _lookup(self, path: str) -> _Inode:
        directory, name = self._split(path)
        ino = directory.names.get(name)
        if ino is None:
            if os.path.normpath(path) in self._dirs:
                raise IsADirectoryError(errno.EISDIR, path)
            raise FileNotFoundError(errno.ENOENT, path)
        return self._inodes[ino]

    def _snap(self, op: str) -> None:
        self._clock += 1
        self.snapshots.append(
            Snapshot(
                len(self.snapshots),
                op,
                {i: (n.durable, bytes(n.data)) for i, n in self._inodes.items()},
                {p: (dict(d.durable), dict(d.names)) for p, d in self._dirs.items()},
                self.acked,
                self.header_acked,
            )
        )

    def _nlink(self, ino: int) -> int:
        return sum(1 for d in self._dirs.values() for i in d.names.values() if i == ino)

    def _stat(self, node: _Inode) -> FileStat:
        mode = stat_module.S_IFREG | 0o644
        return FileStat(len(node.data), self._clock, node.ino, 1, self._nlink(node.ino), mode)

    # ------------------------------------------------------------------ FileOps

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        directory, name = self._split(path)
        ino = directory.names.get(name)
        created = False
        if ino is None:
            if not flags & os.O_CREAT:
                raise FileNotFoundError(errno.ENOENT, path)
            node = _Inode(self._next_ino)
            self._next_ino += 1
            self._inodes[node.ino] = node
            directory.names[name] = node.ino
            ino = node.ino
            created = True
        elif flags & os.O_CREAT and flags & os.O_EXCL:
            raise FileExistsError(errno.EEXIST, path)
        if flags & os.O_TRUNC:
            self._inodes[ino].data.clear()
        fd = self._next_fd
        self._next_fd += 1
        self._fds[fd] = _Open(ino, bool(flags & os.O_APPEND))
        if created or flags & os.O_TRUNC:
            self._snap(f"open {name}")
        return fd

    def close(self, fd: int) -> None:
        handle = self._fds.pop(fd)
        if self._locks.get(handle.ino) == fd:
            del self._locks[handle.ino]

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        node = self._inodes[self._fds[fd].ino]
        return bytes(node.data[offset : offset + size])

    def write(self, fd: int, data: bytes | memoryview) -> int:
        handle = self._fds[fd]
        node = self._inodes[handle.ino]
        at = len(node.data) if handle.append else handle.pos
        chunk = bytes(data)
        if at > len(node.data):
            node.data.extend(b"\x00" * (at - len(node.data)))
        node.data[at : at + len(chunk)] = chunk
        handle.pos = at + len(chunk)
        self._snap("write")
        return len(chunk)

    def fsync(self, fd: int) -> None:
        self.fsyncs += 1
        if self.fail_fsync_at is not None and self.fsyncs == self.fail_fsync_at:
            self.failed_fsyncs += 1
            raise OSError(errno.EIO, "simulated fsync failure")
        node = self._inodes[self._fds[fd].ino]
        node.durable = bytes(node.data)
        self._snap("fsync")

    def fsync_dir(self, path: str) -> None:
        directory = self._dirs[os.path.normpath(path)]
        directory.durable = dict(directory.names)
        self._snap("fsync_dir")

    def fstat(self, fd: int) -> FileStat:
        return self._stat(self._inodes[self._fds[fd].ino])

    def stat(self, path: str) -> FileStat:
        return self._stat(self._lookup(path))

    def replace(self, src: str, dst: str) -> None:
        src_dir, src_name = self._split(src)
        dst_dir, dst_name = self._split(dst)
        ino = src_dir.names.pop(src_name)
        dst_dir.names[dst_name] = ino
        self._snap("rename")

    def ftruncate(self, fd: int, size: int) -> None:
        node = self._inodes[self._fds[fd].ino]
        if size < len(node.data):
            del node.data[size:]
        else:
            node.data.extend(b"\x00" * (size - len(node.data)))
        self._snap("truncate")

    def unlink(self, path: str) -> None:
        directory, name = self._split(path)
        del directory.names[name]
        self._snap("unlink")

    def makedirs(self, path: str) -> None:
        path = os.path.normpath(path)
        parts: list[str] = []
        while path not in self._dirs and path not in ("/", ""):
            parts.append(path)
            path = os.path.dirname(path)
        for folder in reversed(parts):
            # Folders are made durable at once (the store fsyncs the files it puts there).
            self._dirs[folder] = _Dir()

    def exists(self, path: str) -> bool:
        try:
            self._lookup(path)
        except OSError:
            return os.path.normpath(path) in self._dirs
        return True

    def try_lock(self, fd: int) -> bool:
        ino = self._fds[fd].ino
        holder = self._locks.get(ino)
        if holder is not None and holder != fd:
            return False
        self._locks[ino] = fd
        return True

    def unlock(self, fd: int) -> None:
        ino = self._fds[fd].ino
        if self._locks.get(ino) == fd:
            del self._locks[ino]


# ----------------------------------------------------------------------- crash states


def _variants(durable: bytes, current: bytes, rng: random.Random) -> Iterator[tuple[str, bytes]]:
    """What a file may hold after a power cut, given its synced and cached content."""
    yield "synced", durable
    if current == durable:
        return
    yield "all", current
    if not current.startswith(durable):
        return  # a truncate since the last fsync: either state, nothing in between
    start = len(durable)
    tail = current[start:]
    cuts = {start + len(tail) // 3, start + 2 * len(tail) // 3}
    cuts.update(range((start // PAGE + 1) * PAGE, len(current), PAGE))
    for cut in sorted(cuts):
        if start < cut < len(current):
            yield f"cut at {cut}", current[:cut]
    yield "zeros", durable + b"\x00" * len(tail)
    yield "garbage", durable + rng.randbytes(len(tail))
    # Garbage that looks like entries: lines of JSON noise with newlines in them.
    noise = b"".join(b'{"type":"message","id":"%x"}\n' % rng.getrandbits(32) for _ in range(4))
    yield "noise", durable + (noise * (len(tail) // len(noise) + 1))[: len(tail)]
    pages = list(range(start // PAGE, (len(current) - 1) // PAGE + 1))
    if len(pages) > 1:
        for lost in pages[:-1]:
            data = bytearray(current)
            lo, hi = max(start, lost * PAGE), min(len(current), (lost + 1) * PAGE)
            data[lo:hi] = b"\x00" * (hi - lo)
            yield f"page {lost} lost", bytes(data)
        data = bytearray(current)
        lo = start
        hi = pages[-1] * PAGE
        data[lo:hi] = b"\x00" * (hi - lo)
        yield "only the last page", bytes(data)


def crash_states(snapshot: Snapshot, seed: int = 0) -> Iterator[CrashState]:
    """Every disk a power cut right after ``snapshot`` may leave (see the module doc)."""
    rng = random.Random(seed * 7919 + snapshot.step)
    namespaces = {"names synced": {p: d for p, (d, _c) in snapshot.dirs.items()}}
    current = {p: c for p, (_d, c) in snapshot.dirs.items()}
    if current != namespaces["names synced"]:
        namespaces["names all"] = current
    variants = {
        ino: list(_variants(durable, data, rng)) for ino, (durable, data) in snapshot.files.items()
    }
    kinds = sorted({kind for v in variants.values() for kind, _ in v})
    for space, dirs in namespaces.items():
        for kind in kinds:
            tree: dict[str, dict[str, bytes]] = {}
            for folder, names in dirs.items():
                files: dict[str, bytes] = {}
                for name, ino in names.items():
                    options = dict(variants[ino])
                    files[name] = options.get(kind, options.get("all", options["synced"]))
                tree[folder] = files
            yield CrashState(snapshot, f"{space}, {kind}", tree)
