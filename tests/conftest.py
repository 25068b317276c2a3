"""Suite-wide strictness: offscreen Qt, no leaked asyncio tasks, no swallowed exceptions;
the fixtures every folder shares; the ``slow`` marker kept honest.

Warnings are errors (pyproject ``filterwarnings``), Qt warnings fail the test
(``qt_log_level_fail``), an exception that reaches ``sys.excepthook`` or
``threading.excepthook`` fails the test, and so does an asyncio task still pending when a
test's event loop is closed.

``slow`` marks the tests that start processes or the real app, or run long, so that
``./run-tests -m "not slow"`` is a quick loop: a test that starts a Python interpreter,
Node.js, PostgreSQL or the packaged app without the marker fails
(tests/helpers/processes.py); a test using a fixture that starts one (`SLOW_FIXTURES`) or
marked ``interop`` gets the marker by that alone.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers import STORES, processes

if TYPE_CHECKING:
    from tests.helpers.pi import Pi
    from tests.helpers.provider_server import ProviderServer

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.pop("OPENAI_API_KEY", None)
os.environ.pop("ANTHROPIC_API_KEY", None)
# The "Pi sessions" source must never read the real ~/.pi: its default folder (for the app
# and every subprocess it starts) is one that does not exist; tests that want Pi sessions
# pass --pi-sessions-dir or the pi_sessions setting.
os.environ["PI_CODING_AGENT_DIR"] = os.path.join(
    tempfile.gettempdir(), f"desktop-agent-tests-no-pi-{os.getpid()}"
)

# Tasks still pending when a test loop closes are collected here by the patched close().
_LEAKED_TASKS: list[str] = []
_original_close = asyncio.BaseEventLoop.close


def _close_checking_tasks(self: asyncio.BaseEventLoop) -> None:
    if not self.is_closed():
        pending = [t for t in asyncio.all_tasks(self) if not t.done()]
        for task in pending:
            _LEAKED_TASKS.append(repr(task))
            task.cancel()
        if pending and not self.is_running():
            self.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    _original_close(self)


asyncio.BaseEventLoop.close = _close_checking_tasks  # type: ignore[method-assign]

_original_cancel_all = asyncio.runners._cancel_all_tasks  # type: ignore[attr-defined]


def _cancel_all_recording(loop: asyncio.AbstractEventLoop) -> None:
    _LEAKED_TASKS.extend(repr(t) for t in asyncio.all_tasks(loop) if not t.done())
    _original_cancel_all(loop)


asyncio.runners._cancel_all_tasks = _cancel_all_recording  # type: ignore[attr-defined]


SLOW_FIXTURES = frozenset({"postgres_cluster", "pi", "http_server", "sse_server"})
"""Fixtures that start a server or Node.js: a test using one is ``slow`` by that alone."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` what uses a `SLOW_FIXTURES` fixture or is marked ``interop`` (before
    ``-m`` deselects)."""
    for item in items:
        uses = set(getattr(item, "fixturenames", ()))
        if uses & SLOW_FIXTURES or item.get_closest_marker("interop") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    processes.record()


def pytest_runtest_logfinish() -> None:
    processes.stop()


@pytest.fixture(autouse=True)
def _costly_processes_need_the_slow_marker(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that starts a Python interpreter, Node.js, PostgreSQL or the packaged
    app (in its setup or its body) and is not marked ``slow``."""
    yield
    started = processes.recorded()
    if started and request.node.get_closest_marker("slow") is None:
        pytest.fail(
            "this test starts processes but is not marked slow (add @pytest.mark.slow, so "
            '`./run-tests -m "not slow"` stays quick):\n' + "\n".join(started[:5])
        )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The project folder a test's sessions work in (empty)."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def _provider_server() -> Iterator[ProviderServer]:
    from tests.helpers.provider_server import ProviderServer

    with ProviderServer() as server:
        yield server


@pytest.fixture
def provider(_provider_server: ProviderServer) -> ProviderServer:
    """The module's scripted model server (tests/helpers/provider_server.py), with nothing
    left scripted by an earlier test."""
    _provider_server.clear_script()
    return _provider_server


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest) -> str:
    """The session store a test runs on: every store-parametrized test runs on each."""
    return str(request.param)


@pytest.fixture(scope="session")
def pi() -> Pi:
    """The real Pi package (tests/helpers/pi.py), installed with ``npm ci`` once per test
    session. A missing Node.js/npm or a failed install does not skip: every test using this
    fixture fails with the reason (`Pi.run` raises it)."""
    from tests.helpers.pi import Pi

    return Pi.install()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Any]:
    """One real PostgreSQL server for the whole run (tests/helpers/postgres.py), stopped at the
    end; started only by the tests that ask for it."""
    from tests.helpers.postgres import Cluster

    cluster = Cluster()
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def database_url(request: pytest.FixtureRequest, postgres_cluster: Any) -> str:
    """The URL (with its password) of a fresh database on the suite's cluster. A test that
    asks for it by name is ``slow`` (`SLOW_FIXTURES`); one that reaches it through
    ``request.getfixturevalue`` must carry the marker itself (a ``pytest.param`` mark)."""
    if request.node.get_closest_marker("slow") is None:
        pytest.fail("a test that uses PostgreSQL must be marked slow")
    url: str = postgres_cluster.url(postgres_cluster.database())
    return url


@pytest.fixture(autouse=True)
def _fail_on_hooks_and_leaks() -> Iterator[None]:
    """Fail the test on exceptions routed to the excepthooks and on leaked asyncio tasks."""
    caught: list[str] = []

    def excepthook(
        kind: type[BaseException], value: BaseException, tb: TracebackType | None
    ) -> None:
        caught.append(f"sys.excepthook: {kind.__name__}: {value}")

    def thread_hook(args: Any) -> None:
        caught.append(f"threading.excepthook: {args.exc_type.__name__}: {args.exc_value}")

    old_hook, old_thread_hook = sys.excepthook, threading.excepthook
    sys.excepthook = excepthook
    threading.excepthook = thread_hook
    _LEAKED_TASKS.clear()
    try:
        yield
    finally:
        sys.excepthook, threading.excepthook = old_hook, old_thread_hook
    leaked = list(_LEAKED_TASKS)
    _LEAKED_TASKS.clear()
    if caught:
        pytest.fail("unexpected exceptions reached a hook:\n" + "\n".join(caught))
    if leaked:
        pytest.fail("asyncio tasks leaked by the test:\n" + "\n".join(leaked))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the reliability figures the tests recorded (tests/helpers/figures.py)."""
    from tests.helpers.figures import figures

    recorded = figures()
    if not recorded:
        return
    terminalreporter.section("reliability summary")
    for name, value in recorded.items():
        terminalreporter.write_line(f"{name}: {value:,}")
