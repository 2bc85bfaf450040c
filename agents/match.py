"""Play whole games between agents on the engine directly (no env overhead).

Used by the tournament, ``scat watch``, training evaluation and tests: one loop, so every
caller plays by the same rules, turn cap and seeding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scat_env import DEFAULT_MAX_TURNS, GameState, HandResult, Rules
from scat_env.view import make_view

from .base import Agent


@dataclass
class GameRecord:
    """What happened in one game: enough for every tournament statistic and a replay."""

    num_players: int
    rules: Rules
    seed: int | None
    first_dealer: int
    winner: int | None  # None: truncated by the turn cap
    results: list[HandResult]
    actions: list[tuple[int, int]] = field(default_factory=list)  # (seat, action)
    truncated: bool = False

    @property
    def decisions(self) -> int:
        return len(self.actions)


def play_game(
    agents: Sequence[Agent],
    rules: Rules | None = None,
    *,
    seed: int | None = None,
    deck: Sequence[int | str] | None = None,
    dealer: int | None = None,
    single_hand: bool = False,
    max_turns: int = DEFAULT_MAX_TURNS,
    on_step: Callable[[GameState, int, int], None] | None = None,
) -> GameRecord:
    """Play one game; ``agents[s]`` plays seat ``s``. ``on_step(state, seat, action)`` is
    called after every action (for rendering or logging). Every agent's
    :meth:`~agents.base.Agent.check_table` runs first: an agent that cannot play the table
    raises ``ValueError`` before the first move."""
    n = len(agents)
    state = GameState(n, rules, seed=seed, deck=deck, dealer=dealer, single_hand=single_hand)
    for agent in agents:
        # Duck-typed players (timing or checking wrappers) may not define the hook.
        check = getattr(agent, "check_table", None)
        if check is not None:
            check(n, state.rules)
    record = GameRecord(n, state.rules, seed, state.dealer, None, state.results)
    for s, agent in enumerate(agents):
        agent.reset(None if seed is None else seed * 1000 + s)
    actions = record.actions
    while not state.is_terminal():
        if state.turn >= max_turns:
            record.truncated = True
            break
        seat = state.current_player
        action = agents[seat].act(make_view(state, seat))
        state.apply_action(action)
        actions.append((seat, action))
        if on_step is not None:
            on_step(state, seat, action)
    record.winner = state.winner
    return record
