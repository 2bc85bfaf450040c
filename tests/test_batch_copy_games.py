"""Copies of batched games play on as their sources do; golf's unseen cards are dealt anew.

``BatchEnv.copy_games`` and ``BatchEnv.redeal_golf_unseen`` are how golf's search labels
(``training/search_labels.py``) play many sampled worlds of one position at once: a copy
must be the same game, and a world must differ from it only in the cards nobody has seen.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.batch_expert import BatchExpert
from scat_env.batch import BatchEnv


def _played(rules: str, n: int, games: int, steps: int, seed: int) -> BatchEnv:
    env = BatchEnv(games, n, rules, seed)
    env.reset()
    for _ in range(steps):
        env.step(env.random_actions())
    return env


@pytest.mark.parametrize("rules", ["standard", "golf", "hammer", "french_canadian"])
def test_a_copied_game_plays_on_step_for_step_as_its_source(rules: str) -> None:
    src = _played(rules, 3, 8, 7, seed=1)
    dst = BatchEnv(5, 3, rules, seed=99)
    dst.reset()
    rows_from, rows = [6, 2, 2], [0, 3, 4]
    dst.copy_games(src, rows_from, rows)
    for _ in range(60):
        for a, b in zip(rows_from, rows, strict=True):
            assert dst.game(b) == src.game(a)
            assert np.array_equal(dst.current()["observation"][b],
                                  src.current()["observation"][a])
        acts = src.random_actions()
        mine = dst.random_actions()
        mine[rows] = acts[rows_from]
        out_src, out_dst = src.step(acts), dst.step(mine)
        for key in ("done", "winner", "hands_ended"):
            assert np.array_equal(out_dst[key][rows], out_src[key][rows_from]), key


def test_copies_given_one_stream_are_dealt_the_same_later_hands() -> None:
    src = _played("golf", 3, 4, 5, seed=3)
    env = BatchEnv(4, 3, "golf", seed=7)
    env.reset()
    env.copy_games(src, [1, 1, 1, 1], [0, 1, 2, 3], streams=[11, 11, 12, 12])
    for _ in range(200):  # the same moves in all four until the hand ends
        out = env.step(env.random_actions()[[0, 0, 0, 0]])
        if out["hands_ended"][0]:
            break
    g = [env.game(i) for i in range(4)]
    assert out["hands_ended"].all() and g[0]["hand_number"] == 2
    assert g[0] == g[1] and g[2] == g[3]  # one stream, one next deal
    assert g[0]["hands"] != g[2]["hands"]  # another stream, another deal


def test_copy_games_refuses_another_table_in_one_line() -> None:
    src = _played("golf", 3, 2, 1, seed=0)
    other = BatchEnv(2, 4, "golf")
    other.reset()
    with pytest.raises(ValueError, match="same rules and size"):
        other.copy_games(src, [0], [0])
    with pytest.raises(ValueError, match="game indices"):
        src.copy_games(src, [0], [5])


@pytest.mark.parametrize("n", [2, 3, 6])
def test_a_golf_redeal_moves_only_the_cards_nobody_has_seen(n: int) -> None:
    env = _played("golf", n, 16, 4 * n, seed=n)
    before = [env.game(g) for g in range(16)]
    seen = env.observe_all().copy()
    env.redeal_golf_unseen(range(16), np.random.default_rng(0))
    moved = 0
    for g in range(16):
        old, new = before[g], env.game(g)
        up = old["face_up"]
        for s in range(n):
            for i in range(len(old["hands"][s])):
                if i >= 3 or up[s] >> i & 1:  # a face-up slot, or the card held
                    assert new["hands"][s][i] == old["hands"][s][i]
        assert new["discard"] == old["discard"] and new["lives"] == old["lives"]
        cards = sorted(sum(new["hands"], []) + new["stock"])
        assert cards == sorted(sum(old["hands"], []) + old["stock"])
        moved += new["hands"] != old["hands"]
    assert moved >= 12  # a redeal that changed nothing would pass the checks above
    assert np.array_equal(env.observe_all(), seen)  # no seat sees a difference


def test_a_redeal_is_refused_outside_golf() -> None:
    env = _played("standard", 3, 2, 1, seed=0)
    with pytest.raises(ValueError, match="golf"):
        env.redeal_golf_unseen([0], np.random.default_rng(0))
    golf = _played("golf", 3, 2, 1, seed=0)
    with pytest.raises(ValueError, match="game indices below 2"):
        golf.redeal_golf_unseen([2], np.random.default_rng(0))


@pytest.mark.parametrize("rules", ["golf", "standard"])
def test_the_batched_expert_on_some_rows_makes_the_moves_it_makes_on_all(rules: str) -> None:
    env = _played(rules, 3, 12, 5, seed=4)
    expert = BatchExpert(rules)
    every = expert.actions(env).copy()
    rows = np.array([1, 4, 5, 11])
    out = np.full(12, -7, np.int64)
    expert.actions(env, out, rows)
    assert np.array_equal(out[rows], every[rows])
    assert (np.delete(out, rows) == -7).all()
