"""Random-simulation invariants, in the spirit of OpenSpiel's game tests.

Hypothesis draws a table size, a preset and a seed; a seeded random player then plays and
every invariant is checked after every action. Examples are bounded so the file stays fast.
"""

from __future__ import annotations

import random
from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scat_env import PRESETS, GameState, Rules
from scat_env.actions import NUM_ACTIONS
from scat_env.aec_env import raw_env
from scat_env.cards import card_str
from scat_env.engine import HandResult, Phase
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
    unchanged (the env's infos, which only a played step fills, are checked the same way
    by :func:`check_hidden_information_in_env_infos`, on twin decks)."""
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


def shown_part(result: HandResult, seat: int) -> tuple:
    """What ``seat`` was shown of a scored hand, read from the full record by RULES.md
    decision (r) (not through ``seen_by``): a showdown shows every hand, a 31 only the
    declarers'; a seat always knows its own."""
    if result.reason in ("thirty_one", "dealt_thirty_one"):
        shown = set(result.declarers) | {seat}
    else:
        shown = set(result.hands)
    hands = {s: h for s, h in result.hands.items() if s in shown}
    values = {s: v for s, v in result.values.items() if s in shown}
    rest = tuple(getattr(result, f.name) for f in fields(result)
                 if f.name not in ("hands", "values"))
    return hands, values, rest


def check_hidden_information_in_env_infos(n: int, preset: str, seed: int, max_steps: int = 100,
                                          deck: list[int] | None = None) -> int:
    """Twin decks: the same game with one card of seat 1 swapped for the bottom card of the
    stock. Step both envs with the same actions; at every step, each seat that sees the same
    position in both (its view) and was shown the same of every hand just scored must get
    the same infos and observation: the infos tell a seat nothing its view does not.
    Returns how many (step, seat) pairs were compared. ``deck``: a stacked deck (default: a
    shuffle drawn from ``seed``)."""
    rules = Rules.preset(preset)
    rng = random.Random(seed)
    if deck is None:
        deck = list(rules.deck_cards)
        rng.shuffle(deck)
    twin = deck[:]
    twin[1], twin[-1] = twin[-1], twin[1]  # dealer n-1: deck[1] is seat 1's first card
    envs = []
    for d in (deck, twin):
        e = raw_env(num_players=n, rules=rules)
        e.reset(seed=seed, options={"deck": d, "dealer": n - 1})
        envs.append(e)
    seen = [0, 0]
    compared = 0
    for _ in range(max_steps + 1):
        states = [e._state for e in envs]
        new = [st.results[k:] for st, k in zip(states, seen, strict=True)]
        seen = [len(st.results) for st in states]
        for seat in range(n):
            agent = f"player_{seat}"
            if envs[0].view(agent) != envs[1].view(agent):
                continue  # the swapped card is in this seat's sight (its own hand, a discard)
            if [shown_part(r, seat) for r in new[0]] != [shown_part(r, seat) for r in new[1]]:
                continue  # a showdown showed the swapped card
            compared += 1
            assert envs[0].infos.get(agent) == envs[1].infos.get(agent), (preset, seat)
            if agent in envs[0].agents:
                obs = [e.observe(agent) for e in envs]
                assert (obs[0]["observation"] == obs[1]["observation"]).all()
        if not envs[0].agents or states[0].is_terminal():
            break
        agent = envs[0].agent_selection
        if agent != envs[1].agent_selection:
            break  # the games went apart
        done = [e.terminations[agent] or e.truncations[agent] for e in envs]
        if done[0] != done[1]:
            break  # the swapped card put this seat out in one game only
        if done[0]:
            action = None
        else:
            legal = envs[0].observe(agent)["action_mask"].nonzero()[0]
            action = int(legal[rng.randrange(len(legal))])
            if not envs[1].observe(agent)["action_mask"][action]:
                break  # the swapped card made a different move legal
        for e in envs:
            e.step(action)
    return compared


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
    check_hidden_information_in_env_infos(n, preset, seed, max_steps=60)


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("n", [2, 3, 6, 10])
def test_invariants_hold_in_every_preset(preset, n):
    """Every preset at 2, 3, 6 and 10 players: cards of its pack conserved (52 or 40),
    lives, masks, observations in [0, 1], hidden cards (the stock, opponents' cards and
    one's own cards before looking) never change what a seat sees."""
    run(n, preset, seed=n * 1000 + len(preset), max_actions=300, hidden_every=3)


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("n", [2, 5])
def test_env_infos_tell_a_seat_nothing_its_view_does_not(preset, n):
    """Every preset, twin decks: infos (a hand's result after a 31 shows only the declarers'
    hands, decision (r)) and observations agree wherever the seat's view does."""
    compared = sum(check_hidden_information_in_env_infos(n, preset, seed) for seed in (1, 2))
    assert compared >= n  # every seat was compared at the deal at least


def test_env_infos_check_can_fail(monkeypatch):
    """Guard for the test above: infos that carry every hand of a 31's result (the full
    record, not what the seat saw) are caught, though every view stays the same."""
    full_dict, seen_by = HandResult.to_dict, HandResult.seen_by

    def remember(self, seat):  # each seen result keeps a way back to its full record
        seen = seen_by(self, seat)
        if seen is not self:
            object.__setattr__(seen, "_full", self)
        return seen

    def leaky(self, names=None):  # infos (not views) get every hand of the full record
        out = full_dict(self, names)
        out["leak"] = {s: list(h) for s, h in getattr(self, "_full", self).hands.items()}
        return out

    # A 31 dealt to seat 2 (AC KC QC) ends the first hand at the deal; seat 1's first card,
    # swapped in the twin deck, is never shown.
    rest = [c for c in range(52) if c not in (10, 11, 12)]
    random.Random(0).shuffle(rest)
    deck = rest[:2] + [12] + rest[2:4] + [11] + rest[4:6] + [10] + rest[6:]
    assert check_hidden_information_in_env_infos(3, "standard", 0, deck=deck) >= 3
    monkeypatch.setattr(HandResult, "seen_by", remember)
    monkeypatch.setattr(HandResult, "to_dict", leaky)
    with pytest.raises(AssertionError):
        check_hidden_information_in_env_infos(3, "standard", 0, deck=deck)


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


def check_game_end(state: GameState) -> None:
    """A finished game has one winner and zero-sum returns; an unfinished one was cut at the
    turn cap with at least two players left and returns zeros."""
    n = state.num_players
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


@settings(max_examples=30, deadline=None)
@given(n=st.integers(min_value=2, max_value=6), preset=presets, seed=seeds)
def test_games_end_with_one_winner_or_a_truncation(n, preset, seed):
    check_game_end(run(n, preset, seed, max_actions=100_000))


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_plays_to_one_winner_or_a_truncation(preset):
    """One whole game of each preset (hypothesis above samples presets, so a run may miss
    some); the table size cycles through 2, 3 and 4 players across the presets."""
    n = 2 + list(PRESETS).index(preset) % 3
    check_game_end(run(n, preset, seed=7, max_actions=100_000))


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
