"""The application layer, without Qt: the open session and its harness, session operations,
drafts, and the views the widgets show (ARCHITECTURE.md §1).

Every operation of `Workbench` returns a `Changes` (and emits it), so each view redraws
only what changed; the GUI depends on the `SessionStore` protocol, never on one backend.
The harness's streaming events that the chat draws are re-exported here, so the GUI
needs no lower layer.
"""

from desktop_agent.agent import (
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)
from desktop_agent.config import database_url_problem, normalize_server_url, server_url_problem
from desktop_agent.harness import HarnessError, MessageSavedEvent, PersistenceErrorEvent
from desktop_agent.mcp import McpConfigError
from desktop_agent.session import failed_preview, failure_reason
from desktop_agent.utils.text import query_words, text_matches
from desktop_agent.workbench._changes import NOTHING, Changes
from desktop_agent.workbench._checkpoints import SHOW_CHANGES, FileDiff, TurnChanges
from desktop_agent.workbench._copy import CopyReport, copy_sessions
from desktop_agent.workbench._export import (
    EXPORT_FILTERS,
    EXPORT_SUFFIX,
    demote_headings,
    export_file_name,
    fence_for,
    to_html,
    to_markdown,
)
from desktop_agent.workbench._limits import WorkbenchLimits
from desktop_agent.workbench._listing import SessionList
from desktop_agent.workbench._map import BranchMap, MapUpdate
from desktop_agent.workbench._map_layout import (
    LANE_COLORS,
    MAP_FILTERS,
    BranchTip,
    MapFilter,
    MapRow,
)
from desktop_agent.workbench._mcp import NEW_MCP_ENTRY, McpRow, McpServers, parse_entry
from desktop_agent.workbench._models import Models, label_of
from desktop_agent.workbench._notices import Notices
from desktop_agent.workbench._open import Activity, ApprovalWaitEvent, OpenSession, WorkbenchError
from desktop_agent.workbench._pg_store import PostgresStore, Shared, connect_shared
from desktop_agent.workbench._project import (
    APP_COMMANDS,
    NO_SESSION,
    Completion,
    ContextView,
    parse_app_command,
)
from desktop_agent.workbench._sessions import OpenSessions, RaiseViewEvent, RunEndedEvent
from desktop_agent.workbench._settings_form import LOCAL_PROVIDER, SettingsForm
from desktop_agent.workbench._store import (
    NEW_SESSION_TITLE,
    JsonlStore,
    SessionStore,
    SqliteStore,
)
from desktop_agent.workbench._time import Age, exact_time, parse_time, relative_age, time_key
from desktop_agent.workbench._views import (
    INLINE_ENTRIES,
    PAGE,
    BranchItem,
    BranchReader,
    MessageLoader,
    ModelChoices,
    Notice,
    SaveState,
    SidebarRow,
    TailReader,
    Usage,
    branch_items,
    count_branch_usage,
    entries_phrase,
    error_attempt_text,
    fill,
    is_visible,
    latest_leaf_under,
    newest_first,
    visible_siblings,
)
from desktop_agent.workbench._workbench import (
    Attachment,
    Event,
    Listener,
    Workbench,
)

__all__ = [
    "APP_COMMANDS",
    "EXPORT_FILTERS",
    "EXPORT_SUFFIX",
    "INLINE_ENTRIES",
    "LANE_COLORS",
    "LOCAL_PROVIDER",
    "MAP_FILTERS",
    "NEW_MCP_ENTRY",
    "NEW_SESSION_TITLE",
    "NOTHING",
    "NO_SESSION",
    "PAGE",
    "SHOW_CHANGES",
    "Activity",
    "Age",
    "ApprovalWaitEvent",
    "Attachment",
    "BranchItem",
    "BranchMap",
    "BranchReader",
    "BranchTip",
    "Changes",
    "Completion",
    "ContextView",
    "CopyReport",
    "Event",
    "FileDiff",
    "HarnessError",
    "JsonlStore",
    "Listener",
    "MapFilter",
    "MapRow",
    "MapUpdate",
    "McpConfigError",
    "McpRow",
    "McpServers",
    "MessageEndEvent",
    "MessageLoader",
    "MessageSavedEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelChoices",
    "Models",
    "Notice",
    "Notices",
    "OpenSession",
    "OpenSessions",
    "PersistenceErrorEvent",
    "PostgresStore",
    "RaiseViewEvent",
    "RunEndedEvent",
    "SaveState",
    "SessionList",
    "SessionStore",
    "SettingsForm",
    "Shared",
    "SidebarRow",
    "SqliteStore",
    "TailReader",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnChanges",
    "Usage",
    "Workbench",
    "WorkbenchError",
    "WorkbenchLimits",
    "branch_items",
    "connect_shared",
    "copy_sessions",
    "count_branch_usage",
    "database_url_problem",
    "demote_headings",
    "entries_phrase",
    "error_attempt_text",
    "exact_time",
    "export_file_name",
    "failed_preview",
    "failure_reason",
    "fence_for",
    "fill",
    "is_visible",
    "label_of",
    "latest_leaf_under",
    "newest_first",
    "normalize_server_url",
    "parse_app_command",
    "parse_entry",
    "parse_time",
    "query_words",
    "relative_age",
    "server_url_problem",
    "text_matches",
    "time_key",
    "to_html",
    "to_markdown",
    "visible_siblings",
]
