"""The batched expert (:mod:`agents.batch_expert`) makes ``expert``'s move in every position.

Batched games are played next to their ``GameState`` twins (the differential test's
:class:`Twin`); at every step each game's batched move is compared with
``ExpertAgent().act`` on the mover's view of the twin. The games are played by the expert
itself with some random moves mixed in, so that knocks, last turns, empty stocks and
eliminations all come up, and each variation's own decisions (its calls, golf's choices)
are counted and must have come up.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_batch_engine import Twin

from agents.batch_expert import BatchExpert, covers
from agents.expert import ExpertAgent, ExpertParams
from scat_env import Rules
from scat_env.actions import (
    DECLARE,
    DRAW_DISCARD,
    DRAW_STOCK,
    END_PLAY,
    HAMMER,
    KNOCK,
    PASS,
    PLACE_SLOT,
    SUDDEN_DEATH,
    THROW_DOWN,
    TURN_UP,
)
from scat_env.batch import BatchEnv, covered_presets
from scat_env.rules import PRESETS
from scat_env.view import make_view


def _count(seen: dict[str, int], view, want: int) -> None:
    """Tally what kind of decision ``want`` was, so each case can check its family's came up."""
    seen["decisions"] += 1
    draws = (DRAW_STOCK, DRAW_DISCARD, END_PLAY)
    seen["knocks"] += want == KNOCK and view.knocker is None
    seen["second_knocks"] += want == KNOCK and view.knocker is not None
    seen["takes"] += want == DRAW_DISCARD
    seen["stock_draws"] += want == DRAW_STOCK
    seen["end_play"] += want == END_PLAY
    seen["discards"] += want < 52
    seen["last_turns"] += view.knocker is not None and want in draws
    seen["hammers"] += want == HAMMER
    seen["throw_downs"] += want == THROW_DOWN
    seen["sudden_deaths"] += want == SUDDEN_DEATH
    seen["passes"] += want == PASS
    seen["declares"] += want == DECLARE
    seen["places"] += PLACE_SLOT <= want < TURN_UP
    seen["turn_ups"] += want >= TURN_UP


def play_against_python_expert(preset: str, n: int, steps: int, batch: int = 16,
                               seed: int = 0, random_share: float = 0.15) -> dict[str, int]:
    """Compare every decision of ``steps`` batched steps; counts of what was covered."""
    rules = Rules.preset(preset)
    env = BatchEnv(batch, n, rules, seed)
    twins = [Twin(n, rules, seed, i, 300, "game") for i in range(batch)]
    expert, agent = BatchExpert(rules), ExpertAgent()
    env.reset()
    rng = np.random.default_rng(seed)
    seen = dict.fromkeys(("decisions", "knocks", "second_knocks", "last_turns", "takes",
                          "stock_draws", "end_play", "discards", "hammers", "throw_downs",
                          "sudden_deaths", "passes", "declares", "places", "turn_ups"), 0)
    for _ in range(steps):
        acts = expert.actions(env)
        for i, twin in enumerate(twins):
            view = make_view(twin.state, twin.state.current_player)
            want = agent.act(view)
            assert acts[i] == want, (f"{preset}, {n} players, game {i}: batched {acts[i]}, "
                                     f"expert {want}; view {view}")
            _count(seen, view, want)
        rnd = env.random_actions()
        mix = np.where(rng.random(batch) < random_share, rnd, acts)
        env.step(mix)
        for i, twin in enumerate(twins):
            twin.step(int(mix[i]))
    return seen


def family_checks(preset: str) -> tuple[str, ...]:
    """The decisions a game of ``preset`` must have asked of the expert for the comparison to
    have covered its strategy: a draw-and-discard game's knocks, discards and last turns,
    and each variation's own (its call made, golf's every choice)."""
    rules = Rules.preset(preset)
    if rules.play == "golf":
        return ("places", "turn_ups", "takes", "stock_draws")
    checks = ("knocks", "discards", "last_turns")
    if rules.hammer:
        checks += ("hammers",)
    if rules.throw_down != "none":
        checks += ("throw_downs", "passes")
    if rules.sudden_death:
        checks += ("sudden_deaths", "passes")
    if rules.second_knock:
        checks += ("second_knocks",)
    if rules.declare_31 == "choice":
        checks += ("declares",)
    return checks


#: Every preset at two or three table sizes (2 to 10 players across the set); the default
#: run plays the first size of each, the slow sweep the rest.
SIZES = {
    "standard": (2, 3, 10), "knocker_pays_ties": (3, 5), "knocker_only_ties": (4, 2),
    "knocker_loses_one": (5, 3), "three_of_a_kind_30": (3, 6),
    "three_of_a_kind_30_5": (6, 2), "straight_flush": (4, 7), "min_knock_17": (2, 5),
    "min_knock_19": (5, 3), "min_knock_21": (7, 4), "flush_to_knock": (3, 8),
    "no_county": (4, 2), "knock_when_exhausted": (3, 9), "no_knock_when_exhausted": (2, 4),
    "swedish_points": (4, 6), "ride_the_bus": (3, 10), "cadillac": (5, 2),
    "ride_the_bus_extra_stops": (2, 6), "moyer_second_knock": (3, 5), "computer": (4, 3),
    "italian": (3, 2), "hammer": (4, 2), "throw_down": (2, 4), "throw_down_any": (2, 5),
    "moyer": (4, 3), "sudden_death": (2, 3), "undeclared_31": (3, 6), "gin": (4, 2),
    "french_canadian": (3, 5), "french_canadian_jacobs": (4, 2), "golf": (3, 10),
}
CASES = [(p, sizes[0]) for p, sizes in SIZES.items()]
SLOW_CASES = [(p, n) for p, sizes in SIZES.items() for n in sizes[1:]]


@pytest.mark.parametrize("preset, players", CASES, ids=[f"{p}-{n}p" for p, n in CASES])
def test_the_batched_expert_makes_the_experts_move_in_every_position(preset, players):
    seen = play_against_python_expert(preset, players, steps=120, seed=players)
    assert all(seen[what] > 0 for what in family_checks(preset)), seen


@pytest.mark.slow
@pytest.mark.parametrize("preset, players", SLOW_CASES,
                         ids=[f"{p}-{n}p" for p, n in SLOW_CASES])
def test_the_batched_expert_makes_the_experts_move_at_every_table_size(preset, players):
    seen = play_against_python_expert(preset, players, steps=240, seed=players)
    assert all(seen[what] > 0 for what in family_checks(preset)), seen


@pytest.mark.parametrize("players, seed", [(3, 1), (4, 2)])
def test_a_knocker_who_still_draws_judges_its_last_draw_as_the_expert_does(players, seed):
    """``knock_then_draw`` (computer): the knocker's own draw after its knock comes before
    anyone's last turn, so no opponent has played its final turn yet (these deals reach
    such a draw that a model of finished opponents played differently)."""
    seen = play_against_python_expert("computer", players, steps=120, seed=seed)
    assert seen["last_turns"] > 0


def test_every_preset_is_covered():
    """The batched expert plays every preset the batched engine plays: all of them."""
    assert [p for p in PRESETS if not covers(p)] == []
    assert covered_presets() == list(PRESETS)


def test_only_what_it_cannot_mirror_is_refused_naming_it():
    with pytest.raises(ValueError, match="whole knock_floor"):
        BatchExpert("standard", ExpertParams(knock_floor=24.5))
    with pytest.raises(ValueError, match="plays rules 'standard', the env 'gin'"):
        BatchExpert("standard").actions(BatchEnv(2, 3, "gin"))
