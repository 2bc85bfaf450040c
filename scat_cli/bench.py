"""``scat bench``: how fast the engine and the environment run (see ``scat_env.bench``).

All arguments are forwarded to :func:`scat_env.bench.main`, e.g.
``scat bench --players 2 3 6 --seconds 5``; ``scat bench --help`` lists them.
"""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench",
        help="measure engine and env speed (steps/s, games/s); args go to scat_env.bench",
        description="Measure engine and environment speed. Every argument is passed on to "
                    "python -m scat_env.bench; run 'scat bench --help' for them.",
        # Every argument, --help included, belongs to the benchmark: this parser knows no
        # options ("+" prefix), so argparse hands all of them to bench_args untouched.
        add_help=False,
        prefix_chars="+",
    )
    p.add_argument("bench_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported lazily: the benchmark module is optional in a checkout and costly to import.
    from scat_env.bench import main as bench_main

    return int(bench_main(list(args.bench_args)) or 0)
