"""The batched duplicate-deal evaluation plays the games the Python players would.

- Copies of one deal (``BatchEnv(deal_ids=...)``) are dealt the same cards, every hand.
- Every evaluated game, replayed through ``GameState`` with ``compact:`` and ``expert``
  acting on their views, ends with the same winner: the batched evaluation is the Python
  harness's game, faster.
- The figures: a deal-clustered interval, and a paired difference that is exactly 0 for a
  policy against itself and a clear one line for bad input.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_batch_pieces import random_policy
from test_batch_training import _trained

from agents.compact import CompactAgent, CompactSet, policy_path
from agents.expert import ExpertAgent
from agents.greedy import ThresholdAgent
from scat_env import GameState, Rules
from scat_env.batch import BatchEnv
from scat_env.batch.reference import SplitMixRandom, game_seed
from scat_env.view import make_view
from training.batch_eval import (
    duplicate_wins,
    load_player,
    load_policy,
    main,
    paired,
    summarize,
)


def test_copies_of_one_deal_get_the_same_cards_every_hand():
    env = BatchEnv(4, 3, "standard", seed=7, deal_ids=[5, 5, 6, 5])
    out = env.reset()
    first = [env.game(i) for i in range(4)]
    assert first[0]["hands"] == first[1]["hands"] == first[3]["hands"] != first[2]["hands"]
    assert first[0]["dealer"] == first[1]["dealer"]
    # Different play (random moves per game), the same shuffled pack hand after hand: while
    # the same players are in, the same deal (who is dealt what depends on who is in).
    deals: dict[int, dict[int, tuple]] = {0: {}, 1: {}}
    for _ in range(400):
        for i in (0, 1):
            g = env.game(i)
            if g["turn"] == 0 and all(g["active"]) and g["hand_number"] not in deals[i]:
                deals[i][g["hand_number"]] = (g["dealer"], g["hands"], g["stock"], g["discard"])
        out = env.step(env.random_actions())
        if out["done"][:2].any():
            break
    shared = set(deals[0]) & set(deals[1])
    assert len(shared) >= 2
    assert all(deals[0][h] == deals[1][h] for h in shared)
    assert deals[0][min(shared)] != deals[0][max(shared)]


def test_bad_deal_ids_are_one_line():
    with pytest.raises(ValueError, match="deal_ids must be 3 ints"):
        BatchEnv(3, 2, deal_ids=[0, 1])
    with pytest.raises(ValueError, match="deal_ids must be 3 ints"):
        BatchEnv(3, 2, deal_ids=[0, -1, 2])


def _python_winner(policy, seat: int, n: int, seed: int, deal: int, greedy: bool,
                   preset: str = "standard") -> int:
    """Deal ``deal`` played by ``GameState`` under ``preset``: the policy's player in
    ``seat``, ``expert`` (or ``greedy``) elsewhere; the winner, -1 for a game cut at the
    turn cap."""
    rules = Rules.preset(preset)
    rng = SplitMixRandom(game_seed(seed, deal))
    state = GameState(n, rules, rng=rng)
    while state.is_terminal():  # decided by the deal alone: the engine deals again
        state = GameState(n, rules, rng=rng)
    me = CompactAgent(policy)
    other = ThresholdAgent(25) if greedy else ExpertAgent()
    cap = BatchEnv(1, n, preset).max_turns
    while not state.is_terminal():
        if state.turn >= cap:
            return -1
        p = state.current_player
        state.apply_action((me if p == seat else other).act(make_view(state, p)))
    return state.winner


@pytest.mark.parametrize("advice, n, opponent", [(True, 4, "expert"), (False, 3, "greedy"),
                                                 (True, 3, "greedy")])
def test_every_evaluated_game_is_the_python_players_game(tmp_path, advice, n, opponent):
    """An advised policy reads the expert's move whoever its opponents are."""
    _, path = _trained(tmp_path, samples=2000, expert_advice=advice)
    policy = load_policy(str(path))
    deals, seed = 2, 11
    wins = duplicate_wins([policy], n, deals, opponent, seed=seed)[0]
    for d in range(deals):
        for r in range(n):
            winner = _python_winner(policy, r, n, seed, d, opponent == "greedy")
            assert wins[d, r] == (winner == r), f"deal {d}, seat {r}"
    assert wins.sum() >= 1  # something was won: the comparison compared outcomes


@pytest.mark.parametrize("preset, n", [("hammer", 3), ("undeclared_31", 2), ("golf", 3),
                                       ("french_canadian", 3)])
def test_a_policy_that_reads_the_pieces_plays_the_python_players_games(tmp_path, preset, n):
    """A call, golf and a points race: the policy reads its rules' observation pieces
    (random weights that they move, written through the trainer's save path) the same
    way batched and from a view."""
    path = tmp_path / "policy.npz"
    random_policy(path, preset, seed=n)
    policy = load_policy(str(path))
    assert policy.pieces
    deals, seed = 3, 5
    wins = duplicate_wins([policy], n, deals, "expert", rules=preset, seed=seed)[0]
    for d in range(deals):
        for r in range(n):
            winner = _python_winner(policy, r, n, seed, d, False, preset)
            assert wins[d, r] == (winner == r), f"deal {d}, seat {r}"


def compact_set(tmp_path) -> str:
    """A compact set manifest of shipped files: ``scat_batch`` whenever two players are in,
    ``scat_batch_7_10`` (it reads the expert's move) every other position."""
    manifest = tmp_path / "set.yaml"
    manifest.write_text("format: scat-policy-set\npolicies:\n"
                        f"  2: {policy_path('scat_batch')}\n"
                        f"  default: {policy_path('scat_batch_7_10')}\n")
    return str(manifest)


def test_a_compact_sets_evaluated_games_are_the_python_players_games(tmp_path):
    """The set hands each position to the member for the number of players in, reading the
    smaller game (``scat_env.batch.active``), the same way batched and from a view."""
    policy = load_player(compact_set(tmp_path))
    assert isinstance(policy, CompactSet) and policy.advice
    n, deals, seed = 4, 3, 12
    wins = duplicate_wins([policy], n, deals, "expert", seed=seed)[0]
    for d in range(deals):
        for r in range(n):
            assert wins[d, r] == (_python_winner(policy, r, n, seed, d, False) == r), (d, r)
    assert wins.sum() >= 1  # something was won: the comparison compared outcomes


def test_the_interval_is_clustered_by_deal_and_a_policy_pairs_with_itself_at_zero():
    policy = load_policy("scat_batch")
    wins = duplicate_wins([policy, policy], 3, 40, "greedy", seed=3)
    assert (wins[0] == wins[1]).all()
    s = summarize(wins[0])
    assert s["games"] == 120 and s["ci95"][0] < s["win_rate"] < s["ci95"][1]
    assert s["x_fair"] == pytest.approx(3 * s["win_rate"])
    p = paired(wins[0], wins[1])
    assert p["diff"] == 0 and p["se"] == 0
    flipped = wins[1].copy()
    flipped[0] = ~flipped[0]  # one deal differs: a nonzero difference with a standard error
    p = paired(wins[0], flipped)
    assert p["diff"] != 0 and p["se"] > 0


def test_the_command_prints_and_writes_its_figures(tmp_path, capsys):
    out = tmp_path / "eval.json"
    assert main(["scat_batch", "--against", "scat_batch", "--players", "2", "--games", "20",
                 "--opponent", "greedy", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 players, scat_batch:" in text and "paired A - B: +0.0000" in text
    report = json.loads(out.read_text())
    assert report["tables"]["2"]["scat_batch"]["games"] == 20


@pytest.mark.parametrize("argv, message", [
    (["no/such/policy.npz"], "does not exist"),
    (["scat_batch", "--rules", "hammer"], "does not play"),
    (["scat_batch", "--rules", "gin"], "a knock means something else"),
    (["expert:knock_floor=24.5"], "needs a whole knock_floor"),
])
def test_bad_input_is_one_line_and_exit_status_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_a_bad_table_size_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as e:
        main(["scat_batch", "--players", "11"])
    assert e.value.code == 2
    assert "table sizes are 2..10" in capsys.readouterr().err


def test_wins_are_counted_from_each_seat_of_each_deal():
    """A policy that beats ``greedy`` wins more than its fair share: the learner's seat is
    read right (a seat mix-up would give about the fair share or less)."""
    wins = duplicate_wins([load_policy("scat_batch")], 2, 150, "greedy", seed=5)[0]
    assert wins.shape == (150, 2)
    assert wins.mean() > 0.55
    assert np.isfinite(summarize(wins)["ci95"]).all()


def test_the_expert_against_itself_wins_exactly_its_fair_share():
    """Every seat the same deterministic player: the n copies of a deal play the same game,
    so the evaluated seat wins exactly one of them (none if the turn cap cut it)."""
    wins = duplicate_wins([load_player("expert")], 5, 30, "expert", seed=2)[0]
    assert (wins.sum(axis=1) <= 1).all() and wins.sum() >= 28
    variant = duplicate_wins([load_player("expert:min_value=30")], 5, 30, "expert", seed=2)[0]
    assert (variant != wins).any()  # the knobs reach the player


def test_an_unknown_expert_knob_is_one_line(capsys):
    assert main(["expert:nope=1"]) == 2
    assert "expected name=value pairs" in capsys.readouterr().err
