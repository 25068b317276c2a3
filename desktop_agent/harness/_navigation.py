"""Moving the leaf within a session's tree (Pi's ``navigateTree``): where a move to an
entry lands (`landing`: a prompt goes back to the editor, the leaf to its parent), and
the summary of the branch being left (`summarize_abandoned`), which the harness writes
with the move (`AgentHarness.navigate_tree`)."""

from __future__ import annotations

from typing import Any

from desktop_agent.ai import Model, StreamOptions, UserMessage
from desktop_agent.harness._compaction import (
    Completer,
    collect_branch_entries,
    generate_branch_summary,
)
from desktop_agent.harness._redaction import SessionRedaction
from desktop_agent.session import CustomMessageEntry, MessageEntry, Session, SessionEntry
from desktop_agent.utils.text import content_text


def landing(
    target: SessionEntry | None, target_id: str | None, *, exact: bool
) -> tuple[str | None, str | None]:
    """(the new leaf, the text given back to the editor) of a move to ``target``: a user
    message (or a custom message) is edited again, so the leaf goes to its parent, unless
    ``exact`` (switching to a branch that ends in a prompt)."""
    if exact:
        return target_id, None
    if isinstance(target, MessageEntry) and isinstance(target.message, UserMessage):
        return target.parent_id, content_text(target.message.content)
    if isinstance(target, CustomMessageEntry):
        return target.parent_id, content_text(target.content)
    return target_id, None


async def summarize_abandoned(
    session: Session,
    old_leaf: str,
    new_leaf: str | None,
    *,
    model: Model,
    options: StreamOptions,
    complete: Completer,
    reserve_tokens: int,
    custom_instructions: str | None,
    redaction: SessionRedaction,
) -> dict[str, Any] | None:
    """The ``branch_summary`` of the entries on ``old_leaf``'s path that the move to
    ``new_leaf`` leaves behind (redacted as the session keeps it); None when nothing is
    left behind. Raises `CompactionError` (``aborted`` when stopped)."""
    old_path = await session.get_branch(old_leaf)
    target_path = await session.get_branch(new_leaf) if new_leaf else []
    entries = collect_branch_entries(old_path, target_path)
    if not entries:
        return None
    text, details = await generate_branch_summary(
        entries,
        model=model,
        options=options,
        complete=complete,
        reserve_tokens=reserve_tokens,
        custom_instructions=custom_instructions,
    )
    return {"summary": redaction.text(text), "details": redaction.data(details)}
