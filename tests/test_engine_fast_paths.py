"""The engine's speed paths give what the plain code they replace would give.

A hand is scored and dealt every few decisions (every two or three in ``throw_down_any``), so
the engine builds its :class:`HandResult` without the dataclass's ``__init__``, deals by
slicing the shuffled deck and reads a table of seat orders. Each test here checks one of
those against the straightforward reading of the rule.
"""

from __future__ import annotations

import pickle
import random
from dataclasses import fields

import pytest

from scat_env.engine import GameState, HandResult
from scat_env.rules import PRESETS, Rules

FIELDS = [f.name for f in fields(HandResult)]


def _play(rules: Rules, players: int, seed: int) -> GameState:
    state = GameState(players, rules, seed=seed)
    pick = random.Random(seed).choice
    while not state.is_terminal() and state.turn < 300:
        state.apply_action(pick(state.legal_actions()))
    return state


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_hand_result_equals_the_one_the_dataclass_builds(preset):
    rules = Rules.preset(preset)
    results = [r for seed in range(3) for r in _play(rules, 3 + seed, seed).results]
    assert results
    for result in results:
        assert list(result.__dict__)[:len(FIELDS)] == FIELDS  # every field, in order
        built = type(result)(**{f.name: getattr(result, f.name) for f in fields(result)})
        assert built == result and repr(built) == repr(result)
        assert pickle.loads(pickle.dumps(result)) == result
        for table in (result.values, result.hands, result.lives_lost):
            with pytest.raises(TypeError):
                table[0] = 0  # type: ignore[index]


@pytest.mark.parametrize("players", range(2, 11))
def test_the_deal_gives_one_card_at_a_time_from_the_dealers_left(players):
    deck = list(range(52))
    random.Random(players).shuffle(deck)
    for dealer in range(players):
        state = GameState(players, Rules(), deck=deck, dealer=dealer, single_hand=True)
        if state.results:  # a dealt 31 ends the hand at once; the cards are still recorded
            hands = [list(state.results[0].hands[s]) for s in range(players)]
        else:
            hands = state.hands
        for k in range(1, players + 1):
            seat = (dealer + k) % players
            assert hands[seat] == [deck[k - 1], deck[k - 1 + players],
                                   deck[k - 1 + 2 * players]]
        if not state.results:
            assert state.discard == [deck[3 * players]]
            assert state.stock[::-1] == deck[3 * players + 1:]


def test_with_players_out_the_deal_starts_left_of_the_dealer_among_those_still_in():
    rules = Rules.preset("golf")  # no dealt 31 can end the hand before it is looked at
    state = GameState(5, rules, seed=1)
    state.active = [True, False, True, False, True]
    state.lives = [3, 0, 3, 0, 3]
    for dealer, order in ((0, (2, 4, 0)), (2, (4, 0, 2)), (4, (0, 2, 4))):
        state.dealer = dealer
        state._deal()
        assert state.current_player == order[0]
        assert [len(h) for h in state.hands] == [3, 0, 3, 0, 3]
        assert state._seats_from_left() == order
