"""Run an SDK's request and SSE stream on a worker thread with its own event loop.

The SDKs do a lot of synchronous work per request: building an SSL context for each
client, deep-copying and transforming the parameters, JSON-encoding a long history,
parsing every SSE event into pydantic objects. On the UI's event loop that stalls the
window for 50-200 ms per request with a long session (measured). Here all of it runs on
a worker thread; the caller's loop receives plain dicts, one per SDK event, and does
only the cheap part (updating the message being built).

Failures raised by the SDK are re-raised in the caller unchanged (so they classify the
same way); cancelling the caller cancels the worker's request promptly.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

from desktop_agent.ai._providers._common import as_dict

StartStream = Callable[[], Awaitable[tuple[Any, AsyncIterator[Any]]]]
"""Runs on the worker loop: make the SDK client and start the stream; returns both."""

_END = object()


def client_stream(
    make_client: Callable[[], Any], request: Callable[[Any], Awaitable[AsyncIterator[Any]]]
) -> StartStream:
    """A `StartStream` that makes the SDK client and starts ``request`` with it (both on
    the worker), closing the client if starting fails."""

    async def start() -> tuple[Any, AsyncIterator[Any]]:
        client = make_client()
        try:
            return client, await request(client)
        except BaseException:
            await client.close()
            raise

    return start


class ErrorAnswer(Exception):
    """A streaming request answered with a JSON body instead of an event stream.

    Local servers and proxies do this for errors (sometimes with status 200); the body
    is that error, so it is classified like an HTTP error (``status_code``, ``body``).
    """

    def __init__(self, status_code: int, body: Any, response: Any) -> None:
        super().__init__(f"{status_code} {body!r}"[:300])
        self.status_code = status_code
        self.body = body
        self.response = response


async def _raise_for_json_answer(stream: Any) -> None:
    response = getattr(stream, "response", None)
    headers = getattr(response, "headers", None)
    if response is None or headers is None:
        return
    kind = str(headers.get("content-type", "")).split(";")[0].strip().lower()
    if kind != "application/json":
        return
    raw = await response.aread()
    try:
        body: Any = json.loads(raw)
    except ValueError:
        body = raw.decode("utf-8", "replace")
    raise ErrorAnswer(int(getattr(response, "status_code", 200) or 200), body, response)


class _Worker:
    def __init__(self, start: StartStream) -> None:
        self._start = start
        self._main = asyncio.get_running_loop()
        self.queue: asyncio.Queue[tuple[object, Any]] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="provider-stream", daemon=True)

    def _put(self, kind: object, value: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the caller's loop is gone: nobody listens
            self._main.call_soon_threadsafe(self.queue.put_nowait, (kind, value))

    async def _body(self) -> None:
        client: Any = None
        stream: Any = None
        try:
            client, stream = await self._start()
            await _raise_for_json_answer(stream)
            async for raw in stream:
                self._put("event", as_dict(raw))
            self._put(_END, None)
        except asyncio.CancelledError:
            self._put(_END, None)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as is
            self._put("error", exc)
        finally:
            with contextlib.suppress(Exception):
                if stream is not None and hasattr(stream, "close"):
                    await stream.close()
            with contextlib.suppress(Exception):
                if client is not None:
                    await client.close()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            with self._lock:
                self._loop = loop
                self._task = loop.create_task(self._body())
                if self._cancelled.is_set():
                    self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                # Cancelled before it started: the caller has already gone.
                loop.run_until_complete(self._task)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    def cancel(self) -> None:
        """Stop the request (from the caller's thread); does not wait for the worker."""
        with self._lock:
            self._cancelled.set()
            loop, task = self._loop, self._task
            if loop is not None and task is not None and not task.done():
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(task.cancel)


async def sdk_events(start: StartStream) -> AsyncGenerator[dict[str, Any], None]:
    """The SDK stream's events as dicts, produced on a worker thread."""
    worker = _Worker(start)
    worker.thread.start()
    try:
        while True:
            kind, value = await worker.queue.get()
            if kind == "event":
                yield value
            elif kind == "error":
                raise value
            else:
                return
    finally:
        worker.cancel()
