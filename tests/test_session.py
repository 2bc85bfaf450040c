"""The play session both front ends share (:mod:`scat_session`): one rule for a broken
agent, one default opponent, and one set of words that the terminal only colours.
"""

from __future__ import annotations

import json

import pytest
from rich.text import Text

from agents.base import Agent
from scat_cli.tui import action_markup, seats_by_spec
from scat_env import GameState, Rules
from scat_env.actions import (
    DRAW_DISCARD,
    DRAW_STOCK,
    END_PLAY,
    GOLF_SLOTS,
    KNOCK,
    NUM_ACTIONS,
    PLACE_SLOT,
    TURN_UP,
)
from scat_session import seating, turns
from scat_session.seating import new_game
from scat_session.turns import NoReplacement, Takeover, agent_move
from scat_session.words import action_text


class _Broken(Agent):
    """An agent that raises at every decision (its message would name its cards)."""

    def act(self, view):
        raise RuntimeError(f"my hand is {view.hand}")


def _game_with_broken_seat_1():
    game = new_game(3, ["greedy", "greedy"], Rules(), 11, "You")
    state = game.new_state()
    agents = seating.build_agents(game)
    agents[1] = _Broken()
    return game, state, agents


def test_a_broken_agent_is_replaced_recorded_and_announced_without_its_message():
    game, state, agents = _game_with_broken_seat_1()
    while state.current_player != 1:
        state.apply_action(state.legal_actions()[0])
    seen: list[Takeover] = []
    action = agent_move(game, state, agents, 1, seen.append)
    assert state.is_legal(action)
    assert seen == [Takeover(1, "expert", "failed (RuntimeError)")]
    assert [(r.seat, r.agent) for r in game.replacements] == [(1, "expert")]
    assert not isinstance(agents[1], _Broken)


def test_every_replacement_broken_is_one_line_naming_the_seat(monkeypatch):
    game, state, agents = _game_with_broken_seat_1()
    while state.current_player != 1:
        state.apply_action(state.legal_actions()[0])
    monkeypatch.setattr(turns, "make_replacement", lambda spec, seed: _Broken())
    with pytest.raises(NoReplacement) as caught:
        agent_move(game, state, agents, 1, lambda takeover: None)
    assert str(caught.value) == ("no agent can play Alice's seat (every replacement broke); "
                                 "the last good save is kept")
    assert "hand" not in str(caught.value)


@pytest.mark.parametrize("name", ["Bob", "You", "[bold]x[/]", "a\\", "Zoë"])
def test_the_terminal_only_colours_the_words_the_page_gets(name):
    """Every log line the terminal prints shows, without its colours, the page's words."""
    names = ["You", name, "Carol"]
    hand = (0, 13, 26, 39)
    for action in range(NUM_ACTIONS):
        golf = PLACE_SLOT <= action < TURN_UP + GOLF_SLOTS
        for top in (None, 5):
            before = hand if golf else None
            plain = action_text(1, action, names, top, before)
            shown = Text.from_markup(action_markup(1, action, names, top, before),
                                     emoji=False).plain
            assert shown == plain, (action, top)
    assert action_text(1, DRAW_STOCK, names, None) == f"{name} drew from the stock"
    assert action_text(1, DRAW_DISCARD, names, 5) == f"{name} took the 7♣"
    assert action_text(1, KNOCK, names, None) == f"{name} knocked!"
    assert action_text(1, END_PLAY, names, None).startswith(f"{name} ended the play")


def test_the_opponents_line_is_the_same_words_escaped():
    seats = [("Alice", "ppo:scat_ppo_set"), ("[b]Bob", "expert")]
    assert Text.from_markup(seats_by_spec(seats)).plain == seating.seats_by_spec(seats)


def test_the_default_opponent_is_the_first_candidate_that_plays_the_table():
    """One decision for both front ends: the browser's store filters the same candidates."""
    calls: list[str] = []

    class _Plays(Agent):
        def act(self, view):
            return view.legal_actions[0]

    class _Refuses(_Plays):
        def check_table(self, num_players, rules):
            raise ValueError("too many players")

    def factory(spec: str) -> Agent:
        calls.append(spec)
        return _Refuses() if spec == "a" else _Plays()

    assert seating.first_to_play(8, Rules(), ["a", "b", "c"], factory) == "b"
    assert calls == ["a", "b", "c"]  # none learned the rules: the first that plays them
    assert seating.first_to_play(8, Rules(), ["a"], factory) is None
    assert seating.default_opponent(3) in seating.default_candidates()
    # six-player Jacobs: the points races' member, the model card's seat there
    jacobs = Rules.preset("french_canadian_jacobs")
    assert seating.default_opponent(6, jacobs) == "compact:scat_points"


def test_a_new_game_seats_the_person_first_and_names_the_others():
    game = new_game(4, ["greedy", "expert", "random"], Rules(), 5, "Ann")
    assert game.names == ["Ann", "Alice", "Bob", "Carol"]
    assert game.human_seat == seating.HUMAN_SEAT == 0
    assert game.first_dealer == GameState(4, Rules(), seed=5).dealer


@pytest.mark.parametrize("preset", ["standard", "french_canadian", "golf"])
def test_both_summaries_count_the_same_game(preset):
    """The terminal's game-over panel and the page's summary read one count of the game
    (:func:`scat_session.words.game_numbers`): the page's numbers appear in the panel."""
    import io

    from rich.console import Console

    from agents.match import play_game
    from agents.registry import make_agent
    from scat_cli.tui import summary_view
    from scat_web.serialize import summary_payload

    rules = Rules.preset(preset)
    state = play_game([make_agent("greedy", seed=s) for s in range(3)], rules, seed=4)
    knocks = [r.knocker for r in state.results if r.knocker is not None]
    names = ["You", "Ann", "Bob"]
    page = summary_payload(state.results, 0, 3, state.winner, knocks)
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(
        summary_view(state.results, names, state.winner, rules, 0, knocks))
    panel = out.getvalue()
    assert f"Hands played: {page['hands']}" in panel
    if rules.play != "golf":
        assert f"31s: {page['thirty_ones']}   knocks: {page['knocks']}" in panel
        assert f"31s: {page['your_31s']}, knocks: {page['your_knocks']}" in panel
    if page["your_points"] is None:
        assert f"lost lives in {page['your_hands_lost']} of" in panel
        assert f"({page['your_lives_lost']} li" in panel
    else:
        assert f"scored in {page['hands'] - page['your_hands_lost']} of" in panel
    if page["place"]:
        assert f"finished {page['place']}" in panel


def test_the_default_opponent_is_the_model_cards_measured_seat(tmp_path, monkeypatch):
    """Where the card measured a preset, its seat sits there (the best measured player, or
    expert where none beat it); a seat this install does not offer falls back to the first
    candidate trained on the rules."""
    from scat_session import strength

    card = tmp_path / "presets.json"
    cell = {"x_fair": 1.1, "x_fair_ci95": [1.0, 1.2], "games": 100, "learned": True}
    card.write_text(json.dumps({"cells": {
        "gin": {"3": {**cell, "spec": "compact:scat_rules"}, "6": {**cell, "spec": "expert"}},
        "hammer": {"3": {**cell, "spec": "compact:elsewhere"}}}}))
    monkeypatch.setattr(strength, "strength_file", lambda: card)
    gin, hammer = Rules.preset("gin"), Rules.preset("hammer")
    assert seating.default_opponent(3, gin) == "compact:scat_rules"
    assert seating.default_opponent(4, gin) == "compact:scat_rules"  # nearest measured: 3
    assert seating.default_opponent(6, gin) == "expert"
    assert seating.default_opponent(9, gin) == "expert"
    assert seating.default_opponent(3, hammer) == "compact:scat_rules"  # not offered here
    assert seating.default_opponent(3, gin.replace(knocker_loss=1)) == "compact:scat_rules"
