"""The tool protocol the agent loop drives: `Tool`, `ToolResult`, `ToolContext`.

A tool validates its arguments with a pydantic model, runs with `execute` and returns a
`ToolResult`. Expected failures (bad path, no match, non-zero exit) are raised as
`ToolError` and turned into an error result by `run_tool`; cancellation (the loop cancels
the task) propagates as `asyncio.CancelledError` after the tool has cleaned up.
"""

from __future__ import annotations

import inspect
import logging
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from desktop_agent.ai import ImageContent, TextContent, ToolDefinition, ToolResultMessage
from desktop_agent.tools._errors import ToolError
from desktop_agent.tools._workspace import Workspace
from desktop_agent.utils import Redactor

_log = logging.getLogger(__name__)

ExecutionMode: TypeAlias = Literal["parallel", "sequential"]
ResultBlock: TypeAlias = TextContent | ImageContent


@dataclass(slots=True)
class ToolResult:
    """What a tool returns (and, partially, what it streams through `on_update`)."""

    content: list[ResultBlock] = field(default_factory=list)
    details: dict[str, Any] | None = None
    is_error: bool = False

    @classmethod
    def text(
        cls, text: str, details: dict[str, Any] | None = None, *, is_error: bool = False
    ) -> ToolResult:
        return cls([TextContent(text=text)], details, is_error)

    @classmethod
    def error(cls, message: str, details: dict[str, Any] | None = None) -> ToolResult:
        return cls([TextContent(text=message)], details, True)

    def text_content(self) -> str:
        """The text blocks joined by newlines (images left out)."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))

    def to_message(
        self, tool_call_id: str, tool_name: str, timestamp: int | None = None
    ) -> ToolResultMessage:
        """The `toolResult` message of this result (timestamp in ms, now by default)."""
        return ToolResultMessage(
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            content=list(self.content),
            details=self.details,
            is_error=self.is_error,
            timestamp=timestamp if timestamp is not None else int(time.time() * 1000),
        )


UpdateCallback: TypeAlias = Callable[[ToolResult], Awaitable[None] | None]


def _default_output_dir() -> Path:
    return Path(tempfile.gettempdir()) / "desktop-agent-tool-output"


@dataclass(slots=True)
class ToolContext:
    """What a running tool may use: the workspace, the update callback, an output dir.

    `on_update` receives partial results (sync or async callable); the loop turns them
    into `tool_execution_update` events. `output_dir` receives full outputs that were too
    long for the result (created on demand). `env` is the base environment of
    subprocesses (`os.environ` when ``None``); provider keys are always scrubbed from it.
    Files written to `output_dir` pass `redactor` (secret shapes too unless
    `redact_shapes` is false; ``None``: written as they are).
    """

    workspace: Workspace
    on_update: UpdateCallback | None = None
    output_dir: Path = field(default_factory=_default_output_dir)
    env: Mapping[str, str] | None = None
    redactor: Redactor | None = field(default_factory=Redactor)
    redact_shapes: bool = True
    outside_sandbox: bool = False
    """Run shell commands outside the OS sandbox (the user allowed it, once)."""

    async def update(self, partial: ToolResult) -> None:
        """Send a partial result to `on_update`; a failing callback is logged, not raised."""
        if self.on_update is None:
            return
        try:
            outcome = self.on_update(partial)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:  # noqa: BLE001 - a listener never breaks the tool
            _log.exception("tool update callback failed")


class ToolParams(BaseModel):
    """Base of tool parameter models: unknown arguments are refused."""

    model_config = ConfigDict(extra="forbid")


ParamsT = TypeVar("ParamsT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class CallPreview:
    """What an approval prompt shows for one call."""

    summary: str
    command: tuple[str, ...] | None = None
    diff: str | None = None


class Tool(ABC, Generic[ParamsT]):
    """A tool the agent may call. Subclasses set the class attributes and `execute`.

    ``name``, ``label`` and ``description`` may also be set per instance (MCP tools are
    instances of one class, each named after the server's tool)."""

    name: str
    label: str
    description: str
    parameters: ClassVar[type[BaseModel]]
    execution_mode: ClassVar[ExecutionMode] = "parallel"
    needs_approval: ClassVar[bool] = False
    """Whether the default approval policy asks before running this tool."""

    @abstractmethod
    async def execute(self, call_id: str, args: ParamsT, ctx: ToolContext) -> ToolResult:
        """Run the call. Raise `ToolError` for expected failures."""

    def always_ask(self) -> str | None:
        """Why every call must be asked for, whatever the rules say (None: the rules decide).

        The shell says so where no OS sandbox confines it."""
        return None

    def parse_arguments(self, arguments: Mapping[str, Any]) -> ParamsT:
        """The arguments as the parameter model (raises pydantic's `ValidationError`)."""
        parsed = self.parameters.model_validate(dict(arguments))
        return parsed  # type: ignore[return-value]

    def definition(self) -> ToolDefinition:
        """The model-facing definition (name, description, JSON Schema of parameters)."""
        return ToolDefinition(
            name=self.name, description=self.description, parameters=self.parameters
        )

    def json_schema(self) -> dict[str, Any]:
        return self.definition().json_schema()

    def preview(self, args: ParamsT, ctx: ToolContext) -> CallPreview:
        """What an approval prompt shows for this call (default: the arguments)."""
        return CallPreview(summary=f"{self.name} {_short_args(args)}")


def _short_args(args: BaseModel, limit: int = 300) -> str:
    text = args.model_dump_json(exclude_defaults=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "(arguments)"
        parts.append(f"{where}: {err.get('msg')}")
    return "Invalid arguments: " + "; ".join(parts)


async def run_tool(
    tool: Tool[Any], call_id: str, arguments: Mapping[str, Any], ctx: ToolContext
) -> ToolResult:
    """Validate and execute one call; every failure becomes an error result.

    `asyncio.CancelledError` (and other `BaseException`s) propagate unchanged.
    """
    try:
        args = tool.parse_arguments(arguments)
    except ValidationError as exc:
        return ToolResult.error(format_validation_error(exc))
    try:
        return await tool.execute(call_id, args, ctx)
    except ToolError as exc:
        return ToolResult.error(str(exc))
    except OSError as exc:
        return ToolResult.error(_os_error_text(exc))
    except Exception as exc:  # noqa: BLE001 - a tool failure is an error result
        _log.exception("tool %s failed unexpectedly", tool.name)
        return ToolResult.error(f"{tool.name} failed: {type(exc).__name__}: {exc}")


def _os_error_text(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"{reason}: {exc.filename}" if exc.filename else reason
