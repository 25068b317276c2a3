"""Write a session with three branches, a label, a tool call and a compaction into a
``--data-dir`` (for `scripts/try-map-in-xvfb` and screenshots of the branch map).

``python -m scripts.map_demo_session DATA_DIR WORKSPACE`` prints the session's path.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from desktop_agent.ai import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from desktop_agent.session import JsonlSessionRepo


def _answer(text: str, calls: list[ToolCall] | None = None) -> AssistantMessage:
    content: list[Any] = [TextContent(text=text), *(calls or [])]
    return AssistantMessage(
        content=content, api="openai-completions", provider="local", model="qwen2.5-coder",
        stop_reason="toolUse" if calls else "stop", timestamp=1,
    )  # fmt: skip


async def write(data: Path, workspace: Path) -> str:
    repo = JsonlSessionRepo(str(data / "sessions"), str(data / "trash"))
    s = await repo.create(cwd=str(workspace))
    say = s.append_message
    await say(
        UserMessage(
            content="The login tests fail on CI since yesterday. Can you look?", timestamp=1
        )
    )
    call = ToolCall(id="c1", name="bash", arguments={"command": "pytest tests/test_login.py -q"})
    await say(_answer("Let me run them first.", [call]))
    await say(ToolResultMessage(tool_call_id="c1", tool_name="bash", timestamp=1,
                                content=[TextContent(text="2 failed: token expired")]))  # fmt: skip
    fork = await say(_answer("Two tests fail because the fixture token expired on Monday."))
    await s.append_label(fork, "diagnosis")
    await say(UserMessage(content="Regenerate the fixture token with a far expiry.", timestamp=1))
    await say(_answer("Done: the fixture now builds a token valid for ten years; tests pass."))
    await say(UserMessage(content="Also add a test for the expiry itself.", timestamp=1))
    await say(_answer("Added test_token_expiry_is_checked; 14 passed."))
    await s.move_to(fork)
    await say(
        UserMessage(content="Freeze the clock in the tests instead (freezegun).", timestamp=1)
    )
    await say(_answer("The tests now run at a frozen 2025-01-01; the token stays valid."))
    await s.move_to(fork)
    await say(UserMessage(content="Mock the token check in the fixture instead.", timestamp=1))
    mocked = await say(_answer("The fixture patches verify_token; the two tests pass again."))
    await s.append_compaction(
        "Login tests failed on an expired fixture token; the check is mocked.", mocked, 42_000
    )
    await say(UserMessage(content="Good. Now write the commit message.", timestamp=1))
    await say(_answer("tests: mock verify_token in the login fixture (the token had expired)"))
    await s.close()
    return s.metadata.path or ""


if __name__ == "__main__":
    sys.stdout.write(asyncio.run(write(Path(sys.argv[1]), Path(sys.argv[2]))) + "\n")
