"""Regenerate (Ctrl+R, or a reply's hover button), as ChatGPT and Claude do it: a good
answer gets a new *version*, a sibling under the same prompt shown as ‹ n/m ›, and the
request sent ends with that prompt, never with the old answer (FIRST_HOUR.md M5). A failed
request is sent again as before (Retry)."""

from __future__ import annotations

from desktop_agent.ai import AssistantMessage, UserMessage
from desktop_agent.session import Session


def regenerate_point(session: Session, entry_id: str | None = None) -> str | None:
    """The prompt whose answer ``entry_id`` (default: the branch's last answer) is: the
    leaf goes there and the model answers it again. None when the request to answer is a
    failed or stopped one, or not answered yet: then it is retried as it is."""
    ids = session.branch_ids(entry_id)
    last_answer = True
    for i in reversed(ids):
        message = session.get_message(i)
        if isinstance(message, AssistantMessage):
            if last_answer and entry_id is None and message.stop_reason in ("error", "aborted"):
                return None
            last_answer = False
        elif isinstance(message, UserMessage):
            return None if last_answer else i
    return None
