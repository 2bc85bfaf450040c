"""The trainers train on any preset: a policy trained where the rules offer calls (the
hammer, the throw-down, sudden death, declaring by choice) has an output for every action,
plays those rules legally, and is refused where it would meet a pack it never saw."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from agents.match import play_game  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from scat_env import Rules  # noqa: E402
from scat_env.actions import NUM_ACTIONS  # noqa: E402
from training.adapters.sb3 import train  # noqa: E402
from training.config import SB3Config  # noqa: E402

SMALL = dict(n_envs=2, vec_env="dummy", rollout_samples_per_env=256, minibatch_samples=128,
             epochs=1, hidden=32, layers=1, final_eval_games=0, eval_every_samples=0,
             checkpoint_every_samples=0, progress=False, torch_threads=1)


def _train(preset: str, folder, samples: int = 1024) -> str:
    """An SB3 policy (the trainer whose padded observation reads every family's pieces)."""
    cfg = SB3Config(player_counts=[3], opponents={"random": 1.0}, seed=1,
                    total_samples=samples, rules=preset, **SMALL)
    train(cfg, folder, log=lambda m: None)
    return f"sb3:{folder / 'checkpoint.zip'}"


def _plays(spec: str, preset: str, games: int = 3) -> None:
    rules = Rules.preset(preset)
    for g in range(games):
        agents = [make_agent(spec, seed=g), make_agent("random", seed=g + 1),
                  make_agent("expert", seed=g + 2)]
        record = play_game(agents, rules, seed=g)
        assert record.results  # hands were scored; an illegal move would have raised


def test_a_policy_trained_with_calls_has_every_action_and_plays_them(tmp_path):
    spec = _train("throw_down_any", tmp_path)
    agent = make_agent(spec, seed=0)
    assert agent.policy.num_actions == NUM_ACTIONS
    _plays(spec, "throw_down_any")
    _plays(spec, "hammer")  # the same action space serves another preset with calls


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["hammer", "moyer", "undeclared_31", "italian", "computer",
                                    "cadillac", "gin", "ride_the_bus_extra_stops"])
def test_sb3_smoke_run_per_preset_family(tmp_path, preset):
    spec = _train(preset, tmp_path, samples=2048)
    _plays(spec, preset, games=3)
