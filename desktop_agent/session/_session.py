"""`Session`: the domain API over one storage (SESSION_FORMAT.md §6-§7)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from desktop_agent.ai import (
    AgentMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    MessageFormatError,
    PiModel,
    UnknownMessage,
    parse_message,
)
from desktop_agent.session._entries import SessionEntry, parse_entry
from desktop_agent.session._errors import SessionError
from desktop_agent.session._ids import iso_to_ms, new_entry_id, now_iso
from desktop_agent.session._storage import RecoveryReport, SessionMetadata, Storage
from desktop_agent.session._tree import Row, row_from_obj, serialize


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


@dataclass(frozen=True)
class ModelRef:
    """The model a session was last used with."""

    provider: str
    model_id: str


@dataclass
class SessionContext:
    """What the next LLM call sees: messages of the current branch plus settings.

    ``active_tool_names`` is None when the branch never restricted the tools (= all).
    """

    messages: list[AgentMessage]
    thinking_level: str = "off"
    model: ModelRef | None = None
    active_tool_names: list[str] | None = None


@dataclass
class TreeNode:
    """One node of `Session.get_tree()`; children are ordered by timestamp."""

    entry: SessionEntry
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None


@dataclass(frozen=True)
class BranchSummary:
    """A summary written with `Session.move_to` as a ``branch_summary`` entry."""

    summary: str
    details: Any = UNSET
    from_hook: bool | None = None


def _project(row: Row) -> AgentMessage | None:
    """The context message an entry contributes (SESSION_FORMAT §7 step 2), if any."""
    kind = row.type
    if kind == "message":
        obj = row.obj().get("message")
        if not isinstance(obj, dict):
            return None
        try:
            return parse_message(obj, keep_key_order=False)
        except MessageFormatError:
            # Kept as read; convert_to_llm drops it, so a provider never sees it.
            return UnknownMessage.model_construct(**{"role": str(obj.get("role")), **obj})
    if kind == "custom_message":
        obj = row.obj()
        data: dict[str, Any] = {
            "role": "custom",
            "customType": obj.get("customType"),
            "content": obj.get("content"),
            "display": obj.get("display"),
        }
        if "details" in obj:
            data["details"] = obj["details"]
        data["timestamp"] = iso_to_ms(row.timestamp) or 0
        try:
            return CustomMessage.model_validate(data)
        except ValueError:
            return UnknownMessage.model_construct(**data)
    if kind == "branch_summary":
        obj = row.obj()
        summary = obj.get("summary")
        if not isinstance(summary, str) or not summary:
            return None
        return BranchSummaryMessage(
            summary=summary,
            from_id=str(obj.get("fromId")),
            timestamp=iso_to_ms(row.timestamp) or 0,
        )
    return None


def _cached_projector(cache: dict[int, Any]) -> Callable[[Row], AgentMessage | None]:
    def project(row: Row) -> AgentMessage | None:
        key = id(row)
        if key in cache:
            cached: AgentMessage | None = cache[key]
            return cached
        msg = _project(row)
        cache[key] = msg
        return msg

    return project


def build_context_from_path(
    path: Sequence[Row], cache: dict[int, Any] | None = None
) -> SessionContext:
    """`buildSessionContext` of a root-first path, exactly as Pi 0.74.2 plus active tools.

    ``cache`` keeps parsed messages between calls (the harness rebuilds the context every
    turn); the messages are shared, so treat them as read-only.
    """
    project = _project if cache is None else _cached_projector(cache)
    thinking = "off"
    model_key: tuple[str, str] | None = None
    active: list[str] | None = None
    compaction_index: int | None = None
    for i, row in enumerate(path):
        kind = row.type
        if kind == "message":
            role, provider, model_id = row.info
            if role == "assistant" and isinstance(provider, str) and isinstance(model_id, str):
                model_key = (provider, model_id)
        elif kind == "thinking_level_change":
            if isinstance(row.info, str):
                thinking = row.info
        elif kind == "model_change":
            provider, model_id = row.info
            if isinstance(provider, str) and isinstance(model_id, str):
                model_key = (provider, model_id)
        elif kind == "compaction":
            compaction_index = i
        elif kind == "active_tools_change" and row.info is not None:
            active = list(row.info)

    messages: list[AgentMessage] = []
    if compaction_index is None:
        for row in path:
            msg = project(row)
            if msg is not None:
                messages.append(msg)
    else:
        comp = path[compaction_index].obj()
        messages.append(
            CompactionSummaryMessage(
                summary=str(comp.get("summary", "")),
                tokens_before=comp.get("tokensBefore", 0),
                timestamp=iso_to_ms(path[compaction_index].timestamp) or 0,
            )
        )
        first_kept = comp.get("firstKeptEntryId")
        keeping = False
        for row in path[:compaction_index]:
            if row.id == first_kept:
                keeping = True
            if keeping:
                msg = project(row)
                if msg is not None:
                    messages.append(msg)
        for row in path[compaction_index + 1 :]:
            msg = project(row)
            if msg is not None:
                messages.append(msg)
    model = ModelRef(*model_key) if model_key is not None else None
    return SessionContext(messages, thinking, model, active)


def _json_value(value: Any) -> Any:
    if isinstance(value, PiModel):
        return value.to_json_dict()
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    return value


class Session:
    """One open session. All methods are async; mutations are serialised per session."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------- metadata

    @property
    def metadata(self) -> SessionMetadata:
        return self._storage.metadata

    def get_metadata(self) -> SessionMetadata:
        return self._storage.metadata

    def get_storage(self) -> Storage:
        return self._storage

    @property
    def read_only(self) -> bool:
        return self._storage.read_only

    @property
    def read_only_reason(self) -> str | None:
        return self._storage.read_only_reason

    @property
    def recovery(self) -> RecoveryReport | None:
        """What opening had to work around (torn tail set aside, damaged lines)."""
        return self._storage.recovery

    @property
    def pending_count(self) -> int:
        """Entries in memory that are not written to disk yet."""
        return len(self._storage.pending)

    @property
    def entry_count(self) -> int:
        return len(self._storage.tree)

    # ------------------------------------------------------------- reading

    async def get_leaf_id(self) -> str | None:
        return self._storage.tree.current_leaf()

    def leaf_id(self) -> str | None:
        """Synchronous `get_leaf_id` for UI code."""
        return self._storage.tree.current_leaf()

    async def get_entry(self, entry_id: str) -> SessionEntry | None:
        row = self._storage.tree.get(entry_id)
        return parse_entry(row.obj()) if row is not None else None

    async def get_entries(self) -> list[SessionEntry]:
        return [parse_entry(r.obj()) for r in self._storage.tree.rows]

    async def find_entries(self, entry_type: str) -> list[SessionEntry]:
        return [parse_entry(r.obj()) for r in self._storage.tree.rows if r.type == entry_type]

    async def get_branch(self, from_id: str | None = None) -> list[SessionEntry]:
        tree = self._storage.tree
        start = from_id if from_id is not None else tree.current_leaf()
        return [parse_entry(r.obj()) for r in tree.path_to_root(start)]

    def branch_ids(self, from_id: str | None = None, *, lenient: bool = False) -> list[str]:
        """Root-first ids of the path to ``from_id`` (default: the leaf), cheaply.

        ``lenient``: for display of damaged sessions, a missing parent ends the path and
        an unknown leaf gives an empty branch instead of an error.
        """
        tree = self._storage.tree
        if from_id is None:
            try:
                from_id = tree.current_leaf()
            except SessionError:
                if not lenient:
                    raise
                return []
        return [r.id for r in tree.path_to_root(from_id, lenient=lenient)]

    async def build_context(self, *, lenient: bool = False) -> SessionContext:
        """The context of the current branch (SESSION_FORMAT §7).

        ``lenient`` (display of damaged sessions): a broken parent chain ends the path
        instead of raising ``invalid_session``.
        """
        tree = self._storage.tree
        if lenient:
            rows = [tree.require(i) for i in self.branch_ids(lenient=True)]
            return build_context_from_path(rows, tree.parsed)
        return build_context_from_path(tree.path_to_root(tree.current_leaf()), tree.parsed)

    # Cheap synchronous views for UI code (no entry parsing).

    def entry_kind(self, entry_id: str) -> tuple[str, str | None]:
        """(entry type, message role or None) of an entry."""
        row = self._storage.tree.require(entry_id)
        role = row.info[0] if row.type == "message" else None
        return row.type, role if isinstance(role, str) else None

    def parent_of(self, entry_id: str) -> str | None:
        return self._storage.tree.require(entry_id).parent_id or None

    def child_ids(self, entry_id: str | None) -> list[str]:
        """Children of ``entry_id`` (None: roots), oldest first, without parsing them."""
        return [r.id for r in self._sorted_children(entry_id)]

    def get_message(self, entry_id: str) -> AgentMessage | None:
        """The context message an entry contributes (cached; treat it as read-only)."""
        tree = self._storage.tree
        row = tree.require(entry_id)
        return _cached_projector(tree.parsed)(row)

    def raw_entries(self) -> list[tuple[str, str | None, str, str, bytes]]:
        """(id, parent id, type, timestamp, exact JSON line) of every entry, file order.

        For views that need a light read of many entries (the branch tree): decoding the
        lines they need is much cheaper than building typed entries for all of them.
        """
        return [
            (r.id, r.parent_id or None, r.type, r.timestamp, r.raw) for r in self._storage.tree.rows
        ]

    def raw_entry(self, entry_id: str) -> tuple[str, str | None, str, str, bytes]:
        """`raw_entries` of one entry."""
        r = self._storage.tree.require(entry_id)
        return (r.id, r.parent_id or None, r.type, r.timestamp, r.raw)

    def label_of(self, entry_id: str) -> str | None:
        return self._storage.tree.labels.get(entry_id)

    async def get_label(self, entry_id: str) -> str | None:
        return self._storage.tree.labels.get(entry_id)

    async def get_session_name(self) -> str | None:
        return self._storage.tree.name

    async def get_children(self, entry_id: str | None) -> list[SessionEntry]:
        """Children of ``entry_id`` (None: the roots), oldest first."""
        return [parse_entry(r.obj()) for r in self._sorted_children(entry_id)]

    def _sorted_children(self, entry_id: str | None) -> list[Row]:
        tree = self._storage.tree
        children = tree.children_map().get(entry_id, [])
        if entry_id is None:
            # Orphans (parent missing) and self-parented entries are roots too.
            children = children + [
                r
                for r in tree.rows
                if r.parent_id and (r.parent_id not in tree.by_id or r.parent_id == r.id)
            ]
        if len(children) < 2:
            return list(children)
        return sorted(children, key=lambda r: r.timestamp)

    async def get_tree(self) -> list[TreeNode]:
        """The whole forest (iterative, so deep sessions do not hit the recursion limit)."""
        tree = self._storage.tree
        children_map = tree.children_map()
        roots = self._sorted_children(None)
        labels = tree.labels
        seen: set[str] = set()
        out: list[TreeNode] = []
        stack: list[tuple[Row, list[TreeNode]]] = [(r, out) for r in reversed(roots)]
        while stack:
            row, siblings = stack.pop()
            if row.id in seen:
                continue
            seen.add(row.id)
            node = TreeNode(parse_entry(row.obj()), [], labels.get(row.id))
            siblings.append(node)
            kids = sorted(children_map.get(row.id, []), key=lambda r: r.timestamp)
            stack.extend((k, node.children) for k in reversed(kids) if k.id != row.id)
        return out

    # ------------------------------------------------------------- writing

    async def _append(self, kind: str, fields: dict[str, Any]) -> str:
        async with self._lock:
            storage = self._storage
            storage.check_open()
            tree = storage.tree
            obj: dict[str, Any] = {
                "type": kind,
                "id": new_entry_id(tree.by_id),
                "parentId": tree.current_leaf(),
                "timestamp": now_iso(),
            }
            obj.update(fields)
            row = row_from_obj(obj, serialize(obj))
            storage.append(row)
            return row.id

    async def append_message(self, message: AgentMessage | Mapping[str, Any]) -> str:
        if isinstance(message, Mapping):
            try:
                message = parse_message(message)
            except MessageFormatError as exc:
                raise SessionError("invalid_argument", str(exc)) from exc
        return await self._append("message", {"message": message.to_json_dict()})

    async def append_model_change(self, provider: str, model_id: str) -> str:
        return await self._append("model_change", {"provider": provider, "modelId": model_id})

    async def append_thinking_level_change(self, thinking_level: str) -> str:
        return await self._append("thinking_level_change", {"thinkingLevel": thinking_level})

    async def append_active_tools_change(self, active_tool_names: Sequence[str]) -> str:
        return await self._append(
            "active_tools_change", {"activeToolNames": list(active_tool_names)}
        )

    async def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int | float,
        details: Any = UNSET,
        from_hook: bool | None = None,
    ) -> str:
        fields: dict[str, Any] = {
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
        if details is not UNSET:
            fields["details"] = _json_value(details)
        if from_hook is not None:
            fields["fromHook"] = from_hook
        return await self._append("compaction", fields)

    async def append_custom_entry(self, custom_type: str, data: Any = UNSET) -> str:
        fields: dict[str, Any] = {"customType": custom_type}
        if data is not UNSET:
            fields["data"] = _json_value(data)
        return await self._append("custom", fields)

    async def append_custom_message_entry(
        self, custom_type: str, content: Any, display: bool, details: Any = UNSET
    ) -> str:
        fields: dict[str, Any] = {
            "customType": custom_type,
            "content": _json_value(content),
            "display": display,
        }
        if details is not UNSET:
            fields["details"] = _json_value(details)
        return await self._append("custom_message", fields)

    async def append_label(self, target_id: str, label: str | None = None) -> str:
        self._storage.tree.require(target_id)
        fields: dict[str, Any] = {"targetId": target_id}
        if label is not None and label.strip():
            fields["label"] = label
        return await self._append("label", fields)

    async def append_session_name(self, name: str) -> str:
        return await self._append("session_info", {"name": name.strip()})

    async def move_to(
        self,
        entry_id: str | None,
        summary: BranchSummary | Mapping[str, Any] | str | None = None,
    ) -> str | None:
        """Move the leaf (a ``leaf`` entry is always written); optionally add a summary.

        Returns the id of the ``branch_summary`` entry when a summary was given.
        """
        async with self._lock:
            storage = self._storage
            storage.check_open()
            tree = storage.tree
            if entry_id is not None:
                tree.require(entry_id)
            leaf_obj: dict[str, Any] = {
                "type": "leaf",
                "id": new_entry_id(tree.by_id),
                "parentId": tree.current_leaf(),
                "timestamp": now_iso(),
                "targetId": entry_id,
            }
            storage.append(row_from_obj(leaf_obj, serialize(leaf_obj)))
            if summary is None:
                return None
            if isinstance(summary, str):
                summary = BranchSummary(summary)
            elif isinstance(summary, Mapping):
                summary = BranchSummary(
                    str(summary.get("summary", "")),
                    summary.get("details", UNSET),
                    summary.get("fromHook", summary.get("from_hook")),
                )
            obj: dict[str, Any] = {
                "type": "branch_summary",
                "id": new_entry_id(tree.by_id),
                "parentId": entry_id,
                "timestamp": now_iso(),
                "fromId": entry_id if entry_id is not None else "root",
                "summary": summary.summary,
            }
            if summary.details is not UNSET:
                obj["details"] = _json_value(summary.details)
            if summary.from_hook is not None:
                obj["fromHook"] = summary.from_hook
            row = row_from_obj(obj, serialize(obj))
            storage.append(row)
            return row.id

    # ------------------------------------------------------------- durability

    async def sync(self) -> None:
        """Write what is queued and fsync (off the event loop)."""
        async with self._lock:
            if self._storage.pending or getattr(self._storage, "_needs_sync", False):
                await asyncio.to_thread(self._storage.sync)

    async def retry_persistence(self) -> int:
        """Write exactly the entries that are not on disk yet; returns how many."""
        async with self._lock:
            return await asyncio.to_thread(self._storage.retry)

    async def save_copy(self, path: str) -> None:
        """Write the whole session (saved or not) to a new file, e.g. on another disk."""
        save = getattr(self._storage, "save_copy", None)
        if save is None:
            raise SessionError("invalid_argument", "This storage cannot save a copy")
        async with self._lock:
            await asyncio.to_thread(save, path)

    async def close(self) -> None:
        """Sync and release the session; raises (keeping the entries) if saving fails."""
        async with self._lock:
            await asyncio.to_thread(self._storage.close)

    @property
    def closed(self) -> bool:
        return self._storage.closed
