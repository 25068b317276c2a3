"""Branch-map layouts kept between launches (derived data: any file may go missing).

Laying out the map of a 100,000-entry session took 0.2-0.4 s of every launch, though the
session had not changed since the last one. The layout of the open session is written
when it is closed (`BranchMap.saved`) and taken at the next open when it still fits the
session (`BranchMap.restore_saved` checks a checksum of the entries it was made for);
entries appended since are laid out as usual. Only big sessions' layouts are kept, the
``keep`` most recently written (`WorkbenchLimits.maps_kept`).
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from desktop_agent.utils.atomic import atomic_write

log = logging.getLogger(__name__)


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
