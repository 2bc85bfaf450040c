"""The batched trainer with its rollouts on Ray workers (``ray_workers``, training.batch_ray):
the samples depend on the shards, not on how many workers host them; a killed worker is
replaced and the run goes on; the config refuses what cannot work in one line.

One local Ray instance (2 CPUs) serves the module; the runs are tiny (a few hundred samples).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from training.batch_ppo import CompactNet, LocalRollouts, network_pieces, train, train_network
from training.config import BatchPPOConfig

REPO = Path(__file__).resolve().parent.parent

TINY = dict(player_counts=[2], envs_per_table=16, rollout_steps=8, rollout_shards=2,
            opponents={"random": 0.5, "greedy": 0.5}, hidden=16, layers=1, epochs=1,
            minibatch_samples=64, total_samples=200, torch_threads=1, numba_threads=1,
            eval_every_updates=0, final_eval_games=0, progress=False)


def tiny(**changes: Any) -> BatchPPOConfig:
    return BatchPPOConfig(**{**TINY, **changes})


@pytest.fixture(scope="module")
def ray_instance() -> Any:
    ray = pytest.importorskip("ray")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
                 logging_level="ERROR",
                 runtime_env={"env_vars": {"PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}})
        try:
            yield ray
        finally:
            ray.shutdown()


def _stats(summary: dict[str, Any]) -> list[dict[str, Any]]:
    return summary["losses"]


def test_one_and_two_workers_give_the_same_samples_and_updates(ray_instance, tmp_path):
    """Workers only host shards: the same shards give the same rollouts, hence the same
    update statistics and weights, for 1 and 2 workers; in this process (torch's threads
    instead of a worker's one) the same up to float rounding. The 2-worker run is a whole
    ``train`` that writes its run folder on the driver."""
    _, one = train_network(tiny(ray_workers=1), log=lambda *_: None)
    two = train(tiny(ray_workers=2), tmp_path / "run", log=lambda *_: None)
    assert one["updates"] >= 2 and one["samples"] >= 200
    assert _stats(one) == _stats(two)
    assert (two["rollout_workers"], two["worker_restarts"]) == (2, 0)
    assert (tmp_path / "run" / "policy.npz").exists()
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert saved["samples"] == one["samples"]
    _, here = train_network(tiny(), log=lambda *_: None)
    assert here["rollout_workers"] == 0
    for a, b in zip(_stats(here), _stats(one), strict=True):
        assert a["samples"] == b["samples"]
        for key in ("loss", "value_loss", "entropy"):
            assert a[key] == pytest.approx(b[key], rel=1e-4, abs=1e-6)


def test_a_killed_worker_is_replaced_and_the_run_goes_on(ray_instance, monkeypatch):
    """``ray.kill`` of a worker between rollouts: the next rollout replaces it (its shard
    starts from fresh games) and still returns every shard's batches; the other worker's
    shard goes on where it was. Workers that keep dying stop the run in one line."""
    from training import batch_ray

    cfg = tiny(ray_workers=2)
    pieces = network_pieces(cfg)
    net = CompactNet(cfg.hidden, cfg.layers, pieces=pieces)
    rollouts = batch_ray.RayRollouts(cfg, pieces)
    try:
        first = rollouts.collect(net, net, 0.0)
        ray_instance.kill(rollouts.actors[0])
        second = rollouts.collect(net, net, 0.0)
        monkeypatch.setattr(batch_ray, "MAX_RESTARTS", 0)
        ray_instance.kill(rollouts.actors[1])
        with pytest.raises(ValueError, match=r"^rollout workers died 1 times in one update "):
            rollouts.collect(net, net, 0.0)
    finally:
        rollouts.close()
    assert len(first) == len(second) == cfg.rollout_shards * len(cfg.player_counts)
    assert (rollouts.restarts, rollouts.slot_restarts) == (1, [1, 0])
    # shard 0 restarted from new deals: not the games it began with
    assert not torch.equal(second[0][0], _fresh(cfg, pieces, net)[0][0])


def _fresh(cfg: BatchPPOConfig, pieces: tuple[str, ...], net: CompactNet) -> list[Any]:
    """The first rollout of the run's shards, stepped in this process (own seeds)."""
    local = LocalRollouts(dataclasses.replace(cfg, ray_workers=0), pieces,
                          torch.Generator(), None)
    return local.collect(net, net, 0.0)


@pytest.mark.parametrize("changes, message", [
    ({"envs_per_table": 10, "rollout_shards": 3},
     "envs_per_table (10) must be a multiple of rollout_shards (3)"),
    ({"rollout_shards": 2, "ray_workers": 3},
     "ray_workers (3) must be at most rollout_shards (2): a worker hosts whole shards"),
    ({"ray_address": "10.0.0.5:6379"},
     "ray_address needs ray_workers (at least 1): without workers the rollouts run in this "
     "process"),
    ({"ray_workers": 1, "ray_address": "nowhere"},
     "ray_address must be null (this machine), 'auto' or HOST:PORT, got 'nowhere'"),
])
def test_the_config_refuses_shards_and_workers_that_cannot_work(changes, message):
    with pytest.raises(ValueError) as err:
        tiny(**{"rollout_shards": 1, **changes})
    assert str(err.value) == f"batch config: {message}"


def test_shards_in_this_process_are_the_games_the_workers_step():
    """An in-process run of two shards steps the same games as the workers would: shard
    seeds come from the config and the shard's index alone."""
    cfg = tiny()
    pieces = network_pieces(cfg)
    net = CompactNet(cfg.hidden, cfg.layers, pieces=pieces)
    a, b = _fresh(cfg, pieces, net), _fresh(cfg, pieces, net)
    assert all(torch.equal(x, y) for ba, bb in zip(a, b, strict=True)
               for x, y in zip(ba, bb, strict=True))
    assert not np.array_equal(a[0][0].numpy(), a[1][0].numpy())  # two shards, two deals


def test_a_worker_that_cannot_import_a_module_is_one_line(ray_instance):
    """A rollout worker is an actor: a module missing on its node kills it while it is
    built, and Ray's report is the constructor's traceback inside the actor's death."""
    from training.tournament.ray_backend import missing_on_worker

    class Worker:
        def __init__(self) -> None:
            import scat_missing_module_for_the_test  # noqa: F401  (absent on the worker)

        def ready(self) -> bool:
            return True

    actor = ray_instance.remote(num_cpus=1, max_restarts=0)(Worker).remote()
    with pytest.raises(ray_instance.exceptions.RayActorError) as err:
        ray_instance.get(actor.ready.remote())
    line = str(missing_on_worker(err.value))
    assert line.startswith("a Ray worker on node ")
    assert " cannot import 'scat_missing_module_for_the_test': install scat-env" in line
