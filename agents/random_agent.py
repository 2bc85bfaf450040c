"""``random``: uniform over the legal actions. The floor every other agent must clear."""

from __future__ import annotations

from scat_env import PlayerView

from .base import Agent
from .registry import register


class RandomAgent(Agent):
    def act(self, view: PlayerView) -> int:
        legal = view.legal_actions
        return legal[self.rng.randrange(len(legal))]


def _make(arg: str | None, seed: int | None) -> Agent:
    if arg is not None:
        raise ValueError("the 'random' agent takes no argument")
    return RandomAgent(seed)


register("random", _make, "uniform over legal actions")
