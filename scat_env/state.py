"""The full state of a game as a vector, for centralised critics (``env.state()``).

A centralised critic (MAPPO, QMIX) learns the value of a position from everything, hidden
cards included, while each actor sees only its observation. What "everything" means depends
on the variation: a points race is decided by the points, golf by which cards are face up,
a throw-down by who has not looked, a quiet 31 by whose 31 counts 30. So the state is, like
the observation (:mod:`scat_env.observation`), a tuple of named pieces: :data:`STATE_PIECES`
for every game (the 52-card blocks and per-seat flags of the standard game, unchanged), and
after them the pieces of each family the rules turn on (:func:`state_pieces`). Sizes,
offsets and the documentation table (:func:`scat_env.observation.layout_table`) derive from
the pieces. Seats are absolute, every value lies in ``[0, 1]``.

The state reads the :class:`~scat_env.engine.GameState` itself: it is not a player's view
and must never be fed to an actor.
"""

from __future__ import annotations

import numpy as np

from .actions import HAMMER, KNOCK
from .engine import GameState, Phase
from .observation import Piece, layout
from .rules import Rules

TURN_SCALE = 100

#: Every game's state, in order: the standard game's 326 entries at three players.
STATE_PIECES: tuple[Piece, ...] = (
    Piece("hands", 52, "seat", "card", "one-hot of each seat's hand"),
    Piece("stock", 52, "one", "card", "one-hot of the cards in the stock"),
    Piece("discard_pile", 52, "one", "card", "one-hot of the cards in the discard pile"),
    Piece("top_discard", 52, "one", "card", "one-hot of the top card of the discard pile"),
    Piece("current_player", 1, "seat", "none", "1 for the seat to move (none once over)"),
    Piece("lives", 1, "seat", "none", "lives left / starting lives"),
    Piece("knocked", 1, "seat", "none", "1 for the seat that knocked this hand"),
    Piece("dealer", 1, "seat", "none", "1 for the seat that dealt this hand"),
    Piece("stock_size", 1, "one", "none", "cards left in the stock / 52"),
    Piece("discard_phase", 1, "one", "none", "1 in the discard phase"),
)

#: A points race (``scoring: points``).
POINTS_STATE: tuple[Piece, ...] = (
    Piece("points", 1, "seat", "none", "points / points to win (capped at 1)"),
)
#: Golf (``play: golf``): which slots are face up, and golf's two phases.
GOLF_STATE: tuple[Piece, ...] = (
    Piece("face_up", 3, "seat", "none", "per seat, 1 for each of its three slots face up"),
    Piece("golf_phase", 2, "one", "none", "one-hot: golf draw, golf place"),
)
#: The calls made before looking (``throw_down``, ``sudden_death``).
LOOK_STATE: tuple[Piece, ...] = (
    Piece("looked", 1, "seat", "none", "1 if the seat has looked at its cards this hand"),
    Piece("call_phase", 2, "one", "none", "one-hot: a throw-down call, a sudden-death call"),
)
#: Declaring 31 by choice (``declare_31: choice``).
DECLARE_STATE: tuple[Piece, ...] = (
    Piece("quiet", 1, "seat", "none", "1 if the seat holds a 31 it kept quiet (counts 30)"),
    Piece("pending", 1, "seat", "none",
          "1 for a seat dealt a 31 still to say whether it declares it"),
    Piece("declared", 1, "seat", "none", "1 for a seat that declared a dealt 31 this hand"),
    Piece("declare_phase", 1, "one", "none", "1 while the player to move decides to declare"),
)
#: Knock options that depend on the turn: the second knock, the hammer, no first-turn knock.
TURN_STATE: tuple[Piece, ...] = (
    Piece("knock_open", 1, "one", "none",
          "1 while the player to move may knock (a second knock, or past its first turn)"),
    Piece("hammer_open", 1, "one", "none", "1 while the player to move may call a hammer"),
    Piece("turn", 1, "one", "none", "turns played this hand / 100, capped at 1"),
)


def state_pieces(rules: Rules) -> tuple[Piece, ...]:
    """The state's pieces under ``rules``: :data:`STATE_PIECES`, then each family's own,
    in a fixed order (points, golf, looking, declaring, the turn)."""
    pieces = STATE_PIECES
    if rules.scoring == "points":
        pieces += POINTS_STATE
    if rules.play == "golf":
        pieces += GOLF_STATE
    if rules.throw_down != "none" or rules.sudden_death:
        pieces += LOOK_STATE
    if rules.declare_31 == "choice":
        pieces += DECLARE_STATE
    if (rules.second_knock or rules.hammer or not rules.first_turn_knock
            or rules.knock_then_draw):
        pieces += TURN_STATE
    return pieces


def state_size(num_players: int, rules: Rules) -> int:
    """Entries of the state vector of ``num_players`` under ``rules``."""
    return sum(piece.size(num_players) for piece in state_pieces(rules))


def encode_state(st: GameState, out: np.ndarray | None = None) -> np.ndarray:
    """``st`` as the state vector of :func:`state_pieces` (float32, seats absolute)."""
    n, rules = st.num_players, st.rules
    pieces = state_pieces(rules)
    spans = layout(n, pieces)
    if out is None:
        out = np.zeros(sum(p.size(n) for p in pieces), np.float32)
    else:
        out[:] = 0.0
    at = spans["hands"].start
    out[[at + 52 * s + c for s, hand in enumerate(st.hands) for c in hand]] = 1.0
    out[[spans["stock"].start + c for c in st.stock]] = 1.0
    out[[spans["discard_pile"].start + c for c in st.discard]] = 1.0
    if st.discard:
        out[spans["top_discard"].start + st.discard[-1]] = 1.0
    if not st.is_terminal():
        out[spans["current_player"].start + st.current_player] = 1.0
    out[spans["lives"]] = [v / rules.start_lives for v in st.lives]
    if st.knocker is not None:
        out[spans["knocked"].start + st.knocker] = 1.0
    out[spans["dealer"].start + st.dealer] = 1.0
    out[spans["stock_size"]] = len(st.stock) / 52.0
    out[spans["discard_phase"]] = 1.0 if st.phase is Phase.DISCARD else 0.0
    if "points" in spans:
        out[spans["points"]] = [min(p / rules.points_to_win, 1.0) for p in st.points]
    if "face_up" in spans:
        at = spans["face_up"].start
        out[[at + 3 * s + i for s in range(n) for i in range(3) if st.face_up[s] >> i & 1]] = 1
        golf = (Phase.GOLF_DRAW, Phase.GOLF_PLACE)
        if st.phase in golf:
            out[spans["golf_phase"].start + golf.index(st.phase)] = 1.0
    if "looked" in spans:
        out[spans["looked"]] = [1.0 if looked else 0.0 for looked in st.looked]
        calls = (Phase.BLIND, Phase.SUDDEN_DEATH)
        if st.phase in calls:
            out[spans["call_phase"].start + calls.index(st.phase)] = 1.0
    if "quiet" in spans:
        out[spans["quiet"]] = [1.0 if q else 0.0 for q in st.quiet]
        out[[spans["pending"].start + s for s in st.pending]] = 1.0
        out[[spans["declared"].start + s for s in st.declared]] = 1.0
        out[spans["declare_phase"]] = 1.0 if st.phase is Phase.DECLARE else 0.0
    if "turn" in spans:
        legal = st.legal_actions() if st.phase is Phase.DRAW else ()
        out[spans["knock_open"]] = 1.0 if KNOCK in legal else 0.0
        out[spans["hammer_open"]] = 1.0 if HAMMER in legal else 0.0
        out[spans["turn"]] = min(st.turn, TURN_SCALE) / TURN_SCALE
    return out


__all__ = ["STATE_PIECES", "encode_state", "state_pieces", "state_size"]
