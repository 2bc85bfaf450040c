"""The ``h`` key of ``scat play``: what the ``expert`` agent would do, with its numbers in words.

The expert decides from the player's own :class:`~scat_env.PlayerView` (nothing hidden) and
writes the numbers behind its decision into its advice vector
(:meth:`agents.expert.ExpertAgent.advice`): the expected worth of a stock draw and of the
top discard, the chance of being caught lowest after a knock, and on a last turn the chance
of losing a life after each draw. This module turns those numbers into one or two plain
sentences, e.g. "Drawing from the stock loses you a life 13% of the time; taking the 7♣,
51%. The expert draws from the stock."
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, PlayerView, card_str
from scat_env.actions import CORE_ACTIONS, action_str
from scat_env.render import value_text
from scat_env.scoring import value_of

if TYPE_CHECKING:
    from agents.expert import ExpertAgent

#: Slots of the expert's advice vector after the action one-hot and the 52 discard scores,
#: in the order its docstring lists them: the worth of a stock draw and of the top discard
#: (/41), P(every opponent ends above me) and P(nobody ends below me) if I knock now, and
#: on my last turn P(I lose) after a stock draw and after taking the top discard.
STOCK, TAKE, P_SOLE, P_NONE_BELOW, LOSE_STOCK, LOSE_TAKE = range(CORE_ACTIONS + 52, CORE_ACTIONS + 58)
#: Discard scores and expected worths are written divided by this (the best hand, 41).
SCALE = 41.0


def _pct(p: float) -> str:
    return f"{round(100 * p)}%"


def _sym(card: int) -> str:
    return card_str(card, symbols=True)


def hint(agent: ExpertAgent, view: PlayerView) -> str:
    """The expert's move for ``view`` with the numbers behind it, in plain words."""
    import numpy as np

    from agents.expert import ADVICE_SIZE

    if view.phase in ("golf_draw", "golf_place"):
        return golf_hint(agent, view)
    notes = np.zeros(ADVICE_SIZE, dtype=np.float32)
    action = agent.advice(view, notes)
    legal = view.legal_actions
    rules = view.rules
    race = rules.scoring == "points"  # only the highest hand scores; nobody loses a life
    value = value_of(list(view.hand), rules) if len(view.hand) == 3 else None
    shown = value_text(value, rules) if value is not None else "?"
    top = _sym(view.top_discard) if view.top_discard is not None else "top discard"
    facts: list[str] = []
    if action not in (DRAW_STOCK, DRAW_DISCARD, KNOCK, END_PLAY) and not 0 <= action < 52:
        # A call of the variations (hammer, throw-down, sudden death, declare, pass): the
        # expert says why in its own words.
        return f"The expert would {action_str(action)}: {agent.explain(view)}."
    if view.phase == "discard":
        kept = [c for c in view.hand if c != action]
        return (f"Discard the {_sym(action)}: you keep "
                f"{' '.join(_sym(c) for c in kept)}, worth {value_text(value_of(kept, rules), rules)}.")
    # A knock is worth a sentence when the expert knocks or when it is a close call (a
    # knock that fails more often than not is noise in a hint).
    highest = race or rules.knock_mode == "gin"  # the knocker wants the highest hand
    if KNOCK in legal and (action == KNOCK or (notes[P_SOLE] >= 0.3 if highest
                                               else notes[P_SOLE] <= 0.5)):
        if race:
            facts.append(f"If you knock now with {shown}, every other hand ends below yours "
                         f"{_pct(notes[P_SOLE])} of the time (a tie goes to the others).")
        elif rules.knock_mode == "gin":
            facts.append(f"If you knock now with {shown}, you hold the highest hand "
                         f"{_pct(notes[P_SOLE])} of the time.")
        else:
            # P_NONE_BELOW: nobody ends below me (a tie included); P_SOLE: everyone ends
            # above me. What lies between is a tie for lowest.
            tied = float(notes[P_NONE_BELOW]) - float(notes[P_SOLE])
            facts.append(f"If you knock now with {shown}, you end up lowest alone "
                         f"{_pct(notes[P_SOLE])} of the time"
                         + (f" and tied for lowest another {_pct(tied)}"
                            if tied >= 0.005 else "") + ".")
    if action != KNOCK and view.knocker is not None and DRAW_STOCK in legal:
        take = (f"; taking the {top}, {_pct(notes[LOSE_TAKE])}"
                if DRAW_DISCARD in legal else "")
        facts.append("This is your last turn. Drawing from the stock "
                     + ("leaves you without the point " if race else "loses you a life ")
                     + f"{_pct(notes[LOSE_STOCK])} of the time{take}.")
    elif action != KNOCK and DRAW_STOCK in legal:
        take = (f"; taking the {top} is worth {notes[TAKE] * SCALE:.1f}"
                if DRAW_DISCARD in legal else "")
        facts.append(f"Counting what a hand may still become, a stock draw is worth "
                     f"{notes[STOCK] * SCALE:.1f} on average{take} (you hold {shown}).")
    move = {DRAW_STOCK: "draw from the stock", DRAW_DISCARD: f"take the {top}",
            KNOCK: "knock", END_PLAY: "end the play"}[action]
    return " ".join(facts + [f"The expert would {move}."])


def golf_hint(agent: ExpertAgent, view: PlayerView) -> str:
    """Golf: what each choice open makes the final hand worth on average (the cards left
    face down counted as any unseen card), the numbers the expert decides by."""
    from agents.knowledge import golf_choices

    est = golf_choices(view)
    action = agent.act(view)
    facts: list[str] = []
    if view.phase == "golf_draw":
        if "take" in est:
            facts.append(f"Taking the {_sym(view.top_discard)} makes your hand worth "  # type: ignore[arg-type]
                         f"{est['take']:.1f} on average")
        if "stock" in est:
            facts.append(f"a stock draw {est['stock']:.1f}" if facts else
                         f"A stock draw makes your hand worth {est['stock']:.1f} on average")
        move = "draw from the stock" if action == DRAW_STOCK else f"take the {_sym(view.top_discard)}"  # type: ignore[arg-type]
    else:
        held = _sym(view.drawn_card) if view.drawn_card is not None else "the card"
        facts.append(f"Keeping the {held} makes your hand worth {est.get('place', 0):.1f} "
                     "on average")
        if "turn" in est:
            facts.append(f"discarding it and turning a slot up {est['turn']:.1f}")
        move = action_str(action)
    return "; ".join(facts) + f". The expert would {move}."
