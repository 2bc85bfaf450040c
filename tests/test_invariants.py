"""Random-simulation invariants, in the spirit of OpenSpiel's game tests.

Hypothesis draws a table size, a preset and a seed; a seeded random player then plays and
every invariant is checked after every action. Examples are bounded so the file stays fast.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scat_env import PRESETS, GameState, Rules
from scat_env.actions import NUM_ACTIONS
from scat_env.cards import card_str
from scat_env.engine import Phase
from scat_env.observation import ObservationEncoder, action_mask
from scat_env.render import render_table
from scat_env.view import make_view

MAX_TURNS = 300  # the env's default per-hand cap

tables = st.integers(min_value=2, max_value=10)
presets = st.sampled_from(list(PRESETS))
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def snapshot(s: GameState) -> tuple:
    """Everything that defines a state, for clone equality."""
    return (s.num_players, s.rules, tuple(s.lives), tuple(s.active),
            tuple(tuple(h) for h in s.hands), tuple(s.known), tuple(s.stock),
            tuple(s.discard), tuple(s.log), tuple(s.results), s.hand_number, s.turn,
            s.knocker, s.knock_turn, s.last_seat, tuple(s.looked), tuple(s.quiet), s.pending,
            tuple(s.points), tuple(s.face_up), s.declared, s.taken, s.drawn, s.current_player,
            s.phase, s.dealer, s.rng.getstate())


def check_state(s: GameState, encoder: ObservationEncoder) -> None:
    # every card of the pack (52, or the Italian 40) conserved, no duplicates
    cards = [c for h in s.hands for c in h] + s.stock + s.discard
    assert sorted(cards) == list(s.rules.deck_cards), "cards lost or duplicated"
    # lives never negative; out exactly when no lives are left
    assert all(x >= 0 for x in s.lives)
    assert s.active == [x > 0 for x in s.lives]
    if s.rules.scoring == "points":
        # nobody is put out of a points race; points only grow, one a hand at most
        assert s.lives == [s.rules.start_lives] * s.num_players
        assert all(0 <= p <= len(s.results) for p in s.points)
    else:
        assert s.points == [0] * s.num_players
    if s.rules.one_on_the_bus:
        assert sum(1 for x in s.lives if x == 1) <= 1, "two players on the bus"
    for seat in range(s.num_players):
        if not s.active[seat] and not s.is_terminal():
            assert s.hands[seat] == [], "a player who is out is dealt no cards"
    legal = s.legal_actions()
    assert legal == sorted(legal) and len(set(legal)) == len(legal)
    assert [a for a in range(NUM_ACTIONS) if s.is_legal(a)] == legal
    if s.is_terminal():
        assert legal == []
        return
    assert legal, "a live state always offers a decision"
    mover = s.current_player
    assert s.active[mover]
    want = {Phase.DISCARD: 4, Phase.GOLF_PLACE: 4, Phase.SUDDEN_DEATH: 1}.get(s.phase, 3)
    assert len(s.hands[mover]) == want
    # the observation's mask is the engine's legal set; all zeros for everyone else
    for seat in range(s.num_players):
        mask = action_mask(make_view(s, seat))
        if seat == mover:
            assert [a for a in range(NUM_ACTIONS) if mask[a]] == legal
        else:
            assert not mask.any()
    obs = encoder.encode(make_view(s, mover))
    assert obs.shape == (encoder.size,) and obs.min() >= 0.0 and obs.max() <= 1.0


def check_hidden_information(s: GameState, encoder: ObservationEncoder, rng: random.Random) -> None:
    """Changing what a seat cannot know leaves its view, observation and rendered table
    unchanged."""
    if s.is_terminal() or not s.stock:
        return
    for me in s.active_seats():
        alt = s.clone()
        rng.shuffle(alt.stock)  # the stock order is hidden from everyone
        for opp in alt.active_seats():
            if opp == me and alt.looked[me]:
                continue  # my own cards, once I have looked at them
            hidden = [c for c in alt.hands[opp]
                      if not (alt.known[opp] >> c) & 1 and c != alt.drawn]
            if hidden:
                card = rng.choice(hidden)
                j = rng.randrange(len(alt.stock))
                i = alt.hands[opp].index(card)
                alt.hands[opp][i], alt.stock[j] = alt.stock[j], alt.hands[opp][i]
        mine, theirs = make_view(s, me), make_view(alt, me)
        assert mine == theirs
        assert (encoder.encode(mine) == encoder.encode(theirs)).all()
        assert render_table(s, perspective=me) == render_table(alt, perspective=me)


def run(n: int, preset: str, seed: int, max_actions: int, hidden_every: int = 0) -> GameState:
    rules = Rules.preset(preset)
    state = GameState(n, rules, seed=seed)
    encoder = ObservationEncoder(n, rules)
    rng = random.Random(seed)
    check_state(state, encoder)
    for step in range(max_actions):
        if state.is_terminal() or state.turn >= MAX_TURNS:
            break
        legal = state.legal_actions()
        action = legal[rng.randrange(len(legal))]
        twin = state.clone()
        assert snapshot(twin) == snapshot(state)
        state.apply_action(action)
        twin.apply_action(action)
        assert snapshot(twin) == snapshot(state), "clone diverged"
        check_state(state, encoder)
        if hidden_every and step % hidden_every == 0:
            check_hidden_information(state, encoder, rng)
    return state


@settings(max_examples=40, deadline=None)
@given(n=tables, preset=presets, seed=seeds)
def test_invariants_hold_after_every_action(n, preset, seed):
    run(n, preset, seed, max_actions=200, hidden_every=7)


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("n", [2, 3, 6, 10])
def test_invariants_hold_in_every_preset(preset, n):
    """Every preset at 2, 3, 6 and 10 players: cards of its pack conserved (52 or 40),
    lives, masks, observations in [0, 1], hidden cards (the stock, opponents' cards and
    one's own cards before looking) never change what a seat sees."""
    run(n, preset, seed=n * 1000 + len(preset), max_actions=300, hidden_every=3)


def check_results(state: GameState) -> None:
    n = state.num_players
    lives = [state.rules.start_lives] * n
    dealer = None
    for res in state.results:
        if dealer is not None:
            assert res.dealer == dealer, "the deal passes left among players still in"
        for seat, lost in res.lives_lost.items():
            assert 0 <= lost <= lives[seat]
            lives[seat] -= lost
        assert tuple(lives) == res.lives_after
        assert set(res.eliminated) == {s for s in res.lives_lost if lives[s] == 0}
        if res.replayed:
            assert not any(res.lives_lost.values())
            dealer = res.dealer
        else:
            dealer = (res.dealer + 1) % n
        while lives[dealer] == 0 and any(lives):
            dealer = (dealer + 1) % n
    assert lives == state.lives


@settings(max_examples=30, deadline=None)
@given(n=st.integers(min_value=2, max_value=6), preset=presets, seed=seeds)
def test_games_end_with_one_winner_or_a_truncation(n, preset, seed):
    state = run(n, preset, seed, max_actions=100_000)
    check_results(state)
    if state.phase is Phase.GAME_OVER and state.rules.scoring == "points":
        top = max(state.points)
        assert top >= state.rules.points_to_win and state.points.count(top) == 1
        assert state.points[state.winner] == top
        assert state.results[-1].race_winner == state.winner
        returns = state.returns()
        assert sum(returns) == pytest.approx(0.0, abs=1e-12)
        assert returns[state.winner] == 1.0
    elif state.phase is Phase.GAME_OVER:
        assert sum(state.active) == 1 and state.active[state.winner]
        returns = state.returns()
        assert sum(returns) == pytest.approx(0.0, abs=1e-12)
        assert returns[state.winner] == 1.0
    else:
        assert state.turn >= MAX_TURNS and sum(state.active) >= 2
        assert state.returns() == [0.0] * n


def test_hidden_information_check_can_fail():
    """Guard for the test above: a seat's own hand does show in its observation."""
    state = GameState(3, seed=0)
    encoder = ObservationEncoder(3, state.rules)
    alt = state.clone()
    me = state.current_player
    alt.hands[me][0], alt.stock[0] = alt.stock[0], alt.hands[me][0]
    assert (encoder.encode(make_view(state, me)) != encoder.encode(make_view(alt, me))).any()
    assert render_table(state, perspective=me) != render_table(alt, perspective=me)


def test_render_hides_the_cards_of_a_seat_that_has_not_looked():
    """Throw-down: nobody has looked at the deal yet, so the table shows no one's cards, not
    even the perspective seat's own (it would tell that seat more than its view does)."""
    state = GameState(3, Rules.preset("throw_down"), seed=4)
    me = state.current_player
    assert not state.looked[me]
    text = render_table(state, perspective=me)
    assert all(card_str(c, symbols=True) not in text for c in state.hands[me])
    alt = state.clone()
    alt.hands[me][0], alt.stock[0] = alt.stock[0], alt.hands[me][0]
    assert render_table(alt, perspective=me) == text


def test_clone_is_independent():
    state = GameState(4, seed=3)
    twin = state.clone()
    twin.apply_action(twin.legal_actions()[0])
    assert snapshot(twin) != snapshot(state)
    assert twin._table is state._table  # shared, never copied
    assert twin.rng is not state.rng
