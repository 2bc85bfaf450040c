"""The batched trainer's rollouts on Ray workers (``trainer: batch`` with ``ray_workers: N``).

One trainer, two places to step its games: :func:`training.batch_ppo.train` builds the
network, does every PPO update and writes the run folder on the machine that runs it (the
driver); only the rollouts move. Each table's games are cut into ``rollout_shards`` shards
(:class:`training.batch_ppo.Shard`, each with seeds and a sampling generator of its own);
``ray_workers`` Ray actors host them, shard ``i`` on worker ``i % ray_workers``. Every update
the driver puts the live and snapshot weights in Ray's object store once, each worker steps
its shards with them and sends back their batches (GAE done there), and the driver
concatenates them in shard order. The samples thus depend on the config and the shard count,
not on how many workers host the shards: 1 and 2 workers give the same first rollout and
the same update (``tests/test_batch_ray.py``); an in-process run of the same shards differs
only by float rounding (its forward passes use ``torch_threads``, a worker's one thread).

A worker that dies (its process killed, its node lost) is replaced by a new actor that hosts
the same shards from fresh games: new deals from seeds that also count the restart, so a
restarted shard never replays the games it already played. The update waits for the new
worker's rollout; nothing the learner holds is lost. More than :data:`MAX_RESTARTS` deaths in
one update stop the run with one line (``ValueError``).

Where Ray runs (:func:`start_ray`): ``ray_address: null`` starts a Ray instance of the
run's own on this machine (never a cluster ``ray start`` left here; ``auto`` joins that
one), ``HOST:PORT`` joins a cluster, checked to answer first; a process already connected
to Ray uses that connection. docs/SCALING.md has a cluster recipe and measured speeds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .config import BatchPPOConfig

#: Workers replaced within one update before the run stops: a worker that dies again at once
#: (a node out of memory, a missing dependency) would otherwise be restarted for ever.
MAX_RESTARTS = 3


def start_ray(cfg: BatchPPOConfig) -> bool:
    """Connect to ``cfg.ray_address`` or start a Ray instance of the run's own, a CPU slot
    per rollout worker (:func:`training.tournament.ray_backend.start_training_ray`, as the
    RLlib trainer does); True when this call connected."""
    from .tournament.ray_backend import start_training_ray

    return start_training_ray(cfg.ray_address, cfg.ray_workers, "ray_workers")


class RolloutWorker:
    """A Ray actor's state: some shards, their handoff and a copy of the network (and the
    snapshot) that takes the driver's weights before every rollout."""

    def __init__(self, cfg: BatchPPOConfig, shards: list[int], pieces: tuple[str, ...],
                 restart: int) -> None:
        import numba

        from .batch_ppo import CompactNet, Shard, handoff_for

        torch.set_num_threads(1)  # one CPU slot per worker
        numba.set_num_threads(min(cfg.numba_threads or 1, numba.config.NUMBA_NUM_THREADS))
        self.cfg = cfg
        self.handoff = handoff_for(cfg)
        self.shards = {i: Shard(cfg, i, pieces, None, restart) for i in shards}
        self.net = CompactNet(cfg.hidden, cfg.layers, advice=cfg.expert_advice, pieces=pieces)
        self.snapshot = CompactNet(cfg.hidden, cfg.layers, advice=cfg.expert_advice,
                                   pieces=pieces)

    def ready(self) -> bool:
        """Answers once the actor is built (its imports and shards), so start-up is not
        counted as the first rollout's time and a worker that cannot start fails at once."""
        return True

    def collect(self, weights: tuple[dict[str, np.ndarray], dict[str, np.ndarray]],
                hand_reward: float) -> dict[int, list[tuple[torch.Tensor, ...]]]:
        """One rollout of each hosted shard with the driver's (live, snapshot) weights."""
        for net, state in zip((self.net, self.snapshot), weights, strict=True):
            net.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        return {i: shard.collect(self.net, self.snapshot, self.cfg, hand_reward, self.handoff)
                for i, shard in self.shards.items()}


def _weights(net: torch.nn.Module) -> dict[str, np.ndarray]:
    """A network's state as numpy arrays (what travels to the workers)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


class RayRollouts:
    """The run's shards on ``cfg.ray_workers`` Ray actors (module docstring); the same
    ``collect`` as :class:`training.batch_ppo.LocalRollouts`."""

    def __init__(self, cfg: BatchPPOConfig, pieces: tuple[str, ...]) -> None:
        self.cfg, self.pieces = cfg, pieces
        self.workers = cfg.ray_workers
        self.restarts = 0
        self.started = start_ray(cfg)
        import ray

        self._ray = ray
        self._actor = ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
        self.hosted = [list(range(k, cfg.rollout_shards, self.workers))
                       for k in range(self.workers)]
        self.slot_restarts = [0] * self.workers
        try:
            self.actors = [self._start(k) for k in range(self.workers)]
            self._get([actor.ready.remote() for actor in self.actors])
        except BaseException:
            self.close()
            raise

    def _get(self, refs: Any) -> Any:
        """``ray.get``, with a worker that lacks a module reported in one line
        (:func:`training.tournament.ray_backend.missing_on_worker`)."""
        from .tournament.ray_backend import missing_on_worker

        try:
            return self._ray.get(refs)
        except (self._ray.exceptions.RayTaskError, self._ray.exceptions.RayActorError) as exc:
            missing = missing_on_worker(exc)
            if missing is None:
                raise
            raise missing from None

    def _start(self, slot: int) -> Any:
        """A new actor for worker ``slot``'s shards (fresh games after a restart)."""
        return self._actor.remote(self.cfg, self.hosted[slot], self.pieces,
                                  self.slot_restarts[slot])

    def collect(self, net: torch.nn.Module, snapshot: torch.nn.Module, hand_reward: float
                ) -> list[tuple[torch.Tensor, ...]]:
        """Every shard's batches, in shard order, whichever worker hosts them; a worker that
        died is replaced and its shards collected again from fresh games."""
        ray = self._ray
        weights = ray.put((_weights(net), _weights(snapshot)))
        todo = list(range(self.workers))
        got: dict[int, list[tuple[torch.Tensor, ...]]] = {}
        restarts = 0
        while todo:
            refs = {slot: self.actors[slot].collect.remote(weights, hand_reward)
                    for slot in todo}
            todo = []
            for slot, ref in refs.items():
                try:
                    got.update(self._get(ref))
                except ray.exceptions.RayActorError as exc:
                    restarts += 1
                    if restarts > MAX_RESTARTS:
                        raise ValueError(
                            f"rollout workers died {restarts} times in one update (a node "
                            f"short of memory or CPU slots?); the last: {_first_line(exc)}"
                        ) from None
                    self._replace(slot)
                    todo.append(slot)
        return [b for i in range(self.cfg.rollout_shards) for b in got[i]]

    def _replace(self, slot: int) -> None:
        """A new actor in place of worker ``slot`` (killed, or its node lost)."""
        self.restarts += 1
        self.slot_restarts[slot] += 1
        try:
            self._ray.kill(self.actors[slot])
        except Exception:  # already gone
            pass
        self.actors[slot] = self._start(slot)

    def close(self) -> None:
        """Stop the workers, and the Ray instance or connection the run opened."""
        for actor in getattr(self, "actors", []):
            try:
                self._ray.kill(actor)
            except Exception:  # already gone
                pass
        if self.started:
            self._ray.shutdown()


def _first_line(exc: BaseException) -> str:
    """An exception's first line (a remote one's message is a whole traceback)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
