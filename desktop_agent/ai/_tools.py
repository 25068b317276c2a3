"""Tool definitions (pydantic model or JSON Schema) and streaming tool-call arguments."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

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
    """Incremental parser of a JSON text that arrives in pieces.

    `feed` scans only the new characters (a small state machine) and remembers where the
    text can be cut and closed to give valid JSON; `value` then parses that prefix once.
    Partial strings in value position are kept (closed at the cut), partial keys, numbers
    and literals are left out until complete.
    """

    __slots__ = (
        "_buf",
        "_checkpoint",
        "_escape",
        "_expect",
        "_in_string",
        "_last_value",
        "_len",
        "_scalar_start",
        "_stack",
        "_string_is_key",
        "_unicode_left",
    )

    def __init__(self) -> None:
        self._buf: list[str] = []
        self._len = 0
        self._stack: list[str] = []
        self._expect: list[str] = ["value"]  # per level: value | key | colon | comma
        self._in_string = False
        self._string_is_key = False
        self._escape = False
        self._unicode_left = 0
        self._scalar_start = -1
        self._checkpoint: tuple[int, str] | None = None
        self._last_value: Any = None

    @property
    def text(self) -> str:
        return "".join(self._buf)

    def _closers(self) -> str:
        return "".join("}" if c == "{" else "]" for c in reversed(self._stack))

    def _value_done(self, end: int) -> None:
        self._expect[-1] = "comma" if self._stack else "end"
        self._checkpoint = (end, self._closers())

    def feed(self, chunk: str) -> None:
        start = self._len
        self._len += len(chunk)
        self._buf.append(chunk)
        for offset, ch in enumerate(chunk):
            pos = start + offset
            if self._in_string:
                if self._escape:
                    self._escape = False
                    if ch == "u":
                        self._unicode_left = 4
                elif self._unicode_left:
                    self._unicode_left -= 1
                elif ch == "\\":
                    self._escape = True
                elif ch == '"':
                    self._in_string = False
                    if self._string_is_key:
                        self._expect[-1] = "colon"
                    else:
                        self._value_done(pos + 1)
                continue
            if self._scalar_start >= 0:
                if ch in " \t\r\n,]}":
                    self._scalar_start = -1
                    self._value_done(pos)
                else:
                    continue
            if ch in " \t\r\n":
                continue
            expect = self._expect[-1]
            if ch == '"':
                self._in_string = True
                self._string_is_key = expect == "key"
                if not self._string_is_key:
                    self._expect[-1] = "comma"
            elif ch in "{[":
                self._stack.append(ch)
                self._expect.append("key" if ch == "{" else "value")
                self._checkpoint = (pos + 1, self._closers())
            elif ch in "}]":
                if self._stack:
                    self._stack.pop()
                    self._expect.pop()
                self._value_done(pos + 1)
            elif ch == ":":
                self._expect[-1] = "value"
            elif ch == ",":
                self._expect[-1] = "key" if self._stack and self._stack[-1] == "{" else "value"
            elif expect == "value":
                self._scalar_start = pos

    def value(self) -> Any:
        """The best complete value for the text so far (``None`` before anything parses)."""
        text = self.text
        candidate: str | None = None
        if self._in_string and not self._string_is_key:
            cut = len(text)
            if self._escape:
                cut -= 1
            elif self._unicode_left:
                cut = text.rfind("\\u", 0, cut)
            candidate = text[:cut] + '"' + self._closers()
        elif self._scalar_start >= 0:
            candidate = text + self._closers()
        if candidate is not None:
            try:
                self._last_value = json.loads(candidate)
                return self._last_value
            except ValueError:
                pass
        if self._checkpoint is not None:
            end, closers = self._checkpoint
            try:
                self._last_value = json.loads(text[:end] + closers)
            except ValueError:
                pass
        return self._last_value


def parse_partial_json(text: str) -> Any:
    """Best-effort value of a possibly incomplete JSON text."""
    parser = PartialJson()
    parser.feed(text)
    return parser.value()
