"""The terminal screen of ``scat play`` and ``scat replay``, drawn with rich.

Every function here turns game facts (a :class:`~scat_env.PlayerView`, a
:class:`~scat_env.HandResult`) into rich renderables or markup strings; none of them reads
input or touches the engine. The play and replay loops decide *when* to print, this module
decides *how it looks*, so both commands show a game the same way. The words themselves are
the play session's (:mod:`scat_session.words`, :mod:`scat_session.seating`), the same the browser
shows; this module adds their colour.

Colour is optional: :func:`make_console` with ``color=False`` (``--no-color``, or the
``NO_COLOR`` environment variable) prints plain text with no escape codes at all, which is
what the terminal tests read and what ``docs/PLAY.md`` captures.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence

from rich import box
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, HandResult, PlayerView, Rules
from scat_env.actions import HAMMER
from scat_env.cards import CARD_SUIT, card_str
from scat_env.scoring import value_of
from scat_session import seating
from scat_session.humanio import MenuOption, value_text
from scat_session.strength import strength_text
from scat_session.words import (
    Marks,
    action_text,
    game_numbers,
    lives_text,
    points_text,
    showdown_explained,
    showdown_rows,
)

RED_SUITS = (1, 2)  # diamonds, hearts


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


# -- cards --------------------------------------------------------------------------------
def card_markup(card: int) -> str:
    """A card as markup: bold, red for hearts and diamonds."""
    style = "bold red" if CARD_SUIT[card] in RED_SUITS else "bold"
    return f"[{style}]{card_str(card, symbols=True)}[/]"


def _name_markup(name: str) -> str:
    return f"[bold]{escape(name)}[/]"


def _loud_markup(text: str) -> str:
    return f"[bold yellow]{text}[/]"


#: The play session's words as the terminal dresses them: cards in their suit's colour, names
#: bold, a knock loud, any other text escaped from the markup.
MARKUP = Marks(card=card_markup, name=_name_markup, loud=_loud_markup, text=escape)


def action_markup(seat: int, action: int, names: Sequence[str], top_before: int | None,
                  hand_before: Sequence[int] | None = None) -> str:
    """A log line (:func:`scat_session.words.action_text`) in the terminal's colours."""
    return action_text(seat, action, names, top_before, hand_before, MARKUP)


def seats_by_spec(players: Sequence[tuple[str, str]]) -> str:
    """The opponents line (:func:`scat_session.seating.seats_by_spec`), escaped as markup."""
    return seating.seats_by_spec(players, escape)


def opponents_markup(players: Sequence[tuple[str, str]], num_players: int, rules: Rules) -> str:
    """The opponents line of a game's start (:func:`seats_by_spec`), each policy the model
    card measured at this table followed by its figure
    (:func:`scat_session.strength.strength_text`), so a person knows how strong the table is
    before the first card: "Alice and Bob: trained AI (compact:scat_batch_set), wins 1.31x its
    fair share against expert at 3 players (model card); Carol: expert"."""
    by_spec: dict[str, list[tuple[str, str]]] = {}
    for name, spec in players:
        by_spec.setdefault(spec, []).append((name, spec))
    parts = []
    for spec, seats in by_spec.items():
        figure = strength_text(spec, num_players, rules)
        part = seats_by_spec(seats)
        parts.append(part if figure is None else f"{part}, {escape(figure)}")
    return "; ".join(parts)


def cards_markup(cards: Sequence[int], mark: int | None = None) -> str:
    """Cards separated by spaces; ``mark`` gets an asterisk (the card just drawn)."""
    parts = []
    for c in cards:
        text = card_markup(c)
        if c == mark:
            text += "[dim]*[/]"
        parts.append(text)
    return " ".join(parts) or "-"


# -- the table ----------------------------------------------------------------------------
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


def summary_view(results: Sequence[HandResult], names: Sequence[str], winner: int | None,
                 rules: Rules, human_seat: int | None, knocks: Sequence[int]) -> RenderableType:
    """The end-of-game panel: the winner, the game in numbers, and your own record.

    ``knocks`` lists the knocking seat of every knock made (from the decisions), since a
    hand result names only the knock that ended it. A race to points lists the final
    points and your record counts the hands you scored; golf, which has no knock and no
    31, counts only the hands.
    """
    n = len(names)
    golf = rules.play == "golf"
    me = human_seat if human_seat is not None else 0
    g = game_numbers(results, me, n, winner, knocks)
    lines = []
    if winner is not None:
        who = "You win!" if winner == human_seat else f"{names[winner]} wins the game."
        lines.append(f"[bold green]{escape(who)}[/]")
    counts = f"Hands played: {g.hands}"
    if not golf:
        counts += f"   31s: {g.thirty_ones}   knocks: {g.knocks}"
    lines.append(counts)
    if g.race:
        final = results[-1].points_after
        order = sorted(range(n), key=lambda s: (s != winner, -final[s], s))
        lines.append("Points: " + ", ".join(f"{escape(names[s])} {final[s]}" for s in order)
                     + f" (first to {rules.points_to_win} wins).")
    if human_seat is not None:
        if g.race:
            rec = (f"Your record: scored in {g.hands_scored} of {g.hands_played} hands "
                   f"({points_text(rules, g.points or 0)})")
        else:
            rec = (f"Your record: lost lives in {g.hands_lost} of {g.hands_played} hands "
                   f"({g.lives_lost} li{'fe' if g.lives_lost == 1 else 'ves'} in all)")
        if not golf:
            rec += f", 31s: {g.your_31s}, knocks: {g.your_knocks}"
            if g.knocks_ended and g.race:
                rec += f" ({g.knocks_won} scored)"
            elif g.knocks_ended:
                rec += f" ({g.knocks_hurt} cost you)"
        place = g.places[me]
        if place:
            rec += f", finished {_ordinal(place)} of {n}"
        lines.append(escape(rec) + ".")
    return Panel(Text.from_markup("\n".join(lines)), title="Game over", title_align="left",
                 box=box.DOUBLE, expand=False, border_style="green")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


# -- help ---------------------------------------------------------------------------------
def help_view(rules: Rules, width: int = 80, height: int = 24) -> RenderableType:
    """The keys and the rules being played (:mod:`scat_session.helptext`, written from the
    rules' fields), in a panel that fits ``width`` columns and, with the prompt under it,
    ``height`` rows. Every preset fits 80x24 with a line per rule and every key listed; a
    rules file with many options on gets the keys in one line (the menu shows each move's
    key) and its rules as one paragraph, which wastes no row."""
    from scat_session.helptext import SHORT_KEYS, key_lines, rules_lines

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
