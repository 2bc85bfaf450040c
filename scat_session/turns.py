"""The agents' moves of a game a person plays, with the rule both front ends keep: an agent
that breaks is replaced and the game goes on.

An agent breaks when it raises or answers a move the rules do not allow. Its seat is then
played by the first of :data:`~scat_session.savegame.REPLACEMENT_AGENTS` not yet tried
there, and the takeover is written into the save with the decision it starts at, so a
resume or a replay builds the same agent at the same point and plays the game exactly as it
went. What broke is never quoted: the engine's error for an illegal move lists the mover's
legal actions (its cards), and an agent's own exception may say anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scat_env import GameState, make_view
from scat_env.engine import as_action

from .savegame import SavedGame, make_replacement

if TYPE_CHECKING:
    from agents.base import Agent


@dataclass(frozen=True)
class Takeover:
    """Seat ``seat``'s agent broke (``what``: "failed (ValueError)", "made a move the rules
    do not allow"; never its message) and ``spec`` plays the seat from now on."""

    seat: int
    spec: str
    what: str


class NoReplacement(RuntimeError):
    """Every replacement agent broke at a seat: the game cannot go on (its last good save
    is kept). The message names the seat, never the moves."""


def agent_move(game: SavedGame, state: GameState, agents: list[Agent | None], seat: int,
               on_takeover: Callable[[Takeover], None]) -> int:
    """The move of the agent at ``seat`` in ``state``, replacing it (in ``agents`` and in
    ``game``'s record) each time it breaks; ``on_takeover`` is told of each replacement, for
    the front end to say so. Raises :class:`NoReplacement` when no agent is left to try."""
    while True:
        agent = agents[seat]
        try:
            action = as_action(agent.act(make_view(state, seat)))  # type: ignore[union-attr]
            if state.is_legal(action):
                return action
            what = "made a move the rules do not allow"
        except Exception as exc:  # any agent error: its text may name its cards
            what = f"failed ({type(exc).__name__})"
        spec = game.next_replacement(seat)
        if spec is None:
            raise NoReplacement(f"no agent can play {game.names[seat]}'s seat (every "
                                "replacement broke); the last good save is kept")
        game.replace_agent(seat, spec)
        agents[seat] = make_replacement(spec, game.players[seat].seed)
        on_takeover(Takeover(seat, spec, what))
