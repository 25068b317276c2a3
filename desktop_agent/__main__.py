"""``python -m desktop_agent`` and the ``desktop-agent`` console script."""

import sys


def main() -> int:
    from desktop_agent.app import run

    return run(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
