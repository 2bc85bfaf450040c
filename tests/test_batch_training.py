"""The batched trainer: its network plays as trained, its file is safe, its run is whole.

- The numpy forward pass of ``compact:PATH`` (:class:`agents.compact.CompactPolicy`) gives
  the torch network's logits on the observations of real games.
- A policy file round-trips; a flipped byte, a weight of the wrong shape, a missing member
  or another kind of file is refused in one line.
- The agent plays whole games legally at every table size from its views alone.
- GAE follows each seat's own chain of decisions; a config with an unknown opponent is
  refused; ``scat train`` with ``trainer: batch`` trains, writes the policy and evaluates it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from agents.batch_expert import BatchExpert
from agents.compact import NUM_CODES, CompactPolicy, load_compact, save_compact, table_pieces
from agents.match import play_game
from agents.registry import make_agent
from scat_cli.main import main
from scat_env import Rules
from scat_env.batch import BatchEnv
from scat_env.batch.kernels import C_HAND, C_UNSEEN
from training.batch_learner import points_shaping
from training.batch_ppo import (
    EXPERT,
    GREEDY,
    LEARNER,
    CompactNet,
    Rollout,
    Table,
    _act,
    _tensors,
    advantages,
    collect,
    export,
    train_network,
    warm_start,
)
from training.config import BatchPPOConfig, load_config

TINY = dict(envs_per_table=64, rollout_steps=16, minibatch_samples=512, epochs=1, hidden=32,
            eval_every_updates=0, final_eval_games=0, torch_threads=1)


def _trained(tmp_path: Path, samples: int = 3000, **fields) -> tuple[CompactNet, Path]:
    cfg = BatchPPOConfig(player_counts=[2, 4], total_samples=samples, **TINY, **fields)
    net, summary = train_network(cfg, log=lambda m: None)
    assert summary["samples"] >= samples
    path = tmp_path / "policy.npz"
    export(net, path, cfg, {"samples": summary["samples"]})
    return net, path


class _Table:
    """What ``_tensors`` needs of a training table."""

    def __init__(self, env: BatchEnv) -> None:
        self.env, self.n, self.start_lives = env, env.num_players, env.rules.start_lives
        self.pieces = table_pieces(env.rules)


def test_the_numpy_forward_pass_gives_the_torch_logits(tmp_path):
    net, path = _trained(tmp_path)
    policy = CompactPolicy(*load_compact(path))
    for n in (2, 5, 10):
        env = BatchEnv(64, n, "standard", seed=n)
        out = env.reset()
        for _ in range(20):
            out = env.step(env.random_actions())
        obs, mask = out["observation"].copy(), out["action_mask"].copy()
        cards, feats, dense = _tensors(_Table(env), obs)
        with torch.no_grad():
            want, _ = net(cards, feats, dense, torch.from_numpy(mask))
        got = policy.logits(obs, feats.numpy(), dense.numpy(), mask)
        legal = mask
        assert np.allclose(got[legal], want.numpy()[legal], atol=1e-4)


def test_with_expert_advice_the_numpy_player_gives_the_torch_logits(tmp_path):
    """A policy trained with ``expert_advice`` reads the expert's move; the player that
    plays it from a view computes that move with ``ExpertAgent`` and adds the same bonus."""
    net, path = _trained(tmp_path, expert_advice=True)
    policy = CompactPolicy(*load_compact(path))
    assert policy.advice and load_compact(path)[1]["expert_advice"] is True
    expert = BatchExpert("standard")
    for n in (3, 8):
        env = BatchEnv(64, n, "standard", seed=n)
        out = env.reset()
        for _ in range(25):
            out = env.step(env.random_actions())
        obs, mask = out["observation"].copy(), out["action_mask"].copy()
        advice = expert.actions(env)
        cards, feats, dense = _tensors(_Table(env), obs)
        with torch.no_grad():
            want, _ = net(cards, feats, dense, torch.from_numpy(mask), torch.from_numpy(advice))
            plain, _ = net(cards, feats, dense, torch.from_numpy(mask))
        got = policy.logits(obs, feats.numpy(), dense.numpy(), mask, advice)
        assert np.allclose(got[mask], want.numpy()[mask], atol=1e-4)
        assert not np.allclose(want.numpy()[mask], plain.numpy()[mask], atol=1e-2)


def test_an_untrained_advised_network_plays_the_experts_moves():
    """The bonus starts high enough that the policy starts as the expert and learns where
    to leave it (:data:`training.batch_ppo.ADVICE_GAIN`)."""
    net = CompactNet(64, 2, advice=True)
    env = BatchEnv(512, 5, "standard", seed=1)
    expert = BatchExpert("standard")
    out = env.reset()
    same = total = 0
    for _ in range(30):
        advice = expert.actions(env)
        cards, feats, dense = _tensors(_Table(env), out["observation"])
        with torch.no_grad():
            logits, _ = net(cards, feats, dense, torch.from_numpy(out["action_mask"]),
                            torch.from_numpy(advice))
        mine = logits.argmax(-1).numpy()
        same += int((mine == advice).sum())
        total += len(advice)
        out = env.step(advice)
    assert same / total > 0.95


def test_the_agent_of_an_advised_policy_plays_whole_games(tmp_path):
    _, path = _trained(tmp_path, expert_advice=True)
    agent = make_agent(f"compact:{path}")
    assert agent._expert is not None  # it asks the expert for its move
    for n in (2, 7):
        agents = [agent] + [make_agent("greedy")] * (n - 1)
        record = play_game(agents, Rules.preset("standard"), seed=n)
        assert record.actions and (record.winner is not None or record.truncated)


def test_an_unseen_card_adds_nothing_to_the_embedding_even_after_training(tmp_path):
    """The trainer sums only the seen cards' rows; the player sums all 52. They agree
    because an unseen card's rows start at zero and get no gradient."""
    net, _ = _trained(tmp_path)
    rows = net.cards.weight.detach().view(52, NUM_CODES, -1)
    assert torch.count_nonzero(rows[:, C_UNSEEN]) == 0
    assert torch.count_nonzero(rows[:, C_HAND]) > 0


def test_the_agent_plays_whole_games_legally_at_every_table_size(tmp_path):
    _, path = _trained(tmp_path)
    for n in (2, 3, 6, 10):
        agents = [make_agent(f"compact:{path}", seed=1)] + [make_agent("greedy")] * (n - 1)
        record = play_game(agents, Rules.preset("standard"), seed=n)
        assert record.actions and (record.winner is not None or record.truncated)


def _rewrite(path: Path, name: str, data: bytes | None) -> None:
    with zipfile.ZipFile(path) as zf:
        members = {m: zf.read(m) for m in zf.namelist()}
    if data is None:
        members.pop(name)
    else:
        members[name] = data
    with zipfile.ZipFile(path, "w") as zf:
        for m, blob in members.items():
            zf.writestr(m, blob)


def _flip(blob: bytes) -> bytes:
    b = bytearray(blob)
    b[-3] ^= 0x40
    return bytes(b)


@pytest.mark.parametrize("damage, message", [
    (lambda p: _rewrite(p, "pi.bias.npy", _flip(zipfile.ZipFile(p).read("pi.bias.npy"))),
     "does not match its hash"),
    (lambda p: _rewrite(p, "v.bias.npy", None), "weights do not fit"),
    (lambda p: p.write_bytes(b"not a zip at all"), "not a readable compact policy"),
    (lambda p: _rewrite(p, "metadata.json.npy", None), "no metadata.json"),
])
def test_a_damaged_policy_file_is_one_line(tmp_path, damage, message):
    _, path = _trained(tmp_path)
    damage(path)
    with pytest.raises(ValueError, match=message) as err:
        load_compact(path)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError):
        make_agent(f"compact:{path}")


def test_a_preset_with_calls_is_refused_when_the_agent_is_built(tmp_path):
    _, path = _trained(tmp_path)
    agent = make_agent(f"compact:{path}")
    agent.check_table(3, Rules.preset("standard"))
    with pytest.raises(ValueError, match="does not read their phase .*the hammer call"):
        agent.check_table(3, Rules.preset("hammer"))


def test_gae_follows_each_seats_own_chain():
    """Two seats alternating in one game: each sample's advantage uses its own seat's next
    value, and a done sample does not look past the game's end."""
    ro = Rollout(4, 1, 2, 63)
    ro.seat[:, 0] = [0, 1, 0, 1]
    ro.val[:, 0] = [0.1, 0.2, 0.3, 0.4]
    ro.rew[:, 0] = [0.0, 0.0, 1.0, -0.5]
    ro.done[:, 0] = [False, False, True, True]
    boot = np.array([[9.0, 9.0]])
    adv, ret = advantages(ro, boot, gamma=1.0, lam=1.0)
    assert adv[2, 0] == pytest.approx(1.0 - 0.3)  # seat 0's last: terminal
    assert adv[0, 0] == pytest.approx((0.3 - 0.1) + adv[2, 0])  # chains to step 2
    assert adv[1, 0] == pytest.approx((0.4 - 0.2) + adv[3, 0])  # seat 1: to step 3
    assert np.allclose(ret, adv + ro.val)


def _race_rollout(seed: int, steps: int, **fields: Any) -> tuple[Any, list[tuple]]:
    """A self-play rollout of French Canadian at three seats under ``fields`` of the
    config, and what each step reported: the race points before and after it, ``done`` and
    ``truncated``, as the engine gave them."""
    cfg = BatchPPOConfig(rules="french_canadian", player_counts=[3], self_play=1.0,
                         **fields, **TINY)
    table = Table(cfg, 3, seed=seed)
    seen: list[tuple] = []
    step = table.env.step

    def recorded(actions):
        before = table.env.race_points().copy()
        out = step(actions)
        seen.append((before, table.env.race_points().copy(), out["done"].copy(),
                     out["truncated"].copy()))
        return out

    table.env.step = recorded
    torch.manual_seed(0)
    net = CompactNet(32, 2, pieces=table.pieces)
    stats = {"games": 0.0, "learner_wins": 0.0, "mixed_games": 0.0}
    ro, _ = collect(net, net, table, steps, torch.Generator().manual_seed(1), stats,
                    truncation_penalty=cfg.truncation_penalty,
                    points_reward=cfg.points_reward)
    return ro, seen


def _self_play_rewards(penalty: float) -> tuple[float, int]:
    """The sum of a French Canadian rollout's rewards with a turn cap of 6, and how many
    games the cap cut."""
    ro, seen = _race_rollout(7, 40, max_turns=6, truncation_penalty=penalty)
    return float(ro.rew.sum()), sum(int(truncated.sum()) for *_, truncated in seen)


def test_a_stalled_points_race_pays_each_seat_the_truncation_penalty():
    """A points race pays nobody for a game the turn cap cut (002 French Canadian: the
    race is won by points, and nobody reached them), so a losing seat would learn to stall;
    ``truncation_penalty`` takes that much from every seat of such a game, and nothing
    else changes (the same moves, the same other rewards)."""
    plain, cut = _self_play_rewards(0.0)
    penalised, cut_again = _self_play_rewards(0.5)
    assert cut == cut_again and cut > 10
    assert penalised - plain == pytest.approx(-0.5 * 3 * cut, abs=1e-3)


def test_a_point_won_pays_its_winner_against_the_others_mean():
    """``points_shaping``: a hand of a race pays the seats that won a point against the
    others' mean (zero-sum, as the lives shaping is), and nothing in a game that ended this
    step (it restarted: its result pays it, and its points read the new game's zeros)."""
    before = np.array([[2, 1, 0], [4, 4, 3], [5, 1, 1]])
    after = np.array([[3, 1, 0], [5, 5, 3], [0, 0, 0]])
    done = np.array([False, False, True])
    got = points_shaping(before, after, done, 0.5)
    assert got.dtype == np.float32
    assert np.allclose(got[0], [0.5, -0.25, -0.25])
    assert np.allclose(got[1], [0.25, 0.25, -0.5])
    assert np.allclose(got[2], 0.0)
    assert np.allclose(got.sum(axis=1), 0.0)


def test_the_batched_engine_reports_a_races_points_as_the_game_holds_them():
    """``BatchEnv.race_points`` is each seat's score in the race now played (002 French
    Canadian: a point a hand to its winner), the same as the game's own record."""
    env = BatchEnv(16, 3, "french_canadian", seed=4)
    env.reset()
    seen = 0
    for _ in range(120):
        env.step(env.random_actions())
        points = env.race_points()
        for i in range(16):
            assert points[i].tolist() == env.game(i)["points"]
        seen += int(points.sum())
    assert seen > 0 and not env.race_points().flags.writeable
    plain = BatchEnv(4, 3, "standard", seed=4)
    plain.reset()
    plain.step(plain.random_actions())
    assert not plain.race_points().any()


def test_points_reward_pays_each_seat_the_points_it_won_against_the_others_mean():
    """``points_reward`` adds to a race's rewards, hand by hand, a point won against the
    others' mean (002 French Canadian: a point a hand), and changes nothing else: the same
    moves, and each seat's rewards differ by exactly what the engine's points pay it from
    its first move on (a reward goes to the seat's latest decision)."""
    plain, _ = _race_rollout(11, 60)
    shaped, seen = _race_rollout(11, 60, points_reward=0.5)
    assert (plain.act == shaped.act).all()
    diff = shaped.rew - plain.rew
    T, B = diff.shape
    got, want = np.zeros((B, 3)), np.zeros((B, 3))
    moved = np.zeros((B, 3), bool)
    for t, (before, after, done, _) in enumerate(seen):
        moved[np.arange(B), shaped.seat[t]] = True
        np.add.at(got, (np.arange(B), shaped.seat[t]), diff[t])
        won = (after - before) * ~done[:, None]
        want += 0.5 * (won - (won.sum(axis=1, keepdims=True) - won) / 2) * moved
    assert np.abs(want).sum() > 1.0
    assert np.allclose(got, want, atol=1e-4)


def test_an_eliminated_seats_return_ends_where_it_is_put_out():
    """A seat that lost its last life is paid nothing more (its ``-1/(n-1)`` came at the
    step that put it out), so its decisions' returns are complete then: however large the
    rollout's bootstrap values, the returns of a seat that is out of a game still going do
    not change. Bootstrapping it from its view, which no decision trains, made the value
    head's targets grow with its own guesses (docs/EXPERIMENTS.md, entry 60)."""
    cfg = BatchPPOConfig(rules="standard", player_counts=[3], self_play=1.0, **TINY)
    table = Table(cfg, 3, seed=3)
    torch.manual_seed(0)
    net = CompactNet(32, 2, pieces=table.pieces)
    stats = {"games": 0.0, "learner_wins": 0.0, "mixed_games": 0.0}
    ro, boot = collect(net, net, table, 120, torch.Generator().manual_seed(1), stats)
    out = np.argwhere(table.env.active_seats() == 0)
    assert len(out) >= 3  # seats out of games that go on, at the rollout's end
    _, low = advantages(ro, np.zeros_like(boot), 0.995, 0.95)
    _, high = advantages(ro, np.full_like(boot, 1000.0), 0.995, 0.95)
    assert not np.allclose(low, high)  # the seats still in do bootstrap
    for g, s in out:
        mine = ro.seat[:, g] == s
        assert mine.any()
        assert np.allclose(low[mine, g], high[mine, g]), (g, s)


def test_the_batched_engine_reports_who_is_out_as_the_game_holds_it():
    """``active_seats`` is each game's own record of who is still in (``BatchEnv.game``),
    read-only; every seat of a points race stays in."""
    env = BatchEnv(num_envs=16, num_players=4, rules="standard", seed=2)
    env.reset()
    seen_out = False
    for _ in range(400):
        env.step(env.random_actions())
        active = env.active_seats()
        for i in range(env.num_envs):
            assert [bool(a) for a in active[i]] == env.game(i)["active"]
        seen_out |= bool((active == 0).any())
    assert seen_out
    assert not active.flags.writeable
    race = BatchEnv(num_envs=8, num_players=3, rules="french_canadian", seed=2)
    race.reset()
    for _ in range(200):
        race.step(race.random_actions())
        assert race.active_seats().all()


def test_expert_opponents_make_the_batched_experts_moves():
    """An ``expert`` seat of a training game plays :class:`BatchExpert`'s move (itself
    checked move for move against ``ExpertAgent`` in tests/test_batch_expert.py)."""
    cfg = BatchPPOConfig(player_counts=[4], opponents={"expert": 1.0}, self_play=0.0, **TINY)
    table = Table(cfg, 4, seed=3)
    net = CompactNet(cfg.hidden, cfg.layers)
    gen = torch.Generator().manual_seed(0)
    want_expert = BatchExpert("standard")
    checked = 0
    for _ in range(40):
        out = table.out
        tensors = _tensors(table, out["observation"])
        mask = torch.from_numpy(out["action_mask"])
        acts, _, _, learn, _ = _act(net, net, table, *tensors, mask, gen)
        want = want_expert.actions(table.env)
        role = table.roles[np.arange(64), out["current_player"]]
        assert set(np.unique(table.roles)) == {LEARNER, EXPERT}
        assert (acts[role == EXPERT] == want[role == EXPERT]).all()
        assert (learn == (role == LEARNER)).all()
        checked += int((role == EXPERT).sum())
        table.out = table.env.step(acts)
    assert checked > 1000


def test_learner_seats_puts_that_many_learners_in_each_game_against_opponents():
    cfg = BatchPPOConfig(player_counts=[5], opponents={"greedy": 1.0}, self_play=0.0,
                         learner_seats=3, **TINY)
    table = Table(cfg, 5, seed=4)
    assert ((table.roles == LEARNER).sum(axis=1) == 3).all()
    assert ((table.roles == GREEDY).sum(axis=1) == 2).all()
    seats = set(map(tuple, np.argwhere(table.roles == LEARNER)[:, 1].reshape(-1, 3)))
    assert len(seats) > 3  # random seats, not always the same ones
    table._assign(np.arange(10))  # a new game is seated the same way
    assert ((table.roles[:10] == LEARNER).sum(axis=1) == 3).all()
    two = Table(cfg, 2, seed=4)  # never a whole table of learners: at most n - 1
    assert ((two.roles == LEARNER).sum(axis=1) == 1).all()


def test_an_unknown_opponent_is_refused_by_the_config(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("trainer: batch\nopponents: {ismcts: 1.0}\n")
    with pytest.raises(ValueError, match="opponents must map some of"):
        load_config(path)
    path.write_text("trainer: batch\nexpert_advice: 1\n")
    with pytest.raises(ValueError, match="expert_advice' must be true or false"):
        load_config(path)
    trainer, cfg = load_config(Path("configs/train/default.yaml"))
    assert trainer == "batch" and isinstance(cfg, BatchPPOConfig)


def test_init_from_starts_a_run_from_a_policy_files_weights(tmp_path):
    """A long run goes in legs: ``init_from`` loads a file's weights, critic included; a
    file of another shape is refused in one line naming what differs."""
    net, path = _trained(tmp_path, expert_advice=True)
    again = CompactNet(32, 2, advice=True)
    warm_start(again, str(path))
    for name, value in net.state_dict().items():
        assert torch.equal(again.state_dict()[name], value), name
    with pytest.raises(ValueError, match="hidden is 32 in the file, 64 in the config"):
        warm_start(CompactNet(64, 2, advice=True), str(path))
    with pytest.raises(ValueError, match="expert_advice is True in the file, False"):
        warm_start(CompactNet(32, 2), str(path))
    with pytest.raises(ValueError, match="does not exist"):
        warm_start(again, str(tmp_path / "none.npz"))
    with pytest.raises(ValueError, match="'scat_batch': num_actions is 61 in the file, 67"):
        warm_start(CompactNet(128, 2), "scat_batch")  # a shipped file, found by name
    arrays, meta = load_compact(path)
    arrays["cards.weight"].reshape(52, NUM_CODES, -1)[5, C_UNSEEN] = 0.1
    old = tmp_path / "old.npz"
    save_compact(old, arrays, {k: v for k, v in meta.items()
                               if k not in ("kind", "format_version", "sha256")})
    with pytest.raises(ValueError, match="unseen cards' rows are not zero"):
        warm_start(CompactNet(32, 2, advice=True), str(old))
    cfg = BatchPPOConfig(player_counts=[3], total_samples=500, init_from=str(path),
                         expert_advice=True, **{**TINY, "epochs": 1})
    leg, summary = train_network(cfg, log=lambda m: None)
    moved = [n for n, v in leg.state_dict().items() if not torch.equal(v, net.state_dict()[n])]
    assert summary["updates"] == 1 and moved  # trained on from there
    # A small step from the file, not a fresh network: the embedding barely moved.
    assert (leg.cards.weight - net.cards.weight).abs().max() < 0.05


def test_a_bad_init_from_is_refused_by_the_config(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("trainer: batch\ninit_from: ''\n")
    with pytest.raises(ValueError, match="init_from must be a policy file's path"):
        load_config(path)


def test_scat_train_with_the_batch_trainer_writes_and_evaluates_a_policy(tmp_path, capsys):
    """Two torch threads, then two evaluation workers: the evaluation runs in a fresh
    interpreter, since a fork after torch's OpenMP threads started aborts the child."""
    config = tmp_path / "tiny.yaml"
    config.write_text("trainer: batch\nname: tiny\nplayer_counts: [3]\nenvs_per_table: 64\n"
                      "rollout_steps: 16\nminibatch_samples: 512\nepochs: 1\nhidden: 32\n"
                      "eval_every_updates: 0\ntotal_samples: 2000\ntorch_threads: 2\n"
                      "eval_opponents: [random]\neval_players: [3]\nfinal_eval_games: 6\n"
                      "final_eval_workers: 2\n")
    out = tmp_path / "run"
    threads = torch.get_num_threads()
    try:
        assert main(["train", "--config", str(config), "--out", str(out)]) == 0
    finally:
        torch.set_num_threads(threads)
    assert (out / "policy.npz").exists() and (out / "summary.json").exists()
    assert "Final evaluation" in capsys.readouterr().out
    assert "compact:" in (out / "report.md").read_text()


def test_the_shipped_policies_play_every_table_and_are_the_default_past_six(tmp_path):
    """``compact:scat_batch`` ships for 2-10 players, ``compact:scat_batch_7_10`` (it reads
    the expert's move) for 7-10, and ``compact:scat_batch_set`` hands each position to its
    member: ``scat play`` seats the set at every size, and each finishes a game at every
    size."""
    from scat_session.seating import default_opponent

    assert default_opponent(3) == "compact:scat_batch_set"
    assert default_opponent(7) == default_opponent(10) == "compact:scat_batch_set"
    assert make_agent("compact:scat_batch_7_10")._expert is not None
    assert make_agent("compact:scat_batch_set")._expert is not None
    for spec in ("compact:scat_batch", "compact:scat_batch_7_10", "compact:scat_batch_set"):
        for n in (2, 7, 10):
            agents = [make_agent(spec, seed=s) for s in range(n)]
            record = play_game(agents, Rules.preset("standard"), seed=n)
            assert record.winner is not None or record.truncated


@pytest.mark.parametrize("preset", ["golf", "hammer", "undeclared_31", "french_canadian"])
def test_the_batched_trainer_takes_rules_whose_observation_has_pieces(tmp_path, preset):
    """The network reads the pieces golf, the calls and the points races append
    (tests/test_batch_pieces.py), so the config takes them."""
    path = tmp_path / "run.yaml"
    path.write_text(f"trainer: batch\nrules: {preset}\nopponents: {{expert: 1.0}}\n"
                    "eval_opponent: expert\n")
    assert load_config(path)[1].rules == preset
    path.write_text("trainer: batch\nrules: moyer_second_knock\n")  # a knock the mask shows
    assert load_config(path)[1].rules == "moyer_second_knock"
