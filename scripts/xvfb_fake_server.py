"""A local OpenAI-compatible server for trying the app by hand (used by try-in-xvfb).

Serves the test suite's scripted provider (tests/helpers/provider_server.py) with one long
reply: a heading, a code block, a table and 24 short paragraphs. Prints its URL, then
runs until stdin closes.
"""

from __future__ import annotations

import sys

from tests.helpers.provider_server import ProviderServer, Reply

LAST = "That is the end of the reply."


def long_text() -> str:
    return (
        "# A long answer\n\nSome code:\n\n```python\ndef double(x):\n    return x * 2\n```\n\n"
        "| name | value |\n| --- | --- |\n| a | 1 |\n| b | 2 |\n\n"
        + "\n\n".join(f"Paragraph {i}: a short line of text." for i in range(1, 25))
        + f"\n\n{LAST}"
    )


def main() -> None:
    text = long_text()
    with ProviderServer() as server:
        server.models = ["fake-model"]
        server.default_reply = Reply(
            text=[text[i : i + 10] for i in range(0, len(text), 10)], delay_s=0.01
        )
        sys.stdout.write(f"{server.url}/v1\n")
        sys.stdout.flush()
        sys.stdin.read()


if __name__ == "__main__":
    main()
