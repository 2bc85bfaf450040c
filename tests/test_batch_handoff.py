"""The batched trainer's ``handoff``: a set member for N players learns only the positions it
will play, the smaller game that follows played by the set's member for it (as the native
trainer's ``handoff``, docs/TRAINING.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from test_batch_training import TINY

from agents.compact import CompactSet, load_compact_player
from scat_env.batch.active import active_observations, players_in
from training.batch_ppo import (
    CompactNet,
    Handoff,
    Table,
    collect,
    export,
    ppo_loss,
    train,
    train_network,
)
from training.config import BatchPPOConfig, load_config


def _member(tmp_path: Path, seed: int = 7) -> Path:
    """A compact policy file to hand off to (an untrained network: a greedy-like player
    whose argmax is still its own)."""
    torch.manual_seed(seed)
    cfg = BatchPPOConfig(player_counts=[2], **TINY)
    path = tmp_path / f"member{seed}.npz"
    export(CompactNet(32, 2), path, cfg, {})
    return path


def test_a_handed_off_seat_plays_the_members_move_read_as_the_smaller_game(tmp_path):
    """Self-play at four seats with the two-player member as handoff: every position of a
    learner with two players in is the member's most likely move on the two-player
    observation, and only those rows are value-only samples."""
    member = _member(tmp_path)
    cfg = BatchPPOConfig(player_counts=[4], self_play=1.0, handoff=str(member), **TINY)
    table = Table(cfg, 4, seed=3)
    handoff = Handoff(cfg.handoff, cfg.handoff_players, cfg.rules)
    torch.manual_seed(0)
    net = CompactNet(32, 2)
    stats = {"games": 0.0, "learner_wins": 0.0, "mixed_games": 0.0}
    ro, _ = collect(net, net, table, 300, torch.Generator().manual_seed(1), stats,
                    handoff=handoff)
    T, B = ro.act.shape
    obs = ro.obs.reshape(T * B, -1)
    ins = players_in(obs, 4)
    handed = ~ro.policy.reshape(-1)
    assert (handed == (ins <= 2)).all()  # every seat of self-play is a learner's
    assert handed.sum() > 200 and (~handed).sum() > 200
    rows = np.flatnonzero(handed)
    feats = table.env.hand_features(obs[rows])
    logits = handoff.policy.play_logits(active_observations(obs[rows], 4, 2), feats, 2, 3,
                                        ro.mask.reshape(T * B, -1)[rows])
    chosen = logits[np.arange(len(rows)), ro.act.reshape(-1)[rows]]
    # Its most likely move, up to float rounding between batches of other sizes (near-ties
    # of an untrained network).
    assert np.allclose(chosen, logits.max(-1), atol=1e-4)
    assert (chosen == logits.max(-1)).mean() > 0.95
    assert ro.learn.all()


def test_handed_off_rows_train_the_value_head_not_the_policy(tmp_path):
    torch.manual_seed(0)
    net = CompactNet(32, 2)
    cfg = BatchPPOConfig(player_counts=[3], **TINY)
    table = Table(cfg, 3, seed=5)
    from training.batch_ppo import _tensors

    cards, feats, dense = _tensors(table, table.out["observation"])
    mask = torch.from_numpy(table.out["action_mask"])
    B = mask.shape[0]
    act = torch.from_numpy(mask.numpy().argmax(1))
    args = (cards, feats, dense, mask, None, act, torch.full((B,), -1.0), torch.randn(B),
            torch.randn(B))
    grads = {}
    for name, share in (("handed", 0.0), ("own", 1.0)):
        net.zero_grad()
        ppo_loss(net, cfg, *args, torch.full((B,), share))[0].backward()
        grads[name] = (net.pi.weight.grad.abs().sum().item(),
                       net.v.weight.grad.abs().sum().item())
    assert grads["handed"][0] == 0.0 and grads["handed"][1] > 0.0
    assert grads["own"][0] > 0.0 and grads["own"][1] == grads["handed"][1]


def test_a_run_with_a_handoff_counts_its_own_decisions_and_writes_its_set(tmp_path):
    member = _member(tmp_path)
    cfg = BatchPPOConfig(name="h", player_counts=[3], self_play=1.0, total_samples=3000,
                         handoff=str(member),
                         **{**TINY, "rollout_steps": 120})
    _, summary = train_network(cfg, log=lambda m: None)
    assert summary["samples"] >= 3000 and summary["value_only_samples"] > 0
    out = tmp_path / "run"
    train(cfg, out, log=lambda m: None)
    played = load_compact_player(str(out / "set.yaml"))
    assert isinstance(played, CompactSet)
    assert set(played.members) == {2} and played.default is not None
    assert played.members[2][0].w["pi.weight"].tolist() == (
        load_compact_player(str(member)).w["pi.weight"].tolist())


@pytest.mark.parametrize("text, message", [
    ("handoff: ''\n", "handoff must be a compact policy file"),
    ("handoff: scat_batch_2p\nplayer_counts: [2, 3]\n",
     r"handoff_players must be an int from 2 to one less than the smallest player count \(2\)"),
    ("handoff: scat_batch_2p\nplayer_counts: [4]\nhandoff_players: 4\n",
     "handoff_players must be an int"),
])
def test_a_bad_handoff_is_refused_by_the_config(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text("trainer: batch\n" + text)
    with pytest.raises(ValueError, match=message):
        load_config(path)


def test_a_handoff_that_cannot_be_loaded_is_one_line(tmp_path):
    with pytest.raises(ValueError, match=r"^batch config: handoff '.*none.npz': .*"):
        Handoff(str(tmp_path / "none.npz"), 2, "standard")
    cfg = BatchPPOConfig(player_counts=[3], handoff="scat_batch_2p", **TINY)
    assert Handoff(cfg.handoff, 2, cfg.rules).policy.members[2][0].meta["player_counts"] == [2]


def test_the_in_training_check_hands_off_as_training_does(monkeypatch):
    """The quick check measures the set the run trains: the learner's positions with two
    players in are the handoff's, the others the network's."""
    from training import batch_ppo

    cfg = BatchPPOConfig(player_counts=[3], eval_opponent="expert", **TINY)
    handoff = Handoff("scat_batch_2p", 2, cfg.rules)
    seen: list[np.ndarray] = []
    real = Handoff.moves

    def spy(self, env, out, rows, advice=None):
        assert (players_in(out["observation"][rows], 3) == 2).all()
        seen.append(rows)
        return real(self, env, out, rows, advice)

    monkeypatch.setattr(Handoff, "moves", spy)
    torch.manual_seed(0)
    share, games = batch_ppo.evaluate_batched(CompactNet(32, 2), cfg, 3, 64, seed=1,
                                              handoff=handoff)
    assert games == 64 and 0.0 <= share <= 3.0
    assert sum(map(len, seen)) > 100
