"""The Scat rules engine: pure game logic, no numpy, no RL.

One :class:`GameState` is a whole game of Scat: hands are dealt, played and scored until one
player is left (or, with ``single_hand=True``, until the first hand is scored). Its
interface is OpenSpiel's: :attr:`current_player`, :meth:`legal_actions`,
:meth:`apply_action`, :meth:`is_terminal`, :meth:`returns`.

Decisions are the only steps. Chance (the shuffle) happens inside: when a hand ends the next
one is dealt at once, and a dealt 31 is scored on the spot, so that after every action the
state is waiting for a real decision or the game is over. Each scored hand is appended to
:attr:`results` as a :class:`HandResult`.

Design notes (why it looks like this):

- Cards are ints, piles are lists with the top at the end, and "cards known to be in a
  hand" are per-seat bit masks: the hot path does list appends and integer ops only.
- Hand values come from a precomputed table (:func:`scat_env.scoring.value_table`).
- "No card" (and "no seat": nobody knocked) is ``None``, in the engine as in the
  :class:`~scat_env.view.PlayerView`, the public log and :class:`HandResult`: one spelling
  that nobody translates at the boundary, that cannot pass for a card or an index (``-1``
  silently indexes the last item of a list), and that costs no more to test.
- The random generator belongs to the state and is used only to shuffle; agents never see
  the state, only a :class:`~scat_env.view.PlayerView`.
- :class:`GameState` plays the standard game: deal, draw, discard, knock, a 31 declared at
  once, the showdown with lives, the all-out rule, the deal passing left. Each variation
  family plays from its own ``scat_env/variants/<family>/engine.py`` (knocking, calls,
  thirty_one, points, golf) through the named hook points of :data:`HOOKS` (after the deal,
  the draw phase's calls, a phase's decision, a hand's value, its scoring...), which
  ``_begin`` binds once per game from the rules. A hook is a plain function, so that
  ``clone`` shares it and pickle stores it by name; a hook left unbound is ``None`` and costs
  the standard game one ``is None`` test at most, per deal or per hand rather than per
  decision wherever the hook point allows. A new variation is one family folder (its
  ``hooks(rules)`` and functions) plus its tests.

**Turn cap.** Two players who keep taking each other's discards could play one hand for
ever. ``GameState(..., max_turns_per_hand=N)`` ends the game when a hand reaches ``N``
turns: the game is over and :attr:`GameState.cut`, with no winner and returns of zero.
The default, ``None``, leaves the cap to the caller, as ``env()`` (which truncates the
episode at its ``max_turns``), the match loop and the trainers do, so their games stay
exactly as they were; the saved games of ``scat play`` and ``scat serve``, and every replay
(:meth:`scat_session.savegame.SavedGame.new_state`), pass :data:`~scat_env.DEFAULT_MAX_TURNS`.
"""

from __future__ import annotations

import dataclasses
import operator
import random
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, NamedTuple

from .actions import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, action_str
from .cards import CARD_POINTS, card_str, parse_card
from .rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from .scoring import THIRTY_ONE, best_three, value_table
from .showdown import all_out, knock_losses, thirty_one_losses


class Phase(str, Enum):
    """What the game waits for: the engine's :attr:`GameState.phase` and the view's
    :attr:`~scat_env.view.PlayerView.phase` hold the same members.

    A ``str`` enum so that ``view.phase == "draw"`` (and JSON, f-strings, ``str()``) keep
    reading as the plain word; compare with ``is`` where speed matters.
    """

    DRAW = "draw"  # the player to move draws, takes the discard, knocks or ends the play
    DISCARD = "discard"  # the same player discards one of four cards
    HAND_OVER = "hand_over"  # only with single_hand=True: the hand is scored, nothing follows
    GAME_OVER = "game_over"  # one player is left
    # The calls of the variations (002 "Variations", 003), each a decision of its own:
    BLIND = "blind"  # throw-down: call a showdown before looking at one's cards, or look
    SUDDEN_DEATH = "sudden_death"  # the dealer, one card dealt each: call it or deal on
    DECLARE = "declare"  # a new 31 (declare_31 "choice"): declare it or keep quiet
    # Golf (002, Mike Armstrong): draw from the stock or take the discard, then put the card
    # in a face-down slot or (a drawn card) discard it and turn a slot face up.
    GOLF_DRAW = "golf_draw"
    GOLF_PLACE = "golf_place"

    __str__ = str.__str__
    __format__ = str.__format__


# Module globals for the hot path: in Python 3.11 reading ``Phase.DRAW`` goes through a
# descriptor and costs about eight times a global read, several times per decision.
_DRAW, _DISCARD, _HAND_OVER, _GAME_OVER = Phase.DRAW, Phase.DISCARD, Phase.HAND_OVER, Phase.GAME_OVER

#: Public log event kinds (the second item of each ``(seat, kind, card)`` entry).
EV_DRAW_STOCK = "draw_stock"
EV_TAKE = "take"
EV_DISCARD = "discard"
EV_KNOCK = "knock"
EV_END_PLAY = "end_play"
EV_HAMMER = "hammer"
EV_THROW_DOWN = "throw_down"
EV_SUDDEN_DEATH = "sudden_death"
EV_DECLARE = "declare"
#: A call declined (looked at the cards, dealt on). Keeping a 31 quiet is never logged: the
#: log is public, and that decision is private.
EV_PASS = "pass"
#: Golf: a card put face up in a slot (its card), a slot turned face up (the card shown).
EV_PLACE = "place"
EV_TURN_UP = "turn_up"


class FrozenDict(dict):  # type: ignore[type-arg]
    """A ``dict`` that refuses changes: the per-seat tables of a :class:`HandResult`.

    A result is handed to every agent (``PlayerView.last_result``) and kept in the game's
    record; a plain dict inside a frozen dataclass would let one agent rewrite what the
    others, the env and the save file read. It stays a ``dict`` subclass so that equality,
    JSON and ``isinstance(x, dict)`` behave as before, and pickles through ``__reduce__``
    (pickle would otherwise refill it item by item through the refused ``__setitem__``).
    """

    __slots__ = ()

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a hand result is read-only")

    __setitem__ = __delitem__ = _refuse  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type, tuple[dict]]:  # type: ignore[type-arg]
        return type(self), (dict(self),)

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenDict:
        return self


@dataclass(frozen=True)
class HandResult:
    """How one hand ended and what it cost: the full record, kept by the game.

    ``values`` and ``hands`` cover the seats that were dealt in; players see only the hands
    that were shown (:attr:`shown`, :meth:`seen_by`). ``lives_lost`` is what was
    actually taken (capped by the lives a player had; all zero for a replayed hand).
    ``reason`` says how the hand ended (``"knock"``, ``"second_knock"``, ``"thirty_one"``,
    ``"dealt_thirty_one"``, ``"stock_exhausted"``, ``"hammer"``, ``"throw_down"``,
    ``"sudden_death"`` or ``"face_up"``: golf, every card face up); ``rule`` which scoring rule decided who paid, one of
    :data:`scat_env.showdown.RULES` (:func:`scat_env.showdown.rule_text` says it in words).
    """

    hand_number: int
    dealer: int
    reason: str
    values: dict[int, float]
    hands: dict[int, tuple[int, ...]]
    lives_lost: dict[int, int]
    knocker: int | None
    declarers: tuple[int, ...]
    eliminated: tuple[int, ...]
    replayed: bool
    lives_after: tuple[int, ...]
    rule: str
    # A lives game's result has no points: the points race's fields (PointsHandResult) read
    # as empty here. Plain class attributes, not fields, so that the result of every lives
    # hand is built exactly as before (a hand is scored every few decisions).
    points_won = FrozenDict()
    points_after = ()
    race_winner = None

    def __post_init__(self) -> None:
        for name in ("values", "hands", "lives_lost"):
            table = getattr(self, name)
            if type(table) is not FrozenDict:
                object.__setattr__(self, name, FrozenDict(table))

    @property
    def shown(self) -> tuple[int, ...]:
        """The seats whose hands were shown to the whole table.

        At a showdown (a knock, an exhausted stock) every hand is shown. A 31 ends the hand
        without one: only the declarers show their cards (002 "Declaring 31": the holder
        "shows their cards immediately"; dealt 31s likewise), and the other hands go back
        into the pack unseen.
        """
        if self.reason in ("thirty_one", "dealt_thirty_one"):
            return self.declarers
        return tuple(self.hands)

    def seen_by(self, seat: int | None) -> HandResult:
        """This result as ``seat`` saw it: the hands and values of the seats in
        :attr:`shown`, plus ``seat``'s own (``None``: a spectator who saw no hand).

        Agents (``PlayerView.last_result``), the env's ``infos[agent]["hand_result"]`` and a
        person at the table get this, never the full record: after a declared 31 nobody
        learns the other hands. The full record (:attr:`hands`) stays with the game, for
        replays once the game is over and for training statistics.
        """
        if self.reason != "thirty_one" and self.reason != "dealt_thirty_one":
            return self  # a showdown: every hand was shown
        # What each seat saw, built once per seat (a view is made at every decision).
        cache = self.__dict__.setdefault("_seen", {})
        seen = cache.get(seat)
        if seen is not None:
            return seen
        keep = set(self.shown)
        if seat is not None and seat in self.hands:
            keep.add(seat)
        if len(keep) == len(self.hands):
            seen = self
        else:
            seen = dataclasses.replace(
                self,
                values={s: v for s, v in self.values.items() if s in keep},
                hands={s: h for s, h in self.hands.items() if s in keep},
            )
        cache[seat] = seen
        return seen

    def to_dict(self, names: Sequence[str] | None = None) -> dict[str, Any]:
        """The JSON-friendly form: exactly the env's ``infos[agent]["hand_result"]``.

        Every seat is written as its name, ``names[seat]`` (default ``player_<seat>``, the
        env's agent names), in values and in keys alike, so the dict survives a JSON round
        trip unchanged; cards are strings such as ``"KH"``. ``lives_after`` names every seat
        of the table, the other per-seat maps only the seats dealt into the hand.
        """
        name = names.__getitem__ if names is not None else "player_{}".format
        out = {
            "hand_number": self.hand_number,
            "reason": self.reason,
            "rule": self.rule,
            "dealer": name(self.dealer),
            "values": {name(s): v for s, v in self.values.items()},
            "lives_lost": {name(s): v for s, v in self.lives_lost.items()},
            "knocker": name(self.knocker) if self.knocker is not None else None,
            "declarers": [name(s) for s in self.declarers],
            "hands": {name(s): [card_str(c) for c in h] for s, h in self.hands.items()},
            "eliminated": [name(s) for s in self.eliminated],
            "replayed": self.replayed,
            "lives_after": {name(s): v for s, v in enumerate(self.lives_after)},
        }
        if self.points_after:  # a points race
            out["points_won"] = {name(s): v for s, v in self.points_won.items()}
            out["points_after"] = {name(s): v for s, v in enumerate(self.points_after)}
            out["race_winner"] = name(self.race_winner) if self.race_winner is not None else None
        return out

    def describe(self, names: Sequence[str] | None = None) -> str:
        """One line saying what happened and which rule applied."""
        name = (lambda s: names[s]) if names else (lambda s: f"player_{s}")
        losers = ", ".join(
            f"{name(s)} -{n}" for s, n in sorted(self.lives_lost.items()) if n
        ) or "nobody"
        if self.reason == "dealt_thirty_one":
            why = f"{' and '.join(name(s) for s in self.declarers)} dealt 31"
        elif self.reason == "thirty_one":
            why = f"{name(self.declarers[0])} declared 31"
            if self.knocker is not None:
                why += f" after {name(self.knocker)} knocked"
        elif self.reason == "knock":
            why = f"showdown after {name(self.knocker)} knocked"  # type: ignore[arg-type]
        elif self.reason in ("hammer", "throw_down"):
            call = "a hammer" if self.reason == "hammer" else "a throw-down"
            why = f"{name(self.knocker)} called {call}: showdown"  # type: ignore[arg-type]
        elif self.reason == "sudden_death":
            why = f"{name(self.dealer)} called sudden death: the single cards were compared"
        elif self.reason == "face_up":
            why = "every card face up: the hands were compared"
        elif self.reason == "second_knock":
            why = (f"{name(self.knocker)} knocked and the next player knocked too: "  # type: ignore[arg-type]
                   "play ended at once")
        else:
            why = "stock exhausted and play ended"
            if self.knocker is not None:
                why += f" ({name(self.knocker)} had knocked)"
        if self.points_after:
            scorers = ", ".join(f"{name(s)} +{n}" for s, n in sorted(self.points_won.items())
                                if n) or "nobody"
            return f"hand {self.hand_number}: {why}; points: {scorers}"
        text = f"hand {self.hand_number}: {why}; lives lost: {losers}"
        if self.replayed:
            text += " (everyone left would be out: the hand is replayed)"
        if self.eliminated:
            text += f"; out: {', '.join(name(s) for s in self.eliminated)}"
        return text


@dataclass(frozen=True)
class PointsHandResult(HandResult):
    """A hand of a points race (``scoring: points``): the :class:`HandResult` (nobody loses
    a life) plus the points each seat scored (``points_won``), every seat's points after
    the hand (``points_after``) and the seat that hand made the winner of the race
    (``race_winner``, else ``None``)."""

    points_won: dict[int, int] = field(default_factory=dict)  # type: ignore[assignment]
    points_after: tuple[int, ...] = ()
    race_winner: int | None = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        super().__post_init__()
        if type(self.points_won) is not FrozenDict:
            object.__setattr__(self, "points_won", FrozenDict(self.points_won))


_new_object = object.__new__


def _hand_result(**parts: Any) -> HandResult:
    """``HandResult(**parts)`` for the engine's hot path, built without the dataclass's
    ``__init__``: a frozen dataclass sets each of its twelve fields through
    ``object.__setattr__``, and a game scores a hand every few decisions (in
    ``throw_down_any`` every two or three). The engine passes every field, the three
    tables already as :class:`FrozenDict`, which is all ``__post_init__`` would ensure;
    ``tests/test_engine_fast_paths.py`` checks that the result equals the one
    ``HandResult`` builds."""
    result = _new_object(HandResult)
    result.__dict__.update(parts)
    return result


def as_action(action: object, what: str = "an action") -> int:
    """``action`` as a plain ``int``, or ``ValueError`` naming it.

    Integers of any kind (numpy's included) are converted, so that what the engine stores in
    hands, piles and logs is always a Python ``int``; anything else (a float such as 52.0
    or inf, a bool, a string, an array) is refused rather than compared or stored as it is.
    """
    if type(action) is int:
        return action
    if isinstance(action, bool):
        raise ValueError(f"{what} must be an integer, got {action!r}")
    try:
        return operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(
            f"{what} must be an integer, got {short_repr(action)} ({type(action).__name__})"
        ) from None


def short_repr(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters: what an error may quote of a value it
    refuses (an array of a million entries must not become a million-character message)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def action_name(action: object) -> str:
    """The action in words (:func:`~scat_env.actions.action_str`), or "not an action"."""
    try:
        return action_str(as_action(action))
    except ValueError:
        return "not an action"


def validate_deck(deck: Sequence[int | str], rules: Rules) -> list[int]:
    """Parse and check a stacked deck (top first): every card of the pack exactly once.

    A set or a mapping is refused: its order depends on hashing, not on the caller, so the
    same "deck" could deal differently from one run to the next.
    """
    if isinstance(deck, (AbstractSet, Mapping)):
        raise ValueError(
            f"bad deck: give the cards in order (a list, a tuple or a string), "
            f"not a {type(deck).__name__}"
        )
    if isinstance(deck, str):
        deck = deck.replace(",", " ").split()
    try:
        cards = [parse_card(c if isinstance(c, str) else as_action(c, "a card")) for c in deck]
    except ValueError as exc:
        raise ValueError(f"bad deck: {exc}") from None
    expected = rules.deck_cards
    if len(cards) != len(expected):
        raise ValueError(f"bad deck: expected {len(expected)} cards, got {len(cards)}")
    seen: set[int] = set()
    dupes = [c for c in cards if c in seen or seen.add(c)]  # type: ignore[func-returns-value]
    if dupes:
        raise ValueError(f"bad deck: duplicate card(s) {', '.join(card_str(c) for c in dupes)}")
    foreign = seen - set(expected)
    if foreign:
        raise ValueError(
            f"bad deck: card(s) not in this pack: {', '.join(card_str(c) for c in sorted(foreign))}"
        )
    return cards


#: Per pack size, the draws of its Fisher-Yates shuffle: ``(i, (i + 1).bit_length())`` for
#: ``i`` from ``size - 1`` down to 1 (the position filled, and the bits one draw takes).
_SHUFFLE_STEPS = tuple(tuple((i, (i + 1).bit_length()) for i in range(size - 1, 0, -1))
                       for size in range(53))


def shuffle(rng: random.Random, cards: list[int]) -> None:
    """``rng.shuffle(cards)``, the same permutation from the same generator state, at about
    twice the speed: the Fisher-Yates loop of CPython's ``Random.shuffle`` with its
    rejection sampling (``_randbelow_with_getrandbits``: draw ``k`` bits until the number
    is at most ``i``) written inline over precomputed steps. A shuffle is most of the cost
    of a deal, and a game deals a hand every few decisions. A generator of another kind (a
    subclass that draws differently) uses its own ``shuffle``."""
    if type(rng) is not random.Random or len(cards) > 52:
        rng.shuffle(cards)
        return
    getrandbits = rng.getrandbits
    for i, k in _SHUFFLE_STEPS[len(cards)]:
        j = getrandbits(k)
        while j > i:
            j = getrandbits(k)
        cards[i], cards[j] = cards[j], cards[i]


#: ``_SEATS[n]``: the seats of a full table of ``n``; ``_FROM_LEFT[n][dealer]``: the same
#: from the dealer's left round to the dealer (the order of the deal). Built once instead of
#: at every deal and every scored hand.
_SEATS = tuple(tuple(range(n)) for n in range(MAX_PLAYERS + 1))
_FROM_LEFT = tuple(tuple(tuple((d + i) % n for i in range(1, n + 1)) for d in range(n))
                   for n in range(MAX_PLAYERS + 1))


#: ``GameState._turn_cap`` without a cap (``max_turns_per_hand=None``): an int, so the turn
#: check is one comparison, and larger than any count of turns.
_NO_CAP = 1 << 62


# -- the variations' hook points ------------------------------------------------------------
class PhasePlay(NamedTuple):
    """A decision a variation adds: its legal actions, and what playing one does (called
    with the state, the seat to move and the action, already checked legal)."""

    legal: Callable[[GameState], list[int]]
    apply: Callable[[GameState, int, int], None]


#: The hook points of :class:`GameState`: where the standard game lets a variation family
#: change the play, each with the field that holds it and what it is. A family's
#: ``scat_env/variants/<family>/engine.py`` offers ``hooks(rules) -> dict`` naming the hooks
#: it fills for those rules; :meth:`GameState._begin` binds them once per game. A hook left
#: at its default (``None``) is the standard game, which pays one ``is None`` test where the
#: hook point is: per deal or per hand, and in the draw phase in place of the rule tests
#: the knock and the hammer made there before.
HOOKS: dict[str, tuple[str, str]] = {
    "deal": ("_deal_hook", "f(state, deck, seats): deals instead of three cards each and "
             "the upcard, and leaves the state waiting for a decision (sudden death)"),
    "after_deal": ("_after_deal_hook", "f(state, seats) -> bool: after the deal, instead of "
                   "the dealt 31s declared at once and the first turn; False when the hand "
                   "ended and the next must be dealt (golf, a 31 by choice)"),
    "play_start": ("_play_start_hook", "f(state, first): the first turn's start, after the "
                   "standard one (the throw-down)"),
    "new_31": ("_new_31_hook", "f(state, seat) -> bool: a discard left a 31 that is not "
               "declared at once; True when the hook took over the turn (a 31 by choice)"),
    "may_knock": ("_knock_hook", "f(state) -> bool: whether the mover may knock, instead of "
                  "'nobody knocked and the stock is not empty' (the knocking limits)"),
    "draw_call": ("_draw_call_hook", "PhasePlay: actions the draw phase offers besides "
                  "drawing, knocking and ending the play (the hammer)"),
    "phases": ("_phase_hooks", "{Phase: PhasePlay}: the decisions of phases the standard "
               "game lacks (the calls, declaring by choice, golf's slots)"),
    "drawn_phase": ("_drawn_phase", "the phase after a draw, DISCARD in the standard game "
                    "(golf: GOLF_PLACE)"),
    "shown_value": ("_value_hook", "f(state, seat) -> float: a hand's worth when it is "
                    "scored, instead of its three cards' value (a single card, a quiet 31)"),
    "score_hand": ("_score_hook", "f(state, reason, declarers, deal_next, seats, values, "
                   "held): scores the hand instead of taking lives (the points race)"),
    "lives_lost": ("_lives_hook", "f(state, seats, applied, rule) -> (applied, rule): the "
                   "lives a hand takes, after the showdown rule (golf's bus)"),
}

#: The variation families whose play is a hook of the core, in the order they are bound: a
#: later family's hook replaces an earlier one's (thirty_one's hand value counts sudden
#: death's single card too).
FAMILIES = ("knocking", "calls", "golf", "points", "thirty_one")


#: ``id(rules) -> (rules, hook fields)``: the hooks bound for the rules objects in use. Keyed
#: by identity, not by the rules' hash (a hash of every field, a microsecond per new game);
#: the entry holds the rules, so that their id is not reused while it is there.
_HOOKS_BY_RULES: dict[int, tuple[Rules, dict[str, Any]]] = {}


def _variation_hooks(rules: Rules) -> dict[str, Any]:
    """Every hook field of :data:`HOOKS` for ``rules``: the families' hooks, the standard
    game's defaults for the rest. Made once per rules object: a game binds them in
    ``_begin``; the dict is shared, never changed."""
    entry = _HOOKS_BY_RULES.get(id(rules))
    if entry is not None and entry[0] is rules:
        return entry[1]
    if len(_HOOKS_BY_RULES) >= 256:
        _HOOKS_BY_RULES.clear()
    bound = _bind_hooks(rules)
    _HOOKS_BY_RULES[id(rules)] = (rules, bound)
    return bound


def _bind_hooks(rules: Rules) -> dict[str, Any]:
    """:func:`_variation_hooks`, made: each family of :data:`FAMILIES` names its hooks."""
    import importlib

    bound: dict[str, Any] = {name: None for name, _ in HOOKS.values()}
    bound["_drawn_phase"] = _DISCARD
    phases: dict[Phase, PhasePlay] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"scat_env.variants.{family}.engine")
        for hook, value in module.hooks(rules).items():
            if hook == "phases":
                phases.update(value)
            else:
                bound[HOOKS[hook][0]] = value
    bound["_phase_hooks"] = phases
    return bound


# Field declarations carry their default in metadata, not as a class attribute: in CPython
# 3.11 a class attribute shadowing an instance attribute stops the interpreter from
# specializing reads of it (``self.phase``, ``self.turn``...), which ``scat bench --mode
# engine`` shows as fewer decisions a second than with metadata defaults.
def _value(initial: Any, doc: str) -> Any:
    """An immutable field (shared by :meth:`GameState.clone`) and its value before the
    first deal."""
    return field(metadata={"initial": initial, "doc": doc})


def _copied(doc: str) -> Any:
    """A field that :meth:`GameState.clone` copies (a list), not shares."""
    return field(metadata={"clone": "copy", "doc": doc})


def _copied_nested(doc: str) -> Any:
    """A field that :meth:`GameState.clone` copies two levels deep (a list of lists)."""
    return field(metadata={"clone": "nested", "doc": doc})


@dataclass(init=False, eq=False, repr=False)
class GameState:
    """A game of Scat in progress. See the module docstring for the contract.

    Every attribute is declared once, below, with what it holds. The three ways a state is
    made (dealing a new game, :meth:`from_parts`, :meth:`clone`) all start from this table:
    :meth:`_begin` gives each field its value before the first deal, and ``clone`` copies
    the fields marked as copied and shares the rest, which are immutable (the rules, the
    value table, ints, ``None``) or never changed in place.
    """

    # -- the table, fixed for the whole game
    rules: Rules
    num_players: int
    single_hand: bool  # stop once the first hand is scored (phase HAND_OVER)
    rng: random.Random  # used only to shuffle; copied, not shared, by clone()
    _table: list[float]  # hand values of every three cards (scat_env.scoring.value_table)
    _deck: tuple[int, ...]  # the pack's card ids (rules.deck_cards), shuffled at each deal
    _declares: bool  # a 31 is declared at once (rules.declare_31 == "auto")
    _points: bool  # a points race (rules.scoring == "points")
    _golf: bool  # golf turns (rules.play == "golf")
    _turn_cap: int  # max_turns_per_hand, or _NO_CAP: a hand reaching it ends the game (cut)
    # The variations' hooks (HOOKS says what each is), bound by _begin; None: the standard game
    _deal_hook: Callable[[GameState, list[int], tuple[int, ...]], None] | None
    _after_deal_hook: Callable[[GameState, tuple[int, ...]], bool] | None
    _play_start_hook: Callable[[GameState, int], None] | None
    _new_31_hook: Callable[[GameState, int], bool] | None
    _knock_hook: Callable[[GameState], bool] | None
    _draw_call_hook: PhasePlay | None
    _phase_hooks: dict[Phase, PhasePlay]
    _drawn_phase: Phase  # the phase after a draw: DISCARD, or GOLF_PLACE in golf
    _value_hook: Callable[[GameState, int], float] | None
    _score_hook: Callable[..., None] | None
    _lives_hook: Callable[[GameState, Sequence[int], dict[int, int], str],
                          tuple[dict[int, int], str]] | None
    # -- the game so far
    lives: list[int] = _copied("lives left per seat (0 = out; a points game never takes one)")
    # The two lists below belong to the points race and golf alone; private (read them as
    # the properties ``points`` and ``face_up``) because every other game keeps them at
    # zero, and a stored lives game (a trainer's checkpoint) need not carry them.
    _scores: list[int] = _copied("points per seat (scoring 'points'; zeros otherwise)")
    active: list[bool] = _copied("seat still in the game")
    results: list[HandResult] = _copied("every scored hand, in order (frozen, shared)")
    hand_number: int = _value(0, "hands dealt so far, the current one included")
    dealer: int = _value(0, "the seat that dealt the current hand")
    # -- the hand in play
    hands: list[list[int]] = _copied_nested("cards of each seat, in the order received")
    known: list[int] = _copied("per seat, bit c set: holds card c, known because it was taken")
    looked: list[bool] = _copied("per seat: has looked at its cards this hand (a throw-down "
                                 "caller and sudden death decide without looking)")
    quiet: list[int] = _copied("per seat, the cards (bit mask) of a 31 kept quiet: they "
                               "count 30 (declare_31 'choice')")
    _face_up: list[int] = _copied("golf: per seat, bit i set: slot i (hands[seat][i]) is "
                                  "face up; the other slots are unseen, by their owner too")
    stock: list[int] = _copied("the stock; its top card is the END of the list")
    discard: list[int] = _copied("the discard pile; its top card is the END of the list")
    log: list[tuple[int, str, int | None]] = _copied("public events (seat, kind, card or None)")
    turn: int = _value(0, "draw decisions (turns started) in the current hand")
    current_player: int = _value(0, "the seat to move")
    phase: Phase = _value(Phase.DRAW, "what the game waits for")
    knocker: int | None = _value(None, "the seat that knocked this hand")
    knock_turn: int | None = _value(None, "the turn on which the knock came (second_knock: "
                                    "the next turn may knock too)")
    pending: tuple[int, ...] = _value((), "seats dealt a 31 still to say whether they declare "
                                      "it (declare_31 'choice'), in turn order")
    declared: tuple[int, ...] = _value((), "seats that declared a dealt 31 so far")
    last_seat: int | None = _value(None, "after a knock: the seat whose discard ends the play")
    taken: int | None = _value(None, "card taken from the discard pile this turn (may not "
                               "go back)")
    drawn: int | None = _value(None, "card drawn this turn (from the stock or the pile)")

    def __init__(
        self,
        num_players: int = 3,
        rules: Rules | None = None,
        *,
        seed: int | None = None,
        rng: random.Random | None = None,
        deck: Sequence[int | str] | None = None,
        dealer: int | None = None,
        single_hand: bool = False,
        max_turns_per_hand: int | None = None,
    ) -> None:
        if isinstance(num_players, bool) or not isinstance(num_players, int):
            raise ValueError(f"num_players must be an int, got {num_players!r}")
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(
                f"num_players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {num_players}"
            )
        if max_turns_per_hand is not None and (
                type(max_turns_per_hand) is not int or max_turns_per_hand < 1):
            raise ValueError("max_turns_per_hand must be a positive int or None, got "
                             f"{short_repr(max_turns_per_hand)}")
        n = num_players
        self._begin(rules if rules is not None else Rules(), n, single_hand,
                    rng if rng is not None else random.Random(seed))
        if max_turns_per_hand is not None:
            self._turn_cap = max_turns_per_hand
        if dealer is None:
            dealer = self.rng.randrange(n)
        elif isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n:
            raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer!r}")
        self.dealer = dealer
        stacked = validate_deck(deck, self.rules) if deck is not None else None
        self._deal(stacked)

    def _begin(self, rules: Rules, num_players: int, single_hand: bool,
               rng: random.Random) -> None:
        """Every field at its value before the first deal (the defaults declared above)."""
        n = num_players
        self.rules = rules
        self.num_players = n
        self.single_hand = single_hand
        self.rng = rng
        self._table = value_table(rules)
        self._deck = rules.deck_cards
        self._declares = rules.declare_31 == "auto"
        self._points = rules.scoring == "points"
        self._golf = rules.play == "golf"
        self._turn_cap = _NO_CAP
        self.__dict__.update(_variation_hooks(rules))  # None where the standard game plays
        self.lives = [rules.start_lives] * n
        self._scores = [0] * n
        self._face_up = [0] * n
        self.active = [True] * n
        self.results = []
        self.hands = [[] for _ in range(n)]
        self.known = [0] * n
        self.looked = [True] * n
        self.quiet = [0] * n
        self.stock = []
        self.discard = []
        self.log = []
        self.__dict__.update(_INITIAL)  # one call, not a setattr per field

    @property
    def points(self) -> list[int]:
        """Points per seat in a points race (``rules.scoring == "points"``); zeros in every
        other game. The engine's own list: read it, do not change it."""
        return self._scores

    @property
    def face_up(self) -> list[int]:
        """Golf: per seat, bit ``i`` set when slot ``i`` (``hands[seat][i]``) is face up;
        zeros in every other game. The engine's own list: read it, do not change it."""
        return self._face_up

    # -- OpenSpiel-style interface ---------------------------------------------------------
    def is_terminal(self) -> bool:
        phase = self.phase
        return phase is _HAND_OVER or phase is _GAME_OVER

    def legal_actions(self) -> list[int]:
        """Sorted legal actions of the player to move (empty when the game is over)."""
        phase = self.phase
        if phase is _DISCARD:
            hand = self.hands[self.current_player]
            taken = self.taken
            if taken is None:
                return sorted(hand)
            return sorted([c for c in hand if c != taken])
        if phase is not _DRAW:  # a variation's decision, or the game is over
            play = self._phase_hooks.get(phase)
            return play.legal(self) if play is not None else []
        acts = []
        if self.stock:
            acts.append(DRAW_STOCK)
        if self.discard:
            acts.append(DRAW_DISCARD)
        if self._may_knock():
            acts.append(KNOCK)
        if not self.stock:
            acts.append(END_PLAY)
        if self._draw_call_hook is not None:
            acts += self._draw_call_hook.legal(self)  # the hammer, instead of drawing
        return acts

    def _may_knock(self) -> bool:
        """The standard game: a knock while nobody has knocked and the stock is not empty
        (002/000 "Draw pile exhausted": then only taking the discard or ending the play)."""
        if self._knock_hook is not None:
            return self._knock_hook(self)
        return self.knocker is None and bool(self.stock)

    def is_legal(self, action: int) -> bool:
        phase = self.phase
        if phase is _DISCARD:
            return 0 <= action < 52 and action != self.taken and action in self.hands[self.current_player]
        if phase is not _DRAW:
            play = self._phase_hooks.get(phase)
            return play is not None and action in play.legal(self)
        if action == DRAW_STOCK:
            return bool(self.stock)
        if action == DRAW_DISCARD:
            return bool(self.discard)
        if action == KNOCK:
            return self._may_knock()
        if action == END_PLAY:
            return not self.stock
        call = self._draw_call_hook
        return call is not None and action in call.legal(self)

    def apply_action(self, action: int) -> None:
        """Play one decision of the player to move. Illegal actions raise ``ValueError``."""
        if type(action) is not int:
            action = as_action(action)
        if not self.is_legal(action):
            self._raise_illegal(action)
        seat = self.current_player
        if action < 52:
            hand = self.hands[seat]
            hand.remove(action)
            self.discard.append(action)
            self.known[seat] &= ~(1 << action)
            self.log.append((seat, EV_DISCARD, action))
            self.taken = self.drawn = None
            a, b, c = hand
            if self._table[a * 2704 + b * 52 + c] >= THIRTY_ONE:
                if self._declares:
                    self._end_hand("thirty_one", declarers=(seat,))
                    return
                if self._new_31_hook is not None and self._new_31_hook(self, seat):
                    return  # a 31 by choice: declare it or keep quiet
            if seat == self.last_seat:
                self._end_hand("knock")
            else:
                self._next_turn(seat)
        elif action == DRAW_STOCK:
            card = self.stock.pop()
            self.hands[seat].append(card)
            self.drawn = card
            self.log.append((seat, EV_DRAW_STOCK, None))
            self.phase = self._drawn_phase
        elif action == DRAW_DISCARD:
            card = self.discard.pop()
            self.hands[seat].append(card)
            self.known[seat] |= 1 << card
            self.taken = self.drawn = card
            self.log.append((seat, EV_TAKE, card))
            self.phase = self._drawn_phase
        elif action == KNOCK:
            self.log.append((seat, EV_KNOCK, None))
            if self.knocker is not None:  # a second knock ends the play at once (Moyer)
                self._end_hand("second_knock")
                return
            self.knocker = seat
            self.knock_turn = self.turn
            self.last_seat = self._prev_active(seat)
            if not self.rules.knock_then_draw:
                self._next_turn(seat)
            # else the computer versions: the knocker goes on to draw and discard
        elif action == END_PLAY:
            self.log.append((seat, EV_END_PLAY, None))
            self._end_hand("stock_exhausted")
        else:
            self._apply_call(seat, action)

    def _apply_call(self, seat: int, action: int) -> None:
        """A variation's decision (checked legal), played by the family that offers it: in
        the draw phase the draw call (the hammer), else the phase's own."""
        phase = self.phase
        play = self._draw_call_hook if phase is _DRAW else self._phase_hooks[phase]
        play.apply(self, seat, action)

    def returns(self) -> list[float]:
        """Zero-sum game result: winner +1, everyone else -1/(n-1); zeros until the end,
        and for a game :attr:`cut` by the turn cap."""
        n = self.num_players
        if self.phase is not _GAME_OVER or self.turn >= self._turn_cap:
            return [0.0] * n
        win = self.winner
        return [1.0 if s == win else -1.0 / (n - 1) for s in range(n)]

    @property
    def cut(self) -> bool:
        """Whether the game ended because a hand reached ``max_turns_per_hand`` turns (see
        the module docstring): it is over, with no winner."""
        return self.phase is _GAME_OVER and self.turn >= self._turn_cap

    @property
    def winner(self) -> int | None:
        """The last player in, or in a points game the one player with the most points
        (at least ``points_to_win``); ``None`` until the game is over, and for a game
        :attr:`cut` by the turn cap."""
        if self.phase is not _GAME_OVER or self.turn >= self._turn_cap:
            return None
        if self._points:
            return self._scores.index(max(self._scores))
        return self.active.index(True)

    def clone(self) -> GameState:
        """An independent copy (for search): the same position and the same future deals.

        The rules and the value table are immutable and shared (a deep copy would
        duplicate the 140,608-entry table at every clone); the list fields are copied
        from the field table; the random generator gets the same state.
        """
        new = object.__new__(type(self))
        fields_ = self.__dict__.copy()
        for name in _COPIED:
            fields_[name] = fields_[name][:]
        for name in _COPIED_NESTED:
            fields_[name] = [inner[:] for inner in fields_[name]]
        rng = self.rng
        kind = type(rng)
        copy_rng = kind.__new__(kind)  # unseeded (seeding reads os.urandom): setstate sets it all
        copy_rng.setstate(rng.getstate())
        fields_["rng"] = copy_rng
        new.__dict__ = fields_
        return new

    @classmethod
    def from_parts(
        cls,
        rules: Rules,
        *,
        hands: Sequence[Sequence[int]],
        stock: Sequence[int],
        discard: Sequence[int],
        lives: Sequence[int],
        dealer: int,
        current_player: int,
        phase: Phase | str = Phase.DRAW,
        knocker: int | None = None,
        turn: int = 0,
        hand_number: int = 1,
        known: Sequence[Sequence[int]] | None = None,
        log: Sequence[tuple[int, str, int | None]] = (),
        taken: int | None = None,
        drawn: int | None = None,
        face_up: Sequence[int] | None = None,
        single_hand: bool = False,
        rng: random.Random | None = None,
    ) -> GameState:
        """A mid-hand state assembled from its parts, for search agents that determinise a
        :class:`~scat_env.view.PlayerView` (sample the hidden cards, then simulate).

        ``stock`` is listed top card LAST, like the engine's own list. The parts are
        checked (every card of the pack exactly once, hand sizes, seats) so that a sampling
        bug surfaces here rather than as a silently wrong simulation. Golf (``rules.play ==
        "golf"``) takes its phases, ``golf_draw`` and ``golf_place`` (the card drawn or taken
        held after the three slots, as ``drawn``, and ``taken`` when it came from the pile),
        and ``face_up``: per seat, bit ``i`` set when slot ``i`` is face up.
        """
        n = len(hands)
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(f"from_parts: {n} hands; need {MIN_PLAYERS}..{MAX_PLAYERS}")
        golf = rules.play == "golf"
        phases = ("golf_draw", "golf_place") if golf else ("draw", "discard")
        if phase not in phases:
            raise ValueError(f"from_parts: phase must be {' or '.join(map(repr, phases))}, "
                             f"got {phase!r}")
        if (face_up is not None) != golf or (face_up is not None and len(face_up) != n):
            raise ValueError(f"from_parts: golf takes face_up, {n} bit masks, and only golf")
        if len(lives) != n:
            raise ValueError(f"from_parts: {len(lives)} lives for {n} hands")
        cards = [c for h in hands for c in h] + list(stock) + list(discard)
        if sorted(cards) != sorted(rules.deck_cards):
            raise ValueError("from_parts: hands, stock and discard pile must hold every card "
                             "of the pack exactly once")
        for s in range(n):
            held = phase in ("discard", "golf_place") and s == current_player
            want = 0 if lives[s] <= 0 else (4 if held else 3)
            if len(hands[s]) != want:
                raise ValueError(f"from_parts: seat {s} holds {len(hands[s])} cards, expected {want}")
        if not 0 <= current_player < n or lives[current_player] <= 0:
            raise ValueError(f"from_parts: current_player {current_player} is not a seat still in")
        state = cls.__new__(cls)
        state._begin(rules, n, single_hand, rng if rng is not None else random.Random(0))
        state.lives = list(lives)
        state.active = [v > 0 for v in lives]
        state.hands = [list(h) for h in hands]
        for s, held in enumerate(known or ()):
            for c in held:
                state.known[s] |= 1 << c
        state.stock = list(stock)
        state.discard = list(discard)
        state.log = list(log)
        state.hand_number = hand_number
        state.turn = turn
        state.dealer = dealer
        state.current_player = current_player
        state.phase = Phase(phase)
        if golf:
            state.looked = [False] * n
            state._face_up = list(face_up)  # type: ignore[arg-type]
        state.taken = taken
        state.drawn = drawn
        state.knocker = knocker
        state.last_seat = state._prev_active(knocker) if knocker is not None else None
        if knocker is not None:
            # Turns start with a draw-phase decision; the knock's turn is how many of them
            # came before it (knock_then_draw: the knocker's own draw follows in that turn).
            starts = (EV_DRAW_STOCK, EV_TAKE, EV_KNOCK)
            kinds = [kind for _, kind, _ in log]
            if EV_KNOCK in kinds:
                state.knock_turn = sum(k in starts for k in kinds[: kinds.index(EV_KNOCK)])
            else:
                state.knock_turn = turn - 1
        return state

    def hand_value(self, seat: int) -> float:
        """Value of a seat's three-card hand (the best three of four mid-turn; a single
        card's points while sudden death may be called)."""
        hand = self.hands[seat]
        t = self._table
        if len(hand) == 3:
            a, b, c = hand
            return t[a * 2704 + b * 52 + c]
        if len(hand) == 4:
            return best_three(hand, t, self.taken if seat == self.current_player else None)
        return float(max((CARD_POINTS[c] for c in hand), default=0))  # sudden death, or out

    def active_seats(self) -> list[int]:
        return [s for s in range(self.num_players) if self.active[s]]

    # -- turn order ----------------------------------------------------------------------
    def _next_active(self, seat: int) -> int:
        n, active = self.num_players, self.active
        seat = (seat + 1) % n
        while not active[seat]:
            seat = (seat + 1) % n
        return seat

    def _prev_active(self, seat: int) -> int:
        n, active = self.num_players, self.active
        seat = (seat - 1) % n
        while not active[seat]:
            seat = (seat - 1) % n
        return seat

    def _next_turn(self, seat: int) -> None:
        self.current_player = self._next_active(seat)
        self.phase = _DRAW
        self.turn += 1
        if self.turn >= self._turn_cap:  # the hand is cut: the game ends, nobody wins
            self.phase = _GAME_OVER

    def _raise_illegal(self, action: object) -> None:
        legal = self.legal_actions()
        raise ValueError(
            f"illegal action {short_repr(action)} ({action_name(action)}) for player_{self.current_player} in the "
            f"{self.phase} phase; legal: "
            + (", ".join(f"{a} ({action_str(a)})" for a in legal) or "none, the game is over")
        )

    # -- dealing and scoring ---------------------------------------------------------------
    def _deal(self, stacked: list[int] | None = None) -> None:
        """Deal hands until one needs a decision (a dealt 31 is scored on the spot).

        Cards go one at a time, starting left of the dealer; the stock is what is left (top
        card at the END of the list). A variation may deal otherwise (the deal hook:
        sudden death stops after one card each)."""
        while True:
            if stacked is not None:
                deck, stacked = stacked, None
            else:
                deck = list(self._deck)
                shuffle(self.rng, deck)
            self.hand_number += 1
            n = self.num_players
            hands = self.hands
            for hand in hands:
                hand.clear()
            seats = self._seats_from_left()
            self.known = [0] * n
            self.looked = [True] * n
            self.quiet = [0] * n
            self.log = []
            self.knocker = self.knock_turn = self.last_seat = self.taken = self.drawn = None
            self.pending = self.declared = ()
            self.turn = 0
            if self._deal_hook is not None:
                self._deal_hook(self, deck, seats)
                return
            # One card at a time from the dealer's left: the k-th seat gets every m-th card.
            m = len(seats)
            pos = 3 * m
            for k, s in enumerate(seats):
                hands[s] += deck[k:pos:m]
            self.discard = [deck[pos]]  # the upcard
            self.stock = deck[:pos:-1]  # remaining cards, top (deck[pos+1]) at the end
            if self._after_deal(seats):
                return

    def _seats_from_left(self) -> tuple[int, ...]:
        """The players still in, from the dealer's left round to the dealer: the order of
        the deal and of the first round."""
        if all(self.active):
            return _FROM_LEFT[self.num_players][self.dealer]
        seats = []
        s = self.dealer
        for _ in range(sum(self.active)):
            s = self._next_active(s)
            seats.append(s)
        return tuple(seats)

    def _after_deal(self, seats: tuple[int, ...]) -> bool:
        """The dealt 31s, declared at once, then the first turn. ``False`` when a dealt 31
        ended the hand and the game goes on (deal again). ``seats``:
        :meth:`_seats_from_left`."""
        if self._after_deal_hook is not None:
            return self._after_deal_hook(self, seats)
        first = seats[0]
        self.current_player = first
        self.phase = _DRAW
        if self._declares:
            holders = self._dealt_31s(seats)
            if holders:
                self._end_hand("dealt_thirty_one", declarers=holders, deal_next=False)
                return self.phase is not _DRAW
        if self._play_start_hook is not None:  # the rest of _start_play
            self._play_start_hook(self, first)
        return True

    def _dealt_31s(self, seats: tuple[int, ...]) -> tuple[int, ...]:
        """The seats of ``seats`` dealt a 31, in the order of the deal: declared at once in
        the standard game, offered in turn with ``declare_31: choice``."""
        t = self._table
        hands = self.hands
        holders = []
        for s in seats:
            a, b, c = hands[s]
            if t[a * 2704 + b * 52 + c] >= THIRTY_ONE:
                holders.append(s)
        return tuple(holders)

    def _start_play(self, first: int) -> None:
        """The first turn (``first``: the seat on the dealer's left still in): the first
        draw, or a variation's call before it (the play-start hook: the throw-down)."""
        self.current_player = first
        self.phase = _DRAW
        if self._play_start_hook is not None:
            self._play_start_hook(self, first)

    def _end_hand(self, reason: str, declarers: tuple[int, ...] = (), deal_next: bool = True) -> None:
        """Score the hand: the hands are shown, the showdown or 31 rule of
        :mod:`scat_env.showdown` says who loses lives (a variation may score otherwise: the
        points race), the result is recorded and the next hand dealt (``deal_next``)."""
        active = self.active
        seats = _SEATS[self.num_players] if all(active) else tuple(self.active_seats())
        hands = self.hands
        # Plain loops, not comprehensions: Python 3.11 makes a function for each of those,
        # and a hand is scored every few decisions.
        values: dict[int, float] = {}
        held: dict[int, tuple[int, ...]] = {}
        if self._value_hook is None:
            t = self._table
            for s in seats:
                a, b, c = hands[s]
                values[s] = t[a * 2704 + b * 52 + c]
                held[s] = (a, b, c)
        else:  # a single card (sudden death), or a 31 kept quiet
            shown = self._value_hook
            for s in seats:
                values[s] = shown(self, s)
                held[s] = tuple(hands[s])
        values = FrozenDict(values)
        if self._score_hook is not None:
            self._score_hook(self, reason, declarers, deal_next, seats, values, held)
            return
        knocker = self.knocker
        if declarers:
            losses, rule = thirty_one_losses(seats, declarers, knocker, self.rules,
                                             dealt=reason == "dealt_thirty_one")
        else:
            losses, rule = knock_losses(values, knocker, self.rules)
        lives = self.lives
        applied = {}
        survivor = False
        for s in seats:
            lost, left = losses[s], lives[s]
            if lost >= left:
                lost = left
            else:
                survivor = True
            applied[s] = lost
        if self._lives_hook is not None:  # golf's bus
            applied, rule = self._lives_hook(self, seats, applied, rule)
            survivor = any(lives[s] > applied[s] for s in seats)
        if not survivor:
            # Everyone left would be out at once (002 Scoring: the all-on-the-county draw).
            applied, rule = all_out(seats, lives, self.rules)
        replayed = rule == "all_out_replay" or rule == "bus_tie_replay"
        eliminated = []
        for s in seats:
            lives[s] -= applied[s]
            if lives[s] <= 0:
                active[s] = False
                eliminated.append(s)
        self.results.append(_hand_result(
            hand_number=self.hand_number,
            dealer=self.dealer,
            reason=reason,
            values=values,
            hands=FrozenDict(held),
            lives_lost=FrozenDict(applied),
            knocker=knocker,
            declarers=declarers,
            eliminated=tuple(eliminated),
            replayed=replayed,
            lives_after=tuple(lives),
            rule=rule,
        ))
        self._next_hand(replayed, deal_next)

    def _next_hand(self, replayed: bool, deal_next: bool, over: bool = False) -> None:
        """After a scored hand: the game is over (one player left, or ``over``: a race
        won), the single hand is over, or the deal passes to the left among the players
        still in (a replayed hand is dealt again by the same dealer, if still in)."""
        if over or sum(self.active) <= 1:
            self.phase = _GAME_OVER
            return
        if self.single_hand:
            self.phase = _HAND_OVER
            return
        if not replayed or not self.active[self.dealer]:
            self.dealer = self._next_active(self.dealer)
        self.phase = _DRAW
        if deal_next:
            self._deal()


#: From the field table: the lists clone() copies, one level or two deep (``rng`` has its
#: own lines there), and the immutable fields' values before the deal.
_COPIED = tuple(f.name for f in fields(GameState) if f.metadata.get("clone") == "copy")
_COPIED_NESTED = tuple(f.name for f in fields(GameState) if f.metadata.get("clone") == "nested")
_INITIAL = {f.name: f.metadata["initial"] for f in fields(GameState) if "initial" in f.metadata}
