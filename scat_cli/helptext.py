"""The ``?`` help of ``scat play``, written from the fields of the :class:`~scat_env.Rules`
being played.

Why generated and not one text per family: a fixed text said "make 31 and it is declared at
once" under presets where 31 is never declared (``italian``) or declared by choice
(``undeclared_31``), and never named the hammer, sudden death or the second knock. Here
each sentence comes from the field that makes it true, so a preset gets a sentence for
every call it allows and none for a rule it lacks, and a new preset is described the day it
is added. The lines are plain text (the screen adds the panel); each is short enough that
the whole help, keys included, fits a terminal of 80 columns and 24 rows.
"""

from __future__ import annotations

from scat_env import Rules
from scat_env.rules import lives_label

#: Words for small counts, so that a sentence reads "pays two lives".
_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}


def _count(n: int, one: str, many: str) -> str:
    return f"{_NUMBERS.get(n, str(n))} {one if n == 1 else many}"


def _lives(rules: Rules, n: int) -> str:
    """``n`` lives in the preset's unit: "two lives"; on the bus, "two stops"."""
    one, many = ("stop", "stops") if rules.lives_name == "bus" else ("life", "lives")
    return _count(n, one, many)


#: The keys in one line, for a help that would not fit the screen with all of them (a rules
#: file with many options on): the menu shows each move's key anyway.
SHORT_KEYS = "Keys: a menu number or key   h hint   ? help   Enter the table   q quit"


def key_lines(rules: Rules) -> list[str]:
    """The keys this game answers to: the knock and the end of play only where a turn has
    them, golf's slot moves in golf, the calls by the names the menu gives them."""
    if rules.play == "golf":
        lines = ["Keys: 1 2 3... a move of the menu   s stock   d the discard",
                 "      place2 put the card in slot 2   turn2 discard it, turn slot 2 up"]
    else:
        lines = ["Keys: 1 2 3... a move of the menu   s stock   d the discard   k knock",
                 "      7c 7♣ 10h discard that card   e end the play (stock exhausted)"]
    lines.append("      h hint   ? this help   Enter the table again   q quit (saved)")
    # A hammer is one more choice of the draw menu; the other calls have a phase of their
    # own, where "pass" declines them.
    passes = ["pass"] if set(rules.calls) - {"hammer"} else []
    if rules.calls:
        lines.append("      the calls, by name: " + ", ".join([*rules.calls, *passes]))
    return lines


def rules_lines(rules: Rules) -> list[str]:
    """The rules being played, one short paragraph per line, each from the fields that
    make it true."""
    if rules.play == "golf":
        return _golf_lines(rules)
    lines = [_hand_line(rules), *_value_extras(rules),
             "Turn: draw from the stock or the pile, then discard (not the card you took).",
             _knock_line(rules)]
    if rules.second_knock:
        lines.append("Second knock: the next player may knock too, ending the play at once.")
    lines.append(_showdown_line(rules))
    lines += _thirty_one_lines(rules)
    lines += _call_lines(rules)
    lines.append(_exhausted_line(rules))
    lines.append(_end_line(rules))
    return [line for line in lines if line]


def _hand_line(rules: Rules) -> str:
    return "A hand counts its best suit: A 11, K Q J 10, others their pips; 31 is best."


def _value_extras(rules: Rules) -> list[str]:
    """What these rules change in the pack and a hand's value, in one line (or none)."""
    bits = []
    if rules.deck == "italian":
        bits.append("a 40-card pack (no 8, 9, 10)")
    if rules.trips_beat_31:
        bits.append("three of a kind beats 31 (three 2s 32 ... three aces 44)")
    if rules.three_of_a_kind is not None:
        bits.append(f"three of a kind counts {rules.three_of_a_kind:g}")
    if rules.three_aces is not None:
        bits.append(f"three aces {rules.three_aces:g}")
    if rules.straight_flush:
        bits.append("three suited cards in sequence 30")
    if rules.poker_tiebreak:
        bits.append("equal hands are told apart by their ranks, as in poker")
    return [f"Here {'; '.join(bits)}."] if bits else []


def _knock_line(rules: Rules) -> str:
    """The knock: what it does, and what these rules ask of a knocker."""
    what = ("Knock instead of drawing to promise the highest hand" if rules.knock_mode == "gin"
            else "Knock, then draw and discard" if rules.knock_then_draw
            else "Knock instead of drawing")
    text = f"{what}: the others get one last turn, then the showdown."
    need = []
    if rules.min_knock:
        need.append(f"a hand of {rules.min_knock}+")
    if rules.knock_needs_flush:
        need.append("three cards of one suit")
    limits = ["Knocking needs " + " and ".join(need)] if need else []
    if not rules.first_turn_knock:
        limits.append("no knock on your first turn")
    if limits:
        said = "; ".join(limits)
        text += f" {said[0].upper()}{said[1:]}."
    return text


def _showdown_line(rules: Rules) -> str:
    """Who pays (or scores) at a showdown."""
    if rules.scoring == "points":
        return ("Showdown: the highest hand scores a point (tied with the knocker, the "
                "others score).")
    pays = _lives(rules, rules.knocker_loss)
    if rules.knock_mode == "gin":
        return (f"Showdown: a beaten knocker pays {pays}, else all the others lose a life; "
                "with no knock the lowest hand loses one.")
    tie = {"safe": f"a knocker lowest alone pays {pays}, tied for lowest is safe",
           "all": f"a knocker lowest, alone or tied, pays {pays}",
           "knocker_only": f"a knocker lowest alone pays {pays}; in a tie with the knocker "
                           "only the knocker pays"}[rules.knocker_tie]
    return f"Showdown: the lowest hand loses a life; {tie}."


def _thirty_one_lines(rules: Rules) -> list[str]:
    """Declaring 31 (at once, by choice, or never)."""
    if rules.declare_31 == "never":
        return ["A 31 is never declared: it is just a high hand; knock on it."]
    gain = ("a point to its holder" if rules.scoring == "points"
            else "everyone else loses a life")
    if rules.declare_31 == "choice":
        text = f"A 31, made or dealt: declare it ({gain}) or pass (it then counts 30)."
    else:
        text = f"A 31, made or dealt, is declared at once: {gain}."
    if rules.scoring == "lives" and rules.knocker_loss_on_31 != 1:
        text = text[:-1] + f", after a knock the knocker {_NUMBERS[rules.knocker_loss_on_31]}."
    return [text]


def _call_lines(rules: Rules) -> list[str]:
    """One line per call the rules offer before or instead of the play."""
    lines = []
    if rules.sudden_death:
        lines.append("Sudden death: after one card each, the dealer may have those single "
                     "cards compared; the lowest lose a life (pass deals on).")
    if rules.throw_down != "none":
        who = "the first player" if rules.throw_down == "first" else "each player in turn"
        lines.append(f"Throw-down: before looking at their cards, {who} may call a "
                     "showdown, scored like a knock (pass to look).")
    if rules.hammer:
        lines.append("Hammer: instead of the hand's first draw, the player may call a "
                     "showdown, scored like a knock.")
    return lines


def _exhausted_line(rules: Rules) -> str:
    knock = ", knock" if rules.knock_when_stock_exhausted else ""
    return f"Stock exhausted: take the top discard{knock} or end the play (e)."


def _end_line(rules: Rules) -> str:
    """How the game is won, and the lives in the preset's own words."""
    if rules.scoring == "points":
        return f"Nobody is ever out: the first to {rules.points_to_win} points wins."
    again = "is dealt again" if rules.all_out == "replay" else "leaves all on their last life"
    return f"{_lives_sentence(rules)}; the last one in wins. A hand putting all out {again}."


def _lives_sentence(rules: Rules) -> str:
    """The lives everyone starts with, counted as the preset counts them."""
    n = rules.start_lives
    first, last = lives_label(rules, n), lives_label(rules, 1)
    if rules.lives_name == "points":
        return f"Each lost hand is a point; {_count(n, 'point', 'points')} and you are out"
    if rules.lives_name == "letters":
        return f"Each lost hand is a letter of {'GIN'[:n]}; all {n} and you are out"
    if rules.lives_name == "bus":
        return f"{_lives(rules, n).capitalize()}, {first} to {last}"
    if rules.county:
        return f"{_lives(rules, n).capitalize()}: {first}, then {last}"
    return f"{_lives(rules, n).capitalize()} ({first})"


def _golf_lines(rules: Rules) -> list[str]:
    """Golf (``play: golf``): no knock, no 31; the bus as the last life."""
    bus = (": one player at a time; another who loses the last quarter meanwhile is out"
           if rules.one_on_the_bus else "")
    return [
        "Your three cards lie face down in a row: nobody may look at them, you included.",
        "Each turn: take the top discard, or draw, and put the card face up in place of a "
        "face-down one (that card goes to the pile); or discard the card drawn and turn "
        "one of yours up.",
        "Once every card is face up, hands count the cards of their best suit or best "
        "rank (8♥ 8♣ 5♥ is 16). The lowest hand loses a life. No knock, no 31.",
        f"Everyone starts with {lives_label(rules, rules.start_lives)}, then the bus{bus}. "
        "The last player in wins.",
    ]


__all__ = ["SHORT_KEYS", "key_lines", "rules_lines"]
