"""Workspace checkpoints: snapshots of a project folder in a shadow git store in the
app-data folder (never the user's ``.git``), bound to session entries; diff and restore
of a folder to any point of the session tree.

Qt-free and session-free: the harness records snapshots as ``custom`` entries
(`record_data`), the workbench reads them back (`parse_record`, `state_of`, `turn_pairs`)
and restores (`FolderCheckpoints.restore`).
"""

from desktop_agent.checkpoints._entries import (
    CHECKPOINT_CUSTOM_TYPE,
    MAX_LISTED_CHANGES,
    CheckpointRecord,
    parse_record,
    record_data,
    state_of,
    turn_pairs,
)
from desktop_agent.checkpoints._git import CheckpointError
from desktop_agent.checkpoints._store import (
    EMPTY_TREE,
    MAX_FILE_BYTES,
    PATHSPEC_LIMIT,
    CheckpointStore,
    FileChange,
    FileProblem,
    FolderCheckpoints,
    RestoreResult,
    Skipped,
    Snapshot,
)

__all__ = [
    "CHECKPOINT_CUSTOM_TYPE",
    "EMPTY_TREE",
    "MAX_FILE_BYTES",
    "MAX_LISTED_CHANGES",
    "PATHSPEC_LIMIT",
    "CheckpointError",
    "CheckpointRecord",
    "CheckpointStore",
    "FileChange",
    "FileProblem",
    "FolderCheckpoints",
    "RestoreResult",
    "Skipped",
    "Snapshot",
    "parse_record",
    "record_data",
    "state_of",
    "turn_pairs",
]
