"""Who loses how many lives when a hand ends: the scoring rules, as pure functions.

Kept apart from the engine so each rule reads as one short function with its source, and
so tests (and an independent implementation) can check scoring without playing a hand.
Each function also says *which* rule decided the hand, as one of the codes of
:data:`RULES`; the engine stores it in :attr:`HandResult.rule
<scat_env.engine.HandResult.rule>` and :func:`rule_text` says it in plain words, so a user
interface never has to work the rule out again from the cards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .rules import Rules

#: Every rule that can decide a hand, with what it means (the text :func:`rule_text` gives).
#: Each sentence is true under every rules preset: what a knocker pays depends on the rules
#: (``knocker_loss``, ``knocker_loss_on_31``), so :func:`rule_text` says it in a sentence of
#: its own when it is given the rules, after this one.
_RULE_TEXT: dict[str, str] = {
    "lowest": "The lowest hand loses a life; hands tied for lowest each lose one.",
    "knocker_lowest": "The knocker had the lowest hand alone and pays for the knock.",
    "knocker_tie_safe": "The knocker tied for the lowest hand and is safe; "
    "the others tied with them lose a life.",
    "knocker_tie_all": "The knocker tied for the lowest hand: the others tied with them lose "
    "a life, and the knocker pays for the knock.",
    "knocker_tie_only": "The knocker tied for the lowest hand and alone pays for the knock.",
    "gin_knocker_highest": "The knocker promised the highest hand and had it: "
    "everyone else loses a life.",
    "gin_knocker_beaten": "The knocker promised the highest hand and was beaten: "
    "the knocker alone pays.",
    "thirty_one": "A player declared 31: everyone else loses a life.",
    "thirty_one_after_knock": "A player declared 31 after a knock: everyone else loses a "
    "life.",
    "dealt_thirty_one": "A 31 was dealt: everyone without one loses a life.",
    "points_highest": "The highest hand scores a point; hands tied for highest each score one.",
    "points_tie_to_non_knockers": "The knocker tied for the highest hand: the others tied "
    "with them score a point, the knocker none.",
    "points_thirty_one": "A player declared 31 and scores a point at once.",
    "points_dealt_thirty_one": "A 31 was dealt: each player holding one scores a point.",
    "points_dealt_thirty_one_ranks": "31s were dealt to several players: told apart by the "
    "ranks of their cards, as in poker, the best scores a point.",
    "bus_tie_replay": "Several players lost their last life at once with the bus free: "
    "nobody loses a life and the hand is dealt again.",
    "all_out_replay": "Everyone left would have been out at once: nobody loses a life "
    "and the hand is dealt again.",
    "all_out_last_life": "Everyone left would have been out at once: everyone stays in on "
    "their last life.",
}

#: The rules whose knocker pays ``Rules.knocker_loss``: their text ends by saying how much.
_KNOCKER_PAYS = ("knocker_lowest", "knocker_tie_all", "knocker_tie_only", "gin_knocker_beaten")

#: The codes of :attr:`HandResult.rule <scat_env.engine.HandResult.rule>`, in the order of
#: the rules: a knock or an exhausted stock (showdown), 31, the points race, then the all-out
#: exceptions.
RULES: tuple[str, ...] = tuple(_RULE_TEXT)


def rule_text(rule: str, rules: Rules | None = None) -> str:
    """The rule ``rule`` (one of :data:`RULES`) in plain sentences.

    Without ``rules``, one sentence true under every preset. With them, what the knocker
    pays is added where it depends on the rules ("The knocker loses two lives."), so a
    showdown says the preset's own rule; the text always begins with the sentence given
    without ``rules``, so a reader holding only that one can find it in the longer one.
    """
    try:
        text = _RULE_TEXT[rule]
    except KeyError:
        raise ValueError(f"unknown rule {rule!r}; rules: {', '.join(RULES)}") from None
    if rules is None:
        return text
    if rule in _KNOCKER_PAYS:
        return f"{text} The knocker loses {_lives(rules, rules.knocker_loss)}."
    if rule == "thirty_one_after_knock" and rules.knocker_loss_on_31 != 1:
        return f"{text} The knocker loses {_lives(rules, rules.knocker_loss_on_31)}."
    return text  # the knocker loses one like everyone else: the sentence says it all


def _lives(rules: Rules, n: int) -> str:
    """``n`` lives in words, "a life" or "two lives" (on the bus, stops)."""
    one, many = ("stop", "stops") if rules.lives_name == "bus" else ("life", "lives")
    return f"a {one}" if n == 1 else f"{_NUMBERS.get(n, str(n))} {many}"


_NUMBERS = {2: "two", 3: "three", 4: "four"}


def knock_losses(
    values: Mapping[int, float], knocker: int | None, rules: Rules
) -> tuple[dict[int, int], str]:
    """Lives lost at a showdown, with or without a knock (002 "Knocking", "Draw pile
    exhausted"), and the rule that decided it.

    ``values`` maps each seat still in the game to its hand value; ``knocker`` is the seat
    that knocked, or ``None`` when the play ended on an exhausted stock without a knock.
    """
    losses = dict.fromkeys(values, 0)
    if knocker is not None and rules.knock_mode == "gin":
        # 002 Gin: a knock promises the highest hand. Highest or equal highest: everyone
        # else loses; beaten: the knocker alone loses.
        best_other = max(v for s, v in values.items() if s != knocker)
        if values[knocker] >= best_other:
            for s in losses:
                if s != knocker:
                    losses[s] = 1
            return losses, "gin_knocker_highest"
        losses[knocker] = rules.knocker_loss
        return losses, "gin_knocker_beaten"
    low = min(values.values())
    lowest = []  # a loop, not a comprehension: Python 3.11 makes a function for each one
    for s, v in values.items():
        if v == low:
            lowest.append(s)
    if knocker is None or knocker not in lowest:
        for s in lowest:
            losses[s] = 1
        return losses, "lowest"
    if len(lowest) == 1:
        losses[knocker] = rules.knocker_loss  # sole lowest knocker pays double (standard)
        return losses, "knocker_lowest"
    if rules.knocker_tie == "safe":
        for s in lowest:
            if s != knocker:
                losses[s] = 1
        return losses, "knocker_tie_safe"
    if rules.knocker_tie == "all":
        for s in lowest:
            losses[s] = 1
        losses[knocker] = rules.knocker_loss
        return losses, "knocker_tie_all"
    losses[knocker] = rules.knocker_loss  # "knocker_only"
    return losses, "knocker_tie_only"


def thirty_one_losses(
    seats: Sequence[int],
    declarers: Sequence[int],
    knocker: int | None,
    rules: Rules,
    *,
    dealt: bool = False,
) -> tuple[dict[int, int], str]:
    """Lives lost when 31 is declared (002 "Declaring 31"): everyone else pays one; and the
    rule that decided it.

    After a knock the knocker pays ``rules.knocker_loss_on_31`` (one in the standard game,
    two in the first variation). Dealt 31s (``dealt=True``) may have several declarers;
    all are safe.
    """
    losses = {s: (0 if s in declarers else 1) for s in seats}
    if dealt:
        return losses, "dealt_thirty_one"
    if knocker is not None and knocker not in declarers:
        losses[knocker] = rules.knocker_loss_on_31
        return losses, "thirty_one_after_knock"
    return losses, "thirty_one"


def all_out(
    seats: Sequence[int], lives: Sequence[int], rules: Rules
) -> tuple[dict[int, int], str]:
    """Lives lost when the losses of a hand would leave nobody in (002 Scoring: the
    all-on-the-county draw): ``"replay"`` the hand with lives unchanged, or everyone stays
    on their ``"last_life"`` (variant 1). ``lives`` are the lives before the hand."""
    if rules.all_out == "replay":
        return dict.fromkeys(seats, 0), "all_out_replay"
    return {s: lives[s] - 1 for s in seats}, "all_out_last_life"


def points_won(
    values: Mapping[int, float],
    knocker: int | None,
    declarers: Sequence[int],
    *,
    dealt: bool = False,
    tiebreak: bool = False,
) -> tuple[dict[int, int], str]:
    """Points scored by a hand of a points game (002 French Canadian), and the rule.

    A declared 31 scores its declarer a point at once (dealt 31s: each holder). Otherwise
    the highest hand scores a point; if the knocker ties for highest, the others tied with
    it score and the knocker does not ("the player who did not knock wins it"); players tied
    for highest of whom none knocked each score ("presumably ... they get a point each").
    An exhausted stock without a knock scores the highest hands alike.

    With the poker tie-break (``tiebreak``, 002 Jeffrey Jacobs: "if two players have equally
    high scores the tie is broken if possible by looking at the ranks"), 31s dealt to
    several players are told apart the same way: only the best of them scores (``values``
    carry the tie-break as a fraction, :func:`scat_env.scoring.poker_fraction`); holders
    whose counting cards have the same ranks still score each.
    """
    if declarers:
        if not dealt:
            return {s: 1 for s in declarers}, "points_thirty_one"
        if tiebreak and len(declarers) > 1:
            top = max(values[s] for s in declarers)
            best = [s for s in declarers if values[s] == top]
            if len(best) < len(declarers):
                return {s: 1 for s in best}, "points_dealt_thirty_one_ranks"
        return {s: 1 for s in declarers}, "points_dealt_thirty_one"
    top = max(values.values())
    tied = [s for s, v in values.items() if v == top]
    if knocker in tied and len(tied) > 1:
        return {s: 1 for s in tied if s != knocker}, "points_tie_to_non_knockers"
    return {s: 1 for s in tied}, "points_highest"


def one_on_the_bus(
    order: Sequence[int], lives: Sequence[int], applied: Mapping[int, int]
) -> dict[int, int] | None:
    """Golf's bus (002, Mike Armstrong): the last life is the bus, and "only one player at a
    time can be on the bus": a player who loses their last quarter while another is on it
    is out at once. ``order`` is the seats in the hand from the dealer's left, ``lives``
    the lives before the hand (1 = on the bus), ``applied`` the lives each loses.

    A rider who is put off in this very hand frees the bus for this hand's first new rider
    (RULES.md (w)). When several players lose their last quarter together and the bus is
    free, the source names no one to board first: the hand is replayed, as the standard
    game replays a hand that would put everyone out (002 Scoring). ``None`` says so.
    """
    out = dict(applied)
    after = {s: lives[s] - out[s] for s in order}
    riding = any(lives[s] == 1 and after[s] == 1 for s in order)
    boarding = [s for s in order if lives[s] > 1 and after[s] == 1]
    if not riding and len(boarding) > 1:
        return None
    for s in boarding:
        if riding:
            out[s] = lives[s]  # the bus is full: out at once
        else:
            riding = True
    return out
