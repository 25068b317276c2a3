"""Qt models over the workbench's `BranchMap`: its rows (the lane view) and its branch
tips (the Branches list), sharing one cache of previews read on demand.

Neither model copies the rows: ``rowCount`` is the map's length as last announced, and
`MapModel.apply` turns a `MapUpdate` into the one Qt notification it needs (a reset, rows
inserted at the end, or rows changed). A row's preview is asked for when it is first
painted (`Previews.want`), in one batch per event-loop turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QCoreApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)

from desktop_agent.workbench import (
    BranchMap,
    BranchTip,
    MapRow,
    MapUpdate,
    exact_time,
    failed_preview,
    failure_reason,
    fill,
    relative_age,
)

Index = QModelIndex | QPersistentModelIndex


class MapRole(IntEnum):
    """Item data roles of `MapModel` and `BranchesModel`."""

    ID = Qt.ItemDataRole.UserRole + 1
    ROW = Qt.ItemDataRole.UserRole + 2
    """The `MapRow` (lane view) or `BranchTip` (Branches list)."""
    LABEL = Qt.ItemDataRole.UserRole + 3
    AGE = Qt.ItemDataRole.UserRole + 4
    HIT = Qt.ItemDataRole.UserRole + 5
    CURRENT = Qt.ItemDataRole.UserRole + 6
    """The current leaf's row (lane view) or the current branch (Branches list)."""
    TARGET = Qt.ItemDataRole.UserRole + 7
    """Where activating the row moves the leaf."""
    FILES = Qt.ItemDataRole.UserRole + 8
    """How many files the turns of the row changed (0: none)."""


def _tr(text: str) -> str:
    return QCoreApplication.translate("BranchMap", text)


def kind_name(kind: str) -> str:
    names = {
        "user": _tr("you"),
        "assistant": _tr("assistant"),
        "compaction": _tr("compaction"),
        "summary": _tr("branch summary"),
        "tool": _tr("tool result"),
        "setting": _tr("setting"),
        "other": _tr("message"),
    }
    return names.get(kind, kind)


def age_text(timestamp: str, *, short: bool = True) -> str:
    """How long ago ``timestamp`` was, translated: "5 min" for the map's narrow column,
    "5 min ago" with ``short=False`` (what a screen reader says); "" if unknown."""
    age = relative_age(timestamp, short=short)
    return fill(QCoreApplication.translate("notices", age.text), age.args) if age else ""


class Previews(QObject):
    """One-line previews by entry id; missing ones are asked for in batches."""

    needed = Signal(list)
    """Entry ids whose previews should be read (answer with `set`)."""
    arrived = Signal(list)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._texts: dict[str, str] = {}
        self._asked: set[str] = set()
        self._wanted: list[str] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._flush)

    def get(self, entry_id: str) -> str | None:
        return self._texts.get(entry_id)

    def want(self, entry_id: str) -> str | None:
        """The preview if known; else None, and it is asked for."""
        text = self._texts.get(entry_id)
        if text is None and entry_id not in self._asked:
            self._asked.add(entry_id)
            self._wanted.append(entry_id)
            self._timer.start()
        return text

    def set(self, texts: dict[str, str]) -> None:
        self._texts.update(texts)
        self.arrived.emit(list(texts))

    def forget(self, entry_ids: Iterable[str] = ()) -> None:
        """Ask again for these (all when none are named), e.g. for another session."""
        ids = list(entry_ids)
        if not ids:
            self._texts.clear()
            self._asked.clear()
            return
        for entry_id in ids:
            self._texts.pop(entry_id, None)
            self._asked.discard(entry_id)

    def _flush(self) -> None:
        wanted, self._wanted = self._wanted, []
        if wanted:
            self.needed.emit(wanted)


class MapModel(QAbstractListModel):
    """The map's rows, for the lane view."""

    def __init__(
        self,
        previews: Previews,
        parent: QObject | None = None,
        *,
        tooltip: Callable[[str], str] | None = None,
    ) -> None:
        """``tooltip(entry_id)``: the whole message of a row, for its tooltip."""
        super().__init__(parent)
        self.bmap = BranchMap()
        self.previews = previews
        self._count = 0
        self._tips: dict[int, BranchTip] = {}
        self.tooltip_source: Callable[[str], str] = tooltip or (lambda _entry_id: "")
        previews.arrived.connect(self._on_previews)

    # ------------------------------------------------------------------ updates

    def apply(self, bmap: BranchMap, update: MapUpdate) -> None:
        """Show ``bmap`` after ``update`` (one Qt notification per kind of change)."""
        self._tips = {t.row: t for t in bmap.tips()}  # (kept by the map until it changes)
        if update.reset or bmap is not self.bmap:
            self.beginResetModel()
            self.bmap = bmap
            self._count = len(bmap)
            self.endResetModel()
            return
        if update.first_new >= 0 and len(bmap) > self._count:
            self.beginInsertRows(QModelIndex(), self._count, len(bmap) - 1)
            self._count = len(bmap)
            self.endInsertRows()
        changed = list(update.changed)
        if update.labels or update.path:
            changed = list(range(self._count))
        self._rows_changed(changed)

    def rows_changed(self, rows: Iterable[int]) -> None:
        self._rows_changed(list(rows))

    def _rows_changed(self, rows: list[int]) -> None:
        rows = sorted(r for r in rows if 0 <= r < self._count)
        if not rows:
            return
        # contiguous runs, one signal each
        start = prev = rows[0]
        for r in [*rows[1:], -1]:
            if r != prev + 1:
                self.dataChanged.emit(self.index(start), self.index(prev))
                start = r
            prev = r

    def _on_previews(self, ids: list[str]) -> None:
        wanted = set(ids)
        rows = [r for r in (self.bmap.row_of(e) for e in ids) if r >= 0]
        self._rows_changed(
            [
                r
                for r in rows
                if self.bmap.rows[r].entry_id in wanted or wanted & set(self.bmap.attempts(r))
            ]
        )

    # ------------------------------------------------------------------ lookups

    def map_row(self, r: int) -> MapRow:
        return self.bmap.rows[r]

    def target(self, r: int) -> str:
        """Where activating row ``r`` moves the leaf: the entry, or for the end of a
        branch its last entry (hidden entries after the row are kept); for a run of
        attempts at one reply, its last attempt."""
        tip = self._tips.get(r)
        if tip is not None:
            return tip.leaf_id
        attempts = self.bmap.attempts(r)
        return attempts[-1] if attempts else self.bmap.rows[r].entry_id

    def text(self, r: int) -> str:
        text = self.row_text(r)
        return "…" if text is None else text

    def row_text(self, r: int) -> str | None:
        """Row ``r``'s one line (None: its preview is being read). A run of failed
        attempts at one reply is "Failed · N attempts" (L6), not a node per attempt."""
        row = self.bmap.rows[r]
        attempts = self.bmap.attempts(r)
        if not attempts:
            text = self.previews.want(row.entry_id)
            reason = failure_reason(text) if text is not None else None
            return _tr("Failed · {reason}").format(reason=reason) if reason else text
        last = self.previews.want(attempts[-1])
        if last is None:
            return None
        if failed_preview(last):
            return _tr("Failed · {n} attempts").format(n=len(attempts))
        if len(attempts) == 2:
            return _tr("{text} · after a failed attempt").format(text=last)
        return _tr("{text} · after {n} failed attempts").format(text=last, n=len(attempts) - 1)

    def entry_text(self, entry_id: str) -> str | None:
        """The one line of the row that shows ``entry_id`` (see `row_text`)."""
        r = self.bmap.row_of(entry_id)
        if r >= 0 and self.bmap.rows[r].entry_id == entry_id:
            return self.row_text(r)
        return self.previews.want(entry_id)

    def accessible(self, r: int) -> str:
        row = self.bmap.rows[r]
        parts = [kind_name(row.kind), self.row_text(r) or ""]
        age = age_text(self.bmap.timestamp(r), short=False)
        if age:
            parts.append(age)
        label = self.bmap.label(r)
        if label:
            parts.append(_tr("label {label}").format(label=label))
        if r == self.bmap.leaf_row:
            parts.append(_tr("current"))
        elif self.bmap.on_path(r):
            parts.append(_tr("on the current branch"))
        if r in self.bmap.hits:
            parts.append(_tr("search hit"))
        return ", ".join(p for p in parts if p)

    # ------------------------------------------------------------------ Qt API

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._count

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < self._count:
            return None
        r = index.row()
        row = self.bmap.rows[r]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(r)
        if role == MapRole.ID:
            return row.entry_id
        if role == MapRole.ROW:
            return row
        if role == MapRole.LABEL:
            return self.bmap.label(r)
        if role == MapRole.AGE:
            return age_text(self.bmap.timestamp(r)) if row.tip else ""
        if role == MapRole.HIT:
            return r in self.bmap.hits
        if role == MapRole.CURRENT:
            return r == self.bmap.leaf_row
        if role == MapRole.TARGET:
            return self.target(r)
        if role == MapRole.FILES:
            mark = self.bmap.file_marks.get(r)
            return mark.changed if mark is not None else 0
        if role == Qt.ItemDataRole.ToolTipRole:
            body = self.tooltip_source(row.entry_id)
            head = f"{kind_name(row.kind)} · {exact_time(self.bmap.timestamp(r))}"
            mark = self.bmap.file_marks.get(r)
            if mark is not None:
                more = mark.changed - len(mark.files)
                listed = "\n".join(mark.files)
                if more > 0:
                    listed += "\n" + _tr("and {n} more").format(n=more)
                files = _tr("Files changed ({n}):").format(n=mark.changed)
                body = f"{files}\n{listed}\n\n{body}" if body else f"{files}\n{listed}"
            return f"{head}\n\n{body}" if body else head
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return self.accessible(r)
        return None


class BranchesModel(QAbstractListModel):
    """Every branch of the session (its tip), newest first, for the Branches list."""

    def __init__(
        self,
        previews: Previews,
        parent: QObject | None = None,
        *,
        text: Callable[[str], str | None] | None = None,
    ) -> None:
        """``text(entry_id)``: the one line of a branch's row (default: its preview)."""
        super().__init__(parent)
        self.previews = previews
        self.tips: list[BranchTip] = []
        self.text_source: Callable[[str], str | None] = text or previews.want
        previews.arrived.connect(self._on_previews)

    def set_tips(self, tips: list[BranchTip]) -> None:
        if tips == self.tips:
            return
        self.beginResetModel()
        self.tips = list(tips)
        self.endResetModel()

    def row_of_leaf(self, leaf_id: str) -> int:
        return next((i for i, t in enumerate(self.tips) if t.leaf_id == leaf_id), -1)

    def _on_previews(self, ids: list[str]) -> None:
        wanted = set(ids)
        for i, tip in enumerate(self.tips):
            if tip.entry_id in wanted or tip.leaf_id in wanted:
                self.dataChanged.emit(self.index(i), self.index(i))

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.tips)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.tips):
            return None
        tip = self.tips[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            if tip.label:
                return tip.label
            text = self.text_source(tip.entry_id)
            return "…" if text is None else text
        if role == MapRole.ID:
            return tip.entry_id
        if role == MapRole.ROW:
            return tip
        if role == MapRole.LABEL:
            return tip.label
        if role == MapRole.AGE:
            return age_text(tip.timestamp)
        if role == MapRole.CURRENT:
            return tip.current
        if role == MapRole.TARGET:
            return tip.leaf_id
        if role == Qt.ItemDataRole.ToolTipRole:
            text = self.text_source(tip.entry_id) or ""
            return f"{exact_time(tip.timestamp)}\n{text}".strip()
        if role == Qt.ItemDataRole.AccessibleTextRole:
            parts = [tip.label or self.text_source(tip.entry_id) or ""]
            age = age_text(tip.timestamp, short=False)
            if age:
                parts.append(age)
            if tip.current:
                parts.append(_tr("current"))
            return ", ".join(p for p in parts if p)
        return None
