"""Thinking levels per model: which are supported, clamping, provider values (§10.5)."""

from __future__ import annotations

from desktop_agent.ai._messages import THINKING_LEVELS, ThinkingLevel
from desktop_agent.ai._models import Model, ThinkingValue

_BASE_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high")

# Defaults when a reasoning model has no map (or does not name a level).
_ANTHROPIC_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
}


def supported_thinking_levels(model: Model | None) -> list[ThinkingLevel]:
    """Levels the model accepts, in order (SESSION_FORMAT §10.5 step 4).

    No model or a model that does not reason: ``["off"]``. Otherwise ``off`` to ``high``
    minus the levels mapped to ``None`` in ``thinking_level_map``, plus ``xhigh`` only when
    the map defines it.
    """
    if model is None or not model.reasoning:
        return ["off"]
    level_map = model.thinking_level_map or {}
    levels: list[ThinkingLevel] = [
        lvl for lvl in _BASE_LEVELS if not (lvl in level_map and level_map[lvl] is None)
    ]
    if level_map.get("xhigh") is not None:
        levels.append("xhigh")
    return levels


def takes_thinking_level(model: Model) -> bool:
    """Whether a request to ``model`` can carry a thinking level: a reasoning model of an
    OpenAI-compatible server without ``reasoning_effort`` (LM Studio, Ollama…) thinks as
    its server decides, whatever the level (FIRST_HOUR.md m7)."""
    if not model.reasoning:
        return False
    if model.api == "openai-completions":
        return model.compat is None or model.compat.supports_reasoning_effort
    return True


def clamp_thinking_level(model: Model | None, level: ThinkingLevel | str) -> ThinkingLevel:
    """The level to use for ``model`` when ``level`` is requested.

    An unsupported level moves up to the nearest supported higher level, else down to the
    nearest supported lower one. An unknown level name counts as ``medium``.
    """
    supported = supported_thinking_levels(model)
    wanted: ThinkingLevel = "medium"
    for known in THINKING_LEVELS:
        if known == level:
            wanted = known
    if wanted in supported:
        return wanted
    index = THINKING_LEVELS.index(wanted)
    for higher in THINKING_LEVELS[index + 1 :]:
        if higher in supported:
            return higher
    for lower in reversed(THINKING_LEVELS[:index]):
        if lower in supported:
            return lower
    return "off"


def thinking_value(model: Model, level: ThinkingLevel | str) -> ThinkingValue:
    """The provider value for ``level`` after clamping; ``None`` means "do not ask to think".

    OpenAI: a reasoning-effort name; Anthropic: a token budget (int) or, for models with
    adaptive thinking, an effort name (str). ``off`` gives ``None`` unless the map names a
    value for ``off``.
    """
    clamped = clamp_thinking_level(model, level)
    level_map = model.thinking_level_map or {}
    if clamped in level_map:
        return level_map[clamped]
    if clamped == "off":
        return None
    if model.api == "anthropic-messages":
        return _ANTHROPIC_BUDGETS[clamped]
    return clamped
