"""Who sits at a table: the person's seat, the opponents' names, what each agent is called,
and who plays by default.

Both front ends seat a new game the same way (:func:`new_game`), build its agents the same
way (:func:`build_agents`) and pick the same default opponent (:func:`default_opponent`,
from :data:`agents.registry.DEFAULT_POLICIES`, read here and never copied), so a game
started in the browser and resumed in the terminal meets the same players.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .words import as_is, names_list

if TYPE_CHECKING:
    from agents.base import Agent
    from scat_env import Rules

    from .savegame import SavedGame


#: The seat the person takes at a new table, in the terminal and in the browser.
HUMAN_SEAT = 0
#: The opponents' names at a new table, in seat order.
OPPONENT_NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan")


def default_names(num_players: int, human_seat: int | None = 0) -> list[str]:
    """``You`` at the human's seat, friendly names for the others."""
    names, others = [], iter(OPPONENT_NAMES)
    for s in range(num_players):
        names.append("You" if s == human_seat else next(others))
    return names


#: What each kind of agent is, in words a person at the table knows: a policy from any
#: trainer is a "trained AI" (which trainer made it is the saved game's business), a
#: search a "search AI", the rule-based players by what they do (`ppo` names the retired
#: native policies in older saves).
AGENT_KIND_LABELS = {"ppo": "trained AI", "compact": "trained AI", "sb3": "trained AI",
                     "rllib": "trained AI", "torchrl": "trained AI", "ismcts": "search AI",
                     "search": "trained AI with search",
                     "expert": "expert", "greedy": "greedy", "random": "random"}


def agent_label(spec: str) -> str:
    """What an opponent is, in plain words, for "Alice (trained AI)": both front ends show
    this beside a name (the terminal's table and the browser's). The full spec, paths and
    options included, is left to the saved game and the start line."""
    if spec == "human":
        return ""
    kind, _, arg = spec.partition(":")
    if kind == "threshold":
        return "never knocks" if arg == "never" else f"knocks at {arg[:4]}"
    return AGENT_KIND_LABELS.get(kind, kind[:12])


def seats_by_spec(players: Sequence[tuple[str, str]],
                  text: Callable[[str], str] = as_is) -> str:
    """``(name, spec)`` pairs as "Alice and Bob: trained AI (compact:scat_batch_set); Carol:
    expert": each spec once, after the names of its seats (six copies of a long policy path
    do not fit a line), in plain words (:func:`agent_label`) with the spec that rebuilds it.
    ``text`` dresses each name, label and spec (the terminal escapes them from its markup)."""
    by_spec: dict[str, list[str]] = {}
    for name, spec in players:
        by_spec.setdefault(spec, []).append(name)
    parts = []
    for spec, seats in by_spec.items():
        label = agent_label(spec)
        what = text(spec) if label in ("", spec) else f"{text(label)} ({text(spec)})"
        parts.append(f"{names_list(range(len(seats)), [text(n) for n in seats])}: {what}")
    return "; ".join(parts)



#: Who sits at a table when no opponents are chosen and no shipped policy can play the
#: rules (golf, a race to points, rules with calls): the rule-based expert plays them all.
FALLBACK_OPPONENT = "expert"


def default_candidates() -> tuple[str, ...]:
    """The shipped policies a table may get by default, in order of preference (``scat
    play`` and ``scat serve`` seat the first that plays the table: each set hands its
    positions to its members, so the list is the same at every size)."""
    from agents.registry import DEFAULT_POLICIES

    return DEFAULT_POLICIES


def first_to_play(players: int, rules: Rules, candidates: Sequence[str],
                  factory: Callable[[str], Agent]) -> str | None:
    """The first of ``candidates`` that was trained on ``rules`` and can play ``players``
    seats of them, else the first that can play them (each agent built by ``factory``);
    ``None`` if none can. The one decision behind every default seat: a policy that learned
    the variation before one that only accepts it."""
    playing = []
    for spec in candidates:
        try:
            agent = factory(spec)
            agent.check_table(players, rules)
        except ValueError:  # a table larger than it plays, or a game it never read
            continue
        if agent.trained_on(rules):
            return spec
        playing.append(spec)
    return playing[0] if playing else None


def default_opponent(players: int, rules: Rules | None = None) -> str:
    """Who sits at a table nobody chose opponents for (:func:`default_choice` over
    :data:`agents.registry.DEFAULT_POLICIES`), else :data:`FALLBACK_OPPONENT`: a table of
    rules no policy plays must still seat someone."""
    from agents.registry import make_agent
    from scat_env import Rules

    table = rules if rules is not None else Rules()
    found = default_choice(players, table, default_candidates(), make_agent)
    return found if found is not None else FALLBACK_OPPONENT


def default_choice(players: int, rules: Rules, candidates: Sequence[str],
                   factory: Callable[[str], Agent]) -> str | None:
    """The model card's seat for this table where it measured one
    (:func:`scat_session.strength.card_seat`: the best measured of the shipped policies
    against a field of ``expert``, or ``expert`` itself where none beats its fair share)
    and it is one of ``candidates`` or the fallback and plays the table; else
    :func:`first_to_play`. Both front ends decide by this, each over the agents it offers."""
    from .strength import card_seat

    seat = card_seat(players, rules)
    if seat is not None and (seat in candidates or seat == FALLBACK_OPPONENT):
        try:
            factory(seat).check_table(players, rules)
        except ValueError:  # the card names a player this install cannot seat here
            pass
        else:
            return seat
    return first_to_play(players, rules, candidates, factory)


def default_opponents_text(rules: Rules | None = None) -> str:
    """Who sits at a table of ``rules`` (standard if ``None``) without chosen opponents, by
    table size, as :func:`default_opponent` decides it: "compact:scat_batch_set at 2-10
    players". Written from the decision itself, so the help
    cannot name one default while a table of eight gets another."""
    from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS

    runs: list[tuple[str, int, int]] = []
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        spec = default_opponent(n, rules)
        if runs and runs[-1][0] == spec:
            runs[-1] = (spec, runs[-1][1], n)
        else:
            runs.append((spec, n, n))
    return ", ".join(f"{spec} at {lo}-{hi} players" if lo != hi else f"{spec} at {lo} players"
                     for spec, lo, hi in runs)


def default_opponents_by_preset() -> list[str]:
    """:func:`default_opponents_text` for every preset, presets seated alike said once:
    "standard and 21 presets like it: compact:scat_batch_set at 2-10 players"."""
    from scat_env import Rules
    from scat_env.rules import PRESETS

    groups: dict[str, list[str]] = {}
    for name in PRESETS:
        groups.setdefault(default_opponents_text(Rules.preset(name)), []).append(name)
    lines = []
    for text, names in groups.items():
        if "standard" in names and len(names) > 1:
            who = f"standard and {len(names) - 1} presets like it"
        else:
            who = ", ".join(names)
        lines.append(f"{who}: {text}")
    return lines


def new_game(players: int, specs: list[str], rules: Rules, seed: int, name: str) -> SavedGame:
    """A game not yet played: the person at :data:`HUMAN_SEAT`, ``specs`` at the other
    seats, each agent seeded from the game's seed."""
    from scat_env import GameState

    from .savegame import HUMAN, PlayerEntry, SavedGame, agent_seed

    names = default_names(players, HUMAN_SEAT)
    names[HUMAN_SEAT] = name
    entries = [PlayerEntry(name, HUMAN, None)]
    entries += [PlayerEntry(names[s], specs[s - 1], agent_seed(seed, s)) for s in range(1, players)]
    first_dealer = GameState(players, rules, seed=seed).dealer
    return SavedGame(players, rules, seed, first_dealer, entries, human_seat=HUMAN_SEAT)


class AgentError(ValueError):
    """An opponent that cannot play this table (an unknown spec, a table larger than it
    plays, rules it never read); ``spec`` names it, the message says why."""

    def __init__(self, spec: str, message: str) -> None:
        super().__init__(message)
        self.spec = spec


def build_agents(game: SavedGame,
                 factory: Callable[[str, int | None], Agent] | None = None) -> list[Agent | None]:
    """One agent per seat (``None`` for the person), seeded as in :mod:`agents.match`, each
    asked whether it can play this table before the first move (a policy trained for at
    most six players refuses a table of eight here, not mid-game): :class:`AgentError`."""
    from .savegame import HUMAN, retired

    if factory is None:
        from agents.registry import make_agent as factory
    agents: list[Agent | None] = []
    for p in game.players:
        if p.agent == HUMAN or retired(p.agent):  # a retired agent is not asked again
            agents.append(None)
            continue
        try:
            agent = factory(p.agent, p.seed)
            agent.check_table(game.num_players, game.rules)
        except AgentError:
            raise
        except ValueError as exc:
            raise AgentError(p.agent, str(exc)) from None
        agent.reset(p.seed)
        agents.append(agent)
    return agents


#: What the person is told of a seat whose agent kind was retired since the game was saved.
RETIRED_WHAT = "played an agent that was retired since this game was saved"


def hand_over_retired(game: SavedGame) -> list[int]:
    """On resume: every seat whose agent kind was retired goes to today's default opponent
    for the table (:func:`default_opponent`), from the next decision on
    (:meth:`~scat_session.savegame.SavedGame.hand_over_retired`). Returns those seats, for
    the front end to say so with :data:`RETIRED_WHAT`."""
    return game.hand_over_retired(lambda seat: default_opponent(game.num_players, game.rules))
