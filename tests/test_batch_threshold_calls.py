"""The batched threshold player (``BatchEnv.threshold_actions``) makes ``ThresholdAgent``'s
move in every position of every preset: the draws, discards and knocks, and the calls and
golf's choices too (a hammer at K+, a 31 always declared, every other call passed, golf's
``GOLF_GAIN`` rule with slots filled left to right).

Batched games are played beside their ``GameState`` twins (the differential test's
:class:`Twin`); at every step the kernel's move for K = 25, 31 and never is compared with
``ThresholdAgent(K).act`` on the mover's view of the twin, and must be legal. Each game is
played by one of the three thresholds, with random moves mixed in so that the calls a
greedy player never makes (throw-downs, sudden death, a 31 kept quiet) come up too.
"""

from __future__ import annotations

from collections import Counter

import numba
import numpy as np
import pytest
from test_batch_engine import Twin

from agents.greedy import GOLF_GAIN, ThresholdAgent
from scat_env import Rules
from scat_env.actions import DECLARE, DRAW_DISCARD, HAMMER, KNOCK, PASS, PLACE_SLOT, TURN_UP
from scat_env.batch import BatchEnv
from scat_env.batch import kernels as K
from scat_env.rules import PRESETS
from scat_env.view import make_view

THRESHOLDS = (25, 31, None)
SIZES = (2, 3, 6)


@pytest.fixture(autouse=True, scope="module")
def one_numba_thread():
    """These games are a few each: a ``prange`` kernel that wakes its thread pool five times
    a step costs more than the games, and far more when the cores are busy (a barrier
    waits for a descheduled thread). The moves do not depend on the thread count."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(before)


def _count(seen: Counter, want: int) -> None:
    """Tally the kind of decision ``want`` is, so each preset can check its own came up."""
    seen["decisions"] += 1
    seen["discards"] += want < 52
    seen["knocks"] += want == KNOCK
    seen["takes"] += want == DRAW_DISCARD
    seen["hammers"] += want == HAMMER
    seen["declares"] += want == DECLARE
    seen["passes"] += want == PASS
    seen["places"] += PLACE_SLOT <= want < TURN_UP
    seen["turn_ups"] += want >= TURN_UP


def play_against_threshold_agents(preset: str, n: int, steps: int, batch: int = 8,
                                  seed: int = 0, random_share: float = 0.2) -> Counter:
    """``steps`` batched steps of ``batch`` games, every move of every threshold compared
    with ``ThresholdAgent``'s from the same view; counts of the decisions compared."""
    rules = Rules.preset(preset)
    env = BatchEnv(batch, n, rules, seed)
    twins = [Twin(n, rules, seed, i, env.max_turns, "game") for i in range(batch)]
    agents = [ThresholdAgent(k) for k in THRESHOLDS]
    rng = np.random.default_rng(seed)
    seen: Counter = Counter()
    out = env.reset()
    for _ in range(steps):
        moves = np.stack([env.threshold_actions(k) for k in THRESHOLDS])
        for i, twin in enumerate(twins):
            view = make_view(twin.state, twin.state.current_player)
            for j, agent in enumerate(agents):
                want = agent.act(view)
                assert moves[j, i] == want, (
                    f"{preset}, {n} players, threshold {THRESHOLDS[j]}, game {i}: batched "
                    f"{moves[j, i]}, ThresholdAgent {want}; view {view}")
                assert out["action_mask"][i, want], f"{preset}: {want} is not legal"
                _count(seen, want)
        mine = moves[np.arange(batch) % len(THRESHOLDS), np.arange(batch)]
        acts = np.where(rng.random(batch) < random_share, env.random_actions(), mine)
        out = env.step(acts)
        for i, twin in enumerate(twins):
            twin.step(int(acts[i]))
    return seen


def own_decisions(preset: str) -> tuple[str, ...]:
    """The decisions of ``preset``'s family that must have been compared: golf's every
    choice, a draw-and-discard game's discards, knocks and takes, and its own call."""
    rules = Rules.preset(preset)
    if rules.play == "golf":
        return ("places", "turn_ups", "takes")
    checks: tuple[str, ...] = ("discards", "knocks", "takes")
    if rules.hammer:
        checks += ("hammers",)
    if rules.throw_down != "none" or rules.sudden_death:
        checks += ("passes",)
    if rules.declare_31 == "choice":
        checks += ("declares",)
    return checks


@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_batched_threshold_player_makes_the_threshold_agents_move_under_every_preset(
        preset):
    seen: Counter = Counter()
    for n in SIZES:
        seen += play_against_threshold_agents(preset, n, steps=80, seed=n)
    assert all(seen[what] > 0 for what in own_decisions(preset)), seen


def test_the_golf_gain_is_the_threshold_agents():
    """The kernel's golf rule keeps a card for the gain ``agents.greedy`` names (the
    engine's package may not import the agents', so the number is written twice)."""
    assert K.GOLF_GAIN == GOLF_GAIN
