"""training.heads_up: a seat's win rate split into reaching heads-up and winning it."""

from __future__ import annotations

import pytest

from agents.registry import make_agent
from scat_env import Rules
from training import heads_up as hus
from training.evaluate import duplicate_games, evaluate_agent


def _games(n: int, games: int, seed: int = 3):
    return list(duplicate_games(lambda s: make_agent("greedy", seed=s), Rules(), "random", n,
                                games, seed))


def test_duplicate_games_are_the_evaluation_deals():
    """The analysis plays exactly the games the training evaluation scores: blocks of n
    games on one deal seed (the formula the README's quick figures cite), seats rotated."""
    games = _games(3, 29)  # rounded up to 30, a multiple of 3
    assert [seat for seat, _ in games] == [0, 1, 2] * 10
    assert [rec.seed for _, rec in games] == [3 * 1_000_003 + b * 7919 + 3
                                              for b in range(10) for _ in range(3)]
    wins = sum(rec.winner == seat for seat, rec in games)
    ev = evaluate_agent(lambda s: make_agent("greedy", seed=s), Rules(), ["random"], [3], 30, seed=3)
    assert ev["win_rate"]["random_x3"] == wins / 30


@pytest.mark.parametrize("n", [3, 4])
def test_every_winner_reached_heads_up_and_the_splits_add_up(n):
    """A game of three or more is won heads-up, so wins = heads-up wins; the lives splits
    partition the heads-up games."""
    c = hus.split(_games(n, 24))
    assert c["games"] == 24
    assert 0 < c["hu"] <= c["games"]
    assert c["win"] == c["hu_win"] > 0
    assert sum(c[f"hu_{k}"] for k in hus.SPLITS) == c["hu"]
    assert sum(c[f"hu_{k}_win"] for k in hus.SPLITS) == c["hu_win"]


def test_heads_up_lives_are_the_first_two_left():
    rec = _games(3, 3)[0][1]
    lives = hus.heads_up_lives(rec)
    assert lives is not None and sum(v > 0 for v in lives) == 2
    assert lives[rec.winner] > 0


def test_bad_input_is_refused_with_a_message(capsys):
    with pytest.raises(SystemExit):
        hus.main(["bogus", "expert"])
    assert "bad agent spec 'bogus'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        hus.main(["greedy", "expert", "--players", "2"])
    assert "--players must be at least 3" in capsys.readouterr().err


def test_main_prints_the_table(capsys):
    assert hus.main(["greedy", "random", "--games", "6"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| seat | games | win | reach heads-up")
    assert out[2].startswith("| greedy | 6 | ")
