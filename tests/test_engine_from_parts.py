"""GameState.from_parts: the hook search agents use to rebuild a state from a sampled view."""

import random

import pytest

from scat_env import GameState, Rules, make_view


def _mid_hand_state(seed: int = 3) -> GameState:
    st = GameState(3, seed=seed)
    rng = random.Random(seed)
    for _ in range(7):
        legal = st.legal_actions()
        st.apply_action(legal[rng.randrange(len(legal))] if 54 not in legal else legal[0])
    return st


def _parts(st: GameState) -> dict:
    return dict(
        hands=st.hands, stock=st.stock, discard=st.discard, lives=st.lives, dealer=st.dealer,
        current_player=st.current_player, phase=st.phase,
        knocker=st.knocker, turn=st.turn,
        hand_number=st.hand_number,
        known=[[c for c in range(52) if k >> c & 1] for k in st.known], log=st.log,
        taken=st.taken, drawn=st.drawn,
    )


def test_from_parts_rebuilds_a_state_that_looks_and_plays_the_same():
    st = _mid_hand_state()
    copy = GameState.from_parts(st.rules, **_parts(st))
    for seat in range(3):
        a, b = make_view(st, seat), make_view(copy, seat)
        assert a.hand == b.hand and a.legal_actions == b.legal_actions
        assert a.known_cards == b.known_cards and a.discard_pile == b.discard_pile
    action = st.legal_actions()[0]
    st.apply_action(action)
    copy.apply_action(action)
    assert st.hands == copy.hands and st.current_player == copy.current_player


def test_from_parts_refuses_a_pack_that_is_not_whole():
    st = _mid_hand_state()
    parts = _parts(st)
    parts["stock"] = parts["stock"][1:]
    with pytest.raises(ValueError, match="every card of the pack exactly once"):
        GameState.from_parts(Rules(), **parts)


def test_from_parts_refuses_wrong_hand_sizes():
    st = _mid_hand_state()
    parts = _parts(st)
    hands = [list(h) for h in parts["hands"]]
    other = (st.current_player + 1) % 3
    parts["stock"] = list(parts["stock"]) + [hands[other].pop()]
    parts["hands"] = hands
    with pytest.raises(ValueError, match=f"seat {other} holds 2 cards"):
        GameState.from_parts(Rules(), **parts)


def test_every_way_of_making_a_state_sets_exactly_the_declared_fields():
    """GameState declares its fields once; a new game, from_parts and clone all hold
    exactly those, so a field added to the table cannot be forgotten by one of them."""
    from dataclasses import fields

    declared = {f.name for f in fields(GameState)}
    st = _mid_hand_state()
    for made in (st, GameState.from_parts(st.rules, **_parts(st)), st.clone()):
        assert set(vars(made)) == declared


def test_a_clone_shares_nothing_mutable_and_deals_the_same_future():
    st = _mid_hand_state()
    twin = st.clone()
    for name in ("lives", "active", "results", "known", "stock", "discard", "log"):
        assert getattr(twin, name) == getattr(st, name)
        assert getattr(twin, name) is not getattr(st, name), name
    assert all(a is not b for a, b in zip(twin.hands, st.hands, strict=True))
    assert twin.rng is not st.rng
    rng = random.Random(9)
    while not st.is_terminal():  # both play the same moves to the end: same deals
        action = rng.choice(st.legal_actions())
        st.apply_action(action)
        twin.apply_action(action)
        assert twin.hands == st.hands and twin.stock == st.stock
    assert twin.results == st.results and twin.winner == st.winner
