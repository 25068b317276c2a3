"""`Changes`: what an operation changed, so each view refreshes only that (Anki's
``OpChanges``). Every workbench operation returns one and emits it to listeners."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop_agent.workbench._views import BranchItem


@dataclass(frozen=True)
class Changes:
    """Flags of what changed; all False (and nothing appended) means nothing to redraw.

    - ``session``: another session is open, or none: every view of the open session.
    - ``branch``: the leaf moved to another branch: the chat shows another path.
    - ``map``: the branch map must be redrawn as a whole.
    - ``appended``: entries appended to the open session, in order: the map appends
      their rows (leaf and label entries included; views skip what they do not show).
    - ``saved_items``: messages of this sitting that now have their entry, with their
      place among their siblings (the chat gives their cards Edit and ``‹ n/m ›``).
    - ``sessions``: the session list or the trash.
    - ``usage``, ``save_state``, ``notices``, ``models`` (list, current, thinking),
      ``draft`` (composer text), ``running`` (a run started or settled), ``mcp`` (an MCP
      server's status or tools).
    """

    session: bool = False
    branch: bool = False
    map: bool = False
    appended: tuple[str, ...] = ()
    saved_items: tuple[BranchItem, ...] = ()
    sessions: bool = False
    usage: bool = False
    save_state: bool = False
    notices: bool = False
    models: bool = False
    draft: bool = False
    running: bool = False
    mcp: bool = False

    def __or__(self, other: Changes) -> Changes:
        values: dict[str, Any] = {}
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if isinstance(a, tuple):
                values[f.name] = a + tuple(x for x in b if x not in a)
            else:
                values[f.name] = a or b
        return Changes(**values)

    def shared(self) -> Changes:
        """What every view (window) redraws: the list, notices, models and MCP servers;
        the rest concerns one session, drawn by the view that shows it."""
        return Changes(
            sessions=self.sessions, notices=self.notices, models=self.models, mcp=self.mcp
        )

    @property
    def empty(self) -> bool:
        return not any(getattr(self, f.name) for f in fields(self))

    @staticmethod
    def everything() -> Changes:
        """What a newly opened (or closed) session changes."""
        return Changes(
            session=True,
            branch=True,
            map=True,
            sessions=True,
            usage=True,
            save_state=True,
            notices=True,
            models=True,
            draft=True,
            running=True,
        )


NOTHING = Changes()
