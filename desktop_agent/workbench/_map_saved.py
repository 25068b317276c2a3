"""Branch-map layouts kept between launches (derived data: any file may go missing): the
format of a saved layout, and the folder that keeps them.

Laying out the map of a 100,000-entry session took 0.2-0.4 s of every launch, though the
session had not changed since the last one. The layout of the open session is written
when it is closed (`BranchMap.saved`) and taken at the next open when it still fits the
session (`BranchMap.restore_saved` checks a checksum of the entries it was made for);
entries appended since are laid out as usual. Only big sessions' layouts are kept, the
``keep`` most recently written (`WorkbenchLimits.maps_kept`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import zlib
from array import array
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from desktop_agent.session import TreeShape
from desktop_agent.utils.atomic import atomic_write
from desktop_agent.workbench._map_layout import BranchTip, Layout, MapFilter, MapRow, branch_tip

log = logging.getLogger(__name__)


# ------------------------------------------------------------- the saved layout

_SAVED_VERSION = 4
"""4: lanes and colours follow the tree only, not the current path (m12)."""
_SAVED_ROWS = msgspec.msgpack.Decoder(list[MapRow])


def _ints(data: bytes) -> list[int]:
    return array("i", data).tolist()


def _layout_key(shape: TreeShape, n: int, path: Sequence[int], name: MapFilter) -> int:
    """A checksum of what a layout of the first ``n`` entries depends on: their ids,
    parents, types, roles and times (`TreeShape.columns_crc`, kept in the entry index
    when it covers them), the current path, and the labels when only labelled entries
    are shown."""
    crc = zlib.crc32(shape.columns_crc(n).to_bytes(4, "little"))
    crc = zlib.crc32(array("i", path).tobytes(), crc)
    if name == "labeled":
        crc = zlib.crc32(json.dumps(sorted(shape.labels.items())).encode(), crc)
    return crc


def encode_layout(
    shape: TreeShape,
    name: MapFilter,
    path: list[int],
    layout: Layout,
    tips: list[BranchTip],
) -> bytes:
    """A layout of the first ``len(layout.vis)`` entries of ``shape`` as bytes (for
    `decode_layout` at the next launch). A CRC-32 of the rest comes first: a damaged
    file is refused, not drawn."""
    n = len(layout.vis)
    spans = {
        str(lane): [array("i", starts).tobytes(), array("i", ends).tobytes(),
                    array("i", colors).tobytes()]
        for lane, (starts, ends, colors) in layout.spans.items()
    }  # fmt: skip
    record = {
        "version": _SAVED_VERSION,
        "filter": name,
        "key": _layout_key(shape, n, path, name),
        "n": n,
        "path": array("i", path).tobytes(),
        "vis": bytes(layout.vis),
        "vparent": array("i", layout.vparent).tobytes(),
        "entry": array("i", (r.entry for r in layout.rows)).tobytes(),
        "rows": msgspec.msgpack.encode(layout.rows),
        "spans": spans,
        "tips": [[shape.by_id[t.leaf_id], t.row, t.current] for t in tips],
    }
    body = msgspec.msgpack.encode(record)
    return zlib.crc32(body).to_bytes(4, "little") + body


@dataclass(frozen=True)
class SavedLayout:
    """A saved layout that fits a session: made for its first ``n`` entries, with
    ``path`` the current path then."""

    n: int
    path: list[int]
    record: dict[str, Any]


def decode_layout(shape: TreeShape, name: MapFilter, data: bytes) -> SavedLayout | None:
    """The layout `encode_layout` wrote, when it was made for the same entries (the
    first ones of ``shape``: entries appended since are laid out as usual), the same
    current path and filter; None otherwise (or when ``data`` is damaged)."""
    try:
        if len(data) < 4 or int.from_bytes(data[:4], "little") != zlib.crc32(data[4:]):
            return None
        record = msgspec.msgpack.decode(data[4:])
        n, path = int(record["n"]), _ints(record["path"])
        ok = (
            record["version"] == _SAVED_VERSION
            and record["filter"] == name
            and n <= len(shape.ids)
            and list(shape.path[: len(path)]) == path
            and record["key"] == _layout_key(shape, n, path, name)
        )
    except (msgspec.DecodeError, KeyError, TypeError, ValueError):
        return None
    return SavedLayout(n, path, record) if ok else None


def layout_steps(shape: TreeShape, saved: SavedLayout) -> Generator[None, None, Layout]:
    """The `Layout` of a saved layout, made in a few steps (raises KeyError, TypeError,
    ValueError, IndexError or msgspec.ValidationError when it does not hold together)."""
    record = saved.record
    vis = list(map(bool, record["vis"]))
    vparent = _ints(record["vparent"])
    if len(vis) != saved.n or len(vparent) != saved.n:
        raise ValueError("a saved layout of the wrong length")
    yield
    rows = _SAVED_ROWS.decode(record["rows"])
    entries = _ints(record["entry"])
    if len(entries) != len(rows):
        raise ValueError("a saved layout of the wrong length")
    yield
    row_of = dict(zip(entries, range(len(rows)), strict=True))
    spans = {
        int(lane): (_ints(starts), _ints(ends), _ints(colors))
        for lane, (starts, ends, colors) in record["spans"].items()
    }
    tips = [branch_tip(shape, rows, row, i, bool(current)) for i, row, current in record["tips"]]
    return Layout(vis, vparent, None, rows, row_of, spans, tips)


# ------------------------------------------------------------- the folder


class SavedMaps:
    """One file per session under ``folder`` (named by a hash of its reference)."""

    def __init__(self, folder: Path, *, keep: int = 32) -> None:
        self.folder = folder
        self.keep = keep

    def _file(self, ref: str) -> Path:
        name = hashlib.sha256(ref.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.folder / f"{name}.map"

    def read(self, ref: str) -> bytes | None:
        try:
            return self._file(ref).read_bytes()
        except OSError:
            return None

    def write(self, ref: str, data: bytes) -> None:
        """Keep ``data`` for ``ref`` (never raises: a layout is only a shortcut)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            mine = self._file(ref)
            atomic_write(mine, data, durable=False)
            others = [p for p in self.folder.glob("*.map") if p != mine]
            others.sort(key=lambda p: p.stat().st_mtime_ns)  # the oldest go first
            for old in others[: max(0, len(others) - (self.keep - 1))]:
                old.unlink(missing_ok=True)
        except OSError as exc:
            log.info("the map layout was not kept: %s", os.strerror(exc.errno or 0) or exc)

    def forget(self, ref: str) -> None:
        try:
            self._file(ref).unlink(missing_ok=True)
        except OSError:
            pass
