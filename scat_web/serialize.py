"""What the browser is sent: the person's table as JSON, built from their :class:`PlayerView`.

Every field of a STATE payload (``docs/WEB_API.md``) comes from ``make_view(state, you)``
and from the public facts of the game (names, agent specs, rules), never from the engine's
state: the same boundary the agents and ``scat play`` keep. The one exception is a teaching
game, which the person started to see the opponents' hands; :func:`state_payload` adds them
only when ``teaching`` is set, and the saved game says so.

Events (one per public decision, plus hand ends, deals and takeovers) are built here too,
from the decision, the phase it was taken in and the card it took from the pile, all of it
public. Texts reuse the terminal game's words (:mod:`scat_cli.tui`,
:mod:`scat_cli.humanio`), turned from rich markup into plain text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from scat_cli.humanio import knock_effect, menu_options
from scat_cli.tui import action_markup, agent_label, deal_text, explain_result, lives_text
from scat_env import GameState, HandResult, Phase, PlayerView, Rules, card_str
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, PASS, action_str
from scat_env.cards import NUM_CARDS
from scat_env.rules import PRESET_NOTES
from scat_env.scoring import value_of
from scat_env.showdown import rule_text

#: The person's agent name in payloads (``players[].agent``).
YOU = "you"


def plain(markup: str) -> str:
    """Rich markup as the plain text it shows (the browser styles text itself)."""
    return Text.from_markup(markup).plain


def cards(cs: Sequence[int]) -> list[str]:
    return [card_str(c) for c in cs]


def rules_payload(rules: Rules) -> dict[str, Any]:
    """The rules in force, in the words the page shows."""
    return {
        "name": rules.name,
        "lives_name": rules.lives_name,
        "notes": PRESET_NOTES.get(rules.name, ""),
        "start_lives": rules.start_lives,
        "calls": list(rules.calls),
        "pack": len(rules.deck_cards),
    }


def result_payload(result: HandResult, rules: Rules, names: Sequence[str]) -> dict[str, Any]:
    """A hand's end as its viewer saw it: pass ``result.seen_by(seat)`` (after a declared 31
    only the declarers' hands are in it), or the full record for a replay or a teaching
    game. Per-seat tables are keyed by the seat as a string (JSON keys are strings)."""
    lines = explain_result(result, rules, names)
    return {
        "hand_number": result.hand_number,
        "dealer": result.dealer,
        "reason": result.reason,
        "rule": result.rule,
        "rule_text": rule_text(result.rule),
        "knocker": result.knocker,
        "declarers": list(result.declarers),
        "hands": {str(s): cards(sorted(h)) for s, h in sorted(result.hands.items())},
        "values": {str(s): v for s, v in sorted(result.values.items())},
        "lives_lost": {str(s): n for s, n in sorted(result.lives_lost.items())},
        "lives_after": list(result.lives_after),
        "eliminated": list(result.eliminated),
        "replayed": result.replayed,
        "text": " ".join(lines),
    }


def legal_payload(view: PlayerView) -> list[dict[str, Any]]:
    """The person's legal moves, in the terminal menu's order and words; a discard also
    says what the hand is worth after it (``value``)."""
    out = []
    for opt in menu_options(view):
        item: dict[str, Any] = {"action": opt.action, "label": opt.label,
                                "key": opt.key.lower()}
        if opt.action < NUM_CARDS:
            item["value"] = value_of([c for c in view.hand if c != opt.action], view.rules)
        out.append(item)
    return out


def action_label(view: PlayerView, action: int) -> str:
    """The menu's words for ``action`` in ``view`` (its plain name if not on the menu)."""
    for opt in menu_options(view):
        if opt.action == action:
            return opt.label
    return action_str(action, symbols=True)


def state_payload(  # the STATE schema is one flat record; each line is one field of it
    view: PlayerView,
    *,
    game_id: str,
    seq: int,
    names: Sequence[str],
    specs: Sequence[str],
    events: list[dict[str, Any]],
    teaching: bool,
    hands: Sequence[Sequence[int]] | None = None,
    full_result: HandResult | None = None,
    winner: int | None = None,
    summary: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The STATE the person's browser gets (``docs/WEB_API.md``).

    ``hands`` (every seat's cards) and ``full_result`` are read only in a teaching game;
    ``winner`` and ``summary`` are public once the game is over.
    """
    rules = view.rules
    you = view.seat
    over = view.phase == Phase.GAME_OVER
    hand_value = value_of(list(view.hand), rules) if len(view.hand) == 3 else None
    players = []
    for s in range(view.num_players):
        entry: dict[str, Any] = {
            "seat": s,
            "name": names[s],
            "agent": YOU if s == you else specs[s],
            "label": "" if s == you else agent_label(specs[s]),
            "lives": view.lives[s],
            "lives_text": lives_text(rules, view.lives[s]),
            "out": not view.active[s],
            "known": cards(view.known_cards[s]),
        }
        if teaching and hands is not None and s != you:
            entry["hand"] = cards(sorted(hands[s]))
        players.append(entry)
    last = view.last_result
    if teaching and full_result is not None:
        last = full_result
    return {
        "id": game_id,
        "seq": seq,
        "status": "over" if over else "playing",
        "teaching": teaching,
        "rules": rules_payload(rules),
        "you": you,
        "to_move": None if over else view.current_player,
        "phase": str(view.phase),
        "dealer": view.dealer,
        "knocker": view.knocker,
        "hand_number": view.hand_number,
        "turn": view.turn,
        "stock": view.stock_size,
        "top_discard": card_str(view.top_discard) if view.top_discard is not None else None,
        "discard_pile": cards(view.discard_pile),
        "hand": cards(view.hand),
        "hand_value": hand_value,
        "drawn": card_str(view.drawn_card) if view.drawn_card is not None else None,
        "taken": card_str(view.taken_card) if view.taken_card is not None else None,
        "legal": legal_payload(view),
        "players": players,
        "events": events,
        "result": result_payload(last, rules, names) if last is not None else None,
        "winner": [winner] if over and winner is not None else None,
        "summary": summary if over else None,
    }


# -- events -------------------------------------------------------------------------------
def move_event(seat: int, action: int, *, you: int, names: Sequence[str], rules: Rules,
               phase: Phase, top_before: int | None, second_knock: bool,
               hand_number: int) -> dict[str, Any] | None:
    """The public event of one decision, or ``None`` when nobody else sees it (an
    opponent keeping a new 31 quiet: even that a decision was asked tells it holds 31)."""
    if phase is Phase.DECLARE and action == PASS and seat != you:
        return None
    mine = seat == you
    card: int | None = None
    if action == DRAW_STOCK:
        kind = "draw_stock"
        text = "You drew from the stock." if mine else plain(
            action_markup(seat, action, names, top_before)) + "."
    elif action == DRAW_DISCARD:
        kind, card = "draw_discard", top_before
        text = plain(action_markup(seat, action, names, top_before)) + "."
    elif action == KNOCK:
        kind = "knock"
        if mine:
            text = f"You knocked: {knock_effect(rules, second_knock)}."
        elif second_knock:
            text = f"{names[seat]} knocked too: the play ends at once, showdown."
        else:
            then = "they draw and discard, then " if rules.knock_then_draw else ""
            text = (f"{names[seat]} knocked: {then}everyone else gets one more turn, "
                    "then the showdown.")
    elif action < NUM_CARDS:
        kind, card = "discard", action
        text = plain(action_markup(seat, action, names, top_before)) + "."
    elif action == PASS:
        kind = "call"
        text = f"{names[seat]}: " + {
            Phase.BLIND: "looked at the cards (no throw-down).",
            Phase.SUDDEN_DEATH: "dealt on (no sudden death).",
            Phase.DECLARE: "kept the 31 quiet (it counts 30 from now on).",
        }.get(phase, "passed.")
    else:
        kind = "end_play" if action == END_PLAY else "call"
        text = plain(action_markup(seat, action, names, top_before)) + "."
    return {"kind": kind, "seat": seat, "action": action, "card": card_str(card)
            if card is not None else None, "hand_number": hand_number, "text": text}


def hand_over_event(result: HandResult, rules: Rules, names: Sequence[str]) -> dict[str, Any]:
    """A hand's end; ``result`` as the person saw it (or in full in a teaching game)."""
    payload = result_payload(result, rules, names)
    return {"kind": "hand_over", "seat": None, "action": None, "card": None,
            "hand_number": result.hand_number, "text": payload["text"], "result": payload}


def deal_event(hand_number: int, dealer: int, names: Sequence[str]) -> dict[str, Any]:
    return {"kind": "deal", "seat": dealer, "action": None, "card": None,
            "hand_number": hand_number, "text": deal_text(names, hand_number, dealer) + "."}


def game_over_event(winner: int | None, you: int, names: Sequence[str],
                    hand_number: int) -> dict[str, Any]:
    text = ("You win!" if winner == you else f"{names[winner]} wins the game."
            if winner is not None else "The game is over.")
    return {"kind": "game_over", "seat": winner, "action": None, "card": None,
            "hand_number": hand_number, "text": text}


def takeover_event(seat: int, names: Sequence[str], label: str, spec: str, what: str,
                   hand_number: int) -> dict[str, Any]:
    """One line naming the seat and its new agent, never the move that broke (it would
    name a card of that seat's hand)."""
    who = f"{names[seat]} ({label})" if label else names[seat]
    return {"kind": "takeover", "seat": seat, "action": None, "card": None,
            "hand_number": hand_number,
            "text": f"{who} {what}; the {spec} agent plays that seat from here on. "
                    "Your game goes on."}


def summary_payload(results: Sequence[HandResult], you: int, num_players: int,
                    winner: int | None, knocks: Sequence[int]) -> dict[str, Any]:
    """The end-of-game numbers of the terminal's summary (:func:`scat_cli.tui.summary_view`)."""
    from scat_cli.tui import finishing_order

    place = finishing_order(results, num_players, winner).get(you)
    return {
        "hands": len(results),
        "thirty_ones": sum(1 for r in results if r.reason in ("thirty_one", "dealt_thirty_one")),
        "knocks": len(knocks),
        "your_knocks": sum(1 for s in knocks if s == you),
        "your_lives_lost": sum(r.lives_lost.get(you, 0) for r in results),
        "your_hands_lost": sum(1 for r in results if r.lives_lost.get(you, 0)),
        "your_31s": sum(1 for r in results if you in r.declarers),
        "place": place,
        "winner": winner,
    }


# -- replays (every hand face up) -------------------------------------------------------------
def full_state(state: GameState, names: Sequence[str]) -> dict[str, Any]:
    """The whole table with every hand face up: replays of finished games, and teaching
    games. Never sent for a game in progress otherwise."""
    rules = state.rules
    over = state.is_terminal()
    players = []
    for s in range(state.num_players):
        hand = sorted(state.hands[s]) if state.active[s] or over else []
        players.append({
            "seat": s,
            "lives": state.lives[s],
            "lives_text": lives_text(rules, state.lives[s]),
            "out": not state.active[s],
            "hand": cards(hand),
            "value": value_of(hand, rules) if len(hand) == 3 else None,
        })
    return {
        "phase": str(state.phase),
        "to_move": None if over else state.current_player,
        "dealer": state.dealer,
        "knocker": state.knocker,
        "hand_number": state.hand_number,
        "turn": state.turn,
        "stock": len(state.stock),
        "top_discard": card_str(state.discard[-1]) if state.discard else None,
        "discard_pile": cards(state.discard),
        "drawn": card_str(state.drawn) if state.drawn is not None else None,
        "players": players,
    }
