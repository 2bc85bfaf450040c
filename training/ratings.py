"""Confidence intervals and OpenSkill ratings for tournament results.

Why cluster-robust intervals: a duplicate tournament replays each deal with the agents
permuted over the seats, so the games of one deal are correlated (they share every shuffle).
Treating them as independent (a plain Wilson interval) would claim more precision than the
data has. Every statistic here is a ratio ``sum(numerators) / sum(denominators)`` over
games; :func:`cluster_ratio_ci` groups the games by deal and uses the standard
cluster-robust (sandwich / delta-method) variance of a ratio estimator, so the interval is
honest whatever the correlation inside a deal. Proportions (win rate, knock rate...) use
:func:`cluster_wilson_ci`, a Wilson interval on the design-effect-adjusted sample size, so
they stay sensible near 0 and 1; :func:`wilson_ci` (independent games) is kept for
comparison.

Ratings: OpenSkill's Plackett-Luce model, one update per game with the game's elimination
order as ranks, applied in a fixed (canonical) game order so the table is reproducible.
OpenSkill is an optional extra (``ratings``), imported only when ratings are computed: without
it :func:`openskill_ratings` raises :class:`ExtraMissing` with :data:`RATINGS_MISSING`, and a
report leaves the ratings out and says so in that one line.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence

Z95 = 1.959963984540054  # two-sided 95% normal quantile

#: What a report says, in one line, where the ratings would be when OpenSkill is missing.
RATINGS_MISSING = "ratings need the ratings extra: pip install 'scat-env[ratings]'"


class ExtraMissing(ImportError):
    """An optional extra that a result needs is not installed; the message is the one line
    that says which and how to install it."""


def _plackett_luce() -> type:
    """OpenSkill's Plackett-Luce model, or :class:`ExtraMissing` (:data:`RATINGS_MISSING`)."""
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        raise ExtraMissing(RATINGS_MISSING) from None
    return PlackettLuce


def wilson_ci(successes: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (independent trials)."""
    if trials <= 0:
        return (math.nan, math.nan)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def _cluster_variance(clusters: Iterable[tuple[float, float]]) -> tuple[float, float, float]:
    """``(r, var, n)``: the ratio ``r = sum(y) / sum(m)``, its cluster-robust variance and
    ``n = sum(m)``, from one ``(y_i, m_i)`` per cluster (here: per deal, all its games and
    seatings summed). The variance is the delta-method one for a ratio estimator,
    ``k/(k-1) * sum((y_i - r m_i)^2) / n^2``, valid for any correlation inside a cluster and
    equal to the binomial variance when clusters are single independent trials. ``r`` is NaN
    when nothing was observed, ``var`` NaN with fewer than two clusters."""
    pairs = [(float(y), float(m)) for y, m in clusters if m > 0]
    n = sum(m for _, m in pairs)
    if not pairs or n <= 0:
        return (math.nan, math.nan, 0.0)
    r = sum(y for y, _ in pairs) / n
    k = len(pairs)
    if k < 2:
        return (r, math.nan, n)
    ss = sum((y - r * m) ** 2 for y, m in pairs)
    return (r, k / (k - 1) * ss / (n * n), n)


def cluster_ratio_ci(
    clusters: Iterable[tuple[float, float]],
    z: float = Z95,
    bounds: tuple[float, float] | None = None,
) -> tuple[float, float, float]:
    """Estimate and cluster-robust 95% interval of ``sum(y) / sum(m)`` (a normal interval on
    the variance of :func:`_cluster_variance`). Returns ``(estimate, low, high)``; NaNs when
    nothing was observed. ``bounds`` clips the interval (e.g. ``(0, 1)`` for a rate).
    """
    r, var, _ = _cluster_variance(clusters)
    if math.isnan(r) or math.isnan(var):
        return (r, math.nan, math.nan)
    se = math.sqrt(var)
    low, high = r - z * se, r + z * se
    if bounds is not None:
        low, high = max(bounds[0], low), min(bounds[1], high)
    return (r, low, high)


def cluster_wilson_ci(
    clusters: Iterable[tuple[float, float]], z: float = Z95
) -> tuple[float, float, float]:
    """Estimate and 95% interval of a proportion observed in correlated clusters.

    A Wilson interval on the Kish effective sample size ``n / deff``, where the design
    effect ``deff`` is the cluster-robust variance (:func:`_cluster_variance`) over the
    binomial one. It keeps Wilson's good behaviour near 0 and 1 (a plain normal interval
    collapses to zero width when an agent never wins), and it credits the duplicate design
    when the deals make results *less* variable than independent games (``deff < 1``).
    When the variance cannot be estimated (``p`` is 0 or 1, or a single cluster) ``deff`` is
    taken as 1, i.e. the plain Wilson interval.
    """
    p, var, n = _cluster_variance(clusters)
    if math.isnan(p):
        return (math.nan, math.nan, math.nan)
    deff = 1.0
    if not math.isnan(var) and 0 < p < 1:
        deff = max(var / (p * (1 - p) / n), 1e-9)
    low, high = wilson_ci(p * n / deff, n / deff, z)
    return (p, low, high)


def cluster_sums(
    items: Iterable[tuple[Hashable, float, float]],
) -> list[tuple[float, float]]:
    """Sum ``(cluster, y, m)`` items per cluster, in a deterministic (sorted) order."""
    acc: dict[Hashable, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for key, y, m in items:
        slot = acc[key]
        slot[0] += y
        slot[1] += m
    return [tuple(acc[k]) for k in sorted(acc, key=repr)]  # type: ignore[misc]


def places_from_results(
    num_players: int,
    eliminated_by_hand: Sequence[Sequence[int]],
    lives_at_end: Sequence[int],
) -> list[int]:
    """Finishing place of every seat (1 = best; equal places for ties).

    A seat still in at the end ranks above every eliminated seat; seats knocked out later
    rank above those knocked out earlier; seats out in the same hand tie. Among seats
    still in (a single hand, or a game cut off by the turn cap) more lives left is better.
    """
    out_at = [math.inf] * num_players
    for h, seats in enumerate(eliminated_by_hand):
        for s in seats:
            out_at[s] = h
    keys = [(out_at[s], lives_at_end[s]) for s in range(num_players)]
    return [1 + sum(1 for other in keys if other > keys[s]) for s in range(num_players)]


def openskill_ratings(
    games: Iterable[tuple[Sequence[str], Sequence[int]]],
) -> dict[str, dict[str, float]]:
    """Plackett-Luce ratings from ``(seat_specs, places)`` per game, in the given order.

    Only games whose seats hold distinct specs are rated: with one spec in several seats
    (a lineup such as ``expert`` against two ``greedy``) a single rating would have to be
    updated as if it were several independent players, which biases it; such tournaments
    are judged by their win rates and places instead. Returns
    ``{spec: {"mu", "sigma", "ordinal", "games"}}`` (ordinal = mu - 3 sigma) for the specs
    that took part in at least one rated game. :class:`ExtraMissing` without OpenSkill.
    """
    model = _plackett_luce()()
    ratings: dict[str, object] = {}
    counts: dict[str, int] = defaultdict(int)
    for specs, places in games:
        if len(set(specs)) < len(specs):
            continue
        for spec in specs:
            if spec not in ratings:
                ratings[spec] = model.rating(name=spec)
        new = model.rate([[ratings[s]] for s in specs], ranks=list(places))
        for spec, team in zip(specs, new, strict=True):
            ratings[spec] = team[0]
            counts[spec] += 1
    return {
        spec: {
            "mu": r.mu,  # type: ignore[attr-defined]
            "sigma": r.sigma,  # type: ignore[attr-defined]
            "ordinal": r.mu - 3 * r.sigma,  # type: ignore[attr-defined]
            "games": counts[spec],
        }
        for spec, r in sorted(ratings.items())
    }
