"""What one player may know: the :class:`PlayerView`.

This is the information boundary of the project. Agents, the observation encoder and the
human interface read a ``PlayerView`` and nothing else, so no code path above the engine can
leak another seat's cards or the stock order. A view holds only immutable values (tuples,
ints, the frozen rules), so handing it out cannot change the game.

What a seat may know, and why:

- its own hand once it has looked at it (a throw-down is called, and sudden death decided,
  before looking: the view then holds no card of its own), and the card it drew this turn
  (stock draws are hidden from others, 002);
- the whole discard pile in order: every card went onto it face up, so a player with a good
  memory knows it, even though only the top card can be taken;
- for each opponent, the cards it took from the discard pile and still holds;
- the public log of this hand (who drew from the stock, took or discarded which card,
  knocked), lives, who is out, the dealer, who knocked, the stock size, the phase;
- the last finished hand's result, with the hands that were shown (all of them at a
  showdown, only the declarers' after a 31) and its own;
- in a points race, every seat's points (:attr:`PlayerView.points`; ``()`` in a lives game);
- in golf, every seat's three slots in order (:attr:`PlayerView.slots`): the card lying face
  up there, or ``None`` for a face-down card, which nobody has seen, its owner included.
  ``hand`` then holds the seat's own face-up cards plus, while it places it, the card it
  drew or took (``drawn_card``; ``taken_card`` when it came from the pile and must go into
  a slot). An opponent's face-up cards are also its ``known_cards``. The phases are
  ``golf_draw`` (draw or take) and ``golf_place`` (put the card in a face-down slot, or
  discard a drawn card and turn a slot up: actions ``PLACE_SLOT + i`` and ``TURN_UP + i``).
  The log adds ``place`` (the card put face up) and ``turn_up`` (the card turned up) beside
  ``discard`` (the card that went onto the pile).

What a seat may NOT know: whether another seat is deciding to declare a new 31
(``declare_31: choice``). That decision is private (:func:`screen`): while it is made, every
other seat sees the position it would see had the 31 not been made. After a discard that
made it, the mover's turn still shows in its discard phase, the card not yet on the pile;
for a dealt 31 the first turn shows with nobody's moves yet (the first player's view says it
is to move, with no legal actions until the holders have decided). A 31 kept quiet never
reaches the log. The engine asks only the holders of a dealt 31, not every seat: asking every
seat would put a question with one answer to every person at every deal of the preset. The
trace left is timing: the first player's turn starts one decision later (in the PettingZoo
env, ``agent_selection`` names the holder meanwhile), as a mover's turn lasts one decision
longer after a new 31; nothing in any other seat's view, observation, mask or infos differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .engine import GameState, HandResult, Phase
from .rules import Rules


@dataclass(frozen=True, slots=True)
class PlayerView:
    """Everything ``seat`` may know right now. Seats are absolute (0..n-1, clockwise)."""

    seat: int
    num_players: int
    rules: Rules
    phase: Phase  # a str enum: ``view.phase == "draw"`` works
    current_player: int
    dealer: int
    hand: tuple[int, ...]  # sorted; four cards mid-turn
    drawn_card: int | None  # the card this seat drew this turn (its own turn only)
    taken_card: int | None  # drawn from the discard pile this turn: may not be discarded
    top_discard: int | None
    discard_pile: tuple[int, ...]  # bottom first, top last
    known_cards: tuple[tuple[int, ...], ...]  # per seat; own seat: () (see ``hand``)
    lives: tuple[int, ...]
    active: tuple[bool, ...]
    knocker: int | None
    stock_size: int
    turn: int
    hand_number: int
    log: tuple[tuple[int, str, int | None], ...]  # (seat, kind, card or None) this hand
    legal_actions: tuple[int, ...]  # empty unless it is this seat's turn
    last_result: HandResult | None
    #: A points game (``rules.scoring == "points"``): every seat's points; ``()`` in a
    #: lives game, so ``if view.points:`` tells a points table from a lives one.
    points: tuple[int, ...] = ()
    #: Golf (``rules.play == "golf"``): per seat, its three slots in order, each the card
    #: lying face up there or ``None`` for a face-down card (unseen by everyone, the owner
    #: included); ``()`` in the other games. In golf ``hand`` holds the seat's face-up
    #: cards, plus the card it drew or took while it places it (``drawn_card``).
    slots: tuple[tuple[int | None, ...], ...] = ()
    #: ``declare_31: choice``: the three cards of a 31 this seat kept quiet and still holds
    #: (sorted), which count 30 (002/000); ``()`` otherwise. Its own decision, so only its
    #: own view carries it.
    quiet_cards: tuple[int, ...] = ()

    def cards_held(self, seat: int) -> int:
        """How many cards ``seat`` holds, which everyone at the table sees: none once out, one
        each while the dealer decides on sudden death (the deal stops after one card), four
        for the player discarding (or placing a card in golf), three otherwise. Both front
        ends draw that many cards at a seat, face down where this seat may not see them."""
        if not self.active[seat]:
            return 0
        if self.phase == Phase.SUDDEN_DEATH:
            return 1
        moving = seat == self.current_player and self.phase in (Phase.DISCARD, Phase.GOLF_PLACE)
        return 4 if moving else 3


def _bits(mask: int) -> tuple[int, ...]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return tuple(out)


# Module globals: reading ``Phase.DISCARD`` goes through the enum's descriptor, and a view
# is built at every step of the env.
_DRAW, _DISCARD, _HAND_OVER, _GAME_OVER = Phase.DRAW, Phase.DISCARD, Phase.HAND_OVER, Phase.GAME_OVER
_DECLARE, _GOLF_PLACE = Phase.DECLARE, Phase.GOLF_PLACE


class Screen(NamedTuple):
    """The public position a seat sees while another seat decides, in private, whether to
    declare a new 31: what the view and the rendered table show instead of the real one."""

    phase: Phase
    current_player: int
    discard: list[int]  # bottom first, top last
    log: list[tuple[int, str, int | None]]
    known: list[int]  # per seat, bit masks as in the engine


def screen(state: GameState, seat: int | None) -> Screen | None:
    """What ``seat`` sees in place of another seat's private declare decision, or ``None``
    when nothing is screened from it (no such decision, or ``seat`` makes it).

    After a discard that made a new 31, the other seats still see the mover's discard
    phase: the card back in its hand (known again if it was known), off the pile and the
    log, exactly as they saw the turn before the discard. For a dealt 31 they see the first
    turn, not yet begun: the player left of the dealer to draw.
    """
    if state.phase is not _DECLARE or seat == state.current_player:
        return None
    mover = state.current_player
    if not state.pending:  # a 31 made by the discard just logged
        card = state.discard[-1]
        known = list(state.known)
        if _was_known(state.log, mover, card):
            known[mover] |= 1 << card
        return Screen(_DISCARD, mover, state.discard[:-1], state.log[:-1], known)
    first = state._next_active(state.dealer)
    return Screen(_DRAW, first, state.discard, state.log, state.known)


def _was_known(log: list[tuple[int, str, int | None]], seat: int, card: int) -> bool:
    """Whether ``card``, just discarded by ``seat`` (the log's last entry), was known to be
    in its hand: it was, exactly when the log's last earlier entry naming that card is
    ``seat`` taking it from the pile (a card drawn from the stock or dealt is never named
    before it is discarded)."""
    for who, kind, named in reversed(log[:-1]):
        if named == card:
            return who == seat and kind == "take"
    return False


def make_view(state: GameState, seat: int) -> PlayerView:
    """Build the view of ``seat`` from the full state (the only place both meet)."""
    if not 0 <= seat < state.num_players:
        raise ValueError(f"seat must be 0..{state.num_players - 1}, got {seat!r}")
    phase = state.phase
    if phase is _DECLARE and state.current_player != seat:
        return _screened_view(state, seat)
    if state._golf:
        return _golf_view(state, seat)
    to_move = state.current_player == seat
    discarding = to_move and phase is _DISCARD
    mine = to_move and phase is not _HAND_OVER and phase is not _GAME_OVER
    drawn = state.drawn if discarding else None
    taken = state.taken if discarding else None
    known = state.known
    discard = state.discard
    return PlayerView(
        seat=seat,
        num_players=state.num_players,
        rules=state.rules,
        phase=phase,
        current_player=state.current_player,
        dealer=state.dealer,
        # A player who has not looked (throw-down, sudden death) sees none of its cards.
        hand=tuple(sorted(state.hands[seat])) if state.looked[seat] else (),
        drawn_card=drawn,
        taken_card=taken,
        top_discard=discard[-1] if discard else None,
        discard_pile=tuple(discard),
        # A list comprehension and no call for the usual empty mask: a view is built at
        # every env step, and this keeps it as fast as before views carried points and slots.
        known_cards=tuple([_bits(k) if k and s != seat else () for s, k in enumerate(known)]),
        lives=tuple(state.lives),
        active=tuple(state.active),
        knocker=state.knocker,
        stock_size=len(state.stock),
        turn=state.turn,
        hand_number=state.hand_number,
        log=tuple(state.log),
        legal_actions=tuple(state.legal_actions()) if mine else (),
        last_result=state.results[-1].seen_by(seat) if state.results else None,
        points=tuple(state.points) if state._points else (),
        quiet_cards=_bits(state.quiet[seat]) if state.quiet[seat] else (),
    )


def _golf_view(state: GameState, seat: int) -> PlayerView:
    """Golf: every face-up card is public, no face-down card is seen by anyone (its owner
    included), and the card drawn from the stock is seen by its drawer alone until it is
    placed or discarded face up."""
    phase = state.phase
    n = state.num_players
    to_move = state.current_player == seat and phase is not _HAND_OVER and phase is not _GAME_OVER
    placing = to_move and phase is _GOLF_PLACE
    slots = tuple(
        tuple(h[i] if up >> i & 1 else None for i in range(3)) if h else ()
        for h, up in zip(state.hands, state.face_up, strict=True))
    mine = [c for c in slots[seat] if c is not None]
    if placing:
        mine.append(state.drawn)  # type: ignore[arg-type]
    discard = state.discard
    known = state.known
    return PlayerView(
        seat=seat,
        num_players=n,
        rules=state.rules,
        phase=phase,
        current_player=state.current_player,
        dealer=state.dealer,
        hand=tuple(sorted(mine)),
        drawn_card=state.drawn if placing else None,
        taken_card=state.taken if placing else None,
        top_discard=discard[-1] if discard else None,
        discard_pile=tuple(discard),
        known_cards=tuple(() if s == seat else _bits(known[s]) for s in range(n)),
        lives=tuple(state.lives),
        active=tuple(state.active),
        knocker=None,
        stock_size=len(state.stock),
        turn=state.turn,
        hand_number=state.hand_number,
        log=tuple(state.log),
        legal_actions=tuple(state.legal_actions()) if to_move else (),
        last_result=state.results[-1].seen_by(seat) if state.results else None,
        slots=slots,
    )


def _screened_view(state: GameState, seat: int) -> PlayerView:
    """The view of a seat that may not know another seat is deciding whether to declare a
    new 31 (:func:`screen`); its own cards and everything public are as in
    :func:`make_view`, and it has no legal action (it is not to move)."""
    shown = screen(state, seat)
    assert shown is not None
    discard = shown.discard
    return PlayerView(
        seat=seat,
        num_players=state.num_players,
        rules=state.rules,
        phase=shown.phase,
        current_player=shown.current_player,
        dealer=state.dealer,
        hand=tuple(sorted(state.hands[seat])) if state.looked[seat] else (),
        drawn_card=None,
        taken_card=None,
        top_discard=discard[-1] if discard else None,
        discard_pile=tuple(discard),
        known_cards=tuple(() if s == seat else _bits(shown.known[s])
                          for s in range(state.num_players)),
        lives=tuple(state.lives),
        active=tuple(state.active),
        knocker=state.knocker,
        stock_size=len(state.stock),
        turn=state.turn,
        hand_number=state.hand_number,
        log=tuple(shown.log),
        legal_actions=(),
        last_result=state.results[-1].seen_by(seat) if state.results else None,
        points=tuple(state.points) if state._points else (),
        quiet_cards=_bits(state.quiet[seat]) if state.quiet[seat] else (),
    )


def active_view(view: PlayerView) -> PlayerView:
    """The same position as a game among the players still in: out seats dropped, the rest
    renumbered clockwise from 0.

    Why: a seat that is out never plays again and holds no cards, so a three-player game
    with one player out *is* a two-player game. A policy trained on every table size has
    played far more real two-player hands than heads-up ends of larger games, and it reads
    the position better in the smaller table's terms: paired on the same deals, policies
    score higher reading the end of a larger game this way.
    Everything comes from ``view``, so this view tells nothing new. ``last_result`` is
    dropped: it names the seats of the full table. A view whose own seat is out has no
    smaller game to be part of, which is an error.
    """
    if all(view.active):
        return view
    if not view.active[view.seat]:
        raise ValueError(f"active_view: seat {view.seat} is out of the game")
    n = view.num_players
    seats = [s for s in range(n) if view.active[s]]
    index = {s: i for i, s in enumerate(seats)}

    def nearest_in(seat: int) -> int:
        # Dealer (or a finished hand's current player) may be a seat that just went out:
        # the nearest seat still in on its right keeps the order of play the same.
        while seat not in index:
            seat = (seat - 1) % n
        return index[seat]

    return PlayerView(
        seat=index[view.seat],
        num_players=len(seats),
        rules=view.rules,
        phase=view.phase,
        current_player=nearest_in(view.current_player),
        dealer=nearest_in(view.dealer),
        hand=view.hand,
        drawn_card=view.drawn_card,
        taken_card=view.taken_card,
        top_discard=view.top_discard,
        discard_pile=view.discard_pile,
        known_cards=tuple(view.known_cards[s] for s in seats),
        lives=tuple(view.lives[s] for s in seats),
        active=(True,) * len(seats),
        knocker=None if view.knocker is None else index[view.knocker],
        stock_size=view.stock_size,
        turn=view.turn,
        hand_number=view.hand_number,
        log=tuple((index[s], kind, card) for s, kind, card in view.log),
        legal_actions=view.legal_actions,
        last_result=None,
        points=tuple(view.points[s] for s in seats) if view.points else (),
        slots=tuple(view.slots[s] for s in seats) if view.slots else (),
        quiet_cards=view.quiet_cards,
    )


__all__ = ["PlayerView", "Screen", "make_view", "active_view", "screen"]
