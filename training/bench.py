"""Speed of agents and trainers: ``scat bench agents`` and ``scat bench training``.

(``scat bench`` alone measures the engine and the environment: :mod:`scat_env.bench`.)

``scat bench agents`` times one agent's decisions: mean microseconds per ``act`` call in
real games. The agent plays seat ``g % players`` of game ``g`` (seed ``seed + g``) against
``--opponents``; only its own ``act`` calls are timed (view building and the engine are not),
so the figure is the agent's own cost per decision::

    scat bench agents --agent expert --players 3 --games 300
    scat bench agents --agent ismcts:200 --opponents expert --games 20

``--batched GAMES`` also times ``expert`` batched (:mod:`agents.batch_expert`), every seat of
``GAMES`` games stepped at once, its decisions per second including the engine's steps::

    scat bench agents --agent expert --players 3 10 --games 100 --batched 512

``scat bench training`` measures training throughput, the SB3 MaskablePPO path, the same MaskablePPO on the batched engine
(``sb3_batch``: :class:`training.batch_vec_env.BatchVecEnv`, 256 games of 3 players, the
env constructor its only change) and the batched trainer (:mod:`training.batch_ppo`, its
games stepped by the batched engine on both cores, its torch on two threads). Each trains from scratch for ``--seconds`` (its own time
limit, so the figure includes PPO updates, not just env stepping) against the same opponents
(``--opponents``, default ``greedy`` in every other seat), with its config
(``configs/train/sb3.yaml`` and ``configs/train/default.yaml``) and in-training
evaluation, checkpoints and the final evaluation turned off. The two runs go one after the
other, each in its own fresh process (SB3 with a DummyVecEnv: one process; SubprocVecEnv would use more cores than the other and make the figures
incomparable). The two SB3 runs give torch every core (:data:`SB3_TORCH_THREADS`), as a
user's script has them; RLlib one thread, the batched trainer two::

    scat bench training --seconds 60
    scat bench training --seconds 60 --opponents self

``rllib`` is RLlib's PPO (:mod:`training.adapters.rllib`, ``configs/train/rllib.yaml``: sampling
and learning on the driver, 8 envs batched per forward pass), included where RLlib is
installed. ``--eval-games N`` then plays each trained policy against ``expert`` at 3 players
(``N`` duplicate deals, every rotation), so the figures say what the same wall time bought::

    scat bench training --seconds 180 --eval-games 100

It prints learner decisions per second (training samples: the comparable figure; an SB3 env
step is one learner decision, an RLlib env step one learning seat's move). ``--opponents
self`` measures self-play: every seat is the learning policy, batched, and every decision is
a training sample. The SB3 path cannot put its live policy in
the other seats (they are played inside ``env.step()``), so it plays frozen copies of itself
(``sb3:PATH`` snapshots, the first one the untrained policy, one more every
``snapshot_every_samples``), as its self-play does.

Both print figures and assert nothing about time: machines differ.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents import make_agent
from agents.base import Agent
from agents.match import play_game
from scat_env import PlayerView, Rules

#: The training benchmark reads the repository's own configs: it measures a checkout.
ROOT = Path(__file__).resolve().parent.parent
TRAINERS = ("sb3", "sb3_batch", "batch", "rllib")
CONFIGS = {"sb3": ROOT / "configs/train/sb3.yaml",
           "sb3_batch": ROOT / "configs/train/sb3.yaml",
           "batch": ROOT / "configs/train/default.yaml",
           "rllib": ROOT / "configs/train/rllib.yaml"}
#: ``--eval-games``: each trained policy then plays this table size against ``expert``.
EVAL_PLAYERS, EVAL_OPPONENT = 3, "expert"
#: Games of the SB3 run on the batched engine (:class:`training.batch_vec_env.BatchVecEnv`)
#: and their table size; its network and PPO settings are ``sb3.yaml``'s.
SB3_BATCH_GAMES, SB3_BATCH_PLAYERS = 256, 3
#: Torch threads of both SB3 runs: every core, as a user's MaskablePPO script gets them (the
#: comparison is "the env constructor the only change"). The other trainers keep their own.
SB3_TORCH_THREADS = os.cpu_count() or 1


class _OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one line and exit 2, like every ``scat`` command."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


# ---------------------------------------------------------------------------------------
# Agents


class TimedAgent:
    """Wraps an agent and adds up the wall time of its ``act`` calls. Not an :class:`Agent`
    subclass: every other attribute (``reset``, ``spec``, the table checks) is the wrapped
    agent's own, so the match loop treats it exactly as the agent it times."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.seconds = 0.0
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)

    def act(self, view: PlayerView) -> int:
        start = time.perf_counter()
        action = self.agent.act(view)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return action


def time_agent(agent: str, opponent: str, players: int, games: int, rules: Rules,
               seed: int = 0) -> tuple[float, int]:
    """(mean seconds per decision of ``agent``, its decisions) over ``games`` games."""
    total = 0.0
    calls = 0
    for g in range(games):
        hero_seat = g % players
        hero = TimedAgent(make_agent(agent, seed=seed + g))
        seats = [hero if s == hero_seat else make_agent(opponent, seed=seed + g * 10 + s)
                 for s in range(players)]
        play_game(seats, rules, seed=seed + g)  # type: ignore[arg-type]  # TimedAgent
        total += hero.seconds
        calls += hero.calls
    return total / max(calls, 1), calls


def agents_main(argv: Sequence[str] | None = None, prog: str = "scat bench agents") -> int:
    """``scat bench agents``: one line per player count, microseconds per decision."""
    p = _OneLineParser(prog=prog, description="Time one agent's decisions in real games "
                       "(microseconds per act call, the agent's own cost).")
    p.add_argument("--agent", default="expert", help="the timed agent's spec (default: expert)")
    p.add_argument("--opponents", default="greedy",
                   help="spec of every other seat (default: greedy)")
    p.add_argument("--players", type=int, nargs="+", default=[3],
                   help="player counts to measure (default: 3)")
    p.add_argument("--games", type=int, default=300, help="games per player count")
    p.add_argument("--rules", default="standard", help="rules preset or YAML path")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1, help="report the best of this many runs")
    p.add_argument("--batched", type=int, default=0, metavar="GAMES",
                   help="also time expert batched (agents.batch_expert) over this many games "
                        "stepped at once: its decisions per second, every seat expert")
    args = p.parse_args(argv)
    for n in args.players:
        if not 2 <= n <= 10:
            p.error(f"--players: {n} is not between 2 and 10")
    if args.games < 1 or args.repeat < 1:
        p.error("--games and --repeat must be at least 1")
    if args.batched < 0:
        p.error("--batched must be 0 or more")
    for spec in (args.agent, args.opponents):
        try:
            make_agent(spec)
        except (ValueError, OSError) as e:  # unknown name, bad option, missing policy file
            p.error(f"bad agent spec {spec!r}: {e}")
    rules = Rules.preset(args.rules)
    if args.batched:
        from agents.batch_expert import uncovered

        why = uncovered(rules)
        if why is not None:
            p.error(f"--batched: the batched expert does not play {rules.name!r}: {why}")
    # Warm-up: lookup tables are built once per scoring variant, not per decision.
    time_agent(args.agent, args.opponents, 2, 1, rules, args.seed)
    for n in args.players:
        runs = [time_agent(args.agent, args.opponents, n, args.games, rules, args.seed)
                for _ in range(args.repeat)]
        per, calls = min(runs)
        print(f"{args.agent} vs {args.opponents}, {n} players, {args.games} games, "
              f"rules={rules.name}: {per * 1e6:.1f} us/decision over {calls} decisions "
              f"(best of {args.repeat})", flush=True)
        if args.batched:
            rate = time_batched_expert(rules, n, args.batched)
            print(f"batched expert, {n} players, {args.batched} games at once, "
                  f"rules={rules.name}: {rate:,.0f} decisions/s ({1e6 / rate:.2f} us/decision "
                  f"with the engine's step)", flush=True)
    return 0


def time_batched_expert(rules: Rules, players: int, games: int, seconds: float = 2.0) -> float:
    """Decisions per second of :class:`agents.batch_expert.BatchExpert` playing every seat of
    ``games`` batched games (its moves and the engine's steps, after a first compiling call)."""
    import numpy as np

    from agents.batch_expert import BatchExpert
    from scat_env.batch import BatchEnv

    env = BatchEnv(games, players, rules, seed=0)
    env.reset()
    expert = BatchExpert(rules)
    moves = np.empty(games, np.int64)
    env.step(expert.actions(env, moves))  # numba compiles on first use
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.step(expert.actions(env, moves))
        steps += 1
    return steps * games / (time.perf_counter() - start)


# ---------------------------------------------------------------------------------------
# Trainers


def training_overrides(trainer: str, seconds: float, opponents: str,
                       workdir: str | None = None) -> dict[str, Any]:
    """Config overrides for one benchmark run: the budget and opponents both trainers share,
    and everything that is not training (evaluation, checkpoints, the progress bar) off.
    ``workdir`` holds the SB3 path's initial self-play snapshot."""
    common: dict[str, Any] = {
        "time_limit_s": seconds, "total_samples": 10**9, "final_eval_games": 0,
        "progress": False, "opponents": {spec: 1.0 for spec in opponents.split(",")},
        "torch_threads": 1,
    }
    if trainer == "rllib":
        # RLlib's own loop on the driver (num_env_runners 0, as the config ships): one
        # process; "self" is its shared policy in every seat.
        return {**common, "eval_every_iterations": 0, "checkpoint_every_iterations": 10**6}
    if trainer == "batch":
        # Built for the whole machine: numba steps the games on every core, so torch gets
        # two threads too. Its opponents are played batched: greedy, expert, random, itself.
        batch = {k: v for k, v in common.items() if k not in ("opponents", "progress")}
        batch.update(eval_every_updates=0, eval_every_s=None, torch_threads=2,
                     numba_threads=None)
        if opponents == "self":
            return {**batch, "self_play": 1.0}
        return {**batch, "self_play": 0.0,
                "opponents": {spec: 1.0 for spec in opponents.split(",")}}
    sb3 = {**common, "eval_every_samples": 0, "checkpoint_every_samples": 10**9,
           "snapshot_every_samples": 0, "vec_env": "dummy", "torch_threads": SB3_TORCH_THREADS}
    if opponents == "self":
        if workdir is None:
            raise ValueError("SB3 self-play needs a folder for its first snapshot")
        sb3.update(opponents={f"sb3:{_initial_sb3_snapshot(workdir)}": 1.0},
                   snapshot_every_samples=20_000)
    return sb3


def _initial_sb3_snapshot(workdir: str) -> str:
    """An untrained MaskablePPO of the SB3 config's architecture, saved as a zip: the first
    frozen copy in the SB3 path's self-play pool."""
    from sb3_contrib import MaskablePPO

    from .config import load_config
    from .single_agent import ScatSingleAgentEnv

    _, cfg = load_config(CONFIGS["sb3"])
    env = ScatSingleAgentEnv(cfg.player_counts, cfg.rules, {"random": 1.0},
                             max_players=cfg.max_players)
    model = MaskablePPO("MlpPolicy", env, seed=cfg.seed, device="cpu",
                        policy_kwargs={"net_arch": [cfg.hidden] * cfg.layers})
    path = str(Path(workdir) / "initial.zip")
    model.save(path)
    return path


def train_sb3_batch(seconds: float, opponents: str, eval_games: int = 0) -> dict[str, Any]:
    """MaskablePPO with ``sb3.yaml``'s network and PPO settings on :class:`BatchVecEnv`
    (the env constructor is the only change), for ``seconds``; its throughput, and with
    ``eval_games`` its win rate as ``sb3:PATH`` against ``expert``."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from .batch_vec_env import BatchVecEnv
    from .config import load_config

    if opponents == "self":
        raise ValueError("sb3_batch plays batched baselines (greedy, expert, random, "
                         "threshold:K), not itself")
    _, cfg = load_config(CONFIGS["sb3"])
    torch.set_num_threads(SB3_TORCH_THREADS)
    env = BatchVecEnv(SB3_BATCH_GAMES, SB3_BATCH_PLAYERS, cfg.rules, cfg.seed,
                      opponents=tuple(opponents.split(",")))
    steps = max(1, cfg.rollout_samples_per_env * cfg.n_envs // SB3_BATCH_GAMES)
    model = MaskablePPO("MlpPolicy", env, learning_rate=cfg.lr, n_steps=steps,
                        batch_size=cfg.minibatch_samples, n_epochs=cfg.epochs, gamma=cfg.gamma,
                        gae_lambda=cfg.gae_lambda, clip_range=cfg.clip, ent_coef=cfg.ent_coef,
                        seed=cfg.seed, device="cpu", verbose=0,
                        policy_kwargs={"net_arch": [cfg.hidden] * cfg.layers})
    t0 = time.perf_counter()

    class Budget(BaseCallback):
        def _on_step(self) -> bool:
            return time.perf_counter() - t0 < seconds

    model.learn(10**9, callback=Budget())
    elapsed = time.perf_counter() - t0
    result = {"trainer": "sb3_batch", "train_s": elapsed, "wall_s": elapsed,
              "learner_decisions": model.num_timesteps,
              "learner_decisions_per_s": model.num_timesteps / elapsed}
    if eval_games:  # sb3:PATH plays a BatchVecEnv model from the view (SB3CompactAgent)
        with tempfile.TemporaryDirectory(prefix="bench_sb3_batch_") as out:
            model.save(str(Path(out) / "model.zip"))
            result.update(_win_rate(f"sb3:{out}/model.zip", eval_games, out))
    return result


def _win_rate(spec: str, games: int, workdir: str) -> dict[str, Any]:
    """``spec`` in one seat against :data:`EVAL_OPPONENT` in the others, :data:`EVAL_PLAYERS`
    players, ``games`` duplicate deals in every rotation (the tournament harness)."""
    from .evaluate import FINAL_EVAL_SEED, tournament_evaluation

    ev = tournament_evaluation(spec, [EVAL_OPPONENT], [EVAL_PLAYERS], games,
                               Path(workdir) / "bench_eval", seed=FINAL_EVAL_SEED)
    key = f"{EVAL_OPPONENT}_x{EVAL_PLAYERS}"
    return {"win_rate": ev["win_rate"][key], "win_ci95": ev["ci95"][key],
            "eval_games": ev["games"][key]}


def train_once(trainer: str, seconds: float, opponents: str, eval_games: int = 0
               ) -> dict[str, Any]:
    """Train one trainer in this process; returns its measured throughput (and with
    ``eval_games`` the trained policy's win rate against ``expert``)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    from .config import load_config

    if trainer in ("batch", "sb3_batch"):
        import torch  # noqa: F401  (before numba's threads start: see docs/TRAINING.md)

        from scat_env.batch import compile_kernels

        compile_kernels()  # numba's first-use compile is not training time
    if trainer == "sb3_batch":
        return train_sb3_batch(seconds, opponents, eval_games)
    from .trainers import trainer as find_trainer

    train = find_trainer(trainer).train_function()
    with tempfile.TemporaryDirectory(prefix=f"bench_{trainer}_") as out:
        _, cfg = load_config(CONFIGS[trainer], training_overrides(trainer, seconds, opponents, out))
        t0 = time.perf_counter()
        summary = train(cfg, out, log=lambda m: None)
        wall = time.perf_counter() - t0
        learner = summary["samples"]
        result = {"trainer": trainer, "train_s": summary["elapsed_s"], "wall_s": wall,
                  "learner_decisions": learner,
                  "learner_decisions_per_s": learner / summary["elapsed_s"]}
        if eval_games:
            from .evaluate import policy_spec

            result.update(_win_rate(policy_spec(trainer, out), eval_games, out))
    return result


def _rllib_installed() -> bool:
    try:
        import ray.rllib  # noqa: F401
    except ImportError:
        return False
    return True


def training_main(argv: Sequence[str] | None = None, prog: str = "scat bench training") -> int:
    """``scat bench training``: each trainer in a fresh process, one line each."""
    p = _OneLineParser(prog=prog, description="Training throughput of the batched "
                       "trainer, the SB3 MaskablePPO path and RLlib, each from scratch on its "
                       "config.")
    p.add_argument("--seconds", type=float, default=60.0, help="training time per trainer")
    p.add_argument("--opponents", default="greedy",
                   help="comma-separated agent specs, equally weighted, for every other seat; "
                        "'self' for self-play")
    p.add_argument("--trainers", default=None,
                   help="which trainers, in order (default: all; rllib where RLlib is "
                        "installed: pip install -e '.[rllib]')")
    p.add_argument("--eval-games", type=int, default=0,
                   help=f"then play each trained policy against {EVAL_OPPONENT} at "
                        f"{EVAL_PLAYERS} players, this many duplicate deals (0: no evaluation)")
    p.add_argument("--worker", choices=TRAINERS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.seconds <= 0:
        p.error("--seconds must be positive")
    if args.eval_games < 0:
        p.error("--eval-games must be 0 or more")
    if args.opponents != "self":  # checked here, not by each trainer's process minutes later
        for spec in args.opponents.split(","):
            try:
                make_agent(spec)
            except (ValueError, OSError) as e:  # unknown name, bad option, missing file
                p.error(f"--opponents: bad agent spec {spec!r}: {e}")
    if args.worker:
        print(json.dumps(train_once(args.worker, args.seconds, args.opponents, args.eval_games)))
        return 0
    trainers = args.trainers.split(",") if args.trainers else [
        t for t in TRAINERS if t != "rllib" or _rllib_installed()]
    bad = [t for t in trainers if t not in TRAINERS]
    if bad:
        p.error(f"--trainers: unknown {', '.join(bad)}; choose from {', '.join(TRAINERS)}")
    missing = [str(CONFIGS[t]) for t in trainers if not CONFIGS[t].is_file()]
    if missing:
        p.error(f"config not found: {', '.join(missing)} (run it from a checkout)")
    if "rllib" in trainers and not _rllib_installed():
        p.error("--trainers rllib: RLlib is not installed: pip install -e '.[rllib]'")
    print(f"training throughput, {args.seconds:g} s per trainer vs {args.opponents}, "
          f"1 process each (1 torch thread; sb3, sb3_batch: {SB3_TORCH_THREADS}; batch: 2 torch "
          f"and numba threads), load average "
          f"before: {os.getloadavg()[0]:.2f}")
    for trainer in trainers:
        # A fresh interpreter per trainer: neither inherits the other's threads or caches.
        proc = subprocess.run([sys.executable, "-m", "training.bench", "--worker", trainer,
                               "--seconds", str(args.seconds), "--opponents", args.opponents,
                               "--eval-games", str(args.eval_games)],
                              capture_output=True, text=True, check=False, cwd=ROOT)
        if proc.returncode != 0:
            said = [line for line in proc.stderr.splitlines() if line.strip()]
            print(f"{trainer}: failed: {said[-1] if said else f'exit status {proc.returncode}'}",
                  file=sys.stderr)
            return 1
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        line = (f"{trainer:>9}: {r['learner_decisions_per_s']:8,.0f} learner decisions/s "
                f"({r['learner_decisions']:,} in {r['train_s']:.0f} s incl. updates")
        if "all_decisions_per_s" in r:
            line += f"; {r['all_decisions_per_s']:,.0f} decisions/s of all seats"
        line += ")"
        if "win_rate" in r:
            low, high = r["win_ci95"]
            line += (f"; vs {EVAL_OPPONENT} x{EVAL_PLAYERS}: win rate {r['win_rate']:.3f} "
                     f"[{low:.3f}, {high:.3f}] over {r['eval_games']:,} games")
        print(line + f", load average after: {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(training_main(prog="python -m training.bench"))
