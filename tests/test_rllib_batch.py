"""RLlib on the batched engine (``env: batched``): the vector env RLlib's env runner steps,
the config's refusals, a run whose export plays as ``rllib:PATH`` from a view, and a resume
that trains again once the first invocation spent its time limit.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from training.config import RLlibConfig


def _vector_env(**kw):
    from training.adapters.rllib_batch import ScatBatchVectorEnv

    return ScatBatchVectorEnv(**{"num_envs": 16, "num_players": 3,
                                 "opponents": {"greedy": 1.0}, "seed": 3, **kw})


def test_an_ended_game_resets_on_the_next_step_as_gymnasium_vector_envs_do():
    """Next-step autoreset: the step that ends an episode returns the learner's last view;
    the next step ignores that game's action (even an illegal one), pays nothing, ends
    nothing, and returns the next game's first view with a legal move in its mask."""
    env = _vector_env()
    obs, _ = env.reset(seed=3)
    assert obs["observations"].shape == (16, env.core.obs_size)
    assert obs["action_mask"].dtype == np.float32
    gen = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        mask = obs["action_mask"] > 0
        acts = np.array([gen.choice(np.flatnonzero(m)) for m in mask])
        ended_before = env._pending.copy()
        if ended_before.any():
            acts[ended_before] = 66 if not mask[ended_before][:, 66].any() else 0
        obs, rewards, terminated, truncated, _ = env.step(acts)
        if ended_before.any():
            checked += int(ended_before.sum())
            assert not (terminated | truncated)[ended_before].any()
            assert (rewards[ended_before] == 0).all()
            assert np.array_equal(obs["observations"][ended_before],
                                  env.core.encode(env.core.env._obs)[ended_before])
        assert (obs["action_mask"].sum(1) > 0).all()
    assert checked > 0


@pytest.mark.parametrize("kw, says", [
    ({"opponents": {"self": 1.0}}, "opponents: with env: batched"),
    ({"imitate": "expert"}, "imitate and imitate_samples go together"),
    ({"env": "aec", "imitate": "expert", "imitate_samples": 10}, "imitate needs env: batched"),
    ({"env": "aec", "envs_per_env_runner": 2048}, "envs_per_env_runner must be at most 1024"),
    ({"rules": "golf"}, "draw-and-discard observation"),
])
def test_a_batched_rllib_config_refuses_what_it_cannot_play(kw, says):
    with pytest.raises(ValueError, match=says):
        RLlibConfig(**{"env": "batched", "opponents": {"greedy": 1.0}, **kw})


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    pytest.importorskip("ray.rllib", reason="RLlib is not installed (.[rllib])")
    import ray

    from training.adapters.rllib import start_ray

    started = start_ray(RLlibConfig())
    yield
    if started:
        ray.shutdown()


def test_a_batched_run_plays_by_spec_and_a_resume_trains_past_its_time_limit(tmp_path: Path,
                                                                           ray_local):
    """A run on the batched env with a warm start exports a policy that reads the learner
    vector and plays from a view as ``rllib:PATH``; ``time_limit_s`` counts one invocation,
    so ``--resume`` after the first one spent it trains again rather than nothing."""
    from agents import make_agent
    from agents.match import play_game
    from scat_env import Rules
    from training.adapters.rllib import train

    cfg = RLlibConfig(env="batched", opponents={"greedy": 1.0, "random": 1.0},
                      envs_per_env_runner=32, train_batch_samples=256, minibatch_samples=128,
                      epochs=1, hidden=16, layers=1, imitate="expert", imitate_samples=512,
                      total_samples=256, time_limit_s=60, final_eval_games=0, progress=False)
    out = tmp_path / "run"
    first = train(cfg, out, log=lambda m: None)
    assert first["iterations"] == 1 and first["imitation"]["imitation_samples"] >= 512
    meta = json.loads((out / "policy" / "meta.json").read_text())
    assert meta["input"] == "batch_vector"
    # a first invocation that spent more than the whole limit (a long run)
    state = json.loads((out / "state.json").read_text())
    (out / "state.json").write_text(json.dumps({**state, "elapsed_s": 10_000.0}))
    again = train(dataclasses.replace(cfg, total_samples=512), out, resume=True,
                  log=lambda m: None)
    assert again["iterations"] == 2
    agent = make_agent(f"rllib:{out}", seed=0)
    seats = [agent, make_agent("greedy"), make_agent("expert")]
    assert play_game(seats, Rules.preset("standard"), seed=5).winner in (0, 1, 2)
    with pytest.raises(ValueError, match="at most 3 players"):
        agent.check_table(4, Rules.preset("standard"))
    with pytest.raises(ValueError, match="does not play"):
        agent.check_table(3, Rules.preset("golf"))
