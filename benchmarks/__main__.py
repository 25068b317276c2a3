"""``python -m benchmarks``: generate realistic sessions; measure the session layer and the GUI.

Options: ``--only session|pi|gui|app|map|pi-sessions|safety|highlight|prompt|checkpoints|
postgres|mcp`` runs one part;
``--check`` exits 1 when a target of issue 2 or 5 fails; ``--regenerate`` rebuilds the
cached data under ``benchmarks/out/``; ``--profile`` adds cProfile listings of open +
build_context and of appends; ``--seed`` picks another deterministic data set;
``--only app`` runs the whole app against Pi on 10 MB and 100 MB sessions, ``--huge``
adds the ~1 GB one.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks._generate import DEFAULT_SEED
from benchmarks._run import Options, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmarks of the session layer and the GUI against same-run baselines.",
    )
    parser.add_argument("--check", action="store_true", help="exit with status 1 if a target fails")
    parser.add_argument(
        "--regenerate", action="store_true", help="rebuild the cached generated sessions"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also print cProfile listings (open, append)"
    )
    parser.add_argument(
        "--only",
        choices=(
            "session",
            "pi",
            "gui",
            "app",
            "map",
            "pi-sessions",
            "safety",
            "highlight",
            "prompt",
            "checkpoints",
            "postgres",
            "mcp",
        ),
        help="run only the session layer (with Pi), only the comparison with Pi, only the GUI,"
        " only the whole app against Pi, only the branch map, only the Pi sessions source"
        " (thousands of Pi files), only the safety benchmarks (redaction, contained writes),"
        " only code highlighting, only the system prompt of a turn, only workspace"
        " checkpoints (20,000 files / 1 GB), only the PostgreSQL store against SQLite and"
        " JSONL, or only the launch with MCP servers",
    )
    parser.add_argument(
        "--huge",
        action="store_true",
        help="the whole app against Pi also restores the ~1 GB session (takes minutes)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="data set seed")
    args = parser.parse_args(argv)
    return run(
        Options(
            seed=args.seed,
            regenerate=args.regenerate,
            check=args.check,
            profile=args.profile,
            only=args.only,
            huge=args.huge,
        )
    )


if __name__ == "__main__":
    sys.exit(main())
