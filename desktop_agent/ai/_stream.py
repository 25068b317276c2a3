"""`stream()` and `complete()`: one streaming API over every provider.

Usage::

    async with stream(model, context, options) as events:
        async for event in events:
            ...                       # start, text_delta, ..., then exactly one done/error
    message = events.final_message    # the final AssistantMessage

The stream never raises for provider failures: they end it with an ``error`` event whose
message has ``stopReason: "error"``, an ``errorMessage`` and a classification in
``diagnostics`` (see `classify_error`).

Stopping early, three ways, all giving ``stopReason: "aborted"`` with the partial content:

1. set ``options.abort`` (an `asyncio.Event`) or call ``events.abort()``: the stream ends
   promptly with an ``error`` event of reason ``aborted``, delivered normally;
2. cancel the task that iterates the stream while it waits for the next event: the pending
   ``__anext__`` returns the final ``aborted`` event instead of raising (the cancellation is
   consumed, as with `asyncio.timeout`; ``asyncio.current_task().cancelling()`` still tells
   it happened) and iteration then ends; `complete()` returns the aborted message;
3. leave the ``async with`` block (or ``aclose()``) early: ``events.final_message`` is the
   aborted message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from types import TracebackType
from typing import Self

from desktop_agent.ai._errors import ErrorInfo, classify_exception
from desktop_agent.ai._events import (
    AssistantMessageEvent,
    ErrorEvent,
    LlmContext,
    StreamOptions,
)
from desktop_agent.ai._messages import AssistantMessage, Message
from desktop_agent.ai._models import Model
from desktop_agent.ai._providers._base import MessageBuilder, Provider, settle
from desktop_agent.ai._tools import ToolDefinition

_log = logging.getLogger("desktop_agent.ai")


def _provider_for(api: str) -> Provider:
    if api == "anthropic-messages":
        from desktop_agent.ai._providers.anthropic import stream_anthropic

        return stream_anthropic
    if api == "openai-completions":
        from desktop_agent.ai._providers.openai_completions import stream_openai_completions

        return stream_openai_completions
    if api == "openai-responses":
        from desktop_agent.ai._providers.openai_responses import stream_openai_responses

        return stream_openai_responses
    raise ValueError(f"unsupported api {api!r}")


class AssistantMessageEventStream:
    """Async iterator of `AssistantMessageEvent`; also an async context manager."""

    def __init__(self, model: Model, context: LlmContext, options: StreamOptions) -> None:
        self._model = model
        self._context = context
        self._options = options
        self._builder = MessageBuilder(model, context.tools)
        self._abort_requested = False
        self._reader: asyncio.Task[object] | None = None
        self._self_cancels = 0
        self._gen: AsyncGenerator[AssistantMessageEvent, None] = self._run()

    # -- public API ------------------------------------------------------------------

    @property
    def message(self) -> AssistantMessage:
        """The message so far (partial until the stream has ended)."""
        return self._builder.message

    @property
    def final_message(self) -> AssistantMessage | None:
        """The final message once the stream has ended (``None`` before)."""
        return self._builder.message if self._builder.finished else None

    def abort(self) -> None:
        """Ask the stream to stop; it ends with an ``aborted`` error event."""
        if self._builder.finished or self._abort_requested:
            return
        self._abort_requested = True
        reader = self._reader
        if reader is not None and not reader.done():
            self._self_cancels += 1
            reader.cancel()

    async def result(self) -> AssistantMessage:
        """Consume the rest of the stream and return the final message."""
        async for _event in self:
            pass
        final = self.final_message
        assert final is not None
        return final

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> AssistantMessageEvent:
        return await self._gen.__anext__()

    async def aclose(self) -> None:
        await self._gen.aclose()
        if not self._builder.finished:
            self._builder.finish_aborted()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the generator ---------------------------------------------------------------

    async def _watch_abort(self, event: asyncio.Event) -> None:
        await event.wait()
        self.abort()

    async def _run(self) -> AsyncGenerator[AssistantMessageEvent, None]:
        builder = self._builder
        options = self._options
        model = self._model
        yield builder.start()
        watcher: asyncio.Task[None] | None = None
        if options.abort is not None:
            if options.abort.is_set():
                self._abort_requested = True
            else:
                watcher = asyncio.create_task(self._watch_abort(options.abort))
        inner: AsyncGenerator[AssistantMessageEvent, None] | None = None
        final: AssistantMessageEvent
        try:
            try:
                provider = _provider_for(model.api)
                produced = provider(model, self._context, options, builder)
                assert isinstance(produced, AsyncGenerator)
                inner = produced
                while True:
                    if self._abort_requested:
                        raise asyncio.CancelledError
                    self._reader = asyncio.current_task()
                    try:
                        event = await inner.__anext__()
                    except StopAsyncIteration:
                        break
                    finally:
                        self._reader = None
                    yield event
                if not builder.completed:
                    raise _IncompleteStream
                final = builder.finish()
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if self._self_cancels and task is not None:
                    self._self_cancels -= 1
                    task.uncancel()
                final = builder.finish_aborted()
            except _IncompleteStream:
                info = ErrorInfo(
                    kind="disconnected",
                    message="The response stream ended before the response was complete",
                    retryable=True,
                    provider=model.provider,
                    api=model.api,
                    name="IncompleteStream",
                    url=model.base_url,
                )
                final = builder.finish_error(info, api_key=options.api_key)
            except Exception as exc:  # noqa: BLE001 - every failure becomes data
                info = classify_exception(exc, provider=model.provider, api=model.api)
                info = replace(info, url=info.url or model.base_url)
                final = builder.finish_error(info, api_key=options.api_key)
            # Generators the failure left behind (kept alive by its traceback until now)
            # are closed by tasks of their own: let them finish before the stream ends.
            await settle()
            if isinstance(final, ErrorEvent) and final.reason == "error":
                _log.info(
                    "%s/%s stream failed: %s", model.provider, model.id, final.error.error_message
                )
            yield final
        except GeneratorExit:
            if not builder.finished:
                builder.finish_aborted()
            raise
        finally:
            if inner is not None:
                await inner.aclose()
            if watcher is not None:
                watcher.cancel()
                await asyncio.wait([watcher])


class _IncompleteStream(Exception):
    pass


def stream(
    model: Model,
    context: LlmContext | None = None,
    options: StreamOptions | None = None,
    *,
    messages: Sequence[Message] | None = None,
    system_prompt: str | None = None,
    tools: Sequence[ToolDefinition] | None = None,
) -> AssistantMessageEventStream:
    """Stream one assistant message from ``model`` (see the module docstring).

    The events follow SESSION_FORMAT §2.4: ``start``, block events, then exactly one
    ``done`` or ``error``, whose message is the final `AssistantMessage`.
    """
    if context is None:
        context = LlmContext(
            system_prompt=system_prompt, messages=tuple(messages or ()), tools=tuple(tools or ())
        )
    return AssistantMessageEventStream(model, context, options or StreamOptions())


async def warm_up(apis: Sequence[str]) -> None:
    """Do the first request's one-off work now, on a thread: import the SDKs of ``apis``
    (seconds) and build the shared TLS context. Call it after the window is shown."""
    from desktop_agent.ai._providers._base import load_sdk
    from desktop_agent.ai._providers._common import shared_ssl_context

    names = sorted({"anthropic" if api == "anthropic-messages" else "openai" for api in apis})
    for name in names:
        try:
            await load_sdk(name)
        except ImportError:
            _log.warning("could not import the %s SDK", name)
    if names:
        await asyncio.to_thread(shared_ssl_context)


async def complete(
    model: Model, context: LlmContext, options: StreamOptions | None = None
) -> AssistantMessage:
    """The final assistant message of a stream (never raises for provider failures).

    Cancelling the task that awaits this returns the aborted message (partial content kept).
    """
    async with stream(model, context, options) as events:
        return await events.result()
