"""What can be checked fast of the packaging: resources in the wheel, the desktop entry and
AppStream metadata, the icons, the CI workflow and shell scripts (linted), the lock file."""

from __future__ import annotations

import configparser
import fnmatch
import os
import re
import shutil
import struct
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QMainWindow
from pytestqt.qtbot import QtBot

from desktop_agent.ai import load_catalogue
from desktop_agent.gui._identity import APP_ID, app_icon, apply_identity, install_help_menu
from desktop_agent.resources import ICON_SVG, MODELS, resource

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
BIN = Path(sys.executable).parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SHELL_SCRIPTS = [
    ROOT / "run-app",
    ROOT / "run-tests",
    ROOT / "scripts" / "bootstrap.sh",
    ROOT / "scripts" / "system-deps.sh",
    ROOT / "scripts" / "apt.sh",
    ROOT / "scripts" / "lock",
    ROOT / ".ci" / "run",
    PACKAGING / "build-linux",
    PACKAGING / "check-linux",
    PACKAGING / "build-macos.sh",
    PACKAGING / "linux" / "install.sh",
    PACKAGING / "linux" / "uninstall.sh",
]


def tool(name: str) -> str:
    """A linter installed with the dev dependencies (binary wheels), else from PATH."""
    path = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert path, f"{name} is a dev dependency (requirements/dev.txt); run ./run-tests to install it"
    return path


# ------------------------------------------------------------------ resources


def test_every_resource_file_is_package_data() -> None:
    globs = PYPROJECT["tool"]["setuptools"]["package-data"]["desktop_agent.resources"]
    folder = ROOT / "desktop_agent" / "resources"
    files = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
    data = [f for f in files if not f.endswith((".py", ".pyc")) and "__pycache__" not in f]
    assert data, "no resources found"
    for name in data:
        assert any(fnmatch.fnmatch(name, g) for g in globs), f"{name} is not in package-data"


@pytest.mark.slow
def test_resources_load_from_the_built_wheel(tmp_path: Path) -> None:
    """The wheel carries the catalogue and the icon, and they load from an install of it."""
    wheel_dir = tmp_path / "wheel"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-w", str(wheel_dir), str(ROOT)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    (wheel,) = wheel_dir.glob("desktop_agent-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert f"desktop_agent/resources/{MODELS}" in names
    assert f"desktop_agent/resources/{ICON_SVG}" in names
    target = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import desktop_agent\n"
        "assert desktop_agent.__file__.startswith(sys.argv[1]), desktop_agent.__file__\n"
        "from desktop_agent.ai import load_catalogue\n"
        "from desktop_agent.resources import ICON_SVG, resource\n"
        "print(len(load_catalogue()), len(resource(ICON_SVG).read_bytes()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(target)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, check=True,
    )  # fmt: skip
    models, icon_bytes = map(int, done.stdout.split())
    assert models == len(load_catalogue()) > 0 and icon_bytes > 500
    shutil.rmtree(ROOT / "build" / "lib", ignore_errors=True)


def test_resources_are_read_with_importlib_resources() -> None:
    assert b'"models"' in resource(MODELS).read_bytes()
    assert b"<svg" in resource(ICON_SVG).read_bytes()
    source = "\n".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "desktop_agent").rglob("*.py")
    )
    assert "parents[2]" not in source and '"resources" /' not in source


# ------------------------------------------------------------------ identity and icon


def test_app_identity_and_icon(qapp: QApplication) -> None:
    old = (qapp.applicationName(), qapp.applicationDisplayName(), qapp.desktopFileName())
    try:
        apply_identity(qapp)
        assert qapp.applicationName() == APP_ID == "desktop-agent"  # X11 WM_CLASS class
        assert qapp.desktopFileName() == APP_ID  # Wayland app id
        assert qapp.applicationDisplayName() == "Desktop Agent"
        assert not qapp.windowIcon().isNull()
    finally:
        qapp.setApplicationName(old[0])
        qapp.setApplicationDisplayName(old[1])
        qapp.setDesktopFileName(old[2])
    icon = app_icon()
    pixmap = icon.pixmap(64, 64)
    assert pixmap.width() == 64 and pixmap.toImage().pixelColor(32, 32).alpha() != 0


def test_help_menu_opens_the_logs(qtbot: QtBot, tmp_path: Path) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    menu = install_help_menu(window, tmp_path / "logs")
    assert menu.objectName() == "helpMenu" and menu.parent() is not None
    assert install_help_menu(window, tmp_path / "logs") is menu  # once, not twice
    assert len(menu.actions()) == 3
    actions = {a.objectName(): a.toolTip() for a in menu.actions()}
    assert actions["openLogAction"] == str(tmp_path / "logs" / "desktop-agent.log")
    assert actions["openCrashLogAction"] == str(tmp_path / "logs" / "crash.log")
    assert actions["showLogFolderAction"] == str(tmp_path / "logs")


def test_icons_rendered_for_every_platform(tmp_path: Path) -> None:
    sys.path.insert(0, str(PACKAGING))
    try:
        import render_icons
    finally:
        sys.path.remove(str(PACKAGING))
    render_icons.render_all(tmp_path)
    for size in render_icons.HICOLOR_SIZES:
        image = QImage(str(tmp_path / "hicolor" / f"{size}x{size}" / "apps" / "desktop-agent.png"))
        assert (image.width(), image.height()) == (size, size)
    assert (tmp_path / "hicolor" / "scalable" / "apps" / "desktop-agent.svg").is_file()
    ico = (tmp_path / "desktop-agent.ico").read_bytes()
    reserved, kind, count = struct.unpack_from("<HHH", ico)
    assert (reserved, kind, count) == (0, 1, len(render_icons.ICO_SIZES))
    for i in range(count):
        _w, _h, _c, _r, _p, _b, size, offset = struct.unpack_from("<BBBBHHII", ico, 6 + 16 * i)
        assert ico[offset : offset + 8] == b"\x89PNG\r\n\x1a\n" and offset + size <= len(ico)
    icns = (tmp_path / "desktop-agent.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    assert b"ic10" in icns and b"icp4" in icns


# ------------------------------------------------------------------ desktop entry, AppStream


def filled(template: str, out: Path) -> Path:
    text = (PACKAGING / "linux" / template).read_text(encoding="utf-8")
    text = text.replace("@EXEC@", "/usr/bin/desktop-agent").replace("@VERSION@", "0.1.0")
    out.write_text(text.replace("@DATE@", "2026-12-01"), encoding="utf-8")
    return out


def test_desktop_entry_validates_and_matches_the_window(tmp_path: Path) -> None:
    desktop = filled("desktop-agent.desktop.in", tmp_path / "desktop-agent.desktop")
    done = subprocess.run(
        [tool("desktop-file-validate"), str(desktop)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(desktop, encoding="utf-8")
    main = entry["Desktop Entry"]
    assert main["StartupWMClass"] == APP_ID and main["Icon"] == APP_ID
    assert main["Exec"] == "/usr/bin/desktop-agent" and main["Terminal"] == "false"
    assert entry["Desktop Action new-session"]["Exec"] == "/usr/bin/desktop-agent --new"


def test_appstream_metainfo_validates(tmp_path: Path) -> None:
    name = "io.github.desktopagent.DesktopAgent.metainfo.xml"
    metainfo = filled(name + ".in", tmp_path / name)
    done = subprocess.run(
        [tool("appstreamcli"), "validate", "--no-net", "--pedantic", str(metainfo)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    root = ET.parse(metainfo).getroot()
    assert root.findtext("id") == name.removesuffix(".metainfo.xml")
    assert root.findtext("launchable") == "desktop-agent.desktop"
    assert root.find("releases/release").get("version") == PYPROJECT["project"]["version"]  # type: ignore[union-attr]


# ------------------------------------------------------------------ CI workflow, shell scripts


def test_ci_workflow_passes_actionlint() -> None:
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert workflows, "no GitHub Actions workflow"
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [tool("actionlint"), "-shellcheck", tool("shellcheck"), *map(str, workflows)],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    text = "\n".join(w.read_text(encoding="utf-8") for w in workflows)
    for needle in ("ubuntu-", "windows-", "macos-", "build-linux", "check-linux", "smoke.py"):
        assert needle in text
    assert "-Check" in text


def test_shell_scripts_pass_shellcheck() -> None:
    done = subprocess.run(
        [tool("shellcheck"), "--severity=warning", *map(str, SHELL_SCRIPTS)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


# ------------------------------------------------------------------ the lock


def requirement_name(spec: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", spec)
    assert match
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


@pytest.mark.parametrize(
    ("lock", "groups"),
    [("runtime.txt", ()), ("dev.txt", ("dev",)), ("freeze.txt", ("freeze",))],
)
def test_lock_pins_every_dependency(lock: str, groups: tuple[str, ...]) -> None:
    """Each lock file pins (with hashes) every dependency pyproject.toml names."""
    text = (ROOT / "requirements" / lock).read_text(encoding="utf-8")
    pinned = {requirement_name(m) for m in re.findall(r"^([A-Za-z0-9][\w.-]*)==", text, re.M)}
    wanted = {requirement_name(d) for d in PYPROJECT["project"]["dependencies"]}
    extras = PYPROJECT["project"]["optional-dependencies"]
    for group in groups:
        wanted |= {requirement_name(d) for d in extras[group]}
    assert wanted <= pinned, f"run scripts/lock: {sorted(wanted - pinned)} not in {lock}"
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 1)[1])
    assert all("--hash=sha256:" in b for b in blocks if "==" in b)
