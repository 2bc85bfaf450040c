"""What a person types at their turn, turned into a legal action or a clear complaint.

The human player sees a short numbered menu of their legal moves and may also type natural
shortcuts: ``s`` (draw from the stock), ``d`` (take the top discard), ``k`` (knock), ``e``
(end the play once the stock is exhausted), or a card such as ``7c``, ``7♣`` or ``10h`` to
discard it. ``?`` asks for help, ``h`` for a hint, ``q`` to quit (and save).

Everything here is pure: :func:`parse_command` reads one line against the player's
:class:`~scat_env.PlayerView` and either returns a :class:`Command` or raises
:class:`InputError` whose message says what was wrong in the game's own words. Nothing a
person types can reach the engine unless it is a legal action, so bad input never costs a
game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scat_env import (
    DRAW_DISCARD,
    DRAW_STOCK,
    END_PLAY,
    KNOCK,
    PlayerView,
    Rules,
    card_str,
    parse_card,
)
from scat_env.actions import GOLF_SLOTS, PLACE_SLOT, TURN_UP, action_short, action_str
from scat_env.cards import NUM_CARDS
from scat_env.render import value_text as _value_text
from scat_env.scoring import value_of

#: Meta commands that do not change the game.
HELP, HINT, QUIT, MENU = "help", "hint", "quit", "menu"

_META_WORDS = {
    "?": HELP, "help": HELP, "rules": HELP,
    "h": HINT, "hint": HINT,
    "q": QUIT, "quit": QUIT, "exit": QUIT,
    "m": MENU, "menu": MENU, "": MENU,
}

_ACTION_WORDS = {
    "s": DRAW_STOCK, "stock": DRAW_STOCK, "draw": DRAW_STOCK,
    "d": DRAW_DISCARD, "take": DRAW_DISCARD, "pile": DRAW_DISCARD, "discard pile": DRAW_DISCARD,
    "k": KNOCK, "knock": KNOCK,
    "e": END_PLAY, "end": END_PLAY,
}

#: The shortcut letter shown in the menu for each non-discard action.
ACTION_KEYS = {DRAW_STOCK: "s", DRAW_DISCARD: "d", KNOCK: "k", END_PLAY: "e"}


class InputError(ValueError):
    """The line typed cannot be played now; the message says why and what to do instead,
    in one line that fits an 80-column terminal after the screen's mark (at most
    :data:`MAX_ERROR` characters, whatever was typed)."""


#: The longest complaint: an 80-column row less the screen's "✗ " in front of it.
MAX_ERROR = 78
#: Characters of a typed line quoted back in a complaint (a pasted paragraph is not).
MAX_ECHO = 16


def echo(text: str, quoted: bool = True) -> str:
    """What the person typed, for a complaint: quoted (control characters escaped) and cut
    to :data:`MAX_ECHO` characters, so the complaint stays on one line."""
    shown = repr(text) if quoted else text
    if len(shown) > MAX_ECHO:
        shown = shown[:MAX_ECHO - 4] + ("...'" if quoted else "...")
    return shown


def short_name(name: str, limit: int = 12) -> str:
    """A player's name cut to ``limit`` characters for a one-line complaint."""
    return name if len(name) <= limit else name[:limit - 1] + "…"


@dataclass(frozen=True)
class Command:
    """One parsed line: a legal ``action`` (``kind == "action"``) or a meta ``kind``."""

    kind: str
    action: int | None = None


@dataclass(frozen=True)
class MenuOption:
    """One numbered line of the move menu."""

    number: int
    key: str  # the shortcut that also plays it ("s", "d", or the card like "7C")
    action: int
    label: str  # plain text; the screen adds colour


def sym(card: int) -> str:
    return card_str(card, symbols=True)


#: A hand's value as the players count it (:func:`scat_env.render.value_text`; the ranks that
#: tell equal hands apart are said by :func:`scat_session.words.tie_break_text`).
value_text = _value_text


def _hand_text(cards: Sequence[int]) -> str:
    return " ".join(sym(c) for c in cards)


def menu_options(view: PlayerView) -> list[MenuOption]:
    """The numbered menu of ``view``'s legal moves, in a stable order a person can learn.

    Discard options say what the hand would be worth afterwards, the one number a player
    actually needs to choose a discard.
    """
    options: list[MenuOption] = []
    legal = view.legal_actions
    if view.phase == "draw":
        labels = {
            DRAW_STOCK: f"Draw from the stock ({view.stock_size} left)",
            DRAW_DISCARD: (
                f"Take the {sym(view.top_discard)} from the discard pile"
                if view.top_discard is not None else "Take the top discard"
            ),
            KNOCK: f"Knock ({knock_effect(view.rules, view.knocker is not None)})",
            END_PLAY: "End the play (the stock is exhausted): showdown now",
        }
        for action in (DRAW_STOCK, DRAW_DISCARD, KNOCK, END_PLAY):
            if action in legal:
                options.append(
                    MenuOption(len(options) + 1, ACTION_KEYS[action], action, labels[action])
                )
    elif view.phase == "discard":
        for card in view.hand:
            if card not in legal:
                continue
            keep = [c for c in view.hand if c != card]
            value = value_of(keep, view.rules)
            label = (f"Discard {sym(card)}  -> keep {_hand_text(keep)} = "
                     f"{value_text(value, view.rules)}")
            if card == view.drawn_card:
                label += "  (the card you drew)"
            options.append(MenuOption(len(options) + 1, card_str(card), card, label))
    # The calls some rules offer (a hammer, a throw-down, sudden death, declaring 31, or
    # passing on them) and golf's slot moves: listed by their own words, typed by their
    # short names.
    listed = {o.action for o in options}
    golf = _golf_labels(view)
    for action in legal:
        if action >= NUM_CARDS and action not in listed:
            options.append(MenuOption(len(options) + 1, action_short(action), action,
                                      golf.get(action) or action_str(action).capitalize()))
    return options


def _golf_labels(view: PlayerView) -> dict[int, str]:
    """Golf's menu in the cards' own names: "Take the Q♣ from the discard pile", "Put the
    7♥ in face-down slot 2" (the card held, which this seat has seen). Empty elsewhere."""
    if view.phase == "golf_draw":
        labels = {DRAW_STOCK: f"Draw from the stock ({view.stock_size} left)"}
        if view.top_discard is not None:
            labels[DRAW_DISCARD] = f"Take the {sym(view.top_discard)} from the discard pile"
        return labels
    if view.phase != "golf_place":
        return {}
    held = view.drawn_card if view.drawn_card is not None else view.taken_card
    if held is None:
        return {}
    labels = {}
    for i in range(GOLF_SLOTS):
        labels[PLACE_SLOT + i] = f"Put the {sym(held)} in face-down slot {i + 1}"
        labels[TURN_UP + i] = f"Discard the {sym(held)} and turn slot {i + 1} face up"
    return labels


def knock_effect(rules: Rules, second: bool = False) -> str:
    """What a knock does under ``rules``, in words: the terminal's menu and its "You
    knocked!" line. ``second``: the knock of the player after the knocker (Doug Moyer's
    second knock), which ends the play at once."""
    if second:
        return "you knock too: the play ends at once, showdown"
    then = "then draw and discard; " if rules.knock_then_draw else ""
    unless = ", unless the next player knocks too" if rules.second_knock else ""
    return f"{then}everyone else gets one more turn{unless}, then the showdown"


def _why_not_knock(view: PlayerView, names: Sequence[str]) -> str:
    """The rule that forbids a knock right now (the engine only says it is illegal); the
    checks follow the engine's own order (``scat_env.variants.knocking.engine.may_knock``)."""
    rules = view.rules
    if view.phase == "discard":
        return "You can only knock instead of drawing, at the start of your turn."
    if view.knocker is not None:
        who = "You" if view.knocker == view.seat else short_name(names[view.knocker])
        if rules.second_knock:
            return f"{who} already knocked; only the next player after the knocker may."
        return f"{who} already knocked this hand; there is only one knock per hand."
    if not rules.first_turn_knock and view.turn < sum(view.active):
        return "These rules allow no knock on a player's first turn."
    if view.stock_size == 0 and not rules.knock_when_stock_exhausted:
        return "These rules do not allow a knock once the stock is exhausted."
    value = value_of(list(view.hand), rules)
    if rules.min_knock and value < rules.min_knock:
        return (f"These rules need a hand of at least {rules.min_knock} to knock; yours is "
                f"{value_text(value, rules)}.")
    if rules.knock_needs_flush:
        return "These rules need three cards of one suit to knock."
    return "You cannot knock now."


def _call_choices(view: PlayerView) -> str:
    """The answer to anything typed in a call phase (throw down or look, sudden death or
    deal on, declare 31 or keep quiet) that is not one of its choices."""
    listed = " or ".join(_keys_said([o.key for o in menu_options(view)]))
    return f"That is not a choice now. Choose {listed}, or its number."


def _keys_said(keys: Sequence[str]) -> list[str]:
    """Menu keys for one line: golf's numbered slots said once each ("place1/2/3"), so
    the six moves of a golf turn fit a row."""
    groups: dict[str, list[str]] = {}
    for key in keys:
        stem = key.rstrip("0123456789")
        groups.setdefault(stem, []).append(key[len(stem):])
    return [stem + "/".join(ends) for stem, ends in groups.items()]


def parse_command(text: str, view: PlayerView, names: Sequence[str] | None = None) -> Command:
    """Read one typed line at the human's turn. Raises :class:`InputError` if it cannot be
    played, with a message that names the problem and the way forward."""
    names = list(names) if names else [f"player_{s}" for s in range(view.num_players)]
    raw = text.strip()
    word = raw.lower()
    if word in _META_WORDS:
        return Command(_META_WORDS[word])
    legal = view.legal_actions
    if not legal:
        raise InputError("It is not your turn.")
    options = menu_options(view)

    if word.isdigit():
        number = int(word)
        for opt in options:
            if opt.number == number:
                return Command("action", opt.action)
        raise InputError(
            f"There is no option {echo(word, quoted=False)}; choose 1-{len(options)} from the menu."
        )

    for opt in options:
        if opt.action >= NUM_CARDS and word == opt.key:  # a call, by its short name
            return Command("action", opt.action)

    if word in _ACTION_WORDS:
        action = _ACTION_WORDS[word]
        if action in legal:
            return Command("action", action)
        raise InputError(_why_not(action, view, names))
    if view.phase not in ("draw", "discard"):  # a call phase: its choices, nothing else
        raise InputError(_call_choices(view))

    try:
        card = parse_card(raw)
    except ValueError:
        raise InputError(
            f"I don't understand {echo(raw)}: type a menu number, a card like 7c, or ?."
        ) from None
    return Command("action", _discard_or_explain(card, view))


def _why_not(action: int, view: PlayerView, names: Sequence[str]) -> str:
    if view.phase not in ("draw", "discard"):
        return _call_choices(view)
    if action == KNOCK:
        return _why_not_knock(view, names)
    if view.phase == "discard":
        return (f"You have drawn already; now discard a card (e.g. "
                f"{card_str(view.hand[0]).lower()}) or type its number.")
    if action == DRAW_STOCK:
        return "The stock is exhausted: take the top discard (d) or end the play (e)."
    if action == DRAW_DISCARD:
        return "The discard pile is empty: draw from the stock (s)."
    if action == END_PLAY:
        return (f"The stock still has {view.stock_size} card"
                f"{'s' if view.stock_size != 1 else ''}; end the play once it is exhausted.")
    return "That move is not allowed now."


def _discard_or_explain(card: int, view: PlayerView) -> int:
    if view.phase == "draw":
        return _raise(
            f"Draw first: the stock (s) or the discard pile (d), then "
            f"discard{' the ' + sym(card) if card in view.hand else ''}."
        )
    if card not in view.hand:
        return _raise(f"You don't hold the {sym(card)}. Your cards: {_hand_text(view.hand)}.")
    if card == view.taken_card:
        return _raise(
            f"You just took the {sym(card)} from the pile: you may not put it straight back."
        )
    if card not in view.legal_actions:  # pragma: no cover - the two checks above cover it
        return _raise(f"You cannot discard the {sym(card)} now.")
    return card


def _raise(message: str) -> int:
    raise InputError(message)


def yes(text: str) -> bool:
    """A confirmation answer: ``y``/``yes`` (any case) means yes, anything else no."""
    return text.strip().lower() in ("y", "yes")
