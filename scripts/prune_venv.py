"""Print the installed distributions that a lock file does not list (one per line).

``scripts/bootstrap.sh`` uninstalls them, so after a lock change the venv holds exactly the
locked set (plus the project itself and pip), as ``uv pip sync`` would leave it.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata

KEEP = {"pip", "setuptools", "wheel", "desktop-agent"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_names(lock_text: str) -> set[str]:
    names = set()
    for line in lock_text.splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", line)
        if match:
            names.add(canonical(match.group(1)))
    return names


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as lock:
        wanted = locked_names(lock.read()) | KEEP
    installed = {canonical(d.metadata["Name"]) for d in metadata.distributions()}
    for name in sorted(installed - wanted):
        sys.stdout.write(name + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
