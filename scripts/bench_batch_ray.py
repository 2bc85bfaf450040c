"""Samples/s of the batched trainer with its rollouts in this process and on 1 and 2 Ray
workers (a Ray instance of the run's own on this machine), each for the same sample budget
and the same shards, so the three policies are trained on the same games
(docs/SCALING.md, "The batched trainer on Ray"). Prints one line per setting; evaluate the
policies it writes with ``python -m training.batch_eval OUT/<setting>/policy.npz``.

    flock /work/cpu.lock python scripts/bench_batch_ray.py --samples 300000 --out runs/bench_ray
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

from training.batch_ppo import train
from training.config import load_config

SETTINGS = {"in_process": 0, "ray_1": 1, "ray_2": 2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/train/default.yaml")
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--samples", type=int, default=300_000)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--out", default="runs/bench_ray")
    args = parser.parse_args()
    base = dataclasses.replace(
        load_config(args.config)[1], player_counts=[args.players], total_samples=args.samples,
        rollout_shards=args.shards, eval_every_s=None, eval_every_updates=0,
        final_eval_games=0, progress=False)
    for name in args.settings.split(","):
        cfg = dataclasses.replace(base, ray_workers=SETTINGS[name])
        start = time.perf_counter()
        summary = train(cfg, Path(args.out) / name, log=lambda *_: None)
        wall = time.perf_counter() - start
        print(json.dumps({"setting": name, "samples": summary["samples"],
                          "updates": summary["updates"],
                          "train_s": round(summary["elapsed_s"], 1),
                          "rollout_s": round(summary["rollout_s"], 1),
                          "samples_per_s": round(summary["samples_per_s_since_start"]),
                          "whole_s": round(wall, 1)}), flush=True)


if __name__ == "__main__":
    main()
