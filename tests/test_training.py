"""Training: the Gymnasium wrapper, both trainers, checkpoints, and trained policies as agents."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agents.neural.encoding import PaddedEncoder, padding_index
from agents.registry import make_agent
from scat_env import GameState, Rules
from scat_env.observation import ObservationEncoder, observation_size
from scat_env.view import make_view
from training.config import SB3Config, load_config
from training.evaluate import evaluate_agent, wilson
from training.single_agent import ScatSingleAgentEnv

SMALL = dict(parallel_games=32, rollout_samples=1024, minibatch_samples=512, epochs=2, hidden=64,
             eval_every_updates=0, final_eval_games=0, checkpoint_every_updates=1, progress=False,
             torch_threads=1, snapshot_every_updates=1)


def _win_rate_vs_random(spec_or_factory, games: int = 120, players: int = 2) -> float:
    ev = evaluate_agent(spec_or_factory, Rules(), ["random"], [players], games, seed=3)
    return ev["win_rate"][f"random_x{players}"]


# -- observation padding -------------------------------------------------------------------
def test_padded_observation_keeps_every_entry_of_the_small_table():
    rules = Rules()
    state = GameState(3, rules, seed=5)
    for _ in range(7):
        state.apply_action(state.legal_actions()[0])
    view = make_view(state, state.current_player)
    small = ObservationEncoder(3, rules).encode(view)
    big = PaddedEncoder(rules, 6).encode(view)
    assert big.shape == (observation_size(6) + 52,)
    np.testing.assert_array_equal(big[padding_index(3, 6)], small)
    base = big[: observation_size(6)]
    assert base.sum() == pytest.approx(small.sum())  # the missing seats stay zero


def test_discard_values_say_what_each_discard_leaves():
    from scat_env.scoring import hand_value

    rules = Rules()
    state = GameState(2, rules, seed=1)
    state.apply_action(52)  # draw from the stock: four cards, discard phase
    view = make_view(state, state.current_player)
    extra = PaddedEncoder(rules, 6).encode(view)[observation_size(6):]
    for c in view.hand:
        rest = [x for x in view.hand if x != c]
        assert extra[c] == pytest.approx(hand_value(rest, rules) / 41)
    assert np.count_nonzero(extra) <= 4


def test_padding_rejects_tables_larger_than_the_policy():
    with pytest.raises(ValueError, match="2..6 players"):
        padding_index(7, 6)


# -- the Gymnasium wrapper -----------------------------------------------------------------
def test_single_agent_env_passes_sb3_check_env():
    from stable_baselines3.common.env_checker import check_env

    check_env(ScatSingleAgentEnv([2, 3], opponents={"random": 1, "greedy": 1}, hand_reward=0.1))


def test_single_agent_env_delivers_the_learner_result_every_episode():
    env = ScatSingleAgentEnv([2, 3, 4], opponents=["greedy"])
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    for _ in range(15):
        env.reset()
        total, done, info = 0.0, False, {}
        while not done:
            mask = env.action_masks()
            assert mask.any()
            _, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            total += r
            done = term or trunc
        if term:  # the final result is +1 or -1/(n-1), whoever made the last move
            n = info["num_players"]
            assert total == pytest.approx(1.0 if info["winner"] == info["seat"] else -1 / (n - 1))


# -- native trainer ------------------------------------------------------------------------








# -- SB3 path ------------------------------------------------------------------------------
def test_sb3_smoke_run_beats_random(tmp_path):
    from training.adapters.sb3 import train as sb3_train

    cfg = SB3Config(player_counts=[2], opponents={"random": 1.0}, total_samples=6144, n_envs=4,
                    vec_env="dummy", rollout_samples_per_env=512, minibatch_samples=512, epochs=4,
                    hidden=64, eval_every_samples=0, final_eval_games=0,
                    checkpoint_every_samples=100_000, progress=False, seed=3)
    sb3_train(cfg, tmp_path, log=lambda m: None)
    after = _win_rate_vs_random(lambda s: make_agent(f"sb3:{tmp_path / 'checkpoint.zip'}", seed=s),
                                games=80)
    assert after > 0.55


def test_sb3_final_report_uses_the_duplicate_deal_harness(tmp_path):
    from training.adapters.sb3 import train as sb3_train

    cfg = SB3Config(player_counts=[2], opponents={"random": 1.0}, total_samples=1024, n_envs=2,
                    vec_env="dummy", rollout_samples_per_env=512, minibatch_samples=512, epochs=1,
                    hidden=32, eval_every_samples=0, final_eval_games=4, eval_opponents=["random"],
                    eval_players=[2, 3], checkpoint_every_samples=100_000, progress=False, seed=3)
    final = sb3_train(cfg, tmp_path, log=lambda m: None)["final_eval"]
    assert final["harness"].startswith("training.tournament")
    assert set(final["games"]) == {"random_x2", "random_x3"}
    # whole duplicate deals: every deal in all n rotations
    assert final["games"]["random_x2"] % 2 == 0 and final["games"]["random_x3"] % 3 == 0
    assert (tmp_path / "final_eval" / "random_x2" / "results.json").is_file()


# -- configs -------------------------------------------------------------------------------


def test_wilson_interval_contains_the_estimate():
    lo, hi = wilson(30, 100)
    assert lo < 0.3 < hi and 0.2 < lo and hi < 0.41






# -- scat train: run folder, progress, report ------------------------------------------------
def test_progress_follows_whichever_budget_ends_the_run():
    from training.progress import budget_fraction

    # a 13-minute time-limited run with a huge sample budget: half the time is half the run
    assert budget_fraction(2_000_000, 50_000_000, 390.0, 780.0) == pytest.approx(0.5)
    # a sample-limited run, or one whose samples run out before its time
    assert budget_fraction(30_000, 60_000, 5.0, None) == pytest.approx(0.5)
    assert budget_fraction(45_000, 60_000, 1.0, 780.0) == pytest.approx(0.75)
    assert budget_fraction(61_763, 60_000, 5.0, None) == 1.0  # the last update overshoots


def test_a_run_folder_holding_a_run_needs_resume_or_overwrite(tmp_path):
    from scat_cli.errors import CliError
    from scat_cli.train import prepare_run_folder

    prepare_run_folder(tmp_path, resume=False, overwrite=False)  # an empty folder is fine
    with pytest.raises(CliError, match="holds no run to continue"):
        prepare_run_folder(tmp_path, resume=True, overwrite=False)
    (tmp_path / "checkpoint.pt").write_bytes(b"x")
    (tmp_path / "tb").mkdir()
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(CliError, match="already holds a run.*--resume.*--overwrite"):
        prepare_run_folder(tmp_path, resume=False, overwrite=False)
    prepare_run_folder(tmp_path, resume=True, overwrite=False)  # continue: nothing removed
    assert (tmp_path / "checkpoint.pt").exists()
    prepare_run_folder(tmp_path, resume=False, overwrite=True)
    assert not (tmp_path / "checkpoint.pt").exists() and not (tmp_path / "tb").exists()
    assert (tmp_path / "notes.txt").read_text() == "mine"  # only what a run writes goes




def test_evaluation_lines_say_multiples_of_the_fair_share():
    from training.evaluate import fair_share_line

    ev = {"win_rate": {"random_x2": 0.99, "greedy_x3": 0.4}}
    assert fair_share_line(ev) == "random 2p 1.98x, greedy 3p 1.20x fair share"




def test_an_rllib_reports_next_commands_name_its_export_and_its_one_table_size(tmp_path):
    """An RLlib policy reads one table size's observation: the commands a report suggests
    play it there, through the ``rllib:`` spec, with no TensorBoard line where none is kept."""
    from training.config import RLlibConfig
    from training.evaluate import run_report

    text = run_report("rllib", RLlibConfig(num_players=4), tmp_path, {"samples": 10})
    spec = f"rllib:{tmp_path / 'policy'}"
    assert f"scat play --players 4 --opponents {spec} " in text
    assert f"python -m training.evaluate {spec} --players 4 --out" in text
    assert f"scat tournament --field {spec},expert,expert,expert --out" in text
    assert "sb3:" not in text and "tensorboard" not in text


# -- the run folder, the report and the final evaluation, on the batched trainer ------------
BATCH_TINY = dict(envs_per_table=32, rollout_steps=16, minibatch_samples=512, epochs=1,
                  hidden=16, eval_every_updates=0, torch_threads=1, numba_threads=1,
                  final_eval_workers=1, progress=False)


def test_config_typo_is_an_error_naming_the_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("trainer: batch\nlearning_rate: 0.001\n")
    with pytest.raises(ValueError, match="unknown field.*learning_rate"):
        load_config(path)


def test_final_evaluation_uses_duplicate_deals_and_discards_stale_games(tmp_path):
    from training.batch_ppo import train
    from training.config import BatchPPOConfig

    cfg = BatchPPOConfig(player_counts=[2], seed=4, total_samples=500, final_eval_games=8,
                         eval_opponents=["random"], eval_players=[2, 3],
                         **{k: v for k, v in BATCH_TINY.items()})
    first = train(cfg, tmp_path, log=lambda m: None)["final_eval"]
    assert "duplicate deals" in first["harness"]
    # every deal is played in all n seat rotations: a multiple of n games per table size
    assert first["games"]["random_x2"] % 2 == 0 and first["games"]["random_x3"] % 3 == 0
    # a second run into the same folder evaluates its own policy, not the stale games
    again = train(dataclasses.replace(cfg, final_eval_games=4), tmp_path, log=lambda m: None)
    assert again["final_eval"]["games"]["random_x2"] < first["games"]["random_x2"]


def test_the_default_opponent_plays_from_any_folder(tmp_path, monkeypatch):
    from agents.match import play_game
    from agents.registry import DEFAULT_POLICIES
    from scat_env import Rules

    monkeypatch.chdir(tmp_path)
    agent = make_agent(DEFAULT_POLICIES[0], seed=0)
    rec = play_game([agent, make_agent("random", seed=1)], Rules(), seed=5)
    assert rec.winner in (0, 1)


def test_scat_train_refuses_a_second_run_into_the_same_folder(tmp_path, capsys):
    from scat_cli.main import main

    config = tmp_path / "tiny.yaml"
    config.write_text("trainer: batch\nplayer_counts: [2]\nenvs_per_table: 32\n"
                      "rollout_steps: 16\nminibatch_samples: 512\nepochs: 1\nhidden: 16\n"
                      "total_samples: 256\neval_every_updates: 0\nfinal_eval_games: 0\n"
                      "torch_threads: 1\nnumba_threads: 1\nprogress: false\n")
    out = tmp_path / "run"
    assert main(["train", "--config", str(config), "--out", str(out)]) == 0
    assert (out / "report.md").is_file() and (out / "policy.npz").is_file()
    assert main(["train", "--config", str(config), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "already holds a run" in err[-1]
    assert main(["train", "--config", str(config), "--out", str(out), "--overwrite"]) == 0
    assert main(["train", "--config", str(config), "--out", str(out), "--resume"]) == 2
    assert "does not resume" in capsys.readouterr().err


def test_report_links_the_curve_shows_the_config_and_the_next_commands(tmp_path):
    import yaml

    from training.batch_ppo import train
    from training.config import BatchPPOConfig
    from training.evaluate import run_report

    cfg = BatchPPOConfig(player_counts=[2], seed=4, total_samples=500, eval_every_updates=1,
                         eval_games=40, final_eval_games=4, eval_opponents=["random", "greedy"],
                         eval_players=[2],
                         **{k: v for k, v in BATCH_TINY.items() if k != "eval_every_updates"})
    summary = train(cfg, tmp_path, log=lambda m: None)
    assert (tmp_path / "learning_curve.png").stat().st_size > 10_000
    text = run_report("batch", cfg, tmp_path, summary)
    assert "![learning curve](learning_curve.png)" in text
    assert f"scat play --players 2 --opponents compact:{tmp_path / 'policy.npz'}" in text
    assert f"python -m training.evaluate compact:{tmp_path / 'policy.npz'} --players 2 " in text
    assert f"scat tournament --field compact:{tmp_path / 'policy.npz'},expert --out" in text
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert yaml.safe_load(block) == {"trainer": "batch", **dataclasses.asdict(cfg)}
