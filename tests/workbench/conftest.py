"""Fixtures of the Qt-free workbench tests: the provider test server and a workbench."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from desktop_agent.workbench import Changes, Event, Workbench
from tests._workbench import STORES, make_workbench
from tests.ai.provider_server import ProviderServer


@pytest.fixture(scope="module")
def provider() -> Iterator[ProviderServer]:
    with ProviderServer() as server:
        yield server


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Recorder:
    """Every event a workbench emitted, and the union of its `Changes`."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def changes(self) -> Changes:
        total = Changes()
        for event in self.events:
            if isinstance(event, Changes):
                total = total | event
        return total

    def clear(self) -> None:
        self.events.clear()


@pytest_asyncio.fixture
async def bench(
    tmp_path: Path, provider: ProviderServer, store: str
) -> AsyncIterator[tuple[Workbench, Recorder]]:
    wb = make_workbench(tmp_path / "data", provider.model("anthropic-messages"), store=store)
    recorder = Recorder()
    wb.subscribe(recorder)
    await wb.start()
    try:
        yield wb, recorder
    finally:
        if wb.session is not None:
            await wb.shutdown(stop=True)
        await wb.aclose()
