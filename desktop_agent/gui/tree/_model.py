"""`SessionTreeModel`: session nodes as a foldable tree for a `QTreeView`.

Layout (like a commit graph): the oldest line of the conversation is one flat list, so a
long session does not walk off to the right. Where the conversation branches, the oldest
child continues the line at the same level and every younger child starts a side branch
nested under the branch point; the rest of a side branch nests under its first entry.
Folding a branch point folds its side branches; folding a side branch's first entry folds
that branch. The layout depends only on the rows, never on the current path, so moving
the leaf never moves nodes around.

The model is rebuilt in O(n) from a list of `TreeRow` (one model reset per `set_rows`
or filter change); items are plain integers (`QModelIndex.internalId` is the node's
position in the row list), so 10,000 entries cost no per-node objects beyond the rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPointF,
    Qt,
)
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPalette, QPixmap, QPolygonF
from PySide6.QtWidgets import QApplication

from desktop_agent.session import TreeRow

Index = QModelIndex | QPersistentModelIndex

_NO_PARENT = -1


class TreeRole(IntEnum):
    """Extra item data roles of `SessionTreeModel`."""

    ID = Qt.ItemDataRole.UserRole + 1
    TYPE = Qt.ItemDataRole.UserRole + 2
    MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 3
    LABEL = Qt.ItemDataRole.UserRole + 4
    ON_CURRENT_PATH = Qt.ItemDataRole.UserRole + 5
    IS_CURRENT_LEAF = Qt.ItemDataRole.UserRole + 6
    TIMESTAMP = Qt.ItemDataRole.UserRole + 7
    #: True for compactions and branch summaries (drawn italic with their own marker)
    IS_SUMMARY = Qt.ItemDataRole.UserRole + 8


SUMMARY_TYPES = frozenset({"compaction", "branch_summary"})

_MARK_COLORS = {
    "user": "#3d7be0",
    "assistant": "#3a9a5b",
    "toolResult": "#8a8f98",
    "compaction": "#d9822b",
    "branch_summary": "#9b59b6",
    "other": "#b0b4ba",
}


def _mark_key(row: TreeRow) -> str:
    if row.type in SUMMARY_TYPES:
        return row.type
    if row.type == "message" and row.role in ("user", "assistant", "toolResult"):
        return row.role or "other"
    if row.type == "message" and row.role in ("branchSummary", "compactionSummary"):
        return "branch_summary" if row.role == "branchSummary" else "compaction"
    return "other"


def _make_icon(color: str, key: str) -> QIcon:
    """A small marker: a dot for messages, a diamond for compactions, a square for summaries."""
    size = 12
    pix = QPixmap(size, size)
    pix.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pix)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(color))
    if key == "compaction":
        painter.drawPolygon(
            QPolygonF([QPointF(6, 0.5), QPointF(11.5, 6), QPointF(6, 11.5), QPointF(0.5, 6)])
        )
    elif key == "branch_summary":
        painter.drawRoundedRect(1, 1, 10, 10, 2, 2)
    elif key == "other":
        painter.drawEllipse(3, 3, 6, 6)
    else:
        painter.drawEllipse(1, 1, 10, 10)
    painter.end()
    return QIcon(pix)


_NODE_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_NO_FLAGS = Qt.ItemFlag.NoItemFlags


class SessionTreeModel(QAbstractItemModel):
    """Rows of a session as a tree (one column), with the current path marked."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[TreeRow] = []
        self._pos: dict[str, int] = {}
        self._user_only = False
        self._path: set[str] = set()
        self._leaf: str | None = None
        # display structure (indices into _rows; _NO_PARENT = top level)
        self._dparent: list[int] = []
        self._drow: list[int] = []
        self._dchildren: dict[int, list[int]] = {_NO_PARENT: []}
        self._vparent: list[int] = []
        self._cont: list[int] = []
        self._continued: set[int] = set()
        self._icons: dict[str, QIcon] = {}

    # ------------------------------------------------------------------ updates

    def set_rows(self, rows: Sequence[TreeRow]) -> None:
        """Replace all rows (one model reset)."""
        self.beginResetModel()
        self._rows = list(rows)
        self._pos = {r.id: i for i, r in enumerate(self._rows)}
        self._layout()
        self.endResetModel()

    def rows(self) -> list[TreeRow]:
        return list(self._rows)

    def has(self, entry_id: str) -> bool:
        return entry_id in self._pos

    def parent_indexes(self) -> list[QModelIndex]:
        """Every shown node that has shown children (what "expand all" must open)."""
        return [
            self.createIndex(self._drow[pos], 0, pos)
            for pos, kids in self._dchildren.items()
            if pos != _NO_PARENT and kids
        ]

    def user_only(self) -> bool:
        return self._user_only

    def set_user_only(self, on: bool) -> None:
        """Show only user messages, each under its nearest user-message ancestor."""
        if on == self._user_only:
            return
        self.beginResetModel()
        self._user_only = on
        self._layout()
        self.endResetModel()

    def set_current_path(self, ids: Iterable[str]) -> None:
        """Mark the root→leaf path (the last id is the leaf); only changed rows update."""
        ids = list(ids)
        old, old_leaf = self._path, self._leaf
        self._path = set(ids)
        self._leaf = ids[-1] if ids else None
        changed = (old ^ self._path) | {x for x in (old_leaf, self._leaf) if x is not None}
        self._emit_changed(changed)

    def current_path(self) -> set[str]:
        return set(self._path)

    def current_leaf(self) -> str | None:
        return self._leaf

    # ------------------------------------------------------------------ lookups

    def row_for(self, index: Index) -> TreeRow | None:
        if not index.isValid():
            return None
        return self._rows[index.internalId()]

    def index_for_id(self, entry_id: str) -> QModelIndex:
        """The index of a shown node (invalid when unknown or hidden by the filter)."""
        pos = self._pos.get(entry_id)
        if pos is None or pos >= len(self._drow) or self._drow[pos] < 0:
            return QModelIndex()
        return self.createIndex(self._drow[pos], 0, pos)

    def nearest_shown(self, path: Sequence[str]) -> QModelIndex:
        """The deepest id of ``path`` that is a shown node (invalid if none)."""
        for entry_id in reversed(path):
            index = self.index_for_id(entry_id)
            if index.isValid():
                return index
        return QModelIndex()

    def is_shown(self, entry_id: str) -> bool:
        return self.index_for_id(entry_id).isValid()

    # ------------------------------------------------------------------ layout

    def _visible(self, row: TreeRow) -> bool:
        if not self._user_only:
            return True
        return row.type == "message" and row.role == "user"

    def _layout(self) -> None:
        """Compute the shown tree in O(n) (see the module docstring)."""
        rows = self._rows
        n = len(rows)
        parent = [_NO_PARENT] * n
        for i, r in enumerate(rows):
            p = self._pos.get(r.parent_id) if r.parent_id is not None else None
            if p is not None and p != i:
                parent[i] = p
        kids: dict[int, list[int]] = {}
        for i in range(n):
            kids.setdefault(parent[i], []).append(i)
        for lst in kids.values():
            lst.sort(key=lambda j: rows[j].timestamp)
        # pre-order walk (roots first; nodes on parent cycles are walked as extra roots)
        order: list[int] = []
        seen = [False] * n
        starts = list(kids.get(_NO_PARENT, []))
        stack = list(reversed(starts))
        cursor = 0
        while True:
            while stack:
                i = stack.pop()
                if seen[i]:
                    continue
                seen[i] = True
                order.append(i)
                stack.extend(reversed(kids.get(i, [])))
            if len(order) == n:
                break
            while cursor < n and seen[cursor]:
                cursor += 1
            parent[cursor] = _NO_PARENT
            stack.append(cursor)
        # virtual parent: nearest visible ancestor
        visible = [self._visible(r) for r in rows]
        vparent = [_NO_PARENT] * n
        for i in order:
            p = parent[i]
            vparent[i] = p if p == _NO_PARENT or visible[p] else vparent[p]
        # display parent: the oldest child continues its parent's line at the same level;
        # a younger child starts a side branch nested under the branch point, and the rest
        # of that side branch nests under its first entry.
        dparent = [_NO_PARENT] * n
        drow = [-1] * n
        cont = [_NO_PARENT] * n  # where the line through a node continues
        continued: set[int] = set()  # virtual parents whose oldest child was placed
        dchildren: dict[int, list[int]] = {_NO_PARENT: []}
        for i in order:
            if not visible[i]:
                continue
            vp = vparent[i]
            if vp in continued:
                dp = vp
                cont[i] = i
            else:
                continued.add(vp)
                dp = _NO_PARENT if vp == _NO_PARENT else cont[vp]
                cont[i] = dp
            dparent[i] = dp
            siblings = dchildren.setdefault(dp, [])
            drow[i] = len(siblings)
            siblings.append(i)
        self._dparent, self._drow, self._dchildren = dparent, drow, dchildren
        self._vparent, self._cont, self._continued = vparent, cont, continued

    def append_rows(self, rows: Sequence[TreeRow]) -> bool:
        """Add the rows of new entries without a reset (one ``rowsInserted`` each).

        New entries are the newest, so each lands at the end of its display parent's
        children; when one would not (an unknown parent, or a line that does not end at
        its parent), False is returned and the caller resets with `set_rows`.
        """
        for row in rows:
            if row.id in self._pos:
                continue
            p = self._pos.get(row.parent_id) if row.parent_id is not None else _NO_PARENT
            if p is None:
                return False
            i = len(self._rows)
            self._rows.append(row)
            self._pos[row.id] = i
            vp = p if p == _NO_PARENT or self._visible(self._rows[p]) else self._vparent[p]
            self._vparent.append(vp)
            if not self._visible(row):
                self._dparent.append(_NO_PARENT)
                self._drow.append(-1)
                self._cont.append(_NO_PARENT)
                continue
            if vp in self._continued:
                dp, cont = vp, i
            else:
                dp = _NO_PARENT if vp == _NO_PARENT else self._cont[vp]
                kids = self._dchildren.get(dp, [])
                # The line continues at the end of its container only if it ends at vp
                # (a side branch's head holds its own line: anything new goes last).
                if vp not in (_NO_PARENT, dp) and (not kids or kids[-1] != vp):
                    return False
                self._continued.add(vp)
                cont = dp
            siblings = self._dchildren.setdefault(dp, [])
            parent = QModelIndex() if dp == _NO_PARENT else self.createIndex(self._drow[dp], 0, dp)
            self.beginInsertRows(parent, len(siblings), len(siblings))
            self._dparent.append(dp)
            self._drow.append(len(siblings))
            self._cont.append(cont)
            siblings.append(i)
            self.endInsertRows()
        return True

    def display_parent_of(self, entry_id: str) -> QModelIndex:
        """The index a shown node hangs under (invalid: top level or not shown)."""
        pos = self._pos.get(entry_id)
        if pos is None or self._drow[pos] < 0 or self._dparent[pos] == _NO_PARENT:
            return QModelIndex()
        dp = self._dparent[pos]
        return self.createIndex(self._drow[dp], 0, dp)

    def update_row(self, row: TreeRow) -> None:
        """New facts (e.g. a label) for a known entry."""
        pos = self._pos.get(row.id)
        if pos is None:
            return
        self._rows[pos] = row
        self._emit_changed([row.id])

    def _emit_changed(self, ids: Iterable[str]) -> None:
        by_parent: dict[int, list[int]] = {}
        for entry_id in ids:
            pos = self._pos.get(entry_id)
            if pos is None or self._drow[pos] < 0:
                continue
            by_parent.setdefault(self._dparent[pos], []).append(self._drow[pos])
        for dp, rows in by_parent.items():
            kids = self._dchildren[dp]
            first, last = min(rows), max(rows)
            self.dataChanged.emit(
                self.createIndex(first, 0, kids[first]), self.createIndex(last, 0, kids[last])
            )

    # ------------------------------------------------------------------ Qt model API

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if column != 0 or row < 0:
            return QModelIndex()
        if parent.isValid():
            if parent.column() != 0:
                return QModelIndex()
            key = parent.internalId()
        else:
            key = _NO_PARENT
        kids = self._dchildren.get(key)
        if kids is None or row >= len(kids):
            return QModelIndex()
        return self.createIndex(row, 0, kids[row])

    def parent(self, child: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not child.isValid():
            return QModelIndex()
        dp = self._dparent[child.internalId()]
        if dp == _NO_PARENT:
            return QModelIndex()
        return self.createIndex(self._drow[dp], 0, dp)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid():
            if parent.column() != 0:
                return 0
            return len(self._dchildren.get(parent.internalId(), ()))
        return len(self._dchildren[_NO_PARENT])

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 1

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        if not parent.isValid():
            return bool(self._dchildren[_NO_PARENT])
        return parent.column() == 0 and bool(self._dchildren.get(parent.internalId()))

    def flags(self, index: Index) -> Qt.ItemFlag:
        # Called for every row when the view lays out: keep it to a lookup.
        return _NODE_FLAGS if index.isValid() else _NO_FLAGS

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            section == 0
            and orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
        ):
            return "Entry"
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.internalId()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.text
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [row.text, f"{row.type} · {row.timestamp}"]
            if row.label:
                lines.insert(1, f"Label: {row.label}")
            if row.id == self._leaf:
                lines.append("Current position")
            return "\n".join(lines)
        if role == Qt.ItemDataRole.FontRole:
            on_path = row.id in self._path
            summary = row.type in SUMMARY_TYPES
            if not (on_path or summary):
                return None
            font = QFont()
            font.setBold(on_path)
            font.setItalic(summary)
            return font
        if role == Qt.ItemDataRole.ForegroundRole:
            if row.id in self._path:
                return QBrush(_accent())
            if row.type in SUMMARY_TYPES:
                return QBrush(_muted())
            return None
        if role == Qt.ItemDataRole.DecorationRole:
            key = _mark_key(row)
            icon = self._icons.get(key)
            if icon is None:
                icon = self._icons[key] = _make_icon(_MARK_COLORS[key], key)
            return icon
        if role == TreeRole.ID:
            return row.id
        if role == TreeRole.TYPE:
            return row.type
        if role == TreeRole.MESSAGE_ROLE:
            return row.role
        if role == TreeRole.LABEL:
            return row.label
        if role == TreeRole.ON_CURRENT_PATH:
            return row.id in self._path
        if role == TreeRole.IS_CURRENT_LEAF:
            return row.id == self._leaf
        if role == TreeRole.TIMESTAMP:
            return row.timestamp
        if role == TreeRole.IS_SUMMARY:
            return row.type in SUMMARY_TYPES
        return None


def _accent() -> QColor:
    palette = QApplication.palette()
    return palette.color(QPalette.ColorRole.Accent)


def _muted() -> QColor:
    """Text colour blended a third of the way towards the background (still readable)."""
    palette = QApplication.palette()
    text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
    mix = 0.35
    return QColor(
        round(text.red() * (1 - mix) + base.red() * mix),
        round(text.green() * (1 - mix) + base.green() * mix),
        round(text.blue() * (1 - mix) + base.blue() * mix),
    )
