"""Compact observations of the smaller game among the players still in, batched.

:func:`scat_env.active_view` turns a view of a table with players out into the view of the
same position as a game of the players still in (out seats dropped, the rest renumbered
clockwise). A policy trained at one table size plays the end of a larger game through it:
a ten-player game with two players left *is* a two-player game. This is the same map on
compact observations (:func:`scat_env.batch.reference.compact_observation`), for thousands
of rows at once, so a batched evaluation hands the end of its games to a specialist as the
``compact:`` player does from its view. Tested equal, row for row, to
``compact_observation(active_view(view))``.
"""

from __future__ import annotations

import numpy as np

from .reference import C_KNOWN, observation_size

IN, KNOCKED, DEALER = 1, 2, 4  # the flag bits of each relative seat


def players_in(obs: np.ndarray, num_players: int) -> np.ndarray:
    """How many players are still in, per row of compact observations [B, D] -> [B]."""
    n = num_players
    return (obs[:, 52 + n:52 + 2 * n] & IN).sum(axis=1)


def active_observations(obs: np.ndarray, num_players: int, players: int) -> np.ndarray:
    """Rows of ``num_players``-seat observations that all have exactly ``players`` seats
    in (the observer among them) -> the ``players``-seat observations of the same positions
    [B, 52 + 2 * players + 5] int8, as :func:`scat_env.active_view` would show them."""
    n, k, B = num_players, players, obs.shape[0]
    if obs.ndim != 2 or obs.shape[1] != observation_size(n):
        raise ValueError(f"observations of {n} seats are {observation_size(n)} wide, "
                         f"got shape {obs.shape}")
    flags = obs[:, 52 + n:52 + 2 * n]
    alive = (flags & IN).astype(bool)
    if B and ((alive.sum(axis=1) != k).any() or not alive[:, 0].all()):
        raise ValueError(f"every row must have exactly {k} players in, the observer one "
                         "of them")
    rows = np.arange(B)[:, None]
    # The relative seats still in, clockwise from the observer (relative seat 0).
    order = np.argsort(~alive, axis=1, kind="stable")[:, :k]
    new_seat = np.zeros((B, n), np.int64)
    new_seat[rows, order] = np.arange(k)
    out = np.empty((B, observation_size(k)), np.int8)
    codes = obs[:, :52]
    known = codes >= C_KNOWN  # held by opponent r = code - C_KNOWN + 1, who is still in
    r = np.where(known, codes.astype(np.int64) - C_KNOWN + 1, 0)
    out[:, :52] = np.where(known, C_KNOWN - 1 + np.take_along_axis(new_seat, r, axis=1),
                           codes)
    out[:, 52:52 + k] = np.take_along_axis(obs[:, 52:52 + n], order, axis=1)
    kept = np.take_along_axis(flags, order, axis=1) & (IN | KNOCKED)
    # A dealer who has just gone out: the nearest seat still in on its right deals, which
    # keeps the order of play (active_view's nearest_in).
    has_dealer = (flags & DEALER).any(axis=1)
    dealer = np.argmax(flags & DEALER, axis=1)
    for _ in range(n):
        out_now = ~alive[np.arange(B), dealer]
        if not out_now.any():
            break
        dealer = np.where(out_now, (dealer - 1) % n, dealer)
    at = np.flatnonzero(has_dealer)
    kept[at, new_seat[at, dealer[at]]] |= DEALER
    out[:, 52 + k:52 + 2 * k] = kept
    out[:, 52 + 2 * k:] = obs[:, 52 + 2 * n:]
    return out
