"""An MCP ``CallToolResult`` as a `ToolResult`: text, images, resources, ``isError``.

Text stays text; images stay images (the model layer replaces them with a notice for
models that do not take images, as for the built-in ``read``); an embedded text resource
becomes text headed by its URI, an embedded image blob an image, any other blob, audio or
resource link a line naming it. ``structuredContent`` without content blocks is sent as
its JSON.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as mt

from desktop_agent.ai import ImageContent, TextContent
from desktop_agent.tools import ResultBlock, ToolResult


def _resource(resource: mt.TextResourceContents | mt.BlobResourceContents) -> ResultBlock:
    mime = resource.mime_type or ""
    if isinstance(resource, mt.TextResourceContents):
        return TextContent(text=f"[resource {resource.uri}]\n{resource.text}")
    if mime.startswith("image/"):
        return ImageContent(data=resource.blob, mime_type=mime)
    size = len(resource.blob) * 3 // 4
    return TextContent(
        text=f"[binary resource {resource.uri} ({mime or 'unknown type'}, ~{size} bytes) not shown]"
    )


def _block(block: Any) -> ResultBlock:
    if isinstance(block, mt.TextContent):
        return TextContent(text=block.text)
    if isinstance(block, mt.ImageContent):
        return ImageContent(data=block.data, mime_type=block.mime_type)
    if isinstance(block, mt.EmbeddedResource):
        return _resource(block.resource)
    if isinstance(block, mt.ResourceLink):
        return TextContent(text=f"[resource link {block.name}: {block.uri}]")
    if isinstance(block, mt.AudioContent):
        return TextContent(text=f"[audio ({block.mime_type}) not shown]")
    kind = getattr(block, "type", type(block).__name__)
    return TextContent(text=f"[{kind} content not shown]")


def convert_result(result: mt.CallToolResult, server: str, tool: str) -> ToolResult:
    """``result`` as a `ToolResult` whose details name the server and the tool."""
    content = [_block(b) for b in result.content]
    if not content and result.structured_content is not None:
        content = [TextContent(text=json.dumps(result.structured_content, ensure_ascii=False))]
    details = {"mcp": {"server": server, "tool": tool}}
    return ToolResult(content, details, bool(result.is_error))
