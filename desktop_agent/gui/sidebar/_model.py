"""`SessionListModel`: sessions grouped by workspace, newest activity first; the sessions
of another program's folder (the Pi CLI's, ``SidebarRow.source == "pi"``) follow ours
under a section header, grouped by workspace the same way."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QCoreApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QBrush, QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

from desktop_agent.gui._icons import icon
from desktop_agent.workbench import (
    SidebarRow,
    fill,
    parse_time,
    query_words,
    relative_age,
    text_matches,
)

Index = QModelIndex | QPersistentModelIndex
Clock = Callable[[], datetime]

_OLDEST = datetime.min.replace(tzinfo=UTC)


class SidebarRole(IntEnum):
    """Extra item data roles of `SessionListModel`."""

    PATH = Qt.ItemDataRole.UserRole + 1
    IS_GROUP = Qt.ItemDataRole.UserRole + 2
    CWD = Qt.ItemDataRole.UserRole + 3
    ROW = Qt.ItemDataRole.UserRole + 4  # the SidebarRow of a session row
    IS_CURRENT = Qt.ItemDataRole.UserRole + 5
    SOURCE = Qt.ItemDataRole.UserRole + 6  # "sessions" (ours) or "pi"
    GROUP_KEY = Qt.ItemDataRole.UserRole + 7  # a group's key: its cwd (ours), "pi:" + cwd
    IS_SECTION = Qt.ItemDataRole.UserRole + 8  # the header of another source's groups
    SNIPPET = Qt.ItemDataRole.UserRole + 9  # a search's hit in the session's text, or ""


PI_SOURCE = "pi"
"""`SidebarRow.source` of the Pi CLI's sessions."""


def group_key(source: str, cwd: str) -> str:
    """Workspaces are grouped per source: ours by cwd, Pi's as ``pi:<cwd>``."""
    return cwd if source != PI_SOURCE else f"{PI_SOURCE}:{cwd}"


def local_now() -> datetime:
    return datetime.now().astimezone()


def _tr(text: str) -> str:
    return QCoreApplication.translate("SessionListModel", text)


def relative_time(value: str, now: datetime) -> str:
    """ "just now", "5 min ago", "3 h ago", "yesterday", "3 days ago", or the date,
    translated (`relative_age`: calendar days are counted in ``now``'s time zone)."""
    age = relative_age(value, now)
    return fill(QCoreApplication.translate("notices", age.text), age.args) if age else ""


def activity_text(row: SidebarRow, now: datetime) -> str:
    """How the session's agent is doing, as its row says it ("" nothing to say):
    running with the time since it started, waiting for an approval, failed, finished."""
    if row.activity == "running":
        started = row.run_started
        seconds = max(0, int(now.timestamp() - started)) if started is not None else 0
        elapsed = f"{seconds // 60}:{seconds % 60:02d}"
        return _tr("running {elapsed}").format(elapsed=elapsed)
    if row.activity == "waiting":
        return _tr("needs approval")
    if row.activity == "failed":
        return _tr("failed")
    if row.activity == "finished":
        return _tr("finished")
    return ""


@dataclass
class _Group:
    cwd: str
    name: str
    sessions: list[SidebarRow] = field(default_factory=list)
    newest: datetime = _OLDEST
    source: str = "sessions"
    section: bool = False  # the header row above another source's groups (no children)

    @property
    def key(self) -> str:
        return f"section:{self.source}" if self.section else group_key(self.source, self.cwd)


def _folder_names(cwds: Sequence[str]) -> dict[str, str]:
    """Folder name per workspace; names shared by two workspaces get their parent too."""
    base = {c: os.path.basename(c.rstrip("/\\")) or c or _tr("(no workspace)") for c in cwds}
    counts: dict[str, int] = {}
    for name in base.values():
        counts[name] = counts.get(name, 0) + 1
    out: dict[str, str] = {}
    for cwd, name in base.items():
        if counts[name] > 1 and cwd:
            parent = os.path.basename(os.path.dirname(cwd.rstrip("/\\")))
            out[cwd] = f"{name} ({parent})" if parent else name
        else:
            out[cwd] = name
    return out


class SessionListModel(QAbstractItemModel):
    """Two columns: title (groups: folder name) and relative last activity.

    Top-level rows are workspaces, newest activity first; their children are sessions,
    newest activity first. The order comes only from the data: marking a session as
    current never moves it. A local title filter hides sessions (and empty groups).
    """

    COLUMNS = 2

    def __init__(self, parent: QObject | None = None, now: Clock = local_now) -> None:
        super().__init__(parent)
        self._now = now
        self._rows: list[SidebarRow] = []
        self._groups: list[_Group] = []
        self._query = ""
        self._current: str | None = None
        self._where: dict[str, tuple[int, int]] = {}  # path -> (group, row)

    # ------------------------------------------------------------------ updates

    def set_rows(self, rows: Sequence[SidebarRow], query: str | None = None) -> bool:
        """Replace all sessions, and the title filter if ``query`` is given. Rows that
        keep their places (the same sessions in the same groups and order) are updated
        in place, one `dataChanged` per row that changed (a run that starts, waits or
        ends in another session repaints its row, not the list); otherwise one reset.
        Returns whether the model was reset."""
        self._rows = list(rows)
        if query is not None:
            self._query = query.strip()
        groups, where = self._built()
        if _layout(groups) == _layout(self._groups):
            old, self._groups, self._where = self._groups, groups, where
            for g, (before, after) in enumerate(zip(old, groups, strict=True)):
                for r, (was, now) in enumerate(zip(before.sessions, after.sessions, strict=True)):
                    if was != now:
                        parent = self.index(g, 0)
                        self.dataChanged.emit(
                            self.index(r, 0, parent), self.index(r, self.COLUMNS - 1, parent)
                        )
            return False
        self.beginResetModel()
        self._groups, self._where = groups, where
        self.endResetModel()
        return True

    def rows(self) -> list[SidebarRow]:
        return list(self._rows)

    def set_filter(self, query: str) -> None:
        """Show only sessions whose title has every word of ``query`` (one reset)."""
        query = query.strip()
        if query == self._query:
            return
        self._query = query
        groups, where = self._built()
        self.beginResetModel()
        self._groups, self._where = groups, where
        self.endResetModel()

    def filter_text(self) -> str:
        return self._query

    def set_current(self, path: str | None) -> None:
        old, self._current = self._current, path
        if old == path:
            return
        for p in (old, path):
            index = self.index_for_path(p) if p is not None else QModelIndex()
            if index.isValid():
                self.dataChanged.emit(index, index.siblingAtColumn(self.COLUMNS - 1))

    def current(self) -> str | None:
        return self._current

    def set_clock(self, now: Clock) -> None:
        self._now = now
        self.refresh_times()

    @property
    def has_snippets(self) -> bool:
        """Some row shows where a search found its words (rows of two heights then)."""
        return any(r.snippet for g in self._groups for r in g.sessions)

    @property
    def any_running(self) -> bool:
        return any(r.activity == "running" for r in self._rows)

    def refresh_running(self) -> None:
        """Repaint the elapsed time of the rows whose agent runs (call once a second)."""
        for g, group in enumerate(self._groups):
            for r, row in enumerate(group.sessions):
                if row.activity == "running":
                    index = self.index(r, 1, self.index(g, 0))
                    self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole])

    def refresh_times(self) -> None:
        """Recompute the relative times (call once a minute)."""
        for g, group in enumerate(self._groups):
            if group.sessions:
                parent = self.index(g, 0)
                self.dataChanged.emit(
                    self.index(0, 1, parent),
                    self.index(len(group.sessions) - 1, 1, parent),
                    [Qt.ItemDataRole.DisplayRole],
                )

    # ------------------------------------------------------------------ lookups

    def index_for_path(self, path: str) -> QModelIndex:
        where = self._where.get(path)
        return self.createIndex(where[1], 0, where[0] + 1) if where else QModelIndex()

    def index_for_cwd(self, cwd: str) -> QModelIndex:
        """The group of a workspace, by `group_key` (ours: the cwd itself)."""
        for g, group in enumerate(self._groups):
            if group.key == cwd:
                return self.createIndex(g, 0, 0)
        return QModelIndex()

    def section_index(self, source: str = PI_SOURCE) -> QModelIndex:
        """The section header of ``source``'s sessions (invalid when it has none)."""
        for g, group in enumerate(self._groups):
            if group.section and group.source == source:
                return self.createIndex(g, 0, 0)
        return QModelIndex()

    def row_data(self, index: Index) -> SidebarRow | None:
        if not index.isValid() or index.internalId() == 0:
            return None
        group = self._groups[index.internalId() - 1]
        return group.sessions[index.row()]

    def group_count(self) -> int:
        return len(self._groups)

    def session_count(self) -> int:
        return sum(len(g.sessions) for g in self._groups)

    def source_count(self, source: str) -> int:
        """Sessions of one source the list shows now."""
        return sum(len(g.sessions) for g in self._groups if g.source == source)

    # ------------------------------------------------------------------ build

    def _built(self) -> tuple[list[_Group], dict[str, tuple[int, int]]]:
        """The groups of the rows the filter lets through, and where each row is."""
        by_cwd: dict[str, _Group] = {}
        keyed: list[tuple[datetime, SidebarRow]] = []
        words = query_words(self._query)  # (the rule of the stores' search: accents too)
        for row in self._rows:
            if words and not text_matches(words, row.title):
                continue
            keyed.append((parse_time(row.last_activity) or _OLDEST, row))
        keyed.sort(key=lambda kr: (kr[0], kr[1].last_activity), reverse=True)
        # names come from every workspace, so filtering never changes a group's name
        names = _folder_names(list(dict.fromkeys(row.cwd for row in self._rows)))
        for when, row in keyed:
            key = group_key(row.source, row.cwd)
            group = by_cwd.get(key)
            if group is None:
                group = by_cwd[key] = _Group(
                    row.cwd, names[row.cwd], newest=when, source=row.source
                )
            group.sessions.append(row)
        # groups appear in the order of their newest session (keyed is newest first);
        # ours first, then each other source under its section header
        groups = list(by_cwd.values())
        ours = [g for g in groups if g.source != PI_SOURCE]
        pi = [g for g in groups if g.source == PI_SOURCE]
        if pi:
            ours.append(_Group("", "", source=PI_SOURCE, section=True))
            ours.extend(pi)
        where = {
            row.path: (g, r) for g, group in enumerate(ours) for r, row in enumerate(group.sessions)
        }
        return ours, where

    # ------------------------------------------------------------------ Qt model API

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not 0 <= column < self.COLUMNS or row < 0:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, 0) if row < len(self._groups) else QModelIndex()
        if parent.internalId() != 0 or parent.column() != 0:
            return QModelIndex()
        g = parent.row()
        if g >= len(self._groups) or row >= len(self._groups[g].sessions):
            return QModelIndex()
        return self.createIndex(row, column, g + 1)

    def parent(self, child: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not child.isValid() or child.internalId() == 0:
            return QModelIndex()
        return self.createIndex(child.internalId() - 1, 0, 0)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self._groups)
        if parent.internalId() != 0 or parent.column() != 0:
            return 0
        return len(self._groups[parent.row()].sessions)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return self.COLUMNS

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return self.rowCount(parent) > 0

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if index.internalId() == 0 and self._groups[index.row()].section:
            return Qt.ItemFlag.ItemIsEnabled
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return (_tr("Session"), _tr("Last activity"))[section] if 0 <= section < 2 else None
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() == 0:
            return self._group_data(self._groups[index.row()], index.column(), role)
        group = self._groups[index.internalId() - 1]
        return self._session_data(group.sessions[index.row()], index.column(), role)

    def _section_data(self, group: _Group, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return self.tr("Pi sessions")
            return str(self.source_count(group.source))
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.tr(
                "Sessions of the Pi coding agent, from its own folder. They open and continue"
                " in place (Pi can go on with them too); right-click one to copy it into"
                " Desktop Agent."
            )
        if role == Qt.ItemDataRole.FontRole and column == 0:
            font = QFont()
            font.setBold(True)
            font.setCapitalization(QFont.Capitalization.AllUppercase)
            return font
        if role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(muted_text())
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role in (SidebarRole.IS_GROUP, SidebarRole.IS_SECTION):
            return True
        if role == SidebarRole.SOURCE:
            return group.source
        if role == SidebarRole.GROUP_KEY:
            return group.key
        return None

    def _group_data(self, group: _Group, column: int, role: int) -> Any:
        if group.section:
            return self._section_data(group, column, role)
        if role == Qt.ItemDataRole.DisplayRole:
            return group.name if column == 0 else str(len(group.sessions))
        if role == Qt.ItemDataRole.ToolTipRole:
            return group.cwd or _tr("Sessions without a workspace")
        if role == Qt.ItemDataRole.FontRole and column == 0:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and column == 1:
            return QBrush(muted_text())
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == SidebarRole.IS_GROUP:
            return True
        if role == SidebarRole.IS_SECTION:
            return False
        if role == SidebarRole.CWD:
            return group.cwd
        if role == SidebarRole.SOURCE:
            return group.source
        if role == SidebarRole.GROUP_KEY:
            return group.key
        return None

    def forked_from(self, row: SidebarRow) -> str:
        """What a fork's row says of its original: "Forked from <its title>" (the file's
        name when it is not listed); "" for a session that is no fork."""
        if not row.parent:
            return ""
        original = next((r for r in self._rows if r.path == row.parent), None)
        name = original.title if original is not None else os.path.basename(row.parent)
        return _tr("Forked from {title}").format(title=name or row.parent)

    def _session_data(self, row: SidebarRow, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return row.title or _tr("(untitled)")
            now = self._now()
            return activity_text(row, now) or relative_time(row.last_activity, now)
        if role == Qt.ItemDataRole.DecorationRole and column == 0 and row.parent:
            return icon("branch", QApplication.palette())
        if (
            role == Qt.ItemDataRole.AccessibleTextRole
            and column == 0
            and (row.activity or row.parent or row.snippet)
        ):
            parts = [row.title or _tr("(untitled)"), self.forked_from(row)]
            if row.activity:
                parts.append(activity_text(row, self._now()))
            if row.snippet:
                parts.append(_tr("found: {snippet}").format(snippet=row.snippet))
            return ", ".join(p for p in parts if p)
        if role == Qt.ItemDataRole.ToolTipRole:
            if row.problem:
                problem = _tr("Cannot read this session: {problem}").format(problem=row.problem)
                return f"{problem}\n{row.path}"
            when = parse_time(row.last_activity)
            shown = when.astimezone().strftime("%Y-%m-%d %H:%M") if when else row.last_activity
            last = _tr("Last activity: {time}").format(time=shown)
            text = f"{row.title or _tr('(untitled)')}\n{row.cwd}\n{last}"
            if row.snippet:
                text += "\n" + _tr("Found: {snippet}").format(snippet=row.snippet)
            if row.parent:
                text += "\n" + self.forked_from(row)
            if row.source == PI_SOURCE:
                text += "\n" + self.tr("A session of the Pi coding agent: {0}").format(row.path)
            if row.activity:
                text += "\n" + _tr("Agent: {state}").format(state=activity_text(row, self._now()))
            return text
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == 1 and row.activity in ("waiting", "failed"):
                return QBrush(QApplication.palette().color(QPalette.ColorRole.Highlight))
            if row.problem:
                return QBrush(muted_text())
            if column == 1 and not row.activity:
                return QBrush(muted_text())
            return None
        unseen = row.activity in ("finished", "failed", "waiting")
        if role == Qt.ItemDataRole.FontRole and column == 1 and row.activity:
            font = QFont()
            font.setBold(unseen)
            return font
        if role == Qt.ItemDataRole.FontRole and row.path == self._current and column == 0:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == SidebarRole.PATH:
            return row.path
        if role == SidebarRole.SNIPPET:
            return row.snippet if column == 0 else ""
        if role in (SidebarRole.IS_GROUP, SidebarRole.IS_SECTION):
            return False
        if role == SidebarRole.CWD:
            return row.cwd
        if role == SidebarRole.SOURCE:
            return row.source
        if role == SidebarRole.ROW:
            return row
        if role == SidebarRole.IS_CURRENT:
            return row.path == self._current
        return None


def _layout(groups: Sequence[_Group]) -> list[tuple[str, str, list[tuple[str, bool]]]]:
    """What decides the rows' places and heights: each group's key and name, its sessions
    in order, and which of them show a search's snippet (a second line)."""
    return [(g.key, g.name, [(r.path, bool(r.snippet)) for r in g.sessions]) for g in groups]


def muted_text() -> QColor:
    """Text colour blended towards the background: secondary, still readable."""
    palette = QApplication.palette()
    text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
    mix = 0.45
    return QColor(
        round(text.red() * (1 - mix) + base.red() * mix),
        round(text.green() * (1 - mix) + base.green() * mix),
        round(text.blue() * (1 - mix) + base.blue() * mix),
    )
