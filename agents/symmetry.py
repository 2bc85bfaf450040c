"""Scat's card symmetries, and a policy averaged over them at play time.

Scat does not care what the suits are called: a hand's value is its best one-suit total,
and no rule names a suit. Under the rules without straight flushes it does not care which
ten-point rank is which either: 10, J, Q and K all count ten, and a three-of-a-kind rule
only asks that three ranks be equal, which a renaming of ranks keeps. So relabelling every
card of a position by one such renaming gives a position of exactly the same worth, and the
right play in it is the relabelled right play.

A trained network only approximately knows this: it learnt each relabelling from its own
samples, and its errors differ between them. Averaging its logits over several relabellings
of the same position (AlphaGo's averaging over board symmetries, here for cards) keeps what
all of them agree on and averages away part of what each one gets wrong, like an ensemble of
networks, but from one file and for the cost of one batched forward pass.

Every input of the policy (:class:`agents.neural.encoding.PaddedEncoder`) is either indexed by
card (the one-hot blocks, the discard values, the expert's per-card numbers and its discard),
indexed by suit (``suit_sums``), or unchanged by a relabelling (lives, phase, hand value,
the expert's probabilities...). So a relabelled observation is a gather of the original one,
and no view is re-encoded.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np

from scat_env.actions import NUM_ACTIONS
from scat_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from scat_env.rules import Rules

#: Rank indices of the four ten-point cards (10, J, Q, K): interchangeable unless straights
#: score, where their order matters.
TEN_POINT_RANKS = (8, 9, 10, 11)


def card_permutation(suits: tuple[int, ...], ranks: tuple[int, ...] = TEN_POINT_RANKS) -> np.ndarray:
    """``perm[c]``: card ``c`` renamed, its suit ``s`` becoming ``suits[s]`` and its
    ten-point rank ``TEN_POINT_RANKS[i]`` becoming ``ranks[i]`` (other ranks stay)."""
    if sorted(suits) != list(range(NUM_SUITS)):
        raise ValueError(f"not a permutation of the four suits: {suits!r}")
    if sorted(ranks) != sorted(TEN_POINT_RANKS):
        raise ValueError(f"not a permutation of the ten-point ranks {TEN_POINT_RANKS}: {ranks!r}")
    rank_map = list(range(NUM_RANKS))
    for old, new in zip(TEN_POINT_RANKS, ranks, strict=True):
        rank_map[old] = new
    return np.array([suits[c // NUM_RANKS] * NUM_RANKS + rank_map[c % NUM_RANKS]
                     for c in range(NUM_CARDS)], dtype=np.int64)


def relabellings(rules: Rules, count: int, seed: int = 0) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """``count`` distinct ``(suits, ranks)`` renamings that keep ``rules``' scoring, the
    identity first, the rest drawn with a fixed seed (so an agent plays the same way in
    every process). Ranks are renamed only where straights do not score."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"the number of relabellings must be a positive int, got {count!r}")
    suit_perms = list(itertools.permutations(range(NUM_SUITS)))
    rank_perms = ([TEN_POINT_RANKS] if rules.straight_flush
                  else list(itertools.permutations(TEN_POINT_RANKS)))
    group = [(s, r) for s in suit_perms for r in rank_perms]
    if count > len(group):
        raise ValueError(f"asked for {count} relabellings; these rules have {len(group)}")
    identity = (tuple(range(NUM_SUITS)), TEN_POINT_RANKS)
    rest = [g for g in group if g != identity]
    return [identity] + random.Random(seed).sample(rest, count - 1)


class SymmetryAverage:
    """Averages a policy's logits over relabellings of its input (module docstring).

    ``layout`` describes the policy input: ``(card_blocks, suit_blocks)``, the offsets of
    every 52-entry block indexed by card and every 4-entry block indexed by suit
    (:func:`agents.neural.encoding.symmetry_layout`); every other entry is left as it is.
    """

    def __init__(self, size: int, layout: tuple[list[int], list[int]],
                 perms: list[tuple[tuple[int, ...], tuple[int, ...]]]) -> None:
        card_blocks, suit_blocks = layout
        gathers, actions = [], []
        for suits, ranks in perms:
            perm = card_permutation(suits, ranks)
            # new[off + perm[c]] = old[off + c]: the gather reads old[off + inverse[j]].
            inverse = np.argsort(perm)
            suit_inverse = np.argsort(np.asarray(suits))
            g = np.arange(size, dtype=np.int64)
            for off in card_blocks:
                g[off:off + NUM_CARDS] = off + inverse
            for off in suit_blocks:
                g[off:off + NUM_SUITS] = off + suit_inverse
            gathers.append(g)
            # The relabelled table's logit for discarding perm[c] is the original's for c.
            a = np.arange(NUM_ACTIONS, dtype=np.int64)
            a[:NUM_CARDS] = perm
            actions.append(a)
        self.gather = np.stack(gathers)  # (k, size)
        self.actions = np.stack(actions)  # (k, NUM_ACTIONS)
        self._rows = np.arange(len(perms))[:, None]
        self._all = np.ones(NUM_ACTIONS, dtype=bool)

    def logits(self, policy: Any, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The mean of ``policy``'s logits over the relabelled observations, masked."""
        batch = obs[self.gather]
        out = policy.logits(batch, self._all)[self._rows, self.actions].mean(axis=0)
        return np.where(mask, out, np.float32(-1e9))
