"""Playing a tournament's games on this machine: one game, a chunk, a pool of processes.

Each game is a pure function of its key and the configuration (:func:`play_key`): agents are
built from their spec strings and reseeded per game by :func:`agents.match.play_game`, so the
records do not depend on the number of workers or the order games finish in.

The pool. Workers start from a ``forkserver`` (``spawn`` where there is none), not a
``fork`` of the tournament process: a fork copies a process that runs the pool's own threads
and holds the run folder's lock, and such a copy can inherit a lock held mid-operation (a run
once hung for good in ``Pool.terminate``) or keep the folder locked after its parent was
killed. A worker gets everything it needs as arguments: the configuration (a plain, picklable
dataclass holding the rules' fields) and the agent specs it names, which it builds itself.
Shutting the pool down never waits forever (:func:`shut_down`).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from agents.base import Agent
from agents.match import play_game
from agents.registry import make_agent

from .schedule import TournamentConfig, deal_seed

#: Chunks of keys in, their records out, chunk by chunk in any order.
PlayChunks = Callable[[list[list[tuple[int, int, int]]]], Iterator[list[dict[str, Any]]]]

#: How long a pool's workers get to exit once their work is done, and how long terminating
#: them may take, before they are killed: only a stuck worker is ever that slow.
POOL_EXIT_SECONDS = 60.0

# -- playing games (in worker processes) ----------------------------------------------------
_WORKER: dict[str, Any] = {}


def _die_with_parent() -> None:
    """Linux: have the kernel kill this worker when its parent (the forkserver, which ends
    with the tournament process) dies, so that a tournament killed by ``kill -9`` or the
    out-of-memory killer leaves no worker playing on for nobody."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - no prctl: the pipe ends them later
        return
    if os.getppid() != parent:  # the parent died before the request was in place
        os._exit(1)


def _init_worker(config: TournamentConfig, ignore_sigint: bool = True,
                 die_with_parent: bool = False) -> None:
    """Pool initializer: workers leave Ctrl-C to the parent, which stops them cleanly, and
    die with it (:func:`_die_with_parent`). Everything a worker plays with is built here
    from ``config``, never inherited from the tournament process."""
    if die_with_parent:
        _die_with_parent()
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



# -- the local pool ------------------------------------------------------------------------
def pool_context() -> Any:
    """The multiprocessing context of the worker pool: ``forkserver`` where the platform has
    it, else ``spawn`` (see the module notes). The forkserver imports this module once, so a
    worker forked from it starts with the engine and the agents already imported."""
    if "forkserver" in mp.get_all_start_methods():
        context = mp.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        return context
    return mp.get_context("spawn")


def _in_thread(call: Callable[[], Any]) -> threading.Thread:
    thread = threading.Thread(target=call, name="tournament-pool-shutdown", daemon=True)
    thread.start()
    return thread


def shut_down(pool: Any, *, finished: bool, seconds: float = POOL_EXIT_SECONDS) -> None:
    """Shut ``pool`` down without ever waiting forever.

    ``finished`` (every task is done): close it and give the workers ``seconds`` to exit.
    Otherwise (an error, Ctrl-C), or when they have not exited by then: terminate them, and
    kill any worker still alive ``seconds`` later. Each wait is a join of a daemon thread, so
    a pool that hangs inside ``multiprocessing`` costs at most ``3 * seconds``."""
    if finished:
        pool.close()
        joining = _in_thread(pool.join)
        joining.join(seconds)
        if not joining.is_alive():
            return
    # The worker processes (Pool keeps them in _pool, not public but there since 2.6), taken
    # before terminate, which may hang before it reaches them.
    workers = list(getattr(pool, "_pool", ()))
    stopping = _in_thread(pool.terminate)
    stopping.join(seconds)
    if stopping.is_alive():
        for process in workers:
            if process.is_alive():
                process.kill()
        stopping.join(seconds)


@contextmanager
def local_player(
    config: TournamentConfig, workers: int | None, jobs: int
) -> Iterator[tuple[PlayChunks, int]]:
    """A function from chunks of keys to their records (in any order), and how many chunks
    it plays at once: in this process for one worker, else through a pool that lives as long
    as the context. ``jobs`` (games to play) caps the workers: a pool larger than the work
    only costs start-up."""
    workers = max(1, workers if workers is not None else (os.cpu_count() or 1))
    workers = min(workers, max(1, jobs))
    if workers == 1:
        _init_worker(config, ignore_sigint=False)
        yield (lambda chunks: map(_play_chunk, chunks)), 1
        return
    pool = pool_context().Pool(workers, initializer=_init_worker, initargs=(config, True, True))
    finished = False
    try:
        yield (lambda chunks: pool.imap_unordered(_play_chunk, chunks)), workers
        finished = True
    finally:
        shut_down(pool, finished=finished)
