"""Sessions: Pi-v3 entries, storages (memory, JSONL, SQLite, PostgreSQL), repos and `Session`."""

from typing import TYPE_CHECKING, Any

from desktop_agent.session._columns import timestamps_crc
from desktop_agent.session._context import ModelRef, SessionContext
from desktop_agent.session._dirlist import ListProblem, SessionList
from desktop_agent.session._entries import (
    ActiveToolsChangeEntry,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    EntryBase,
    LabelEntry,
    LeafEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
    parse_entry,
)
from desktop_agent.session._errors import SessionError, SessionErrorCode, SessionWriteError
from desktop_agent.session._facts import BranchPage, BranchTail, EntryFacts, failed_preview
from desktop_agent.session._facts_scan import (
    NEW_SESSION_TITLE,
    IndexedSession,
    first_prompt_of,
    session_facts,
    session_title,
)
from desktop_agent.session._header import encode_cwd
from desktop_agent.session._ids import new_entry_id, uuidv7
from desktop_agent.session._index import ReconcileReport, SessionIndex
from desktop_agent.session._progressive import SessionOpening
from desktop_agent.session._reload import ReloadLeaf, ReloadReport
from desktop_agent.session._repos import (
    ForkPosition,
    InMemorySessionRepo,
    JsonlSessionRepo,
    SessionRepo,
)
from desktop_agent.session._session import UNSET, BranchSummary, Session, TreeNode, TreeShape
from desktop_agent.session._sqlite import SqliteSessionRepo
from desktop_agent.session._storage import (
    DamagedLine,
    RecoveryReport,
    SessionMetadata,
    Storage,
)
from desktop_agent.session._trash import TrashItem

if TYPE_CHECKING:
    from desktop_agent.session._postgres import ListedSession, PostgresSessionRepo


def __getattr__(name: str) -> Any:
    """The PostgreSQL store is imported when first named: psycopg takes ~0.3 s to import,
    which a launch on files or SQLite never pays."""
    if name in ("ListedSession", "PostgresSessionRepo"):
        from desktop_agent.session import _postgres

        return getattr(_postgres, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "NEW_SESSION_TITLE",
    "UNSET",
    "ActiveToolsChangeEntry",
    "BranchPage",
    "BranchSummary",
    "BranchSummaryEntry",
    "BranchTail",
    "CompactionEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "DamagedLine",
    "EntryBase",
    "EntryFacts",
    "ForkPosition",
    "InMemorySessionRepo",
    "IndexedSession",
    "JsonlSessionRepo",
    "LabelEntry",
    "LeafEntry",
    "ListProblem",
    "ListedSession",
    "MessageEntry",
    "ModelChangeEntry",
    "ModelRef",
    "PostgresSessionRepo",
    "ReconcileReport",
    "RecoveryReport",
    "ReloadLeaf",
    "ReloadReport",
    "Session",
    "SessionContext",
    "SessionEntry",
    "SessionError",
    "SessionErrorCode",
    "SessionHeader",
    "SessionIndex",
    "SessionInfoEntry",
    "SessionList",
    "SessionMetadata",
    "SessionOpening",
    "SessionRepo",
    "SessionWriteError",
    "SqliteSessionRepo",
    "Storage",
    "ThinkingLevelChangeEntry",
    "TrashItem",
    "TreeNode",
    "TreeShape",
    "UnknownEntry",
    "encode_cwd",
    "failed_preview",
    "first_prompt_of",
    "new_entry_id",
    "parse_entry",
    "session_facts",
    "session_title",
    "timestamps_crc",
    "uuidv7",
]
