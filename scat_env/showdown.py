"""Who loses how many lives when a hand ends: the scoring rules, as pure functions.

Kept apart from the engine so each rule reads as one short function with its source, and
so tests (and an independent implementation) can check scoring without playing a hand.
"""

from __future__ import annotations

from collections.abc import Mapping

from .rules import Rules


def knock_losses(values: Mapping[int, float], knocker: int | None, rules: Rules) -> dict[int, int]:
    """Lives lost at a showdown, with or without a knock (002 "Knocking", "Draw pile exhausted").

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
        else:
            losses[knocker] = rules.knocker_loss
        return losses
    low = min(values.values())
    lowest = [s for s, v in values.items() if v == low]
    if knocker is None or knocker not in lowest:
        for s in lowest:
            losses[s] = 1
    elif len(lowest) == 1:
        losses[knocker] = rules.knocker_loss  # sole lowest knocker pays double (standard)
    elif rules.knocker_tie == "safe":
        for s in lowest:
            if s != knocker:
                losses[s] = 1
    elif rules.knocker_tie == "all":
        for s in lowest:
            losses[s] = 1
        losses[knocker] = rules.knocker_loss
    else:  # "knocker_only"
        losses[knocker] = rules.knocker_loss
    return losses


def thirty_one_losses(
    seats: list[int], declarers: list[int], knocker: int | None, rules: Rules
) -> dict[int, int]:
    """Lives lost when 31 is declared (002 "Declaring 31"): everyone else pays one.

    After a knock the knocker pays ``rules.knocker_loss_on_31`` (one in the standard game,
    two in the first variation). Dealt 31s may have several declarers; all are safe.
    """
    losses = {s: (0 if s in declarers else 1) for s in seats}
    if knocker is not None and knocker not in declarers:
        losses[knocker] = rules.knocker_loss_on_31
    return losses
