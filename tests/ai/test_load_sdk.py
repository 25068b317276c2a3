"""`load_sdk` never hands out a module another thread is still importing.

The start-up warm-up imports the SDK in a worker thread; a message sent before it is done
used to get the half-initialized module from ``sys.modules`` and failed with "partially
initialized module 'anthropic' has no attribute 'AsyncAnthropic'".
"""

from __future__ import annotations

import asyncio
import importlib
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_agent.ai._providers._base import load_sdk

NAME = "desktop_agent_fake_sdk_for_load_test"


@pytest.fixture
def slow_sdk(tmp_path: Path) -> Iterator[threading.Event]:
    """A package whose import blocks until the returned event is set, then defines
    ``AsyncClient`` (like an SDK defining its client class late in ``__init__``)."""
    (tmp_path / NAME).mkdir()
    (tmp_path / NAME / "__init__.py").write_text(
        "import builtins\n"
        "builtins._fake_sdk_started.set()\n"
        "builtins._fake_sdk_gate.wait(10)\n"
        "class AsyncClient:\n"
        "    pass\n",
        encoding="utf-8",
    )
    import builtins

    gate, started = threading.Event(), threading.Event()
    builtins._fake_sdk_gate = gate  # type: ignore[attr-defined]
    builtins._fake_sdk_started = started  # type: ignore[attr-defined]
    sys.path.insert(0, str(tmp_path))
    try:
        yield gate
    finally:
        gate.set()
        sys.path.remove(str(tmp_path))
        sys.modules.pop(NAME, None)
        del builtins._fake_sdk_gate  # type: ignore[attr-defined]
        del builtins._fake_sdk_started  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_a_module_being_imported_elsewhere_is_waited_for(
    slow_sdk: threading.Event,
) -> None:
    import builtins

    warm_up = threading.Thread(target=importlib.import_module, args=(NAME,))
    warm_up.start()
    assert builtins._fake_sdk_started.wait(10)  # type: ignore[attr-defined]
    assert NAME in sys.modules  # half initialized: no AsyncClient yet
    assert not hasattr(sys.modules[NAME], "AsyncClient")

    loading = asyncio.ensure_future(load_sdk(NAME))
    await asyncio.sleep(0.05)
    assert not loading.done()  # waits for the other thread's import
    slow_sdk.set()
    module = await asyncio.wait_for(loading, 10)
    warm_up.join(10)
    assert module.AsyncClient.__name__ == "AsyncClient"


@pytest.mark.asyncio
async def test_a_loaded_module_is_returned_at_once(slow_sdk: threading.Event) -> None:
    slow_sdk.set()
    first = await load_sdk(NAME)
    assert (await load_sdk(NAME)) is first is sys.modules[NAME]
