"""Fixtures of the Pi interoperability tests: the pinned Pi package, installed once."""

from __future__ import annotations

import pytest

from tests.interop._pi import Pi


@pytest.fixture(scope="session")
def pi() -> Pi:
    """The real Pi package, installed with ``npm ci`` once per test session.

    A missing Node.js/npm or a failed install does not skip: every test using this fixture
    fails with the reason (`Pi.run` raises it).
    """
    return Pi.install()
