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

import os
from collections.abc import Mapping, Sequence

from rich import box
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, HandResult, PlayerView, Rules
from scat_env.cards import CARD_SUIT, card_str
from scat_env.rules import lives_label
from scat_env.scoring import value_of

from .humanio import MenuOption

RED_SUITS = (1, 2)  # diamonds, hearts
OPPONENT_NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan")


def make_console(color: bool = True, width: int | None = None) -> Console:
    """A console for the game screen; ``color=False`` (or ``NO_COLOR``) emits no escapes."""
    if os.environ.get("NO_COLOR"):
        color = False
    return Console(
        color_system="auto" if color else None,
        highlight=False,
        emoji=False,
        width=width,
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


def action_markup(seat: int, action: int, names: Sequence[str], top_before: int | None) -> str:
    """A log line in plain words: "Bob drew from the stock", "You took the K♥"."""
    who = f"[bold]{escape(names[seat])}[/]"
    if action == DRAW_STOCK:
        return f"{who} drew from the stock"
    if action == DRAW_DISCARD:
        card = card_markup(top_before) if top_before is not None else "the top card"
        return f"{who} took the {card}"
    if action == KNOCK:
        return f"{who} [bold yellow]knocked![/]"
    if action == END_PLAY:
        return f"{who} ended the play (the stock is exhausted)"
    return f"{who} discarded the {card_markup(action)}"


def deal_text(names: Sequence[str], hand_number: int, dealer: int) -> str:
    """The rule line that opens a hand: "Hand 3 · Bob deals" / "Hand 2 · You deal"."""
    verb = "deal" if names[dealer] == "You" else "deals"
    return f"Hand {hand_number} · {names[dealer]} {verb}"


# -- the table ----------------------------------------------------------------------------
def _turn_lines(view: PlayerView, names: Sequence[str]) -> list[str]:
    """This hand's public log, one line per turn: "Bob: stock, discarded 7♣"."""
    lines: list[str] = []
    current: list[str] = []
    seat_of_current = -1
    for seat, kind, card in view.log:
        if kind in ("draw_stock", "take"):
            current = ["drew from the stock" if kind == "draw_stock"
                       else f"took the {card_markup(card)}"]
            seat_of_current = seat
        elif kind == "discard":
            if seat_of_current == seat and current:
                current.append(f"discarded the {card_markup(card)}")
                lines.append(f"{escape(names[seat])}: " + ", ".join(current))
            else:
                lines.append(f"{escape(names[seat])}: discarded the {card_markup(card)}")
            current, seat_of_current = [], -1
        elif kind == "knock":
            lines.append(f"{escape(names[seat])}: [bold yellow]knocked[/]")
        elif kind == "end_play":
            lines.append(f"{escape(names[seat])}: ended the play")
    if current and seat_of_current >= 0:
        lines.append(f"{escape(names[seat_of_current])}: " + ", ".join(current) + " ...")
    return lines


def table_view(
    view: PlayerView,
    names: Sequence[str],
    labels: Sequence[str] | None = None,
    revealed: Mapping[int, Sequence[int]] | None = None,
    log_lines: int = 6,
) -> RenderableType:
    """The whole table as ``view.seat`` sees it: players, lives, piles, this hand's log.

    ``labels`` are short notes per seat (the agent spec of each opponent); ``revealed``
    maps seats to their hands for replays shown face up.
    """
    rules = view.rules
    n = view.num_players
    title = (
        f"Scat · {escape(rules.name)} rules · hand {view.hand_number} · "
        f"turn {view.turn + 1 if view.phase in ('draw', 'discard') else view.turn}"
    )
    table = Table(box=box.SIMPLE_HEAD, expand=False, pad_edge=False, show_edge=False)
    table.add_column("", width=1)
    table.add_column("Player", no_wrap=True)
    table.add_column("Lives", no_wrap=True)
    table.add_column("Cards", no_wrap=True)
    table.add_column("", no_wrap=True)
    playing = view.phase in ("draw", "discard")
    for s in range(n):
        arrow = "▶" if playing and s == view.current_player else ""
        name = f"[bold]{escape(names[s])}[/]"
        if labels and labels[s]:
            name += f" [dim]({escape(labels[s])})[/]"
        if not view.active[s]:
            lives = "[dim]" + escape(lives_label(rules, view.lives[s])) + "[/]"
            table.add_row("", f"[dim]{escape(names[s])}[/]", lives, "", "")
            continue
        lost = rules.start_lives - view.lives[s]
        style = "green" if lost == 0 else "yellow" if view.lives[s] > 1 else "bold red"
        lives = f"[{style}]{escape(lives_label(rules, view.lives[s]))}[/]"
        size = 4 if s == view.current_player and view.phase == "discard" else 3
        if s == view.seat:
            cards = cards_markup(view.hand, mark=view.drawn_card)
            if len(view.hand) == 3:
                cards += f"  = [bold cyan]{value_of(list(view.hand), rules):g}[/]"
        elif revealed is not None and s in revealed:
            hand = list(revealed[s])
            cards = cards_markup(sorted(hand))
            if len(hand) == 3:
                cards += f"  = {value_of(hand, rules):g}"
        else:
            known = list(view.known_cards[s])
            cards = " ".join([card_markup(c) for c in known] + ["[dim]??[/]"] * (size - len(known)))
        notes = []
        if s == view.dealer:
            notes.append("[dim]dealer[/]")
        if s == view.knocker:
            notes.append("[bold yellow]KNOCKED[/]")
        table.add_row(arrow, name, lives, cards, " ".join(notes))
    top = card_markup(view.top_discard) if view.top_discard is not None else "[dim]empty[/]"
    stock = (f"{view.stock_size} card{'s' if view.stock_size != 1 else ''}"
             if view.stock_size else "[bold red]exhausted[/]")
    piles = f"Discard pile: {top}    Stock: {stock}"
    parts: list[RenderableType] = [table, Text.from_markup(piles)]
    if view.knocker is not None:
        parts.append(Text.from_markup(
            f"[bold yellow]{escape(names[view.knocker])} knocked[/]: one last turn each, "
            "then the showdown."
        ))
    turns = _turn_lines(view, names)
    if turns:
        shown = turns[-log_lines:]
        more = len(turns) - len(shown)
        header = "This hand" + (f" (last {len(shown)} of {len(turns)} turns)" if more else "")
        parts.append(Text.from_markup(f"[dim]{header}:[/]\n  " + "\n  ".join(shown)))
    return Panel(Group(*parts), title=title, title_align="left", box=box.ROUNDED, expand=False)


def menu_view(view: PlayerView, options: Sequence[MenuOption]) -> RenderableType:
    """The numbered list of legal moves, each with its shortcut."""
    if view.phase == "draw":
        head = "Your turn: draw a card, or knock."
    else:
        head = "Now discard a card (type its number, or the card like 7c)."
        if view.taken_card is not None:
            head += f" You may not discard the {card_markup(view.taken_card)} you took."
    lines = [head]
    for opt in options:
        label = escape(opt.label)
        for card in (view.hand if view.phase == "discard" else ()):  # colour the cards
            label = label.replace(card_str(card, symbols=True), card_markup(card))
        if view.top_discard is not None and view.phase == "draw":
            label = label.replace(card_str(view.top_discard, symbols=True),
                                  card_markup(view.top_discard))
        key = opt.key.lower()
        lines.append(f"  [bold cyan]{opt.number}[/]  [cyan]{key:>3}[/]  {label}")
    lines.append("  [dim]? help   h hint   q quit (saves the game)[/]")
    return Text.from_markup("\n".join(lines))


# -- showdown and summary -----------------------------------------------------------------
def _names_list(seats: Sequence[int], names: Sequence[str]) -> str:
    items = [names[s] for s in seats]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _verb(seats: Sequence[int], names: Sequence[str], one: str, many: str) -> str:
    """Agreement for "You" (plural verb) and for several players."""
    return many if len(seats) != 1 or names[seats[0]] == "You" else one


def _possessive(name: str) -> str:
    return "Your" if name == "You" else f"{name}'s"


def _lives_word(rules: Rules, n: int) -> str:
    unit = {"pennies": ("penny", "pennies"), "nickels": ("nickel", "nickels"),
            "points": ("point", "points"), "bus": ("step", "steps"),
            "letters": ("letter", "letters")}[rules.lives_name]
    return f"{n} {unit[0] if n == 1 else unit[1]}" if rules.lives_name != "letters" else (
        f"{n} letter{'s' if n != 1 else ''}")


def explain_result(result: HandResult, rules: Rules, names: Sequence[str]) -> list[str]:
    """Why each player lost what they lost: the rule that applied, in plain words."""
    lines: list[str] = []
    values = result.values
    knocker = result.knocker
    word = _lives_word
    rest = [s for s in sorted(result.hands) if s not in result.declarers]
    if result.reason == "dealt_thirty_one":
        lines.append(
            f"{_names_list(result.declarers, names)} "
            f"{_verb(result.declarers, names, 'was', 'were')} dealt 31: there is no play, "
            f"everyone else ({_names_list(rest, names)}) loses a life."
        )
    elif result.reason == "thirty_one":
        lines.append(
            f"{names[result.declarers[0]]} made 31 and declared it: everyone else "
            f"({_names_list(rest, names)}) loses a life."
        )
        if knocker is not None and knocker not in result.declarers:
            lines.append(
                f"{names[knocker]} had knocked and "
                f"{_verb([knocker], names, 'pays', 'pay')} {word(rules, rules.knocker_loss_on_31)}"
                " (a 31 after a knock)."
            )
    else:
        if result.reason == "stock_exhausted":
            lines.append("The stock was exhausted and the play ended: everyone shows.")
        if knocker is not None and rules.knock_mode == "gin":
            best_other = max(v for s, v in values.items() if s != knocker)
            if values[knocker] >= best_other:
                lines.append(
                    f"{_possessive(names[knocker])} knock promised the highest hand and kept it "
                    f"({values[knocker]:g} vs {best_other:g}): everyone else "
                    f"({_names_list([x for x in rest if x != knocker], names)}) loses a life."
                )
            else:
                lines.append(
                    f"{_possessive(names[knocker])} knock promised the highest hand but "
                    f"{best_other:g} beats {values[knocker]:g}: the knocker pays "
                    f"{word(rules, rules.knocker_loss)}."
                )
        else:
            low = min(values.values())
            lowest = [s for s, v in values.items() if v == low]
            others = [s for s in lowest if s != knocker]
            if knocker is None:
                lines.append(
                    f"No knock: the lowest hand ({low:g}) loses one life: "
                    f"{_names_list(lowest, names)}."
                )
            elif knocker not in lowest:
                lines.append(
                    f"Lowest hand ({low:g}): {_names_list(lowest, names)} "
                    f"{_verb(lowest, names, 'loses', 'lose')} one life; "
                    f"{names[knocker]} knocked with {values[knocker]:g} and "
                    f"{_verb([knocker], names, 'is', 'are')} safe."
                )
            elif len(lowest) == 1:
                lines.append(
                    f"{names[knocker]} knocked and had the lowest hand alone ({low:g}): "
                    f"a failed knock costs {word(rules, rules.knocker_loss)}."
                )
            elif rules.knocker_tie == "safe":
                lines.append(
                    f"{names[knocker]} knocked and tied for lowest ({low:g}) with "
                    f"{_names_list(others, names)}: a knocker in a tie is safe, the others "
                    "lose one life."
                )
            elif rules.knocker_tie == "all":
                lines.append(
                    f"{names[knocker]} knocked and tied for lowest ({low:g}) with "
                    f"{_names_list(others, names)}: under these rules all of them lose, the "
                    f"knocker pays {word(rules, rules.knocker_loss)}."
                )
            else:
                lines.append(
                    f"{names[knocker]} knocked and tied for lowest ({low:g}) with "
                    f"{_names_list(others, names)}: under these rules only the knocker pays "
                    f"({word(rules, rules.knocker_loss)})."
                )
    capped = [s for s, n in result.lives_lost.items()
              if n and n < _wanted(result, rules, s) and not result.replayed]
    if capped:
        lines.append(f"{_names_list(capped, names)} had fewer lives left than that cost.")
    if result.replayed:
        lines.append(
            "That would have put everyone left out at once: the hand is replayed, lives "
            "unchanged."
        )
    for s in result.eliminated:
        lines.append(f"{names[s]} {_verb([s], names, 'is', 'are')} out of the game.")
    return lines


def _wanted(result: HandResult, rules: Rules, seat: int) -> int:
    """Lives the rule asked of ``seat`` before capping by what it had (for the note)."""
    from scat_env.showdown import knock_losses, thirty_one_losses

    seats = list(result.values)
    if result.declarers:
        losses = thirty_one_losses(seats, list(result.declarers), result.knocker, rules)
    else:
        losses = knock_losses(result.values, result.knocker, rules)
    return losses.get(seat, 0)


def showdown_view(result: HandResult, rules: Rules, names: Sequence[str]) -> RenderableType:
    """All hands face up with their values, what each player lost and why."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("Player", no_wrap=True)
    table.add_column("Hand", no_wrap=True)
    table.add_column("Value", justify="right")
    table.add_column("Lost", justify="right")
    table.add_column("Now", no_wrap=True)
    low = min(result.values.values())
    for s in sorted(result.hands):
        value = result.values[s]
        vtxt = f"{value:g}"
        if s in result.declarers:
            vtxt = f"[bold green]{vtxt}[/]"
        elif value == low and result.reason not in ("thirty_one", "dealt_thirty_one"):
            vtxt = f"[bold red]{vtxt}[/]"
        lost = result.lives_lost.get(s, 0)
        name = escape(names[s]) + (" [yellow](knocked)[/]" if s == result.knocker else "")
        now = lives_label(rules, result.lives_after[s])
        table.add_row(
            name,
            cards_markup(sorted(result.hands[s])),
            vtxt,
            f"[bold red]-{lost}[/]" if lost else "[dim]0[/]",
            f"[bold red]{escape(now)}[/]" if result.lives_after[s] <= 0 else escape(now),
        )
    why = [escape(line) for line in explain_result(result, rules, names)]
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


def summary_view(results: Sequence[HandResult], names: Sequence[str], winner: int | None,
                 rules: Rules, human_seat: int | None, knocks: Sequence[int]) -> RenderableType:
    """The end-of-game panel: the winner, the game in numbers, and your own record.

    ``knocks`` lists the knocking seat of every knock made (from the decisions), since a
    hand result names only the knock that ended it.
    """
    n = len(names)
    thirty_ones = sum(1 for r in results if r.reason in ("thirty_one", "dealt_thirty_one"))
    lines = []
    if winner is not None:
        who = "You win!" if winner == human_seat else f"{names[winner]} wins the game."
        lines.append(f"[bold green]{escape(who)}[/]")
    lines.append(
        f"Hands played: {len(results)}   31s: {thirty_ones}   knocks: {len(knocks)}"
    )
    if human_seat is not None:
        me = human_seat
        hurt = [r for r in results if r.lives_lost.get(me, 0)]
        lost = sum(r.lives_lost.get(me, 0) for r in results)
        mine_31 = sum(1 for r in results if me in r.declarers)
        my_knocks = [r for r in results if r.knocker == me]
        failed = sum(1 for r in my_knocks if r.lives_lost.get(me, 0))
        place = finishing_order(results, n, winner).get(me)
        played = sum(1 for r in results if me in r.hands)
        rec = (
            f"Your record: lost lives in {len(hurt)} of {played} hands "
            f"({lost} li{'fe' if lost == 1 else 'ves'} in all), "
            f"31s: {mine_31}, knocks: {sum(1 for s in knocks if s == me)}"
        )
        if my_knocks:
            rec += f" ({failed} cost you)"
        if place:
            rec += f", finished {_ordinal(place)} of {n}"
        lines.append(escape(rec) + ".")
    return Panel(Text.from_markup("\n".join(lines)), title="Game over", title_align="left",
                 box=box.DOUBLE, expand=False, border_style="green")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


# -- help ---------------------------------------------------------------------------------
def help_view(rules: Rules) -> RenderableType:
    """Keys and a short summary of the rules being played (from docs/RULES.md, in brief)."""
    keys = (
        "[bold]Keys[/]\n"
        "  1 2 3 ...   play that option of the menu\n"
        "  s           draw the top card of the stock\n"
        "  d           take the top card of the discard pile\n"
        "  k           knock (instead of drawing, at the start of your turn)\n"
        "  e           end the play (only when the stock is exhausted)\n"
        "  7c  7♣  10h discard that card (after drawing)\n"
        "  h           hint: what the expert would do, and why\n"
        "  ?           this help      q   quit (the game is saved; scat play --resume FILE)"
    )
    r = rules
    bits = [
        "[bold]The game[/]",
        "  Hold three cards; a hand is worth the points of its best suit (A 11, K Q J 10, "
        "others their pips), or its best single card. 31 is the best hand.",
        "  Each turn: draw (stock or discard pile), then discard one card. You may not "
        "discard the card you just took from the pile.",
        "  Knock instead of drawing when you think you are not the lowest: everyone else "
        "gets one more turn, then all hands are shown and the lowest hand loses a life.",
        f"  A knocker who is lowest alone pays {_lives_word(r, r.knocker_loss)}; "
        + {"safe": "a knocker tied for lowest is safe.",
           "all": "in a tie the knocker pays too.",
           "knocker_only": "in a tie only the knocker pays."}[r.knocker_tie]
        if r.knock_mode == "lowest" else
        f"  Gin rules: a knock promises the highest hand; beaten, the knocker pays "
        f"{_lives_word(r, r.knocker_loss)}, otherwise everyone else pays.",
        "  Make 31 and it is declared at once: everyone else loses a life "
        f"(a knocker pays {_lives_word(r, r.knocker_loss_on_31)}).",
        "  When the stock runs out you may keep taking the discard, or end the play.",
        f"  Everyone starts with {r.start_lives} lives ({escape(lives_label(r, r.start_lives))}"
        + (", then one more on the county" if r.county and r.lives_name == "pennies" else "")
        + "); the last player in wins.",
    ]
    extras = []
    if r.min_knock:
        extras.append(f"knock needs {r.min_knock}+")
    if r.knock_needs_flush:
        extras.append("knock needs three of one suit")
    if r.three_of_a_kind is not None:
        extras.append(f"three of a kind = {r.three_of_a_kind:g}")
    if r.three_aces is not None:
        extras.append(f"three aces = {r.three_aces:g}")
    if r.straight_flush:
        extras.append("straight flush = 30")
    if not r.knock_when_stock_exhausted:
        extras.append("no knock once the stock is exhausted")
    if extras:
        bits.append("  House rules in play: " + "; ".join(extras) + ".")
    return Panel(Text.from_markup(keys + "\n\n" + "\n".join(bits)), title="Help",
                 title_align="left", box=box.ROUNDED, expand=False)
