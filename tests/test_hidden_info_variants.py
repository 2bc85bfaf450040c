"""Hidden information in the variations: what a seat may not know leaves no trace in its
view, observation, action mask, infos or rendered table.

Declaring 31 as a choice (preset ``undeclared_31``, 002/000): whether a seat holding a new
31 declares it or keeps it quiet is its own private decision. The checks play the same
public moves twice from stacked decks, once with the seat holding a 31 it keeps quiet and
once with a hand of the same seat that is not a 31 (the swapped card lies deep in the stock,
never drawn), and compare everything each other seat is shown at every step.
"""

from __future__ import annotations

from collections.abc import Sequence

from conftest import stack

import scat_env
from scat_env import Rules, parse_card
from scat_env.actions import DECLARE, DRAW_DISCARD, DRAW_STOCK, PASS
from scat_env.render import render_table

RULES = Rules.preset("undeclared_31")


def _seen(env: scat_env.raw_env, seat: int) -> tuple:
    """Everything ``seat`` is shown: view, observation, mask, infos and its rendered table."""
    agent = f"player_{seat}"
    obs = env.observe(agent)
    state = env.unwrapped._state
    return (env.view(agent), obs["observation"].tobytes(), obs["action_mask"].tobytes(),
            repr(env.infos[agent]), render_table(state, perspective=seat))


def _play(hands: Sequence[str], upcard: str, stock: Sequence[str], dealer: int,
          moves: Sequence[int | str], watchers: Sequence[int]) -> dict[int, list[tuple]]:
    """Play ``moves`` (actions, or cards to discard) on the stacked deal; per watching seat,
    what it was shown after every step, repeats of the same picture kept once."""
    env = scat_env.raw_env(num_players=len(hands), rules=RULES)
    env.reset(seed=7, options={"deck": stack(hands, upcard, stock, dealer), "dealer": dealer})
    shown: dict[int, list[tuple]] = {s: [_seen(env, s)] for s in watchers}
    for move in moves:
        env.step(parse_card(move) if isinstance(move, str) else move)
        for s in watchers:
            picture = _seen(env, s)
            if picture != shown[s][-1]:
                shown[s].append(picture)
    return shown


def test_a_31_made_and_kept_quiet_leaves_no_trace_for_the_other_seats():
    """Seat 1 draws QH to AH KH (a new 31) and keeps quiet; in the twin game it holds
    AH 9C and draws QH to 21. Seat 2 then makes and declares a 31, which shows only its
    own hand. Seats 0 and 2 are shown exactly the same things at every step."""
    stock = ["3C", "QH", "QC"]
    quiet = ["QS 9D 8D", "AH KH 5D", "AC KC 4S"]
    plain = ["QS 9D 8D", "AH 9C 5D", "AC KC 4S"]
    turn_0 = [DRAW_STOCK, "3C"]
    with_31 = _play(quiet, "2D", stock, 2,
                    [*turn_0, DRAW_STOCK, "5D", PASS, DRAW_STOCK, "4S", DECLARE], (0, 2))
    without = _play(plain, "2D", stock, 2,
                    [*turn_0, DRAW_STOCK, "5D", DRAW_STOCK, "4S", DECLARE], (0, 2))
    for seat in (0, 2):
        assert len(with_31[seat]) == len(without[seat]) > 5
        for step, (a, b) in enumerate(zip(with_31[seat], without[seat], strict=True)):
            assert a == b, f"seat {seat}, picture {step}: a quiet 31 showed"
    # While seat 1 decides, the others still see its turn in the discard phase.
    waiting = with_31[0][3][0]
    assert waiting.phase == "discard" and waiting.current_player == 1
    assert all(kind != "pass" for _, kind, _ in waiting.log)


def test_a_31_made_by_discarding_a_card_taken_from_the_pile_leaves_no_trace():
    """Seat 1 takes the 3C from the pile (everyone knows it holds it), later draws QH and
    discards the 3C for AH KH QH, kept quiet; in the twin it holds AH 9C and ends on 21.
    While seat 1 decides, the others still see the 3C in its hand, as in the twin."""
    stock = ["3C", "4C", "5C", "QH", "6C", "7C"]
    quiet = ["QS 9D 8D", "AH KH 5D", "AC KC 4S"]
    plain = ["QS 9D 8D", "AH 9C 5D", "AC KC 4S"]
    start = [DRAW_STOCK, "3C", DRAW_DISCARD, "5D", DRAW_STOCK, "4C", DRAW_STOCK, "5C",
             DRAW_STOCK, "3C"]
    with_31 = _play(quiet, "2D", stock, 2, [*start, PASS, DRAW_STOCK, "6C"], (0, 2))
    without = _play(plain, "2D", stock, 2, [*start, DRAW_STOCK, "6C"], (0, 2))
    for seat in (0, 2):
        assert with_31[seat] == without[seat], f"seat {seat}: a quiet 31 showed"


def test_a_dealt_31_kept_quiet_leaves_no_trace_but_the_wait():
    """Seat 1 is dealt AH KH QH and keeps quiet (the twin: AH KH 9C). Seats 2 and 3 are
    shown the same things throughout; the first player, seat 0, is shown the same things
    plus one picture of the first turn before its moves are offered (the holder deciding)."""
    stock = ["3C", "3D", "3H", "QC"]
    quiet = ["JD 9D 8D", "AH KH QH", "7S 6S 4S", "AC KC 4C"]
    plain = ["JD 9D 8D", "AH KH 9C", "7S 6S 4S", "AC KC 4C"]
    play = [DRAW_STOCK, "3C", DRAW_STOCK, "3D", DRAW_STOCK, "3H", DRAW_STOCK, "4C", DECLARE]
    with_31 = _play(quiet, "2D", stock, 3, [PASS, *play], (0, 2, 3))
    without = _play(plain, "2D", stock, 3, play, (0, 2, 3))
    for seat in (2, 3):
        assert with_31[seat] == without[seat], f"seat {seat}: a dealt quiet 31 showed"
    first = with_31[0][0][0]
    assert first.current_player == 0 and first.phase == "draw" and first.legal_actions == ()
    assert with_31[0][1:] == without[0]
    assert all(kind != "pass" for picture in with_31[0] for _, kind, _ in picture[0].log)


def test_the_quiet_check_can_fail():
    """The same comparison tells two different public games apart (it is not vacuous)."""
    stock = ["3C", "QH", "QC"]
    hands = ["QS 9D 8D", "AH 9C 5D", "AC KC 4S"]
    one = _play(hands, "2D", stock, 2, [DRAW_STOCK, "3C", DRAW_STOCK, "5D"], (0,))
    other = _play(hands, "2D", stock, 2, [DRAW_STOCK, "3C", DRAW_STOCK, "QH"], (0,))
    assert one[0] != other[0]


def test_golf_face_down_cards_are_unseen_by_everyone_their_owner_included():
    """Golf: seat 0's third face-down card is 9S in one deal and 4D (from deep in the
    stock) in its twin. Until that slot is turned up, no seat, seat 0 included, is shown
    anything different: view, observation, mask, infos and rendered table."""
    from scat_env.actions import TURN_UP

    golf = Rules.preset("golf")
    stock = ["3S", "4S", "5S", "6S", "7S", "10S", "2H"]
    moves = [DRAW_STOCK, TURN_UP, DRAW_STOCK, TURN_UP, DRAW_STOCK, TURN_UP,
             DRAW_STOCK, TURN_UP + 1, DRAW_STOCK, TURN_UP + 1, DRAW_STOCK, TURN_UP + 1]

    def shown(third: str) -> dict[int, list[tuple]]:
        env = scat_env.raw_env(num_players=3, rules=golf)
        deck = stack(["5H 8H " + third, "KS QS 2D", "AD 9D 3C"], "2C", stock, 2)
        env.reset(seed=3, options={"deck": deck, "dealer": 2})
        out: dict[int, list[tuple]] = {s: [_seen(env, s)] for s in range(3)}
        for move in moves:
            env.step(move)
            for s in range(3):
                out[s].append(_seen(env, s))
        return out

    one, other = shown("9S"), shown("4D")
    for seat in range(3):
        assert one[seat] == other[seat], f"seat {seat} saw a face-down card"
    env = scat_env.raw_env(num_players=3, rules=golf)
    env.reset(seed=3, options={"deck": stack(["5H 8H 9S", "KS QS 2D", "AD 9D 3C"], "2C",
                                             stock, 2), "dealer": 2})
    for move in [*moves, DRAW_STOCK]:
        env.step(move)
    before = _seen(env, 1)
    env.step(TURN_UP + 2)  # now it is face up: everyone sees it
    assert _seen(env, 1) != before and env.view("player_1").slots[0][2] == parse_card("9S")
