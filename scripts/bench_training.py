"""Training throughput: the native lockstep PPO trainer vs the SB3 MaskablePPO path.

    python scripts/bench_training.py --seconds 60

Each trainer trains from scratch for ``--seconds`` (its own time limit, so the figure
includes PPO updates, not just env stepping) against the SAME opponents (``--opponents``,
default ``greedy`` in every other seat), with its shipped config (``configs/train/default.yaml``
and ``configs/train/sb3.yaml``) and in-training evaluation, checkpoints and the final
evaluation turned off. The two runs go one after the other, each in its own fresh process
(SB3 with a DummyVecEnv: one process, like the native trainer; SubprocVecEnv would use
more cores than the other and make the figures incomparable).

Printed per trainer: learner decisions per second (training samples: the comparable
figure; an SB3 env step is one learner decision) and, for the native trainer, all game
decisions per second (it also steps the opponents' seats inside the same loop).

``--opponents self`` measures self-play, the set-up the native trainer is built for: there
every seat is the learning policy, batched, and every decision is a training sample. The
SB3 path cannot put its live policy in the other seats (they are played inside
``env.step()``), so it plays frozen copies of itself (``sb3:PATH`` snapshots, the first one
the untrained policy, one more every ``snapshot_every`` steps), as its self-play does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRAINERS = ("native", "sb3")
CONFIGS = {"native": ROOT / "configs/train/default.yaml", "sb3": ROOT / "configs/train/sb3.yaml"}


def _overrides(trainer: str, seconds: float, opponents: str, workdir: str) -> dict:
    """Budget and opponents shared by both trainers; everything that is not training off."""
    common = {"time_limit_s": seconds, "total_steps": 10**9, "final_eval_games": 0,
              "progress": False, "opponents": {spec: 1.0 for spec in opponents.split(",")},
              "torch_threads": 1}
    if trainer == "native":
        return {**common, "eval_every": 0, "checkpoint_every": 10**6}
    sb3 = {**common, "eval_every": 0, "checkpoint_every": 10**9, "snapshot_every": 0,
           "vec_env": "dummy"}
    if opponents == "self":
        sb3.update(opponents={f"sb3:{_initial_sb3_snapshot(workdir)}": 1.0},
                   snapshot_every=20_000)
    return sb3


def _initial_sb3_snapshot(workdir: str) -> str:
    """An untrained MaskablePPO of the SB3 config's architecture, saved as a zip: the
    first frozen copy in the SB3 path's self-play pool."""
    from sb3_contrib import MaskablePPO

    from training.config import load_config
    from training.single_agent import ScatSingleAgentEnv

    _, cfg = load_config(CONFIGS["sb3"])
    env = ScatSingleAgentEnv(cfg.player_counts, cfg.rules, {"random": 1.0},
                             max_players=cfg.max_players)
    model = MaskablePPO("MlpPolicy", env, seed=cfg.seed, device="cpu",
                        policy_kwargs={"net_arch": [cfg.hidden] * cfg.layers})
    path = str(Path(workdir) / "initial.zip")
    model.save(path)
    return path


def run_one(trainer: str, seconds: float, opponents: str) -> dict:
    """Train one trainer in this process; returns its measured throughput."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    sys.path.insert(0, str(ROOT))
    from training.config import load_config

    if trainer == "native":
        from training.ppo import train
    else:
        from training.sb3_train import train
    with tempfile.TemporaryDirectory(prefix=f"bench_{trainer}_") as out:
        _, cfg = load_config(CONFIGS[trainer], _overrides(trainer, seconds, opponents, out))
        t0 = time.perf_counter()
        summary = train(cfg, out, log=lambda m: None)
        wall = time.perf_counter() - t0
    learner = summary.get("samples", summary["env_steps"])
    result = {"trainer": trainer, "train_s": summary["elapsed_s"], "wall_s": wall,
              "learner_decisions": learner, "learner_decisions_per_s": learner / summary["elapsed_s"]}
    if trainer == "native":
        result["all_decisions"] = summary["env_steps"]
        result["all_decisions_per_s"] = summary["env_steps"] / summary["elapsed_s"]
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60.0, help="training time per trainer")
    p.add_argument("--opponents", default="greedy",
                   help="comma-separated agent specs, equally weighted, for every other seat; "
                        "'self' for self-play (see above)")
    p.add_argument("--trainers", default=",".join(TRAINERS), help="which trainers, in order")
    p.add_argument("--worker", choices=TRAINERS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.seconds <= 0:
        raise SystemExit("--seconds must be positive")
    if args.worker:
        print(json.dumps(run_one(args.worker, args.seconds, args.opponents)))
        return 0
    trainers = args.trainers.split(",")
    bad = [t for t in trainers if t not in TRAINERS]
    if bad:
        raise SystemExit(f"--trainers: unknown {bad}; choose from {TRAINERS}")
    print(f"training throughput, {args.seconds:.0f} s per trainer vs {args.opponents}, "
          f"1 process and 1 torch thread each, load average before: {os.getloadavg()[0]:.2f}")
    for trainer in trainers:
        proc = subprocess.run([sys.executable, __file__, "--worker", trainer, "--seconds",
                               str(args.seconds), "--opponents", args.opponents],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(f"{trainer}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
            return 1
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        line = (f"{trainer:>6}: {r['learner_decisions_per_s']:8,.0f} learner decisions/s "
                f"({r['learner_decisions']:,} in {r['train_s']:.0f} s incl. updates")
        if "all_decisions_per_s" in r:
            line += f"; {r['all_decisions_per_s']:,.0f} decisions/s of all seats"
        print(line + f"), load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
