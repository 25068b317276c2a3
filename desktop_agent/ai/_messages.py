"""Message types of the Pi v3 format (SESSION_FORMAT.md §2).

Every model keeps the exact JSON field names (camelCase aliases), keeps fields it does not
know (``extra="allow"``) and remembers the key order it was read with, so that
``parse_message(obj).to_json_dict() == obj`` for whatever Pi writes, key order included.
Unset optional fields are omitted from the output, never written as ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Self, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel

JsonValue: TypeAlias = Any
"""Any JSON value (kept as parsed)."""

Number: TypeAlias = int | float
StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]
ThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")


class MessageFormatError(ValueError):
    """A JSON object is not a valid message or content block."""


def remember_key_order(model: Any, obj: Any) -> None:
    """Record, on ``model`` and the models inside it, the key order of ``obj`` (the JSON it
    was validated from), so that `PiModel.to_json_dict` writes the keys back in that order."""
    if not isinstance(model, PiModel) or not isinstance(obj, Mapping):
        return
    model._key_order = tuple(obj.keys())
    for name, info in type(model).model_fields.items():
        value = model.__dict__.get(name)
        source = obj.get(info.alias or name)
        if isinstance(value, PiModel):
            remember_key_order(value, source)
        elif isinstance(value, list) and isinstance(source, list):
            for item, raw in zip(value, source, strict=False):
                if isinstance(item, PiModel):
                    remember_key_order(item, raw)


def _dump(value: Any) -> Any:
    if isinstance(value, PiModel):
        return value.to_json_dict()
    if isinstance(value, list):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


class PiModel(BaseModel):
    """Base of every format model: camelCase aliases, unknown keys kept, key order kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        frozen=False,
        validate_assignment=False,
        ser_json_inf_nan="constants",
    )

    _always_dump: ClassVar[frozenset[str]] = frozenset()
    """Fields written even when they were not set (defaults Pi always writes)."""

    @property
    def _key_order(self) -> tuple[str, ...] | None:
        """The key order of the JSON object this model was read from (None: canonical).

        Kept outside pydantic's private attributes, whose per-instance set-up cost a
        quarter of the time of reading a long session.
        """
        private = self.__pydantic_private__
        return private.get("_key_order") if private else None

    @_key_order.setter
    def _key_order(self, order: tuple[str, ...] | None) -> None:
        object.__setattr__(self, "__pydantic_private__", {"_key_order": order} if order else None)

    @classmethod
    def from_json_dict(cls, obj: Mapping[str, Any]) -> Self:
        """Validate a JSON object read from a file, remembering its key order."""
        model = cls.model_validate(obj)
        remember_key_order(model, obj)
        return model

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON object of this model, as Pi writes it (aliases, unset fields omitted)."""
        out: dict[str, Any] = {}
        fields = type(self).model_fields
        set_fields = self.model_fields_set
        always = self._always_dump
        for name, info in fields.items():
            if name not in set_fields and name not in always and not info.is_required():
                continue
            value = getattr(self, name)
            alias = info.alias or name
            out[alias] = _dump(value)
        if self.__pydantic_extra__:
            for key, value in self.__pydantic_extra__.items():
                out[key] = _dump(value)
        order = self._key_order
        if order:
            ordered = {k: out[k] for k in order if k in out}
            for k, v in out.items():
                if k not in ordered:
                    ordered[k] = v
            return ordered
        return out


# ----------------------------------------------------------------------------- content


class TextContent(PiModel):
    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None

    _always_dump: ClassVar[frozenset[str]] = frozenset(("type",))


class ThinkingContent(PiModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None

    _always_dump: ClassVar[frozenset[str]] = frozenset(("type",))


class ImageContent(PiModel):
    type: Literal["image"] = "image"
    data: str
    mime_type: str

    _always_dump: ClassVar[frozenset[str]] = frozenset(("type",))


class ToolCall(PiModel):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    thought_signature: str | None = None

    _always_dump: ClassVar[frozenset[str]] = frozenset(("type", "arguments"))


class UnknownContent(PiModel):
    """A content block of a type we do not know; kept as it was read."""

    type: str


def _content_tag(value: Any) -> str:
    # ``type(value) is dict`` first: this runs for every content block of every message
    # read, and an ABC isinstance check costs as much as the rest of the tag.
    if type(value) is dict or isinstance(value, Mapping):
        kind = value.get("type")
    else:
        kind = getattr(value, "type", None)
    return kind if kind in ("text", "thinking", "image", "toolCall") else "unknown"


ContentBlock: TypeAlias = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ThinkingContent, Tag("thinking")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[ToolCall, Tag("toolCall")]
    | Annotated[UnknownContent, Tag("unknown")],
    Discriminator(_content_tag),
]
UserContentBlock: TypeAlias = ContentBlock
"""User and tool-result content: text and image blocks (others are kept as read)."""


# ----------------------------------------------------------------------------- usage


class Cost(PiModel):
    input: Number = 0
    output: Number = 0
    cache_read: Number = 0
    cache_write: Number = 0
    total: Number = 0

    _always_dump: ClassVar[frozenset[str]] = frozenset(
        ("input", "output", "cache_read", "cache_write", "total")
    )


class Usage(PiModel):
    input: Number = 0
    output: Number = 0
    cache_read: Number = 0
    cache_write: Number = 0
    total_tokens: Number = 0
    cost: Cost = Field(default_factory=Cost)

    _always_dump: ClassVar[frozenset[str]] = frozenset(
        ("input", "output", "cache_read", "cache_write", "total_tokens", "cost")
    )

    @model_validator(mode="after")
    def _total_when_missing(self) -> Self:
        """Older files have no ``totalTokens``: it is the sum of the four buckets, as Pi
        computes it. Kept out of ``model_fields_set``, so the key is not written back
        into a message read without it."""
        if "total_tokens" not in self.model_fields_set:
            self.__dict__["total_tokens"] = (
                self.input + self.output + self.cache_read + self.cache_write
            )
        return self

    def to_json_dict(self) -> dict[str, Any]:
        out = super().to_json_dict()
        order = self._key_order
        if "total_tokens" not in self.model_fields_set and order and "totalTokens" not in order:
            del out["totalTokens"]  # read without it: written back without it
        return out

    def context_tokens(self) -> int:
        """Tokens of the context this usage reports (SESSION_FORMAT §2.2)."""
        if self.total_tokens:
            return int(self.total_tokens)
        return int(self.input + self.output + self.cache_read + self.cache_write)


# ----------------------------------------------------------------------------- messages


class UserMessage(PiModel):
    role: Literal["user"] = "user"
    content: str | list[ContentBlock]
    timestamp: Number

    _always_dump: ClassVar[frozenset[str]] = frozenset(("role",))


class AssistantMessage(PiModel):
    role: Literal["assistant"] = "assistant"
    content: list[ContentBlock] = Field(default_factory=list)
    api: str
    provider: str
    model: str
    response_model: str | None = None
    response_id: str | None = None
    diagnostics: list[JsonValue] | None = None
    usage: Usage = Field(default_factory=Usage)
    stop_reason: str
    error_message: str | None = None
    timestamp: Number

    _always_dump: ClassVar[frozenset[str]] = frozenset(("role", "content", "usage"))


class ToolResultMessage(PiModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[ContentBlock] = Field(default_factory=list)
    details: JsonValue = None
    is_error: bool = False
    timestamp: Number

    _always_dump: ClassVar[frozenset[str]] = frozenset(("role", "content", "is_error"))


class CustomMessage(PiModel):
    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | list[ContentBlock]
    display: bool = True
    details: JsonValue = None
    timestamp: Number

    _always_dump: ClassVar[frozenset[str]] = frozenset(("role", "display"))


class BranchSummaryMessage(PiModel):
    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str
    timestamp: Number

    _always_dump: ClassVar[frozenset[str]] = frozenset(("role",))


class CompactionSummaryMessage(PiModel):
    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: Number
    timestamp: Number

    _always_dump: ClassVar[frozenset[str]] = frozenset(("role",))


class BashExecutionMessage(PiModel):
    """A shell command the user ran themselves (the Pi CLI's ``!cmd``; ``!!cmd`` sets
    ``exclude_from_context``). It reaches the model as a user message, see
    `bash_execution_to_text`."""

    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str
    exit_code: Number | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    exclude_from_context: bool | None = None
    timestamp: Number

    _always_dump: ClassVar[frozenset[str]] = frozenset(("role", "cancelled", "truncated"))


class UnknownMessage(PiModel):
    """A message with a role we do not know, or one that does not fit its role; kept as read."""

    role: str


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
AgentMessage: TypeAlias = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
    | BashExecutionMessage
    | UnknownMessage
)

_ROLE_MODELS: dict[str, type[PiModel]] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "toolResult": ToolResultMessage,
    "custom": CustomMessage,
    "branchSummary": BranchSummaryMessage,
    "compactionSummary": CompactionSummaryMessage,
    "bashExecution": BashExecutionMessage,
}


def parse_message(obj: Mapping[str, Any], *, keep_key_order: bool = True) -> AgentMessage:
    """Parse one message object of the v3 format; raise `MessageFormatError` if invalid.

    Roles we do not know are returned as `UnknownMessage` with every field kept. With
    ``keep_key_order`` (default) ``to_json_dict()`` gives back ``obj`` exactly, key order
    included; readers that never write the message back may skip that bookkeeping.
    """
    if not isinstance(obj, Mapping):
        raise MessageFormatError(f"a message must be a JSON object, not {type(obj).__name__}")
    role = obj.get("role")
    if not isinstance(role, str):
        raise MessageFormatError("message has no role")
    model = _ROLE_MODELS.get(role, UnknownMessage)
    try:
        message = model.model_validate(obj)
    except ValidationError as exc:
        if model is not BashExecutionMessage:
            raise MessageFormatError(f"invalid {role} message: {_first_error(exc)}") from exc
        # Pi never validates these; an odd one is kept as read and still converted.
        message = UnknownMessage.model_validate(obj)
    if keep_key_order:
        remember_key_order(message, obj)
    return message  # type: ignore[return-value]


def parse_content_block(obj: Mapping[str, Any]) -> ContentBlock:
    """Parse one content block; unknown block types are kept as `UnknownContent`."""
    try:
        block = _BLOCK_ADAPTER.validate_python(obj)
        remember_key_order(block, obj)
        return block
    except ValidationError as exc:
        raise MessageFormatError(f"invalid content block: {_first_error(exc)}") from exc


_BLOCK_ADAPTER: TypeAdapter[ContentBlock] = TypeAdapter(ContentBlock)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    return f"{where}: {err.get('msg')}" if where else str(err.get("msg"))


# --------------------------------------------------------------------- conversion to LLM

BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"
COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"


def _js_string(obj: Mapping[str, Any], key: str) -> str:
    """``${obj[key]}`` in JavaScript (a missing key is ``undefined``)."""
    if key not in obj:
        return "undefined"
    return _js_text(obj[key])


def _js_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, list):
        return ",".join("" if v is None else _js_text(v) for v in value)
    if isinstance(value, Mapping):
        return "[object Object]"
    return str(value)


def _js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value (objects and arrays are truthy, even empty)."""
    if isinstance(value, list | Mapping):
        return True
    if isinstance(value, float) and value != value:
        return False
    return bool(value)


def bash_execution_to_text(message: Mapping[str, Any]) -> str:
    """The user text the Pi CLI sends for a ``bashExecution`` message (its
    ``bashExecutionToText``, with JavaScript's handling of odd values kept)."""
    text = f"Ran `{_js_string(message, 'command')}`\n"
    if _js_truthy(message.get("output")):
        text += f"```\n{_js_string(message, 'output')}\n```"
    else:
        text += "(no output)"
    exit_code = message.get("exitCode")
    if _js_truthy(message.get("cancelled")):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and not (
        isinstance(exit_code, int | float) and not isinstance(exit_code, bool) and exit_code == 0
    ):
        text += f"\n\nCommand exited with code {_js_text(exit_code)}"
    if _js_truthy(message.get("truncated")) and _js_truthy(message.get("fullOutputPath")):
        text += f"\n\n[Output truncated. Full output: {_js_string(message, 'fullOutputPath')}]"
    return text


def _is_bash_execution(msg: AgentMessage) -> bool:
    return isinstance(msg, BashExecutionMessage) or (
        isinstance(msg, UnknownMessage) and msg.role == "bashExecution"
    )


def convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    """Agent-level messages as the LLM sees them: the Pi CLI's ``convertToLlm``
    (SESSION_FORMAT §2.3; pi-agent-core's is the same).

    ``bashExecution`` (unless ``excludeFromContext``), ``custom``, ``branchSummary`` and
    ``compactionSummary`` become user messages; user, assistant and tool results pass
    through; any other role is dropped.
    """
    out: list[Message] = []
    for msg in messages:
        if isinstance(msg, UserMessage | AssistantMessage | ToolResultMessage):
            out.append(msg)
        elif _is_bash_execution(msg):
            obj = msg.to_json_dict()
            if _js_truthy(obj.get("excludeFromContext")):
                continue
            timestamp = obj.get("timestamp")
            out.append(
                UserMessage(
                    content=[TextContent(text=bash_execution_to_text(obj))],
                    timestamp=timestamp if isinstance(timestamp, int | float) else 0,
                )
            )
        elif isinstance(msg, CustomMessage):
            content: list[ContentBlock] = (
                [TextContent(text=msg.content)] if isinstance(msg.content, str) else msg.content
            )
            out.append(UserMessage(content=content, timestamp=msg.timestamp))
        elif isinstance(msg, BranchSummaryMessage):
            text = BRANCH_SUMMARY_PREFIX + msg.summary + BRANCH_SUMMARY_SUFFIX
            out.append(UserMessage(content=[TextContent(text=text)], timestamp=msg.timestamp))
        elif isinstance(msg, CompactionSummaryMessage):
            text = COMPACTION_SUMMARY_PREFIX + msg.summary + COMPACTION_SUMMARY_SUFFIX
            out.append(UserMessage(content=[TextContent(text=text)], timestamp=msg.timestamp))
    return out
