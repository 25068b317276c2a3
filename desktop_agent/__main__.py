"""``python -m desktop_agent`` and the ``desktop-agent`` console script."""

import sys


def main() -> int:
    # Streams guarded and start-up failures shown before the app itself is imported.
    from desktop_agent._launch import main as launch

    return launch(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
