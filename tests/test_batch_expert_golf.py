"""Golf's expectations in the batched expert (:mod:`agents.batch_expert`) are numpy's, bit
for bit.

The Python expert compares expected final values (``agents.knowledge.golf_choices``) that
are numpy means over every way the face-down cards may lie; two choices can be worth
nearly the same, so the batched expert replays numpy's pairwise summation term by term
instead of summing in its own order, or, over a table of half points (golf's), whose sums
are exact in any order, sums each set of cards once. These tests compare the numbers themselves, over
face-up cards from none to three and unseen sets from one card to the whole pack, where the
decision test sees only the choices they lead to.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.batch_expert import (
    _SEQ_TRIPLES,
    _golf_expected,
    _golf_stock,
    _half_points,
    _pairwise,
)
from agents.knowledge import _golf_array, golf_expected
from agents.knowledge import _golf_stock as golf_stock
from scat_env import Rules

RULES = Rules.preset("golf")
T = np.asarray(_golf_array(RULES)).reshape(-1)


def _scratch(unseen: np.ndarray) -> tuple[np.ndarray, ...]:
    """One game's rows: the unseen cards, then the block, position and per-card buffers."""
    u = np.zeros((1, 52), np.int64)
    u[0, :len(unseen)] = unseen
    return u, np.empty((1, 128)), np.zeros((1, 3), np.int64), np.empty((1, 52))


def _position(rng: np.random.Generator, up: int, m: int) -> tuple[list[int], np.ndarray]:
    """``up`` face-up cards and ``m`` unseen cards (ascending, as card counting lists them)
    drawn from the pack without overlap."""
    cards = rng.permutation(52)
    return [int(c) for c in cards[:up]], np.sort(cards[up:up + m])


SIZES = [1, 2, 3, 4, 9, 12, 17, 30, 44, 49]


@pytest.mark.parametrize("halves", [True, False], ids=["half-point sums", "pairwise replay"])
@pytest.mark.parametrize("up", [0, 1, 2, 3])
def test_golf_expected_values_are_numpys_to_the_last_bit(up, halves):
    rng = np.random.default_rng(up)
    for m in SIZES:
        cards, unseen = _position(rng, up, m)
        u, buf, it, _ = _scratch(unseen)
        p = [*cards, -1, -1, -1][:3]
        mine = _golf_expected(p[0], p[1], p[2], up, T, u, m, buf, it, 0, halves)
        assert mine == golf_expected(cards, unseen, _golf_array(RULES)), (up, m)


@pytest.mark.parametrize("halves", [True, False], ids=["half-point sums", "pairwise replay"])
@pytest.mark.parametrize("up", [0, 1, 2])
def test_a_stock_draws_expected_value_is_numpys_to_the_last_bit(up, halves):
    rng = np.random.default_rng(10 + up)
    for m in SIZES:
        cards, unseen = _position(rng, up, m)
        u, buf, it, vals = _scratch(unseen)
        p = [*cards, -1, -1][:2]
        turn = golf_expected(cards, unseen, _golf_array(RULES))
        mine = _golf_stock(p[0], p[1], up, turn, T, u, m, vals, buf, it, 0, halves)
        assert mine == golf_stock(cards, unseen, _golf_array(RULES), turn), (up, m)


def test_pairwise_sums_split_as_numpys_do():
    """A triple sum of 49 unseen cards (110,544 terms) is summed in numpy's halves. Golf's
    values are multiples of 0.5, whose sums are exact in any order, but a scoring with
    finer values (the poker tie-break's fractions) is not: over such a table, summing in
    order gives other last bits, numpy's halves the same ones."""
    rng = np.random.default_rng(7)
    _, unseen = _position(rng, 0, 49)
    u, buf, it, _ = _scratch(unseen)
    fine = rng.random(52 ** 3) * 41
    t = fine.reshape(52, 52, 52)
    terms = np.array([t[a, b, c] for a in unseen for b in unseen for c in unseen
                      if a != b and a != c and b != c])
    it[0] = (0, 1, 2)
    total = _pairwise(_SEQ_TRIPLES, len(terms), 0, 0, 0, fine, u, 49, buf, it, 0)
    assert total == np.sum(terms)
    assert total != sum(terms.tolist())  # the order matters: a plain sum is not numpy's


def test_only_a_table_of_half_points_in_any_order_is_summed_by_sets():
    """Golf's values are half points, the same in any order of the cards; the poker
    tie-break's fractions are not half points, so their sums keep numpy's order."""
    assert _half_points(T)
    jacobs = np.asarray(_golf_array(Rules.preset("french_canadian_jacobs"))).reshape(-1)
    assert not _half_points(jacobs)
