"""Model descriptors (SESSION_FORMAT.md §2.5) and cost computation."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from desktop_agent.ai._messages import Cost, Usage

Api: TypeAlias = Literal["openai-completions", "openai-responses", "anthropic-messages"]
APIS: tuple[Api, ...] = ("openai-completions", "openai-responses", "anthropic-messages")
InputKind: TypeAlias = Literal["text", "image"]
ThinkingValue: TypeAlias = str | int | None
"""Provider value of a thinking level: effort name, token budget, or ``None`` (unsupported)."""


class _CamelModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid"
    )


class ModelCost(_CamelModel):
    """Prices in US dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


class ModelCompat(_CamelModel):
    """Quirks of OpenAI-compatible servers (only read by the ``openai-completions`` API)."""

    supports_usage_in_streaming: bool = True
    """Send ``stream_options.include_usage`` (OpenAI, Ollama, llama.cpp, vLLM and LM Studio do)."""
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    supports_developer_role: bool = True
    """Send the system prompt as a ``developer`` message to reasoning models."""
    supports_reasoning_effort: bool = True


class Model(_CamelModel):
    """One model of one provider, as the registry and `stream` know it.

    JSON field names are camelCase (``baseUrl``, ``contextWindow``…), as in Pi's model files.
    """

    id: str
    name: str
    api: Api
    provider: str
    base_url: str
    reasoning: bool = False
    thinking_level_map: dict[str, ThinkingValue] | None = None
    """Provider value per thinking level; a level mapped to ``None`` is not supported."""
    input: tuple[InputKind, ...] = ("text",)
    cost: ModelCost = Field(default_factory=ModelCost)
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: dict[str, str] | None = None
    compat: ModelCompat | None = None

    @property
    def key(self) -> str:
        """``provider/id``, unique in a registry."""
        return f"{self.provider}/{self.id}"

    @property
    def supports_images(self) -> bool:
        return "image" in self.input

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def calculate_cost(model: Model, usage: Usage) -> Cost:
    """Cost of ``usage`` at the model's prices; also stored into ``usage.cost``."""
    price = model.cost
    cost = Cost(
        input=price.input * usage.input / 1e6,
        output=price.output * usage.output / 1e6,
        cache_read=price.cache_read * usage.cache_read / 1e6,
        cache_write=price.cache_write * usage.cache_write / 1e6,
    )
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    usage.cost = cost
    return cost
