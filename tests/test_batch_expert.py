"""The batched expert (:mod:`agents.batch_expert`) makes ``expert``'s move in every position.

Batched games are played next to their ``GameState`` twins (the differential test's
:class:`Twin`); at every step each game's batched move is compared with
``ExpertAgent().act`` on the mover's view of the twin. The games are played by the expert
itself with some random moves mixed in, so that knocks, last turns, empty stocks and
eliminations all come up.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_batch_engine import Twin

from agents.batch_expert import BatchExpert, covers
from agents.expert import ExpertAgent, ExpertParams
from scat_env import Rules
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK
from scat_env.batch import BatchEnv, covered_presets
from scat_env.view import make_view


def play_against_python_expert(preset: str, n: int, steps: int, batch: int = 16,
                               seed: int = 0, random_share: float = 0.15) -> dict[str, int]:
    """Compare every decision of ``steps`` batched steps; counts of what was covered."""
    rules = Rules.preset(preset)
    env = BatchEnv(batch, n, rules, seed)
    twins = [Twin(n, rules, seed, i, 300, "game") for i in range(batch)]
    expert, agent = BatchExpert(rules), ExpertAgent()
    env.reset()
    rng = np.random.default_rng(seed)
    seen = {"decisions": 0, "knocks": 0, "last_turns": 0, "takes": 0, "end_play": 0,
            "discards": 0}
    for _ in range(steps):
        acts = expert.actions(env)
        for i, twin in enumerate(twins):
            view = make_view(twin.state, twin.state.current_player)
            want = agent.act(view)
            assert acts[i] == want, (f"{preset}, {n} players, game {i}: batched {acts[i]}, "
                                     f"expert {want}; view {view}")
            seen["decisions"] += 1
            seen["knocks"] += want == KNOCK
            seen["takes"] += want == DRAW_DISCARD
            seen["end_play"] += want == END_PLAY
            seen["discards"] += want < 52
            seen["last_turns"] += (view.knocker is not None
                                   and want in (DRAW_STOCK, DRAW_DISCARD, END_PLAY))
        rnd = env.random_actions()
        mix = np.where(rng.random(batch) < random_share, rnd, acts)
        env.step(mix)
        for i, twin in enumerate(twins):
            twin.step(int(mix[i]))
    return seen


CASES = [("standard", 2), ("standard", 3), ("standard", 5), ("standard", 10),
         ("knocker_only_ties", 4), ("knocker_pays_ties", 3), ("gin", 4), ("computer", 3),
         ("italian", 3), ("three_of_a_kind_30_5", 6), ("knock_when_exhausted", 3),
         ("min_knock_21", 7)]


@pytest.mark.parametrize("preset, players", CASES, ids=[f"{p}-{n}p" for p, n in CASES])
def test_the_batched_expert_makes_the_experts_move_in_every_position(preset, players):
    seen = play_against_python_expert(preset, players, steps=120, seed=players)
    assert seen["knocks"] > 0 and seen["discards"] > 0 and seen["last_turns"] > 0


def test_every_covered_preset_but_a_second_knock_calls_points_and_golf_is_covered():
    """The batched expert plays what the batched engine plays, but Moyer's second knock,
    the calls, the points races and golf."""
    assert [p for p in covered_presets() if not covers(p)] == [
        "moyer_second_knock", "hammer", "throw_down", "throw_down_any", "moyer",
        "sudden_death", "undeclared_31", "french_canadian", "french_canadian_jacobs", "golf"]


def test_rules_it_does_not_play_are_refused_naming_them():
    with pytest.raises(ValueError, match="moyer_second_knock.*second knock"):
        BatchExpert("moyer_second_knock")
    with pytest.raises(ValueError, match="'golf'"):
        BatchExpert("golf")
    with pytest.raises(ValueError, match="whole knock_floor"):
        BatchExpert("standard", ExpertParams(knock_floor=24.5))
    with pytest.raises(ValueError, match="plays rules 'standard', the env 'gin'"):
        BatchExpert("standard").actions(BatchEnv(2, 3, "gin"))
