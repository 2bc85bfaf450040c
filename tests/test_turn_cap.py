"""The engine's turn cap (``GameState(max_turns_per_hand=N)``, scat_env/engine.py): a hand
that reaches ``N`` turns ends the game, cut, with no winner; without a cap (the default, as
``env()``, the match loop and the trainers make their games) nothing changes; saved games
and replays carry :data:`~scat_env.DEFAULT_MAX_TURNS`.

The game that would never end: two players who each take the other's discard and throw
another card.
"""

from __future__ import annotations

import pytest

from scat_env import DEFAULT_MAX_TURNS, GameState, Rules, env
from scat_env.actions import DRAW_DISCARD
from scat_session.savegame import ReplayError, SavedGame
from scat_session.seating import new_game


def _take_back_and_forth(state: GameState, decisions: int) -> int:
    """Decisions played (at most ``decisions``) taking the discard whenever one may."""
    played = 0
    while not state.is_terminal() and played < decisions:
        legal = state.legal_actions()
        state.apply_action(DRAW_DISCARD if DRAW_DISCARD in legal else legal[0])
        played += 1
    return played


def test_a_hand_reaching_the_cap_ends_the_game_cut_with_no_winner_and_zero_returns():
    state = GameState(2, Rules(), seed=1, max_turns_per_hand=10)
    played = _take_back_and_forth(state, 10_000)
    assert played == 20 and state.turn == 10 and state.hand_number == 1
    assert state.is_terminal() and state.cut and state.winner is None
    assert state.returns() == [0.0, 0.0] and state.legal_actions() == []
    twin = GameState(2, Rules(), seed=1, max_turns_per_hand=10)
    copy = twin.clone()
    _take_back_and_forth(copy, 10_000)
    assert copy.cut  # a clone keeps its cap


def test_without_a_cap_the_same_hand_goes_on_as_before():
    state = GameState(2, Rules(), seed=1)
    assert _take_back_and_forth(state, 5_000) == 5_000
    assert not state.is_terminal() and not state.cut and state.turn == 2_500


def test_a_game_that_ends_normally_is_not_cut():
    state = GameState(3, Rules(), seed=4, max_turns_per_hand=DEFAULT_MAX_TURNS)
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply_action(54 if 54 in legal else legal[0])  # knock when one may
    assert not state.cut and state.winner is not None and sum(state.returns()) == pytest.approx(0)


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "300"])
def test_the_cap_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="max_turns_per_hand must be a positive int"):
        GameState(2, Rules(), seed=1, max_turns_per_hand=bad)


def test_env_games_are_truncated_by_env_not_cut_by_the_engine():
    """``env()`` keeps its own cap (``max_turns``, truncation): its engine has none, so its
    episodes are what they were."""
    e = env(num_players=2, max_turns=DEFAULT_MAX_TURNS)
    e.reset(seed=1)
    state = e.unwrapped._state
    steps = 0
    while not any(e.truncations.values()) and not any(e.terminations.values()):
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(DRAW_DISCARD if mask[DRAW_DISCARD] else int(mask.argmax()))
        steps += 1
        assert steps < 10_000
    assert all(e.truncations.values()) and not state.cut and not state.is_terminal()
    assert state.turn == DEFAULT_MAX_TURNS


def test_a_saved_game_is_cut_at_the_default_cap_and_replays_so():
    """``scat play`` and ``scat serve`` games: the hand that would never end ends the game
    at DEFAULT_MAX_TURNS, the save says finished with no winner, and it re-simulates."""
    save = new_game(2, ["random"], Rules(), 11, "You")
    state = save.new_state()
    while not state.is_terminal():
        legal = state.legal_actions()
        action = DRAW_DISCARD if DRAW_DISCARD in legal else legal[0]
        seat = state.current_player
        state.apply_action(action)
        save.record(state, seat, action)
    assert state.cut and state.turn == DEFAULT_MAX_TURNS
    assert save.status == "finished" and save.winner is None
    again = SavedGame.from_json(save.to_json(), source="test")
    assert again.resimulate().cut


def test_a_file_that_plays_on_past_the_cap_is_refused():
    save = new_game(2, ["random"], Rules(), 11, "You")
    state = GameState(2, Rules(), seed=11)  # no cap: what a crafted file records
    for _ in range(2 * DEFAULT_MAX_TURNS + 2):
        legal = state.legal_actions()
        action = DRAW_DISCARD if DRAW_DISCARD in legal else legal[0]
        seat = state.current_player
        state.apply_action(action)
        save.record(state, seat, action)
    with pytest.raises(ReplayError, match="already over"):
        save.resimulate()
