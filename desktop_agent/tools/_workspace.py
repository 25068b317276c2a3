"""Workspace confinement: every path a tool touches is resolved and checked here.

A path argument is accepted only if, after following symlinks (realpath), it lies inside
the workspace root, outside every forbidden root (the app's data and config directories,
even when they sit inside the workspace) and outside any ``.git/hooks`` directory; writes
inside ``.git`` are refused as well. Files are then opened by walking from the root one
component at a time with ``O_NOFOLLOW`` (where the OS supports ``dir_fd``), so a symlink
swapped in between the check and the open is refused instead of followed. Writes check
again, before and after the final rename, that a fresh walk from the root still reaches
the directory they write in, so a directory renamed out of the workspace during a write
never receives it. Only regular files with one link are read or replaced: device files,
FIFOs and sockets are refused before they are opened, hard-linked files always.

One exception, for the read tool only (`resolve_read`): an absolute path into one of the
read-only roots the workspace is given (the folders of the project's skills, which may
lie outside it, e.g. in ``~/.pi/agent/skills``), checked the same way after following
symlinks, and opened without following a last symbolic link.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from desktop_agent.tools._errors import PathRefused, ToolError

MAX_PATH_LENGTH = 4096
MAX_NAME_BYTES = 255

_CASE_INSENSITIVE = sys.platform in ("darwin", "win32")
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_DIR_FD = (
    os.open in os.supports_dir_fd
    and os.mkdir in os.supports_dir_fd
    and os.rename in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.unlink in os.supports_dir_fd
    and os.rmdir in os.supports_dir_fd
    and bool(_O_DIRECTORY)
    and bool(_O_NOFOLLOW)
)


def _key(part: str) -> str:
    return part.casefold() if _CASE_INSENSITIVE else part


def _inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both absolute and normalised)."""
    p, r = _key(path), _key(root)
    if p == r:
        return True
    prefix = r if r.endswith(os.sep) else r + os.sep
    return p.startswith(prefix)


def _realpath(path: str, shown: str) -> str:
    try:
        return os.path.realpath(path, strict=True)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathRefused(shown, "it runs into a loop of symbolic links") from None
    return os.path.realpath(path)


def _open_plain(real: Path, shown: str) -> int:
    """A read-only descriptor of a regular file, where the OS has no ``dir_fd`` walks."""
    fd = os.open(real, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY)
    try:
        _check_regular(os.fstat(fd), shown)
    except BaseException:
        os.close(fd)
        raise
    _blocking(fd)
    return fd


class Workspace:
    """The folder tools work in, and the places inside it they must not touch."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        forbidden_roots: Iterable[str | os.PathLike[str]] = (),
        read_only_roots: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        """``read_only_roots``: folders outside the root that the read tool may read
        (asked at every read: the folders of the project's skills, which the system
        prompt tells the model to read, e.g. ``~/.pi/agent/skills/x``)."""
        given = os.path.abspath(os.fspath(root))
        if not os.path.isdir(given):
            raise ValueError(f"workspace root is not a directory: {given}")
        self.root = Path(os.path.realpath(given))
        st = os.stat(self.root)
        self._root_id = (st.st_dev, st.st_ino)
        forbidden: list[str] = []
        for item in forbidden_roots:
            literal = os.path.abspath(os.path.expanduser(os.fspath(item)))
            for candidate in (literal, os.path.realpath(literal)):
                if candidate not in forbidden:
                    forbidden.append(candidate)
        self.forbidden_roots: tuple[Path, ...] = tuple(Path(p) for p in forbidden)
        self._read_only_roots = read_only_roots

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r}, forbidden_roots={len(self.forbidden_roots)})"

    # ------------------------------------------------------------------ resolving

    def resolve_read(self, path: str) -> Path:
        """`resolve` for the read tool: an absolute path may also lead into one of the
        read-only roots outside the workspace."""
        if os.path.isabs(path) and "\x00" not in path and len(path) <= MAX_PATH_LENGTH:
            outside = self._read_only_path(os.path.normpath(path), path)
            if outside is not None:
                return outside
        return self.resolve(path)

    def resolve(self, path: str, *, for_write: bool = False) -> Path:
        """The real path of a tool's path argument, or `PathRefused`.

        Relative paths are relative to the root; absolute paths must lead inside it.
        """
        if not isinstance(path, str):
            raise PathRefused(repr(path), "a path must be a string")
        if "\x00" in path:
            raise PathRefused(path, "it contains a NUL byte")
        if len(path) > MAX_PATH_LENGTH:
            raise PathRefused(path, f"it is longer than {MAX_PATH_LENGTH} characters")
        parts = [p for p in path.replace("\\", "/").split("/") if p]
        if any(len(p.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for p in parts):
            raise PathRefused(path, f"a component is longer than {MAX_NAME_BYTES} bytes")
        if path.startswith("~"):
            raise PathRefused(path, "'~' is not expanded; give a path relative to the workspace")
        root = str(self.root)
        joined = os.path.normpath(os.path.join(root, path or "."))
        if not _inside(joined, root):
            where = "is outside" if os.path.isabs(path) else "escapes"
            raise PathRefused(path, f"it {where} the workspace {root}")
        real = _realpath(joined, path)
        if not _inside(real, root):
            raise PathRefused(
                path, f"it leads through a symbolic link to {real}, outside the workspace"
            )
        self._check_protected(path, joined, real, for_write=for_write)
        return Path(real)

    def _read_only_path(self, joined: str, shown: str) -> Path | None:
        """The real path of ``joined`` when it and its real path lie in one read-only
        root outside the workspace (None otherwise: the usual checks decide)."""
        if self._read_only_roots is None or _inside(joined, str(self.root)):
            return None
        real = _realpath(joined, shown)
        for root in self._read_only_roots():
            literal = os.path.abspath(root)
            if _inside(joined, literal) and _inside(real, os.path.realpath(literal)):
                return Path(real)
        return None

    def _open_read_only(self, real: Path, shown: str) -> int:
        """A read-only descriptor of a file of a read-only root: opened in its folder as
        `open_in` opens one, then checked to be still in the root."""
        if not _DIR_FD:
            fd = _open_plain(real, shown)
        else:
            dir_fd = os.open(real.parent, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
            try:
                fd = self.open_in(dir_fd, real.name, shown)
            finally:
                os.close(dir_fd)
        if self._read_only_path(str(real), shown) != real:
            os.close(fd)
            raise PathRefused(shown, "it was moved out of the folders it may be read from")
        return fd

    def _check_protected(self, shown: str, joined: str, real: str, *, for_write: bool) -> None:
        for forbidden in self.forbidden_roots:
            fr = str(forbidden)
            if _inside(real, fr) or _inside(joined, fr):
                raise PathRefused(shown, f"it is inside the app's own protected directory {fr}")
        why = self._git_refusal(real, for_write=for_write)
        if why is not None:
            raise PathRefused(shown, why)

    def _git_refusal(self, real: str, *, for_write: bool) -> str | None:
        """The one ``.git`` rule of every tool: nothing inside a ``.git/hooks`` directory is
        read, listed, searched or written (a hook's text is code git runs), and nothing
        inside ``.git`` is written. None: allowed."""
        rel = os.path.relpath(real, self.root)
        parts = [] if rel == "." else [p.casefold() for p in Path(rel).parts]
        for i, part in enumerate(parts):
            if part == ".git" and i + 1 < len(parts) and parts[i + 1] == "hooks":
                return "git hook directories are protected"
            if part == ".git" and for_write:
                return "tools may not write inside a .git directory"
        return None

    def is_protected(self, real: Path) -> bool:
        """Whether an already-real path may not be read: a forbidden root or inside one, or
        inside a ``.git/hooks`` directory (for walks: the rule `resolve` applies)."""
        s = str(real)
        if any(_inside(s, str(fr)) for fr in self.forbidden_roots):
            return True
        return self._git_refusal(s, for_write=False) is not None

    def display(self, real: Path) -> str:
        """A resolved path as shown to the model: relative to the root, ``.`` for it
        (a file of a read-only root outside it: its absolute path)."""
        if not _inside(str(real), str(self.root)):
            return str(real)
        rel = os.path.relpath(real, self.root)
        return rel.replace(os.sep, "/")

    # ------------------------------------------------------------------ opening

    def _forbidden_ids(self) -> set[tuple[int, int]]:
        ids: set[tuple[int, int]] = set()
        for fr in self.forbidden_roots:
            try:
                st = os.stat(fr)
            except OSError:
                continue
            ids.add((st.st_dev, st.st_ino))
        return ids

    def _rel_parts(self, real: Path) -> list[str]:
        rel = os.path.relpath(real, self.root)
        return [] if rel == "." else list(Path(rel).parts)

    def _open_root(self, shown: str) -> int:
        """A descriptor of the root, which must still be the folder the workspace began
        with (not moved away and replaced, not turned into a symbolic link)."""
        try:
            fd = os.open(self.root, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
        except OSError as exc:
            raise PathRefused(
                shown, f"the workspace folder cannot be opened ({exc.strerror})"
            ) from None
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self._root_id:
            os.close(fd)
            raise PathRefused(shown, "the workspace folder was moved or replaced")
        return fd

    def _walk(self, dirs: list[str], shown: str, *, create: bool) -> _Chain:
        """Descriptors of root/dirs..., each step opened with ``O_NOFOLLOW`` from the one
        before; with ``create``, missing directories are made (and remembered, so that a
        refused write can remove them again)."""
        forbidden = self._forbidden_ids()
        flags = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
        chain = _Chain([self._open_root(shown)])
        try:
            for part in dirs:
                fd = chain.fd
                try:
                    nfd = os.open(part, flags, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    try:
                        os.mkdir(part, 0o777, dir_fd=fd)
                        chain.created.append((len(chain.fds) - 1, part))
                    except FileExistsError:
                        pass
                    nfd = os.open(part, flags, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.EMLINK) or _is_symlink(part, fd):
                        raise PathRefused(
                            shown, "a directory on the way was replaced by a symbolic link"
                        ) from None
                    raise
                chain.fds.append(nfd)
                st = os.fstat(nfd)
                if (st.st_dev, st.st_ino) in forbidden:
                    raise PathRefused(shown, "it is inside the app's own protected directory")
            return chain
        except BaseException:
            chain.close()
            raise

    def _still_inside(self, dirs: list[str], dir_fd: int, shown: str) -> bool:
        """Whether root/dirs... (walked again, ``O_NOFOLLOW``) is still ``dir_fd``: false
        when a directory on the way was moved out of the workspace or replaced."""
        try:
            check = self._walk(dirs, shown, create=False)
        except (OSError, PathRefused):
            return False
        try:
            a, b = os.fstat(check.fd), os.fstat(dir_fd)
            return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
        finally:
            check.close()

    def open_dir(self, real: Path) -> int:
        """A descriptor of a resolved directory, opened step by step with ``O_NOFOLLOW``."""
        shown = self.display(real)
        if not _DIR_FD:
            return os.open(real, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        chain = self._walk(self._rel_parts(real), shown, create=False)
        return chain.detach()

    def open_file(self, real: Path) -> int:
        """A read-only descriptor of a resolved regular file (raises on anything else).

        Device files, FIFOs and sockets are refused before they are opened; a file with
        more than one hard link is refused (another name of it may be outside).
        """
        shown = self.display(real)
        if not _inside(str(real), str(self.root)):
            return self._open_read_only(real, shown)  # `resolve` let it in
        parts = self._rel_parts(real)
        if not parts:
            raise ToolError(f"{shown} is a directory")
        if not _DIR_FD:
            return _open_plain(real, shown)
        chain = self._walk(parts[:-1], shown, create=False)
        try:
            return self.open_in(chain.fd, parts[-1], shown)
        finally:
            chain.close()

    def open_in(self, dir_fd: int, name: str, shown: str) -> int:
        """A read-only descriptor of the regular file ``name`` in the directory ``dir_fd``
        (lstat first: anything else is refused without being opened)."""
        before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        _check_regular(before, shown)
        flags = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC
        try:
            fd = os.open(name, flags, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):
                raise PathRefused(shown, "it was replaced by a symbolic link") from None
            raise
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
                raise PathRefused(shown, "it was replaced while it was being opened")
            _check_regular(st, shown)
        except BaseException:
            os.close(fd)
            raise
        _blocking(fd)
        return fd

    def read_bytes(self, real: Path, limit: int | None = None) -> bytes:
        """The bytes of a resolved regular file (at most ``limit`` bytes)."""
        fd = self.open_file(real)
        with os.fdopen(fd, "rb") as f:
            return f.read() if limit is None else f.read(limit)

    def atomic_write(self, real: Path, data: bytes) -> bool:
        """Replace (or create) a resolved file atomically; parent dirs are created.

        Returns whether the file was created. The parent directory is reached from the
        workspace root with ``O_NOFOLLOW`` at each step; the new content goes to a
        temporary file there, is synced and renamed over the target, so readers see the
        old or the new file, never a mix. Containment is checked again (a fresh walk
        from the root must reach the same directory) before the rename, and after it:
        if a directory on the way was moved out of the workspace meanwhile, the rename
        is undone (the old file put back) and the write refused, so nothing is left
        outside the workspace.
        """
        shown = self.display(real)
        parts = self._rel_parts(real)
        if not parts:
            raise ToolError(f"{shown} is a directory")
        name, dirs = parts[-1], parts[:-1]
        if not _DIR_FD:
            return self._atomic_write_by_path(real, data)
        chain = self._walk(dirs, shown, create=True)
        try:
            return self._write_in(chain, dirs, name, shown, data)
        except BaseException:
            chain.remove_created()
            raise
        finally:
            chain.close()

    def _write_in(self, chain: _Chain, dirs: list[str], name: str, shown: str, data: bytes) -> bool:
        dir_fd = chain.fd
        mode: int | None = None
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None:
            if stat.S_ISLNK(st.st_mode):
                raise PathRefused(shown, "it was replaced by a symbolic link")
            if stat.S_ISDIR(st.st_mode):
                raise ToolError(f"{shown} is a directory")
            _check_regular(st, shown)
            mode = stat.S_IMODE(st.st_mode)
        token = secrets.token_hex(4)
        tmp = f".{name[:200]}.{token}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
        fd = os.open(tmp, flags, 0o666, dir_fd=dir_fd)
        placed = False
        backup: str | None = None
        try:
            try:
                if mode is not None:
                    os.fchmod(fd, mode)
                _write_all(fd, data)
                os.fsync(fd)
                written = os.fstat(fd)
            finally:
                os.close(fd)
            if not self._still_inside(dirs, dir_fd, shown):
                raise _moved(shown)
            if st is not None:
                backup = _keep_old(name, f".{name[:200]}.{token}.old", dir_fd)
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            placed = True
            if not self._still_inside(dirs, dir_fd, shown):
                # Moved out between the check and the rename: undo, leave nothing there.
                _undo(name, backup, written, dir_fd)
                backup = None
                raise _moved(shown)
        except BaseException:
            if not placed:
                _unlink_quietly(tmp, dir_fd)
            if backup is not None:
                _unlink_quietly(backup, dir_fd)
            raise
        if backup is not None:
            _unlink_quietly(backup, dir_fd)
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
        return st is None

    def _atomic_write_by_path(self, real: Path, data: bytes) -> bool:
        """Without ``dir_fd`` support (Windows): by path, checked again before replacing."""
        created = not real.exists()
        if real.is_symlink():
            raise PathRefused(self.display(real), "it was replaced by a symbolic link")
        real.parent.mkdir(parents=True, exist_ok=True)
        tmp = real.with_name(f".{real.name[:200]}.{secrets.token_hex(4)}.tmp")
        try:
            with open(tmp, "xb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            if not _inside(os.path.realpath(real.parent), str(self.root)):
                raise _moved(self.display(real))
            os.replace(tmp, real)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return created


class _Chain:
    """Open directory descriptors from the root down, and the directories we made."""

    def __init__(self, fds: list[int]) -> None:
        self.fds = fds
        self.created: list[tuple[int, str]] = []
        """(index of the parent's descriptor, name) of each directory made by the walk."""

    @property
    def fd(self) -> int:
        return self.fds[-1]

    def detach(self) -> int:
        """The last descriptor (the caller closes it); the others are closed."""
        last = self.fds.pop()
        self.close()
        return last

    def remove_created(self) -> None:
        """Remove (if still empty) the directories this walk made, deepest first."""
        for index, name in reversed(self.created):
            try:
                os.rmdir(name, dir_fd=self.fds[index])
            except OSError:
                pass
        self.created.clear()

    def close(self) -> None:
        while self.fds:
            try:
                os.close(self.fds.pop())
            except OSError:
                pass


def _moved(shown: str) -> PathRefused:
    return PathRefused(
        shown, "a directory on the way was moved out of the workspace or replaced during the write"
    )


def _check_regular(st: os.stat_result, shown: str) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise PathRefused(shown, "it was replaced by a symbolic link")
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{shown} is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"{shown} is not a regular file (a device, FIFO or socket)")
    if st.st_nlink > 1:
        raise PathRefused(
            shown,
            f"it has {st.st_nlink} hard links, so the same file may also be outside the "
            "workspace (use bash to copy it if you need it)",
        )


def _keep_old(name: str, backup: str, dir_fd: int) -> str | None:
    """A second name for the file about to be replaced, to put it back if needed."""
    try:
        os.link(name, backup, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None  # no hard links here (some file systems): no undo of the old content
    return backup


def _undo(name: str, backup: str | None, written: os.stat_result, dir_fd: int) -> None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return
    if (st.st_dev, st.st_ino) != (written.st_dev, written.st_ino):
        return  # someone else's file by now: leave it
    if backup is not None:
        os.rename(backup, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    else:
        _unlink_quietly(name, dir_fd)


def _unlink_quietly(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _blocking(fd: int) -> None:
    if _O_NONBLOCK and hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)


def _is_symlink(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
