"""A second launch hands its request to the running window instead of opening its own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop_agent.gui import InstanceServer, hand_over, instance_name


@pytest.mark.slow
def test_second_launch_hands_over_its_request(
    qtbot: QtBot, qapp: QApplication, tmp_path: Path
) -> None:
    name = instance_name(str(tmp_path / "data"))
    received: list[dict[str, Any]] = []
    server = InstanceServer(name, received.append)
    try:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        script = (
            "import sys\n"
            "from PySide6.QtCore import QCoreApplication\n"
            "from desktop_agent.gui import hand_over\n"
            "app = QCoreApplication([])\n"
            "sys.exit(0 if hand_over(sys.argv[1], {'session': 'x.jsonl', 'new': False}) else 3)\n"
        )
        with subprocess.Popen([sys.executable, "-c", script, name], env=env) as child:
            deadline = time.monotonic() + 20
            while child.poll() is None and time.monotonic() < deadline:
                qapp.processEvents()
                time.sleep(0.01)
            assert child.wait(timeout=5) == 0
        qtbot.waitUntil(lambda: bool(received), timeout=5000)
        assert received == [{"session": "x.jsonl", "new": False}]
    finally:
        server.close()


def test_no_running_instance_means_no_hand_over(qapp: QApplication, tmp_path: Path) -> None:
    assert not hand_over(instance_name(str(tmp_path / "nobody")), {"new": True}, timeout_ms=200)
