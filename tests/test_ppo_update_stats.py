"""Every PPO update logs what CleanRL logs (approx KL, clip fraction, explained variance,
entropy, learning rate, the losses) to the run's summary and its TensorBoard folder."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from training.batch_ppo import (  # noqa: E402
    UPDATE_STATS,
    CompactNet,
    Table,
    _tensors,
    explained_variance,
    ppo_loss,
    train,
    train_network,
)
from training.config import BatchPPOConfig  # noqa: E402

TINY = dict(envs_per_table=64, rollout_steps=16, minibatch_samples=512, epochs=2, hidden=32,
            eval_every_updates=0, final_eval_games=0, torch_threads=1, progress=False)


def _minibatch(seed: int = 5):
    torch.manual_seed(0)
    net = CompactNet(32, 2)
    cfg = BatchPPOConfig(player_counts=[3], **TINY)
    table = Table(cfg, 3, seed=seed)
    cards, feats, dense = _tensors(table, table.out["observation"])
    mask = torch.from_numpy(table.out["action_mask"])
    act = torch.from_numpy(mask.numpy().argmax(1))
    with torch.no_grad():
        logits, _ = net(cards, feats, dense, mask)
        logp = torch.log_softmax(logits, -1).gather(1, act[:, None]).squeeze(-1)
    B = mask.shape[0]
    return net, cfg, (cards, feats, dense, mask, None, act, logp, torch.randn(B),
                      torch.randn(B), torch.ones(B))


def test_the_policy_that_collected_the_rollout_is_zero_kl_and_never_clipped():
    net, cfg, args = _minibatch()
    loss, stats = ppo_loss(net, cfg, *args)
    assert set(stats) == set(UPDATE_STATS) - {"explained_variance", "learning_rate"}
    assert abs(stats["approx_kl"]) < 1e-6 and stats["clip_fraction"] == 0.0
    assert stats["loss"] == pytest.approx(float(loss.detach()))
    assert stats["loss"] == pytest.approx(stats["policy_loss"] + cfg.vf_coef
                                          * stats["value_loss"] - cfg.ent_coef
                                          * stats["entropy"], rel=1e-5, abs=1e-6)
    assert stats["entropy"] > 0


def test_a_moved_policy_shows_kl_and_clipping():
    net, cfg, args = _minibatch()
    moved = list(args)
    moved[6] = args[6] - 1.0  # the collecting policy gave these moves e times less weight
    _, stats = ppo_loss(net, cfg, *moved)
    assert stats["approx_kl"] > 0.5 and stats["clip_fraction"] == 1.0


def test_explained_variance_is_one_for_a_perfect_value_head_and_zero_for_the_mean():
    target = torch.randn(1000)
    assert explained_variance(target, target) == pytest.approx(1.0)
    assert explained_variance(torch.full_like(target, float(target.mean())), target) == \
        pytest.approx(0.0, abs=1e-6)
    assert math.isnan(explained_variance(torch.zeros(4), torch.ones(4)))


def test_every_update_is_in_the_summary_and_in_tensorboard(tmp_path):
    cfg = BatchPPOConfig(player_counts=[2], total_samples=2000, **TINY)
    summary = train(cfg, tmp_path)
    assert len(summary["losses"]) == summary["updates"] >= 2
    for point in summary["losses"]:
        assert set(UPDATE_STATS) <= set(point)
        assert point["learning_rate"] == cfg.lr and 0.0 <= point["clip_fraction"] <= 1.0
        assert point["approx_kl"] >= -1e-6 and math.isfinite(point["loss"])
    assert summary["last_update"] == summary["losses"][-1]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"losses/approx_kl", "losses/clip_fraction", "losses/explained_variance",
            "losses/entropy", "charts/learning_rate"} <= tags
    assert len(events.Scalars("losses/approx_kl")) == summary["updates"]
    from training.evaluate import run_report

    report = run_report("batch", cfg, tmp_path, summary)
    assert "## Last update" in report
    assert "approx_kl | clip_fraction | explained_variance" in report


def test_the_statistics_leave_the_training_unchanged():
    """Two runs of one seed give the same weights: the statistics draw no random numbers
    and take no gradient."""
    cfg = BatchPPOConfig(player_counts=[2], total_samples=1500, **TINY)
    a, _ = train_network(cfg, log=lambda m: None)
    b, _ = train_network(cfg, log=lambda m: None)
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y), name
