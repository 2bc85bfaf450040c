"""RLlib's PPO on scat, on RLlib's new API stack (RLModule, Learner, EnvRunner).

Three pieces, each small enough to read in one sitting:

- :class:`ScatMultiAgentEnv`, a ``MultiAgentEnv`` over ``scat_env.env(...)``. One seat moves
  at a time, so every step returns the observation of the one learning seat to move; the
  seats that do not learn (our baselines by spec, frozen snapshots of the policy) are played
  inside the env, each from its own view, until a learning seat must decide. Observations are
  ``{"observations": ..., "action_mask": ...}``, the keys RLlib's masking modules read (scat's
  own key is ``"observation"``). A learning seat put out on another seat's move still gets its
  final observation, its reward and ``terminated`` in the step that put it out; a game cut at
  the turn cap gives every learning seat still in its final observation and ``truncated``;
  ``__all__`` is set when the game is over (``terminateds`` for a finished game,
  ``truncateds`` for a cut one).
- :class:`ScatMaskedMLP`, a torch ``RLModule``: two ReLU MLPs over the observation, one for the
  action logits (illegal actions set to -1e9), one for the value. Its weight names are ours
  (``pi.0.weight`` ... ``vf.N.bias``: :func:`agents.adapters.rllib.layer_shapes`), so the export
  is read back by ``rllib:PATH`` without RLlib.
- :func:`train`: one shared policy ``main`` plays every learning seat (self-play); every
  ``snapshot_every_iterations`` its weights are copied into every env as the frozen
  ``snapshot`` opponent. The export (``policy/weights.pt`` + ``policy/meta.json``) is what
  the agent spec, the tournament and the final evaluation read, and with ``state.json`` it is
  the checkpoint ``--resume`` continues from (RLlib's own checkpoints are pickles, which a run
  folder from elsewhere could fill with code; the optimizer restarts on a resume).

``env: batched`` trains on the batched engine instead: the vector env of
:mod:`training.adapters.rllib_batch`, stepped by :mod:`training.adapters.rllib_runner`'s env
runner, one learner seat per game against batched baselines.

Scaling is configuration only (``num_env_runners``, ``num_learners``,
``num_gpus_per_learner``, ``ray_address``): docs/SCALING.md, "RLlib on a cluster".
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from agents.adapters.rllib import (
    INPUT_OF,
    RULES_THE_POLICY_MUST_KNOW,
    RLlibPolicy,
    build_mlp,
    observation_size,
    write_export,
)
from agents.registry import make_agent
from scat_env import DEFAULT_MAX_TURNS, NUM_ACTIONS
from scat_env.rewards import hand_shaping

from ..config import RLlibConfig, make_rules

#: The one trained module: every learning seat of every game plays it.
MAIN = "main"
#: Seat roles that are not agent specs: the learner itself, and its frozen copy.
LEARNER, SNAPSHOT = "self", "snapshot"
#: Masked logits: low enough that an illegal action is never drawn, finite so that no
#: entropy or KL term meets ``0 * inf``.
MASKED = -1e9


# ---------------------------------------------------------------------------------------
# The env


class ScatMultiAgentEnv(MultiAgentEnv):
    """``scat_env.env(...)`` as an RLlib ``MultiAgentEnv`` (see the module docstring).

    ``config`` (RLlib's ``env_config``): ``num_players`` (3), ``rules`` ("standard"),
    ``opponents`` (``{spec: weight}`` for every seat but one learning seat per game: ``self``
    another learning seat, ``snapshot`` the frozen copy, or an agent spec; default all
    ``self``), ``hand_reward`` (lives shaping added to the game result, 0), ``max_turns``.
    A ``snapshot`` seat plays as a learning seat until :meth:`set_snapshot` gives it weights.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        import scat_env

        config = dict(config or {})
        self.num_players = int(config.get("num_players", 3))
        self.rules = make_rules(config.get("rules", "standard"))
        self.hand_reward = float(config.get("hand_reward", 0.0))
        self.opponents: dict[str, float] = dict(config.get("opponents") or {LEARNER: 1.0})
        for spec in self.opponents:
            if spec not in (LEARNER, SNAPSHOT):
                make_agent(spec, seed=0)  # a bad spec fails now, in one line, not mid-game
        self.aec = scat_env.env(num_players=self.num_players, rules=self.rules,
                                max_turns=int(config.get("max_turns", DEFAULT_MAX_TURNS)))
        size = self.aec.observation_space("player_0")["observation"].shape[0]
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = list(self.possible_agents)
        space = gym.spaces.Dict({
            "observations": gym.spaces.Box(0.0, 1.0, (size,), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32)})
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, gym.spaces.Discrete(NUM_ACTIONS))
        self._rng = np.random.default_rng()
        self.roles: dict[str, str] = {}
        self._players: dict[str, Any] = {}
        self._snapshot: RLlibPolicy | None = None
        self._shaping: dict[str, float] = defaultdict(float)
        self._told: set[str] = set()  # learning seats RLlib has seen an observation of

    # -- frozen copy -----------------------------------------------------------------------
    def set_snapshot(self, weights: dict[str, Any] | None) -> None:
        """The weights ``snapshot`` seats play from the next game on (``None``: none yet)."""
        if weights is None:
            self._snapshot = None
            return
        arrays = {k: np.asarray(v, dtype=np.float32) for k, v in weights.items()}
        layers = sum(1 for k in arrays if k.startswith("pi.") and k.endswith(".weight")) - 1
        self._snapshot = RLlibPolicy(arrays, layers)

    # -- MultiAgentEnv API -----------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        for _ in range(100):  # a game over before any learning seat moved is dealt again
            self.aec.reset(seed=int(self._rng.integers(2**62)))
            self._draw_roles()
            self._shaping = defaultdict(float)
            self._told = set()
            self._collect_shaping()
            obs, rewards, terminateds, truncateds, _ = self._advance()
            if obs and not (terminateds["__all__"] or truncateds["__all__"]):
                for agent, r in rewards.items():  # a reward before the first move waits
                    self._shaping[agent] += r
                self._update_agents(obs)
                return obs, {}
        raise RuntimeError("scat: 100 deals in a row ended before a learning seat moved")

    def step(self, action_dict: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        agent = self.aec.agent_selection
        if set(action_dict) != {agent}:
            raise ValueError(f"scat: expected one action, for {agent} (the seat to move), "
                             f"got actions for {sorted(action_dict)}")
        self.aec.step(int(action_dict[agent]))
        self._collect_shaping()
        out = self._advance()
        self._update_agents(out[0])
        return out

    # -- internals -------------------------------------------------------------------------
    def _update_agents(self, obs: dict[str, Any]) -> None:
        """``agents``: the learning seats still in, and those this step reports on for the
        last time (RLlib's checks want every key of a step among them)."""
        self.agents = [a for a in self.possible_agents
                       if a in obs or (a in self.aec.agents and self.roles[a] == LEARNER)]

    def _draw_roles(self) -> None:
        """One learning seat drawn uniformly; every other seat drawn from ``opponents``."""
        specs, weights = list(self.opponents), np.array(list(self.opponents.values()), float)
        learner = int(self._rng.integers(self.num_players))
        self.roles, self._players = {}, {}
        for seat, agent in enumerate(self.possible_agents):
            role = LEARNER if seat == learner else specs[
                int(self._rng.choice(len(specs), p=weights / weights.sum()))]
            if role == SNAPSHOT and self._snapshot is None:
                role = LEARNER
            self.roles[agent] = role
            if role not in (LEARNER, SNAPSHOT):
                self._players[agent] = make_agent(role, seed=int(self._rng.integers(2**62)))

    def _advance(self) -> tuple[dict[str, Any], ...]:
        """Play dead steps and non-learning seats until a learning seat must move or the
        game is over; everything RLlib must hear of on the way goes into one step."""
        aec = self.aec
        obs: dict[str, Any] = {}
        rewards: dict[str, float] = {}
        terminateds: dict[str, bool] = {}
        truncateds: dict[str, bool] = {}
        cut = False
        while aec.agents:
            agent = aec.agent_selection
            o, r, term, trunc, _ = aec.last()
            learner = self.roles[agent] == LEARNER
            if term or trunc:  # its dead step: the final observation and reward
                cut = cut or (trunc and not term)
                if learner and agent in self._told:
                    obs[agent] = self._observation(o)
                    rewards[agent] = float(r) + self._shaping.pop(agent, 0.0)
                    terminateds[agent] = bool(term)
                    truncateds[agent] = bool(trunc and not term)
                aec.step(None)
                continue
            if learner:
                obs[agent] = self._observation(o)
                rewards[agent] = float(r) + self._shaping.pop(agent, 0.0)
                self._told.add(agent)
                break
            aec.step(self._opponent_move(agent, o))
            self._collect_shaping()
        over = not aec.agents
        terminateds["__all__"] = over and not cut
        truncateds["__all__"] = over and cut
        return obs, rewards, terminateds, truncateds, {}

    def _opponent_move(self, agent: str, o: dict[str, np.ndarray]) -> int:
        if self.roles[agent] == SNAPSHOT:
            assert self._snapshot is not None
            mask = o["action_mask"].astype(bool)
            z = self._snapshot.logits(o["observation"], mask)
            p = np.exp(z - z.max())
            return int(self._rng.choice(NUM_ACTIONS, p=p / p.sum()))
        return self._players[agent].act(self.aec.view(agent))  # its own view only

    def _collect_shaping(self) -> None:
        """After a move (or a deal): the lives shaping of the hands it scored, kept for each
        learning seat until RLlib next hears from it."""
        if not self.hand_reward:
            return
        infos = self.aec.infos
        results = next((infos[a]["hand_results"] for a in self.aec.agents
                        if "hand_results" in infos.get(a, {})), None)
        if not results:
            return
        seat = self.aec.agent_name_mapping
        for res in results:
            lost = {seat[name]: int(v) for name, v in res["lives_lost"].items()}
            for s, v in hand_shaping(lost, self.hand_reward).items():
                name = self.possible_agents[s]
                if self.roles.get(name) == LEARNER:
                    self._shaping[name] += v

    @staticmethod
    def _observation(o: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"observations": o["observation"],
                "action_mask": o["action_mask"].astype(np.float32)}


# ---------------------------------------------------------------------------------------
# The module


class ScatMaskedMLP(TorchRLModule, ValueFunctionAPI):
    """Masked policy and value MLPs (``model_config``: ``hidden``, ``layers``); see the
    module docstring. The value always comes along (also on env runners): the state dicts
    of learners and env runners are then the same, and the export is one of them."""

    def setup(self) -> None:
        size = self.observation_space["observations"].shape[0]
        hidden, layers = int(self.model_config["hidden"]), int(self.model_config["layers"])
        self.pi = build_mlp(size, hidden, layers, self.action_space.n)
        self.vf = build_mlp(size, hidden, layers, 1)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.pi(obs["observations"])
        return {Columns.ACTION_DIST_INPUTS: logits.masked_fill(obs["action_mask"] <= 0, MASKED)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward(batch)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        return self.vf(batch[Columns.OBS]["observations"]).squeeze(-1)


# ---------------------------------------------------------------------------------------
# Training


def env_config(cfg: RLlibConfig) -> dict[str, Any]:
    return {"num_players": cfg.num_players, "rules": cfg.rules, "opponents": dict(cfg.opponents),
            "hand_reward": cfg.hand_reward, "max_turns": cfg.max_turns}


def algorithm_config(cfg: RLlibConfig) -> Any:
    """RLlib's ``PPOConfig`` for ``cfg``: the env, one shared module, the scale."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    module = RLModuleSpec(module_class=ScatMaskedMLP,
                          model_config={"hidden": cfg.hidden, "layers": cfg.layers})
    config = PPOConfig()
    if cfg.env == "batched":  # one learner seat per game: a single-agent vector env
        from ray.tune.registry import register_env

        from .rllib_batch import ENV_ID, make_vector_env
        from .rllib_runner import ScatBatchColumns, ScatBatchEnvRunner

        register_env(ENV_ID, make_vector_env)  # RLlib takes a class or a registered name
        config = (config.environment(ENV_ID, env_config={**env_config(cfg), "seed": cfg.seed})
                  .rl_module(rl_module_spec=module)
                  .env_runners(gym_env_vectorize_mode="vector_entry_point"))
        if cfg.batched_runner == "arrays":
            config = (config.env_runners(env_runner_cls=ScatBatchEnvRunner)
                      .learners(learner_connector=lambda obs, act: ScatBatchColumns(),
                                add_default_connectors_to_learner_pipeline=False))
    else:
        config = (config.environment(ScatMultiAgentEnv, env_config=env_config(cfg))
                  .multi_agent(policies={MAIN}, policy_mapping_fn=_every_seat_main,
                               policies_to_train=[MAIN])
                  .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MAIN: module})))
    return (
        config
        .env_runners(num_env_runners=cfg.num_env_runners,
                     num_envs_per_env_runner=cfg.envs_per_env_runner,
                     rollout_fragment_length="auto")
        .learners(num_learners=cfg.num_learners, num_gpus_per_learner=cfg.num_gpus_per_learner)
        .training(lr=cfg.lr, gamma=cfg.gamma, lambda_=cfg.gae_lambda, clip_param=cfg.clip,
                  entropy_coeff=cfg.ent_coef, vf_loss_coeff=cfg.vf_coef,
                  train_batch_size_per_learner=cfg.train_batch_samples,
                  minibatch_size=cfg.minibatch_samples, num_epochs=cfg.epochs,
                  vf_clip_param=10.0)
        .debugging(seed=cfg.seed, log_level="ERROR")
    )


def _every_seat_main(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    return MAIN


def module_id(algo: Any) -> str:
    """The trained module's id: ``main`` in the multi-agent env, RLlib's default module in
    the batched (single-agent) one."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    return MAIN if algo.config.is_multi_agent else DEFAULT_MODULE_ID


def main_weights(algo: Any) -> dict[str, np.ndarray]:
    """The learner's current ``main`` weights as float32 numpy arrays."""
    mid = module_id(algo)
    state = algo.learner_group.get_weights(module_ids=[mid])[mid]
    out = {}
    for k, v in state.items():
        if hasattr(v, "detach"):
            v = v.detach().cpu().numpy()
        out[k] = np.asarray(v, dtype=np.float32)
    return out


def push_snapshot(algo: Any, weights: dict[str, np.ndarray]) -> int:
    """Every env of every env runner (local and remote) plays ``snapshot`` seats from
    ``weights`` from its next game on; returns how many envs took them."""
    def give(runner: Any) -> int:
        envs = getattr(getattr(runner, "env", None), "envs", None) or []
        for e in envs:
            e.unwrapped.set_snapshot(weights)
        return len(envs)

    return sum(algo.env_runner_group.foreach_env_runner(give, local_env_runner=True))


def export_policy(weights: dict[str, np.ndarray], folder: Path, cfg: RLlibConfig,
                  observation_size: int, trained: dict[str, Any]) -> None:
    """``folder/weights.pt`` (a plain state dict) and ``folder/meta.json``: what
    ``rllib:PATH`` reads (:func:`agents.adapters.rllib.write_export`)."""
    rules = make_rules(cfg.rules)
    write_export(weights, folder, {
        "env": "scat_v2",
        "architecture": {"kind": "mlp", "activation": "relu", "observation_size": observation_size,
                         "hidden": cfg.hidden, "layers": cfg.layers, "actions": NUM_ACTIONS},
        "num_players": cfg.num_players, "rules": cfg.rules,
        "rules_fields": {k: getattr(rules, k) for k in RULES_THE_POLICY_MUST_KNOW},
        "input": INPUT_OF[cfg.env],
        "trained": trained,
    })


def start_ray(cfg: RLlibConfig) -> bool:
    """Connect to ``ray_address`` or start a Ray instance of our own on this machine
    (:func:`training.tournament.ray_backend.start_training_ray`), with a CPU slot for the
    driver and every env runner and learner RLlib asks for; True when this call started
    it, and so :func:`train` shuts it down."""
    from ..tournament.ray_backend import start_training_ray

    return start_training_ray(cfg.ray_address, 1 + cfg.num_env_runners + cfg.num_learners)


def train(cfg: RLlibConfig, out_dir: str | Path, resume: bool = False, log: Any = print
          ) -> dict[str, Any]:
    """Train (or continue) an RLlib run in ``out_dir``; returns the final summary. The
    folder is held for the whole run (:mod:`training.runlock`)."""
    from ..runlock import exclusive_folder

    with exclusive_folder(out_dir, "training run"):
        started = start_ray(cfg)
        try:
            return _train(cfg, Path(out_dir), resume, log)
        finally:
            if started:
                import ray

                ray.shutdown()


def _train(cfg: RLlibConfig, out: Path, resume: bool, log: Any) -> dict[str, Any]:
    import torch

    from ..evaluate import evaluate_agent, fair_share_line, write_learning_curve
    from .sb3 import write_atomically

    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(cfg.torch_threads)
    policy_dir, state_path = out / "policy", out / "state.json"
    start = read_resume_point(cfg, out) if resume else None  # before any Ray actor starts
    state: dict[str, Any] = {"history": [], "iterations": 0, "samples": 0, "elapsed_s": 0.0,
                             "snapshots": 0}
    with warnings.catch_warnings():
        # RLlib's env check steps once with an unmasked random action: scat ends that game
        # as an illegal move and says so, which is what the check expects, not news.
        warnings.filterwarnings("ignore", r".*Illegal move made", UserWarning)
        algo = algorithm_config(cfg).build_algo()
    try:
        if start is not None:
            weights, saved = start
            set_main_weights(algo, weights)
            state.update(saved)
            log(f"resumed {policy_dir} at iteration {state['iterations']}, "
                f"{state['samples']:,} samples (the optimizer starts afresh)")
        else:
            write_atomically(out / "config.json", lambda tmp: Path(tmp).write_text(
                json.dumps(dataclasses.asdict(cfg), indent=2)))
        rules = make_rules(cfg.rules)
        size = observation_size(INPUT_OF[cfg.env], cfg.num_players, rules)
        if SNAPSHOT in cfg.opponents:
            state["snapshot_envs"] = push_snapshot(algo, main_weights(algo))  # as it starts
        t0, elapsed0, samples0 = time.perf_counter(), state["elapsed_s"], state["samples"]
        if start is None and cfg.imitate is not None:  # within the time limit
            state["imitation"] = warm_start(algo, cfg, log)

        def evaluate(games: int, seed: int) -> dict[str, Any]:
            from agents.adapters.rllib import RLlibAgent

            export = _export_in_memory(main_weights(algo), cfg, size)
            return evaluate_agent(lambda s: RLlibAgent(export, seed=s), rules,
                                  cfg.eval_opponents, [cfg.num_players], games, seed)

        def save() -> None:
            # The export is the checkpoint: plain weights and JSON, never RLlib's pickles, so
            # a run folder from elsewhere resumes without running code from it. The state
            # goes last: a kill between the two leaves weights ahead of the counters.
            trained = {k: state[k] for k in ("iterations", "samples", "elapsed_s")}
            export_policy(main_weights(algo), policy_dir, cfg, size, trained)
            write_atomically(state_path,
                             lambda tmp: Path(tmp).write_text(json.dumps(state, indent=2)))

        if state["samples"] >= cfg.total_samples:
            log(f"nothing to train: the run has {state['samples']:,} samples, total_samples "
                f"is {cfg.total_samples:,} (raise it to train on)")
        # time_limit_s counts this invocation: a resume gets the whole limit again
        while state["samples"] < cfg.total_samples and (
                cfg.time_limit_s is None or time.perf_counter() - t0 < cfg.time_limit_s):
            result = algo.train()
            state["iterations"] += 1
            state["samples"] += _sampled(result)
            state["elapsed_s"] = elapsed0 + time.perf_counter() - t0
            it = state["iterations"]
            if cfg.progress:
                runners = result.get("env_runners", {})
                ret = (runners.get("agent_episode_returns_mean", {}).get("player_0")
                       if cfg.env == "aec" else runners.get("episode_return_mean"))
                log(f"[rllib] iteration {it}: {state['samples']:,} samples, "
                    f"{state['elapsed_s']:.0f} s, mean return {_fmt(ret)}")
            if SNAPSHOT in cfg.opponents and it % cfg.snapshot_every_iterations == 0:
                state["snapshot_envs"] = push_snapshot(algo, main_weights(algo))
                state["snapshots"] += 1
            if cfg.eval_every_iterations and it % cfg.eval_every_iterations == 0:
                ev = evaluate(cfg.eval_games, seed=10_000 + it)
                ev.update(samples=state["samples"], elapsed_s=state["elapsed_s"])
                state["history"].append(ev)
                log(f"[eval] iteration {it}, {state['samples']:,} samples: " + fair_share_line(ev))
            if it % cfg.checkpoint_every_iterations == 0:
                save()
        save()
        wall = time.perf_counter() - t0
    finally:
        algo.stop()
    summary: dict[str, Any] = {
        "samples": state["samples"], "iterations": state["iterations"],
        "elapsed_s": state["elapsed_s"],
        "samples_per_s_since_start": (state["samples"] - samples0) / wall if wall else None,
    }
    if "imitation" in state:
        summary["imitation"] = state["imitation"]
    if cfg.final_eval_games:
        from ..evaluate import final_tournament_evaluation

        final = final_tournament_evaluation(
            f"rllib:{out / 'policy'}", list(cfg.eval_opponents), [cfg.num_players],
            cfg.final_eval_games, out / "final_eval", rules=cfg.rules, log=log)
        final.update(samples=state["samples"], elapsed_s=state["elapsed_s"])
        summary["final_eval"] = final
    write_atomically(out / "summary.json", lambda tmp: Path(tmp).write_text(
        json.dumps(summary, indent=2, default=str)))
    if state["history"] or "final_eval" in summary:
        write_learning_curve(state["history"], out / "learning_curve.png",
                             final=summary.get("final_eval"))
    return summary


def warm_start(algo: Any, cfg: RLlibConfig, log: Any) -> dict[str, float]:
    """The imitation warm start (:mod:`training.imitation`) of ``env: batched``: the
    policy MLP (``pi.*``) fitted to ``cfg.imitate``'s moves with a masked cross-entropy on
    the driver, on games of its own, then put into the learner and every env runner (the
    value head keeps its weights)."""
    import torch

    from ..batch_learner import BatchLearnerEnv
    from ..imitation import imitate, mlp_fit

    weights = main_weights(algo)
    size = weights["pi.0.weight"].shape[1]
    pi = build_mlp(size, cfg.hidden, cfg.layers, NUM_ACTIONS)
    pi.load_state_dict({k[3:]: torch.from_numpy(v) for k, v in weights.items()
                        if k.startswith("pi.")})
    opt = torch.optim.Adam(pi.parameters(), lr=cfg.lr)
    step = max(cfg.minibatch_samples // 4, 1)

    fit = mlp_fit(pi, opt, step, MASKED)

    core = BatchLearnerEnv(min(cfg.envs_per_env_runner, 1024), cfg.num_players, cfg.rules,
                           cfg.seed + 1, dict(cfg.opponents), cfg.max_turns,
                           hand_reward=cfg.hand_reward)
    result = imitate([core], cfg.imitate or "expert", cfg.imitate_samples, fit, log)
    weights.update({f"pi.{k}": v.detach().numpy().copy() for k, v in pi.state_dict().items()})
    set_main_weights(algo, weights)
    return result


def set_main_weights(algo: Any, weights: dict[str, np.ndarray]) -> None:
    """Put ``weights`` into the learner's ``main`` module and every env runner's copy."""
    import torch

    algo.learner_group.set_weights({module_id(algo): {k: torch.from_numpy(v)
                                                       for k, v in weights.items()}})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                       inference_only=True)


def read_resume_point(cfg: RLlibConfig, out: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The weights and counters a resume starts from: the run's export (JSON and a torch file
    read with ``weights_only``, checked name by name) and ``state.json``. RLlib's own
    checkpoints are pickles, which would run whatever a run folder from elsewhere put in
    them; the optimizer's moments are the one thing this leaves behind. An export of another
    network, table size or rules than the config's is refused in one line."""
    from agents.adapters.rllib import read_meta, read_weights

    folder, state_path = out / "policy", out / "state.json"
    if not (folder / "meta.json").is_file() or not state_path.is_file():
        raise ValueError(f"--resume: no RLlib run to continue in {str(out)!r} (it needs "
                         "policy/meta.json, policy/weights.pt and state.json)")
    meta = read_meta(folder)
    arch = meta["architecture"]
    want = {"hidden": cfg.hidden, "layers": cfg.layers, "num_players": cfg.num_players,
            "rules": cfg.rules}
    have = {"hidden": arch["hidden"], "layers": arch["layers"],
            "num_players": meta["num_players"], "rules": meta["rules"]}
    differ = [f"{k} {have[k]!r} (the config says {want[k]!r})" for k in want if have[k] != want[k]]
    if differ:
        raise ValueError(f"--resume: the run in {str(out)!r} has {', '.join(differ)}")
    return read_weights(folder, meta), read_state(state_path)


def read_state(path: Path) -> dict[str, Any]:
    """``state.json`` of a run (iterations, samples, elapsed seconds, evaluation history),
    checked: a file that is not one is one ``ValueError`` line."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ValueError(f"{str(path)!r} is not a readable state file") from None
    ok = (isinstance(state, dict) and isinstance(state.get("history"), list)
          and all(type(state.get(k)) is int and state[k] >= 0
                  for k in ("iterations", "samples", "snapshots"))
          and type(state.get("elapsed_s")) in (int, float) and state["elapsed_s"] >= 0
          and all(isinstance(e, dict) for e in state["history"]))
    if not ok:
        raise ValueError(f"{str(path)!r}: expected history, iterations, samples, snapshots "
                         "and elapsed_s")
    return state


def _export_in_memory(weights: dict[str, np.ndarray], cfg: RLlibConfig, size: int) -> Any:
    """An :class:`agents.adapters.rllib.RLlibExport`-like object of the live weights, for the
    in-training evaluation (no file written)."""
    from types import SimpleNamespace

    rules = make_rules(cfg.rules)
    return SimpleNamespace(
        policy=RLlibPolicy(weights, cfg.layers), num_players=cfg.num_players,
        observation_size=size, input=INPUT_OF[cfg.env],
        meta={"rules_fields": {k: getattr(rules, k) for k in RULES_THE_POLICY_MUST_KNOW}})


def _sampled(result: dict[str, Any]) -> int:
    """Env steps sampled in one iteration: one per learner decision (every step of
    :class:`ScatMultiAgentEnv` is one learning seat's move)."""
    return int(result.get("env_runners", {}).get("num_env_steps_sampled", 0))


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:+.3f}"
