"""Render the app icon (desktop_agent/resources/icons/desktop-agent.svg) for every platform.

``python packaging/render_icons.py OUT`` writes, from that one SVG:

- ``OUT/hicolor/<n>x<n>/apps/desktop-agent.png`` for the freedesktop sizes and
  ``OUT/hicolor/scalable/apps/desktop-agent.svg`` (Linux packages),
- ``OUT/desktop-agent.ico`` (Windows: PNG-compressed entries 16-256 px),
- ``OUT/desktop-agent.icns`` (macOS: PNG entries 16-1024 px, including the @2x types).

Qt (QtSvg, offscreen) draws the PNGs, so the icon looks the same as the window icon the
app draws from the same file; the ICO and ICNS containers are written here (both formats
hold PNG data as is), so no platform tool is needed on the build machine.
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
from pathlib import Path

HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 96, 128, 256, 512)
ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 128, 256)
# ICNS element types holding PNG data, by pixel size (Apple's icns format).
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic10", 1024),
    (b"ic11", 32),
    (b"ic12", 64),
    (b"ic13", 256),
    (b"ic14", 512),
)


def svg_bytes() -> bytes:
    from desktop_agent.resources import ICON_SVG, resource

    return resource(ICON_SVG).read_bytes()


def render_png(svg: bytes, size: int) -> bytes:
    """The SVG drawn at ``size`` x ``size`` pixels, antialiased, on transparency."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(QByteArray(svg))
    if not renderer.isValid():
        raise ValueError("the icon SVG is not valid for QtSvg")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]  # stubs say bytes
        raise OSError("could not encode a PNG")
    buffer.close()
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """An ICO file whose entries are PNG images (Windows Vista and later read these)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = 6 + 16 * len(sizes)
    directory = b""
    blobs = b""
    for size in sizes:
        data = pngs[size]
        edge = 0 if size >= 256 else size  # 0 means 256 in an ICO directory entry
        directory += struct.pack("<BBBBHHII", edge, edge, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
        blobs += data
    return header + directory + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    """An ICNS file of PNG elements (macOS 10.7 and later)."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_TYPES
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def render_all(out: Path) -> list[Path]:
    """Write every icon file under ``out``; returns the paths written."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication(["render_icons"])
    svg = svg_bytes()
    sizes = set(HICOLOR_SIZES) | set(ICO_SIZES) | {size for _, size in ICNS_TYPES}
    pngs = {size: render_png(svg, size) for size in sorted(sizes)}
    written: list[Path] = []
    for size in HICOLOR_SIZES:
        path = out / "hicolor" / f"{size}x{size}" / "apps" / "desktop-agent.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pngs[size])
        written.append(path)
    scalable = out / "hicolor" / "scalable" / "apps" / "desktop-agent.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    scalable.write_bytes(svg)
    written.append(scalable)
    (out / "desktop-agent.ico").write_bytes(ico({s: pngs[s] for s in ICO_SIZES}))
    (out / "desktop-agent.icns").write_bytes(icns(pngs))
    written += [out / "desktop-agent.ico", out / "desktop-agent.icns"]
    del app
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: render_icons.py OUT_DIR\n")
        return 2
    out = Path(argv[0])
    if out.exists():
        shutil.rmtree(out)
    for path in render_all(out):
        sys.stdout.write(f"{path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
