"""RLlib's PPO on the batched engine through ``training.adapters.rllib_runner``: the env
runner's episodes are whole games cut only where a sample ends, and the train batch its
learner connector makes is the one RLlib's own PPO pipeline (one extra time step per episode,
a value pass, ``GeneralAdvantageEstimation``) makes from the same episodes.
"""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from training.config import RLlibConfig  # noqa: E402


@pytest.fixture(scope="module")
def algo() -> Iterator[Any]:
    """A small ``env: batched`` PPO: 16 games, a turn cap low enough that some games are cut
    (truncated), so that every way an episode can end is in a few samples."""
    from training.adapters.rllib import algorithm_config
    from training.tournament.ray_backend import start_training_ray

    cfg = RLlibConfig(env="batched", num_players=3, opponents={"greedy": 0.5, "random": 0.5},
                      envs_per_env_runner=16, train_batch_samples=256, minibatch_samples=128,
                      epochs=1, hidden=16, layers=1, max_turns=12, seed=5, hand_reward=0.25)
    start_training_ray(cfg.ray_address, 1)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r".*Illegal move made", UserWarning)
        built = algorithm_config(cfg).build_algo()
    yield built
    built.stop()


def _samples(algo: Any, n: int) -> list[list[Any]]:
    return [algo.env_runner.sample(num_timesteps=256) for _ in range(n)]


def test_episodes_are_whole_games_cut_only_where_a_sample_ends(algo):
    """A game's chunks share one id, follow on (``t_started``), and a cut chunk's last view
    is the next chunk's first; every game that ended says how (terminated, or truncated at
    the turn cap), and only the last chunk of a game has ended."""
    chunks: dict[str, list[Any]] = defaultdict(list)
    for sample in _samples(algo, 4):
        assert sum(len(e) for e in sample) >= 256
        for e in sample:
            assert len(e.get_observations()["observations"]) == len(e) + 1
            chunks[e.id_].append(e)
    ways = set()
    for parts in chunks.values():
        for before, after in zip(parts, parts[1:], strict=False):
            assert not before.is_done
            assert after.t_started == before.t
            np.testing.assert_array_equal(before.get_observations(-1)["observations"],
                                          after.get_observations(0)["observations"])
        if parts[-1].is_done:
            ways.add("terminated" if parts[-1].is_terminated else "truncated")
            assert parts[-1].is_terminated != parts[-1].is_truncated
    assert ways == {"terminated", "truncated"}
    assert any(len(parts) > 1 for parts in chunks.values())


def test_the_train_batch_is_what_rllibs_own_ppo_pipeline_makes(algo):
    """Same episodes, two pipelines: :class:`ScatBatchColumns` on the runner's precomputed
    GAE, and RLlib's default PPO learner pipeline (AddOneTsToEpisodesAndTruncate, the batch
    pieces, GeneralAdvantageEstimation) with the learner's module. Observations, actions,
    log-probabilities, advantages and value targets agree."""
    from ray.rllib.connectors.learner import (
        AddColumnsFromEpisodesToTrainBatch,
        AddObservationsFromEpisodesToBatch,
        AddOneTsToEpisodesAndTruncate,
        BatchIndividualItems,
        GeneralAdvantageEstimation,
        LearnerConnectorPipeline,
        NumpyToTensor,
    )
    from ray.rllib.core import DEFAULT_MODULE_ID
    from ray.rllib.core.columns import Columns
    from ray.rllib.evaluation.postprocessing import Postprocessing

    from training.adapters.rllib_runner import ScatBatchColumns

    _samples(algo, 2)  # games under way, so that chunks start mid-game
    episodes = algo.env_runner.sample(num_timesteps=256)
    assert any(e.is_truncated for e in episodes) or any(e.t_started for e in episodes)
    module = algo.learner_group._learner.module
    ours = ScatBatchColumns()(rl_module=module, batch={}, episodes=episodes)[DEFAULT_MODULE_ID]
    config = algo.config
    theirs_pipe = LearnerConnectorPipeline(connectors=[
        AddOneTsToEpisodesAndTruncate(),
        AddObservationsFromEpisodesToBatch(as_learner_connector=True),
        AddColumnsFromEpisodesToTrainBatch(),
        BatchIndividualItems(),
        NumpyToTensor(as_learner_connector=True),
        GeneralAdvantageEstimation(gamma=config.gamma, lambda_=config.lambda_)])
    theirs = theirs_pipe(rl_module=module, batch={}, episodes=copy.deepcopy(episodes),
                         shared_data={}, metrics=None)[DEFAULT_MODULE_ID]
    keep = theirs[Columns.LOSS_MASK].numpy()

    def col(batch: dict, key: Any, rows: Any = slice(None)) -> np.ndarray:
        value = batch[key]
        return (value["observations"] if isinstance(value, dict) else value).numpy()[rows]

    assert len(col(ours, Columns.ACTIONS)) == int(keep.sum())
    for key in (Columns.OBS, Columns.ACTIONS, Columns.ACTION_LOGP):
        np.testing.assert_allclose(col(ours, key), col(theirs, key, keep), rtol=1e-6)
    np.testing.assert_allclose(col(ours, Postprocessing.VALUE_TARGETS),
                               col(theirs, Postprocessing.VALUE_TARGETS, keep),
                               rtol=1e-4, atol=1e-4)
    # the advantages: the value targets less the values, standardised over the rows the loss
    # reads (RLlib's standardisation also counts the step it adds to each episode, which its
    # loss masks out)
    import torch

    with torch.no_grad():
        values = module[DEFAULT_MODULE_ID].compute_values(ours).numpy()
    raw = col(ours, Postprocessing.VALUE_TARGETS) - values
    np.testing.assert_allclose(col(ours, Postprocessing.ADVANTAGES),
                               (raw - raw.mean()) / raw.std(), rtol=1e-3, atol=1e-3)


def test_the_runner_says_it_samples_by_time_steps(algo):
    with pytest.raises(ValueError, match="samples by time steps"):
        algo.env_runner.sample(num_episodes=2)


def test_rllibs_own_runner_still_trains_the_batched_env(tmp_path):
    """``batched_runner: rllib``: RLlib's SingleAgentEnvRunner and default PPO learner
    pipeline over the same vector env (the slower path the benchmark compares with) trains
    and exports; the aec env refuses the field in one line."""
    import dataclasses

    from training.adapters.rllib import train

    cfg = RLlibConfig(env="batched", batched_runner="rllib", num_players=3,
                      opponents={"greedy": 1.0}, envs_per_env_runner=8,
                      train_batch_samples=128, minibatch_samples=64, epochs=1, hidden=16,
                      layers=1, total_samples=256, final_eval_games=0, progress=False)
    summary = train(cfg, tmp_path / "run", log=lambda *_: None)
    assert summary["samples"] >= 256
    assert (tmp_path / "run" / "policy" / "meta.json").exists()
    with pytest.raises(ValueError, match=r"batched_runner is for env: batched"):
        dataclasses.replace(cfg, env="aec", opponents={"self": 1.0}, imitate=None)


def test_a_remote_env_runner_samples_with_the_learners_weights(algo):
    """``num_env_runners: 1``: the runner is a Ray actor; an iteration trains on its
    episodes, and after the update its module holds the learner's weights."""
    import numpy as np

    from training.adapters.rllib import algorithm_config, main_weights

    cfg = RLlibConfig(env="batched", num_players=3, opponents={"greedy": 1.0},
                      num_env_runners=1, envs_per_env_runner=8, train_batch_samples=128,
                      minibatch_samples=64, epochs=1, hidden=16, layers=1, seed=2)
    remote = algorithm_config(cfg).build_algo()
    try:
        result = remote.train()
        assert result["env_runners"]["num_env_steps_sampled"] >= 128
        learner = main_weights(remote)
        state = remote.env_runner_group.foreach_env_runner(
            lambda r: {k: v.detach().cpu().numpy() for k, v in r.module.state_dict().items()},
            local_env_runner=False)[0]
        for name, value in learner.items():
            np.testing.assert_array_equal(state[name], value)
    finally:
        remote.stop()
