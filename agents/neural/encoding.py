"""The padded policy input: one vector layout for every table size up to ``max_players``.

Why padding: :class:`~scat_env.observation.ObservationEncoder` sizes the vector by the
number of players (per-opponent known cards, per-seat lives...). One policy for every table
size needs one size, so :class:`PaddedEncoder` lays an ``n``-player observation into the
``max_players`` layout, piece by piece (:data:`scat_env.observation.PIECES`): a piece of
one unit stays as it is, a per-seat or per-opponent piece fills its first units and the
missing seats stay zero. A missing seat then looks exactly like an opponent who is out of
the game (lives 0, not active, no known cards), which is what it is for play: turn order
skips it. The default ``max_players`` is 6 (observation 556, plus the 52 ``discard_values``
below); larger tables raise ValueError.

A family of rules that adds pieces to the observation (points in a race to points, the
face-down slots of golf: :func:`scat_env.observation.extra_pieces`) has them padded to
``max_players`` seats the same way and appended at the very end of the input, after the
advice block: every offset the network's skip terms and the symmetry averaging read stays
where it is in every family, and a policy of the lives game reads exactly the input it
always did. A policy file names the pieces it reads (``arch["extra"]``), so a policy is
refused rules whose observation it does not know.

The train/serve switch (:func:`policy_view`) lives here too, next to the encoding it feeds.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from agents.expert import ADVICE_SIZE, ExpertAgent
from agents.knowledge import golf_choices
from scat_env import active_view
from scat_env.actions import CORE_ACTIONS
from scat_env.observation import (
    GOLF_PIECES,
    PIECES,
    POINT_SCALE,
    POINTS_PIECES,
    ObservationEncoder,
    Piece,
    extra_pieces,
    layout,
    observation_size,
    observed_values,
)
from scat_env.rules import Rules
from scat_env.view import PlayerView

DEFAULT_MAX_PLAYERS = 6

#: Extra piece appended after the padded observation: ``discard_values``, per card of the
#: hand in the discard phase, the value of the three cards left if I discard it (/41; 0 for
#: the card taken from the pile, which may not be discarded). The engine's encoder gives
#: the best value only; this says what every discard costs, the question the discard phase
#: asks, so the network need not learn the scoring table from one-hots.
EXTRA_SIZE = 52


def policy_view(view: PlayerView, active_only: bool) -> PlayerView:
    """The view a trained policy reads at play time: the one place where play and training
    may differ.

    Training encodes the whole table (players who are out included, as zero lives and not
    active). At play time, with ``active_only`` (the default of ``sb3:`` agents on this
    observation), a seat still in reads :func:`scat_env.active_view` instead: the smaller
    game among the players still in, exactly as a real game of that size looks.
    ``sb3:PATH:full`` turns it off and plays as trained.

    Why: a policy trained on every table size has played far more real games of the
    smaller size than ends of larger games; paired on the same deals, reading the smaller
    game scored higher than ``:full`` at three and four players (``python -m
    training.paired`` on two ``training.evaluate`` runs of the same seed).
    """
    if active_only and view.active[view.seat]:
        return active_view(view)
    return view


def padding_index(num_players: int, max_players: int) -> np.ndarray:
    """Positions in the ``max_players`` layout of each entry of the ``num_players`` vector."""
    if not 2 <= num_players <= max_players:
        raise ValueError(
            f"this policy plays 2..{max_players} players (observation padded to "
            f"{max_players} seats), got {num_players}"
        )
    return _padding_index(num_players, max_players)


@cache
def _padding_index(num_players: int, max_players: int) -> np.ndarray:
    big = layout(max_players)
    index = np.concatenate([np.arange(big[p.name].start, big[p.name].start + p.size(num_players))
                            for p in PIECES])
    index.flags.writeable = False
    return index


#: Every piece a family of rules may add, by name (what ``arch["extra"]`` lists).
EXTRA_PIECES: dict[str, Piece] = {p.name: p for p in POINTS_PIECES + GOLF_PIECES}
#: The extra pieces of each family of rules: the lives game, a race to points, golf.
FAMILY_PIECES: tuple[tuple[str, ...], ...] = (
    (), tuple(p.name for p in POINTS_PIECES), tuple(p.name for p in GOLF_PIECES))


#: Golf's choices, the last entries of a golf policy's input: the expected final value (/41)
#: of each choice open to me (:func:`agents.knowledge.golf_choices`: the face-down cards that
#: stay down counted as random unseen cards), 0 where it is closed. Why: a golf choice is
#: worth what it does to a hand scored by suit or by rank, a sum over the unseen cards that
#: a network learns slowly from one-hots; a short run without these inputs learned nothing
#: (it drew and kept every stock card: no better than ``random``; ``docs/TRAINING.md``).
GOLF_CHOICES = ("take", "stock", "place", "turn")


def choice_size(extra: tuple[Piece, ...]) -> int:
    """Entries of :data:`GOLF_CHOICES` in the input of a policy reading ``extra`` (golf's
    face-down slots mark the golf family)."""
    return len(GOLF_CHOICES) if any(p.name == "face_down" for p in extra) else 0


def extra_names(rules: Rules) -> tuple[str, ...]:
    """The names of the pieces ``rules`` add to the observation (empty for a lives game)."""
    return tuple(p.name for p in extra_pieces(rules))


def pieces_named(names: tuple[str, ...] | list[str]) -> tuple[Piece, ...]:
    """The extra pieces of a policy file's ``arch["extra"]``, in order; ValueError names an
    unknown one."""
    unknown = [n for n in names if n not in EXTRA_PIECES]
    if unknown:
        raise ValueError(f"unknown observation piece(s) {unknown}; this scat-env knows "
                         f"{sorted(EXTRA_PIECES)}")
    return tuple(EXTRA_PIECES[n] for n in names)


def extra_size(max_players: int, extra: tuple[Piece, ...]) -> int:
    """Entries of the extra pieces padded to ``max_players`` seats."""
    return sum(p.size(max_players) for p in extra)


def advice_offset(max_players: int) -> int:
    """Where the advice inputs start: after the padded observation and ``discard_values``."""
    return observation_size(max_players) + EXTRA_SIZE


def policy_observation_size(max_players: int, advice: bool = False,
                            extra: tuple[Piece, ...] = ()) -> int:
    """Size of the policy input: the padded observation plus :data:`EXTRA_SIZE`, plus
    :data:`~agents.expert.ADVICE_SIZE` expert-advice inputs when ``advice``, plus the
    ``extra`` pieces of the rules' family padded to ``max_players`` (and golf's
    :data:`GOLF_CHOICES`)."""
    return (advice_offset(max_players) + (ADVICE_SIZE if advice else 0)
            + extra_size(max_players, extra) + choice_size(extra))


def symmetry_layout(max_players: int, advice: bool = False) -> tuple[list[int], list[int]]:
    """``(card_blocks, suit_blocks)``: the offsets in the policy input of every 52-entry
    block indexed by card and every 4-entry block indexed by suit, for
    :class:`agents.symmetry.SymmetryAverage`, read from each piece's declared symmetry.
    Every other input is unchanged when the cards are renamed (lives, phase, hand value,
    the expert's probabilities...)."""
    cards: list[int] = []
    suits: list[int] = []
    spans = layout(max_players)
    for piece in PIECES:
        span = spans[piece.name]
        if piece.symmetry == "card":
            cards.extend(range(span.start, span.stop, piece.block))
        elif piece.symmetry == "suit":
            suits.extend(range(span.start, span.stop, piece.block))
    cards.append(observation_size(max_players))  # discard_values
    if advice:
        at = advice_offset(max_players)
        cards += [at, at + CORE_ACTIONS]  # the expert's action one-hot, its per-card scores
    return cards, suits


class PaddedEncoder:
    """Encodes views of any table size ``2..max_players`` into one fixed-size vector.

    With ``advice=True`` the vector ends with :meth:`agents.expert.ExpertAgent.advice`: the
    expert's move and the card-counting numbers behind it (exact stock-draw expectations
    over the unseen cards, the chance a knock leaves me lowest). A network must otherwise
    learn those sums from one-hots; given them, it starts from the expert's judgement and
    learns where to depart from it. They are computed from the view, so nothing hidden
    enters.
    """

    def __init__(self, rules: Rules, max_players: int = DEFAULT_MAX_PLAYERS,
                 advice: bool = False) -> None:
        self.rules = rules
        self.max_players = max_players
        self.base_size = observation_size(max_players)
        self.advice_at = advice_offset(max_players)
        self.extra = extra_pieces(rules)
        self.extra_at = policy_observation_size(max_players, advice)
        self.size = policy_observation_size(max_players, advice, self.extra)
        self.choices_at = (self.extra_at + extra_size(max_players, self.extra)
                           if choice_size(self.extra) else None)
        self._advisor = ExpertAgent() if advice else None
        self._table = observed_values(rules)
        self._encoders: dict[int, tuple[ObservationEncoder, np.ndarray]] = {}

    def _for(self, n: int) -> tuple[ObservationEncoder, np.ndarray]:
        entry = self._encoders.get(n)
        if entry is None:
            index = padding_index(n, self.max_players)
            if self.extra:  # the family's pieces, padded the same way, at the very end
                big = layout(self.max_players, self.extra)
                index = np.concatenate([index] + [
                    self.extra_at + np.arange(big[p.name].start, big[p.name].start + p.size(n))
                    for p in self.extra])
            entry = (ObservationEncoder(n, self.rules), index)
            self._encoders[n] = entry
        return entry

    def encode(self, view: PlayerView, out: np.ndarray | None = None) -> np.ndarray:
        enc, index = self._for(view.num_players)
        if out is None:
            out = np.zeros(self.size, dtype=np.float32)
        else:
            out[:] = 0.0
        out[index] = enc.encode(view)
        hand = view.hand
        if len(hand) == 4:
            t, base, taken = self._table, self.base_size, view.taken_card
            for c in hand:
                if c != taken:
                    a, b, d = (x for x in hand if x != c)
                    out[base + c] = t[a * 2704 + b * 52 + d] * POINT_SCALE
        if self._advisor is not None:
            self._advisor.advice(view, out[self.advice_at:self.extra_at])
        if self.choices_at is not None and view.phase in ("golf_draw", "golf_place"):
            est = golf_choices(view)
            at = self.choices_at
            for i, name in enumerate(GOLF_CHOICES):
                out[at + i] = est.get(name, 0.0) * POINT_SCALE
        return out
