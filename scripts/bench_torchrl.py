"""TorchRL training throughput: through the single AEC env against through the batched engine.

Both paths train the same way, in one process, one after the other: TorchRL's ``Collector``
gathers a batch with a masked ``ProbabilisticActor`` (ReLU MLP, 128x2), then GAE and
``ClipPPOLoss`` do ``--epochs`` passes over it. The single-env path is docs/LIBRARIES.md's
IPPO block (``PettingZooWrapper`` around ``scat_env.env(num_players=3, infos="flat",
eliminated="stay")``, one group, 512 frames a batch: one seat moves per frame); the batched
path is :class:`training.adapters.torchrl.BatchEnvRL` (1,024 games, 32 steps a batch: one
learner decision per game per step). A *sample* is one decision of a trained seat. Prints
samples/s of each, updates included, and the ratio; asserts nothing about time.

    python scripts/bench_torchrl.py --seconds 60
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def single_env(seconds: float, epochs: int) -> float:
    """Samples/s of IPPO through ``PettingZooWrapper`` (docs/LIBRARIES.md's block)."""
    from tensordict.nn import TensorDictModule
    from torchrl.collectors import Collector
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType
    from torchrl.modules import MaskedCategorical, MultiAgentMLP, ProbabilisticActor, ValueOperator
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    import scat_env

    n = 3
    env = PettingZooWrapper(env=scat_env.env(num_players=n, infos="flat", eliminated="stay"),
                            use_mask=True, group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, seed=0)
    obs_key = ("agents", "observation", "observation")
    n_obs = env.observation_spec[obs_key].shape[-1]
    n_act = env.full_action_spec_unbatched[env.action_key].space.n

    def mlp(out: int) -> MultiAgentMLP:
        return MultiAgentMLP(n_obs, out, n, centralized=False, share_params=True, depth=2,
                             num_cells=128)

    actor = ProbabilisticActor(
        TensorDictModule(mlp(n_act), in_keys=[obs_key], out_keys=[("agents", "logits")]),
        spec=env.full_action_spec_unbatched,
        in_keys={"logits": ("agents", "logits"), "mask": ("agents", "action_mask")},
        out_keys=[env.action_key], distribution_class=MaskedCategorical, return_log_prob=True)
    critic = ValueOperator(mlp(1), in_keys=[obs_key])
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, reduction="none")
    loss.set_keys(reward=("agents", "reward"), action=env.action_key,
                  done=("agents", "done"), terminated=("agents", "terminated"))
    loss.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
    opt = torch.optim.Adam(loss.parameters(), lr=3e-4)
    collector = Collector(env, actor, frames_per_batch=512, total_frames=-1,
                          auto_register_policy_transforms=False)
    samples, start = 0, time.perf_counter()
    for data in collector:
        with torch.no_grad():
            loss.value_estimator(data, params=loss.critic_network_params,
                                 target_params=loss.target_critic_network_params)
        moved = data["agents", "mask"]
        for _ in range(epochs):
            out = loss(data)
            total = (((out["loss_objective"] + out["loss_entropy"]) * moved).sum() / moved.sum()
                     + out["loss_critic"].mean())
            opt.zero_grad()
            total.backward()
            opt.step()
        collector.update_policy_weights_()
        samples += int(moved.sum())
        if time.perf_counter() - start >= seconds:
            break
    collector.shutdown()
    return samples / (time.perf_counter() - start)


def batched(seconds: float, epochs: int) -> float:
    """Samples/s of the ``torchrl`` trainer's PPO (no warm start, no evaluation)."""
    import tempfile

    from training.adapters.torchrl import train
    from training.config import TorchRLConfig

    cfg = TorchRLConfig(imitate=None, imitate_samples=0, epochs=epochs, time_limit_s=seconds,
                        total_samples=10**9, eval_every_samples=0, final_eval_games=0,
                        progress=False)
    with tempfile.TemporaryDirectory() as out:
        return float(train(cfg, Path(out) / "run", log=lambda s: None)["samples_per_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="training time per path")
    parser.add_argument("--epochs", type=int, default=3, help="PPO passes over each batch")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    fast = batched(args.seconds, args.epochs)
    torch.set_num_threads(args.threads)
    slow = single_env(args.seconds, args.epochs)
    print(f"TorchRL PPO, 3 players, {args.seconds:.0f} s each, {args.threads} torch threads:")
    print(f"  through PettingZooWrapper(scat_env.env()): {slow:10,.0f} samples/s")
    print(f"  through BatchEnvRL (the batched engine):    {fast:10,.0f} samples/s")
    print(f"  ratio: {fast / slow:,.0f}x")


if __name__ == "__main__":
    main()
