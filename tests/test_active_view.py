"""scat_env.active_view: once a player is out, the position is read as the smaller game it is."""

import random
from dataclasses import replace

import numpy as np
import pytest

from agents.adapters.padded import PolicyAgent
from scat_env import GameState, Rules, active_view, make_view


def _pair(seed: int) -> tuple[GameState, GameState]:
    """A three-player hand with seat 1 out, and the same cards dealt as a two-player hand."""
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    h0, h2, up, stock = deck[:3], deck[3:6], deck[6], deck[7:]
    rules = Rules()
    three = GameState.from_parts(rules, hands=[h0, [], h2], stock=stock, discard=[up],
                                 lives=[2, 0, 3], dealer=2, current_player=0, hand_number=5)
    two = GameState.from_parts(rules, hands=[h0, h2], stock=stock, discard=[up],
                               lives=[2, 3], dealer=1, current_player=0, hand_number=5)
    return three, two


def test_active_view_is_the_view_itself_while_everyone_is_in():
    st = GameState(4, seed=1)
    view = make_view(st, 2)
    assert active_view(view) is view


@pytest.mark.parametrize("seed", range(5))
def test_a_three_player_hand_with_one_out_reads_as_the_two_player_hand(seed):
    # Seat 1 is out: seats 0 and 2 of the three-player table are seats 0 and 1 of the
    # two-player one. Every view along the hand must be the same, log and knocks included.
    three, two = _pair(seed)
    rng = random.Random(seed)
    while not two.is_terminal() and not two.is_terminal():
        for big, small in ((0, 0), (2, 1)):
            got = active_view(make_view(three, big))
            want = make_view(two, small)
            assert got == replace(want, last_result=None)
        legal = two.legal_actions()
        action = legal[rng.randrange(len(legal))]
        two.apply_action(action)
        three.apply_action(action)


def test_active_view_of_a_seat_that_is_out_is_an_error():
    three, _ = _pair(0)
    with pytest.raises(ValueError, match="seat 1 is out of the game"):
        active_view(make_view(three, 1))


class _Recorder:
    """A policy that remembers the observation it was shown."""

    advice = False

    def __init__(self) -> None:
        self.obs: np.ndarray | None = None

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.obs = obs.copy()
        return np.where(mask, 0.0, -1e9)


@pytest.mark.parametrize("active_only", [True, False])
def test_policy_agent_encodes_the_smaller_table_once_a_player_is_out(active_only):
    three, two = _pair(3)
    rec = _Recorder()
    PolicyAgent(rec, 6, active_only=active_only).act(make_view(three, 0))
    seen = rec.obs
    PolicyAgent(rec, 6).act(make_view(two, 0))
    assert np.array_equal(seen, rec.obs) == active_only


