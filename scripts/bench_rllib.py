"""RLlib training throughput: through the multi-agent AEC env against through the batched engine.

Both from the shipped configs, in one process, one after the other, each for ``--seconds``
of ``algo.train()`` iterations (sampling and PPO updates): ``configs/train/rllib.yaml``
(``env: aec``, ``ScatMultiAgentEnv`` over ``scat_env.env()``, 8 envs on the driver) and
``configs/train/rllib_batch.yaml`` (``env: batched``, a gymnasium vector env of 1,024 games
of the batched engine), without the warm start and the evaluations. A *sample* is one learner
decision. Prints samples/s of each and the ratio; asserts nothing about time.

    python scripts/bench_rllib.py --seconds 60
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rate(config: str, seconds: float) -> float:
    """Samples/s of ``config``'s trainer for ``seconds`` of training."""
    from training.adapters.rllib import train
    from training.config import load_config

    _, cfg = load_config(ROOT / config)
    cfg = dataclasses.replace(cfg, time_limit_s=seconds, total_samples=10**12,
                              imitate=None, imitate_samples=0, eval_every_iterations=0,
                              final_eval_games=0, checkpoint_every_iterations=10**9,
                              progress=False)
    with tempfile.TemporaryDirectory() as out:
        return float(train(cfg, Path(out) / "run", log=lambda s: None)
                     ["samples_per_s_since_start"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="training time per path")
    args = parser.parse_args()
    slow = rate("configs/train/rllib.yaml", args.seconds)
    fast = rate("configs/train/rllib_batch.yaml", args.seconds)
    print(f"RLlib PPO, 3 players, {args.seconds:.0f} s of training each:")
    print(f"  env: aec (ScatMultiAgentEnv, 8 envs):        {slow:10,.0f} samples/s")
    print(f"  env: batched (the batched engine, 1,024 games): {fast:10,.0f} samples/s")
    print(f"  ratio: {fast / slow:,.0f}x")


if __name__ == "__main__":
    main()
