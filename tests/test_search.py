"""The search player (``search:W``, agents/search.py): it reads only its view, it plays out
every move it weighs, and it is refused in one line when its budget is not one."""

from __future__ import annotations

import random

import pytest

from agents.registry import make_agent
from agents.search import SURE, SearchAgent, parse_worlds, searchable
from scat_env import GameState, Rules
from scat_env.view import make_view


def _mid_hand(seed: int, rules: str = "standard", n: int = 3) -> GameState:
    """A state a few turns into a hand, at a decision with more than one legal move."""
    rng = random.Random(seed)
    state = GameState(n, Rules.preset(rules), rng=rng)
    for _ in range(rng.randrange(2, 9)):
        state.apply_action(rng.choice(state.legal_actions()))
        if state.hand_number > 1 or state.is_terminal():
            break
    while len(state.legal_actions()) < 2 and not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    return state


def _same_view_other_cards(state: GameState, seed: int) -> GameState:
    """``state`` with the cards its mover cannot see dealt again: every opponent's unknown
    cards and the stock shuffled together."""
    me = state.current_player
    rng = random.Random(seed)
    unknown = [c for s in range(state.num_players) if s != me
               for c in state.hands[s] if not state.known[s] >> c & 1] + list(state.stock)
    rng.shuffle(unknown)
    hands, pos = [], 0
    for s in range(state.num_players):
        if s == me:
            hands.append(list(state.hands[s]))
            continue
        h = [c if state.known[s] >> c & 1 else None for c in state.hands[s]]
        for i, c in enumerate(h):
            if c is None:
                h[i] = unknown[pos]
                pos += 1
        hands.append(h)
    other = GameState.from_parts(
        state.rules, hands=hands, stock=unknown[pos:], discard=state.discard,
        lives=state.lives, dealer=state.dealer, current_player=me, phase=str(state.phase),
        knocker=state.knocker, turn=state.turn, hand_number=state.hand_number,
        known=[[c for c in range(52) if state.known[s] >> c & 1]
               for s in range(state.num_players)],
        log=state.log, taken=state.taken, drawn=state.drawn)
    assert make_view(other, me) == make_view(state, me)
    assert other.hands != state.hands or other.stock != state.stock
    return other


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_hidden_cards_do_not_change_the_choice(seed: int) -> None:
    """Two deals that look the same to the player: the same move, the same values, for
    the same seed (the search reads the view, never the state behind it)."""
    state = _mid_hand(seed)
    other = _same_view_other_cards(state, seed + 100)
    me = state.current_player
    a = SearchAgent(16, seed=7).choose(make_view(state, me))
    b = SearchAgent(16, seed=7).choose(make_view(other, me))
    assert a == b


def test_every_legal_move_is_valued_from_the_same_worlds() -> None:
    state = _mid_hand(11)
    view = make_view(state, state.current_player)
    values = SearchAgent(24, seed=3).evaluate(view)
    assert sorted(v.action for v in values) == sorted(view.legal_actions)
    assert [v.mean for v in values] == sorted((v.mean for v in values), reverse=True)
    assert all(0.0 <= v.mean <= 1.0 and v.se >= 0.0 for v in values)
    assert abs(sum(v.prior for v in values) - 1.0) < 1e-5
    game = SearchAgent(24, seed=3).evaluate(view, horizon="game")
    assert all(0.0 <= v.mean <= 1.0 for v in game)


def test_a_hopeless_move_is_valued_below_the_policys() -> None:
    """Knocking on a poor hand at the first chance costs win chance: the playouts see the
    knocker caught lowest."""
    rng = random.Random(0)
    for _ in range(200):
        state = GameState(3, Rules.preset("standard"), rng=random.Random(rng.random()))
        for _ in range(3):  # everyone's first draw and discard, to the knock's first chance
            state.apply_action(rng.choice([a for a in state.legal_actions() if a != 54]))
            state.apply_action(rng.choice(state.legal_actions()))
        if (54 in state.legal_actions() and str(state.phase) == "draw"
                and state.hand_value(state.current_player) <= 12):
            break
    else:
        pytest.skip("no poor hand at a knock's chance in these deals")
    view = make_view(state, state.current_player)
    values = {v.action: v.mean for v in SearchAgent(48, seed=1).evaluate(view)}
    assert values[54] < max(values.values())


def test_decisions_it_does_not_search_are_the_policys() -> None:
    hammer = GameState(3, Rules.preset("hammer"), rng=random.Random(1))
    assert not searchable(make_view(hammer, hammer.current_player))
    policy = make_agent("compact:scat_batch_set")
    agent = SearchAgent(8, seed=0)
    sure = None
    for seed in range(40):  # a view the policy is sure of: its move, unsearched
        state = _mid_hand(seed)
        view = make_view(state, state.current_player)
        if searchable(view) and max(agent.priors(view).values()) >= SURE:
            sure = view
            break
    assert sure is not None
    chosen, values = agent.choose(sure)
    assert values == [] and chosen == policy.act(sure)


def test_it_plays_whole_games_against_expert() -> None:
    from agents.match import play_game

    agents = [make_agent("search:4", seed=1), make_agent("expert"), make_agent("expert")]
    record = play_game(agents, seed=3)
    assert record.winner in (0, 1, 2) and not record.truncated
    assert any(seat == 0 for seat, _ in record.actions)


@pytest.mark.parametrize("arg, message", [("0", "between 1 and"), ("x", "positive integer"),
                                          ("5000", "between 1 and"), ("-3", "between 1 and")])
def test_a_budget_that_is_not_one_is_refused_in_one_line(arg: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        parse_worlds(arg)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=message):
        make_agent(f"search:{arg}")


def test_two_threads_searching_at_once_do_not_abort_the_process(tmp_path):
    """A server reviews and plays searching opponents in threads; numba's fallback
    threading layer (no OpenMP, no TBB) aborts a process whose threads launch its parallel
    kernels at once, so the playouts take turns."""
    import subprocess
    import sys

    script = """
import random, threading
from agents.search import SearchAgent
from scat_env import GameState, Rules
from scat_env.view import make_view
state = GameState(3, Rules(), rng=random.Random(4))
for _ in range(4):
    state.apply_action(state.legal_actions()[0])
view = make_view(state, state.current_player)
def work():
    agent = SearchAgent(4, seed=1)
    for _ in range(15):
        agent.evaluate(view)
threads = [threading.Thread(target=work) for _ in range(2)]
[t.start() for t in threads]
[t.join() for t in threads]
print("ok")
"""
    import os

    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]


def _golf_turn(seed: int, n: int, most: int) -> GameState | None:
    """A golf game of ``n`` after up to ``most`` random moves; ``None`` if it ended."""
    rng = random.Random(seed)
    state = GameState(n, Rules.preset("golf"), rng=random.Random(seed))
    for _ in range(rng.randrange(0, most)):
        state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal():
            return None
    return state


def test_golf_is_searched_with_the_golf_policy_one_slot_of_each_kind() -> None:
    """Golf (decision (w)): every choice with two kinds of move open is searched, however
    sure the golf policy is (it learned to copy ``expert``'s expected value, not the
    quarter the lowest hand loses), and each kind once: the face-down slots are alike to
    everyone, so the search weighs the policy's likeliest slot of each."""
    from agents.search import _GOLF_KIND

    rules = Rules.preset("golf")
    agent = SearchAgent(16, seed=2)
    agent.check_table(3, rules)
    assert agent.trained_on(rules)
    searched = {"golf_draw": 0, "golf_place": 0}
    for seed in range(40):
        state = _golf_turn(seed, 3, 20)
        if state is None:
            continue
        view = make_view(state, state.current_player)
        kinds = {_GOLF_KIND[a] for a in view.legal_actions}
        choice, values = agent.choose(view)
        assert choice in view.legal_actions
        if len(kinds) < 2:
            assert values == []
            continue
        assert searchable(view)
        assert sorted(_GOLF_KIND[v.action] for v in values) == sorted(kinds)
        priors = agent.priors(view)
        for v in values:  # the likeliest slot of its kind
            assert v.prior == max(p for a, p in priors.items()
                                  if _GOLF_KIND[a] == _GOLF_KIND[v.action])
        searched[str(view.phase)] += 1
    assert min(searched.values()) >= 3


def test_a_golf_world_is_the_view_with_the_face_down_cards_dealt_again() -> None:
    """Golf's worlds (:func:`agents.ismcts.determinise_golf`) keep everything the player
    sees, every seat's face-up slots included, and deal every face-down card and the stock
    from the cards nobody has seen; the world then plays on to the end of its hand."""
    import dataclasses

    from agents.ismcts import determinise

    rules = Rules.preset("golf")
    worlds = 0
    for seed in range(30):
        state = _golf_turn(seed, 3 + seed % 4, 50)
        if state is None:
            continue
        rng = random.Random(seed)
        view = make_view(state, state.current_player)
        world = determinise(view, random.Random(seed))
        assert make_view(world, view.seat) == dataclasses.replace(view, last_result=None)
        for seat in range(state.num_players):
            assert make_view(world, seat).slots == make_view(state, seat).slots
        assert sorted([*world.stock, *world.discard, *(c for h in world.hands for c in h)]) == (
            sorted(rules.deck_cards))
        hand = world.hand_number
        while not world.is_terminal() and world.hand_number == hand:
            world.apply_action(rng.choice(world.legal_actions()))
        worlds += 1
    assert worlds >= 20


@pytest.mark.parametrize("n", [3, 6])
def test_golf_is_searched_from_the_view_alone_on_paired_worlds(n: int) -> None:
    """Golf's playouts are sampled from the view alone, one world a row, copied for each
    move (``BatchEnv.copy_games``): a deal with other face-down cards behind the same view
    gets the same choice and values, and a move played against itself scores the same in
    every world (its two copies hold the same cards), while the worlds differ."""
    from agents.ismcts import determinise

    for seed in range(40):
        state = _golf_turn(seed, n, 6 * n)
        if state is not None and len(state.legal_actions()) >= 2:
            break
    me = state.current_player
    view = make_view(state, me)
    other = determinise(view, random.Random(seed + 1))  # the same view, other cards
    assert make_view(other, me).slots == view.slots and other.hands != state.hands
    a = SearchAgent(16, seed=7).choose(view)
    assert a == SearchAgent(16, seed=7).choose(make_view(other, me))
    move = a[0]
    out = SearchAgent(24, seed=3).play_out(view, [move, move], 24)
    assert (out[:, 0] == out[:, 1]).all() and len(set(out[:, 0].tolist())) > 1
