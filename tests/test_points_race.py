"""The points race (002 French Canadian, from Cribbage.ca; Jeffrey Jacobs' version): stacked
deals built from the source's own description.

"after a player has knocked and everyone else has taken a turn, the player with the
highest score is awarded one point. If there is a tie the player who did not knock wins
it. Presumably if there is a tie between two players neither of whom knocked they get a
point each. A player who makes 31 declares it and score a point immediately. The game
apparently goes on until someone reaches a score of 31." Jacobs: "players are not allowed
to knock unless they have three cards of the same suit. If two players have equally high
scores the tie is broken if possible by looking at the ranks of the cards as in poker -
for example A-10-9 beats K-Q-J, K-10-9 beats Q-J-9 and K-J-7 beats K-9-8."
"""

from __future__ import annotations

import pytest
from conftest import game, stack

import scat_env
from scat_env import Rules, hand_value, parse_card
from scat_env.actions import DRAW_STOCK, KNOCK
from scat_env.engine import Phase

FC = Rules.preset("french_canadian")
JACOBS = Rules.preset("french_canadian_jacobs")


def _play(state, moves):
    for move in moves:
        state.apply_action(parse_card(move) if isinstance(move, str) else move)


def test_the_highest_hand_after_a_knock_and_the_last_round_scores_a_point():
    # Seat 0 knocks with 29; seats 1 and 2 draw and discard once each, ending lower.
    g = game(["AH KH 8H", "2C 3D 5S", "4C 6D 8S"], "2D", ["7C", "9D"], rules=FC)
    _play(g, [KNOCK, DRAW_STOCK, "2C", DRAW_STOCK, "4C"])
    res = g.results[-1]
    assert res.reason == "knock" and res.rule == "points_highest"
    assert dict(res.points_won) == {0: 1} and g.points == [1, 0, 0]
    assert g.lives == [FC.start_lives] * 3  # nobody loses a life in a points game
    assert not g.is_terminal()


def test_a_tie_with_the_knocker_goes_to_the_player_who_did_not_knock():
    g = game(["AH KH 9H", "AS KS 9S", "2C 3D 5S"], "2D", ["4C", "6D"], rules=FC)
    _play(g, [KNOCK, DRAW_STOCK, "4C", DRAW_STOCK, "2C"])
    res = g.results[-1]
    assert res.values[0] == res.values[1] == 30
    assert res.rule == "points_tie_to_non_knockers" and dict(res.points_won) == {1: 1}


def test_non_knockers_tied_for_highest_each_score_a_point():
    g = game(["2C 3D 5S", "AS KS 9S", "AH KH 9H"], "2D", ["4C", "6D"], rules=FC)
    _play(g, [KNOCK, DRAW_STOCK, "4C", DRAW_STOCK, "6D"])
    res = g.results[-1]
    assert res.rule == "points_highest" and dict(res.points_won) == {1: 1, 2: 1}


def test_a_declared_31_scores_a_point_at_once():
    g = game(["AH KH 2C", "2S 3D 5S", "4C 6D 8S"], "QH", rules=FC)
    _play(g, [53, "2C"])  # take the QH: A K Q of hearts
    res = g.results[-1]
    assert res.reason == "thirty_one" and res.rule == "points_thirty_one"
    assert dict(res.points_won) == {0: 1} and g.points == [1, 0, 0]


def test_the_first_to_reach_the_target_wins_and_leaders_tied_on_it_play_on():
    one = FC.replace(points_to_win=1)
    tied = game(["2C 3D 5S", "AS KS 9S", "AH KH 9H"], "2D", ["4C", "6D"], rules=one)
    _play(tied, [KNOCK, DRAW_STOCK, "4C", DRAW_STOCK, "6D"])
    assert tied.points == [0, 1, 1] and tied.phase is not Phase.GAME_OVER
    alone = game(["AH KH 8H", "2C 3D 5S", "4C 6D 8S"], "2D", ["7C", "9D"], rules=one)
    _play(alone, [KNOCK, DRAW_STOCK, "2C", DRAW_STOCK, "4C"])
    assert alone.phase is Phase.GAME_OVER and alone.winner == 0
    assert alone.returns() == [1.0, -0.5, -0.5] and alone.results[-1].race_winner == 0


def test_a_points_game_keeps_lives_and_adds_points_to_infos_and_views():
    env = scat_env.env(num_players=3, rules="french_canadian")
    deck = stack(["AH KH 8H", "2C 3D 5S", "4C 6D 8S"], "2D", ["7C", "9D"], 2)
    env.reset(seed=1, options={"deck": deck, "dealer": 2})
    assert env.infos["player_0"] == {"lives": FC.start_lives, "points": 0}
    for action in (KNOCK, DRAW_STOCK, parse_card("2C"), DRAW_STOCK, parse_card("4C")):
        env.step(action)
    info = env.infos["player_1"]
    first = info["hand_results"][0]
    assert first["points_won"] == {"player_0": 1}
    assert first["points_after"] == {"player_0": 1, "player_1": 0, "player_2": 0}
    assert info["lives"] == FC.start_lives
    points = tuple(env.infos[f"player_{s}"]["points"] for s in range(3))
    assert points == env.unwrapped.view("player_2").points == tuple(env.unwrapped._state.points)
    assert scat_env.raw_env(rules="standard").metadata["name"] == "scat_v2"


def test_jacobs_knocking_needs_three_cards_of_one_suit():
    g = game(["AH KH 10S", "2C 3D 5S", "4C 6D 8S"], "2D", rules=JACOBS)
    assert KNOCK not in g.legal_actions()
    g = game(["AH KH 2H", "2C 3D 5S", "4C 6D 8S"], "2D", rules=JACOBS)
    assert KNOCK in g.legal_actions()


@pytest.mark.parametrize("better,worse", [("AH 10H 9H", "KS QS JS"),
                                          ("KS 10S 9S", "QD JD 9D"),
                                          ("KC JC 7C", "KH 9H 8H")])
def test_jacobs_equal_hands_are_told_apart_by_rank_as_in_poker(better, worse):
    assert hand_value(better) == hand_value(worse)  # equal points in the plain game
    assert hand_value(better, "french_canadian_jacobs") > hand_value(worse, JACOBS)
    assert int(hand_value(better, JACOBS)) == hand_value(better)  # the points stay whole


def test_jacobs_showdown_scores_the_poker_winner_of_equal_hands():
    # K-Q-J of spades (seat 1) against A-10-9 of hearts (seat 0, who knocks): both 30, the
    # ace wins as in poker, so the knocker scores despite the plain tie.
    g = game(["AH 10H 9H", "KS QS JS", "2C 3D 5D"], "2S", ["4C", "6C"], rules=JACOBS)
    _play(g, [KNOCK, DRAW_STOCK, "4C", DRAW_STOCK, "2C"])
    res = g.results[-1]
    assert int(res.values[0]) == int(res.values[1]) == 30
    assert dict(res.points_won) == {0: 1}
    plain = game(["AH 10H 9H", "KS QS JS", "2C 3D 5D"], "2S", ["4C", "6C"], rules=FC)
    _play(plain, [KNOCK, DRAW_STOCK, "4C", DRAW_STOCK, "2C"])
    assert dict(plain.results[-1].points_won) == {1: 1}  # without it: the non-knocker


def test_jacobs_dealt_31s_are_told_apart_by_rank():
    # A-K-Q of hearts and A-K-J of spades, both dealt 31: Jacobs breaks a tie "if possible
    # by looking at the ranks", so only the queen's hand scores.
    hands = ["AH KH QH", "AS KS JS", "2C 3D 5S"]
    g = game(hands, "2D", ["4C", "6D"], rules=JACOBS)
    res = g.results[0]
    assert res.reason == "dealt_thirty_one" and set(res.declarers) == {0, 1}
    assert res.rule == "points_dealt_thirty_one_ranks" and dict(res.points_won) == {0: 1}
    # Without the tie-break both holders score.
    plain = game(hands, "2D", ["4C", "6D"], rules=FC)
    assert dict(plain.results[0].points_won) == {0: 1, 1: 1}
    # Counting cards of the same ranks stay a tie: both score.
    same = game(["AH KH QH", "AS KS QS", "2C 3D 5S"], "2D", ["4C", "6D"], rules=JACOBS)
    assert same.results[0].rule == "points_dealt_thirty_one"
    assert dict(same.results[0].points_won) == {0: 1, 1: 1}


def test_points_rules_refuse_what_a_points_game_does_not_have():
    with pytest.raises(ValueError, match="Rules.hammer"):
        FC.replace(hammer=True)
    with pytest.raises(ValueError, match="did you mean 'points'"):
        Rules(scoring="pointz")
    with pytest.raises(ValueError, match="points_to_win"):
        FC.replace(points_to_win=0)
