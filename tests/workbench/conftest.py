"""Fixture of the Qt-free workbench tests: a started workbench and what it emitted
(`provider` and `store` come from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from desktop_agent.workbench import Workbench
from tests.helpers.provider_server import ProviderServer
from tests.helpers.workbench import Recorder, make_workbench


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
