"""TorchRL on the batched engine: an ``EnvBase`` of batch size ``num_envs`` and a PPO trainer
built from TorchRL's own pieces (``trainer: torchrl``).

:class:`BatchEnvRL` is :class:`training.batch_learner.BatchLearnerEnv` in TorchRL's
conventions: ``batch_size=[num_envs]``; the ``observation`` (the learner vector) and the
``action_mask`` (what ``MaskedCategorical`` reads) in the observation spec; a categorical
action; ``reward`` ``[B, 1]``; ``done``, ``terminated`` and ``truncated``. A game whose
episode ends is replaced at once by the engine; the step returns the learner's last view as
that row's next ``observation`` and keeps the new game's first view for the partial
``reset`` TorchRL then asks for (the ``"_reset"`` entry), so a collector sees the usual
end-then-reset sequence. ``check_env_specs`` passes on it (tests/test_torchrl_batch.py).
No infos, no eliminated seats: neither ``infos="flat"`` nor ``eliminated="stay"`` is needed.

:func:`train` is the trainer: an imitation warm start (:mod:`training.imitation`), then
``Collector`` rollouts, GAE and ``ClipPPOLoss`` over a ``ProbabilisticActor`` with
``MaskedCategorical`` and a ``ValueOperator``, both TorchRL ``MLP``\\s. The run folder holds
``policy/`` (``torchrl:PATH`` plays it: :mod:`agents.adapters.torchrl`), ``config.json``,
``summary.json``, the final evaluation and the learning curve, as the other trainers do.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Binary, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from scat_env.actions import NUM_ACTIONS
from scat_env.rules import DEFAULT_MAX_TURNS

from ..batch_learner import BatchLearnerEnv
from ..config import TorchRLConfig


class BatchEnvRL(EnvBase):
    """The module docstring's env."""

    batch_locked = True

    def __init__(self, num_envs: int, num_players: int, rules: str = "standard", seed: int = 0,
                 opponents: Any = ("greedy",), hand_reward: float = 0.0,
                 max_turns: int = DEFAULT_MAX_TURNS) -> None:
        super().__init__(batch_size=torch.Size([num_envs]), device="cpu")
        self._args = (num_envs, num_players, rules, opponents, max_turns, None, hand_reward)
        self.core = self._core(seed)
        B, D = num_envs, self.core.obs_size
        self.observation_spec = Composite(
            observation=Unbounded(shape=(B, D), dtype=torch.float32),
            action_mask=Binary(n=NUM_ACTIONS, shape=(B, NUM_ACTIONS), dtype=torch.bool),
            shape=(B,))
        self.action_spec = Categorical(NUM_ACTIONS, shape=(B,), dtype=torch.int64)
        self.reward_spec = Unbounded(shape=(B, 1), dtype=torch.float32)
        self.done_spec = Composite(
            done=Categorical(2, shape=(B, 1), dtype=torch.bool),
            terminated=Categorical(2, shape=(B, 1), dtype=torch.bool),
            truncated=Categorical(2, shape=(B, 1), dtype=torch.bool), shape=(B,))
        self._obs: torch.Tensor | None = None  # the learner's next decision in each game

    def _core(self, seed: int) -> BatchLearnerEnv:
        n_envs, n, rules, opponents, max_turns, max_players, hand_reward = self._args
        return BatchLearnerEnv(n_envs, n, rules, seed, opponents, max_turns, max_players,
                               hand_reward)

    def _set_seed(self, seed: int | None) -> None:
        """New games from ``seed``: the core is built again (its generators are the seed's)."""
        self.core = self._core(0 if seed is None else int(seed))
        self._obs = None

    def _mask(self) -> torch.Tensor:
        """The learner's legal actions, also set on the action spec, so that
        ``rand_action`` (and ``check_env_specs``) plays only legal moves."""
        mask = torch.from_numpy(self.core.action_masks())
        self.action_spec.update_mask(mask)
        return mask

    def _current(self) -> TensorDict:
        return TensorDict({"observation": self._obs, "action_mask": self._mask()},
                          batch_size=self.batch_size)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        """Every game's learner view. A full reset deals new games; a partial one (the
        ``"_reset"`` rows of games whose episode ended) gives those rows the next game's
        first view, which the engine already dealt."""
        partial = tensordict is not None and "_reset" in tensordict.keys()
        if self._obs is None or not partial:
            self._obs = torch.from_numpy(self.core.reset())
        return self._current()

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        t = self.core.step(tensordict["action"].numpy())
        self._obs = torch.from_numpy(t.obs)
        last = np.where(t.done[:, None], t.terminal_obs, t.obs)
        done = torch.from_numpy(t.done)[:, None]
        trunc = torch.from_numpy(t.truncated)[:, None]
        return TensorDict({
            "observation": torch.from_numpy(last),
            "action_mask": self._mask(),
            "reward": torch.from_numpy(t.rewards)[:, None],
            "done": done, "terminated": done & ~trunc, "truncated": trunc,
        }, batch_size=self.batch_size)


# -- the trainer ----------------------------------------------------------------------------

def _mlp(inputs: int, out: int, cfg: TorchRLConfig) -> torch.nn.Module:
    """A ReLU MLP in TorchRL's ``MLP`` (an ``nn.Sequential``: Linear at even indices), the
    layout ``torchrl:`` reads back."""
    from torchrl.modules import MLP

    return MLP(in_features=inputs, out_features=out, num_cells=[cfg.hidden] * cfg.layers,
               activation_class=torch.nn.ReLU)


def build(cfg: TorchRLConfig, env: BatchEnvRL) -> tuple[Any, Any, torch.nn.Module,
                                                          torch.nn.Module]:
    """(actor, critic, actor network, critic network) over ``env``'s observation."""
    from tensordict.nn import TensorDictModule
    from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator

    D = env.core.obs_size
    pi, vf = _mlp(D, NUM_ACTIONS, cfg), _mlp(D, 1, cfg)
    actor = ProbabilisticActor(
        TensorDictModule(pi, in_keys=["observation"], out_keys=["logits"]),
        spec=env.action_spec, in_keys={"logits": "logits", "mask": "action_mask"},
        out_keys=["action"], distribution_class=MaskedCategorical, return_log_prob=True)
    critic = ValueOperator(vf, in_keys=["observation"])
    return actor, critic, pi, vf


def export(pi: torch.nn.Module, vf: torch.nn.Module, folder: Path, cfg: TorchRLConfig,
           obs_size: int) -> None:
    """The actor and critic as ``torchrl:`` reads them (:mod:`agents.adapters.torchrl`)."""
    from agents.adapters.torchrl import write_export

    weights = {f"pi.{k}": v for k, v in pi.state_dict().items()}
    weights.update({f"vf.{k}": v for k, v in vf.state_dict().items()})
    write_export(weights, folder, {
        "architecture": {"kind": "mlp", "activation": "relu", "observation_size": obs_size,
                         "hidden": cfg.hidden, "layers": cfg.layers, "actions": NUM_ACTIONS},
        "max_players": cfg.num_players, "rules": cfg.rules, "trainer": "torchrl",
        "input": "batch learner vector (agents.compact.vector_inputs)"})


def warm_start(pi: torch.nn.Module, env: BatchEnvRL, cfg: TorchRLConfig, log: Any
               ) -> dict[str, float]:
    """The imitation warm start (:mod:`training.imitation`): the actor's masked
    cross-entropy against ``cfg.imitate``'s moves, two passes over each new chunk."""
    from ..imitation import imitate, mlp_fit

    opt = torch.optim.Adam(pi.parameters(), lr=cfg.lr)
    step = max(cfg.minibatch_samples // 4, 1)

    fit = mlp_fit(pi, opt, step, -1e9)

    result = imitate([env.core], cfg.imitate or "expert", cfg.imitate_samples, fit, log)
    env._obs = None  # the demonstrations left the games mid-way: PPO deals new ones
    return result


def train(cfg: TorchRLConfig, out: str | Path, resume: bool = False, log: Any = print
          ) -> dict[str, Any]:
    """Train in ``out`` (held for the run: :mod:`training.runlock`); the run's summary."""
    from ..runlock import exclusive_folder

    if resume:
        raise ValueError("the torchrl trainer does not resume: start the run again "
                         "(it takes minutes)")
    with exclusive_folder(out, "training run"):
        return _train(cfg, Path(out), log)


def _train(cfg: TorchRLConfig, out: Path, log: Any) -> dict[str, Any]:
    from torchrl.collectors import Collector
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    from ..evaluate import fair_share_line, write_learning_curve

    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    env = BatchEnvRL(cfg.num_envs, cfg.num_players, cfg.rules, cfg.seed, dict(cfg.opponents),
                     cfg.hand_reward)
    actor, critic, pi, vf = build(cfg, env)
    start = time.perf_counter()
    history: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}

    def check(samples: int) -> None:
        ev = _evaluate(pi, cfg, cfg.eval_games, seed=10_000 + samples)
        ev.update(samples=samples, elapsed_s=time.perf_counter() - start)
        history.append(ev)
        log(f"[eval] {samples:,} samples, {ev['elapsed_s']:.0f} s: " + fair_share_line(ev))

    if cfg.imitate is not None:
        summary["imitation"] = warm_start(pi, env, cfg, log)
        if cfg.eval_every_samples:
            check(0)
    loss_module = ClipPPOLoss(actor, critic, clip_epsilon=cfg.clip, entropy_coeff=cfg.ent_coef,
                              critic_coeff=cfg.vf_coef, normalize_advantage=True)
    loss_module.make_value_estimator(ValueEstimators.GAE, gamma=cfg.gamma, lmbda=cfg.gae_lambda)
    opt = torch.optim.Adam(loss_module.parameters(), lr=cfg.lr, eps=1e-5)
    batch = cfg.num_envs * cfg.rollout_steps
    collector = Collector(env, actor, frames_per_batch=batch, total_frames=-1,
                          auto_register_policy_transforms=False)
    samples, last_eval, ppo_s = 0, 0, 0.0
    try:
        for data in collector:
            t0 = time.perf_counter()
            samples += data.numel()
            _update(loss_module, opt, data, cfg)
            collector.update_policy_weights_()
            ppo_s += time.perf_counter() - t0
            if cfg.eval_every_samples and samples - last_eval >= cfg.eval_every_samples:
                last_eval = samples
                check(samples)
            elapsed = time.perf_counter() - start
            if samples >= cfg.total_samples or (cfg.time_limit_s and elapsed >= cfg.time_limit_s):
                break
    finally:
        collector.shutdown()
    wall = time.perf_counter() - start
    export(pi, vf, out / "policy", cfg, env.core.obs_size)
    summary.update(samples=samples, elapsed_s=wall, samples_per_s=samples / wall,
                   update_s=ppo_s)
    log(f"trained {samples:,} samples in {wall:.0f} s")
    if cfg.final_eval_games:
        from ..evaluate import final_tournament_evaluation

        final = final_tournament_evaluation(
            f"torchrl:{out / 'policy'}", list(cfg.eval_opponents), list(cfg.eval_players),
            cfg.final_eval_games, out / "final_eval", rules=cfg.rules, log=log)
        final.update(samples=samples, elapsed_s=wall)
        summary["final_eval"] = final
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    if history or "final_eval" in summary:
        write_learning_curve(history, out / "learning_curve.png", final=summary.get("final_eval"))
    return summary


def _update(loss_module: Any, opt: torch.optim.Optimizer, data: TensorDictBase,
            cfg: TorchRLConfig) -> None:
    """GAE on the rollout ([num_envs, rollout_steps]), then ``epochs`` passes of
    ``ClipPPOLoss`` over shuffled minibatches."""
    with torch.no_grad():
        loss_module.value_estimator(data, params=loss_module.critic_network_params,
                                    target_params=loss_module.target_critic_network_params)
    flat = data.reshape(-1)
    n = flat.numel()
    for _ in range(cfg.epochs):
        order = torch.randperm(n)
        for i in range(0, n - cfg.minibatch_samples + 1, cfg.minibatch_samples):
            part = flat[order[i:i + cfg.minibatch_samples]]
            losses = loss_module(part)
            loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(loss_module.parameters(), cfg.max_grad_norm)
            opt.step()


def _evaluate(pi: torch.nn.Module, cfg: TorchRLConfig, games: int, seed: int) -> dict[str, Any]:
    """The live actor as ``torchrl:`` plays it, against each evaluation field."""
    from agents.adapters.torchrl import TorchRLAgent, policy_of

    from ..config import make_rules
    from ..evaluate import evaluate_agent

    weights = {f"pi.{k}": v.detach().numpy().copy() for k, v in pi.state_dict().items()}
    policy = policy_of(weights, cfg.layers)
    return evaluate_agent(lambda s: TorchRLAgent(policy, cfg.num_players, seed=s),
                          make_rules(cfg.rules), list(cfg.eval_opponents), list(cfg.eval_players),
                          games, seed)
