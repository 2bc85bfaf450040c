"""The plain words of a game of Scat: every event, hand end and standing, as both front ends
say it.

The terminal (``scat play``, ``scat replay``, ``scat watch``) and the browser game (``scat
serve``) tell a person the same things in the same words; they differ only in how the words
look. So the words are made here, once, as plain text, and each front end dresses them: the
terminal colours them (rich markup), the page lays them out. Where a line names cards, seats
or a knock, its function takes :class:`Marks`, the front end's way of dressing those pieces;
:data:`PLAIN` leaves them as they are, which is what the page and the saved reports get.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, HandResult, Phase, Rules
from scat_env.actions import GOLF_SLOTS, PLACE_SLOT, TURN_UP, action_str
from scat_env.cards import CARD_POINTS, CARD_RANK, CARD_SUIT, NUM_CARDS, card_str
from scat_env.rules import lives_label
from scat_env.showdown import rule_text

from .humanio import knock_effect, value_text


def card_text(card: int) -> str:
    """A card as the players say it: "7♣", "K♥"."""
    return card_str(card, symbols=True)


def as_is(text: str) -> str:
    """A piece left as it is (the page's dressing of every piece)."""
    return text


@dataclass(frozen=True)
class Marks:
    """How a front end dresses the pieces of a line: a ``card``, a seat's ``name``, a
    ``loud`` word (a knock) and any other ``text`` taken from elsewhere (the name of a call).
    The words around them are the same everywhere."""

    card: Callable[[int], str] = card_text
    name: Callable[[str], str] = as_is
    loud: Callable[[str], str] = as_is
    text: Callable[[str], str] = as_is


#: The pieces left as they are: the page's and the plain logs' words.
PLAIN = Marks()


def golf_move_text(action: int, hand_before: Sequence[int],
                   card: Callable[[int], str] = card_text,
                   *, past: bool = True) -> str:
    """A golf move in words, naming its cards: "put the Q♣ in slot 1, the 2♥ that lay there
    to the pile", "discarded the 5♦ and turned up the J♠ in slot 2".

    ``hand_before`` is the mover's three slots and the card it holds, before the move. Both
    cards the words name are face up once the move is made (the card placed and the one it
    replaced, or the card discarded and the one turned up), so the line tells every seat
    only what the table sees. ``card`` formats a card (markup on the game screen, plain in
    ``scat watch``); ``past=False`` words it as an order ("discard the 5♦ and turn up ...").
    """
    held = hand_before[GOLF_SLOTS]
    if PLACE_SLOT <= action < PLACE_SLOT + GOLF_SLOTS:
        slot = action - PLACE_SLOT
        return (f"put the {card(held)} in slot {slot + 1}, the {card(hand_before[slot])} "
                "that lay there to the pile")
    if not TURN_UP <= action < TURN_UP + GOLF_SLOTS:
        raise ValueError(f"not a golf slot action: {action_str(action)}")
    slot = action - TURN_UP
    discard, turn = ("discarded", "turned") if past else ("discard", "turn")
    return (f"{discard} the {card(held)} and {turn} up the {card(hand_before[slot])} "
            f"in slot {slot + 1}")


def is_golf_move(action: int) -> bool:
    """A golf slot action (:data:`~scat_env.actions.PLACE_SLOT` or
    :data:`~scat_env.actions.TURN_UP` and the slots after them)."""
    return PLACE_SLOT <= action < TURN_UP + GOLF_SLOTS

def action_text(seat: int, action: int, names: Sequence[str], top_before: int | None,
                hand_before: Sequence[int] | None = None, marks: Marks = PLAIN) -> str:
    """A log line in plain words: "Bob drew from the stock", "You took the K♥".

    ``hand_before``, the mover's cards before a golf move (its slots and the card held),
    lets the line name the cards the move turned face up (:func:`golf_move_text`)."""
    who = marks.name(names[seat])
    if hand_before is not None and is_golf_move(action):
        return f"{who} {golf_move_text(action, hand_before, marks.card)}"
    if action == DRAW_STOCK:
        return f"{who} drew from the stock"
    if action == DRAW_DISCARD:
        card = marks.card(top_before) if top_before is not None else "the top card"
        return f"{who} took the {card}"
    if action == KNOCK:
        return f"{who} {marks.loud('knocked!')}"
    if action == END_PLAY:
        return f"{who} ended the play (the stock is exhausted)"
    if action >= NUM_CARDS:  # a call some rules offer: a hammer, a throw-down, a pass...
        return f"{who} chose: {marks.text(action_str(action))}"
    return f"{who} discarded the {marks.card(action)}"


def knock_text(name: str, rules: Rules, *, second: bool, mine: bool) -> str:
    """A knock as the page's log says it: what it does to the hand ("You knocked: ...",
    "Bob knocked too: the play ends at once, showdown.")."""
    if mine:
        return f"You knocked: {knock_effect(rules, second)}."
    if second:
        return f"{name} knocked too: the play ends at once, showdown."
    then = "they draw and discard, then " if rules.knock_then_draw else ""
    return f"{name} knocked: {then}everyone else gets one more turn, then the showdown."


#: What a pass means in each phase that offers one.
_PASSES = {
    Phase.BLIND: "looked at the cards (no throw-down).",
    Phase.SUDDEN_DEATH: "dealt on (no sudden death).",
    Phase.DECLARE: "kept the 31 quiet (it counts 30 from now on).",
}


def pass_text(name: str, phase: Phase) -> str:
    """A seat passing on a call: "Bob: dealt on (no sudden death)."."""
    return f"{name}: " + _PASSES.get(phase, "passed.")


def golf_place_text(name: str, slot: int, card: int, discarded: int) -> str:
    """Golf: the card held put face up in a slot (numbered from 1, as the menu numbers
    them), the card that lay there sent to the pile."""
    return (f"{name} put the {card_text(card)} in slot {slot + 1} and "
            f"discarded the {card_text(discarded)} that lay there.")


def golf_turn_up_text(name: str, slot: int, card: int, discarded: int) -> str:
    """Golf: the card drawn discarded, and the slot's card turned face up."""
    return (f"{name} discarded the {card_text(discarded)} and turned up the "
            f"{card_text(card)} in slot {slot + 1}.")


def game_over_text(winner: int | None, you: int, names: Sequence[str]) -> str:
    """The game's last line: "You win!", "Bob wins the game."."""
    if winner == you:
        return "You win!"
    return f"{names[winner]} wins the game." if winner is not None else "The game is over."


def standing_text(rules: Rules, lives: int) -> str:
    """A seat's lives in the preset's words; in a race to points nobody loses a life, so
    only whether the seat is still in ("in the race"): its points say the rest."""
    if rules.scoring == "points":
        return lives_label(rules, lives)
    return lives_text(rules, lives)


def takeover_text(name: str, label: str, spec: str, what: str) -> str:
    """A seat whose agent broke, taken over: the seat and its new agent, never the move that
    broke (an engine error lists the seat's legal moves: its cards)."""
    who = f"{name} ({label})" if label else name
    return f"{who} {what}; the {spec} agent plays that seat from here on. Your game goes on."


def counting_cards(cards: Sequence[int]) -> list[int]:
    """The cards of ``cards`` that count under the poker tie-break, highest first: those of
    the best suit, by points then by ranks (the order :func:`scat_env.scoring.poker_fraction`
    compares)."""
    suits = {CARD_SUIT[c] for c in cards}
    best = max(suits, key=lambda suit: (
        sum(CARD_POINTS[c] for c in cards if CARD_SUIT[c] == suit),
        sorted((CARD_RANK[c] for c in cards if CARD_SUIT[c] == suit), reverse=True)))
    return sorted((c for c in cards if CARD_SUIT[c] == best), key=lambda c: -CARD_RANK[c])


def deal_text(names: Sequence[str], hand_number: int, dealer: int) -> str:
    """The rule line that opens a hand: "Hand 3 · Bob deals" / "Hand 2 · You deal"."""
    verb = "deal" if names[dealer] == "You" else "deals"
    return f"Hand {hand_number} · {names[dealer]} {verb}"


def lives_text(rules: Rules, lives: int, *, short: bool = False) -> str:
    """A player's lives as a count, in the preset's own words.

    "3 pennies, 4 lives left" (the county life counts too), "on the county, 1 life left",
    "standing at the back, 4 stops left", "GI, 1 life left"; ``short`` keeps only the count
    ("4 lives left"), for a table that would not fit the terminal otherwise.
    """
    label = lives_label(rules, lives)
    if lives <= 0:
        return label
    count = f"{lives_count(rules, lives)} left"
    if short or label == count:
        return count
    if label.startswith(f"{lives} "):  # "3 pennies" with 3 lives: the words are the count
        return label
    return f"{label}, {count}"


def points_text(rules: Rules, points: int) -> str:
    """A score in a race to points: "12 of 31 points"."""
    return f"{points} of {rules.points_to_win} point{'s' if rules.points_to_win != 1 else ''}"


def lives_count(rules: Rules, n: int) -> str:
    """``n`` lives in the preset's unit: "1 life", "3 lives"; on the bus, "3 stops"."""
    one, many = ("stop", "stops") if rules.lives_name == "bus" else ("life", "lives")
    return f"{n} {one if n == 1 else many}"


def names_list(seats: Sequence[int], names: Sequence[str]) -> str:
    items = [names[s] for s in seats]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def explain_result(result: HandResult, rules: Rules, names: Sequence[str]) -> list[str]:
    """Who lost what, and the rule that applied in plain words (from the engine, which
    names the rule it scored the hand by: :func:`scat_env.showdown.rule_text`)."""
    by_loss: dict[int, list[int]] = {}
    for s, lost in sorted(result.lives_lost.items()):
        if lost:
            by_loss.setdefault(lost, []).append(s)
    paid = [
        f"{names_list(seats, names)} "
        f"{'lose' if len(seats) > 1 or names[seats[0]] == 'You' else 'loses'} "
        f"{lives_count(rules, lost)}"
        for lost, seats in sorted(by_loss.items(), reverse=True)
    ]
    lines = [rule_text(result.rule, rules)]
    if paid:
        lines.append("; ".join(paid) + ".")
    for s in result.eliminated:
        lines.append(f"{names[s]} {'are' if names[s] == 'You' else 'is'} out of the game.")
    return lines


def scored_text(result: HandResult, rules: Rules, names: Sequence[str]) -> str:
    """Who scored in a hand of a race to points, and where they stand: "Alice scores a
    point (12 of 31 points)."; the race's winner named. Empty for a hand of a lives game."""
    if not result.points_after:
        return ""
    parts = []
    for s, won in sorted(result.points_won.items()):
        if won:
            verb = "score" if names[s] == "You" else "scores"
            what = "a point" if won == 1 else f"{won} points"
            parts.append(f"{names[s]} {verb} {what} "
                         f"({points_text(rules, result.points_after[s])})")
    text = ("; ".join(parts) + ".") if parts else "Nobody scores."
    if result.race_winner is not None:
        who = result.race_winner
        text += f" {names[who]} {'win' if names[who] == 'You' else 'wins'} the race."
    return text


def tie_break_text(result: HandResult, rules: Rules, names: Sequence[str]) -> str:
    """Where the poker tie-break (``poker_tiebreak``, 002 Jeffrey Jacobs) told apart hands
    of equal points at the level that decided the hand, in words: "Tied at 30, told apart
    as in poker by the cards that count: A♥ 10♥ 9♥ (You) beats K♠ Q♠ J♠ (Bob)." Empty
    where it decided nothing: other rules, a declared 31, no tie.

    The deciding level is the highest hand in a race and under gin's knock, the lowest in
    a lives game.
    """
    if not rules.poker_tiebreak or result.declarers or len(result.values) < 2:
        return ""
    values = result.values
    high = rules.scoring == "points" or rules.knock_mode == "gin"
    points = int(max(values.values()) if high else min(values.values()))
    tied = sorted((s for s, v in values.items() if int(v) == points),
                  key=lambda s: (-values[s], s))
    if len(tied) < 2 or values[tied[0]] == values[tied[-1]]:
        return ""
    text = ""
    for i, s in enumerate(tied):
        if i:
            text += " ties with " if values[s] == values[tied[i - 1]] else " beats "
        shown = " ".join(card_str(c, symbols=True) for c in counting_cards(result.hands[s]))
        text += f"{shown} ({names[s]})"
    return f"Tied at {points}, told apart as in poker by the cards that count: {text}."


@dataclass(frozen=True)
class ShowdownRow:
    """One seat's line of a showdown in plain words: the terminal colours it, ``scat
    watch`` prints it as it is."""

    seat: int
    knocked: bool
    hand: tuple[int, ...] | None  # sorted; None: the hand was not shown (after a 31)
    value: str  # as the players count it (:func:`value_text`); "" when not shown
    change: int  # points scored in a race, lives lost otherwise
    standing: str  # after the hand: "12 of 31 points", "2 pennies, 3 lives left"
    mark: str  # "best": the hand that scored (a race, a 31); "worst": one that paid; ""
    out: bool  # no lives left after the hand


def showdown_rows(result: HandResult, rules: Rules) -> list[ShowdownRow]:
    """The seats dealt into the hand, in seat order, as :func:`showdown_view` shows them.

    In a race to points the change is what each seat scored and the standing its points;
    in a lives game, the lives lost and the lives left. The hands marked are the ones the
    rule acted on: the scorers and declarers (``best``), those who paid (``worst``)."""
    race = bool(result.points_after)
    rows = []
    for s in sorted(result.lives_lost):
        shown = s in result.hands
        if race:
            change = result.points_won.get(s, 0)
            standing = points_text(rules, result.points_after[s])
            mark = "best" if change else ""
        else:
            change = result.lives_lost.get(s, 0)
            standing = lives_text(rules, result.lives_after[s])
            mark = "best" if s in result.declarers else "worst" if change and shown else ""
        rows.append(ShowdownRow(
            seat=s,
            knocked=s == result.knocker,
            hand=tuple(sorted(result.hands[s])) if shown else None,
            value=value_text(result.values[s], rules) if shown else "",
            change=change,
            standing=standing,
            mark=mark,
            out=not race and result.lives_after[s] <= 0,
        ))
    return rows


def showdown_explained(result: HandResult, rules: Rules, names: Sequence[str]) -> list[str]:
    """The lines under a showdown's table: the rule and who paid (:func:`explain_result`),
    who scored in a race (:func:`scored_text`), and where the poker tie-break decided
    (:func:`tie_break_text`)."""
    lines = explain_result(result, rules, names)
    lines += [t for t in (scored_text(result, rules, names),
                          tie_break_text(result, rules, names)) if t]
    return lines


def finishing_order(results: Sequence[HandResult], num_players: int,
                    winner: int | None) -> dict[int, int]:
    """Place of each seat (1 = winner); players knocked out by the same hand share a place."""
    places: dict[int, int] = {}
    out_by_hand = [r.eliminated for r in results if r.eliminated]
    place = num_players
    for group in out_by_hand:  # earliest eliminations take the worst places
        for s in group:
            places[s] = place - len(group) + 1
        place -= len(group)
    if winner is not None:
        places[winner] = 1
    return places


def race_places(results: Sequence[HandResult], num_players: int,
                winner: int | None) -> dict[int, int]:
    """Place of each seat in a race to points: nobody goes out, so the final points rank
    them, ties sharing a place, the race's winner first."""
    final = results[-1].points_after if results else (0,) * num_players
    return {s: 1 if s == winner else 1 + sum(1 for t in range(num_players)
                                              if final[t] > final[s] or t == winner)
            for s in range(num_players)}


def final_places(results: Sequence[HandResult], num_players: int,
                 winner: int | None) -> list[int | None]:
    """Each seat's place at the end of the game (1 = the winner), by seat: in a lives game
    the seats that went out later finish higher, those knocked out by the same hand sharing
    a place; in a race to points (nobody goes out) the final points rank them, ties sharing
    a place. ``None`` for a seat no rule places."""
    race = bool(results and results[-1].points_after)
    ranked = (race_places if race else finishing_order)(results, num_players, winner)
    return [ranked.get(s) for s in range(num_players)]


@dataclass(frozen=True)
class GameNumbers:
    """The game in numbers, and one seat's record in it: what the end-of-game summary says,
    counted once for the terminal's panel and the page's summary alike.

    ``hands_played`` counts the hands the seat was dealt in; ``hands_lost`` those that cost
    it a life (in a race to points: those it was dealt in and scored nothing);
    ``knocks_won`` of the hands its knock ended, those it scored in (a race) and
    ``knocks_hurt`` those that cost it a life.
    """

    hands: int
    thirty_ones: int
    knocks: int
    race: bool
    places: list[int | None]
    hands_played: int
    hands_lost: int
    hands_scored: int
    lives_lost: int
    your_31s: int
    your_knocks: int
    knocks_ended: int
    knocks_won: int
    knocks_hurt: int
    points: int | None


def game_numbers(results: Sequence[HandResult], seat: int, num_players: int,
                 winner: int | None, knocks: Sequence[int]) -> GameNumbers:
    """:class:`GameNumbers` of a finished game for ``seat``. ``knocks`` lists the knocking
    seat of every knock made (from the decisions): a hand result names only the knock that
    ended it."""
    race = bool(results and results[-1].points_after)
    dealt = [r for r in results if seat in r.lives_lost]
    ended = [r for r in results if r.knocker == seat]
    if race:
        lost = sum(1 for r in dealt if not r.points_won.get(seat))
    else:
        lost = sum(1 for r in results if r.lives_lost.get(seat, 0))
    return GameNumbers(
        hands=len(results),
        thirty_ones=sum(1 for r in results if r.reason in ("thirty_one", "dealt_thirty_one")),
        knocks=len(knocks),
        race=race,
        places=final_places(results, num_players, winner),
        hands_played=len(dealt),
        hands_lost=lost,
        hands_scored=sum(1 for r in results if r.points_won.get(seat, 0)),
        lives_lost=sum(r.lives_lost.get(seat, 0) for r in results),
        your_31s=sum(1 for r in results if seat in r.declarers),
        your_knocks=sum(1 for s in knocks if s == seat),
        knocks_ended=len(ended),
        knocks_won=sum(1 for r in ended if r.points_won.get(seat, 0)),
        knocks_hurt=sum(1 for r in ended if r.lives_lost.get(seat, 0)),
        points=results[-1].points_after[seat] if race else None,
    )
