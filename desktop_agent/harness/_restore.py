"""What a harness starts with when a session is reopened (SESSION_FORMAT.md §10.5)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from desktop_agent.ai import Model, ModelRegistry, clamp_thinking_level
from desktop_agent.session import SessionContext


@dataclass(frozen=True)
class RestoredSettings:
    """Model, thinking level and tools to start a harness with, plus what to tell the user."""

    model: Model | None
    thinking_level: str
    active_tool_names: list[str] | None
    notice: str | None = None


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
    notice: str | None = None
    model: Model | None = None
    saved = context.model
    if saved is not None:
        found = registry.find(saved.provider, saved.model_id)
        if found is not None and has_key(found):
            model = found
        else:
            why = "it is no longer available" if found is None else "no API key is set for it"
            notice = f"Could not restore model {saved.provider}/{saved.model_id} ({why})"
    if model is None and default_model:
        candidate = registry.get(default_model)
        if candidate is not None and has_key(candidate):
            model = candidate
    if model is None:
        model = next((m for m in registry.all() if has_key(m)), None)
    if notice is not None:
        if model is not None:
            notice += f". Using {model.provider}/{model.id} instead."
        else:
            notice += ". No model is available: add an API key or a local server in Settings."
    elif model is None:
        notice = "No model is available: add an API key or a local server in Settings."

    level = context.thinking_level if has_thinking_entry else default_thinking_level
    thinking = clamp_thinking_level(model, level) if model is not None else "off"

    tools: list[str] | None = None
    if context.active_tool_names is not None:
        known = set(available_tools)
        tools = [n for n in context.active_tool_names if n in known]
    return RestoredSettings(model, thinking, tools, notice)
