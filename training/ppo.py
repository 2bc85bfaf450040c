"""Native PPO for Scat: one shared policy plays every seat of many games at once.

Read it top to bottom (CleanRL style): the privileged critic, GAE, the PPO update,
checkpoints, then the training loop with logging, evaluation and the final report. The
hyper-parameters are :class:`training.config.PPOConfig`; the games that produce the samples
are :mod:`training.rollout` (many games in lockstep, one batched forward pass per step).

Two options, both off by default:

- ``advice``: the policy's input ends with the expert's move and the card-counting numbers
  behind it (:class:`~agents.neural.encoding.PaddedEncoder`), so the network starts from the
  expert's judgement and learns where to play otherwise.
- ``privileged_critic``: the values for GAE come from a separate :class:`Critic` that also
  sees every hidden hand and the stock. Training only: the policy never sees those cards and
  the critic is never written to policy files.

Everything the loop needs to continue (network, optimizer, RNG states, counters, the
running games and pending trajectories) is in the checkpoint, so ``--resume`` continues
exactly where the last checkpoint was written.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.neural.encoding import policy_observation_size
from agents.neural.forward import NumpyPolicy
from scat_env import Rules
from scat_env.engine import short_repr
from scat_env.observation import extra_pieces

from .config import PPOConfig, make_rules
from .policy_net import (
    CHECKPOINT_KIND,
    PolicyNet,
    atomic_save,
    export_policy,
    layer_init,
    load_file,
    policy_payload,
    remove_stale_temps,
    warm_start,
)
from .progress import BudgetBar
from .rollout import Runner, check_handoff, privileged_size
from .runlock import exclusive_folder

Log = Callable[[str], Any]

#: The policy file a run exports (``ppo:RUN/policy.npz`` plays it; numpy only, no critic).
POLICY_FILE = "policy.npz"


# == 1. The privileged critic ===============================================================
class Critic(nn.Module):
    """Value network for ``privileged_critic``: it reads the policy's observation plus
    :func:`~training.rollout.encode_privileged` (every hidden hand, the stock).

    Why: a seat's outcome in Scat hangs on cards it cannot see (will my knock leave me
    lowest?). A critic that sees them predicts returns with far less noise, so the
    advantages that drive the policy are less noisy too. The policy never sees them: it is
    a separate network, used only for GAE during training and never exported to policy
    files (the asymmetric actor-critic of Pinto et al. 2017, as used for Mahjong/DouDizhu).
    """

    def __init__(self, obs_size: int, priv_size: int, hidden: int, layers: int) -> None:
        super().__init__()
        mods: list[nn.Module] = []
        size = obs_size + priv_size
        for _ in range(layers):
            mods += [layer_init(nn.Linear(size, hidden)), nn.ReLU()]
            size = hidden
        self.trunk = nn.Sequential(*mods)
        self.v = layer_init(nn.Linear(hidden, 1), std=1.0)

    def forward(self, obs: torch.Tensor, priv: torch.Tensor) -> torch.Tensor:
        return self.v(self.trunk(torch.cat([obs, priv], dim=1))).squeeze(-1)


# == 2. GAE =================================================================================
def compute_gae(runner: Runner, gamma: float, gae_lambda: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Advantages and returns per trajectory (a seat's own next decision is its "next
    state"); ``use`` marks the samples that train now (not the bootstrap samples held back)."""
    size = len(runner.actions)
    adv = np.zeros(size, dtype=np.float32)
    ret = np.zeros(size, dtype=np.float32)
    use = np.zeros(size, dtype=bool)
    values, rewards, dones = runner.values, runner.rewards, runner.dones
    for traj, bootstrap in runner.trajectories():
        body = traj if bootstrap is None else traj[:-1]
        next_value = 0.0 if bootstrap is None else values[bootstrap]
        gae = 0.0
        for k in reversed(body):
            nonterminal = 0.0 if dones[k] else 1.0
            delta = rewards[k] + gamma * next_value * nonterminal - values[k]
            gae = delta + gamma * gae_lambda * nonterminal * gae
            adv[k] = gae
            ret[k] = gae + values[k]
            next_value = values[k]
            use[k] = True
    return adv, ret, use


# == 3. The PPO update ======================================================================
def ppo_update(net: PolicyNet, opt: torch.optim.Optimizer, batch: dict[str, np.ndarray],
               cfg: PPOConfig, gen: torch.Generator, critic: Critic | None = None,
               value_only: bool = False) -> dict[str, float]:
    """Clipped PPO epochs over the batch; with a privileged ``critic`` the value loss trains
    it (on the hidden cards too) instead of the policy network's own value head. With
    ``value_only`` (critic warm-up) only the value loss is minimised."""
    obs = torch.from_numpy(batch["obs"])
    priv = torch.from_numpy(batch["priv"]) if critic is not None else None
    params = [p for group in opt.param_groups for p in group["params"]]  # net (+ critic)
    mask = torch.from_numpy(batch["mask"])
    actions = torch.from_numpy(batch["actions"])
    old_logp = torch.from_numpy(batch["logps"])
    adv_all = torch.from_numpy(batch["adv"])
    # Normalised over the whole batch, not per minibatch: a tail minibatch of one sample
    # would otherwise divide by a NaN standard deviation.
    adv_all = (adv_all - adv_all.mean()) / (adv_all.std() + 1e-8) if len(adv_all) > 1 else adv_all
    ret = torch.from_numpy(batch["ret"])
    size = len(actions)
    stats = {"pg_loss": 0.0, "v_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clipfrac": 0.0}
    count = 0
    for _epoch in range(cfg.epochs):
        perm = torch.randperm(size, generator=gen)
        kl_epoch = []
        for start in range(0, size, cfg.minibatch_samples):
            mb = perm[start:start + cfg.minibatch_samples]
            logits, value = net(obs[mb], mask[mb])
            if critic is not None:
                value = critic(obs[mb], priv[mb])  # type: ignore[index]
            logp_all = torch.log_softmax(logits, dim=-1)
            logp = logp_all.gather(1, actions[mb, None]).squeeze(1)
            probs = logp_all.exp()
            entropy = -(probs * logp_all.masked_fill(~mask[mb], 0.0)).sum(-1).mean()
            ratio = (logp - old_logp[mb]).exp()
            adv = adv_all[mb]
            pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()
            v_loss = 0.5 * ((value - ret[mb]) ** 2).mean()
            if value_only:
                loss = cfg.vf_coef * v_loss
            else:
                loss = pg_loss - cfg.ent_coef * entropy + cfg.vf_coef * v_loss
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            opt.step()
            with torch.no_grad():
                log_ratio = logp - old_logp[mb]
                kl = ((ratio - 1) - log_ratio).mean().item()
                stats["clipfrac"] += ((ratio - 1).abs() > cfg.clip).float().mean().item()
            kl_epoch.append(kl)
            stats["pg_loss"] += pg_loss.item()
            stats["v_loss"] += v_loss.item()
            stats["entropy"] += entropy.item()
            stats["approx_kl"] += kl
            count += 1
        if cfg.target_kl is not None and np.mean(kl_epoch) > cfg.target_kl:
            break
    return {k: v / max(count, 1) for k, v in stats.items()}


# == 4. The learner and its checkpoints =====================================================
@dataclasses.dataclass
class Learner:
    """What an update changes: the policy network, the optional critic, the optimizer and
    the minibatch generator."""

    net: PolicyNet
    critic: Critic | None
    opt: torch.optim.Optimizer
    gen: torch.Generator


def build_learner(cfg: PPOConfig, warm: bool) -> Learner:
    """A fresh, seeded learner (``warm``: started from ``cfg.init_from`` when it names a file)."""
    torch.manual_seed(cfg.seed)  # before the network exists: its init must be seeded too
    extra = extra_pieces(make_rules(cfg.rules))  # the family's pieces (points, golf slots)
    net = PolicyNet(policy_observation_size(cfg.max_players, cfg.advice, extra), cfg.hidden,
                    cfg.layers, cfg.max_players, advice=cfg.advice, advice_gain=cfg.advice_gain,
                    extra=tuple(p.name for p in extra))
    if cfg.init_from and warm:
        warm_start(net, load_file(cfg.init_from), cfg.init_from, seed=cfg.seed)
    critic = None
    if cfg.privileged_critic:
        critic = Critic(net.obs_size, privileged_size(cfg.max_players), cfg.hidden, cfg.layers)
    params = list(net.parameters()) + (list(critic.parameters()) if critic is not None else [])
    opt = torch.optim.Adam(params, lr=cfg.lr, eps=1e-5)
    return Learner(net, critic, opt, torch.Generator().manual_seed(cfg.seed))


def save_checkpoint(path: Path, learner: Learner, runner: Runner, cfg: PPOConfig, rules: Rules,
                    state: dict[str, Any]) -> None:
    """Write ``checkpoint.pt`` atomically: tensors and plain values only (the rollout state
    as :meth:`Runner.state_dict`), so :func:`load_checkpoint` reads it with
    ``torch.load(weights_only=True)`` and resuming runs no code from the file."""
    data = policy_payload(learner.net, cfg.max_players, rules, dataclasses.asdict(cfg),
                          state.get("last_eval"))
    data.update({
        "kind": CHECKPOINT_KIND,
        "optimizer": learner.opt.state_dict(),
        "counters": {k: state[k] for k in ("update", "samples", "env_steps", "elapsed_s")},
        "history": state["history"],
        "torch_rng": torch.get_rng_state(),
        "gen_rng": learner.gen.get_state(),
        "rollout": runner.state_dict(),
    })
    if learner.critic is not None:
        data["critic"] = {k: v.detach().clone() for k, v in learner.critic.state_dict().items()}
    atomic_save(data, path)


def load_checkpoint(path: Path, cfg: PPOConfig) -> dict[str, Any]:
    """Read ``path`` (``torch.load(weights_only=True)``: tensors and plain values, nothing
    that runs) and check that it belongs to a run of ``cfg``'s network. The rollout state is
    checked field by field when the runner takes it (:func:`resume_from`)."""
    data = load_file(path, kinds=(CHECKPOINT_KIND,))
    saved = data.get("config")
    if not isinstance(saved, dict):
        raise ValueError(f"{str(path)!r}: the checkpoint holds no config")
    # Options added later default to off in checkpoints written before them.
    defaults = {"advice": False, "privileged_critic": False}
    for key in ("max_players", "hidden", "layers", "advice", "privileged_critic"):
        if saved.get(key, defaults.get(key)) != getattr(cfg, key):
            raise ValueError(f"{str(path)!r} does not match the config: {key} is "
                             f"{short_repr(saved.get(key))} in the checkpoint, "
                             f"{getattr(cfg, key)!r} in the config")
    if "rollout" not in data:
        old = " (an older checkpoint whose rollout state is a pickle, which is never loaded)"
        raise ValueError(f"{str(path)!r} holds no rollout state{old if 'runner' in data else ''}: "
                         "it cannot be resumed; start a new run (init_from can start from its "
                         "policy)")
    for key, kind in (("counters", dict), ("history", list), ("optimizer", dict),
                      ("torch_rng", torch.Tensor), ("gen_rng", torch.Tensor)):
        if not isinstance(data.get(key), kind):
            raise ValueError(f"{str(path)!r}: bad checkpoint field {key!r} "
                             f"(expected a {kind.__name__})")
    if cfg.privileged_critic and not isinstance(data.get("critic"), dict):
        raise ValueError(f"{str(path)!r}: bad checkpoint field 'critic' (expected a dict)")
    return data


def _check_counters(counters: dict[str, Any], where: str) -> dict[str, Any]:
    """The step counters of a checkpoint, range-checked."""
    out: dict[str, Any] = {}
    for key in ("update", "samples", "env_steps"):
        value = counters.get(key)
        if type(value) is not int or not 0 <= value < 2**62:
            raise ValueError(f"{where}: bad checkpoint field 'counters.{key}': "
                             f"{short_repr(value)}")
        out[key] = value
    elapsed = counters.get("elapsed_s")
    if type(elapsed) not in (int, float) or not 0 <= elapsed < 1e12:
        raise ValueError(f"{where}: bad checkpoint field 'counters.elapsed_s': "
                         f"{short_repr(elapsed)}")
    out["elapsed_s"] = float(elapsed)
    return out


def _check_evaluation(ev: Any, what: str) -> None:
    """One in-training evaluation as the curve and the report read it: ``win_rate`` per
    ``OPPONENT_xN`` setting in [0, 1], ``ci95`` pairs, ``samples``; else one ValueError."""
    ok = isinstance(ev, dict) and isinstance(ev.get("win_rate"), dict) and isinstance(
        ev.get("ci95", {}), dict) and type(ev.get("samples", 0)) is int
    for key, rate in (ev["win_rate"].items() if ok else ()):
        n = key.rpartition("_x")[2] if isinstance(key, str) else ""
        ok = ok and n.isdigit() and 2 <= int(n) <= 10 and type(rate) in (int, float) and (
            0 <= rate <= 1)
    for pair in (ev.get("ci95", {}).values() if ok else ()):
        ok = ok and isinstance(pair, list | tuple) and len(pair) == 2 and all(
            type(x) in (int, float) and math.isfinite(x) for x in pair)
    if not ok:
        raise ValueError(f"bad checkpoint field {what!r} (expected an evaluation: win_rate per "
                         "OPPONENT_xN in [0, 1], ci95 pairs, samples)")


def _check_optimizer_state(learner: Learner) -> None:
    """Adam's moments must have their parameter's shape and dtype: ``load_state_dict`` does
    not check, and a wrong one would fail at the first update, hours into a resumed run."""
    for group in learner.opt.param_groups:
        for i, p in enumerate(group["params"]):
            for key, moment in learner.opt.state.get(p, {}).items():
                if key == "step":
                    ok = isinstance(moment, torch.Tensor) and moment.numel() == 1 and bool(
                        torch.isfinite(moment).all()) and float(moment) >= 0
                else:
                    ok = (isinstance(moment, torch.Tensor) and moment.shape == p.shape
                          and moment.dtype == p.dtype and bool(torch.isfinite(moment).all()))
                if not ok:
                    raise ValueError(f"optimizer state of parameter {i}: {key!r} does not fit")


def _restore_learner(learner: Learner, data: dict[str, Any], where: str) -> None:
    """Weights, optimizer and generators from a checkpoint; a part that does not fit is one
    ``ValueError`` naming it."""
    parts: list[tuple[str, Callable[[], Any]]] = [
        ("state_dict", lambda: learner.net.load_state_dict(data["state_dict"])),
        ("optimizer", lambda: learner.opt.load_state_dict(data["optimizer"])),
        ("torch_rng", lambda: torch.set_rng_state(data["torch_rng"])),
        ("gen_rng", lambda: learner.gen.set_state(data["gen_rng"])),
    ]
    if learner.critic is not None:
        parts.insert(1, ("critic", lambda: learner.critic.load_state_dict(data["critic"])))  # type: ignore[union-attr]
    parts.insert(2, ("optimizer", lambda: _check_optimizer_state(learner)))
    for name, load in parts:
        try:
            load()
        except (RuntimeError, ValueError, KeyError, TypeError, IndexError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ValueError(f"{where}: bad checkpoint field {name!r}: {first[:200]}") from None


def resume_from(path: Path, cfg: PPOConfig, learner: Learner, rules: Rules, log: Log
                ) -> tuple[Runner, dict[str, Any]]:
    """Load the checkpoint at ``path`` into ``learner``; return its runner and counters.
    Everything is checked before the run continues; a bad field is one ``ValueError``."""
    if not path.exists():
        raise ValueError(f"--resume: no checkpoint at {str(path)!r}")
    where = repr(str(path))
    data = load_checkpoint(path, cfg)
    saved_rules = {f.name: getattr(rules, f.name) for f in dataclasses.fields(rules)}
    if data.get("rules") != saved_rules:
        raise ValueError(f"{where} was written under other rules than the config's "
                         f"{cfg.rules!r}")
    counters = _check_counters(data["counters"], where)
    if len(data["history"]) > 1_000_000:
        raise ValueError(f"{where}: bad checkpoint field 'history' (too long)")
    try:
        for i, ev in enumerate(data["history"]):
            _check_evaluation(ev, f"history[{i}]")
        if data.get("metrics"):
            _check_evaluation(data["metrics"], "metrics")
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    check_handoff(cfg)
    # A runner under the config's budget fields (total_samples, time limit may be raised on
    # resume), holding the saved games, players, samples and generators.
    runner = Runner(cfg, rules, cfg.seed)
    try:
        runner.load_state_dict(data["rollout"], learner.net.state_dict())
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    _restore_learner(learner, data, where)
    for group in learner.opt.param_groups:  # the config's lr wins (a resume may change it)
        group["lr"] = cfg.lr
    state = {**new_state(), **counters, "history": data["history"],
             "last_eval": data.get("metrics") or None}
    log(f"resumed {path} at update {state['update']}, {state['samples']:,} samples")
    return runner, state


def new_state() -> dict[str, Any]:
    """The counters of a run that has not trained yet (saved in every checkpoint)."""
    return {"update": 0, "samples": 0, "env_steps": 0, "elapsed_s": 0.0, "history": [],
            "last_eval": None}


def export(out: Path, learner: Learner, cfg: PPOConfig, rules: Rules,
           metrics: dict[str, Any] | None) -> None:
    """Write ``out/policy.npz``: the small file ``ppo:PATH`` plays (no critic, no optimizer)."""
    export_policy(out / POLICY_FILE, policy_payload(learner.net, cfg.max_players, rules,
                                                    dataclasses.asdict(cfg), metrics))


def final_evaluation(out: Path, cfg: PPOConfig, log: Log = print) -> dict[str, Any]:
    """Evaluate the exported ``out/policy.npz`` with the duplicate-deal tournament harness:
    every deal in all seat rotations, CIs clustered by deal, so the final figures compare
    with ``python -m training.evaluate`` (the in-training evaluation is a quicker, noisier
    check)."""
    from .evaluate import final_tournament_evaluation

    return final_tournament_evaluation(
        f"ppo:{out / POLICY_FILE}", list(cfg.eval_opponents), list(cfg.eval_players),
        cfg.final_eval_games, out / "final_eval", workers=cfg.final_eval_workers,
        rules=cfg.rules, log=log)


# == 5. The training loop ===================================================================
def hand_reward_now(cfg: PPOConfig, samples: int) -> float:
    """``hand_reward``, decayed linearly to 0 over ``hand_reward_decay_samples`` if set."""
    if not cfg.hand_reward_decay_samples:
        return cfg.hand_reward
    return cfg.hand_reward * max(0.0, 1.0 - samples / cfg.hand_reward_decay_samples)


def log_update(writer: Any, runner: Runner, cfg: PPOConfig, step: int, stats: dict[str, float],
               hand_reward: float, timing: dict[str, float]) -> None:
    """One update's losses, speeds and training-table win shares to TensorBoard."""
    for k, v in stats.items():
        writer.add_scalar(f"loss/{k}", v, step)
    for k, v in timing.items():
        writer.add_scalar(f"perf/{k}", v, step)
    writer.add_scalar("train/hand_reward", hand_reward, step)
    writer.add_scalar("train/games", runner.games_done, step)
    for n in cfg.player_counts:
        won = [x for m, x in runner.wins if m == n]
        if won:
            writer.add_scalar(f"train/win_share_x{n}", float(np.mean(won)) * n, step)


def evaluate_now(learner: Learner, cfg: PPOConfig, rules: Rules, seed: int) -> dict[str, Any]:
    """The quick in-training evaluation of the current policy (argmax play, seats rotated)."""
    from .evaluate import evaluate_policy

    pol = NumpyPolicy(learner.net.state_dict(), cfg.layers, cfg.max_players, learner.net.extra)
    return evaluate_policy(pol, cfg.max_players, rules, cfg.eval_opponents, cfg.eval_players,
                           cfg.eval_games, seed=seed)


def train(cfg: PPOConfig, out_dir: str | Path, resume: bool = False,
          log: Log = print) -> dict[str, Any]:
    """Train (or continue) a run in ``out_dir``; returns the final summary. The folder is
    held for the whole run: a second run on it is refused (:mod:`training.runlock`)."""
    with exclusive_folder(out_dir, "training run"):
        return _train(cfg, out_dir, resume, log)


def _train(cfg: PPOConfig, out_dir: str | Path, resume: bool, log: Log) -> dict[str, Any]:
    from torch.utils.tensorboard import SummaryWriter

    from .evaluate import fair_share_line

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ckpt_path = out / "checkpoint.pt"
    # A run killed mid-write leaves its temp file; the folder is ours (locked), so it goes.
    remove_stale_temps(out, ("checkpoint.pt", POLICY_FILE))
    torch.set_num_threads(cfg.torch_threads)
    rules = make_rules(cfg.rules)
    learner = build_learner(cfg, warm=not resume)
    if resume:
        runner, state = resume_from(ckpt_path, cfg, learner, rules, log)
    else:
        runner, state = Runner(cfg, rules, cfg.seed), new_state()
        (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))
    writer = SummaryWriter(str(out / "tb"))
    bar = BudgetBar(cfg.total_samples, cfg.time_limit_s, samples=state["samples"],
                    elapsed_s=state["elapsed_s"], enabled=cfg.progress)
    say = bar.above(log)
    t_start = time.perf_counter()
    elapsed0, samples0 = state["elapsed_s"], state["samples"]

    def elapsed() -> float:
        return elapsed0 + time.perf_counter() - t_start

    while state["samples"] < cfg.total_samples and (
            cfg.time_limit_s is None or elapsed() < cfg.time_limit_s):
        # -- collect a rollout, then update on it
        t0 = time.perf_counter()
        if cfg.anneal_lr:
            frac = state["samples"] / cfg.total_samples
            learner.opt.param_groups[0]["lr"] = cfg.lr * max(1.0 - frac, 0.05)
        hand_reward = hand_reward_now(cfg, state["samples"])
        env0 = runner.env_steps
        runner.collect(learner.net, hand_reward, learner.critic)
        batch = runner.take_batch(*compute_gae(runner, cfg.gamma, cfg.gae_lambda))
        t1 = time.perf_counter()
        stats = ppo_update(learner.net, learner.opt, batch, cfg, learner.gen, learner.critic,
                           value_only=state["update"] < cfg.critic_warmup_updates)
        t2 = time.perf_counter()
        # -- count, snapshot, log
        state["update"] += 1
        u, new = state["update"], len(batch["actions"])
        state["samples"] += new
        state["env_steps"] = runner.env_steps
        if u % cfg.snapshot_every_updates == 0:
            runner.add_snapshot(learner.net.state_dict())
        speed = {"samples_per_s": new / (t2 - t0),
                 "env_steps_per_s": (runner.env_steps - env0) / (t2 - t0),
                 "collect_s": t1 - t0, "update_s": t2 - t1}
        log_update(writer, runner, cfg, state["samples"], stats, hand_reward, speed)
        bar.update(state["samples"], elapsed(), speed=f"{speed['samples_per_s']:,.0f}/s",
                   entropy=f"{stats['entropy']:.2f}", kl=f"{stats['approx_kl']:.3f}")
        state["elapsed_s"] = elapsed()
        # -- evaluate, checkpoint
        if cfg.eval_every_updates and u % cfg.eval_every_updates == 0:
            ev = evaluate_now(learner, cfg, rules, seed=10_000 + u)
            ev.update(samples=state["samples"], env_steps=runner.env_steps, elapsed_s=elapsed())
            state["history"].append(ev)
            state["last_eval"] = ev
            for key, val in ev["win_rate"].items():
                writer.add_scalar(f"eval/{key}", val, state["samples"])
            say(f"[eval] update {u}, {state['samples']:,} samples, {elapsed():.0f} s: "
                + fair_share_line(ev))
            state["elapsed_s"] = elapsed()
        if u % cfg.checkpoint_every_updates == 0:
            save_checkpoint(ckpt_path, learner, runner, cfg, rules, state)
            export(out, learner, cfg, rules, state["last_eval"])
    bar.close()
    wall = time.perf_counter() - t_start
    save_checkpoint(ckpt_path, learner, runner, cfg, rules, state)
    writer.close()
    summary: dict[str, Any] = {
        "samples": state["samples"], "env_steps": runner.env_steps, "updates": state["update"],
        "elapsed_s": state["elapsed_s"],
        "samples_per_s_since_start": (state["samples"] - samples0) / wall if wall > 0 else None,
    }
    return finish(out, cfg, learner, rules, state, summary, log)


def finish(out: Path, cfg: PPOConfig, learner: Learner, rules: Rules, state: dict[str, Any],
           summary: dict[str, Any], log: Log) -> dict[str, Any]:
    """Export the policy, run the final evaluation, write ``summary.json`` and the learning
    curve; returns the summary."""
    from .evaluate import write_learning_curve

    export(out, learner, cfg, rules, state["last_eval"])
    if cfg.final_eval_games:
        final = final_evaluation(out, cfg, log)
        final.update(samples=state["samples"], env_steps=summary["env_steps"],
                     elapsed_s=state["elapsed_s"])
        summary["final_eval"] = final
        state["last_eval"] = final
        export(out, learner, cfg, rules, final)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    if state["history"] or "final_eval" in summary:
        write_learning_curve(state["history"], out / "learning_curve.png",
                             final=summary.get("final_eval"))
    return summary
