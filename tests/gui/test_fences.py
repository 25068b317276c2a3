"""The fence splitter: CommonMark fences (markdown-it-py) in prose, lists, quotes, streams."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_agent.gui.chat._fences import MarkdownSplitter, Segment, split_markdown


def code(text: str) -> list[tuple[str, str, int]]:
    return [(s.text, s.lang, s.depth) for s in split_markdown(text) if s.kind == "code"]


def prose(text: str) -> list[str]:
    return [s.text for s in split_markdown(text) if s.kind == "md"]


def test_plain_fence_between_prose() -> None:
    text = "Intro:\n\n```python\ndef f():\n    return 1\n```\n\nAfter."
    assert split_markdown(text) == [
        Segment("md", "Intro:"),
        Segment("code", "def f():\n    return 1", "python", 0),
        Segment("md", "After."),
    ]


def test_text_without_fences_is_one_segment() -> None:
    assert split_markdown("just *prose*\n\n- a list\n") == [
        Segment("md", "just *prose*\n\n- a list")
    ]
    assert split_markdown("  \n\n") == []


def test_tilde_fence_and_backticks_inside() -> None:
    text = "~~~js\nconst a = `x`;\n```\nnot a close\n```\n~~~\nafter"
    assert code(text) == [("const a = `x`;\n```\nnot a close\n```", "js", 0)]
    assert prose(text) == ["after"]


def test_longer_fence_closes_only_with_as_many_backticks() -> None:
    text = "````md\n```python\nx = 1\n```\n````\ntail"
    assert code(text) == [("```python\nx = 1\n```", "md", 0)]
    assert prose(text) == ["tail"]


def test_indented_closing_fence_and_indented_opening() -> None:
    text = "  ```sh\n  ls -la\n  echo hi\n   ```\nafter"
    # CommonMark: the opening fence's indent is removed from the content lines
    assert code(text) == [("ls -la\necho hi", "sh", 0)]
    assert prose(text) == ["after"]


def test_four_space_indent_is_not_a_fence() -> None:
    text = "para\n\n    ```\n    not a fence\n    ```\n"
    assert code(text) == []


def test_fence_inside_a_list_item() -> None:
    text = "1. Install:\n\n   ```bash\n   pip install x\n   ```\n\n   Then run it.\n2. Done"
    assert code(text) == [("pip install x", "bash", 1)]
    before, after = prose(text)
    assert before == "1. Install:"
    # the rest of the item is dedented to the item's content, so it is not indented code
    assert after == "Then run it.\n2. Done"


def test_fence_in_a_nested_list_item_keeps_the_following_items() -> None:
    text = "- a\n  - b\n    ```py\n    x = 1\n    ```\n    more of b\n  - c\n- d"
    assert code(text) == [("x = 1", "py", 2)]
    assert prose(text)[1] == "more of b\n  - c\n- d"


def test_fence_inside_a_block_quote() -> None:
    text = "> Look:\n> ```rust\n> fn main() {}\n> ```\n> quoted after\n\nout"
    assert code(text) == [("fn main() {}", "rust", 1)]
    assert prose(text) == ["> Look:", "> quoted after\n\nout"]


def test_fence_in_a_list_inside_a_quote() -> None:
    text = '> - item\n>   ```json\n>   {"a": 1}\n>   ```\n'
    assert code(text) == [('{"a": 1}', "json", 2)]


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "Streaming:\n\n```python\ndef f():\n    pass"
    assert code(text) == [("def f():\n    pass", "python", 0)]


def test_info_string_takes_the_first_word() -> None:
    assert code("``` python title=x.py\nx\n```")[0][1] == "python"
    assert code("```{.rust}\nx\n```")[0][1] == "rust"


def test_crlf_line_ends() -> None:
    assert code("a\r\n```py\r\nx = 1\r\n```\r\nb") == [("x = 1", "py", 0)]


def test_a_growing_reply_reparses_only_its_last_block() -> None:
    splitter = MarkdownSplitter()
    head = "".join(f"Part {i}:\n\n```python\nx = {i}\n```\n\n" for i in range(50))
    splitter.split(head + "tail")
    first = splitter.parsed_lines
    text = head + "tail"
    for word in ["more", " words", " here\n\n```js\nlet", " a = 1;"]:
        text += word
        splitter.split(text)
    per_delta = (splitter.parsed_lines - first) / 5
    assert per_delta < 8, per_delta  # not the 300 lines of the whole reply
    assert splitter.split(text) == MarkdownSplitter().split(text)


_PIECES = st.sampled_from(
    [
        "para text\n",
        "\n",
        "- item\n",
        "  continued\n",
        "1. first\n",
        "   ```py\n",
        "> quote\n",
        "> ```\n",
        "```python\n",
        "~~~\n",
        "````\n",
        "   ```\n",
        "x = 1\n",
        "    indented\n",
        "# Heading\n",
        "===\n",
        "  - nested\n",
        "    ~~~sh\n",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=25), st.integers(min_value=1, max_value=9))
def test_streaming_splits_equal_fresh_splits(pieces: list[str], step: int) -> None:
    """Splitting every prefix of a growing text (as a stream does) gives, at each step,
    exactly the split of that text parsed from scratch."""
    text = "".join(pieces)
    stream = MarkdownSplitter()
    for end in [*range(step, len(text), step), len(text)]:
        assert stream.split(text[:end]) == MarkdownSplitter().split(text[:end])


@settings(max_examples=100, deadline=None)
@given(st.lists(_PIECES, max_size=25))
def test_no_code_text_is_lost(pieces: list[str]) -> None:
    """Every code segment is a fence's content as markdown-it sees it."""
    from markdown_it import MarkdownIt

    text = "".join(pieces)
    fences = [t.content.removesuffix("\n") for t in MarkdownIt("commonmark").parse(text)
              if t.type == "fence"]  # fmt: skip
    assert [s.text for s in split_markdown(text) if s.kind == "code"] == fences
