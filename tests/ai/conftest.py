"""Fixtures of the model-layer tests: the scripted provider server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.provider_server import ProviderServer


@pytest.fixture
def provider_server() -> Iterator[ProviderServer]:
    """A fresh `ProviderServer` on 127.0.0.1, stopped after the test."""
    with ProviderServer() as server:
        yield server
