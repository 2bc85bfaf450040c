"""The one agent interface every player of scat-env implements.

An agent is handed a :class:`~scat_env.PlayerView` (exactly what its seat may know) and
returns a legal action. It never sees the engine's state, so no baseline can cheat; agents
that think in observation vectors (trained policies) encode the view themselves with
:class:`scat_env.observation.ObservationEncoder`.

Agents are seeded: the same seed and the same sequence of views give the same actions.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence

from scat_env import PlayerView, Rules


class Agent(ABC):
    """Base class: override :meth:`act`; call ``super().__init__(seed)``."""

    #: The spec string that built this agent (set by the registry), e.g. ``"threshold:25"``.
    spec: str = ""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start of a new game; reseeds when ``seed`` is given."""
        if seed is not None:
            self.rng.seed(seed)

    def check_table(self, num_players: int, rules: Rules) -> None:
        """Raise ``ValueError`` (one line) when this agent cannot play a table of
        ``num_players`` under ``rules``; called before the first move (by
        :func:`agents.match.play_game`, the tournament and ``scat play``) so a game never
        fails midway. Every rule-based agent plays every table: the default accepts."""
        return None

    def trained_on(self, rules: Rules) -> bool:
        """Whether this agent learned ``rules`` (a policy trained on them, not one that
        only accepts them): a table's default opponent is the policy trained on its rules
        where one is shipped (:func:`scat_session.seating.first_to_play`). Rule-based
        agents learned nothing: the default says no."""
        return False

    @abstractmethod
    def act(self, view: PlayerView) -> int:
        """A legal action for ``view.seat``; only called when ``view.legal_actions``."""

    def explain(self, view: PlayerView) -> str:
        """One line on why :meth:`act` would choose its action (used for human hints)."""
        from scat_env import action_str

        return action_str(self.act(view))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec or ''}>".replace(" >", ">")


def likeliest_moves_text(name: str, view: PlayerView, logits: Sequence[float]) -> str:
    """A policy's three likeliest legal moves in ``view`` with their probabilities, in words
    ("name: draw from the stock 61%, ..."): the hint every trained player gives, whatever
    network wrote ``logits`` (one per action id)."""
    import numpy as np

    from scat_env import action_str

    legal = list(view.legal_actions)
    z = np.asarray(logits, dtype=np.float64)[legal]
    p = np.exp(z - z.max())
    p /= p.sum()
    order = np.argsort(-p)[:3]
    return f"{name}: " + ", ".join(f"{action_str(legal[i])} {p[i]:.0%}" for i in order)


def parse_budget(kind: str, arg: str | None, default: int, maximum: int, unit: str) -> int:
    """A search's budget from its spec (``ismcts:N``, ``search:W``): ``default`` when none
    is given, else an integer from 1 to ``maximum`` ``unit`` per decision; one line
    naming the spec otherwise (a budget past the maximum is minutes a move: a typo)."""
    if arg is None or arg == "":
        return default
    try:
        n = int(arg)
    except ValueError:
        raise ValueError(f"{kind}:{arg}: the budget must be a positive integer ({unit} per "
                         "decision)") from None
    if not 1 <= n <= maximum:
        raise ValueError(f"{kind}:{arg}: the budget must be between 1 and {maximum:,} "
                         f"{unit} per decision, got {n:,}")
    return n
