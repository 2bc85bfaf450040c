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


def _first_hand_result(num_players: int = 3) -> scat_env.HandResult:
    import random

    state = GameState(num_players, seed=4)
    rng = random.Random(0)
    while not state.results:
        state.apply_action(rng.choice(state.legal_actions()))
    return state.results[0]


def test_a_hand_result_cannot_be_rewritten_through_a_view():
    """An agent holding ``view.last_result`` must not be able to change the record."""
    import copy
    import pickle

    from scat_env import make_view

    result = _first_hand_result()
    state = GameState(3, seed=4)
    state.results.append(result)
    view = make_view(state, 0)
    for table in (view.last_result.values, view.last_result.lives_lost, view.last_result.hands):
        seat = next(iter(table))
        edits = [("__setitem__", (seat, 0)), ("pop", (seat,)), ("update", ({seat: 0},)),
                 ("clear", ()), ("setdefault", (99, 0)), ("__delitem__", (seat,)),
                 ("popitem", ()), ("__ior__", ({seat: 0},))]
        for method, args in edits:
            with pytest.raises(TypeError, match="read-only"):
                getattr(table, method)(*args)
    assert result == pickle.loads(pickle.dumps(result))
    assert copy.deepcopy(result) == result and result.values == dict(result.values)


def test_each_agent_gets_its_own_hand_result_dict():
    rng = np.random.default_rng(0)
    env = scat_env.raw_env(num_players=3)
    env.reset(seed=3)
    for _agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if "hand_result" in info:
            break
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    infos = [env.infos[a] for a in env.agents]
    assert infos[0]["hand_result"] == infos[1]["hand_result"]
    infos[0]["hand_result"]["values"].clear()
    infos[0]["hand_results"].clear()
    assert infos[1]["hand_result"]["values"] and infos[1]["hand_results"]


def test_the_engine_shuffle_is_random_shuffle():
    """The engine's inline shuffle gives CPython's Random.shuffle permutation and leaves the
    generator in the same state: seeds keep dealing the same games."""
    import random

    from scat_env.engine import shuffle

    for seed in range(500):
        for size in (52, 40, 7, 1, 0):
            a, b = list(range(size)), list(range(size))
            r1, r2 = random.Random(seed), random.Random(seed)
            r1.shuffle(a)
            shuffle(r2, b)
            assert a == b and r1.getstate() == r2.getstate()
