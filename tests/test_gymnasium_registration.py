"""The single-agent env under its Gymnasium id: ``gymnasium.make("scat_env/Scat-v0", ...)``
builds :class:`training.single_agent.ScatSingleAgentEnv` with the keywords given, passes
Gymnasium's own env checker, keeps its action mask reachable through the wrappers that
``make`` adds (sb3-contrib reads it there), and the README's Gymnasium example runs."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hang_limits import hang_limit

from training.single_agent import ENV_ID, ScatSingleAgentEnv, register_gymnasium

ROOT = Path(__file__).resolve().parents[1]


def test_make_builds_the_single_agent_env_with_the_keywords_given():
    env = gym.make(ENV_ID, num_players=[2, 4], rules="cadillac", opponents=["expert"],
                   hand_reward=0.5)
    inner = env.unwrapped
    assert isinstance(inner, ScatSingleAgentEnv)
    assert env.spec is not None and env.spec.id == "scat_env/Scat-v0"
    assert inner.player_counts == [2, 4]
    assert inner.rules.name == "cadillac"
    assert inner.opponents == {"expert": 1.0}
    assert inner.hand_reward == 0.5


@pytest.mark.parametrize("kwargs", [{"num_players": 2}, {"num_players": 3},
                                    {"num_players": 4, "rules": "french_canadian"}])
def test_the_registered_env_passes_gymnasiums_env_checker_without_a_warning(kwargs):
    env = gym.make(ENV_ID, **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_the_module_prefixed_id_needs_no_import_first():
    """``make("training.single_agent:scat_env/Scat-v0")`` imports the registering module
    itself, in a fresh interpreter where nothing registered the id before."""
    code = ("import gymnasium as gym\n"
            "assert 'scat_env/Scat-v0' not in gym.registry\n"
            "env = gym.make('training.single_agent:scat_env/Scat-v0', num_players=2)\n"
            "obs, info = env.reset(seed=0)\n"
            "print(type(env.unwrapped).__name__, obs.shape[0] > 0, info['num_players'])\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=hang_limit(300))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["ScatSingleAgentEnv", "True", "2"]


def test_registering_again_keeps_the_first_spec_and_warns_nothing():
    spec = gym.spec(ENV_ID)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register_gymnasium()
    assert gym.spec(ENV_ID) is spec


def test_the_mask_is_reachable_through_makes_wrappers():
    """sb3-contrib's MaskablePPO asks the vectorised env for ``action_masks``; through the
    wrappers of ``gymnasium.make`` it gets the learner's legal actions, and trains."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: gym.make(ENV_ID, num_players=3, opponents=["greedy"])])
    vec.seed(0)
    vec.reset()
    masks = get_action_masks(vec)
    inner = vec.envs[0].unwrapped
    assert np.array_equal(masks[0], inner.action_masks())
    assert masks[0].any()
    legal = set(inner.state.legal_actions())
    assert set(np.flatnonzero(masks[0])) == legal
    model = MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=32, n_epochs=1, seed=0,
                        device="cpu")
    model.learn(64)
    assert model.num_timesteps == 64


def _readme_section_blocks(heading: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1]
    section = re.split(r"\n#{1,3} ", section, maxsplit=1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_gymnasium_example_runs():
    blocks = _readme_section_blocks("### Gymnasium")
    assert len(blocks) == 1 and 'gym.make("scat_env/Scat-v0"' in blocks[0]
    exec(compile(blocks[0], str(ROOT / "README.md"), "exec"), {"__name__": "readme_example"})


def test_the_docs_gymnasium_example_runs():
    text = (ROOT / "docs" / "LIBRARIES.md").read_text(encoding="utf-8")
    section = text.split("\n## Gymnasium\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1 and 'gymnasium.make("scat_env/Scat-v0"' in blocks[0]
    exec(compile(blocks[0], "docs/LIBRARIES.md", "exec"), {"__name__": "docs_example"})
