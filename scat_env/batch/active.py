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

from typing import TYPE_CHECKING

import numpy as np

from .reference import C_KNOWN, observation_size, piece_starts

if TYPE_CHECKING:
    from scat_env.rules import Rules

IN, KNOCKED, DEALER = 1, 2, 4  # the flag bits of each relative seat


def players_in(obs: np.ndarray, num_players: int) -> np.ndarray:
    """How many players are still in, per row of compact observations [B, D] -> [B]."""
    n = num_players
    return (obs[:, 52 + n:52 + 2 * n] & IN).sum(axis=1)


def active_observations(obs: np.ndarray, num_players: int, players: int,
                        rules: Rules | None = None) -> np.ndarray:
    """Rows of ``num_players``-seat observations under ``rules`` that all have exactly
    ``players`` seats in (the observer among them) -> the ``players``-seat observations of
    the same positions [B, :func:`observation_size` (players, rules)] int8, as
    :func:`scat_env.active_view` would show them.

    The pieces some rules append (:func:`~scat_env.batch.reference.observation_pieces`)
    come along: the phase and a quiet 31 are the observer's own, the same at any size;
    points and golf's slots are per relative seat, so they are kept for the seats in, in
    the smaller game's order, as the lives are. Without ``rules``, the base observation."""
    n, k, B = num_players, players, obs.shape[0]
    width = observation_size(n, rules)
    if obs.ndim != 2 or obs.shape[1] != width:
        raise ValueError(f"observations of {n} seats are {width} wide, got shape "
                         f"{obs.shape}")
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
    out = np.empty((B, observation_size(k, rules)), np.int8)
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
    out[:, 52 + 2 * k:52 + 2 * k + 5] = obs[:, 52 + 2 * n:52 + 2 * n + 5]
    small = piece_starts(k, rules)
    for name, at in piece_starts(n, rules).items():
        to = small[name]
        if name == "phase":
            out[:, to:to + 2] = obs[:, at:at + 2]
        elif name == "quiet":
            out[:, to] = obs[:, at]
        elif name == "points":
            out[:, to:to + k] = np.take_along_axis(obs[:, at:at + n], order, axis=1)
        elif name == "slots":  # three per relative seat, in seat order
            slots = obs[:, at:at + 3 * n].reshape(B, n, 3)
            out[:, to:to + 3 * k] = np.take_along_axis(
                slots, order[:, :, None], axis=1).reshape(B, 3 * k)
        else:  # a piece this map does not know would be read as garbage: refuse it
            raise ValueError(f"active_observations: no smaller-game map for the {name!r} "
                             "piece")
    return out
