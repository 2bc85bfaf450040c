"""``env.state()`` per preset: the standard game's 326 entries at three players, and after
them what each variation adds for a centralised critic (points, face-up slots, who has
looked, pending calls), as :func:`scat_env.state.state_pieces` documents."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import game

import scat_env
from scat_env import PRESETS, Rules
from scat_env.actions import DRAW_STOCK, PASS, TURN_UP
from scat_env.observation import layout, layout_table
from scat_env.state import STATE_PIECES, encode_state, state_pieces, state_size


def _spans(st):
    return layout(st.num_players, state_pieces(st.rules))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_state_fits_its_space_through_a_game(preset):
    env = scat_env.env(num_players=3, rules=preset)
    env.reset(seed=1)
    space = env.unwrapped.state_space
    rng = np.random.default_rng(0)
    for step, _agent in enumerate(env.agent_iter()):
        st = env.state()
        assert st.shape == space.shape and st.dtype == np.float32 and space.contains(st)
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if step > 200:
            break


def test_the_standard_state_is_unchanged():
    assert state_pieces(Rules()) == STATE_PIECES
    assert [state_size(n, Rules()) for n in (2, 3, 6, 10)] == [270, 326, 494, 718]
    env = scat_env.env(num_players=3)
    env.reset(seed=0)
    assert env.state().shape == (326,)


@pytest.mark.parametrize("preset,names", [
    ("french_canadian", {"points"}),
    ("golf", {"face_up", "golf_phase"}),
    ("throw_down_any", {"looked", "call_phase"}),
    ("sudden_death", {"looked", "call_phase"}),
    ("undeclared_31", {"quiet", "pending", "declared", "declare_phase"}),
    ("moyer", {"looked", "call_phase", "knock_open", "hammer_open", "turn"}),
    ("hammer", {"knock_open", "hammer_open", "turn"}),
    ("computer", {"knock_open", "hammer_open", "turn"}),
    ("italian", set()),
])
def test_each_family_adds_its_own_pieces(preset, names):
    added = {p.name for p in state_pieces(Rules.preset(preset))[len(STATE_PIECES):]}
    assert added == names
    assert all(name in layout_table(3, state_pieces(Rules.preset(preset))) for name in names)


def test_points_are_in_the_state():
    g = game(["AH KH 2C", "2S 3D 5S", "4C 6D 8S"], "QH", rules="french_canadian")
    # Seat 0 takes the QH and discards the 2C: a 31, a point at once.
    from scat_env.actions import DRAW_DISCARD
    from scat_env.cards import parse_card

    g.apply_action(DRAW_DISCARD)
    g.apply_action(parse_card("2C"))
    out = encode_state(g)
    assert out[_spans(g)["points"]].tolist() == pytest.approx([1 / 31, 0, 0])


def test_golf_face_up_slots_and_phase_are_in_the_state():
    g = game(["5H 8H 8C", "KS QS 2D", "AD 9D 3C"], "2C", "3S 4S 5S 6S 7S 9S", rules="golf")
    spans = _spans(g)
    assert encode_state(g)[spans["golf_phase"]].tolist() == [1.0, 0.0]
    g.apply_action(DRAW_STOCK)
    assert encode_state(g)[spans["golf_phase"]].tolist() == [0.0, 1.0]
    g.apply_action(TURN_UP + 1)
    face_up = encode_state(g)[spans["face_up"]].reshape(3, 3)
    assert face_up.tolist() == [[0, 1, 0], [0, 0, 0], [0, 0, 0]]


def test_who_has_looked_is_in_the_state():
    g = game(["AH KH 2C", "2S 3D 5S", "4C 6D 8S"], "QH", rules="throw_down_any")
    spans = _spans(g)
    out = encode_state(g)
    assert out[spans["looked"]].tolist() == [0, 0, 0] and out[spans["call_phase"]][0] == 1
    g.apply_action(PASS)  # seat 0 looks
    assert encode_state(g)[spans["looked"]].tolist() == [1, 0, 0]


def test_a_pending_dealt_31_and_a_quiet_one_are_in_the_state():
    g = game(["AH KH QH", "AS KS JS", "4C 6D 8S"], "2D", ["7C", "9C"], rules="undeclared_31")
    spans = _spans(g)
    out = encode_state(g)
    assert out[spans["pending"]].tolist() == [1, 1, 0] and out[spans["declare_phase"]][0] == 1
    g.apply_action(PASS)  # seat 0 keeps its 31 quiet; seat 1 still decides
    out = encode_state(g)
    assert out[spans["pending"]].tolist() == [0, 1, 0]
    assert out[spans["quiet"]].tolist() == [1, 0, 0]
