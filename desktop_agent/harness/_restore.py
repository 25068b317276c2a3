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


LOCAL = "local"
"""The provider name of the local or custom server (Settings' "Local or custom server")."""
NO_MODEL = "No model is available: add an API key or a local server in Settings."
"""The notice when no model can be used (also the error of a prompt sent then)."""
_NOTICES = {
    ("gone", True): (
        "Could not restore model {saved} (it is no longer available). Using {model} instead."
    ),
    ("no_key", True): (
        "Could not restore model {saved} (no API key is set for it). Using {model} instead."
    ),
    ("unreachable", True): ("Could not restore model {saved}: {problem} Using {model} instead."),
    ("gone", False): (
        "Model {saved} is no longer available. The session keeps it and sends nothing until"
        " you choose a model."
    ),
    ("no_key", False): (
        "Model {saved} cannot be used: no API key is set for it. The session keeps it and"
        " sends nothing until you add the key in Settings or choose another model."
    ),
    ("unreachable", False): (
        "Model {saved} cannot be used now: {problem} The session keeps it and sends nothing"
        " until its server answers (Try again) or you choose another model."
    ),
    ("default_unreachable", False): (
        "The default model {saved} cannot be used now: {problem} Nothing is sent until its"
        " server answers (Try again) or you choose another model."
    ),
    ("server_unlisted", False): (
        "No model is available: {problem} Nothing is sent until the server lists its models"
        " (Try again) or you set up another model in Settings."
    ),
}
"""Whole sentences (a translator sees each as it is shown), by (why, another model used);
`scripts/notice_strings.py` puts them in the translation template. "Using {model}
instead" is only ever another model of the saved model's own provider."""


def restore_settings(
    context: SessionContext,
    registry: ModelRegistry,
    *,
    has_key: Callable[[Model], bool],
    available_tools: Sequence[str],
    has_thinking_entry: bool,
    default_model: str | None = None,
    default_thinking_level: str = "medium",
    server_problem: Callable[[str], str | None] | None = None,
) -> RestoredSettings:
    """Follow the coding-agent's restore rules, but never change provider by itself.

    - Model: the session's model if the registry still has it and a key (or a local server)
      is available. Otherwise only a model of the same provider (the default model if it is
      one, else the first usable one): a session never moves to another provider, whose
      key and servers the conversation was not meant for (FIRST_HOUR.md L1); without one
      the harness starts with no model, and the notice says why (no longer available, no
      key, its server did not answer: ``server_problem`` of the provider) and that the
      session keeps its model until the user chooses. A session without a saved model
      gets the settings' default model, else the first usable one.
    - Thinking: the branch's level when the branch has a ``thinking_level_change``, else the
      default; then clamped to what the model supports (no model: ``off``).
    - Tools: the branch's active tools minus unknown ones (None: all tools).
    """
    why: str | None = None
    model: Model | None = None
    saved = context.model
    problem: str | None = None
    if saved is not None:
        found = registry.find(saved.provider, saved.model_id)
        if found is not None and has_key(found):
            model = found
        else:
            why = "gone" if found is None else "no_key"
            problem = server_problem(saved.provider) if server_problem is not None else None
            if found is None and problem:
                why = "unreachable"

    def allowed(m: Model) -> bool:
        return has_key(m) and (saved is None or m.provider == saved.provider)

    if model is None and default_model:
        candidate = registry.get(default_model)
        if candidate is not None and allowed(candidate):
            model = candidate
    if model is None:
        model = next((m for m in registry.all() if allowed(m)), None)
    template: str | None = None
    args: dict[str, str] = {}
    if why is not None and saved is not None:
        template = _NOTICES[why, model is not None]
        args["saved"] = f"{saved.provider}/{saved.model_id}"
        if why == "unreachable":
            args["problem"] = problem or ""
        if model is not None:
            args["model"] = f"{model.provider}/{model.id}"
    elif model is None:
        template = NO_MODEL
        provider = default_model.split("/", 1)[0] if default_model else None
        problem = server_problem(provider) if provider and server_problem is not None else None
        if problem and default_model:
            # A server is set up but did not answer: say that, not "add a server" (M4, L3).
            template = _NOTICES["default_unreachable", False]
            args = {"saved": default_model, "problem": problem}
        elif server_problem is not None and (listing := server_problem(LOCAL)):
            # No default model, but the local server is set up and its listing failed
            # (LiteLLM answering 400 "No connected db."): that is the reason, not a
            # missing server (FIRST_HOUR.md L3, seen again in a real window).
            template = _NOTICES["server_unlisted", False]
            args = {"problem": listing}

    level = context.thinking_level if has_thinking_entry else default_thinking_level
    thinking = clamp_thinking_level(model, level) if model is not None else "off"

    tools: list[str] | None = None
    if context.active_tool_names is not None:
        known = set(available_tools)
        tools = [n for n in context.active_tool_names if n in known]
    return RestoredSettings(model, thinking, tools, template, args)
