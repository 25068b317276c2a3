"""The snapshot each streaming update carries: later deltas never change it, and it
shares the big argument strings instead of copying them (no deep copy per delta)."""

from __future__ import annotations

from desktop_agent.agent._loop import snapshot
from desktop_agent.ai import Model, ModelCost, TextContent, ToolCall
from desktop_agent.ai._providers._base import MessageBuilder


def _builder() -> MessageBuilder:
    model = Model(
        id="m",
        name="m",
        api="anthropic-messages",
        provider="anthropic",
        base_url="http://127.0.0.1:9",
        cost=ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
    )
    return MessageBuilder(model)


def test_later_deltas_leave_a_snapshot_as_it_was() -> None:
    b = _builder()
    b.start()
    i, _ = b.text_start()
    b.text_delta(i, "Hello")
    j, _ = b.toolcall_start("call-1", "write")
    content = "x" * 200_000
    b.toolcall_delta(j, '{"path": "a.py", "content": "' + content)
    b.set_usage(input=10, output=5)
    live_arguments = b.tool_call(j).arguments
    snap = snapshot(b.message)
    arguments_before = dict(snap.content[1].arguments)  # type: ignore[union-attr]
    cost_before = snap.usage.cost.total

    b.text_delta(i, ", world")
    b.toolcall_delta(j, 'yyy", "mode": "w"}')
    b.set_usage(input=10, output=500)
    k, _ = b.text_start()
    b.text_delta(k, "more")

    text = snap.content[0]
    call = snap.content[1]
    assert isinstance(text, TextContent) and text.text == "Hello"
    assert isinstance(call, ToolCall) and call.arguments == arguments_before
    assert len(snap.content) == 2
    assert snap.usage.output == 5 and snap.usage.cost.total == cost_before
    assert b.message.usage.output == 500 and b.message.usage.cost.total > cost_before
    live = b.message.content[0]
    assert isinstance(live, TextContent) and live.text == "Hello, world"
    # no deep copy: the snapshot holds the very argument object it was taken from
    assert call.arguments is live_arguments
