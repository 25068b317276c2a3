"""What a harness starts with when a session is reopened (SESSION_FORMAT.md §10.5)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from desktop_agent.ai import Model, ModelRegistry, clamp_thinking_level
from desktop_agent.session import SessionContext


@dataclass(frozen=True)
class RestoredSettings:
    """Model, thinking level and tools to start a harness with, plus what to tell the user."""

    model: Model | None
    thinking_level: str
    active_tool_names: list[str] | None
    notice_template: str | None = None
    """What to tell the user: English with ``{saved}`` / ``{model}`` placeholders for
    `notice_args` (the GUI translates the template, then fills it in)."""
    notice_args: dict[str, str] = field(default_factory=dict)

    @property
    def notice(self) -> str | None:
        """The notice in English, filled in (logs, tests)."""
        if self.notice_template is None:
            return None
        return self.notice_template.format_map(self.notice_args)


NO_MODEL = "No model is available: add an API key or a local server in Settings."
"""The notice when no model can be used (also the error of a prompt sent then)."""
_NOTICES = {
    ("gone", True): (
        "Could not restore model {saved} (it is no longer available). Using {model} instead."
    ),
    ("no_key", True): (
        "Could not restore model {saved} (no API key is set for it). Using {model} instead."
    ),
    ("gone", False): (
        "Could not restore model {saved} (it is no longer available). No model is available: "
        "add an API key or a local server in Settings."
    ),
    ("no_key", False): (
        "Could not restore model {saved} (no API key is set for it). No model is available: "
        "add an API key or a local server in Settings."
    ),
}
"""Whole sentences (a translator sees each as it is shown), by (why, another model used);
`scripts/notice_strings.py` puts them in the translation template."""


def restore_settings(
    context: SessionContext,
    registry: ModelRegistry,
    *,
    has_key: Callable[[Model], bool],
    available_tools: Sequence[str],
    has_thinking_entry: bool,
    default_model: str | None = None,
    default_thinking_level: str = "medium",
) -> RestoredSettings:
    """Follow the coding-agent's restore rules.

    - Model: the session's model if the registry still has it and a key (or a local server)
      is available; otherwise the settings' default model; otherwise the first usable
      model. A notice says when the saved model could not be used and what is used instead.
    - Thinking: the branch's level when the branch has a ``thinking_level_change``, else the
      default; then clamped to what the model supports (no model: ``off``).
    - Tools: the branch's active tools minus unknown ones (None: all tools).
    """
    why: str | None = None
    model: Model | None = None
    saved = context.model
    if saved is not None:
        found = registry.find(saved.provider, saved.model_id)
        if found is not None and has_key(found):
            model = found
        else:
            why = "gone" if found is None else "no_key"
    if model is None and default_model:
        candidate = registry.get(default_model)
        if candidate is not None and has_key(candidate):
            model = candidate
    if model is None:
        model = next((m for m in registry.all() if has_key(m)), None)
    template: str | None = None
    args: dict[str, str] = {}
    if why is not None and saved is not None:
        template = _NOTICES[why, model is not None]
        args["saved"] = f"{saved.provider}/{saved.model_id}"
        if model is not None:
            args["model"] = f"{model.provider}/{model.id}"
    elif model is None:
        template = NO_MODEL

    level = context.thinking_level if has_thinking_entry else default_thinking_level
    thinking = clamp_thinking_level(model, level) if model is not None else "off"

    tools: list[str] | None = None
    if context.active_tool_names is not None:
        known = set(available_tools)
        tools = [n for n in context.active_tool_names if n in known]
    return RestoredSettings(model, thinking, tools, template, args)
