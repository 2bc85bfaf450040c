"""RLlib training throughput: through the multi-agent AEC env against through the batched engine.

Five runs in one process, one after the other, each for ``--seconds`` of ``algo.train()``
iterations (sampling and PPO updates), without the warm start and the evaluations:

- ``configs/train/rllib.yaml`` as shipped (``env: aec``, ``ScatMultiAgentEnv`` over
  ``scat_env.env()``, 8 envs on the driver, its self-play and baseline mix);
- the same, playing the batched config's task: one learner seat against its opponents
  (greedy 0.6, expert 0.2, random 0.2), played inside the env from their views;
- that task again with the batched config's PPO settings (train batch, minibatch, epochs,
  learning rate, network, threads), so that only the path the samples take differs;
- ``configs/train/rllib_batch.yaml`` with ``batched_runner: rllib``: RLlib's own env runner
  and learner pipeline over the same vector env of the batched engine;
- ``configs/train/rllib_batch.yaml`` as shipped (``env: batched``: RLlib's PPO with
  ``training.adapters.rllib_runner``'s env runner over 1,024 games of the batched engine).

A *sample* is one learner decision; a rate is the samples of the iterations that began within
``--seconds`` over their wall time. Prints samples/s of each and the ratios; asserts nothing
about time.

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


#: The fields of the batched config the like-for-like AEC run takes over.
PPO_SETTINGS = ("train_batch_samples", "minibatch_samples", "epochs", "lr", "gamma",
                "gae_lambda", "clip", "ent_coef", "vf_coef", "hidden", "layers",
                "torch_threads", "hand_reward")


def rate(config: str, seconds: float, **changes: object) -> float:
    """Samples/s of ``config``'s trainer (with ``changes``) for ``seconds`` of training."""
    from training.adapters.rllib import train
    from training.config import load_config

    _, cfg = load_config(ROOT / config)
    cfg = dataclasses.replace(cfg, **changes)
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
    from training.config import load_config

    _, batched = load_config(ROOT / "configs/train/rllib_batch.yaml")
    shipped = rate("configs/train/rllib.yaml", args.seconds)
    same = rate("configs/train/rllib.yaml", args.seconds, opponents=dict(batched.opponents))
    ppo = {f: getattr(batched, f) for f in PPO_SETTINGS}
    like = rate("configs/train/rllib.yaml", args.seconds, opponents=dict(batched.opponents),
                **ppo)
    own = rate("configs/train/rllib_batch.yaml", args.seconds, batched_runner="rllib")
    fast = rate("configs/train/rllib_batch.yaml", args.seconds)
    print(f"RLlib PPO, 3 players, {args.seconds:.0f} s of training each:")
    rows = [("env: aec, rllib.yaml as shipped", shipped),
            ("env: aec, the batched config's opponents", same),
            ("env: aec, its opponents and PPO settings", like),
            ("env: batched, batched_runner: rllib", own)]
    for name, value in rows:
        print(f"  {name + ':':44s}{value:10,.0f} samples/s   batched is {fast / value:5.1f}x")
    print(f"  {'env: batched, rllib_batch.yaml:':44s}{fast:10,.0f} samples/s")


if __name__ == "__main__":
    main()
