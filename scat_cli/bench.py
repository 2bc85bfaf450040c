"""``scat bench``: how fast the engine, the environment, the agents and the trainers run.

- ``scat bench [--players 2 3 6 --seconds 5 ...]``: engine decisions/s and env agent steps/s
  (:mod:`scat_env.bench`);
- ``scat bench --presets all [--out docs/results/preset-speed.md]``: the same two figures for
  the standard game and every preset, each as a percentage of the standard game's;
- ``scat bench agents [--agent expert ...]``: one agent's microseconds per decision
  (:func:`training.bench.agents_main`);
- ``scat bench training [--seconds 60 ...]``: training throughput of both trainers
  (:func:`training.bench.training_main`);
- ``scat bench --batch [--players 2 3 6 10 ...]``: the batched engine's agent steps/s, with
  the Python engine and pgx in the same run (:mod:`scat_env.batch.bench`).

Each has its own ``--help``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

#: ``scat bench WHAT``: the benchmarks that take a word after ``bench``.
KINDS = ("agents", "training")

_USAGE_NOTE = ("scat bench measures the engine and the environment (options below; "
               "--presets all: every preset against the standard game); "
               "'scat bench agents --help' and 'scat bench training --help' time agents' "
               "decisions and the trainers; 'scat bench --batch --help' the batched "
               "engine.\n")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench",
        help="speed: engine and env steps/s; 'bench agents': us per decision; "
             "'bench training': trainer samples/s",
        description="Measure engine and environment speed ('scat bench'), an agent's time "
                    "per decision ('scat bench agents') or training throughput "
                    "('scat bench training').",
        # Every argument, --help included, belongs to the chosen benchmark: this parser knows
        # no options ("+" prefix), so argparse hands all of them to bench_args untouched.
        add_help=False,
        prefix_chars="+",
    )
    p.add_argument("bench_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def _bench(kind: str) -> Callable[[Sequence[str], str], int]:
    """The ``main(argv, prog)`` of one benchmark. Imported on demand: the agent and training
    benchmarks pull in the agents and (for training) torch, the env one only the env."""
    if kind == "agents":
        from training.bench import agents_main

        return agents_main
    if kind == "training":
        from training.bench import training_main

        return training_main
    from scat_env.bench import main as env_main

    return env_main


def run(args: argparse.Namespace) -> int:
    argv = list(args.bench_args)
    if "--batch" in argv:
        argv.remove("--batch")
        from scat_env.batch.bench import main as batch_main

        return int(batch_main(argv, "scat bench --batch") or 0)
    if argv and argv[0] in KINDS:
        kind = argv.pop(0)
        return int(_bench(kind)(argv, f"scat bench {kind}") or 0)
    if argv and argv[0] in ("-h", "--help"):
        print(_USAGE_NOTE)
    return int(_bench("env")(argv, "scat bench") or 0)
