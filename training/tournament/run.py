"""Running a tournament into its folder: :func:`run_tournament`.

One code path whatever plays the games (this process, a local pool, Ray tasks): the folder's
lock, the log, resume and its verification, the canonical rewrite at the end. Finished games
are appended to ``games.jsonl`` as they complete; when all games are in, the file is
rewritten in canonical key order, so a finished run's log is byte-identical whatever the
number of workers, the backend or how often it was interrupted and resumed.

Nothing half-written. ``config.json``, the canonical log and every report file are written
to a unique temporary file and renamed; a line the disk refuses part of is cut off again;
temporary files a killed run left are removed by the next run in the folder (which holds the
folder's lock, :mod:`training.runlock`, so no writer of them is alive). An ``OSError`` (full
disk, read-only folder) thus leaves a folder that ``--resume`` continues.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..report import REPORT_FILES, stale_temp_files, write_all, write_atomic
from ..runlock import exclusive_folder
from .logcheck import (
    CONFIG_FILE,
    GAMES_FILE,
    VERIFY_MODES,
    check_replayed,
    cut_torn_line,
    game_key,
    logged_games,
    verify_rest,
    verify_sample,
)
from .runner import PlayChunks, local_player
from .schedule import TournamentConfig

#: Where games are played: ``local`` (this machine's processes) or ``ray`` (Ray tasks).
BACKENDS = ("local", "ray")


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
    ``backend="ray"`` plays the same chunks as Ray tasks (:mod:`.ray_backend`): on the
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
        from .ray_backend import require_ray

        require_ray()  # before the folder is touched
    elif ray_address is not None:
        raise ValueError("a Ray address needs the ray backend")
    config.check_agents()
    with exclusive_folder(out_dir, "tournament") as out:
        return _run_locked(config, out, workers=workers, resume=resume, overwrite=overwrite,
                           progress=progress, chunk_games=chunk_games, verify=verify,
                           backend=backend, ray_address=ray_address)


def lineup_win_rate(lineup: tuple[str, ...], games: int, seed: int,
                    out: str | Path) -> tuple[dict[str, Any], int]:
    """One lineup on duplicate deals, each deal played in every rotation of its seats (what
    ``scat tournament --field A,B,B --seating rotations`` plays): the first spec's win rate
    (``value``, ``ci95`` clustered by deal) and the games played, the games logged in
    ``out``. How the model card's level and search tables measure a cell."""
    from ..report import summarize

    config = TournamentConfig(tables=(tuple(lineup),), games=games, seed=seed,
                              seating="rotations")
    run = run_tournament(config, out, overwrite=True, progress=False)
    summary = summarize(config.to_dict(), run.games)
    return summary["agents"][lineup[0]]["win_rate"], summary["games"]


@contextmanager
def _game_player(
    config: TournamentConfig, workers: int | None, jobs: int, backend: str = "local",
    ray_address: str | None = None,
) -> Iterator[tuple[PlayChunks, int]]:
    """The backend's player (:func:`~training.tournament.runner.local_player` or
    :func:`~training.tournament.ray_backend.ray_player`): chunks of keys in, records out."""
    if backend == "ray":
        from .ray_backend import ray_player

        with ray_player(config, workers, jobs, ray_address) as player:
            yield player
        return
    with local_player(config, workers, jobs) as player:
        yield player


def _write_json(path: Path, obj: Any) -> None:
    """Write atomically (a unique temp file + rename): a reader never sees half a file."""
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


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
        lines, good_end = logged_games(config, out)

    keys = config.keys()
    logged = {game_key(rec): (number, rec) for number, rec in lines}
    done = {k: rec for k, (_, rec) in logged.items()}
    todo = [k for k in keys if k not in done]
    checks = [game_key(rec) for _, rec in verify_sample(lines, verify)]

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
                check_replayed(games_path, logged, records)
            rest, estimate = verify_rest(lines, checks, time.perf_counter() - began, verify)
            for records in play(_chunked(rest, chunk_games)):
                check_replayed(games_path, logged, records)
            if good_end is not None and good_end < games_path.stat().st_size:
                cut_torn_line(games_path, good_end)
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
