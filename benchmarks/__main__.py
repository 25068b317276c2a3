"""``python -m benchmarks``: generate realistic sessions; measure the session layer and the GUI.

Options: ``--only NAME`` runs one part (`_run.PARTS`: session, pi, gui, app, map,
pi-sessions, safety, highlight, prompt, checkpoints, postgres, mcp, agents);
``--check`` exits 1 when a target of issue 2 or 5 fails; ``--regenerate`` rebuilds the
cached data under ``benchmarks/out/``; ``--profile`` adds cProfile listings of open +
build_context and of appends; ``--seed`` picks another deterministic data set;
``--only app`` runs the whole app against Pi on 10 MB and 100 MB sessions, ``--huge``
adds the ~1 GB one.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks._dataset import DEFAULT_SEED
from benchmarks._report import Options
from benchmarks._run import PARTS, run


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
        choices=[p.name for p in PARTS],
        help="run one part only: " + "; ".join(f"{p.name}: {p.help}" for p in PARTS),
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
