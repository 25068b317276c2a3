"""Run an SDK's request and SSE stream on a worker thread with its own event loop.

The SDKs do a lot of synchronous work per request: building an SSL context for each
client, deep-copying and transforming the parameters, JSON-encoding a long history,
parsing every SSE event into pydantic objects. On the UI's event loop that stalls the
window for 50-200 ms per request with a long session (measured). Here all of it runs on
a worker thread; the caller's loop receives plain dicts, one per SDK event, and does
only the cheap part (updating the message being built).

Failures raised by the SDK are re-raised in the caller unchanged (so they classify the
same way); cancelling the caller cancels the worker's request promptly.

The events reach the caller in batches: the worker appends to a buffer and wakes the
caller's loop once per batch (not once per event), and consecutive text or argument
deltas of one block that the caller has not taken yet are merged there (`DeltaMerge`,
one per dialect), so a 1 MB tool-call argument streamed in 7-byte pieces costs the
caller's loop one update per batch, not 150,000. Between batches the caller yields to
its loop (`YIELD_S`), so a flood never starves the window.

Every stream of the process runs on one thread (`stream_loop`), not one thread per
stream: with five replies streaming at once, five parsing threads took turns at the GIL
before the window's thread got it back (its worst event-loop gap was 300 ms of which
18 ms its own work, ``python -m benchmarks --only agents``); with one, the window waits
for at most one switch interval of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

from desktop_agent.ai._providers._base import load_sdk
from desktop_agent.ai._providers._common import as_dict

StartStream = Callable[[], Awaitable[tuple[Any, AsyncIterator[Any]]]]
"""Runs on the worker loop: make the SDK client and start the stream; returns both."""

_END = object()
YIELD_S = 0.008
"""The caller gives its loop a turn after this long of handling events without a pause."""


@dataclass(frozen=True)
class DeltaMerge:
    """How a dialect's events merge: ``split`` gives a delta event's (key, text) or None
    for an event that never merges; two buffered events with equal keys are one event,
    ``join(first, text)``, whose text is both texts (in order)."""

    split: Callable[[dict[str, Any]], tuple[Hashable, str] | None]
    join: Callable[[dict[str, Any], str], dict[str, Any]]


class _Pending:
    """A buffered event; ``parts`` collects the texts of the deltas merged into it."""

    __slots__ = ("event", "key", "kind", "parts")

    def __init__(self, kind: object, event: Any, key: Hashable | None, text: str) -> None:
        self.kind = kind
        self.event = event
        self.key = key
        self.parts = [text] if key is not None else []

    def value(self, merge: DeltaMerge | None) -> Any:
        if merge is not None and len(self.parts) > 1:
            return merge.join(self.event, "".join(self.parts))
        return self.event


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


async def start_sdk_stream(
    sdk_name: str,
    build_params: Callable[[], dict[str, Any]],
    make_client: Callable[[Any], Any],
    request: Callable[[Any, dict[str, Any]], Awaitable[AsyncIterator[Any]]],
) -> StartStream:
    """Every provider's prologue: the request's parameters built off the caller's loop
    (converting a long history takes tens of ms, like the SDK work), the SDK ``sdk_name``
    imported, and a `client_stream` that makes its client (``make_client(sdk)``) and
    starts ``request(client, params)``."""
    params = await asyncio.to_thread(build_params)
    sdk = await load_sdk(sdk_name)
    return client_stream(lambda: make_client(sdk), lambda client: request(client, params))


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


_stream_lock = threading.Lock()
_stream_loop: asyncio.AbstractEventLoop | None = None
_stream_thread: threading.Thread | None = None


def stream_loop() -> asyncio.AbstractEventLoop:
    """The event loop of the thread every SDK stream of the process runs on (started
    on first use, a daemon thread that lives as long as the process)."""
    global _stream_loop, _stream_thread
    with _stream_lock:
        if _stream_loop is None or _stream_thread is None or not _stream_thread.is_alive():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="provider-stream", daemon=True)
            thread.start()
            _stream_loop, _stream_thread = loop, thread
        return _stream_loop


class _Worker:
    def __init__(self, start: StartStream, merge: DeltaMerge | None = None) -> None:
        self._start = start
        self._merge = merge
        self._main = asyncio.get_running_loop()
        self.ready = asyncio.Event()
        self._buffer: deque[_Pending] = deque()
        self._signalled = False  # a wake-up for the caller's loop is on its way
        self._buffer_lock = threading.Lock()
        self.received = 0  # SDK events (for tests and benchmarks)
        self.batches = 0  # times the caller took what was buffered
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._cancelled = threading.Event()
        self._lock = threading.Lock()

    def _put(self, kind: object, value: Any) -> None:
        """(worker thread) Buffer one item; wake the caller if nothing is buffered yet."""
        merge = self._merge
        split = merge.split(value) if merge is not None and kind == "event" else None
        with self._buffer_lock:
            if kind == "event":
                self.received += 1
            if split is not None and self._buffer:
                last = self._buffer[-1]
                if last.key is not None and last.key == split[0]:
                    last.parts.append(split[1])
                    return
            key, text = split if split is not None else (None, "")
            self._buffer.append(_Pending(kind, value, key, text))
            if self._signalled:
                return
            self._signalled = True
        with contextlib.suppress(RuntimeError):  # the caller's loop is gone: nobody listens
            self._main.call_soon_threadsafe(self.ready.set)

    def take(self) -> list[tuple[object, Any]]:
        """(caller's loop) Everything buffered so far, deltas merged; empty: wait `ready`."""
        with self._buffer_lock:
            items, self._buffer = self._buffer, deque()
            self._signalled = False
        self.ready.clear()
        if items:
            self.batches += 1
        return [(p.kind, p.value(self._merge)) for p in items]

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

    def start(self) -> None:
        """Start the request on the streams' thread (`stream_loop`)."""
        loop = stream_loop()
        with self._lock:
            self._loop = loop
        loop.call_soon_threadsafe(self._begin)

    def _begin(self) -> None:
        """(streams' loop) The request's task, unless the caller has gone already."""
        with self._lock:
            if not self._cancelled.is_set():
                assert self._loop is not None
                self._task = self._loop.create_task(self._body())

    def cancel(self) -> None:
        """Stop the request (from the caller's thread); does not wait for the worker."""
        with self._lock:
            self._cancelled.set()
            loop, task = self._loop, self._task
            if loop is not None and task is not None and not task.done():
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(task.cancel)


async def sdk_events(
    start: StartStream, merge: DeltaMerge | None = None, *, stats: dict[str, int] | None = None
) -> AsyncGenerator[dict[str, Any], None]:
    """The SDK stream's events as dicts, produced on a worker thread (see the module
    docstring: batched, deltas merged by ``merge``). ``stats`` (tests, benchmarks) gets
    how many SDK events were received and how many batches and events were handed out."""
    worker = _Worker(start, merge)
    worker.start()
    handed = 0
    try:
        busy_since = time.perf_counter()
        while True:
            batch = worker.take()
            if not batch:
                await worker.ready.wait()
                busy_since = time.perf_counter()
                continue
            for kind, value in batch:
                if kind == "event":
                    handed += 1
                    yield value
                elif kind == "error":
                    raise value
                else:
                    return
            if time.perf_counter() - busy_since >= YIELD_S:
                await asyncio.sleep(0)  # the window paints, timers fire
                busy_since = time.perf_counter()
    finally:
        worker.cancel()
        if stats is not None:
            stats.update(received=worker.received, batches=worker.batches, handed=handed)
