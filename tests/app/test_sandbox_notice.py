"""An install without bubblewrap (a tar.gz or pip install on a bare system) says so at start:
the real app's first notice names the package to install."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.test_smoke import run_smoke

pytestmark = pytest.mark.slow


def test_the_app_says_when_bubblewrap_is_missing(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    result = run_smoke(tmp_path / "data", env={"PATH": str(empty)})
    notices = result["notices"]
    assert isinstance(notices, list)
    assert any(
        "bubblewrap (bwrap) is not installed" in str(n) and "apt install bubblewrap" in str(n)
        for n in notices
    ), notices
    again = run_smoke(tmp_path / "data")["notices"]  # bwrap found: nothing to say
    assert isinstance(again, list) and not any("bubblewrap" in str(n) for n in again)
