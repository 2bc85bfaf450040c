"""An imitation warm start: a library's policy first copies a batched baseline's moves.

Why: a network that starts uniform over the 67 actions knocks on a weak hand several turns in
a hundred, never wins a game against ``greedy``, and in a library's first minutes learns
little more than not to knock (the batched trainer's network avoids this with a built-in
greedy prior, :class:`training.batch_ppo.CompactNet`). A library's stock MLP has no such prior;
a few hundred thousand moves of the teacher's (``expert`` by default) give it one, and PPO
then improves on it against the same opponents. This is behaviour cloning, the standard warm
start (as in AlphaStar's supervised stage), done on the batched engine so it costs seconds.

:func:`demonstrations` is library-free: it plays the teacher in the learner's seat of a
:class:`~training.batch_learner.BatchLearnerEnv` and yields chunks of (observation, mask,
teacher's move); each library fits its own network to them with a masked cross-entropy
(``fit(obs, mask, action)``), so the policy it saves is the library's own, playable as its
agent spec without the teacher.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .batch_learner import BatchLearnerEnv


def demonstrations(core: BatchLearnerEnv, teacher: str, samples: int, chunk_steps: int = 8
                   ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Chunks of ``chunk_steps`` learner decisions in every game of ``core``, the teacher
    playing them: (obs [k, D] float32, mask [k, 67] bool, teacher's move [k] int64), about
    ``samples`` decisions in all. The env is reset first and left mid-game."""
    obs = core.reset()
    done = 0
    while done < samples:
        o, m, a = [], [], []
        for _ in range(chunk_steps):
            mask = core.action_masks()
            act = core.teacher_actions(teacher)
            o.append(obs)
            m.append(mask)
            a.append(act)
            obs = core.step(act).obs
        chunk = np.concatenate(o), np.concatenate(m), np.concatenate(a)
        done += len(chunk[2])
        yield chunk


def imitate(cores: list[BatchLearnerEnv], teacher: str, samples: int,
            fit: Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[float, float]],
            log: Callable[[str], object] = print) -> dict[str, float]:
    """Fit a policy to ``samples`` of the teacher's decisions, spread over ``cores`` (one
    per table size). ``fit`` takes one chunk, trains on it and returns (its mean
    cross-entropy, the share of the chunk's moves the policy's most likely move matched
    before that training): the second is a held-out agreement, each chunk being new games."""
    per = max(samples // len(cores), 1)
    streams = [demonstrations(c, teacher, per) for c in cores]
    loss, agree, seen, chunks = float("nan"), float("nan"), 0, 0
    while streams:
        for stream in list(streams):
            chunk = next(stream, None)
            if chunk is None:
                streams.remove(stream)
                continue
            loss, agree = fit(*chunk)
            seen += len(chunk[2])
            chunks += 1
            if chunks % 10 == 0:
                log(f"[imitate] {seen:,} of {teacher}'s decisions: loss {loss:.3f}, "
                    f"{agree:.1%} of new ones matched")
    return {"imitation_samples": seen, "imitation_loss": loss, "imitation_agreement": agree}


def mlp_fit(pi: Any, opt: Any, step: int, masked: float = -1e9
            ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[float, float]]:
    """:func:`imitate`'s ``fit`` for a torch module ``pi`` from observations to logits (the
    actor MLP of TorchRL's and RLlib's adapters): illegal moves' logits set to ``masked``,
    cross-entropy against the teacher's move, two passes over the chunk in minibatches of
    ``step`` with the optimizer ``opt``."""
    import torch

    def fit(obs: np.ndarray, mask: np.ndarray, act: np.ndarray) -> tuple[float, float]:
        o, m, a = torch.as_tensor(obs), torch.as_tensor(mask), torch.as_tensor(act)
        with torch.no_grad():
            agree = float((pi(o).masked_fill(~m, masked).argmax(1) == a).float().mean())
        loss = torch.zeros(())
        for _ in range(2):
            order = torch.randperm(len(a))
            for i in range(0, len(a), step):
                rows = order[i:i + step]
                logits = pi(o[rows]).masked_fill(~m[rows], masked)
                loss = torch.nn.functional.cross_entropy(logits, a[rows])
                opt.zero_grad()
                loss.backward()
                opt.step()
        return float(loss.detach()), agree

    return fit
