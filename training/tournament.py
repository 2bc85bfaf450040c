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
``games.jsonl`` (one flushed line per game) as they complete, so an interrupted run loses at
most the games in flight; ``resume=True`` plays only the missing keys, ignoring a torn last
line. When all games are in, the file is rewritten in canonical key order.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import multiprocessing as mp
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.match import play_game
from agents.registry import make_agent
from scat_env import DEFAULT_MAX_TURNS, Rules
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS

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


def _init_worker(config: TournamentConfig, ignore_sigint: bool = True) -> None:
    """Pool initializer: workers leave Ctrl-C to the parent, which stops them cleanly."""
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


# -- the JSONL log -------------------------------------------------------------------------
def game_key(record: dict[str, Any]) -> tuple[int, int, int]:
    return (record["table"], record["deal"], record["seating"])


def read_games(path: Path, repair: bool = False) -> list[dict[str, Any]]:
    """Game records of a JSONL log. A torn last line (the run was killed mid-write) is
    ignored, and with ``repair=True`` cut off so appending continues cleanly; a bad line
    anywhere else means the file is not ours or was edited: refuse, naming the line."""
    if not path.exists():
        return []
    data = path.read_bytes()
    records = []
    good_end = 0  # bytes up to the end of the last complete line
    lines = data.split(b"\n")
    # Every complete line ends with a newline, so the last piece is either empty or torn
    # (even if it parses: the line was cut just before its newline); that game is replayed.
    for i, line in enumerate(lines[:-1]):
        if line.strip():
            try:
                rec = json.loads(line)
                if not isinstance(rec, dict) or "table" not in rec:
                    raise ValueError("not a game record")
            except ValueError:
                if i == len(lines) - 2 and not lines[-1]:
                    break  # the last line is torn inside (a crash while writing)
                raise ValueError(f"{path}:{i + 1}: corrupt game record; not resuming") from None
            records.append(rec)
        good_end += len(line) + 1
    if repair and good_end < len(data):
        with open(path, "r+b") as f:
            f.truncate(good_end)
    return records


def _write_json(path: Path, obj: Any) -> None:
    """Write atomically (temp file + rename): a reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# -- running -------------------------------------------------------------------------------
@dataclass
class TournamentRun:
    """What :func:`run_tournament` returns: the config, every game record in canonical
    order, and how long the games played in this call took."""

    config: TournamentConfig
    games: list[dict[str, Any]]
    played_now: int
    seconds: float
    workers: int

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
) -> TournamentRun:
    """Play every game of ``config`` not already in ``out_dir/games.jsonl``.

    ``workers=None`` uses every core; ``workers=1`` plays in this process (no pool).
    Raises ``ValueError`` when ``out_dir`` holds another tournament, or holds games and
    neither ``resume`` nor ``overwrite`` was asked for (nothing is ever deleted silently).
    """
    config.check_agents()
    with exclusive_folder(out_dir, "tournament") as out:
        return _run_locked(config, out, workers=workers, resume=resume, overwrite=overwrite,
                           progress=progress, chunk_games=chunk_games)


def _run_locked(
    config: TournamentConfig,
    out: Path,
    *,
    workers: int | None,
    resume: bool,
    overwrite: bool,
    progress: bool,
    chunk_games: int | None,
) -> TournamentRun:
    """:func:`run_tournament`'s work, with ``out`` held by this process."""
    games_path = out / GAMES_FILE
    config_path = out / CONFIG_FILE
    wanted = config.to_dict()
    if overwrite:
        games_path.unlink(missing_ok=True)
        config_path.unlink(missing_ok=True)
    existing: list[dict[str, Any]] = []
    if games_path.exists() and games_path.stat().st_size > 0:
        if not resume:
            raise ValueError(
                f"{games_path} already holds games: pass --resume to continue that run, "
                "--overwrite to start again, or another --out"
            )
        if config_path.exists():
            old = json.loads(config_path.read_text(encoding="utf-8"))
            if old != wanted:
                diff = sorted(k for k in set(old) | set(wanted) if old.get(k) != wanted.get(k))
                raise ValueError(
                    f"{out} holds a different tournament (differs in: {', '.join(diff)}); "
                    "use another --out"
                )
        existing = read_games(games_path, repair=True)
    _write_json(config_path, wanted)

    keys = config.keys()
    valid = set(keys)
    done: dict[tuple[int, int, int], dict[str, Any]] = {}
    for rec in existing:
        k = game_key(rec)
        if k not in valid:
            raise ValueError(f"{games_path} holds game {k} that this tournament does not play")
        done[k] = rec
    todo = [k for k in keys if k not in done]

    workers = max(1, workers if workers is not None else (os.cpu_count() or 1))
    workers = min(workers, max(1, len(todo)))
    if chunk_games is None:
        # Big enough to amortise the pool's overhead, small enough that Ctrl-C loses little
        # and the progress bar moves.
        chunk_games = max(1, min(64, len(todo) // (workers * 8) or 1))
    chunks = [todo[i:i + chunk_games] for i in range(0, len(todo), chunk_games)]

    from tqdm import tqdm

    bar = tqdm(
        total=len(keys), initial=len(done), unit="game", file=sys.stderr, dynamic_ncols=True,
        disable=not progress or not sys.stderr.isatty(), desc="tournament",
    )
    start = time.perf_counter()
    played = 0
    try:
        with open(games_path, "a", encoding="utf-8") as log:
            def record_all(records: list[dict[str, Any]]) -> None:
                nonlocal played
                for rec in records:
                    log.write(json.dumps(rec, separators=(",", ":")) + "\n")
                    log.flush()
                    done[game_key(rec)] = rec
                played += len(records)
                bar.update(len(records))

            if workers == 1:
                _init_worker(config, ignore_sigint=False)
                for chunk in chunks:
                    record_all(_play_chunk(chunk))
            else:
                ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
                pool = ctx.Pool(workers, initializer=_init_worker, initargs=(config,))
                try:
                    for records in pool.imap_unordered(_play_chunk, chunks):
                        record_all(records)
                    pool.close()
                except BaseException:
                    pool.terminate()
                    raise
                finally:
                    pool.join()
    finally:
        bar.close()
    seconds = time.perf_counter() - start

    games = [done[k] for k in keys]
    # Canonical order on disk too, so the log of a finished run is byte-identical whatever
    # the number of workers (written to a temp file, then renamed: never half a log).
    tmp = games_path.with_name(GAMES_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for rec in games:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    os.replace(tmp, games_path)
    return TournamentRun(config, games, played, seconds, workers)
