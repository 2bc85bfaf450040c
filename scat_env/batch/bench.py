"""``scat bench --batch``: the batched engine's speed, next to the Python engine and pgx.

Random legal play with observations and masks: every step computes each game's next
observation and mask, and the random player (:meth:`BatchEnv.random_actions`, compiled too)
picks a legal action from the mask, so the figure is what a trainer's rollout would see
before any network runs. In the same run, for reference: the Python engine
(:class:`~scat_env.engine.GameState`, decisions/s on one core) and, when ``pgx`` is
installed, pgx's ``leduc_holdem`` stepped the same way (JAX on CPU, ``vmap`` over a batch of
1,024, random legal actions, auto-reset), a far simpler game.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from ..rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS, Rules


def bench_batch(num_players: int, num_envs: int, seconds: float, rules: str = "standard",
                seed: int = 0) -> tuple[float, int]:
    """(agent steps/s, steps) of random legal play, compilation and warm-up excluded."""
    from . import BatchEnv

    env = BatchEnv(num_envs, num_players, rules, seed)
    env.reset()
    for _ in range(5):
        env.step(env.random_actions())
    steps = 0
    start = time.perf_counter()
    while True:
        for _ in range(10):
            env.step(env.random_actions())
        steps += 10 * num_envs
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed, steps


def bench_python_engine(num_players: int, seconds: float, rules: str = "standard") -> float:
    """Decisions/s of the Python engine with random legal moves (one core)."""
    from ..bench import bench_engine

    rate, _ = bench_engine(num_players, seconds, Rules.preset(rules))
    return rate


def bench_pgx(seconds: float, batch: int = 1024, game: str = "leduc_holdem") -> float | None:
    """pgx's ``game`` stepped with random legal actions over ``batch`` games (auto-reset), in
    steps/s; ``None`` when pgx (and JAX) are not installed."""
    try:
        import jax
        import jax.numpy as jnp
        import pgx
    except ImportError:
        return None
    env = pgx.make(game)
    init, step = jax.vmap(env.init), jax.vmap(env.step)
    chunk = 100

    def one(carry, _):
        state, key = carry
        key, k_act, k_init = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(k_act, logits, axis=-1)
        state = step(state, action)
        fresh = init(jax.random.split(k_init, batch))
        done = state.terminated | state.truncated
        state = jax.tree_util.tree_map(
            lambda new, old: jnp.where(done.reshape((-1,) + (1,) * (old.ndim - 1)), new, old),
            fresh, state)
        return (state, key), None

    @jax.jit
    def run(state, key):
        (state, key), _ = jax.lax.scan(one, (state, key), None, length=chunk)
        return state, key

    key = jax.random.PRNGKey(0)
    state = init(jax.random.split(key, batch))
    state, key = run(state, key)  # compile
    jax.block_until_ready(state)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state, key = run(state, key)
        jax.block_until_ready(state)
        steps += chunk * batch
    return steps / (time.perf_counter() - start)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: Sequence[str] | None = None, prog: str = "scat bench --batch") -> int:
    p = _Parser(prog=prog, description="Agent steps/s of the batched engine (random legal "
                "play with observations and masks), with the Python engine and, when "
                "installed, pgx's leduc_holdem in the same run.")
    p.add_argument("--players", type=int, nargs="+", default=None,
                   help="table sizes (default: 2 3 6 10; with --presets: 3)")
    p.add_argument("--envs", type=int, default=4096, help="games per batch (default 4096)")
    p.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    p.add_argument("--rules", default="standard", help="a preset the batched engine plays")
    p.add_argument("--presets", default=None, metavar="all|NAME,NAME",
                   help="measure these presets (all: every preset), one row each")
    p.add_argument("--out", default=None, metavar="FILE.md",
                   help="also write the table as a Markdown page (with --presets)")
    p.add_argument("--repeat", type=int, default=1,
                   help="measure each row this many times and keep the fastest (default 1): "
                        "a shared machine's speed drifts by tens of percent")
    p.add_argument("--threads", type=int, default=None,
                   help="threads of the batched engine (default: numba's, one per core); "
                        "one thread gives steadier figures on a shared machine")
    p.add_argument("--no-pgx", action="store_true", help="skip the pgx comparison")
    args = p.parse_args(argv)
    players = args.players or ([3] if args.presets else [2, 3, 6, 10])
    bad = [n for n in players if not MIN_PLAYERS <= n <= MAX_PLAYERS]
    if bad:
        p.error(f"--players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {bad[0]}")
    if args.envs < 1 or args.seconds <= 0 or args.repeat < 1:
        p.error("--envs, --seconds and --repeat must be positive")
    if args.threads is not None:
        import numba

        if not 1 <= args.threads <= numba.config.NUMBA_NUM_THREADS:
            p.error(f"--threads must be from 1 to {numba.config.NUMBA_NUM_THREADS}, got "
                    f"{args.threads}")
        numba.set_num_threads(args.threads)
    from . import covered_presets, covers

    if args.presets is None:
        presets = [args.rules]
    elif args.presets == "all":
        presets = list(PRESETS)
    else:
        presets = [name.strip() for name in args.presets.split(",") if name.strip()]
    unknown = [name for name in presets if name not in PRESETS or not covers(name)]
    if unknown or not presets:
        shown = repr(unknown[0][:40]) if unknown else "nothing"
        p.error(f"{'--presets' if args.presets else '--rules'}: {shown} is not a preset the "
                f"batched engine plays ({len(covered_presets())} presets, listed by 'scat "
                "rules')")
    if args.out is not None and args.presets is None:
        p.error("--out writes the table of --presets")
    import numba

    threads = numba.get_num_threads()
    print(f"batched engine, {args.envs} games per batch, {threads} thread(s), random legal "
          "play with observations and masks")
    print(f"{'rules':>26} {'players':>8} {'batched steps/s':>16} {'python engine':>14} "
          f"{'speed-up':>9}")
    rows = []
    for name in presets:
        for n in players:
            rate = py = 0.0
            for _ in range(args.repeat):
                rate = max(rate, bench_batch(n, args.envs, args.seconds, name)[0])
                py = max(py, bench_python_engine(n, min(args.seconds, 2.0), name))
            rows.append((name, n, rate, py))
            print(f"{name:>26} {n:>8} {rate:>16,.0f} {py:>14,.0f} {rate / py:>8.1f}x",
                  flush=True)
    pgx_rate = None
    if not args.no_pgx:
        for _ in range(args.repeat):
            rate = bench_pgx(args.seconds)
            pgx_rate = rate if pgx_rate is None or rate is None else max(pgx_rate, rate)
    if args.no_pgx:
        pass
    elif pgx_rate is None:
        print("pgx leduc_holdem: not installed (pip install pgx) - no comparison")
    else:
        print(f"pgx leduc_holdem (JAX on CPU, batch 1024): {pgx_rate:,.0f} steps/s")
    if args.out is not None:
        _write_page(args.out, rows, pgx_rate, args, argv)
    return 0


def _write_page(path: str, rows: list[tuple[str, int, float, float]], pgx_rate: float | None,
                args: argparse.Namespace, argv: Sequence[str] | None) -> None:
    """The table as a page regenerated by its own command (written at the top)."""
    import platform
    import sys

    import numba

    command = "scat bench --batch " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = ["# Batched engine speed of every preset", "",
             "Generated by the command below; do not edit by hand, run it again.", "",
             "```", command.strip(), "```", "",
             f"Random legal play with observations and masks, {args.envs} games per batch, "
             f"{numba.get_num_threads()} thread(s) for the batched engine, "
             f"the fastest of {args.repeat} measurements of {args.seconds:g} s per row, on a "
             "machine with "
             f"{_cpus()} CPUs (Python {platform.python_version()}, {platform.machine()}). "
             "The Python engine (`GameState`, one core) is measured right after each "
             "batched row, and pgx's `leduc_holdem` (JAX on CPU, `vmap` over 1,024 games, "
             "random legal actions) at the end of the same run: compare figures of one run, "
             "not across runs (the speed of a shared machine drifts).", "",
             "| preset | players | batched steps/s | Python engine decisions/s | speed-up |",
             "|---|---:|---:|---:|---:|"]
    for name, n, rate, py in rows:
        lines.append(f"| `{name}` | {n} | {rate:,.0f} | {py:,.0f} | {rate / py:.1f}x |")
    lines.append("")
    if pgx_rate is not None:
        lines.append(f"pgx `leduc_holdem` in the same run: {pgx_rate:,.0f} steps/s.")
    elif args.no_pgx:
        lines.append("pgx was left out of this run (`--no-pgx`).")
    else:
        lines.append("pgx was not installed (`pip install pgx`): no comparison in this run.")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    raise SystemExit(main())
