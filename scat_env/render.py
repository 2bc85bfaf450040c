"""Plain-text rendering of a table of Scat, with suit symbols.

``render_table`` shows what a person at the table may see: every player's standing, the top
discard, the stock size, who knocked, the cards known to be in each hand, and the hand of one
chosen seat (``perspective``). Other hands stay face down unless ``reveal=True``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import RANK_NAMES, card_str
from .engine import GameState, Phase
from .rules import Rules, lives_label
from .scoring import TRIPS_BASE
from .view import screen


def value_text(value: float, rules: Rules) -> str:
    """A hand's value as the players count it.

    The poker tie-break (``poker_tiebreak``) rides on the value as a fraction below one
    (:func:`scat_env.scoring.poker_fraction`): the players count the points, ``int(value)``.
    Three of a kind that beats 31 (``trips_beat_31``) is named, not counted ("three 7s").
    Anything else is the number itself: 30.5 for three of a kind where it counts 30.5.
    """
    if rules.trips_beat_31 and value >= TRIPS_BASE:
        rank = RANK_NAMES[int(value - TRIPS_BASE)]
        return "three aces" if rank == "A" else f"three {rank}s"
    if rules.poker_tiebreak:
        return str(int(value))
    return f"{value:g}"


def cards_text(cards: Sequence[int]) -> str:
    return " ".join(card_str(c, symbols=True) for c in cards) or "-"


def _golf_hand(state: GameState, seat: int, perspective: int, reveal: bool) -> str:
    """Golf: the three slots in order, ``??`` for a face-down card (unseen by its owner
    too), and the card held while it is placed: seen by the perspective seat if it drew
    it, by everyone if it was taken from the pile."""
    hand = state.hands[seat]
    up = state.face_up[seat]
    slots = [card_str(c, symbols=True) if reveal or up >> i & 1 else "??"
             for i, c in enumerate(hand[:3])]
    text = " ".join(slots)
    if len(hand) == 4:
        held = hand[3]
        seen = reveal or seat == perspective or state.known[seat] >> held & 1
        text += f"  holding {card_str(held, symbols=True) if seen else '??'}"
    if reveal or up == 0b111:
        text += f"  (value {value_text(state.hand_value(seat), state.rules)})"
    return text


def render_table(
    state: GameState,
    perspective: int | None = None,
    reveal: bool = False,
    names: Sequence[str] | None = None,
) -> str:
    """Text table of the game. ``perspective=None`` follows the player to move."""
    n = state.num_players
    names = list(names) if names else [f"player_{s}" for s in range(n)]
    if perspective is None:
        perspective = state.current_player
    # Another seat's private decision (whether to declare a new 31) shows as the position
    # the perspective seat would otherwise see (scat_env.view.screen), unless all is revealed.
    shown = None if reveal else screen(state, perspective)
    phase = shown.phase if shown else state.phase
    mover = shown.current_player if shown else state.current_player
    discard = shown.discard if shown else state.discard
    known_bits = shown.known if shown else state.known
    top = discard[-1] if discard else None
    lines = [
        f"Scat ({state.rules.name}) | hand {state.hand_number} | dealer {names[state.dealer]}"
        f" | stock {len(state.stock)} | top discard "
        f"{card_str(top, symbols=True) if top is not None else '-'}"
        f" | phase {phase}",
    ]
    width = max(len(x) for x in names)
    for s in range(n):
        mark = "->" if s == mover and phase is not Phase.GAME_OVER else "  "
        tags = []
        if s == state.dealer:
            tags.append("dealer")
        if s == state.knocker:
            tags.append("KNOCKED")
        status = lives_label(state.rules, state.lives[s])
        if state.rules.scoring == "points":
            status = f"{state.points[s]} of {state.rules.points_to_win} points"
        if not state.active[s]:
            hand_txt = ""
        elif state.rules.play == "golf":
            hand_txt = _golf_hand(state, s, perspective, reveal)
        elif reveal or (s == perspective and state.looked[s]):
            hand_txt = (f"{cards_text(state.hands[s])}  "
                        f"(value {value_text(state.hand_value(s), state.rules)})")
        else:
            # The cards known to be there (taken from the pile) and a ?? for each other one;
            # a seat that has not looked (throw-down, sudden death) sees its own as ??.
            held = state.hands[s]
            if shown and s == mover:
                held = held + state.discard[len(discard):]  # the discard not shown yet
            known = sorted(c for c in held if s != perspective and known_bits[s] >> c & 1)
            hidden = len(held) - len(known)
            hand_txt = " ".join([card_str(c, symbols=True) for c in known] + ["??"] * hidden)
        lines.append(
            f"{mark} {names[s]:<{width}}  {status:<22} {hand_txt}"
            + (f"  [{', '.join(tags)}]" if tags else "")
        )
    if state.results:
        lines.append("last: " + state.results[-1].describe(names))
    if state.phase is Phase.GAME_OVER:
        lines.append(f"game over: {names[state.winner]} wins")  # type: ignore[index]
    return "\n".join(lines)
