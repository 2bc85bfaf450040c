"""What a 31 shows (002 "Declaring 31"): the holder declares by showing their cards; the
other hands are not shown. At a showdown (knock, exhausted stock) every hand is shown.

Each seat's view (``PlayerView.last_result``), the env's ``infos[agent]["hand_result"]``
and the rendering hold only the hands that seat saw; the full record stays with the game.
"""

from __future__ import annotations

import pytest
from conftest import exhaust_stock, game, keep, knock_game, last, move

from scat_env import END_PLAY, GameState, make_view, parse_cards
from scat_env.engine import HandResult

H23 = "KH 8H 5H"
H11 = "AC 6S 4S"
H17 = "QS 9D 8D"


def thirty_one_game() -> GameState:
    st = game([H23, "AH JH 2C", H11], "2D", "2S QH")
    keep(st, 0)
    move(st, 1, "stock", "2C")  # seat 1 makes A-J-Q of hearts and declares
    return st


def test_a_declared_31_shows_only_the_declarers_hand():
    res = last(thirty_one_game())
    assert res.reason == "thirty_one" and res.shown == (1,)
    assert set(res.hands) == {0, 1, 2}  # the game's own record keeps every hand
    for seat in (0, 2):
        seen = res.seen_by(seat)
        assert set(seen.hands) == {1, seat} and set(seen.values) == {1, seat}
        assert seen.lives_lost == res.lives_lost and seen.rule == res.rule
    assert set(res.seen_by(1).hands) == {1}
    assert set(res.seen_by(None).hands) == {1}


def test_a_dealt_31_shows_only_the_declarers():
    st = game([H23, "AH JH QH", H11], "2D")
    res = last(st)
    assert res.reason == "dealt_thirty_one" and res.shown == (1,)
    assert set(res.seen_by(2).hands) == {1, 2}


@pytest.mark.parametrize("how", ["knock", "stock_exhausted"])
def test_a_showdown_shows_every_hand(how):
    if how == "knock":
        st = knock_game([H23, H17, H11])
    else:
        st = game([H23, H17, H11], "2D")
        exhaust_stock(st)
        st.apply_action(END_PLAY)
    res = last(st)
    assert res.shown == (0, 1, 2)
    assert all(res.seen_by(s) is res for s in (None, 0, 1, 2))


def test_views_after_a_31_do_not_hold_the_hidden_hands():
    st = thirty_one_game()
    for seat in range(3):
        got = make_view(st, seat).last_result
        assert got is not None and set(got.hands) == {1, seat}


def test_a_31_hides_the_others_cards_from_every_seat():
    """Swap the cards of the seat that did not declare (seat 2, which never moved) with
    cards nobody saw; every other seat's view and env info stays the same."""
    def play(hand2: str, stock: str) -> GameState:
        st = game([H23, "AH JH 2C", hand2], "2D", stock)
        keep(st, 0)
        move(st, 1, "stock", "2C")
        return st

    a = play(H11, "2S QH")
    b = play("3C 7S 9C", "2S QH")  # seat 2's cards differ; nobody else saw them
    assert set(parse_cards(H11)) != set(parse_cards("3C 7S 9C"))
    for seat in (0, 1):
        va, vb = make_view(a, seat).last_result, make_view(b, seat).last_result
        assert va == vb


def test_env_infos_hold_what_each_agent_saw():
    import scat_env

    deck = "KH 8H 5H AH JH 2C AC 6S 4S 2D".split()  # dealer 2: seat 0 first
    env = scat_env.raw_env(num_players=3)
    rest = [c for c in scat_env.parse_cards(" ".join(scat_env.card_str(i) for i in range(52)))
            if c not in scat_env.parse_cards(" ".join(deck + ["2S", "QH"]))]
    order = [deck[i] for i in (0, 3, 6, 1, 4, 7, 2, 5, 8, 9)] + ["2S", "QH"]
    env.reset(seed=1, options={"deck": order + [scat_env.card_str(c) for c in rest],
                               "dealer": 2})
    # seat 0 draws 2S and throws it back; seat 1 draws QH and discards 2C: 31.
    env.step(scat_env.DRAW_STOCK)
    env.step(scat_env.parse_card("2S"))
    env.step(scat_env.DRAW_STOCK)
    env.step(scat_env.parse_card("2C"))
    for agent in env.agents:
        info = env.infos[agent]["hand_result"]
        assert info["reason"] == "thirty_one"
        assert set(info["hands"]) == {"player_1", agent}
        assert set(info["values"]) == {"player_1", agent}


def test_seen_by_keeps_the_result_immutable_and_cached():
    res = last(thirty_one_game())
    seen = res.seen_by(0)
    assert isinstance(seen, HandResult) and res.seen_by(0) is seen
    with pytest.raises(TypeError):
        seen.hands[2] = (1, 2, 3)  # type: ignore[index]
