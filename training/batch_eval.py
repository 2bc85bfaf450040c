"""Duplicate-deal evaluation of a compact policy on the batched engine: thousands of games
against ``expert`` in the time the Python harness plays a few hundred.

``python -m training.evaluate`` plays every game through the Python engine and agents, a
decision at a time; the 2,000 games a size that tell 1.25x from 1.15x take minutes a size.
This plays the same games batched, about ten times faster (the README's speed section has
the command). Each part is the one the Python harness runs, checked by a test:

- the policy is the ``compact:`` player's own numpy forward pass
  (:class:`agents.compact.CompactPolicy`, or a :class:`agents.compact.CompactSet` handing
  each position to its member for the players still in), on the compact observation and
  hand features the batched engine gives (``tests/test_batch_training.py``: the same
  logits as from a view; ``tests/test_batch_eval.py``: a set's games, and those of a
  policy that reads the observation pieces of a call, golf or a points race, are the
  Python players' games);
- its expert advice and the ``expert`` seats are :class:`agents.batch_expert.BatchExpert`,
  which makes :class:`agents.expert.ExpertAgent`'s move in every position
  (``tests/test_batch_expert.py``); ``greedy`` is the engine's threshold player at 25;
- the rules are :class:`scat_env.batch.BatchEnv`'s, played move for move like ``GameState``
  (the differential test).

**Duplicate deals.** Deal ``d`` is played ``n`` times, the policy in seat ``r`` of the
``r``-th copy and the baseline in every other seat: all ``n`` copies get the same first
dealer and the same shuffled pack every hand (``BatchEnv(deal_ids=...)``), so luck of the
cards cancels between seats. Intervals are Wilson intervals on the design-effect-adjusted
sample size with each deal a cluster (:func:`training.ratings.cluster_wilson_ci`, as the
tournament reports). A game cut by the turn cap counts as not won.

**Paired.** ``--against OTHER`` plays a second policy on the very same games (same deal,
same seat), and reports the difference of win rates game by game with its standard error
clustered by deal (as :mod:`training.paired` does for two tournament runs).

    python -m training.batch_eval policies/scat_batch.npz --players 7,8,9,10 --games 2000
    python -m training.batch_eval runs/NAME/policy.npz --against scat_batch --players 7,10
    python -m training.batch_eval expert:min_value=25 --players 10 --games 3000

The deals are this module's, not the tournament's: a figure from here and one from
``training.evaluate`` with the same seed are different samples of the same games.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numba
import numpy as np

from agents.batch_expert import BatchExpert
from agents.compact import (
    CompactAgent,
    CompactPolicy,
    CompactSet,
    load_compact_player,
    policy_path,
)
from agents.expert import parse_params
from scat_env import Rules
from scat_env.batch import BatchEnv

from .ratings import cluster_wilson_ci

#: Games stepped at once: enough to keep both cores busy, few enough that the games which
#: end last do not leave most of a batch idle for long.
CHUNK_GAMES = 2400
OPPONENTS = ("expert", "greedy")


Player = CompactPolicy | CompactSet | BatchExpert


def load_policy(path: str) -> CompactPolicy | CompactSet:
    """A compact policy file or set manifest, or a shipped one by name (``scat_batch``,
    ``scat_batch_set``)."""
    return load_compact_player(policy_path(path.removeprefix("compact:")))


def load_player(spec: str, rules: str = "standard") -> Player:
    """What to evaluate: a compact policy or set (a file, ``compact:PATH`` or a shipped
    name), or ``expert[:KNOBS]`` (``expert:min_value=25,beta=0.95``: the batched expert
    with other knobs, to measure a variant against the default one)."""
    if spec == "expert" or spec.startswith("expert:"):
        return BatchExpert(rules, parse_params(spec.partition(":")[2] or None))
    return load_policy(spec)


def duplicate_wins(policies: Sequence[Player], num_players: int, deals: int,
                   opponent: str = "expert", rules: str = "standard",
                   seed: int = 0) -> np.ndarray:
    """Wins [len(policies), deals, num_players]: ``[k, d, r]`` is whether policy ``k`` won
    deal ``d`` from seat ``r``, against ``opponent`` in every other seat (module
    docstring)."""
    if opponent not in OPPONENTS:
        raise ValueError(f"opponent must be one of {', '.join(OPPONENTS)}, got {opponent!r}")
    if type(deals) is not int or deals < 1:
        raise ValueError(f"deals must be a positive int, got {deals!r}")
    n = num_players
    wins = np.zeros((len(policies), deals, n), np.bool_)
    per_chunk = max(1, CHUNK_GAMES // n)
    for policy in policies:  # refused as the compact: agent refuses a table it never read
        if not isinstance(policy, BatchExpert):
            CompactAgent(policy).check_table(n, Rules.preset(rules))
    for k, policy in enumerate(policies):
        advised = not isinstance(policy, BatchExpert) and policy.advice
        expert = BatchExpert(rules) if opponent == "expert" or advised else None
        for lo in range(0, deals, per_chunk):
            d = np.arange(lo, min(deals, lo + per_chunk))
            wins[k, d] = _play(policy, expert, opponent, n, d, rules, seed)
    return wins


def _play(policy: Player, expert: BatchExpert | None, opponent: str, n: int,
          deals: np.ndarray, rules: str, seed: int) -> np.ndarray:
    """Whether the policy won each of ``deals`` from each seat, [len(deals), n]."""
    B = len(deals) * n
    env = BatchEnv(B, n, rules, seed, deal_ids=np.repeat(deals, n))
    learner = np.tile(np.arange(n), len(deals))
    out = env.reset()
    start_lives = env.rules.start_lives
    finished = np.zeros(B, np.bool_)
    won = np.zeros(B, np.bool_)
    acts = np.empty(B, np.int64)
    advice = np.empty(B, np.int64)
    mover = np.empty(B, np.int64)
    while not finished.all():
        mine = (out["current_player"] == learner) & ~finished
        if opponent == "expert":
            expert.actions(env, acts)  # type: ignore[union-attr]
        else:
            acts[:] = env.threshold_actions(25)
        rows = np.flatnonzero(mine)
        if isinstance(policy, BatchExpert):
            acts[rows] = policy.actions(env, mover)[rows]
        elif len(rows):
            obs = out["observation"][rows]
            feats = env.hand_features(obs)
            advised = None
            if policy.advice:  # the expert's move: the opponents' moves when they are it
                moves = acts if opponent == "expert" else expert.actions(env, advice)  # type: ignore[union-attr]
                advised = moves[rows]
            logits = policy.play_logits(obs, feats, n, start_lives, out["action_mask"][rows],
                                        advised, env.rules)
            acts[rows] = np.argmax(logits, axis=1)
        out = env.step(acts, skip=finished)
        ended = out["done"] & ~finished
        won[ended] = out["winner"][ended] == learner[ended]
        finished |= ended
    return won.reshape(len(deals), n)


def cell(spec: str, rules: str, n: int, games: int, seed: int,
         opponent: str = "expert") -> dict[str, Any]:
    """One player at one table: ``spec`` (a compact policy or ``expert``) in one seat of
    ``n`` against ``opponent`` in the others, over at least ``games`` duplicate-deal games
    under ``rules``: :func:`summarize`'s figures, the seconds it took and whether the player
    learned these rules (``trained_on``)."""
    from agents.registry import make_agent

    t0 = time.perf_counter()
    player = load_player(spec.removeprefix("compact:"), rules)
    wins = duplicate_wins([player], n, -(-games // n), opponent, rules, seed)[0]
    row = summarize(wins)
    row.update(spec=spec, seconds=round(time.perf_counter() - t0, 1),
               learned=make_agent(spec).trained_on(Rules.preset(rules)))
    return row


def _threads(count: int) -> None:
    """A worker's numba threads: the workers share the cores (``cores // workers`` each),
    rather than each waiting at its threads' barriers for cores the others hold."""
    numba.set_num_threads(max(1, min(count, numba.config.NUMBA_NUM_THREADS)))


def _cell(job: tuple[str, str, int, int, int, str]) -> dict[str, Any]:
    return cell(*job)


def measure_cells(jobs: Sequence[tuple[str, str, int, int, int, str]],
                  workers: int = 1) -> list[dict[str, Any]]:
    """:func:`cell` of each ``(spec, rules, n, games, seed, opponent)``, in order, ``workers``
    at once in their own processes: the same figures for any count (each cell's deals come
    from its seed alone)."""
    if workers <= 1:
        return [cell(*job) for job in jobs]
    ctx = multiprocessing.get_context("spawn")  # torch's OpenMP and numba's pool do not fork
    threads = (os.cpu_count() or 1) // workers
    with ProcessPoolExecutor(workers, ctx, initializer=_threads, initargs=(threads,)) as pool:
        # the last jobs (golf, the largest tables) take longest: started first, they end
        # with the rest
        futures = [pool.submit(_cell, job) for job in reversed(jobs)][::-1]
        return [f.result() for f in futures]


def summarize(wins: np.ndarray) -> dict[str, Any]:
    """Win rate, its deal-clustered 95% interval and multiples of the fair share, from one
    policy's wins [deals, n]."""
    deals, n = wins.shape
    rate, low, high = cluster_wilson_ci([(float(w.sum()), float(n)) for w in wins])
    return {"games": deals * n, "deals": deals, "win_rate": rate, "ci95": [low, high],
            "x_fair": rate * n, "x_fair_ci95": [low * n, high * n]}


def paired(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """A - B win rate over the same games [deals, n], and its standard error with each deal
    a cluster (the sandwich estimator of a mean, with the k / (k - 1) factor)."""
    deals, n = a.shape
    per_deal = (a.astype(np.float64) - b).sum(axis=1)
    diff = per_deal.sum() / (deals * n)
    resid = per_deal - diff * n
    se = math.sqrt(deals / max(deals - 1, 1) * float((resid ** 2).sum())) / (deals * n)
    return {"a": float(a.mean()), "b": float(b.mean()), "diff": float(diff), "se": se,
            "z": diff / se if se > 0 else math.nan}


def _counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--players wants numbers like 7,10, got {text!r}") from None
    if not counts or any(not 2 <= x <= 10 for x in counts):
        raise argparse.ArgumentTypeError(f"--players: table sizes are 2..10, got {text!r}")
    return counts


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"wants a positive whole number, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.batch_eval", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("policy", help="compact policy file or set manifest (.yaml), a shipped "
                    "name (scat_batch, scat_batch_set), or expert:KNOBS (a variant of the "
                    "expert)")
    ap.add_argument("--against", help="a second player, on the same games (paired)")
    ap.add_argument("--players", type=_counts, default=[7, 8, 9, 10])
    ap.add_argument("--games", type=_positive, default=2000,
                    help="games per table size, at least (whole deals of n games each)")
    ap.add_argument("--opponent", choices=OPPONENTS, default="expert")
    ap.add_argument("--rules", default="standard")
    ap.add_argument("--seed", type=int, default=999999)
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    try:
        BatchEnv(1, 2, args.rules)  # a preset the engine does not play: one line, now
        policies = [load_player(args.policy, args.rules)]
        if args.against:
            policies.append(load_player(args.against, args.rules))
    except ValueError as e:
        print(f"batch_eval: {e}", file=sys.stderr)
        return 2
    names = [args.policy] + ([args.against] if args.against else [])
    report: dict[str, Any] = {"policies": names, "opponent": args.opponent, "seed": args.seed,
                              "rules": args.rules, "tables": {}}
    print(f"{' vs '.join(names)} against {args.opponent}, duplicate deals from seed "
          f"{args.seed} (batched engine)")
    for n in args.players:
        t0 = time.perf_counter()
        deals = -(-args.games // n)
        try:
            wins = duplicate_wins(policies, n, deals, args.opponent, args.rules, args.seed)
        except ValueError as e:  # a table or rules a player does not play
            print(f"batch_eval: {e}", file=sys.stderr)
            return 2
        row: dict[str, Any] = {"seconds": time.perf_counter() - t0}
        for name, w in zip(names, wins, strict=True):
            s = row[name] = summarize(w)
            lo, hi = s["ci95"]
            print(f"{n} players, {name}: {s['win_rate']:.3f} [{lo:.3f}, {hi:.3f}], "
                  f"{s['x_fair']:.2f}x fair [{lo * n:.2f}, {hi * n:.2f}] ({s['games']} games, "
                  f"{row['seconds']:.0f} s)")
        if len(policies) == 2:
            p = row["paired"] = paired(wins[0], wins[1])
            print(f"{n} players, paired A - B: {p['diff']:+.4f} (se {p['se']:.4f}, "
                  f"z {p['z']:+.2f})")
        report["tables"][str(n)] = row
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
