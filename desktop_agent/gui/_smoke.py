"""The one JSON line of ``--smoke`` (and of a script's ``state``, `gui._script`)."""

from __future__ import annotations

from typing import Any

from desktop_agent.workbench import Workbench


async def smoke_payload(wb: Workbench, startup_ms: int) -> dict[str, Any]:
    """The one JSON line of ``--smoke``: what was restored (``messages_shown``: the
    messages of its context), how fast it was drawn, its model, the notices, and how many
    sessions the list shows (``pi_sessions``: those of the Pi CLI's folder)."""
    session = wb.session
    return {
        "restored_session": session.metadata.id if session else None,
        "leaf": session.leaf_id() if session else None,
        "messages_shown": await wb.context_size(),
        "startup_ms": startup_ms,
        "model": wb.model_key(),
        "notices": wb.notice_texts(),
        "sessions": len(wb.rows) - wb.pi_count,
        "pi_sessions": wb.pi_count,
        "restored_source": ("pi" if wb.is_pi(wb.ref) else "ours") if session else None,
    }
