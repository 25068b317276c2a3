"""Fixture of the Qt-free workbench tests: a started workbench and what it emitted
(`provider` and `store` come from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from desktop_agent.workbench import Workbench
from tests.helpers.provider_server import ProviderServer
from tests.helpers.workbench import Recorder, make_workbench


@pytest_asyncio.fixture
async def bench(
    request: pytest.FixtureRequest, tmp_path: Path, provider: ProviderServer, store: str
) -> AsyncIterator[tuple[Workbench, Recorder]]:
    """A started workbench on ``store`` (on "postgres", a fresh database of the suite's
    server) and the recorder of what it emitted."""
    url = request.getfixturevalue("database_url") if store == "postgres" else None
    wb = make_workbench(
        tmp_path / "data", provider.model("anthropic-messages"), store=store, database_url=url
    )
    recorder = Recorder()
    wb.subscribe(recorder)
    await wb.start()
    try:
        yield wb, recorder
    finally:
        if wb.session is not None:
            await wb.shutdown(stop=True)
        await wb.aclose()
