"""The terminal screen of ``scat play`` and ``scat replay``, drawn with rich.

Every function here turns game facts (a :class:`~scat_env.PlayerView`, a
:class:`~scat_env.HandResult`) into rich renderables or markup strings; none of them reads
input or touches the engine. The play and replay loops decide *when* to print, this module
decides *how it looks*, so both commands show a game the same way.

Colour is optional: :func:`make_console` with ``color=False`` (``--no-color``, or the
``NO_COLOR`` environment variable) prints plain text with no escape codes at all, which is
what the terminal tests read and what ``docs/PLAY.md`` captures.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, HandResult, PlayerView, Rules
from scat_env.actions import GOLF_SLOTS, HAMMER, PLACE_SLOT, TURN_UP, action_str
from scat_env.cards import CARD_POINTS, CARD_RANK, CARD_SUIT, NUM_CARDS, card_str
from scat_env.rules import lives_label
from scat_env.scoring import value_of

from .humanio import MenuOption, value_text

RED_SUITS = (1, 2)  # diamonds, hearts
OPPONENT_NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan")


def make_console(color: bool = True, width: int | None = None,
                 height: int | None = None) -> Console:
    """A console for the game screen; ``color=False`` (or ``NO_COLOR``) emits no escapes.
    ``width`` and ``height`` default to the terminal's (80x25 when output is not one)."""
    if os.environ.get("NO_COLOR"):
        color = False
    return Console(
        color_system="auto" if color else None,
        highlight=False,
        emoji=False,
        width=width,
        height=height,
    )


def default_names(num_players: int, human_seat: int | None = 0) -> list[str]:
    """``You`` at the human's seat, friendly names for the others."""
    names, others = [], iter(OPPONENT_NAMES)
    for s in range(num_players):
        names.append("You" if s == human_seat else next(others))
    return names


# -- cards --------------------------------------------------------------------------------
def card_markup(card: int) -> str:
    """A card as markup: bold, red for hearts and diamonds."""
    style = "bold red" if CARD_SUIT[card] in RED_SUITS else "bold"
    return f"[{style}]{card_str(card, symbols=True)}[/]"


def cards_markup(cards: Sequence[int], mark: int | None = None) -> str:
    """Cards separated by spaces; ``mark`` gets an asterisk (the card just drawn)."""
    parts = []
    for c in cards:
        text = card_markup(c)
        if c == mark:
            text += "[dim]*[/]"
        parts.append(text)
    return " ".join(parts) or "-"


def golf_move_text(action: int, hand_before: Sequence[int],
                   card: Callable[[int], str] = lambda c: card_str(c, symbols=True),
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


def action_markup(seat: int, action: int, names: Sequence[str], top_before: int | None,
                  hand_before: Sequence[int] | None = None) -> str:
    """A log line in plain words: "Bob drew from the stock", "You took the K♥".

    ``hand_before``, the mover's cards before a golf move (its slots and the card held),
    lets the line name the cards the move turned face up (:func:`golf_move_text`)."""
    who = f"[bold]{escape(names[seat])}[/]"
    if hand_before is not None and is_golf_move(action):
        return f"{who} {golf_move_text(action, hand_before, card_markup)}"
    if action == DRAW_STOCK:
        return f"{who} drew from the stock"
    if action == DRAW_DISCARD:
        card = card_markup(top_before) if top_before is not None else "the top card"
        return f"{who} took the {card}"
    if action == KNOCK:
        return f"{who} [bold yellow]knocked![/]"
    if action == END_PLAY:
        return f"{who} ended the play (the stock is exhausted)"
    if action >= NUM_CARDS:  # a call some rules offer: a hammer, a throw-down, a pass...
        return f"{who} chose: {escape(action_str(action))}"
    return f"{who} discarded the {card_markup(action)}"


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


# -- the table ----------------------------------------------------------------------------
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


#: What each kind of agent is, in words a person at the table knows: a policy from any
#: trainer is a "trained AI" (which trainer made it is the saved game's business), a
#: search a "search AI", the rule-based players by what they do.
AGENT_KIND_LABELS = {"ppo": "trained AI", "compact": "trained AI", "sb3": "trained AI",
                     "rllib": "trained AI", "ismcts": "search AI", "expert": "expert",
                     "greedy": "greedy", "random": "random"}


def agent_label(spec: str) -> str:
    """What an opponent is, in plain words, for "Alice (trained AI)": both front ends show
    this beside a name (the terminal's table and the browser's). The full spec, paths and
    options included, is left to the saved game and the start line."""
    if spec == "human":
        return ""
    kind, _, arg = spec.partition(":")
    if kind == "threshold":
        return "never knocks" if arg == "never" else f"knocks at {arg[:4]}"
    return AGENT_KIND_LABELS.get(kind, kind[:12])


def seats_by_spec(players: Sequence[tuple[str, str]]) -> str:
    """``(name, spec)`` pairs as "Alice and Bob: trained AI (ppo:scat_ppo_set); Carol:
    expert": each spec once, after the names of its seats (six copies of a long policy path
    do not fit a line), in plain words (:func:`agent_label`) with the spec that rebuilds it."""
    by_spec: dict[str, list[str]] = {}
    for name, spec in players:
        by_spec.setdefault(spec, []).append(name)
    parts = []
    for spec, seats in by_spec.items():
        label = agent_label(spec)
        what = escape(spec) if label in ("", spec) else f"{escape(label)} ({escape(spec)})"
        parts.append(f"{_names_list(range(len(seats)), [escape(n) for n in seats])}: {what}")
    return "; ".join(parts)


def _cell_len(markup: str) -> int:
    return Text.from_markup(markup).cell_len


def _slots_cell(view: PlayerView, s: int, revealed: Mapping[int, Sequence[int]] | None) -> str:
    """Golf: a seat's three slots in order, face-up cards shown, face-down ones ``??`` (its
    owner has not seen them either), and the card the seat holds this turn."""
    if revealed is not None and s in revealed:
        return cards_markup(list(revealed[s]))
    cells = [card_markup(c) if c is not None else "[dim]??[/]" for c in view.slots[s]]
    text = " ".join(cells)
    if s == view.seat and view.drawn_card is not None:
        text += f"  holding {card_markup(view.drawn_card)}"
    return text


def _cards_cell(view: PlayerView, s: int, revealed: Mapping[int, Sequence[int]] | None) -> str:
    rules = view.rules
    if view.slots:
        cards = _slots_cell(view, s, revealed)
    elif s == view.seat and (view.hand or not view.cards_held(s)):
        cards = cards_markup(view.hand, mark=view.drawn_card)
        if len(view.hand) == 3:
            cards += f" = [bold cyan]{value_text(value_of(list(view.hand), rules), rules)}[/]"
    elif revealed is not None and s in revealed:
        hand = sorted(revealed[s])
        cards = cards_markup(hand)
        if len(hand) == 3:
            cards += f" = {value_text(value_of(hand, rules), rules)}"
    else:
        size = view.cards_held(s)
        known = list(view.known_cards[s]) if s != view.seat else []
        cards = " ".join([card_markup(c) for c in known] + ["[dim]??[/]"] * (size - len(known)))
    notes = []
    if s == view.dealer:
        notes.append("[dim]dealer[/]")
    if s == view.knocker:
        notes.append("[bold yellow]knocked[/]")
    return cards + ("  " + ", ".join(notes) if notes else "")


def _turn_lines(view: PlayerView, names: Sequence[str]) -> list[str]:
    """This hand's public log, one line per turn: "Bob: stock, discarded 7♣".

    A golf turn ends with its slot move: a card put in a slot sends the slot's card to the
    pile ("put the Q♠ in a slot, the K♣ to the pile"); a drawn card discarded is followed
    by the slot turned up ("discarded the 3♠, turned up the J♠"), on the same line.
    """
    golf = bool(view.slots)
    lines: list[str] = []
    current: list[str] = []
    seat_of_current = -1
    placed = False
    for seat, kind, card in view.log:
        if kind in ("draw_stock", "take"):
            current = ["drew from the stock" if kind == "draw_stock"
                       else f"took the {card_markup(card)}"]
            seat_of_current = seat
            placed = False
        elif kind == "discard" and golf and seat_of_current == seat:
            if placed:  # the card that lay in the slot: the turn is over
                current.append(f"the {card_markup(card)} to the pile")
                lines.append(f"{escape(names[seat])}: " + ", ".join(current))
                current, seat_of_current, placed = [], -1, False
            else:  # the drawn card: a slot is turned up next
                current.append(f"discarded the {card_markup(card)}")
        elif kind == "discard":
            if seat_of_current == seat and current:
                current.append(f"discarded the {card_markup(card)}")
                lines.append(f"{escape(names[seat])}: " + ", ".join(current))
            else:
                lines.append(f"{escape(names[seat])}: discarded the {card_markup(card)}")
            current, seat_of_current = [], -1
        elif kind == "place":  # golf: the held card into a slot; the slot's card follows
            current = (current or []) + [f"put the {card_markup(card)} in a slot"]
            seat_of_current = seat
            placed = True
        elif kind == "turn_up":  # golf: after discarding the drawn card
            current.append(f"turned up the {card_markup(card)}")
            lines.append(f"{escape(names[seat])}: " + ", ".join(current))
            current, seat_of_current = [], -1
        elif kind == "knock":
            lines.append(f"{escape(names[seat])}: [bold yellow]knocked[/]")
        elif kind == "end_play":
            lines.append(f"{escape(names[seat])}: ended the play")
    if current and seat_of_current >= 0:
        lines.append(f"{escape(names[seat_of_current])}: " + ", ".join(current) + " ...")
    return lines


#: Columns outside the table's text: the panel's borders and padding (4) and the two
#: spaces between each of the four columns (6).
_FRAME = 4 + 6
#: Cells a name and its label keep before the lives lose their words ("Alice (expert)");
#: a longer one is shortened with an ellipsis first.
NAME_MIN = 14
#: Lines a table needs besides its player rows and log: panel top and bottom, the header,
#: the piles line.
_FIXED_LINES = 4
#: Lines kept free under the table for the longest menu (a discard: its first line, four
#: cards, the keys line) and the prompt, so Enter's redraw fits the terminal too.
MENU_LINES = 7


def table_view(
    view: PlayerView,
    names: Sequence[str],
    labels: Sequence[str] | None = None,
    revealed: Mapping[int, Sequence[int]] | None = None,
    *,
    width: int = 80,
    height: int | None = None,
) -> RenderableType:
    """The whole table as ``view.seat`` sees it: players, lives, piles, this hand's log.

    ``labels`` are short notes per seat (what kind of agent each opponent is); ``revealed``
    maps seats to their hands for replays shown face up. The table fits ``width`` columns:
    long names are shortened first (to :data:`NAME_MIN` cells), then the lives lose their
    words (only the count stays); the turn marker, lives count, dealer and knock are never
    cut. With
    ``height``, the hand's log is shortened so the table and the longest menu
    (:data:`MENU_LINES`) fit that many lines.
    """
    rules = view.rules
    n = view.num_players
    playing = view.phase in ("draw", "discard", "golf_draw", "golf_place")
    turn = view.turn + 1 if playing else view.turn
    title = f"Scat · {escape(rules.name)} rules · hand {view.hand_number} · turn {turn}"

    players, cards = [], []
    for s in range(n):
        name = escape(names[s])
        if labels and labels[s]:
            name += f" [dim]({escape(labels[s])})[/]"
        players.append(name if view.active[s] else f"[dim]{name}[/]")
        cards.append(_cards_cell(view, s, revealed) if view.active[s] else "")
    room = width - _FRAME - 1 - max(_cell_len(c) for c in cards + ["Cards"])
    name_width = min(max(_cell_len(p) for p in players + ["Player"]), NAME_MIN)
    if view.points:  # a race to points: the score is what counts
        lives = [points_text(rules, view.points[s]) for s in range(n)]
    else:
        lives = [lives_text(rules, view.lives[s]) for s in range(n)]
        if name_width + max(len(x) for x in lives) > room:
            lives = [lives_text(rules, view.lives[s], short=True) for s in range(n)]
    lives_width = max(len(x) for x in [*lives, "Lives"])

    table = Table(box=None, pad_edge=False, show_edge=False, header_style="dim")
    table.add_column("", width=1, no_wrap=True)
    table.add_column("Player", no_wrap=True, overflow="ellipsis",
                     max_width=max(room - lives_width, 6))
    table.add_column("Points" if view.points else "Lives", no_wrap=True)
    table.add_column("Cards", no_wrap=True)
    for s in range(n):
        arrow = "▶" if playing and s == view.current_player else ""
        if not view.active[s]:
            table.add_row("", players[s], f"[dim]{escape(lives[s])}[/]", "")
            continue
        lost = rules.start_lives - view.lives[s]
        style = "green" if lost == 0 else "yellow" if view.lives[s] > 1 else "bold red"
        table.add_row(arrow, players[s], f"[{style}]{escape(lives[s])}[/]", cards[s])

    top = card_markup(view.top_discard) if view.top_discard is not None else "[dim]empty[/]"
    stock = (f"{view.stock_size} card{'s' if view.stock_size != 1 else ''}"
             if view.stock_size else "[bold red]exhausted[/]")
    parts: list[RenderableType] = [table, Text.from_markup(f"Discard pile: {top}    Stock: {stock}")]
    if view.knocker is not None:
        parts.append(Text.from_markup(
            f"[bold yellow]{escape(names[view.knocker])} knocked[/]: one last turn each, "
            "then the showdown."))
    turns = _turn_lines(view, names)
    log_lines = 6
    if height is not None:  # the log header takes a line too
        used = _FIXED_LINES + n + (view.knocker is not None) + 1
        log_lines = min(log_lines, height - MENU_LINES - used)
    if turns and log_lines > 0:
        shown = turns[-log_lines:]
        header = "This hand" + (f" (last {len(shown)} of {len(turns)} turns)"
                                if len(shown) < len(turns) else "")
        parts.append(Text.from_markup(f"[dim]{header}:[/]\n  " + "\n  ".join(shown)))
    return Panel(Group(*parts), title=title, title_align="left", box=box.ROUNDED, expand=False)


#: How the draw prompt names each choice the menu may offer at the start of a turn.
_DRAW_CHOICES = {DRAW_STOCK: "draw a card", KNOCK: "knock", END_PLAY: "end the play",
                 HAMMER: "call a hammer"}


def draw_prompt(view: PlayerView, actions: Sequence[int]) -> str:
    """The line over the menu at the start of a turn, naming only what the menu offers.

    Why from the menu and not one fixed sentence: the choices change with the table (no
    knock once someone has knocked, on the first turn where the rules forbid it, or with
    too few points; no stock once it is exhausted), and a prompt offering a knock the
    menu then refuses sends the player to a move they cannot make.
    """
    choices = []
    if DRAW_STOCK in actions:
        choices.append(_DRAW_CHOICES[DRAW_STOCK])
    elif DRAW_DISCARD in actions:  # the stock is exhausted: the discard is the only draw
        choices.append("take the top discard")
    choices += [_DRAW_CHOICES[a] for a in (KNOCK, END_PLAY, HAMMER) if a in actions]
    if not choices:
        return "Your turn: type the number of a move."
    if len(choices) == 1:
        said = choices[0]
    else:
        said = ", ".join(choices[:-1]) + ", or " + choices[-1]
    turn = "Your last turn" if view.knocker is not None else "Your turn"
    return f"{turn}: {said}."


def menu_view(view: PlayerView, options: Sequence[MenuOption]) -> RenderableType:
    """The numbered list of legal moves, each with its shortcut."""
    if view.phase == "draw":
        head = draw_prompt(view, [opt.action for opt in options])
    elif view.phase == "golf_draw":
        head = "Your turn: draw from the stock, or take the top discard into a slot."
    elif view.phase == "golf_place":
        head = ("Place it face up in a face-down slot, or discard it and turn a slot "
                "face up." if view.taken_card is None else
                "Place the card you took face up in a face-down slot.")
    elif view.phase != "discard":  # a call the rules offer (sudden death, a throw-down...)
        head = "Your call: type its number or its name."
    else:
        head = "Now discard a card: its number, or the card like 7c"
        if view.taken_card is not None:  # one line at 80 columns, to keep the menu's height
            head += f" (not the {card_markup(view.taken_card)} you took)"
        head += "."
    lines = [head]
    width = max([3, *(len(opt.key) for opt in options)])  # "stock", "place1": in line
    for opt in options:
        label = escape(opt.label)
        for card in (view.hand if view.phase in ("discard", "golf_place") else ()):
            label = label.replace(card_str(card, symbols=True), card_markup(card))
        if view.top_discard is not None and view.phase in ("draw", "golf_draw"):
            label = label.replace(card_str(view.top_discard, symbols=True),
                                  card_markup(view.top_discard))
        key = opt.key.lower()
        lines.append(f"  [bold cyan]{opt.number}[/]  [cyan]{key:>{width}}[/]  {label}")
    lines.append("  [dim]? help   h hint   q quit (saves the game)[/]")
    return Text.from_markup("\n".join(lines))


# -- showdown and summary -----------------------------------------------------------------
def _names_list(seats: Sequence[int], names: Sequence[str]) -> str:
    items = [names[s] for s in seats]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def explain_result(result: HandResult, rules: Rules, names: Sequence[str]) -> list[str]:
    """Who lost what, and the rule that applied in plain words (from the engine, which
    names the rule it scored the hand by: :func:`scat_env.showdown.rule_text`)."""
    from scat_env.showdown import rule_text

    by_loss: dict[int, list[int]] = {}
    for s, lost in sorted(result.lives_lost.items()):
        if lost:
            by_loss.setdefault(lost, []).append(s)
    paid = [
        f"{_names_list(seats, names)} "
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


def showdown_view(result: HandResult, rules: Rules, names: Sequence[str]) -> RenderableType:
    """The hands shown with their values, what each player lost or scored, and why.

    ``result`` is the record as its viewer saw it (:meth:`HandResult.seen_by`): after a
    declared 31 the other hands were never shown, so their rows say so instead of a hand.
    A race to points has a Scored and a Points column where a lives game has Lost and Now.
    """
    race = bool(result.points_after)
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="dim")
    table.add_column("Player", no_wrap=True, overflow="ellipsis", max_width=20)
    table.add_column("Hand", no_wrap=True)
    table.add_column("Value", justify="right", no_wrap=True)
    table.add_column("Scored" if race else "Lost", justify="right", no_wrap=True)
    table.add_column("Points" if race else "Now", no_wrap=True)
    for row in showdown_rows(result, rules):
        name = escape(names[row.seat]) + (" [yellow](knocked)[/]" if row.knocked else "")
        if race:
            change = f"[bold green]+{row.change}[/]" if row.change else "[dim]0[/]"
            won = row.seat == result.race_winner
            standing = f"[bold green]{escape(row.standing)}[/]" if won else escape(row.standing)
        else:
            change = f"[bold red]-{row.change}[/]" if row.change else "[dim]0[/]"
            standing = f"[bold red]{escape(row.standing)}[/]" if row.out else escape(row.standing)
        if row.hand is None:
            table.add_row(name, "[dim](not shown)[/]", "", change, standing)
            continue
        style = {"best": "bold green", "worst": "bold red"}.get(row.mark)
        value = f"[{style}]{escape(row.value)}[/]" if style else escape(row.value)
        table.add_row(name, cards_markup(row.hand), value, change, standing)
    why = [escape(line) for line in showdown_explained(result, rules, names)]
    body = Group(table, Text.from_markup("\n".join(why)))
    return Panel(body, title=f"Showdown · hand {result.hand_number}", title_align="left",
                 box=box.ROUNDED, expand=False, border_style="magenta")


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


def summary_view(results: Sequence[HandResult], names: Sequence[str], winner: int | None,
                 rules: Rules, human_seat: int | None, knocks: Sequence[int]) -> RenderableType:
    """The end-of-game panel: the winner, the game in numbers, and your own record.

    ``knocks`` lists the knocking seat of every knock made (from the decisions), since a
    hand result names only the knock that ended it. A race to points lists the final
    points and your record counts the hands you scored; golf, which has no knock and no
    31, counts only the hands.
    """
    n = len(names)
    race = bool(results and results[-1].points_after)
    golf = rules.play == "golf"
    thirty_ones = sum(1 for r in results if r.reason in ("thirty_one", "dealt_thirty_one"))
    lines = []
    if winner is not None:
        who = "You win!" if winner == human_seat else f"{names[winner]} wins the game."
        lines.append(f"[bold green]{escape(who)}[/]")
    counts = f"Hands played: {len(results)}"
    if not golf:
        counts += f"   31s: {thirty_ones}   knocks: {len(knocks)}"
    lines.append(counts)
    if race:
        final = results[-1].points_after
        order = sorted(range(n), key=lambda s: (s != winner, -final[s], s))
        lines.append("Points: " + ", ".join(f"{escape(names[s])} {final[s]}" for s in order)
                     + f" (first to {rules.points_to_win} wins).")
    if human_seat is not None:
        me = human_seat
        played = sum(1 for r in results if me in r.lives_lost)
        if race:
            scored = [r for r in results if r.points_won.get(me, 0)]
            rec = (f"Your record: scored in {len(scored)} of {played} hands "
                   f"({points_text(rules, results[-1].points_after[me])})")
        else:
            hurt = [r for r in results if r.lives_lost.get(me, 0)]
            lost = sum(r.lives_lost.get(me, 0) for r in results)
            rec = (f"Your record: lost lives in {len(hurt)} of {played} hands "
                   f"({lost} li{'fe' if lost == 1 else 'ves'} in all)")
        if not golf:
            my_knocks = [r for r in results if r.knocker == me]
            rec += (f", 31s: {sum(1 for r in results if me in r.declarers)}, "
                    f"knocks: {sum(1 for s in knocks if s == me)}")
            if my_knocks and race:
                rec += f" ({sum(1 for r in my_knocks if r.points_won.get(me, 0))} scored)"
            elif my_knocks:
                rec += f" ({sum(1 for r in my_knocks if r.lives_lost.get(me, 0))} cost you)"
        place = (race_places(results, n, winner) if race
                 else finishing_order(results, n, winner)).get(me)
        if place:
            rec += f", finished {_ordinal(place)} of {n}"
        lines.append(escape(rec) + ".")
    return Panel(Text.from_markup("\n".join(lines)), title="Game over", title_align="left",
                 box=box.DOUBLE, expand=False, border_style="green")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


# -- help ---------------------------------------------------------------------------------
def help_view(rules: Rules, width: int = 80, height: int = 24) -> RenderableType:
    """The keys and the rules being played (:mod:`scat_cli.helptext`, written from the
    rules' fields), in a panel that fits ``width`` columns and, with the prompt under it,
    ``height`` rows. Every preset fits 80x24 with a line per rule and every key listed; a
    rules file with many options on gets the keys in one line (the menu shows each move's
    key) and its rules as one paragraph, which wastes no row."""
    from .helptext import SHORT_KEYS, key_lines, rules_lines

    def panel(keys: list[str], sep: str) -> Panel:
        body = Text("\n".join(keys) + "\n\n" + sep.join(rules_lines(rules)))
        body.highlight_words(["Keys:"], style="bold")
        return Panel(body, title=f"Help · {escape(rules.name)} rules", title_align="left",
                     box=box.ROUNDED, expand=False)

    full = panel(key_lines(rules), "\n")
    probe = Console(width=width, height=height, color_system=None, file=io.StringIO())
    if len(probe.render_lines(full, probe.options, pad=False)) < height:
        return full
    return panel([SHORT_KEYS], " ")
