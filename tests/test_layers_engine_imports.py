"""The engine's promise "no numpy, no RL" holds at import time, and the rule-based agents
need no RL library: each check runs in a fresh interpreter in which a meta-path finder
refuses the blocked modules, as if they were not installed.

The rule-based agents may use numpy (``agents.knowledge`` builds its hand model, the
expected value of a stock draw for every hand, with numpy), but never gymnasium,
pettingzoo or torch.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hang_limits import hang_limit

ROOT = Path(__file__).resolve().parents[1]

BLOCKER = """
import importlib.abc
import sys

BLOCKED = {blocked!r}


class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"{{name}} is blocked by the test", name=name)
        return None


for name in list(sys.modules):  # nothing may come in from an earlier import either
    if name.split(".")[0] in BLOCKED:
        del sys.modules[name]
sys.meta_path.insert(0, Refuse())
"""


def _run(blocked: set[str], body: str) -> str:
    code = BLOCKER.format(blocked=sorted(blocked)) + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=hang_limit(300))
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_blocker_refuses_what_it_names():
    """The check itself can fail: importing a blocked module raises."""
    out = _run({"numpy"}, """
        try:
            import numpy
        except ModuleNotFoundError as exc:
            print("refused", exc.name)
    """)
    assert out.strip() == "refused numpy"


def test_the_engine_plays_a_game_without_numpy_or_any_rl_library():
    out = _run({"numpy", "gymnasium", "pettingzoo", "torch"}, """
        import random

        import scat_env
        import scat_env.engine
        import scat_env.playthrough
        import scat_env.render
        import scat_env.rewards
        import scat_env.showdown
        from scat_env import GameState, Rules, make_view
        from scat_env.rewards import hand_rewards

        state = GameState(4, Rules.preset("cadillac"), seed=7)
        rng = random.Random(7)
        while not state.is_terminal():
            view = make_view(state, state.current_player)
            state.apply_action(rng.choice(view.legal_actions))
        paid = [0.0] * 4
        for result in state.results:
            scat_env.showdown.rule_text(result.rule)
            for seat, reward in hand_rewards(result, 4).items():
                paid[seat] += reward
        assert paid == state.returns(), (paid, state.returns())
        assert "numpy" not in sys.modules
        print("winner", state.winner, len(state.results))
    """)
    assert out.startswith("winner ")


def test_using_the_env_without_pettingzoo_says_what_is_missing():
    """``import scat_env`` works; asking for the env is where the missing library shows."""
    out = _run({"pettingzoo"}, """
        import scat_env

        try:
            scat_env.env(num_players=2)
        except ModuleNotFoundError as exc:
            print("missing", exc.name)
    """)
    assert out.strip() == "missing pettingzoo"


@pytest.mark.parametrize("spec", ["random", "greedy", "threshold:25", "expert"])
def test_rule_based_agents_play_without_gymnasium_pettingzoo_or_torch(spec):
    out = _run({"gymnasium", "pettingzoo", "torch"}, f"""
        from agents.match import play_game
        from agents.registry import make_agent
        from scat_env import Rules

        agents = [make_agent({spec!r}, seed=0), make_agent("random", seed=1)]
        record = play_game(agents, Rules(), seed=3)
        assert record.winner in (0, 1), record
        print("played", len(record.results))
    """)
    assert out.startswith("played ")
