"""SB3 on the batched engine (``vec_env: batch``) and the imitation warm start.

What ``scat train`` with ``configs/train/sb3_batch.yaml`` relies on: the config refuses what
the batched env cannot play in one line, the teacher's moves are its own legal moves, a
policy fitted to them agrees with them on games it has not seen, and a batched run leaves a
checkpoint that ``sb3:`` plays from a view and that resumes only under a batched config.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from training.batch_learner import BatchLearnerEnv
from training.config import SB3Config
from training.imitation import demonstrations, imitate


def _cfg(**kw: object) -> SB3Config:
    base = dict(vec_env="batch", player_counts=[3], max_players=3, n_envs=32, eval_players=[3],
                opponents={"greedy": 1.0}, snapshot_every_samples=0)
    base.update(kw)
    return SB3Config(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("kw, says", [
    ({"opponents": {"sb3:x.zip": 1.0}}, "opponents: with vec_env: batch"),
    ({"snapshot_every_samples": 1000}, "snapshot_every_samples must be 0"),
    ({"shaping": "win_chance"}, "shaping must be 'lives'"),
    ({"rules": "golf"}, "draw-and-discard observation"),
    ({"imitate": "expert"}, "imitate and imitate_samples go together"),
    ({"imitate": "compact:x", "imitate_samples": 10}, "imitate: with vec_env: batch"),
    ({"vec_env": "dummy", "imitate": "expert", "imitate_samples": 10}, "needs vec_env: batch"),
    ({"vec_env": "dummy", "n_envs": 2048}, "n_envs must be at most 1024"),
    ({"player_counts": [2, 3], "n_envs": 1}, "n_envs must give each of player_counts"),
])
def test_a_batched_sb3_config_refuses_what_the_batched_env_cannot_play(kw, says):
    with pytest.raises(ValueError, match=says):
        _cfg(**kw)


def test_the_teacher_plays_its_own_legal_moves_in_the_learners_seat():
    """Every demonstrated move is legal under the mask recorded beside it, and is the move
    the teacher itself makes there (greedy's batched threshold move)."""
    core = BatchLearnerEnv(16, 3, seed=2, opponents=("random",))
    for obs, mask, act in demonstrations(core, "greedy", 16 * 8 * 3, chunk_steps=8):
        assert obs.shape == (len(act), core.obs_size)
        assert mask[np.arange(len(act)), act].all()
    mask, act = core.action_masks(), core.teacher_actions("greedy")
    assert np.array_equal(act, core.env.threshold_actions(25)) and mask[np.arange(16), act].all()


def test_a_fitted_policy_agrees_with_its_teacher_on_games_it_has_not_seen():
    """Behaviour cloning works: a linear softmax fitted by ``imitate`` on greedy's moves
    matches far more of greedy's moves in the next, unseen chunk than the untrained one
    (whose most likely move is the first legal one)."""
    import torch

    core = BatchLearnerEnv(128, 3, seed=5, opponents=("greedy",))
    torch.manual_seed(0)
    net = torch.nn.Linear(core.obs_size, 67)
    torch.nn.init.zeros_(net.weight)
    torch.nn.init.zeros_(net.bias)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)

    def fit(obs: np.ndarray, mask: np.ndarray, act: np.ndarray) -> tuple[float, float]:
        logits = net(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(mask), -1e9)
        a = torch.as_tensor(act)
        agree = float((logits.argmax(1) == a).float().mean())
        for _ in range(5):
            loss = torch.nn.functional.cross_entropy(logits, a)
            opt.zero_grad()
            loss.backward()
            opt.step()
            logits = net(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(mask), -1e9)
        return float(loss.detach()), agree

    early = imitate([core], "greedy", 128 * 8, fit, log=lambda s: None)["imitation_agreement"]
    late = imitate([core], "greedy", 128 * 8 * 30, fit, log=lambda s: None)
    assert late["imitation_agreement"] > max(0.7, early + 0.1)


def test_a_batched_run_plays_as_sb3_and_resumes_only_as_batched(tmp_path: Path):
    """``scat train`` with vec_env: batch: the warm start is recorded, the checkpoint plays
    from a view through ``sb3:``, and a config of the single-agent env refuses to resume it
    in one line."""
    from agents import make_agent
    from agents.adapters.sb3 import SB3CompactAgent
    from agents.match import play_game
    from training.adapters.sb3 import read_checkpoint, train

    cfg = _cfg(n_envs=16, total_samples=1024, rollout_samples_per_env=32,
               minibatch_samples=256, hidden=16, imitate="expert", imitate_samples=2048,
               eval_every_samples=0, final_eval_games=0, checkpoint_every_samples=0,
               progress=False)
    summary = train(cfg, tmp_path / "run", log=lambda s: None)
    assert summary["imitation"]["imitation_samples"] >= 2048
    spec = f"sb3:{tmp_path / 'run' / 'checkpoint.zip'}"
    agent = make_agent(spec, seed=0)
    assert isinstance(agent, SB3CompactAgent)
    assert play_game([agent, make_agent("greedy"), make_agent("random")], seed=3).winner >= 0
    plain = SB3Config(player_counts=[3], max_players=3, eval_players=[3], hidden=16)
    with pytest.raises(ValueError, match="was trained on BatchVecEnv's vector, not this"):
        read_checkpoint(tmp_path / "run" / "checkpoint.zip", plain)
