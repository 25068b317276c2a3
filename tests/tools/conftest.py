"""Fixtures of the tools tests: a workspace with hostile neighbours and a canary outside
(tests/helpers/sandbox.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.sandbox import Sandbox, make_sandbox


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return make_sandbox(tmp_path)
