"""What a tournament plays: its configuration, deals, seatings and lineups.

A tournament is a list of *tables*; a table is a *lineup*, one agent spec per seat. Two
ways to build them (see :func:`population_tables` and :class:`TournamentConfig`):

- **lineup**: the tables are given (``--field expert,greedy,greedy,greedy``): use it when
  there are fewer distinct agents than seats, or to ask one precise question.
- **population round-robin**: ``k`` specs for ``n`` seats with ``k >= n``: one table per
  combination of ``n`` distinct specs (``k = n``: one table).

Duplicate deals. Game ``(table, deal, seating)`` is played with the deal seed
``deal_seed(seed, deal)``; a :class:`~scat_env.GameState` draws its first dealer and every
shuffle from its own generator seeded with it, and nothing else draws from that generator,
so every seating of a deal (and every table) replays the same sequence of shuffled decks
(tested in ``tests/test_tournament.py``). The seatings of a lineup are its distinct seat
permutations (all of them, or rotations, see :data:`SEATINGS`), so each agent sits in each
seat, with each hand of each deal, equally often: the luck of the cards cancels.

Everything here is a pure function of the configuration: the schedule of game keys, and so
the results, do not depend on where or in what order the games are played.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agents.registry import make_agent
from scat_env import DEFAULT_MAX_TURNS, Rules
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS

#: Seat arrangements of a lineup played on every deal.
#: ``permutations``: every distinct permutation (n! for n distinct agents);
#: ``rotations``: the n cyclic rotations (each agent in each seat once, one direction of play);
#: ``mirrored``: rotations of the lineup and of its mirror image (both directions of play);
#: ``auto``: ``permutations`` when there are at most :data:`AUTO_MAX_PERMUTATIONS`, else
#: ``mirrored``.
SEATINGS = ("auto", "permutations", "rotations", "mirrored")
AUTO_MAX_PERMUTATIONS = 24
def deal_seed(master_seed: int, deal: int) -> int:
    """The engine seed of deal number ``deal``: a hash, so nearby master seeds never share
    deals and the value does not depend on how games are split between workers."""
    digest = hashlib.sha256(f"scat-tournament:{master_seed}:{deal}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def seatings_for(lineup: Sequence[str], mode: str = "auto") -> list[tuple[int, ...]]:
    """Seat arrangements of ``lineup``, as tuples ``perm`` where seat ``s`` is played by
    ``lineup[perm[s]]``. Arrangements that give every seat the same spec are merged, so a
    lineup with repeated specs (expert, greedy, greedy, greedy) is not replayed needlessly;
    every spec still sits in every seat in proportion to its count."""
    n = len(lineup)
    if mode not in SEATINGS:
        raise ValueError(f"unknown seating {mode!r}; choose one of {', '.join(SEATINGS)}")
    if mode == "auto":
        distinct = math.factorial(n)
        for spec in set(lineup):
            distinct //= math.factorial(list(lineup).count(spec))
        mode = "permutations" if distinct <= AUTO_MAX_PERMUTATIONS else "mirrored"
    if mode == "permutations":
        perms: Iterator[tuple[int, ...]] = itertools.permutations(range(n))
    else:
        rot = [tuple((i + r) % n for i in range(n)) for r in range(n)]
        if mode == "mirrored":
            rot += [tuple((r - i) % n for i in range(n)) for r in range(n)]
        perms = iter(rot)
    seen: set[tuple[str, ...]] = set()
    out = []
    for perm in perms:
        specs = tuple(lineup[i] for i in perm)
        if specs not in seen:
            seen.add(specs)
            out.append(perm)
    return out


def parse_specs(text: str) -> list[str]:
    """``"expert, greedy,random"`` -> ``["expert", "greedy", "random"]``.

    A spec's own argument may hold commas (``expert:beta=0.5,budget=0.3``): a piece starts
    a new spec only when its name (before any ``:``) is a registered agent, otherwise it
    continues the previous spec's argument.
    """
    from agents.registry import available

    known = available()
    pieces = [s.strip() for s in text.split(",")]
    if not text.strip() or any(not s for s in pieces):
        raise ValueError(f"bad agent list {text!r}: give comma-separated specs, e.g. expert,greedy")
    specs: list[str] = []
    for piece in pieces:
        if specs and piece.partition(":")[0] not in known and "=" in piece:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


def population_tables(population: Sequence[str], num_players: int) -> list[tuple[str, ...]]:
    """Round-robin tables of a population: every combination of ``num_players`` distinct
    specs (one table when the population fills the seats exactly)."""
    if len(set(population)) != len(population):
        raise ValueError(
            f"the population {','.join(population)} repeats a spec; to seat one spec several "
            "times give the lineup explicitly (--field)"
        )
    if len(population) < num_players:
        raise ValueError(
            f"{len(population)} agents for {num_players} seats: give one spec per seat with "
            f"--field (e.g. --field {','.join((list(population) * num_players)[:num_players])}) "
            "or more agents"
        )
    return list(itertools.combinations(population, num_players))


@dataclass(frozen=True)
class TournamentConfig:
    """Everything that determines a tournament's results (and nothing that does not:
    workers, progress bars and output paths are arguments of :func:`run_tournament`)."""

    tables: tuple[tuple[str, ...], ...]
    games: int = 1000  # at least this many games in all (rounded up to whole deals)
    rules: str = "standard"  # preset name or YAML path
    seed: int = 0
    seating: str = "auto"
    single_hand: bool = False
    max_turns: int = DEFAULT_MAX_TURNS
    rules_fields: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not self.tables:
            raise ValueError("a tournament needs at least one table")
        tables = tuple(tuple(t) for t in self.tables)
        object.__setattr__(self, "tables", tables)
        n = len(tables[0])
        if any(len(t) != n for t in tables):
            raise ValueError("every table must seat the same number of players")
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(
                f"{n} players: Scat is played by {MIN_PLAYERS} to {MAX_PLAYERS} players"
            )
        if isinstance(self.games, bool) or not isinstance(self.games, int) or self.games < 1:
            raise ValueError(f"games must be a positive integer, got {self.games!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not isinstance(self.max_turns, int) or self.max_turns < 1:
            raise ValueError(f"max_turns must be a positive integer, got {self.max_turns!r}")
        seatings_for(tables[0], self.seating)  # validates the seating mode
        rules = Rules.preset(self.rules)  # validates (ValueError for a bad name or file)
        object.__setattr__(self, "rules_fields", rules.to_dict())

    @property
    def num_players(self) -> int:
        return len(self.tables[0])

    @property
    def specs(self) -> list[str]:
        """Distinct specs in order of first appearance."""
        return list(dict.fromkeys(s for t in self.tables for s in t))

    def load_rules(self) -> Rules:
        """The rules as recorded at configuration time (a YAML file edited later is not
        picked up silently: :func:`run_tournament` checks them on resume)."""
        return Rules.from_dict(dict(self.rules_fields))

    def check_agents(self) -> None:
        """Build every spec once and ask it whether it can play this table
        (:meth:`agents.base.Agent.check_table`): a bad spec, or a policy trained for fewer
        players or other rules, fails here in one ``ValueError`` line, before any game or
        worker process starts."""
        rules = self.load_rules()
        for spec in self.specs:
            make_agent(spec, seed=0).check_table(self.num_players, rules)

    def seatings(self) -> list[list[tuple[int, ...]]]:
        return [seatings_for(t, self.seating) for t in self.tables]

    def deals_per_table(self) -> int:
        """Deals per table so that the total reaches ``games`` with every table playing the
        same deals in all its seatings."""
        per_deal = sum(len(s) for s in self.seatings())
        return max(1, -(-self.games // per_deal))

    def keys(self) -> list[tuple[int, int, int]]:
        """All game keys ``(table, deal, seating)`` in canonical order."""
        deals = self.deals_per_table()
        return [
            (t, d, k)
            for d in range(deals)
            for t, seats in enumerate(self.seatings())
            for k in range(len(seats))
        ]

    @classmethod
    def from_dict(cls, recorded: Any) -> TournamentConfig:
        """The configuration a ``config.json`` records, rebuilt from its fields and refused
        unless it writes back identical (a rules file edited since, a field added or
        changed by hand, another version's format): ValueError, one line."""
        if not isinstance(recorded, dict):
            raise ValueError("not a tournament config")
        try:
            config = cls(tables=tuple(tuple(t) for t in recorded["tables"]),
                         games=recorded["games"], rules=recorded["rules"],
                         seed=recorded["seed"], seating=recorded["seating"],
                         single_hand=recorded["single_hand"], max_turns=recorded["max_turns"])
        except KeyError as exc:
            raise ValueError(f"not a tournament config: no {exc}") from None
        except TypeError:
            raise ValueError("not a tournament config: a field has the wrong type") from None
        rebuilt = config.to_dict()
        if rebuilt != recorded:
            diff = sorted(str(k)[:40] for k in set(rebuilt) | set(recorded)
                          if rebuilt.get(k) != recorded.get(k))
            raise ValueError(f"a tournament config that does not add up (differs in: "
                             f"{', '.join(diff[:8])})")
        return config

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tables"] = [list(t) for t in self.tables]
        d["rules_fields"] = dict(self.rules_fields)
        d["num_players"] = self.num_players
        d["deals_per_table"] = self.deals_per_table()
        d["total_games"] = len(self.keys())
        d["seatings"] = [[list(p) for p in s] for s in self.seatings()]
        return d

