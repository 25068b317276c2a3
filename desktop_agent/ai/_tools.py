"""Tool definitions (pydantic model or JSON Schema) and streaming tool-call arguments."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jiter
from pydantic import BaseModel, ValidationError


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool the model may call.

    ``parameters`` is a pydantic model class (its JSON Schema is sent and arguments are
    validated with it) or a JSON Schema object (arguments are only checked to be an object).
    """

    name: str
    description: str
    parameters: type[BaseModel] | dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (an ``object`` schema)."""
        if isinstance(self.parameters, dict):
            schema = dict(self.parameters)
        else:
            schema = self.parameters.model_json_schema()
            schema.pop("title", None)
        schema.setdefault("type", "object")
        if schema.get("type") == "object":
            schema.setdefault("properties", {})
        return schema

    def validate(self, arguments: dict[str, Any]) -> str | None:
        """``None`` when ``arguments`` fit the parameters, else a readable error."""
        if isinstance(self.parameters, dict):
            required = self.parameters.get("required", [])
            missing = [name for name in required if name not in arguments]
            return f"missing required argument(s): {', '.join(missing)}" if missing else None
        try:
            self.parameters.model_validate(arguments)
        except ValidationError as exc:
            parts = []
            for err in exc.errors():
                where = ".".join(str(p) for p in err.get("loc", ())) or "(arguments)"
                parts.append(f"{where}: {err.get('msg')}")
            return "invalid arguments: " + "; ".join(parts)
        return None

    def parse(self, arguments: dict[str, Any]) -> BaseModel | dict[str, Any]:
        """Arguments as the pydantic model (raises ``ValidationError``), or the dict as is."""
        if isinstance(self.parameters, dict):
            return arguments
        return self.parameters.model_validate(arguments)


def validate_tool_arguments(
    tools: list[ToolDefinition] | tuple[ToolDefinition, ...], name: str, arguments: dict[str, Any]
) -> str | None:
    """Validation error of a tool call against the tool list, or ``None`` when valid."""
    for tool in tools:
        if tool.name == name:
            return tool.validate(arguments)
    return f"unknown tool {name!r}"


class PartialJson:
    """The arguments of a tool call as they stream in, parsed at a bounded cost.

    `feed` only stores the new piece. `value` parses the text so far with jiter's partial
    mode (Rust; a trailing string is kept, cut at the last complete character; partial
    keys, numbers and literals are left out until complete). Re-parsing the whole text on
    every piece is quadratic: a 560 KB ``write`` argument streamed in 100-character pieces
    took 8.6 s of parsing on the event loop. So `maybe_value` re-parses every piece only
    while the text is small (`SMALL` characters, ~30 us a parse), and at most every
    `INTERVAL` seconds after that (~2 ms a parse for 1 MB), returning the last value in
    between; `value` always parses (used at the end of the call).
    """

    __slots__ = (
        "_buf",
        "_clock",
        "_dirty",
        "_last_parse",
        "_last_value",
        "_len",
        "_text",
        "parse_count",
    )

    SMALL = 32 * 1024
    INTERVAL = 0.05

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._buf: list[str] = []
        self._len = 0
        self._text = ""
        self._dirty = False
        self._clock = clock
        self._last_parse = -math.inf
        self._last_value: Any = None
        self.parse_count = 0
        """How many times the text was parsed (for tests and benchmarks)."""

    @property
    def text(self) -> str:
        if self._buf:
            self._text += "".join(self._buf)
            self._buf.clear()
        return self._text

    def __len__(self) -> int:
        return self._len

    def feed(self, chunk: str) -> None:
        if chunk:
            self._buf.append(chunk)
            self._len += len(chunk)
            self._dirty = True

    def value(self) -> Any:
        """The best complete value for the text so far (``None`` before anything parses)."""
        if self._dirty:
            self._dirty = False
            self._last_parse = self._clock()
            self.parse_count += 1
            text = self.text
            if text.strip():
                try:
                    self._last_value = jiter.from_json(
                        text.encode("utf-8", "surrogatepass"),
                        partial_mode="trailing-strings",
                        cache_mode="keys",
                    )
                except ValueError:
                    pass  # not JSON (yet, or at all): keep the last good value
        return self._last_value

    def maybe_value(self) -> Any:
        """`value`, re-parsed only when that is cheap or `INTERVAL` has passed."""
        if self._dirty and (
            self._len <= self.SMALL or self._clock() - self._last_parse >= self.INTERVAL
        ):
            return self.value()
        return self._last_value


def parse_partial_json(text: str) -> Any:
    """Best-effort value of a possibly incomplete JSON text."""
    parser = PartialJson()
    parser.feed(text)
    return parser.value()
