"""A real MCP server for the tests, written with the SDK's MCPServer (FastMCP in mcp 1.x).

Run as ``python -m tests.helpers.mcp_server [--http PORT | --sse PORT] [--start-delay S]
[--never-init] [--log FILE]``: stdio by default, Streamable HTTP (or the legacy SSE
transport) on 127.0.0.1:PORT with ``--http`` (``--sse``).
Tools: ``echo`` (text), ``slow`` (progress, then waits; its cancellation is written to
``--log``), ``fail`` (an ``isError`` result), ``crash`` (the process exits mid-call),
``picture`` (a PNG), ``document`` (an embedded resource) and ``grow`` (adds the tool
``extra`` and sends ``notifications/tools/list_changed``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # at once, before the SDK's imports (a second under load)
    print("test server starting", file=sys.stderr, flush=True)

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import EmbeddedResource, TextResourceContents

# A 1x1 red PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201d2a1d6a00000000049454e44ae426082"
)


def build(log: Path | None) -> MCPServer:
    server = MCPServer("tests", instructions="A server for the tests.")

    def note(line: str) -> None:
        if log is not None:
            with log.open("a", encoding="utf-8") as f:
                f.write(line + "\n")

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        note(f"echo {text}")
        return f"echo: {text}"

    @server.tool(description="Report progress, then wait (cancellable).")
    async def slow(seconds: float, ctx: Context) -> str:
        await ctx.report_progress(1, 3, "started")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            note("slow cancelled")
            raise
        return "slow done"

    @server.tool(description="Always fails.")
    def fail(reason: str = "broken") -> str:
        raise ToolError(f"it failed: {reason}")

    @server.tool(description="Exits the server process in the middle of the call.")
    def crash() -> str:
        print("about to crash: goodbye", file=sys.stderr, flush=True)
        os._exit(3)

    @server.tool(description="A small picture.")
    def picture() -> Image:
        return Image(data=PNG, format="png")

    @server.tool(description="An embedded text resource.")
    def document() -> EmbeddedResource:
        contents = TextResourceContents(uri="memo://one", mime_type="text/plain", text="memo text")
        return EmbeddedResource(type="resource", resource=contents)

    @server.tool(description="Adds the tool 'extra' and announces the change.")
    async def grow(ctx: Context) -> str:
        def extra() -> str:
            return "extra here"

        server.add_tool(extra, name="extra", description="Added later.")
        await ctx.session.send_tool_list_changed()
        return "grown"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None)
    parser.add_argument("--sse", type=int, default=None)
    parser.add_argument("--start-delay", type=float, default=0.0)
    parser.add_argument("--never-init", action="store_true")
    parser.add_argument("--log", type=Path, default=None)
    args = parser.parse_args()
    secret = os.environ.get("MCP_TEST_SECRET_TOKEN")
    if args.log is not None and secret:  # which value its env brought (keychain tests)
        with args.log.open("a", encoding="utf-8") as f:
            f.write(f"secret {secret}\n")
    if args.never_init:
        # Reads its input and never answers (stdio), or accepts nothing (no port).
        while sys.stdin.readline():
            pass
        return
    time.sleep(args.start_delay)
    server = build(args.log)
    if args.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    elif args.sse is not None:
        server.run("sse", host="127.0.0.1", port=args.sse)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
