"""Training options of the native trainer: expert-advice inputs, the privileged critic (issue:
"option for a privileged critic that sees all hands during training only (the policy never
does)") and games started from uneven lives."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import hidden_variant, random_midgame

from agents.expert import ADVICE_SIZE, ExpertAgent
from agents.neural.encoding import PaddedEncoder, policy_observation_size
from scat_env import GameState, Rules
from scat_env.actions import CORE_ACTIONS
from scat_env.view import make_view

TINY = dict(parallel_games=8, rollout_samples=256, minibatch_samples=256, epochs=2, hidden=32,
            eval_every_updates=0, final_eval_games=0, checkpoint_every_updates=1, progress=False,
            torch_threads=1, snapshot_every_updates=1)


def _midgame_states(n: int, count: int, seed: int) -> list[GameState]:
    """States at random decision points of random games (both phases, knocks included)."""
    rng = random.Random(seed)
    states = (random_midgame(n, seed * 1000 + g, rng, 0, 40) for g in range(count))
    return [s for s in states if s is not None]


# -- expert advice -------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 4])
def test_expert_advice_names_the_expert_move(n):
    expert, advisor = ExpertAgent(), ExpertAgent()
    for state in _midgame_states(n, 40, seed=n):
        view = make_view(state, state.current_player)
        out = np.zeros(ADVICE_SIZE, dtype=np.float32)
        action = advisor.advice(view, out)
        assert action == expert.act(view)
        assert out[:CORE_ACTIONS].sum() == 1.0 and out[action] == 1.0
        scored = set(np.flatnonzero(out[CORE_ACTIONS:CORE_ACTIONS + 52]))
        assert scored <= set(view.hand)  # discard scores only for my own cards
        assert np.all(np.abs(out) <= 1.5)
        assert advisor.act(view) == action  # advice() leaves the agent as it was


def test_advice_encoder_extends_the_plain_observation():
    plain, advised = PaddedEncoder(Rules(), 6), PaddedEncoder(Rules(), 6, advice=True)
    assert advised.size == plain.size + ADVICE_SIZE == policy_observation_size(6, advice=True)
    for state in _midgame_states(3, 10, seed=7):
        view = make_view(state, state.current_player)
        a, b = plain.encode(view), advised.encode(view)
        np.testing.assert_array_equal(b[: plain.size], a)
        assert b[plain.size:plain.size + CORE_ACTIONS].sum() == 1.0


def test_advice_inputs_never_depend_on_hidden_cards():
    enc = PaddedEncoder(Rules(), 6, advice=True)
    rng = random.Random(1)
    changed = 0
    for state in _midgame_states(3, 30, seed=11):
        other = hidden_variant(state, rng)
        changed += state.hands != other.hands or state.stock != other.stock
        seat = state.current_player
        np.testing.assert_array_equal(enc.encode(make_view(state, seat)),
                                      enc.encode(make_view(other, seat)))
    assert changed >= 10




# -- privileged critic ---------------------------------------------------------------------










# -- warm start and critic warm-up -----------------------------------------------------------






















# -- hand-off to a fixed agent once few players are in ---------------------------------------












