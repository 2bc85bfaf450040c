"""Duplicate tournaments between agents: many games, every core, resumable, reproducible.

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

Reproducibility. Each game is a pure function of its key and the config: agents are
reseeded per game by :func:`agents.match.play_game`, so the results do not depend on the
number of workers or the order games finish in. Finished games are appended to
``games.jsonl`` (one whole line per game, written straight to the file) as they complete,
so an interrupted run loses at most the games in flight; ``resume=True`` plays only the
missing keys, cutting off a torn last line. When all games are in, the file is rewritten in
canonical key order. A run killed at any moment and resumed, as often as it takes, ends
with the same bytes of ``games.jsonl`` and ``results.json`` as one that ran straight
through (``tests/test_tournament_fault.py`` kills ``scat tournament`` at random moments).

Trusting the log on resume. ``games.jsonl`` is read back, so it is input like any other
file: it may come from another tournament, another version of the code, or an editor.
A resume therefore refuses, in one line naming the file and line, a log that does not
belong:

- no ``config.json`` beside the games, or one that differs from this configuration (a
  configuration rebuilt from a partial log could not be proven the same: ``games``,
  ``max_turns`` and the rules leave no trace in it);
- a record that fails :class:`RecordCheck`: a key outside the schedule or seen twice, a
  deal seed, seat line-up or player count other than the schedule's for its key, a field
  missing, unknown, of the wrong type or out of range, hands whose losses do not add up to
  the lives at the end or whose deal does not pass left, a winner other than the one seat
  left (or a winner in a game that was truncated or is not over);
- a re-played game that does not come out as logged. The engine and the agents are
  deterministic given the deal seed and the per-game agent seeds, so playing a logged key
  again must give the same record, byte for byte; a consistently forged record, or one
  written by other rules, agents or code, does not. Re-playing costs what playing cost, so
  by default (``verify="auto"``) a resume re-plays a sample first: :data:`VERIFY_FRACTION`
  (5%) of the logged games, at least :data:`VERIFY_MIN` (64), or all of them when there are
  fewer, picked by the system's random source so that whoever edits the log cannot know
  which lines are checked; then, timed per game, the rest too when they are estimated to
  take at most :data:`VERIFY_SECONDS` (5 s). Every record of a log of cheap agents is thus
  re-played, and a single forged one is caught whichever it is; only a log whose full
  re-play would cost more than that keeps to the sample (of 2,000 logged games 100 are
  re-played: editing 20 of them is caught with probability 1 - C(1980, 100) / C(2000, 100)
  = 64%, editing 100 with 99.5%), and the line a resume ends with says how many of the
  logged games were re-played. ``verify="sample"`` keeps to the sample;
  ``verify="all"`` (``scat tournament --resume --verify all``) re-plays every one. Measured
  on 2 cores, ``scat tournament --agents random,greedy,expert --players 3 --games 2000
  --workers 1``: the run takes 4.3 s of play; ``--resume`` of the finished run takes 1.0 s
  in all with the sample (101 games re-played) and 4.9 s with ``--verify all``; reading and
  checking its 2,004 lines (:func:`read_games` with the config) takes 0.17 s. On the same
  2 cores shared with other work (the run took 21.9 s), the default resume timed its
  sample, estimated the rest at 32 s and kept to the sample (4.1 s in all; ``--verify
  all``: 16.9 s).

Where games are played. ``backend="local"`` (the default) plays them in this process or a
pool of worker processes on this machine; ``backend="ray"`` submits the same chunks of keys as
Ray tasks to a cluster (``ray_address``, else the ``RAY_ADDRESS`` environment variable, else
a Ray instance started here for the run). Only *where* a chunk is played differs: the keys,
the deal seeds, the log, resume, verification and the lock are this module's one code path,
so a Ray run writes the same bytes as a local one (``tests/test_tournament_ray.py``).
``docs/SCALING.md`` shows a cluster and measured speeds.

Nothing half-written. ``config.json``, the canonical log and every report file are
written to a unique temporary file and renamed; a line the disk refuses part of is cut off
again; temporary files a killed run left are removed by the next run in the folder (which
holds the folder's lock, :mod:`training.runlock`, so no writer of them is alive). An
``OSError`` (full disk, read-only folder) thus leaves a folder that ``--resume`` continues.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import multiprocessing as mp
import os
import re
import secrets
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.match import play_game
from agents.registry import make_agent
from scat_env import DEFAULT_MAX_TURNS, Rules
from scat_env.engine import short_repr
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS

from .report import REPORT_FILES, stale_temp_files, write_all, write_atomic
from .runlock import exclusive_folder

#: Seat arrangements of a lineup played on every deal.
#: ``permutations``: every distinct permutation (n! for n distinct agents);
#: ``rotations``: the n cyclic rotations (each agent in each seat once, one direction of play);
#: ``mirrored``: rotations of the lineup and of its mirror image (both directions of play);
#: ``auto``: ``permutations`` when there are at most :data:`AUTO_MAX_PERMUTATIONS`, else
#: ``mirrored``.
SEATINGS = ("auto", "permutations", "rotations", "mirrored")
AUTO_MAX_PERMUTATIONS = 24

GAMES_FILE = "games.jsonl"
CONFIG_FILE = "config.json"

#: Where games are played: ``local`` (this machine's processes) or ``ray`` (Ray tasks).
BACKENDS = ("local", "ray")
#: The one line a Ray run without Ray installed stops with.
RAY_MISSING = "--backend ray needs Ray (pip install 'scat-env[ray]')"


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


# -- playing games (in worker processes) ----------------------------------------------------
_WORKER: dict[str, Any] = {}


def _die_with(parent: int) -> None:
    """Linux: have the kernel kill this worker when the tournament process dies.

    A worker forked from the tournament inherits its open files, the folder's lock among
    them, so a worker outliving a killed parent (``kill -9``, the out-of-memory killer)
    would keep the folder locked, and a resume refused, until it finished its chunk."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - no prctl: the pipe ends them later
        return
    if os.getppid() != parent:  # the parent died before the request was in place
        os._exit(1)


def _init_worker(config: TournamentConfig, ignore_sigint: bool = True,
                 parent: int | None = None) -> None:
    """Pool initializer: workers leave Ctrl-C to the parent, which stops them cleanly, and
    die with it (:func:`_die_with`)."""
    if parent is not None:
        _die_with(parent)
    if ignore_sigint:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER.clear()
    _WORKER["config"] = config
    _WORKER["rules"] = config.load_rules()
    _WORKER["seatings"] = config.seatings()
    _WORKER["agents"] = {}


def _agent(spec: str, seat: int) -> Agent:
    """One cached instance per (spec, seat): building some agents is costly (policies load
    a network), and :func:`play_game` reseeds them at the start of every game, so reuse
    does not change results (the Agent contract: ``reset(seed)`` starts a fresh game)."""
    cache: dict[tuple[str, int], Agent] = _WORKER["agents"]
    agent = cache.get((spec, seat))
    if agent is None:
        agent = cache[(spec, seat)] = make_agent(spec, seed=seat)
    return agent


def play_key(key: tuple[int, int, int]) -> dict[str, Any]:
    """Play game ``key`` and return its JSONL record (a pure function of key and config)."""
    config: TournamentConfig = _WORKER["config"]
    table, deal, seating = key
    lineup = config.tables[table]
    perm = _WORKER["seatings"][table][seating]
    specs = [lineup[i] for i in perm]
    seed = deal_seed(config.seed, deal)
    agents = [_agent(spec, s) for s, spec in enumerate(specs)]
    record = play_game(
        agents,
        _WORKER["rules"],
        seed=seed,
        single_hand=config.single_hand,
        max_turns=config.max_turns,
    )
    n = len(specs)
    # A summary per hand, not HandResult.to_dict(): scoring a tournament needs who lost
    # what, never the cards, and per-seat lists keep a log of many thousand games small.
    hands = []
    for r in record.results:
        hands.append({
            "reason": r.reason,
            "dealer": r.dealer,
            "knocker": r.knocker,
            "declarers": list(r.declarers),
            "lives_lost": [r.lives_lost.get(s) for s in range(n)],
            "values": [r.values.get(s) for s in range(n)],
            "eliminated": list(r.eliminated),
            "replayed": r.replayed,
        })
    lives_end = list(record.results[-1].lives_after) if record.results else []
    return {
        "table": table,
        "deal": deal,
        "seating": seating,
        "seed": seed,
        "seats": specs,
        "lineup_index": list(perm),
        "first_dealer": record.first_dealer,
        "winner": record.winner,
        "truncated": record.truncated,
        "decisions": record.decisions,
        "lives_end": lives_end,
        "hands": hands,
    }


def _play_chunk(keys: list[tuple[int, int, int]]) -> list[dict[str, Any]]:
    return [play_key(k) for k in keys]


def _ray_play_chunk(fingerprint: str, config: TournamentConfig,
                    keys: list[tuple[int, int, int]]) -> list[dict[str, Any]]:
    """A chunk played as a Ray task. A Ray worker process runs many tasks, of this run and
    maybe of others, so it rebuilds its state (rules, seatings, cached agents) only when the
    configuration differs from the one it last played (``fingerprint``)."""
    if _WORKER.get("fingerprint") != fingerprint:
        _init_worker(config, ignore_sigint=False)  # Ray owns the worker's signals
        _WORKER["fingerprint"] = fingerprint
    return _play_chunk(keys)


# -- the JSONL log -------------------------------------------------------------------------
#: The fields of a game record and of each of its hands, exactly as :func:`play_key` writes
#: them: a record with a field more or less is not one of ours.
RECORD_FIELDS = ("table", "deal", "seating", "seed", "seats", "lineup_index", "first_dealer",
                 "winner", "truncated", "decisions", "lives_end", "hands")
HAND_FIELDS = ("reason", "dealer", "knocker", "declarers", "lives_lost", "values",
               "eliminated", "replayed")
#: How a hand ended (``"knock"``, ``"thirty_one"``...: :class:`scat_env.HandResult`'s
#: ``reason``): a short lower-case word; the set grows with the rules, the re-play checks it.
HAND_REASON = re.compile(r"[a-z][a-z0-9_]{0,39}")
#: A line longer than this is refused unread (a real record holds a few hundred bytes a hand).
MAX_RECORD_BYTES = 1 << 20


def game_key(record: dict[str, Any]) -> tuple[int, int, int]:
    return (record["table"], record["deal"], record["seating"])


def _is_int(value: Any) -> bool:
    return type(value) is int  # JSON integers only: not bool, not 1.0


def _seat_list(value: Any, n: int, what: str, *, optional: bool = False) -> list[Any]:
    """``value`` as a list of ``n`` entries (``optional``: or empty), else ValueError."""
    if not isinstance(value, list) or (len(value) != n and not (optional and not value)):
        raise ValueError(f"{what} must be a list of {n} entries, got {short_repr(value)}")
    return value


def _seats(value: Any, n: int, what: str, among: Sequence[int] | None = None) -> list[int]:
    """A list of distinct seat numbers (in ``among`` when given)."""
    ok = range(n) if among is None else among
    if (not isinstance(value, list) or len(set(map(repr, value))) != len(value)
            or any(not _is_int(s) or s not in ok for s in value)):
        raise ValueError(f"{what} must list distinct seats of the game, got {short_repr(value)}")
    return value


class RecordCheck:
    """Checks that a ``games.jsonl`` record is one this tournament could have written.

    Every check is on the record alone, against the configuration: its key is in the
    schedule; its deal seed, seats and line-up are the ones the schedule gives that key;
    every field has its type and range; the hands add up (each seat dealt in exactly while
    it has lives, losses within what it had, the eliminated seats exactly those that reached
    zero, lives at the end equal to the start less every loss, the deal passing left among
    the seats still in); and the outcome follows from
    the lives (a finished game's winner is the one seat left; a truncated game has no winner
    and two or more seats left). What it cannot see, a record edited consistently, the
    re-play in :func:`run_tournament` catches.
    """

    def __init__(self, config: TournamentConfig) -> None:
        self.config = config
        self.n = config.num_players
        self.seatings = config.seatings()
        self.deals = config.deals_per_table()
        rules = config.load_rules()
        self.start_lives = rules.start_lives
        # A race to points ends on points, which the hand summaries do not carry: its
        # records are checked for the schedule and the lives, the winner only for form.
        self.points_race = getattr(rules, "scoring", "lives") == "points"

    def __call__(self, rec: Any) -> tuple[int, int, int]:
        """The record's game key; ValueError (what is wrong, one line) if it does not belong."""
        if not isinstance(rec, dict):
            raise ValueError(f"not a game record: {short_repr(rec)}")
        missing = [f for f in RECORD_FIELDS if f not in rec]
        extra = sorted(str(f) for f in rec if f not in RECORD_FIELDS)
        if missing or extra:
            raise ValueError("not a game record of this tournament: "
                             + (f"no {', '.join(missing)}" if missing else "")
                             + ("; " if missing and extra else "")
                             + (f"unknown field {short_repr(', '.join(extra))}" if extra else ""))
        key = self._schedule(rec)
        self._outcome(rec, self._hands(rec))
        return key

    def _schedule(self, rec: dict[str, Any]) -> tuple[int, int, int]:
        """The key, deal seed, seats and line-up against the schedule."""
        table, deal, seating = rec["table"], rec["deal"], rec["seating"]
        if not all(map(_is_int, (table, deal, seating))):
            raise ValueError("table, deal and seating must be integers, got "
                             f"{short_repr([table, deal, seating])}")
        if not (0 <= table < len(self.seatings) and 0 <= deal < self.deals
                and 0 <= seating < len(self.seatings[table])):
            raise ValueError(f"game {(table, deal, seating)} is not in this tournament's "
                             f"schedule ({len(self.seatings)} table(s), {self.deals} deals)")
        if rec["seed"] != deal_seed(self.config.seed, deal) or not _is_int(rec["seed"]):
            raise ValueError(f"game {(table, deal, seating)} has deal seed "
                             f"{short_repr(rec['seed'])}, but this tournament deals deal "
                             f"{deal} with seed {deal_seed(self.config.seed, deal)}")
        perm = self.seatings[table][seating]
        lineup = self.config.tables[table]
        if (rec["lineup_index"] != list(perm) or not all(map(_is_int, rec["lineup_index"]))
                or rec["seats"] != [lineup[i] for i in perm]):
            raise ValueError(f"game {(table, deal, seating)} seats "
                             f"{short_repr(rec['seats'], 80)}, but this tournament seats "
                             f"{short_repr([lineup[i] for i in perm], 80)}")
        n = self.n
        if not _is_int(rec["first_dealer"]) or not 0 <= rec["first_dealer"] < n:
            raise ValueError(f"first_dealer must be a seat 0..{n - 1}, got "
                             f"{short_repr(rec['first_dealer'])}")
        if not _is_int(rec["decisions"]) or rec["decisions"] < 0:
            raise ValueError(f"decisions must be a count, got {short_repr(rec['decisions'])}")
        return table, deal, seating

    def _hands(self, rec: dict[str, Any]) -> list[int]:
        """Replay the lives through the hands; return the lives at the end."""
        n = self.n
        hands = rec["hands"]
        if not isinstance(hands, list):
            raise ValueError(f"hands must be a list, got {short_repr(hands)}")
        lives = [self.start_lives] * n
        dealer: int | None = None
        for number, hand in enumerate(hands):
            if sum(v > 0 for v in lives) <= 1 or (self.config.single_hand and number):
                raise ValueError(f"hand {number} is played after the game was over")
            try:
                after = self._hand(hand, lives)
            except ValueError as exc:
                raise ValueError(f"hand {number}: {exc}") from None
            if dealer is None:
                # The chain starts at the first hand's dealer, not at first_dealer: a 31
                # dealt in the very first deal moves the deal on before the record reads it.
                dealer = hand["dealer"]
            if hand["dealer"] != dealer:
                raise ValueError(f"hand {number} is dealt by seat {hand['dealer']}, but the deal "
                                 f"passes to seat {dealer}")
            # The deal passes left among the seats still in; a replayed hand is dealt again
            # by the same dealer if still in (scat_env.GameState._end_hand).
            if not hand["replayed"] or after[dealer] <= 0:
                dealer = next(((dealer + k) % n for k in range(1, n + 1)
                               if after[(dealer + k) % n] > 0), dealer)
            lives = after
        return lives

    def _hand(self, hand: Any, lives: list[int]) -> list[int]:
        """One hand's summary against the lives before it; return the lives after it."""
        if not isinstance(hand, dict) or sorted(hand) != sorted(HAND_FIELDS):
            raise ValueError(f"not a hand summary: {short_repr(hand)}")
        n = self.n
        dealt = [s for s in range(n) if lives[s] > 0]
        if not isinstance(hand["reason"], str) or not HAND_REASON.fullmatch(hand["reason"]):
            raise ValueError(f"unknown reason {short_repr(hand['reason'])}")
        if not _is_int(hand["dealer"]) or hand["dealer"] not in dealt:
            raise ValueError(f"dealer {short_repr(hand['dealer'])} is not a seat still in")
        if hand["knocker"] is not None and (not _is_int(hand["knocker"])
                                            or hand["knocker"] not in dealt):
            raise ValueError(f"knocker {short_repr(hand['knocker'])} is not a seat still in")
        _seats(hand["declarers"], n, "declarers", dealt)
        if not isinstance(hand["replayed"], bool):
            raise ValueError(f"replayed must be true or false, got {short_repr(hand['replayed'])}")
        values = _seat_list(hand["values"], n, "values")
        lost = _seat_list(hand["lives_lost"], n, "lives_lost")
        after = list(lives)
        for s in range(n):
            if s not in dealt:
                if values[s] is not None or lost[s] is not None:
                    raise ValueError(f"seat {s} is out but has a value or a loss")
                continue
            v = values[s]
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < math.inf:
                raise ValueError(f"seat {s}'s value must be a number, got {short_repr(v)}")
            if not _is_int(lost[s]) or not 0 <= lost[s] <= lives[s]:
                raise ValueError(f"seat {s} loses {short_repr(lost[s])} lives with "
                                 f"{lives[s]} left")
            if hand["replayed"] and lost[s]:
                raise ValueError(f"seat {s} loses a life in a replayed hand")
            after[s] -= lost[s]
        out = [s for s in dealt if after[s] == 0]
        if _seats(hand["eliminated"], n, "eliminated") != out:
            raise ValueError(f"eliminated {short_repr(hand['eliminated'])}, but the losses "
                             f"put out {out}")
        return after

    def _outcome(self, rec: dict[str, Any], lives: list[int]) -> None:
        """Winner, truncation and lives at the end against the hands."""
        if not isinstance(rec["truncated"], bool):
            raise ValueError(f"truncated must be true or false, got {short_repr(rec['truncated'])}")
        hands = rec["hands"]
        lives_end = _seat_list(rec["lives_end"], self.n, "lives_end", optional=True)
        if not all(map(_is_int, lives_end)) or lives_end != (lives if hands else []):
            raise ValueError(f"lives_end {short_repr(lives_end)} do not match the hands' losses "
                             f"({lives if hands else []})")
        alive = [s for s in range(self.n) if lives[s] > 0]
        if self.points_race:
            winner = rec["winner"]
            ended = winner is not None or (self.config.single_hand and len(hands) == 1)
            if rec["truncated"] == ended or not (winner is None or (
                    _is_int(winner) and 0 <= winner < self.n)):
                raise ValueError(f"winner is {short_repr(winner)} and truncated is "
                                 f"{str(rec['truncated']).lower()}: a race has one or the other")
            return
        over = len(alive) <= 1 or (self.config.single_hand and len(hands) == 1)
        if rec["truncated"] == over:
            raise ValueError("truncated is " + str(rec["truncated"]).lower() + " but the game "
                             + ("is over" if over else "is not over"))
        winner = alive[0] if len(alive) == 1 else None
        if rec["winner"] != winner or not (rec["winner"] is None or _is_int(rec["winner"])):
            raise ValueError(f"winner is {short_repr(rec['winner'])}, but the lives say "
                             f"{'seat ' + str(winner) if winner is not None else 'no winner'}")


def _read_lines(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], int, int]:
    """Parse a JSONL log: ``([(line number, record), ...], good_end, size)``; ``good_end`` is
    the byte length of the complete lines (anything after it is a torn last line)."""
    data = path.read_bytes()
    records = []
    good_end = 0  # bytes up to the end of the last complete line
    lines = data.split(b"\n")
    # Every complete line ends with a newline, so the last piece is either empty or torn
    # (even if it parses: the line was cut just before its newline); that game is replayed.
    for i, line in enumerate(lines[:-1]):
        if line.strip():
            try:
                if len(line) > MAX_RECORD_BYTES:
                    raise ValueError("line too long")
                rec = json.loads(line)
                if not isinstance(rec, dict) or "table" not in rec:
                    raise ValueError("not a game record")
            except (ValueError, RecursionError):
                if i == len(lines) - 2 and not lines[-1]:
                    break  # the last line is torn inside (a crash while writing)
                raise ValueError(f"{path}:{i + 1}: corrupt game record; not resuming") from None
            records.append((i + 1, rec))
        good_end += len(line) + 1
    return records, good_end, len(data)


def _check_lines(path: Path, lines: list[tuple[int, Any]], config: TournamentConfig) -> None:
    """Every record of ``lines`` against ``config`` (:class:`RecordCheck`), and no game
    twice; ValueError ``FILE:LINE: what is wrong`` at the first that does not belong."""
    check = RecordCheck(config)
    seen: dict[tuple[int, int, int], int] = {}
    for number, rec in lines:
        try:
            key = check(rec)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}; not resuming") from None
        if key in seen:
            raise ValueError(f"{path}:{number}: game {key} again (first on line "
                             f"{seen[key]}); not resuming")
        seen[key] = number


def read_games(
    path: Path, repair: bool = False, config: TournamentConfig | None = None
) -> list[dict[str, Any]]:
    """Game records of a JSONL log. A torn last line (the run was killed mid-write) is
    ignored, and with ``repair=True`` cut off so appending continues cleanly; a bad line
    anywhere else means the file is not ours or was edited: refuse, naming the line.

    With ``config``, every record is also checked against it (:class:`RecordCheck`, and no
    game twice): a record that does not belong is refused as ``FILE:LINE: what``, before
    anything is repaired."""
    if not path.exists():
        return []
    lines, good_end, size = _read_lines(path)
    if config is not None:
        _check_lines(path, lines, config)
    if repair and good_end < size:
        _cut(path, good_end)
    return [rec for _, rec in lines]


def _cut(path: Path, size: int) -> None:
    """Cut a torn last line off the log (bytes after the last complete line)."""
    with open(path, "r+b") as f:
        f.truncate(size)


def _write_json(path: Path, obj: Any) -> None:
    """Write atomically (a unique temp file + rename): a reader never sees half a file."""
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


# -- running -------------------------------------------------------------------------------
#: How many logged games a resume re-plays to prove the log genuine (see the module notes):
#: ``"auto"`` (the default) every one when that is estimated to cost at most
#: :data:`VERIFY_SECONDS` more than the sample, else the sample; ``"sample"``
#: :data:`VERIFY_FRACTION` of them, at least :data:`VERIFY_MIN`, picked unpredictably;
#: ``"all"`` every one.
VERIFY_MODES = ("auto", "sample", "all")
VERIFY_FRACTION = 0.05
VERIFY_MIN = 64
#: What ``"auto"`` may spend re-playing the games the sample left out (estimated from the
#: time the sample took, per game).
VERIFY_SECONDS = 5.0


@dataclass
class TournamentRun:
    """What :func:`run_tournament` returns: the config, every game record in canonical
    order, how long the games played in this call took, and how many logged games were
    re-played to check them."""

    config: TournamentConfig
    games: list[dict[str, Any]]
    played_now: int
    seconds: float
    workers: int
    verified: int = 0
    #: How many games the log held when the run began (``verified`` of them were re-played).
    logged: int = 0
    #: ``"auto"`` that kept to the sample: the estimated seconds re-playing the rest would
    #: have taken; else ``None``.
    rest_estimate_s: float | None = None

    def verify_line(self) -> str:
        """What a resume checked, in one line (``""`` when the log was empty)."""
        if not self.logged:
            return ""
        line = (f"verified {self.verified:,} of {self.logged:,} logged games by re-playing "
                "them: each came out as logged")
        if self.verified < self.logged:
            why = (f"re-playing the rest would take about {self.rest_estimate_s:.0f} s"
                   if self.rest_estimate_s is not None else "a random sample")
            line += f" ({why}; --verify all re-plays every one)"
        return line

    @property
    def games_per_second(self) -> float:
        return self.played_now / self.seconds if self.seconds > 0 else math.nan


def run_tournament(
    config: TournamentConfig,
    out_dir: str | Path,
    *,
    workers: int | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    chunk_games: int | None = None,
    verify: str = "auto",
    backend: str = "local",
    ray_address: str | None = None,
) -> TournamentRun:
    """Play every game of ``config`` not already in ``out_dir/games.jsonl``.

    ``workers=None`` uses every core; ``workers=1`` plays in this process (no pool).
    ``backend="ray"`` plays the same chunks as Ray tasks (:func:`_ray_player`): on the
    connection this process already holds if Ray is initialised, else on the cluster at
    ``ray_address`` (or the ``RAY_ADDRESS`` environment variable), else on a Ray instance
    started for this run with ``workers`` CPUs; ``workers`` is then how many chunks run at
    once (default: the cluster's CPUs). The results are the same bytes whatever the backend.
    Raises ``ValueError`` when ``out_dir`` holds another tournament, or holds games and
    neither ``resume`` nor ``overwrite`` was asked for (nothing is ever deleted silently),
    or (on ``resume``) holds a log that does not belong: no ``config.json`` beside it, a
    record that fails :class:`RecordCheck`, or a re-played game (``verify``, one of
    :data:`VERIFY_MODES`) that does not come out as logged. ``OSError`` (a full disk, a
    read-only folder) leaves the folder as a resume can continue it: whole files and whole
    log lines only.
    """
    if verify not in VERIFY_MODES:
        raise ValueError(f"unknown verify mode {verify!r}; choose one of {', '.join(VERIFY_MODES)}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "ray":
        require_ray()  # before the folder is touched
    elif ray_address is not None:
        raise ValueError("a Ray address needs the ray backend")
    config.check_agents()
    with exclusive_folder(out_dir, "tournament") as out:
        return _run_locked(config, out, workers=workers, resume=resume, overwrite=overwrite,
                           progress=progress, chunk_games=chunk_games, verify=verify,
                           backend=backend, ray_address=ray_address)


def _logged_games(
    config: TournamentConfig, out: Path
) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """The records already in ``out`` (line number, record), each checked against
    ``config``, and the byte length of the log's complete lines; ValueError if the folder
    holds another tournament or a log not ours."""
    games_path = out / GAMES_FILE
    config_path = out / CONFIG_FILE
    if not config_path.exists():
        # Reconstructing the configuration from the records cannot prove it was this one
        # (games, rules, max_turns leave no trace in a partial log): refuse.
        raise ValueError(f"{games_path} holds games but there is no {CONFIG_FILE} beside it: "
                         "not a tournament this command can resume; use another --out "
                         "or --overwrite")
    try:
        if config_path.stat().st_size > MAX_RECORD_BYTES:  # a real one is about 1 kB
            raise ValueError("too large")
        old = json.loads(config_path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError):
        raise ValueError(f"{config_path} is not a tournament config (not JSON); use another "
                         "--out or --overwrite") from None
    wanted = config.to_dict()
    if old != wanted:
        if not isinstance(old, dict):
            raise ValueError(f"{config_path} is not a tournament config; use another --out "
                             "or --overwrite")
        diff = sorted(str(k)[:40] for k in set(old) | set(wanted) if old.get(k) != wanted.get(k))
        raise ValueError(
            f"{out} holds a different tournament (differs in: {', '.join(diff[:8])}"
            f"{', ...' if len(diff) > 8 else ''}); use another --out"
        )
    lines, good_end, _ = _read_lines(games_path)
    _check_lines(games_path, lines, config)
    return lines, good_end


def _verify_sample(lines: list[tuple[int, dict[str, Any]]], mode: str) -> list[tuple[int, dict]]:
    """The logged games a resume re-plays first: every one, or an unpredictable sample (a
    system random source, so whoever edits the log cannot know which records will be
    checked). ``"auto"`` starts with the sample (:func:`_verify_rest` may add the rest)."""
    if mode == "all" or len(lines) <= VERIFY_MIN:
        return list(lines)
    size = max(VERIFY_MIN, math.ceil(VERIFY_FRACTION * len(lines)))
    picked = secrets.SystemRandom().sample(range(len(lines)), size)
    return [lines[i] for i in sorted(picked)]


def _verify_rest(lines: list[tuple[int, dict[str, Any]]], checked: list[tuple[int, int, int]],
                 seconds: float, mode: str) -> tuple[list[tuple[int, int, int]], float | None]:
    """For ``"auto"``: the logged games the sample left out, when re-playing them is
    estimated (from ``seconds``, the sample's time) to take at most :data:`VERIFY_SECONDS`;
    else none, and that estimate."""
    left = len(lines) - len(checked)
    if mode != "auto" or left <= 0:
        return [], None
    estimate = seconds / max(1, len(checked)) * left
    if estimate > VERIFY_SECONDS:
        return [], estimate
    done = set(checked)
    return [k for k in (game_key(rec) for _, rec in lines) if k not in done], None


def _canonical(rec: dict[str, Any]) -> str:
    return json.dumps(rec, sort_keys=True, separators=(",", ":"))


def _check_replayed(games_path: Path, logged: dict[tuple[int, int, int], tuple[int, dict]],
                    records: list[dict[str, Any]]) -> None:
    """Compare re-played games with their log lines; ValueError naming the first that
    differs (the log was edited, or written by other rules, agents or code)."""
    for rec in records:
        number, old = logged[game_key(rec)]
        if _canonical(rec) != _canonical(old):
            field_ = next((f for f in RECORD_FIELDS
                           if _canonical({"v": rec[f]}) != _canonical({"v": old.get(f)})), "?")
            raise ValueError(
                f"{games_path}:{number}: game {game_key(rec)} does not replay as logged "
                f"({field_}: logged {short_repr(old.get(field_))}, played "
                f"{short_repr(rec[field_])}); the log was edited or written by other agents "
                "or code; not resuming (--overwrite starts again)"
            )


#: Chunks of keys in, their records out, chunk by chunk in any order.
PlayChunks = Callable[[list[list[tuple[int, int, int]]]], Iterator[list[dict[str, Any]]]]


@contextmanager
def _game_player(
    config: TournamentConfig, workers: int | None, jobs: int, backend: str = "local",
    ray_address: str | None = None,
) -> Iterator[tuple[PlayChunks, int]]:
    """A function from chunks of keys to their records (in any order), and how many chunks
    it plays at once: in this process for one worker, else through a pool that lives as long
    as the context, or as Ray tasks (:func:`_ray_player`). ``jobs`` (games to play) caps the
    workers: a pool larger than the work only costs start-up."""
    if backend == "ray":
        with _ray_player(config, workers, jobs, ray_address) as player:
            yield player
        return
    workers = max(1, workers if workers is not None else (os.cpu_count() or 1))
    workers = min(workers, max(1, jobs))
    if workers == 1:
        _init_worker(config, ignore_sigint=False)
        yield (lambda chunks: map(_play_chunk, chunks)), 1
        return
    ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    pool = ctx.Pool(workers, initializer=_init_worker, initargs=(config, True, os.getpid()))
    try:
        yield (lambda chunks: pool.imap_unordered(_play_chunk, chunks)), workers
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()


def require_ray() -> Any:
    """The ``ray`` module, or ValueError :data:`RAY_MISSING` (Ray is an optional extra)."""
    try:
        import ray
    except ImportError:
        raise ValueError(RAY_MISSING) from None
    return ray


def check_ray_address(address: str | None) -> None:
    """Refuse, in one line and before anything is written to the run folder, a Ray address
    (``address``, else ``RAY_ADDRESS``) where no cluster answers; no address (or ``local``)
    starts a Ray instance here and needs no check. ``ValueError`` :data:`RAY_MISSING` when
    Ray is not installed."""
    require_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address not in (None, "local"):
        _check_reachable(address)


def _auto_address(address: str) -> str:
    """What ``auto`` stands for: the cluster ``ray start`` last ran on this machine, which
    Ray notes in its temp folder. A cluster that has since stopped leaves that note behind,
    and ``ray.init("auto")`` would then retry its dead address for minutes, so the address
    is looked up here and checked like any other. Ray's lookup is not a public API: where it
    is missing or fails otherwise, ``auto`` is left to Ray."""
    try:
        from ray._private.services import get_ray_address_from_environment

        found = get_ray_address_from_environment(address, None)
    except ConnectionError as exc:
        first = (str(exc).strip().splitlines() or ["none found"])[0].split(". ")[0]
        raise ValueError(f"no Ray cluster runs on this machine for --ray-address auto "
                         f"(start one with ray start --head): {first}") from None
    except Exception:  # another Ray version: its own start-up decides
        return address
    return found if isinstance(found, str) and found else address


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse, in one line, a Ray address where nothing listens: ``ray.init`` would keep
    retrying it for minutes. ``auto`` is first resolved to the address it stands for."""
    shown = address
    if address == "auto":
        address = _auto_address(address)
        if address == "auto":
            return
        shown = f"auto ({address})"
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"bad Ray address {address!r}: give the head node's HOST:PORT "
                         "(e.g. 10.0.0.5:6379), ray://HOST:PORT or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise ValueError(f"cannot reach a Ray cluster at {shown}: "
                         f"{exc.strerror or str(exc) or type(exc).__name__}") from None


def _cancel(ray: Any, pending: set[Any]) -> None:
    """Cancel the chunks still queued or running (Ctrl-C, an error): their games are not in
    the log yet, so a resume plays them; the cluster stops spending time on them now."""
    for ref in pending:
        with contextlib.suppress(Exception):
            ray.cancel(ref)
    pending.clear()


def init_ray(address: str | None, local: dict[str, Any], cluster_logging: str) -> None:
    """``ray.init``, for every caller the same way: no address (or ``local``) starts a new
    Ray instance on this machine with ``local``'s settings (no dashboard, no usage report, no
    worker output on this terminal); an address is checked to answer first and joined with
    ``cluster_logging``. Whatever goes wrong while starting (Ctrl-C, no cluster, another
    Ray) shuts down the half that started; a failure to connect is one ``ValueError`` line,
    with the hint Ray leaves out when a cluster wants a token."""
    ray = require_ray()
    try:
        if address in (None, "local"):
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(address="local", include_dashboard=False, log_to_driver=False,
                     logging_level="ERROR", **local)
        else:
            _check_reachable(address)
            ray.init(address=address, log_to_driver=False, logging_level=cluster_logging)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            ray.shutdown()  # whatever half of the start-up happened
        if not isinstance(exc, (ConnectionError, RuntimeError)):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        hint = ""
        if address is not None and os.environ.get("RAY_AUTH_MODE") != "token":
            # Ray says only "failed to connect" when the cluster wants a token.
            hint = ("; if the cluster uses token authentication, set RAY_AUTH_MODE=token "
                    "and give this machine its token (docs/SCALING.md)")
        raise ValueError(f"cannot use the Ray cluster at {address or 'this machine'}: "
                         f"{first}{hint}") from None


@contextmanager
def _ray_player(
    config: TournamentConfig, workers: int | None, jobs: int, address: str | None
) -> Iterator[tuple[PlayChunks, int]]:
    """Chunks played as Ray tasks, at most two per worker in flight (a free CPU always has
    the next chunk, and Ctrl-C cancels little). Records come back whole per chunk, in the
    order chunks finish, exactly as the local pool gives them, so the caller's log, resume
    and checks are the same code.

    Where: the connection this process already holds; else ``address`` or ``RAY_ADDRESS``
    (checked to answer first); else a Ray instance started here for this run, with
    ``workers`` CPUs, no dashboard, no usage report and no worker output on this terminal.
    A connection or instance opened here is closed when the context ends."""
    ray = require_ray()
    opened = False
    if ray.is_initialized():
        if address is not None:
            raise ValueError("Ray is already initialised in this process: leave the Ray "
                             "address out to play on that connection")
    else:
        address = address or os.environ.get("RAY_ADDRESS") or None
        # "local": a new instance even where `ray start` runs one (that one is `auto`).
        # Nobody else uses it: its start-up notes would only be noise.
        init_ray(address, {"num_cpus": workers or os.cpu_count() or 1}, "WARNING")
        opened = True
    pending: set[Any] = set()
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        workers = max(1, min(workers or cpus or 1, max(1, jobs)))
        task = ray.remote(num_cpus=1)(_ray_play_chunk)
        config_ref = ray.put(config)  # sent to the cluster once, not with every chunk
        fingerprint = hashlib.sha256(
            json.dumps(config.to_dict(), sort_keys=True).encode()).hexdigest()

        def play(chunks: list[list[tuple[int, int, int]]]) -> Iterator[list[dict[str, Any]]]:
            queue = iter(chunks)
            try:
                for chunk in itertools.islice(queue, 2 * workers):
                    pending.add(task.remote(fingerprint, config_ref, chunk))
                while pending:
                    ready, _ = ray.wait(list(pending), num_returns=1)
                    pending.discard(ready[0])
                    records = ray.get(ready[0])
                    for chunk in itertools.islice(queue, 1):  # keep the cluster busy
                        pending.add(task.remote(fingerprint, config_ref, chunk))
                    yield records
            finally:
                _cancel(ray, pending)

        yield play, workers
    except BaseException:
        _cancel(ray, pending)
        raise
    finally:
        if opened:
            ray.shutdown()


class _Log:
    """``games.jsonl`` opened for appending whole lines: a line is written completely or,
    when the disk refuses part of it, cut off again, so the log never ends in a torn line
    this process could have avoided (a kill mid-write still can: a resume repairs that)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        self.end = os.fstat(self.fd).st_size

    def append(self, rec: dict[str, Any]) -> None:
        line = (json.dumps(rec, separators=(",", ":")) + "\n").encode("utf-8")
        try:
            write_all(self.fd, line)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, self.end)
            raise OSError(exc.errno, exc.strerror or str(exc), str(self.path)) from None
        self.end += len(line)

    def close(self) -> None:
        os.close(self.fd)


def _chunked(keys: list[tuple[int, int, int]], size: int) -> list[list[tuple[int, int, int]]]:
    return [keys[i:i + size] for i in range(0, len(keys), size)]


def _run_locked(
    config: TournamentConfig,
    out: Path,
    *,
    workers: int | None,
    resume: bool,
    overwrite: bool,
    progress: bool,
    chunk_games: int | None,
    verify: str,
    backend: str = "local",
    ray_address: str | None = None,
) -> TournamentRun:
    """:func:`run_tournament`'s work, with ``out`` held by this process."""
    games_path = out / GAMES_FILE
    config_path = out / CONFIG_FILE
    for stale in stale_temp_files(out, (GAMES_FILE, CONFIG_FILE, *REPORT_FILES)):
        stale.unlink(missing_ok=True)  # a killed run's; we hold the lock, no writer is alive
    if overwrite:
        # The old results go with the old games: a folder never shows one run's config
        # beside another run's results.
        for name in (GAMES_FILE, CONFIG_FILE, *REPORT_FILES):
            (out / name).unlink(missing_ok=True)
    lines: list[tuple[int, dict[str, Any]]] = []
    good_end = None
    if games_path.exists() and games_path.stat().st_size > 0:
        if not resume:
            raise ValueError(
                f"{games_path} already holds games: pass --resume to continue that run, "
                "--overwrite to start again, or another --out"
            )
        lines, good_end = _logged_games(config, out)

    keys = config.keys()
    logged = {game_key(rec): (number, rec) for number, rec in lines}
    done = {k: rec for k, (_, rec) in logged.items()}
    todo = [k for k in keys if k not in done]
    checks = [game_key(rec) for _, rec in _verify_sample(lines, verify)]

    jobs = len(todo) + (len(checks) if verify == "sample" else len(lines))

    from tqdm import tqdm

    bar = tqdm(
        total=len(keys), initial=len(done), unit="game", file=sys.stderr, dynamic_ncols=True,
        disable=not progress or not sys.stderr.isatty(), desc="tournament",
    )
    played = 0
    try:
        with _game_player(config, workers, jobs, backend, ray_address) as (play, workers):
            if chunk_games is None:
                # Big enough to amortise the pool's overhead, small enough that Ctrl-C loses
                # little and the progress bar moves.
                chunk_games = max(1, min(64, jobs // (workers * 8) or 1))
            # Every re-play first: a log that does not belong is refused before this run
            # adds a line to it (or writes its config beside it).
            began = time.perf_counter()
            for records in play(_chunked(checks, chunk_games)):
                _check_replayed(games_path, logged, records)
            rest, estimate = _verify_rest(lines, checks, time.perf_counter() - began, verify)
            for records in play(_chunked(rest, chunk_games)):
                _check_replayed(games_path, logged, records)
            if good_end is not None and good_end < games_path.stat().st_size:
                _cut(games_path, good_end)
            _write_json(config_path, config.to_dict())
            start = time.perf_counter()
            log = _Log(games_path)
            try:
                for records in play(_chunked(todo, chunk_games)):
                    for rec in records:
                        log.append(rec)
                        done[game_key(rec)] = rec
                    played += len(records)
                    bar.update(len(records))
            finally:
                log.close()
    finally:
        bar.close()
    seconds = time.perf_counter() - start

    games = [done[k] for k in keys]
    # Canonical order on disk too, so the log of a finished run is byte-identical whatever
    # the number of workers (written to a temp file, then renamed: never half a log).
    write_atomic(games_path, "".join(json.dumps(rec, separators=(",", ":")) + "\n"
                                     for rec in games))
    return TournamentRun(config, games, played, seconds, workers, len(checks) + len(rest),
                         len(lines), estimate)
