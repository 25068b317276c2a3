"""`Notices`: the lines above the chat, one per cause, with their buttons' actions.

A notice is keyed by its cause (a new notice with the same key replaces it, ``None``
drops it); its text is English with ``{name}`` placeholders (the GUI translates it).
It reads like a mapping of key to `Notice`; the actions stay here until run once.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from desktop_agent.workbench._changes import NOTHING, Changes
from desktop_agent.workbench._views import Notice

Action = Callable[[], Coroutine[Any, Any, Changes]]


class Notices(Mapping[str, Notice]):
    """The notices shown now, by key, and what their buttons do."""

    def __init__(self) -> None:
        self._shown: dict[str, Notice] = {}
        self._actions: dict[str, Action] = {}

    def __getitem__(self, key: str) -> Notice:
        return self._shown[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._shown)

    def __len__(self) -> int:
        return len(self._shown)

    def shown(self) -> list[Notice]:
        """The notices to show: one whose whole text another notice already says (the
        servers' listing failure quoted by the model's "cannot be used now: …") is left
        out while that one is shown, so a reason is read once."""
        notices = list(self._shown.values())
        return [
            n for n in notices if not any(o is not n and n.english in o.english for o in notices)
        ]

    def texts(self) -> list[str]:
        """Every notice's text with its values, untranslated."""
        return [n.english for n in self._shown.values()]

    def notify(
        self,
        key: str,
        text: str | None,
        action: tuple[str, Action] | None = None,
        **args: object,
    ) -> Changes:
        """Show (or with ``text`` None, drop) the notice of one cause. ``text`` is a fixed
        English text (the GUI translates it) with ``{name}`` placeholders for ``args``."""
        for sub in [k for k in self._actions if k.startswith(key + "/")]:
            del self._actions[sub]  # the buttons of `notify_choices`
        if text is None:
            if self._shown.pop(key, None) is None:
                return NOTHING
            self._actions.pop(key, None)
        else:
            values = tuple((k, str(v)) for k, v in args.items())
            self._shown[key] = Notice(key, text, action[0] if action else None, values)
            if action is not None:
                self._actions[key] = action[1]
            else:
                self._actions.pop(key, None)
        return Changes(notices=True)

    def notify_choices(
        self,
        key: str,
        text: str,
        action: tuple[str, Action],
        more: Sequence[tuple[str, Action]],
        **args: object,
    ) -> Changes:
        """A notice with further buttons besides ``action`` (each run as ``key/label``)."""
        changes = self.notify(key, text, action, **args)
        buttons = tuple((label, f"{key}/{label}") for label, _ in more)
        self._shown[key] = replace(self._shown[key], more=buttons)
        for (_, sub), (_, run) in zip(buttons, more, strict=True):
            self._actions[sub] = run
        return changes

    def take(self, key: str) -> tuple[Changes, Action | None]:
        """A notice's button was pressed (``key/label`` for its other buttons): the
        notice goes, and its action is handed out once (None: it had none, or it ran)."""
        action = self._actions.pop(key, None)
        return self.notify(key.partition("/")[0], None), action
