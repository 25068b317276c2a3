"""How each dialect's streamed deltas merge while the caller's loop is busy (`DeltaMerge`).

Only pure text pieces merge: a text, thinking or tool-argument delta of one block (or one
choice, or one output item) with nothing else in its event. The merged event is the first
one with the concatenated text, so the providers' parsers see what a server sending bigger
pieces would have sent.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from desktop_agent.ai._providers._worker import DeltaMerge

_ANTHROPIC_FIELDS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "input_json_delta": "partial_json",
}


def _anthropic_split(event: dict[str, Any]) -> tuple[Hashable, str] | None:
    if event.get("type") != "content_block_delta":
        return None
    delta = event.get("delta")
    if not isinstance(delta, dict):
        return None
    field = _ANTHROPIC_FIELDS.get(str(delta.get("type")))
    text = delta.get(field) if field is not None else None
    if not isinstance(text, str):
        return None
    return ("anthropic", event.get("index"), field), text


def _anthropic_join(event: dict[str, Any], text: str) -> dict[str, Any]:
    delta = dict(event["delta"])
    delta[_ANTHROPIC_FIELDS[str(delta["type"])]] = text
    return {**event, "delta": delta}


ANTHROPIC = DeltaMerge(_anthropic_split, _anthropic_join)

_COMPLETION_TEXT_FIELDS = frozenset({"content", "reasoning_content", "reasoning", "reasoning_text"})


def _set(d: dict[str, Any]) -> set[str]:
    return {k for k, v in d.items() if v is not None}


def _completions_split(chunk: dict[str, Any]) -> tuple[Hashable, str] | None:
    if chunk.get("usage") is not None or chunk.get("error") is not None:
        return None
    choices = chunk.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        return None
    choice = choices[0]
    delta = choice.get("delta")
    if choice.get("finish_reason") is not None or not isinstance(delta, dict):
        return None
    keys = _set(delta)
    if len(keys) != 1:
        return None
    (field,) = keys
    value = delta[field]
    if field in _COMPLETION_TEXT_FIELDS and isinstance(value, str):
        return ("completions", choice.get("index"), field), value
    if field == "tool_calls" and isinstance(value, list) and len(value) == 1:
        piece = value[0]
        if isinstance(piece, dict) and _set(piece) <= {"index", "function"}:
            function = piece.get("function")
            if isinstance(function, dict) and _set(function) == {"arguments"}:
                arguments = function["arguments"]
                if isinstance(arguments, str):
                    return ("completions", choice.get("index"), "tool", piece.get("index")), (
                        arguments
                    )
    return None


def _completions_join(chunk: dict[str, Any], text: str) -> dict[str, Any]:
    choice = dict(chunk["choices"][0])
    delta = dict(choice["delta"])
    (field,) = _set(delta)
    if field == "tool_calls":
        piece = dict(delta["tool_calls"][0])
        piece["function"] = {**piece["function"], "arguments": text}
        delta["tool_calls"] = [piece]
    else:
        delta[field] = text
    choice["delta"] = delta
    return {**chunk, "choices": [choice]}


COMPLETIONS = DeltaMerge(_completions_split, _completions_join)

_RESPONSES_DELTAS = frozenset(
    {
        "response.output_text.delta",
        "response.refusal.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_text.delta",
        "response.function_call_arguments.delta",
    }
)


def _responses_split(event: dict[str, Any]) -> tuple[Hashable, str] | None:
    kind = event.get("type")
    text = event.get("delta")
    if kind not in _RESPONSES_DELTAS or not isinstance(text, str):
        return None
    where = tuple(
        event.get(k) for k in ("item_id", "output_index", "content_index", "summary_index")
    )
    return ("responses", kind, where), text


def _responses_join(event: dict[str, Any], text: str) -> dict[str, Any]:
    return {**event, "delta": text}


RESPONSES = DeltaMerge(_responses_split, _responses_join)
