"""A mid-hand ``GameState`` written into the batched engine plays on exactly as it would.

``BatchEnv.set_games`` is how the search player (``agents/search.py``) plays out its
sampled worlds at the batched engine's speed, so a world written in must be the same game:
the same observation and mask for the player to move, and the same play to the end of the
hand, step by step, whoever knocked and whatever turn it is.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from scat_env import GameState, Rules
from scat_env.actions import KNOCK, NUM_ACTIONS
from scat_env.batch import BatchEnv
from scat_env.batch.reference import compact_observation
from scat_env.view import make_view

PLAIN = ["standard", "knocker_pays_ties", "moyer_second_knock", "min_knock_21", "italian",
         "flush_to_knock", "ride_the_bus"]


def _engine_fields(state: GameState) -> dict:
    n = state.num_players
    draws = [0] * n
    suits = [[0] * 4 for _ in range(n)]
    for seat, kind, card in state.log:
        if kind == "discard":
            suits[seat][card // 13] += 1
        elif kind in ("draw_stock", "take"):
            draws[seat] += 1
    return {"hands": [list(h) for h in state.hands], "stock": list(state.stock),
            "discard": list(state.discard), "lives": list(state.lives),
            "active": list(state.active), "dealer": state.dealer,
            "current_player": state.current_player, "phase": str(state.phase),
            "knocker": state.knocker, "turn": state.turn, "hand_number": state.hand_number,
            "taken": state.taken, "drawn": state.drawn,
            "known": [[c for c in range(52) if state.known[s] >> c & 1] for s in range(n)],
            "draws": draws, "discarded_suits": suits}


def _check_same(env: BatchEnv, g: int, state: GameState) -> None:
    got = env.game(g)
    for key, want in _engine_fields(state).items():
        assert got[key] == want, key
    view = make_view(state, state.current_player)
    assert np.array_equal(env._obs[g], compact_observation(view))
    mask = np.zeros(NUM_ACTIONS, bool)
    mask[list(state.legal_actions())] = True
    assert np.array_equal(env._mask[g], mask)


@pytest.mark.parametrize("preset", PLAIN)
@pytest.mark.parametrize("n", [2, 3, 6])
def test_a_written_state_plays_on_as_the_engine_does(preset: str, n: int) -> None:
    rules = Rules.preset(preset)
    rng = random.Random(f"{preset}{n}")
    env = BatchEnv(4, n, rules, seed=1)
    env.reset()
    checked = 0
    for _ in range(12):
        state = GameState(n, rules, rng=random.Random(rng.random()))
        for _ in range(rng.randrange(1, 40)):  # somewhere in some hand
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal() or str(state.phase) not in ("draw", "discard"):
            continue
        g = rng.randrange(4)
        env.set_games([g], [state])
        _check_same(env, g, state)
        _play_the_hand_out_alongside(env, g, state, rng)
        checked += 1
    assert checked >= 6


def _play_the_hand_out_alongside(env: BatchEnv, g: int, state: GameState,
                                 rng: random.Random) -> None:
    """The same random play in game ``g`` and in ``state`` to the end of the hand, the two
    compared at every step, and the hand's end: the same lives lost, the same winner."""
    hand = state.hand_number
    while True:
        action = rng.choice(state.legal_actions())
        before = list(state.lives)
        acts = np.zeros(env.num_envs, np.int64)
        acts[g] = action
        skip = np.ones(env.num_envs, bool)
        skip[g] = False
        out = env.step(acts, skip=skip)
        state.apply_action(action)
        if state.hand_number != hand or state.is_terminal():
            lost = [b - a for b, a in zip(before, state.lives, strict=True)]
            # the next deal is each engine's own: a dealt 31 there ends a second hand
            if state.is_terminal():  # the hand ended the game: the same end
                assert out["lives_lost"][g].tolist() == lost
                assert out["done"][g] and out["winner"][g] == state.winner
            elif out["hands_ended"][g] == 1:
                assert out["lives_lost"][g].tolist() == lost
                assert not out["done"][g]
            assert out["hands_ended"][g] >= 1
            return
        assert out["hands_ended"][g] == 0
        _check_same(env, g, state)


@pytest.mark.parametrize("n", [2, 3, 6])
def test_a_written_golf_state_plays_on_as_the_engine_does(n: int) -> None:
    """Golf (decision (w)): the face-up slots, the card held while placing and the bus
    (which the lives give) are written too, so the same play reaches the same hand's end:
    the same observation and mask at every step, the same lives lost."""
    rules = Rules.preset("golf")
    rng = random.Random(f"golf{n}")
    env = BatchEnv(4, n, rules, seed=1)
    env.reset()
    checked = placing = 0
    for _ in range(16):
        state = GameState(n, rules, rng=random.Random(rng.random()))
        for _ in range(rng.randrange(0, 60)):  # some turn of some hand, either phase
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal() or str(state.phase) not in ("golf_draw", "golf_place"):
            continue
        placing += str(state.phase) == "golf_place"
        g = rng.randrange(4)
        env.set_games([g], [state])
        _check_same(env, g, state)
        assert env.game(g)["face_up"] == list(state.face_up)
        _play_the_hand_out_alongside(env, g, state, rng)
        checked += 1
    assert checked >= 8 and placing >= 2


def test_a_written_state_ends_the_game_as_the_engine_does() -> None:
    """Hands that end the game (two players with one life each: the first hand is the
    last)."""
    rules = Rules.preset("standard").replace(pennies=1, county=False)
    ended = 0
    rng = random.Random(9)
    env = BatchEnv(2, 2, rules, seed=2)
    env.reset()
    for _ in range(30):
        state = GameState(2, rules, rng=random.Random(rng.random()))
        for _ in range(rng.randrange(1, 10)):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal() or str(state.phase) not in ("draw", "discard"):
            continue
        env.set_games([1], [state])
        while not state.is_terminal():
            action = rng.choice(state.legal_actions())
            out = env.step(np.array([0, action]), skip=np.array([True, False]))
            state.apply_action(action)
            if state.is_terminal():
                assert out["done"][1] and out["winner"][1] == state.winner
                ended += 1
            else:
                assert not out["done"][1]
                if state.hand_number > 1:
                    break
    assert ended >= 10


def test_a_sampled_world_is_written_as_it_was_assembled() -> None:
    """``GameState.from_parts`` (how a search builds a world) after a knock: the knock's
    turn and the seat whose discard ends the play come from the log."""
    rules = Rules.preset("standard")
    rng = random.Random(5)
    state = GameState(3, rules, rng=rng)
    while state.knocker is None or str(state.phase) != "draw":
        legal = state.legal_actions()
        state.apply_action(KNOCK if KNOCK in legal and state.turn >= 3 else rng.choice(
            [a for a in legal if a != KNOCK] or legal))
        if state.is_terminal() or state.hand_number > 1:
            pytest.skip("no knock in the first hand of this deal")
    world = GameState.from_parts(
        rules, hands=state.hands, stock=state.stock, discard=state.discard, lives=state.lives,
        dealer=state.dealer, current_player=state.current_player, phase="draw",
        knocker=state.knocker, turn=state.turn, hand_number=state.hand_number,
        known=[[c for c in range(52) if state.known[s] >> c & 1] for s in range(3)],
        log=state.log, single_hand=True)
    env = BatchEnv(1, 3, rules)
    env.reset()
    env.set_games([0], [world])
    _check_same(env, 0, state)


def test_rules_with_calls_are_refused_in_one_line() -> None:
    """The calls keep state a GameState's parts do not give (who called what, who looked)."""
    env = BatchEnv(1, 3, "hammer")
    env.reset()
    state = GameState(3, Rules.preset("hammer"), rng=random.Random(0))
    with pytest.raises(ValueError, match="without calls"):
        env.set_games([0], [state])


def test_a_state_of_other_rules_is_refused() -> None:
    env = BatchEnv(1, 3, "standard")
    env.reset()
    state = GameState(3, Rules.preset("italian"), rng=random.Random(0))
    with pytest.raises(ValueError, match="not of this table"):
        env.set_games([0], [state])
