"""The hint key (``h`` in ``scat play``, the page's hint): a sentence for every decision of
every preset, and golf's in golf's own terms."""

from __future__ import annotations

import random
import re

import pytest

from agents.expert import ExpertAgent
from agents.knowledge import golf_choices
from scat_env import GameState, Rules
from scat_env.rules import PRESETS
from scat_env.view import make_view
from scat_session.hints import hint


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_decision_of_every_preset_gets_a_hint(preset):
    rules = Rules.preset(preset)
    expert = ExpertAgent()
    rng = random.Random(1)
    state = GameState(3, rules, seed=4)
    for _ in range(40):
        if state.is_terminal():
            break
        view = make_view(state, state.current_player)
        text = hint(expert, view)
        assert text.endswith(".") and ("The expert would" in text
                                       or text.startswith("Discard the")), text
        state.apply_action(rng.choice(state.legal_actions()))


def test_a_golf_hint_gives_the_worth_of_each_choice_and_the_experts_move():
    rules = Rules.preset("golf")
    expert = ExpertAgent()
    state = GameState(3, rules, seed=2)
    phases = set()
    for _ in range(12):
        view = make_view(state, state.current_player)
        text = hint(expert, view)
        numbers = [float(x) for x in re.findall(r"\d+\.\d", text)]
        want = [round(v, 1) for k, v in golf_choices(view).items()]
        assert sorted(numbers) == sorted(want), (text, golf_choices(view))
        assert text.endswith(".") and "The expert would" in text
        phases.add(view.phase)
        state.apply_action(expert.act(view))
    assert phases == {"golf_draw", "golf_place"}


def test_a_race_hint_speaks_of_the_highest_hand_and_counts_points_as_players_do():
    """In a race only the highest hand scores and nobody loses a life; Jacobs's tie-break
    rides on the value as a fraction the players never count."""
    rules = Rules.preset("french_canadian_jacobs")
    expert = ExpertAgent()
    state = GameState(3, rules, seed=5)
    knock_hints = 0
    for _ in range(300):
        if state.is_terminal():
            break
        view = make_view(state, state.current_player)
        text = hint(expert, view)
        assert "lowest" not in text and "a life" not in text, text
        assert not re.search(r"(knock now with|you hold|worth) \d+\.\d\d", text), text
        knock_hints += "every other hand ends below yours" in text
        state.apply_action(expert.act(view))
    assert knock_hints


def test_a_knock_hint_gives_the_chances_of_lowest_alone_and_of_a_tie_from_the_experts_notes():
    """"Lowest alone" is the chance every other hand ends above mine; "tied for lowest" the
    chance nobody ends below mine less that one. Both come from the expert's own notes."""
    import numpy as np

    from agents.expert import ADVICE_SIZE
    from scat_session.hints import P_NONE_BELOW, P_SOLE

    expert = ExpertAgent()
    rng = random.Random(3)
    seen = 0
    for seed in range(60):
        state = GameState(3, Rules.preset("standard"), seed=seed)
        for _ in range(30):
            if state.is_terminal():
                break
            view = make_view(state, state.current_player)
            text = hint(expert, view)
            match = re.search(r"lowest alone (\d+)% of the time(?: and tied for lowest "
                              r"another (\d+)%)?", text)
            if match:
                notes = np.zeros(ADVICE_SIZE, dtype=np.float32)
                expert.advice(view, notes)
                sole, none_below = float(notes[P_SOLE]), float(notes[P_NONE_BELOW])
                assert int(match[1]) == round(100 * sole), text
                tied = round(100 * (none_below - sole))
                assert int(match[2] or 0) == (tied if none_below - sole >= 0.005 else 0), text
                assert int(match[1]) + int(match[2] or 0) <= 101, text  # chances, not more
                seen += 1
            state.apply_action(rng.choice(state.legal_actions()))
    assert seen >= 20, seen
