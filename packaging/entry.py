"""Entry script of the frozen builds (PyInstaller needs a file, not ``-m``)."""

import sys

from desktop_agent.__main__ import main

sys.exit(main())
