"""Actions and decks of the wrong type are refused or converted, never stored as they are.

A numpy integer (what a policy's ``argmax`` returns) is an action and is stored as a Python
``int``; a float such as ``52.0`` or ``inf``, a bool, a string or an array is not an action.
A deck given as a set has no order of its own (hashing decides it), so it is refused.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import scat_env
from scat_env import DRAW_STOCK, GameState
from scat_env.engine import as_action


def test_numpy_integers_are_converted_to_int_before_the_engine_stores_them():
    state = GameState(3, seed=1)
    state.apply_action(np.int64(DRAW_STOCK))
    card = next(c for c in state.legal_actions())
    state.apply_action(np.int32(card))
    assert type(state.discard[-1]) is int and state.discard[-1] == card
    assert all(type(c) is int for h in state.hands for c in h)


@pytest.mark.parametrize("bad", [52.0, math.inf, True, "52", np.array([52]), None, [52]])
def test_an_action_that_is_not_an_integer_is_refused_by_the_engine(bad):
    state = GameState(3, seed=1)
    before = (list(state.stock), list(state.discard), [list(h) for h in state.hands])
    with pytest.raises(ValueError, match="action"):
        state.apply_action(bad)
    assert before == (list(state.stock), list(state.discard), [list(h) for h in state.hands])


def test_as_action_names_a_long_value_in_a_bounded_line():
    with pytest.raises(ValueError) as exc:
        as_action(np.arange(10_000))
    assert len(str(exc.value)) < 120 and "ndarray" in str(exc.value)


@pytest.mark.parametrize("bad", [math.inf, 52.0, np.array([52]), "draw"])
def test_raw_env_refuses_a_non_integer_action_with_a_value_error(bad):
    env = scat_env.raw_env(num_players=3)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action"):
        env.step(bad)


def test_env_gives_the_illegal_move_penalty_for_inf_not_a_crash():
    env = scat_env.env(num_players=3)
    env.reset(seed=0)
    agent = env.agent_selection
    with pytest.warns(UserWarning):
        env.step(math.inf)
    assert env.terminations[agent] or env.truncations[agent]
    assert env.rewards[agent] == -1.0


@pytest.mark.parametrize("kind", [set, frozenset, dict.fromkeys])
def test_a_deck_given_without_an_order_is_refused(kind):
    deck = kind(range(52))
    with pytest.raises(ValueError, match="in order"):
        GameState(3, deck=deck)
    env = scat_env.raw_env(num_players=3)
    with pytest.raises(ValueError, match="in order"):
        env.reset(seed=0, options={"deck": deck})


def test_a_deck_as_a_tuple_or_a_numpy_array_still_deals_in_its_order():
    order = list(range(52))
    a = GameState(3, deck=tuple(order), dealer=0)
    b = GameState(3, deck=np.array(order), dealer=0)
    assert a.hands == b.hands and a.discard == b.discard
