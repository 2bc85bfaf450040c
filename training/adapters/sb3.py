"""The standard-library path: sb3-contrib's MaskablePPO on :class:`ScatSingleAgentEnv`.

Kept deliberately plain so it doubles as a reference point for the batched trainer
(:mod:`training.batch_ppo`), which is many times faster because the batched engine steps
thousands of games at once. What this path adds: the SB3 ecosystem (callbacks, zoo tools),
and the padded observation of every family of rules (calls, golf, points races), which the
batched trainer's network does not read.

Self-play: every ``snapshot_every_samples`` samples the current model is saved under
``OUT/snapshots/`` and added to every env's opponent pool as ``sb3:PATH`` with weight
``snapshot_weight`` (so the learner also meets frozen copies of itself).

Resume: ``--resume`` reloads ``OUT/checkpoint.zip`` (weights, optimizer, step counter) and
``OUT/state.json`` (evaluation history, snapshots); the envs restart with fresh games, so
an SB3 resume is not bit-exact. The zip is not read by SB3's
loader (which unpickles objects from it): :func:`agents.adapters.sb3.read_sb3_zip` reads its weights
and optimizer with ``torch.load(weights_only=True)`` into a model built from the config.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..config import SB3Config, make_rules


def make_vec_env(cfg: SB3Config) -> Any:
    """The config's ``VecEnv``: one :class:`training.batch_vec_env.BatchVecEnv` for
    ``vec_env: batch``, else ``n_envs`` single-agent envs in processes or in this one."""
    if cfg.vec_env == "batch":
        from ..batch_vec_env import BatchVecEnv

        return BatchVecEnv(cfg.n_envs, cfg.player_counts, cfg.rules, cfg.seed,
                           dict(cfg.opponents), max_players=cfg.max_players,
                           hand_reward=cfg.hand_reward)
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from ..single_agent import ScatSingleAgentEnv

    def factory(i: int) -> Any:
        def make() -> ScatSingleAgentEnv:
            env = ScatSingleAgentEnv(cfg.player_counts, cfg.rules, dict(cfg.opponents),
                                     max_players=cfg.max_players, hand_reward=cfg.hand_reward,
                                     shaping=cfg.shaping)
            env.reset(seed=cfg.seed * 1000 + i)
            return env
        return make

    if cfg.vec_env == "subproc":
        # fork: works from any script (no __main__ guard needed, unlike forkserver)
        return SubprocVecEnv([factory(i) for i in range(cfg.n_envs)], start_method="fork")
    return DummyVecEnv([factory(i) for i in range(cfg.n_envs)])


def imitate_teacher(model: Any, env: Any, cfg: SB3Config, log: Any) -> dict[str, float]:
    """The imitation warm start (:mod:`training.imitation`): the policy's masked
    cross-entropy against ``cfg.imitate``'s moves, two passes over each new chunk in
    minibatches of a quarter of ``minibatch_samples``, with the model's own optimizer."""
    import torch

    from ..imitation import imitate

    policy = model.policy
    step = max(cfg.minibatch_samples // 4, 1)

    def fit(obs: np.ndarray, mask: np.ndarray, act: np.ndarray) -> tuple[float, float]:
        o, a = torch.as_tensor(obs), torch.as_tensor(act)
        with torch.no_grad():
            best = policy.get_distribution(o, action_masks=mask).distribution.logits.argmax(1)
            agree = float((best == a).float().mean())
        loss = torch.zeros(())
        for _ in range(2):
            order = torch.randperm(len(a))
            for i in range(0, len(a), step):
                rows = order[i:i + step]
                dist = policy.get_distribution(o[rows], action_masks=mask[rows.numpy()])
                loss = -dist.log_prob(a[rows]).mean()
                policy.optimizer.zero_grad()
                loss.backward()
                policy.optimizer.step()
        return float(loss.detach()), agree

    return imitate(env.cores, cfg.imitate, cfg.imitate_samples, fit, log)


def warm_start(model: Any, env: Any, cfg: SB3Config, state: dict[str, Any],
               evaluate: Any, log: Any, t_start: float) -> None:
    """The imitation warm start of a new run, recorded in ``state``; with in-training
    evaluations on, its result is the learning curve's first point (samples 0)."""
    from ..evaluate import fair_share_line

    state["imitation"] = imitate_teacher(model, env, cfg, log)
    if cfg.eval_every_samples:
        ev = evaluate(cfg.eval_games, seed=10_000)
        ev.update(samples=0, elapsed_s=time.perf_counter() - t_start)
        state["history"].append(ev)
        log(f"[eval] after imitating {cfg.imitate}: " + fair_share_line(ev))


def read_checkpoint(path: Path, cfg: SB3Config) -> Any:
    """The weights, optimizer and counters of an SB3 checkpoint, read without SB3's loader
    (:func:`agents.adapters.sb3.read_sb3_zip`), and checked against the config's network."""
    from agents.adapters.sb3 import read_sb3_zip

    saved = read_sb3_zip(path, optimizer=True)
    batched = cfg.vec_env == "batch"
    if saved.compact != batched:
        reads = "BatchVecEnv's vector" if saved.compact else "the single-agent env's observation"
        raise ValueError(f"{str(path)!r} was trained on {reads}, not this config's "
                         f"(vec_env: {cfg.vec_env}): it plays as sb3:PATH but does not "
                         "resume here")
    want = [cfg.hidden] * cfg.layers
    if (saved.pi_arch, saved.vf_arch, saved.max_players) != (want, want, cfg.max_players):
        raise ValueError(f"{str(path)!r} does not match the config: its network is "
                         f"{saved.pi_arch} for {saved.max_players} players, the config's "
                         f"{want} for {cfg.max_players}")
    return saved


def restore(model: Any, saved: Any, path: Path) -> None:
    """Put a checkpoint's weights, optimizer state and counters into a model built from
    the config; a part that does not fit is one ``ValueError``."""
    for name, load in (("policy.pth", lambda: model.policy.load_state_dict(saved.weights)),
                       ("policy.optimizer.pth",
                        lambda: model.policy.optimizer.load_state_dict(saved.optimizer))):
        try:
            load()
        except (RuntimeError, ValueError, KeyError, TypeError, IndexError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
            raise ValueError(f"{str(path)!r}: {name} does not fit the model: {first}") from None
    model.num_timesteps = saved.num_timesteps
    model._n_updates = saved.n_updates


def remove_stale_temps(folder: str | Path, names: tuple[str, ...]) -> list[str]:
    """Delete the temp files that a killed writer left beside ``names`` in ``folder``
    (``NAME.<random>.tmp...``, as :func:`write_atomically` names them); returns what was
    removed. Only for a folder this process holds (:func:`training.runlock.exclusive_folder`):
    no other writer can be mid-write there."""
    removed = []
    for name in names:
        for path in Path(folder).glob(f"{name}.*.tmp*"):
            if path.is_file():
                path.unlink()
                removed.append(path.name)
    return removed


def read_state(path: Path) -> dict[str, Any]:
    """``state.json`` (evaluation history, snapshot paths, elapsed seconds), checked."""
    try:
        state = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ValueError(f"{str(path)!r} is not a readable state file") from None
    ok = (isinstance(state, dict) and isinstance(state.get("history"), list)
          and isinstance(state.get("snapshots"), list)
          and all(isinstance(s, str) for s in state["snapshots"])
          and type(state.get("elapsed_s")) in (int, float) and state["elapsed_s"] >= 0)
    if not ok:
        raise ValueError(f"{str(path)!r}: expected history, snapshots and elapsed_s")
    return state


def write_atomically(path: Path, write: Any) -> None:
    """``write(tmp)`` to a unique temp name beside ``path``, then ``os.replace``: a failed
    write (a full disk, a read-only folder) leaves the previous file intact, no temp file
    behind, and is one ``ValueError`` line."""
    import tempfile

    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp" + path.suffix,
                                   dir=path.parent)
        os.close(fd)
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise ValueError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def train(cfg: SB3Config, out_dir: str | Path, resume: bool = False, log: Any = print) -> dict[str, Any]:
    """Train (or continue) an SB3 run in ``out_dir``; returns the final summary. The folder
    is held for the whole run (:mod:`training.runlock`)."""
    from ..runlock import exclusive_folder

    with exclusive_folder(out_dir, "training run"):
        return _train(cfg, out_dir, resume, log)


def _train(cfg: SB3Config, out_dir: str | Path, resume: bool, log: Any) -> dict[str, Any]:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.adapters.padded import PolicyAgent
    from agents.adapters.sb3 import SB3CompactAgent, SB3Policy

    from ..evaluate import evaluate_agent, fair_share_line, write_learning_curve
    from ..progress import BudgetBar

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # A run killed mid-write leaves its temp file; the folder is ours (locked), so it goes.
    remove_stale_temps(out, ("checkpoint.zip", "state.json"))
    torch.set_num_threads(cfg.torch_threads)
    rules = make_rules(cfg.rules)
    env = make_vec_env(cfg)
    ckpt = out / "checkpoint.zip"
    state_path = out / "state.json"
    state: dict[str, Any] = {"history": [], "snapshots": [], "elapsed_s": 0.0}
    if resume and not ckpt.exists():
        raise ValueError(f"--resume: no checkpoint at {str(ckpt)!r}")
    saved = read_checkpoint(ckpt, cfg) if resume else None
    model = MaskablePPO(
        "MlpPolicy", env, learning_rate=cfg.lr, n_steps=cfg.rollout_samples_per_env,
        batch_size=cfg.minibatch_samples, n_epochs=cfg.epochs, gamma=cfg.gamma,
        gae_lambda=cfg.gae_lambda, clip_range=cfg.clip, ent_coef=cfg.ent_coef,
        seed=cfg.seed, device="cpu", verbose=0,
        policy_kwargs={"net_arch": [cfg.hidden] * cfg.layers},
        tensorboard_log=str(out / "tb"))
    t_start = time.perf_counter()  # the time limit counts the warm start too
    if saved is not None:
        restore(model, saved, ckpt)
        if state_path.exists():
            state = read_state(state_path)
        for snap in state["snapshots"]:
            env.env_method("add_opponent", f"sb3:{snap}", cfg.snapshot_weight)
        log(f"resumed {ckpt} at {model.num_timesteps:,} samples")
    else:
        (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))

    def evaluate(games: int, seed: int) -> dict[str, Any]:
        batched = cfg.vec_env == "batch"
        pol = SB3Policy(model.policy, compact=batched)
        kind = SB3CompactAgent if batched else PolicyAgent
        return evaluate_agent(lambda s: kind(pol, cfg.max_players, seed=s), rules,
                              cfg.eval_opponents, cfg.eval_players, games, seed)

    if saved is None and cfg.imitate is not None:
        warm_start(model, env, cfg, state, evaluate, log, t_start)

    def save() -> None:
        write_atomically(ckpt, model.save)
        write_atomically(state_path, lambda tmp: Path(tmp).write_text(json.dumps(state, indent=2)))

    elapsed0 = state["elapsed_s"]
    bar = BudgetBar(cfg.total_samples, cfg.time_limit_s, samples=model.num_timesteps,
                    elapsed_s=elapsed0, enabled=cfg.progress)
    say = bar.above(log)

    class Periodic(BaseCallback):
        """Evaluation, checkpoints, snapshots, the progress bar and the time limit, on
        sample schedules."""

        def __init__(self) -> None:
            super().__init__()
            self.last = {"eval": model.num_timesteps, "ckpt": model.num_timesteps,
                         "snap": model.num_timesteps, "bar": model.num_timesteps}

        def _due(self, key: str, every: int) -> bool:
            if every and self.num_timesteps - self.last[key] >= every:
                self.last[key] = self.num_timesteps
                return True
            return False

        def _on_step(self) -> bool:
            state["elapsed_s"] = elapsed0 + time.perf_counter() - t_start
            if self._due("bar", 1024):
                bar.update(self.num_timesteps, state["elapsed_s"])
            if self._due("snap", cfg.snapshot_every_samples):
                path = out / "snapshots" / f"step{self.num_timesteps}.zip"
                path.parent.mkdir(exist_ok=True)
                model.save(path)
                state["snapshots"].append(str(path))
                env.env_method("add_opponent", f"sb3:{path}", cfg.snapshot_weight)
            if self._due("eval", cfg.eval_every_samples):
                ev = evaluate(cfg.eval_games, seed=10_000 + self.num_timesteps)
                ev.update(samples=self.num_timesteps, elapsed_s=state["elapsed_s"])
                state["history"].append(ev)
                for k, v in ev["win_rate"].items():
                    self.logger.record(f"eval/{k}", v)
                say(f"[eval] {self.num_timesteps:,} samples, {state['elapsed_s']:.0f} s: "
                    + fair_share_line(ev))
            if self._due("ckpt", cfg.checkpoint_every_samples):
                save()
            return cfg.time_limit_s is None or state["elapsed_s"] < cfg.time_limit_s

    steps0 = model.num_timesteps
    model.learn(total_timesteps=max(cfg.total_samples - model.num_timesteps, 0),
                callback=Periodic(), reset_num_timesteps=not resume, tb_log_name="ppo")
    bar.update(model.num_timesteps, elapsed0 + time.perf_counter() - t_start)
    bar.close()
    wall = time.perf_counter() - t_start
    save()
    summary: dict[str, Any] = {
        "samples": model.num_timesteps, "elapsed_s": state["elapsed_s"],
        "samples_per_s_since_start": (model.num_timesteps - steps0) / wall if wall else None,
    }
    if "imitation" in state:
        summary["imitation"] = state["imitation"]
    if cfg.final_eval_games:
        # The saved checkpoint is exactly the policy the tournament loads as ``sb3:PATH``.
        from ..evaluate import final_tournament_evaluation

        final = final_tournament_evaluation(
            f"sb3:{ckpt}", list(cfg.eval_opponents), list(cfg.eval_players),
            cfg.final_eval_games, out / "final_eval", rules=cfg.rules, log=log)
        final.update(samples=model.num_timesteps, elapsed_s=state["elapsed_s"])
        summary["final_eval"] = final
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    if state["history"] or "final_eval" in summary:
        write_learning_curve(state["history"], out / "learning_curve.png",
                             final=summary.get("final_eval"))
    env.close()
    return summary
