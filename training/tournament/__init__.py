"""Duplicate tournaments between agents: many games, every core, resumable, reproducible.

A tournament is a list of *tables* (a lineup, one agent spec per seat) played on duplicate
deals: every deal in every seating of every table, so the luck of the cards cancels. Each
game is a pure function of its key and the configuration, so the results are the same bytes
whatever the number of workers, the backend, or how often the run was interrupted and
resumed. One job per module:

- :mod:`.schedule`: the configuration, deal seeds, seatings and lineups
  (:class:`TournamentConfig`, :func:`deal_seed`, :func:`seatings_for`,
  :func:`population_tables`, :func:`parse_specs`);
- :mod:`.runner`: playing games on this machine, in this process or a pool of worker
  processes (:func:`play_key`);
- :mod:`.ray_backend`: the same chunks of games as Ray tasks on a cluster;
- :mod:`.logcheck`: the ``games.jsonl`` log, read back and checked as untrusted input on
  resume (:func:`read_games`, :class:`RecordCheck`, the ``VERIFY_*`` settings);
- :mod:`.run`: :func:`run_tournament`, the one code path over all of them: the folder's
  lock, the log, resume and verification.

``docs/TOURNAMENTS.md`` is the user's guide; ``scat tournament`` the command.
"""

from __future__ import annotations

from .logcheck import (
    CONFIG_FILE,
    GAMES_FILE,
    HAND_FIELDS,
    RECORD_FIELDS,
    VERIFY_FRACTION,
    VERIFY_MIN,
    VERIFY_MODES,
    VERIFY_SECONDS,
    RecordCheck,
    game_key,
    read_games,
)
from .ray_backend import RAY_MISSING, check_ray_address, init_ray, require_ray
from .run import BACKENDS, TournamentRun, lineup_win_rate, run_tournament
from .runner import play_key
from .schedule import (
    AUTO_MAX_PERMUTATIONS,
    SEATINGS,
    TournamentConfig,
    deal_seed,
    parse_specs,
    population_tables,
    seatings_for,
)

__all__ = [
    "AUTO_MAX_PERMUTATIONS", "BACKENDS", "CONFIG_FILE", "GAMES_FILE", "HAND_FIELDS",
    "RAY_MISSING", "RECORD_FIELDS", "SEATINGS", "VERIFY_FRACTION", "VERIFY_MIN", "VERIFY_MODES",
    "VERIFY_SECONDS", "RecordCheck", "TournamentConfig", "TournamentRun", "check_ray_address",
    "deal_seed", "game_key", "init_ray", "lineup_win_rate", "parse_specs", "play_key",
    "population_tables", "read_games", "require_ray", "run_tournament", "seatings_for",
]
