"""TorchRL on the batched engine: ``BatchEnvRL`` in TorchRL's conventions, the trainer, and
``torchrl:PATH`` playing what it trained (training.adapters.torchrl, agents.adapters.torchrl).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from agents import make_agent  # noqa: E402
from agents.match import play_game  # noqa: E402
from training.adapters.torchrl import BatchEnvRL, train  # noqa: E402
from training.config import TorchRLConfig  # noqa: E402


def test_the_batched_env_passes_torchrls_own_spec_check():
    from torchrl.envs.utils import check_env_specs

    env = BatchEnvRL(8, 3, seed=1, opponents=("greedy", "random"))
    check_env_specs(env)
    td = env.reset()
    assert td["observation"].shape == (8, env.core.obs_size)
    assert td["action_mask"].dtype == torch.bool and td["action_mask"].any(-1).all()


def test_an_ended_episode_shows_its_last_view_then_resets_to_the_next_game():
    """In a rollout, a row that is done carries the learner's final view as its next
    observation; TorchRL's partial reset then gives that row the next game's first view,
    with a mask that has a legal move, and only masked-legal actions are ever played."""
    from torchrl.envs.utils import step_mdp

    env = BatchEnvRL(16, 3, seed=2, opponents=("greedy",))
    gen = np.random.default_rng(0)
    td = env.reset()
    ended = 0
    for _ in range(400):
        mask = td["action_mask"].numpy()
        td["action"] = torch.as_tensor([gen.choice(np.flatnonzero(m)) for m in mask])
        td = env.step(td)
        done = td["next", "done"].squeeze(-1)
        if done.any():
            ended += int(done.sum())
            rows = done.numpy()
            last = td["next", "observation"][rows].numpy()
            fresh = env.core.encode(env.core.env._obs)[rows]
            assert not np.array_equal(last, fresh)  # the final view, not the new game's
        td = step_mdp(td)
        td = env.reset(td.set("_reset", done[:, None])) if done.any() else td
        assert td["action_mask"].any(-1).all()
    assert ended > 0


def _tiny(**kw: object) -> TorchRLConfig:
    base = dict(num_envs=32, rollout_steps=8, minibatch_samples=128, hidden=16,
                imitate="expert", imitate_samples=1024, total_samples=512,
                eval_every_samples=0, final_eval_games=0, progress=False)
    base.update(kw)
    return TorchRLConfig(**base)  # type: ignore[arg-type]


def test_a_torchrl_run_exports_a_policy_that_plays_by_spec(tmp_path: Path):
    summary = train(_tiny(), tmp_path / "run", log=lambda s: None)
    assert summary["samples"] >= 512 and summary["imitation"]["imitation_samples"] >= 1024
    for spec in (f"torchrl:{tmp_path / 'run'}", f"torchrl:{tmp_path / 'run' / 'policy'}:sample"):
        seats = [make_agent(spec, seed=0), make_agent("greedy"), make_agent("expert")]
        assert play_game(seats, seed=4).winner >= 0


@pytest.mark.parametrize("kw, says", [
    ({"imitate": None}, "imitate and imitate_samples go together"),
    ({"imitate": "sb3:x.zip"}, "imitate: with the torchrl trainer, batched opponents are"),
    ({"minibatch_samples": 10**6}, "minibatch_samples"),
    ({"rules": "golf"}, "draw-and-discard observation"),
    ({"opponents": {"compact:x": 1.0}}, "opponents"),
])
def test_a_torchrl_config_refuses_what_it_cannot_train_in_one_line(kw, says):
    with pytest.raises(ValueError, match=says):
        _tiny(**kw)


def test_a_bad_torchrl_export_is_one_line(tmp_path: Path):
    with pytest.raises(ValueError, match="does not exist"):
        make_agent(f"torchrl:{tmp_path / 'nope'}")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "meta.json").write_text(json.dumps({"format": "scat-rllib-policy"}))
    with pytest.raises(ValueError, match="is not a TorchRL policy export"):
        make_agent(f"torchrl:{tmp_path / 'p'}")
    train(_tiny(), tmp_path / "run", log=lambda s: None)
    state = torch.load(tmp_path / "run" / "policy" / "weights.pt", weights_only=True)
    state["pi.0.weight"] = state["pi.0.weight"][:, :5]
    torch.save(state, tmp_path / "run" / "policy" / "weights.pt")
    with pytest.raises(ValueError, match=r"pi\.0\.weight has shape"):
        make_agent(f"torchrl:{tmp_path / 'run'}")


def test_a_torchrl_policy_refuses_a_larger_table_or_rules_it_cannot_see(tmp_path: Path):
    from scat_env import Rules

    train(_tiny(), tmp_path / "run", log=lambda s: None)
    agent = make_agent(f"torchrl:{tmp_path / 'run'}")
    with pytest.raises(ValueError, match="at most 3 players"):
        agent.check_table(4, Rules.preset("standard"))
    with pytest.raises(ValueError, match="does not play"):
        agent.check_table(3, Rules.preset("golf"))
