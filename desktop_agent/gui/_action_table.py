"""The one table of the main window's commands (`ACTIONS`): menus, toolbar buttons and
the Help -> Keyboard shortcuts sheet are all made from it (`KEYS` adds the keys widgets
handle themselves, such as Enter in the composer). What each command does is bound in
`gui._actions`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QKeySequence

from desktop_agent.gui._tr import QT_TRANSLATE_NOOP

CONTEXT = "Actions"


def tr(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


@dataclass(frozen=True)
class ActionSpec:
    """One command of the window. ``text`` and ``tip`` are marked for translation."""

    name: str
    menu: str  # "file" | "session" | "view" | "help"; "map": keys of the branch map
    text: str
    tip: str
    shortcuts: tuple[str, ...] = ()
    icon: str = ""
    checkable: bool = False


def _spec(
    name: str, menu: str, text: str, tip: str, *keys: str, icon: str = "", check: bool = False
) -> ActionSpec:
    return ActionSpec(name, menu, text, tip, keys, icon, check)


ACTIONS: tuple[ActionSpec, ...] = (
    _spec(
        "newSessionAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "&New session"),
        QT_TRANSLATE_NOOP("Actions", "Start a new session in the project folder"),
        "Ctrl+N",
        icon="new-session",
    ),
    _spec(
        "newWindowAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "New session in new &window"),
        QT_TRANSLATE_NOOP("Actions", "Start a new session in a window of its own"),
        "Ctrl+Shift+N",
    ),
    _spec(
        "chooseFolderAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "New session in another &folder…"),
        QT_TRANSLATE_NOOP("Actions", "Choose a project folder and start a session there"),
    ),
    _spec(
        "backupAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "&Back up all sessions…"),
        QT_TRANSLATE_NOOP("Actions", "Write every session into one archive"),
    ),
    _spec(
        "settingsAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "&Settings…"),
        QT_TRANSLATE_NOOP("Actions", "Providers, keys, models, approvals, theme"),
        "Ctrl+,",
        icon="settings",
    ),
    _spec(
        "quitAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "&Quit"),
        QT_TRANSLATE_NOOP("Actions", "Save everything and quit"),
        "Ctrl+Q",
    ),
    _spec(
        "openInWindowAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Open in new &window"),
        QT_TRANSLATE_NOOP("Actions", "Show the open session in a window of its own"),
    ),
    _spec(
        "renameAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Rename…"),
        QT_TRANSLATE_NOOP("Actions", "Rename the open session"),
        "F2",
    ),
    _spec(
        "forkAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Fork into a new session"),
        QT_TRANSLATE_NOOP("Actions", "Copy the current branch into a new session"),
    ),
    _spec(
        "copyIntoOursAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Copy into Desktop Agent"),
        QT_TRANSLATE_NOOP("Actions", "Make your own copy of this Pi session and open it"),
    ),
    _spec(
        "convertAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Con&vert to the current format"),
        QT_TRANSLATE_NOOP(
            "Actions", "Write a new file in the current format beside this old one, and open it"
        ),
    ),
    _spec(
        "compactAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Co&mpact now"),
        QT_TRANSLATE_NOOP(
            "Actions", "Summarise the conversation so far to free context (/compact)"
        ),
    ),
    _spec(
        "trashAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Move to trash"),
        QT_TRANSLATE_NOOP("Actions", "Move the open session to the trash (restorable)"),
    ),
    _spec(
        "refreshModelsAction",
        "file",
        QT_TRANSLATE_NOOP("Actions", "Refresh &models"),
        QT_TRANSLATE_NOOP(
            "Actions", "List the models of your servers again (one started after the app)"
        ),
    ),
    _spec(
        "editLastAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Edit message"),
        QT_TRANSLATE_NOOP("Actions", "Edit the focused prompt (or the last one) and send it again"),
        "Ctrl+E",
        icon="edit",
    ),
    _spec(
        "retryAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Re&generate"),
        QT_TRANSLATE_NOOP(
            "Actions", "A new version of the last answer (a failed request is sent again)"
        ),
        "Ctrl+R",
        icon="retry",
    ),
    _spec(
        "copyMessageAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "&Copy message"),
        QT_TRANSLATE_NOOP("Actions", "Copy the focused message (or the last reply)"),
        "Ctrl+Shift+C",
        icon="copy",
    ),
    _spec(
        "previousVersionAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Previous version"),
        QT_TRANSLATE_NOOP("Actions", "Show the previous version of the message (sibling branch)"),
        "Alt+Left",
        icon="previous",
    ),
    _spec(
        "nextVersionAction",
        "session",
        QT_TRANSLATE_NOOP("Actions", "Next version"),
        QT_TRANSLATE_NOOP("Actions", "Show the next version of the message (sibling branch)"),
        "Alt+Right",
        icon="next",
    ),
    _spec(
        "mapPreviousVersionAction",
        "map",
        QT_TRANSLATE_NOOP("Actions", "Previous version at the fork (branch map)"),
        QT_TRANSLATE_NOOP(
            "Actions", "Switch to the previous version at the selected row's fork, as ‹ does"
        ),
        "[",
    ),
    _spec(
        "mapNextVersionAction",
        "map",
        QT_TRANSLATE_NOOP("Actions", "Next version at the fork (branch map)"),
        QT_TRANSLATE_NOOP(
            "Actions", "Switch to the next version at the selected row's fork, as › does"
        ),
        "]",
    ),
    _spec(
        "mapPreviousForkAction",
        "map",
        QT_TRANSLATE_NOOP("Actions", "Previous fork point (branch map)"),
        QT_TRANSLATE_NOOP("Actions", "Select the fork above the selected row, along its line"),
        "Alt+Up",
    ),
    _spec(
        "mapNextForkAction",
        "map",
        QT_TRANSLATE_NOOP("Actions", "Next fork point (branch map)"),
        QT_TRANSLATE_NOOP("Actions", "Select the fork below the selected row, along its line"),
        "Alt+Down",
    ),
    _spec(
        "mapLabelAction",
        "map",
        QT_TRANSLATE_NOOP("Actions", "Label the selected entry (branch map)"),
        QT_TRANSLATE_NOOP("Actions", "Set, edit or remove the label of the selected row"),
        "F2",
    ),
    _spec(
        "sidebarAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Session &list"),
        QT_TRANSLATE_NOOP("Actions", "Show or hide the session list"),
        "Ctrl+B",
        icon="sidebar",
        check=True,
    ),
    _spec(
        "mapAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Branch &map"),
        QT_TRANSLATE_NOOP("Actions", "Show or hide the branch map"),
        "Ctrl+T",
        icon="map",
        check=True,
    ),
    _spec(
        "zoomInAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Zoom &in"),
        QT_TRANSLATE_NOOP("Actions", "Larger text in the conversation and the message box"),
        "Ctrl+=",
        "Ctrl++",
    ),
    _spec(
        "zoomOutAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Zoom &out"),
        QT_TRANSLATE_NOOP("Actions", "Smaller text in the conversation and the message box"),
        "Ctrl+-",
    ),
    _spec(
        "zoomResetAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "&Actual size"),
        QT_TRANSLATE_NOOP("Actions", "The conversation's text at its normal size"),
        "Ctrl+0",
    ),
    _spec(
        "contextAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "&Context"),
        QT_TRANSLATE_NOOP(
            "Actions", "What the model is told: the system prompt and its files (/context)"
        ),
        icon="context",
    ),
    _spec(
        "searchAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Search sessions"),
        QT_TRANSLATE_NOOP("Actions", "Search the titles and contents of all sessions"),
        "Ctrl+K",
        icon="search",
    ),
    _spec(
        "findAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "&Find in conversation"),
        QT_TRANSLATE_NOOP("Actions", "Find text in this conversation, each hit marked"),
        "Ctrl+F",
    ),
    _spec(
        "composerAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Write a message"),
        QT_TRANSLATE_NOOP("Actions", "Move the keyboard focus to the message box"),
        "Ctrl+L",
    ),
    _spec(
        "nextPaneAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Next pane"),
        QT_TRANSLATE_NOOP("Actions", "Sessions, conversation, message box, branch map"),
        "F6",
        "Ctrl+Tab",
    ),
    _spec(
        "previousPaneAction",
        "view",
        QT_TRANSLATE_NOOP("Actions", "Previous pane"),
        QT_TRANSLATE_NOOP("Actions", "The same panes, backwards"),
        "Shift+F6",
        "Ctrl+Shift+Tab",
    ),
    _spec(
        "shortcutsAction",
        "help",
        QT_TRANSLATE_NOOP("Actions", "&Keyboard shortcuts"),
        QT_TRANSLATE_NOOP("Actions", "Every key of the window"),
        "F1",
        "Ctrl+/",
        icon="help",
    ),
    _spec(
        "aboutAction",
        "help",
        QT_TRANSLATE_NOOP("Actions", "&About Desktop Agent"),
        QT_TRANSLATE_NOOP("Actions", "The version of the app"),
    ),
)

KEYS: tuple[tuple[str, str], ...] = (
    (
        QT_TRANSLATE_NOOP("Actions", "Enter (or Ctrl+Enter, see Settings)"),
        QT_TRANSLATE_NOOP("Actions", "Send the message"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Shift+Enter"),
        QT_TRANSLATE_NOOP("Actions", "New line in the message"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Esc"),
        QT_TRANSLATE_NOOP("Actions", "Stop the agent while it runs"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Tab / Shift+Tab"),
        QT_TRANSLATE_NOOP("Actions", "Next / previous control"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Up / Down"),
        QT_TRANSLATE_NOOP("Actions", "Move through sessions, messages, the map"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Enter (in a list or the map)"),
        QT_TRANSLATE_NOOP("Actions", "Open / go to that point"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Ctrl+Enter (editing)"),
        QT_TRANSLATE_NOOP("Actions", "Send the edited message"),
    ),
    (
        QT_TRANSLATE_NOOP("Actions", "Ctrl+wheel (over the chat or the message)"),
        QT_TRANSLATE_NOOP("Actions", "Larger / smaller text"),
    ),
)
"""Keys handled by the widgets themselves, listed on the shortcuts sheet too."""

MENUS: tuple[tuple[str, str], ...] = (
    ("file", QT_TRANSLATE_NOOP("Actions", "&File")),
    ("session", QT_TRANSLATE_NOOP("Actions", "&Session")),
    ("view", QT_TRANSLATE_NOOP("Actions", "&View")),
    ("help", QT_TRANSLATE_NOOP("Actions", "&Help")),
)


def shortcut_rows() -> list[tuple[str, str]]:
    """(keys, what they do) of the shortcuts sheet, translated, from the one table."""
    rows = []
    for spec in ACTIONS:
        if spec.shortcuts:
            keys = " / ".join(
                QKeySequence(k).toString(QKeySequence.SequenceFormat.NativeText)
                for k in spec.shortcuts
            )
            rows.append((keys, tr(spec.text).replace("&", "").rstrip("…")))
    rows.extend((tr(keys), tr(what)) for keys, what in KEYS)
    return rows
