"""The batched active view: a table with players out, read as the smaller game.

``scat_env.batch.active.active_observations`` must show exactly what
``compact_observation(active_view(view))`` shows (``scat_env.active_view``), or a
specialist handed the end of a larger game by the batched evaluation would read another
position than the ``compact:`` player reading its view.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from test_batch_eval import compact_set

from agents.compact import CompactSet, load_compact_set, policy_path
from scat_env import GameState, Rules, active_view
from scat_env.batch import BatchEnv
from scat_env.batch.active import active_observations, players_in
from scat_env.batch.reference import compact_observation
from scat_env.view import make_view


def _positions(n: int, seed: int, wanted: int, preset: str = "standard") -> list:
    """Views of seats still in at tables with players out, from games of random moves."""
    rng = random.Random(seed)
    rules = Rules.preset(preset)
    views = []
    while len(views) < wanted:
        state = GameState(n, rules, rng=random.Random(rng.random()))
        while not state.is_terminal() and len(views) < wanted:
            if not all(state.active):
                views += [make_view(state, s) for s in range(n) if state.active[s]]
            view = make_view(state, state.current_player)
            state.apply_action(rng.choice(list(view.legal_actions)))
    return views


@pytest.mark.parametrize("n", [3, 4, 7, 10])
def test_active_observations_are_the_compact_observation_of_the_active_view(n):
    views = _positions(n, seed=n, wanted=600)
    obs = np.stack([compact_observation(v) for v in views])
    ins = players_in(obs, n)
    assert (ins == [sum(v.active) for v in views]).all()
    assert len(set(ins.tolist())) >= 2 or n == 3  # several sizes of the smaller game
    for k in np.unique(ins):
        rows = np.flatnonzero(ins == k)
        got = active_observations(obs[rows], n, int(k))
        for row, i in zip(got, rows, strict=True):
            want = compact_observation(active_view(views[i]))
            assert (row == want).all(), f"{n} seats, {k} in, view {i}"


@pytest.mark.parametrize("preset", ["hammer", "throw_down", "undeclared_31", "sudden_death",
                                    "golf"])
@pytest.mark.parametrize("n", [3, 6])
def test_the_pieces_of_the_calls_and_golf_come_along_into_the_smaller_game(n, preset):
    """The phase, a quiet 31 and golf's slots: a set's member for the players in reads
    them as ``compact_observation(active_view(view))`` shows them (observation_pieces)."""
    rules = Rules.preset(preset)
    views = _positions(n, seed=n + 7, wanted=300, preset=preset)
    obs = np.stack([compact_observation(v) for v in views])
    ins = players_in(obs, n)
    for k in np.unique(ins):
        rows = np.flatnonzero(ins == k)
        got = active_observations(obs[rows], n, int(k), rules)
        for row, i in zip(got, rows, strict=True):
            want = compact_observation(active_view(views[i]))
            assert row.shape == want.shape and (row == want).all(), f"{k} in, view {i}"
    if preset == "golf":  # face-up slots of seats in moved with their seats
        assert any(v.slots and any(c is not None for s in v.slots for c in s) for v in views)


def test_a_points_race_keeps_the_points_of_the_seats_in_in_their_new_order():
    """No seat goes out of a points race, so the map is checked on made-up rows: the points
    per relative seat follow the lives' order."""
    rules = Rules.preset("french_canadian")
    n = 5
    views = _positions(n, seed=3, wanted=40)  # standard positions with players out
    for v in views:
        race = dataclasses.replace(v, rules=rules, points=tuple(10 + s for s in range(n)))
        row = compact_observation(race)
        got = active_observations(row[None], n, sum(v.active), rules)[0]
        want = compact_observation(active_view(race))
        assert (got == want).all()
        assert sorted(got[-sum(v.active):]) == sorted(  # the seats in's points, reordered
            10 + s for s in range(n) if v.active[s])


@pytest.mark.parametrize("n", [4, 10])
def test_a_dealer_who_is_out_hands_the_deal_to_the_nearest_seat_in_on_the_right(n):
    """A view between hands may name a dealer who has just gone out (decisions never do):
    the smaller game's dealer is the nearest seat still in on the right, as in
    ``active_view``."""
    views = []
    for v in _positions(n, seed=n + 100, wanted=200):
        views += [dataclasses.replace(v, dealer=s) for s in range(n) if not v.active[s]]
    obs = np.stack([compact_observation(v) for v in views])
    ins = players_in(obs, n)
    for k in np.unique(ins):
        rows = np.flatnonzero(ins == k)
        got = active_observations(obs[rows], n, int(k))
        for row, i in zip(got, rows, strict=True):
            assert (row == compact_observation(active_view(views[i]))).all()


def test_rows_that_are_not_of_that_size_are_one_line():
    views = _positions(4, seed=1, wanted=5)
    obs = np.stack([compact_observation(v) for v in views])
    with pytest.raises(ValueError, match="exactly 4 players in"):
        active_observations(obs, 4, 4)
    with pytest.raises(ValueError, match="observations of 3 seats are 63 wide"):
        active_observations(obs, 3, 2)


def test_a_compact_set_hands_each_position_to_the_member_for_the_players_in(tmp_path):
    """``compact:SET``: positions with two players in are the two-player member's, read as
    a two-player game; every other position is the default member's, read as it is."""
    cs = load_compact_set(compact_set(tmp_path))
    assert isinstance(cs, CompactSet) and cs.plays(10)
    two, rest = cs.members[2][0], cs.default[0]
    n = 5
    env = BatchEnv(64, n, seed=3)
    out = env.reset()
    seen = {k: 0 for k in range(2, n + 1)}
    differ = 0
    for _ in range(1000):
        obs, mask = out["observation"], out["action_mask"]
        feats = env.hand_features(obs)
        advice = env.threshold_actions(25)  # any move: the default member reads advice
        got = cs.play_logits(obs, feats, n, 3, mask, advice)
        ins = players_in(obs, n)
        for k in np.unique(ins).tolist():
            rows = np.flatnonzero(ins == k)
            seen[k] += len(rows)
            if k == 2:
                small = active_observations(obs[rows], n, 2)
                want = two.play_logits(small, feats[rows], 2, 3, mask[rows])
                whole = rest.play_logits(obs[rows], feats[rows], n, 3, mask[rows],
                                         advice[rows])
                differ += int((want.argmax(1) != whole.argmax(1)).sum())
            else:
                want = rest.play_logits(obs[rows], feats[rows], n, 3, mask[rows],
                                        advice[rows])
            assert np.array_equal(got[rows], want), f"{k} players in"
        out = env.step(env.random_actions())
    assert all(seen.values()), seen
    assert differ  # the member plays other moves than the default would have


def test_a_compact_set_without_a_member_for_a_table_is_refused(tmp_path):
    from agents.compact import CompactAgent

    manifest = tmp_path / "set.yaml"
    manifest.write_text("format: scat-policy-set\npolicies:\n"
                        f"  2: {policy_path('scat_batch')}\n")
    agent = CompactAgent(load_compact_set(str(manifest)))
    agent.check_table(2, Rules.preset("standard"))
    with pytest.raises(ValueError, match="no default member and none for some table of 3"):
        agent.check_table(3, Rules.preset("standard"))
    manifest.write_text("format: scat-policy-set\npolicies:\n  2: none.npz\n")
    with pytest.raises(ValueError, match="none.npz"):
        load_compact_set(str(manifest))
    manifest.write_text("format: scat-policy-set\npolicies:\n"
                        f"  2: {policy_path('scat_batch')}\nsymmetry: 8\n")
    with pytest.raises(ValueError, match="unknown field.*symmetry"):
        load_compact_set(str(manifest))
